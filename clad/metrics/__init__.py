r"""Continual metrics: pure functions of the matrix R, each declared once.

``R[i, j]`` is a base metric (ROC-AUC, F1, average precision) on test concept ``j`` after training
step ``i``; :func:`learned_at` gives the step that first learned each test concept (which cells are
*seen* and *future*: :mod:`~clad.metrics.cells`). NaN cells are left out of every mean. The
formulas, what other tools call the same numbers and the general case: ``docs/guides/metrics.md``.

>>> import numpy as np
>>> R = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=float)
>>> continual_average(R), backward_transfer(R), forward_transfer(R)
(5.666666666666667, 4.0, 3.6666666666666665)

Modules: :mod:`~clad.metrics.registry` (the declarations and :func:`summarize`),
:mod:`~clad.metrics.continual` (scalar metrics), :mod:`~clad.metrics.curves` and
:mod:`~clad.metrics.dynamic` (per-step curves), :mod:`~clad.metrics.per_concept` (per-concept
values), :mod:`~clad.metrics.base` (one declaration per *base* metric, the metric in every cell of R:
:mod:`~clad.metrics.point`, :mod:`~clad.metrics.range_base`, :mod:`~clad.metrics.pr_auc_normalized`),
:mod:`~clad.metrics.ranges` (the range metrics of one time series; VUS in :mod:`~clad.metrics.vus`,
affiliation F1 in :mod:`~clad.metrics.affiliation`, their inputs in
:mod:`~clad.metrics.range_inputs`), :mod:`~clad.metrics.reference_metrics` (the metrics against each
reference model of a benchmark: ``intransigence_joint``, ``intransigence_single_task``, ...),
:mod:`~clad.metrics.cells` (shared helpers). **Adding a metric** is one function and its decorator
(:func:`scalar_metric`, :func:`curve_metric` or :func:`concept_metric`) in
``clad/metrics/continual.py`` (or any module of one's own that is imported); every summary,
leaderboard, statistic and report reads it from :data:`REGISTRY`.
"""

from . import anytime as _anytime
from .anytime import *  # noqa: F403 - the anytime metrics, named in anytime.py's __all__
from .cells import ConceptNamesWarning, check_concept_names, learned_at
from . import continual as _continual
from .continual import *  # noqa: F403 - every scalar metric of continual.py, named in its __all__
from .curves import accuracy_all, accuracy_seen
from .dynamic import backward_transfer_curve, continual_average_curve, forward_transfer_curve
from .per_concept import forgetting_per_concept, per_concept_drop
from .ranges import affiliation_f1, anomaly_ranges, event_f1, pa_f1, range_f1, vus_pr, vus_roc
from .base import (
    BASE_METRIC_REGISTRY,
    BaseMetric,
    base_metric_bounds,
    base_metric_label,
    base_metric_names,
    base_metric_shown,
    chance_level,
    check_base_metrics,
    check_metric_params,
    find_base_metric,
    get_base_metric,
    register_base_metric,
    unregister_base_metric,
)

# the built-in base metrics, declared in this order (tables list them so)
from . import point  # noqa: E402,F401,I001
from . import range_base  # noqa: E402,F401,I001
from . import pr_auc_normalized  # noqa: E402,F401,I001
from . import counts  # noqa: E402,F401,I001
from . import nab  # noqa: E402,F401,I001
from .pooled import pooled_counts, pooled_scores  # noqa: E402,I001
from .reference_metrics import REFERENCE_METRICS, reference_input
from . import registry as _registry
from .registry import *  # noqa: F403 - the declarations and summarize, in registry.py's __all__

__all__ = [
    "learned_at",
    "pooled_counts",
    "pooled_scores",
    "check_concept_names",
    "ConceptNamesWarning",
    *_continual.__all__,
    "accuracy_seen",
    "accuracy_all",
    "continual_average_curve",
    "backward_transfer_curve",
    "forward_transfer_curve",
    "forgetting_per_concept",
    *_anytime.__all__,
    "per_concept_drop",
    "anomaly_ranges",
    "vus_pr",
    "vus_roc",
    "range_f1",
    "event_f1",
    "pa_f1",
    "affiliation_f1",
    "REFERENCE_METRICS",
    "reference_input",
    "BaseMetric",
    "BASE_METRIC_REGISTRY",
    "get_base_metric",
    "find_base_metric",
    "register_base_metric",
    "unregister_base_metric",
    "base_metric_names",
    "base_metric_label",
    "base_metric_shown",
    "base_metric_bounds",
    "chance_level",
    "check_base_metrics",
    "check_metric_params",
    *_registry.__all__,
]
