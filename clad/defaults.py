"""The defaults clad uses wherever a caller or a spec does not choose: one home for each.

Every reader imports them from here (runs, specs, the tuning section, single-task matrices, the
report's statistics and the command line).
"""

from __future__ import annotations

__all__ = ["DEFAULT_BASE_METRIC", "DEFAULT_METRIC"]

#: the base metric a run, a single-task matrix or a comparison is computed on unless told another
DEFAULT_BASE_METRIC = "roc_auc"

#: the continual metric a choice or a comparison uses unless told another (a spec's tuning
#: objective, the report's statistics)
DEFAULT_METRIC = "continual_average"

#: the baseline detectors (:mod:`clad.detectors.baselines`) by name: the time-series baselines and
#: ``random_scores``; named here so that a report can tell them without importing the detectors
TIME_SERIES_BASELINES = (
    "sensor_range",
    "window_l2_norm",
    "nearest_normal_distance",
    "pca_reconstruction",
)
BASELINES = ("random_scores", *TIME_SERIES_BASELINES)
