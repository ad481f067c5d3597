"""Conformance checks for plug-ins: is a detector or a strategy fit for clad?

:func:`check_detector` and :func:`check_strategy` run every contract check and report all
failures at once (a :class:`ConformanceError` listing them, or a :class:`CheckReport` with
``raise_on_failure=False``). Each check is also available alone, so a test suite can parametrise
over them (:func:`parametrize_detector_checks`), and ``clad check package.module:Class`` runs them
from the command line.

:func:`check_base_metric` checks a base metric's declaration (:class:`clad.metrics.BaseMetric`):
its values stay within its declared bounds on random labels and scores, a scoreless detector
(every row the same score, so every row flagged) gets its declared chance level, and labels of
one class give NaN.

The contracts are the checks themselves, each named for what it asks (:data:`DETECTOR_CHECKS`,
:data:`STRATEGY_CHECKS`, :data:`BASE_METRIC_CHECKS`; the detector's in words:
``docs/guides/plugins.md``). Each check gets its own copy of the data.

>>> from sklearn.ensemble import IsolationForest
>>> check_detector(IsolationForest(n_estimators=20)).ok
True
"""

from .checks import CheckReport, ConformanceError, easy_concept
from .detector_checks import DETECTOR_CHECKS, check_detector, parametrize_detector_checks
from .metric_checks import BASE_METRIC_CHECKS, check_base_metric
from .strategy_checks import STRATEGY_CHECKS, check_strategy, parametrize_strategy_checks

__all__ = [
    "CheckReport",
    "ConformanceError",
    "DETECTOR_CHECKS",
    "STRATEGY_CHECKS",
    "BASE_METRIC_CHECKS",
    "check_base_metric",
    "check_detector",
    "check_strategy",
    "easy_concept",
    "parametrize_detector_checks",
    "parametrize_strategy_checks",
]
