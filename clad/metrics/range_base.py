"""The range metrics of time series as base metrics, each declared once.

Computed on the time points of a test concept that has a time axis (``time_axis=True``): ``vus_pr``
and ``vus_roc`` from the scores, ``pa_f1``, ``event_f1``, ``range_f1`` and ``affiliation_f1`` at the
detector's threshold, and their ``*_oracle`` forms at the best of a grid of thresholds chosen on the
test labels (**optimistic**). The functions and their defaults are :mod:`clad.metrics.ranges`'
(TSB-AD's); the chance level of each is :func:`clad.metrics.ranges.chance_level`.

>>> from .base import get_base_metric
>>> m = get_base_metric("event_f1")
>>> m.input, m.time_axis, m([0, 0, 1, 1, 0], [0, 0, 0, 1, 0])
('labels', True, 1.0)
"""

from __future__ import annotations

import functools

from . import ranges
from .base import (
    BaseMetric,
    integer_at_least,
    register_base_metric,
    undefined_on_one_class,
    unit_interval,
)

__all__ = ["RANGE_BASE_METRICS"]


def _vus(which: int, name: str):
    @undefined_on_one_class
    def metric(
        y,
        scores,
        window: int = ranges.DEFAULT_WINDOW,
        thresholds: int = ranges.DEFAULT_VUS_THRESHOLDS,
    ) -> float:
        return ranges.vus(y, scores, window, thresholds)[which]

    metric.__doc__ = f"{name} (:func:`clad.metrics.ranges.vus`) of the scores."
    return metric


def _at_threshold(name: str):
    fn = ranges.THRESHOLD_METRICS[name]

    @undefined_on_one_class
    @functools.wraps(fn)
    def metric(y, labels, **params) -> float:
        return fn(y, labels, **params)

    return metric


def _oracle(name: str, of: str):
    @undefined_on_one_class
    def metric(y, scores, n_thresholds: int = ranges.DEFAULT_ORACLE_THRESHOLDS, **params) -> float:
        return ranges.oracle(of, y, scores, n_thresholds, **params)

    metric.__doc__ = f"The best {of} over the oracle grid of thresholds (:func:`clad.metrics.ranges.oracle`): optimistic."
    return metric


def _chance(name: str):
    def chance(y, **params) -> float:
        return ranges.chance_level(name, y, **params)

    return chance


_VUS_PARAMS = {
    "window": integer_at_least(0, ranges.MAX_WINDOW),
    "thresholds": integer_at_least(2, ranges.MAX_THRESHOLDS),
}
_ORACLE_GRID = integer_at_least(1, ranges.MAX_THRESHOLDS)
_PARAMS = {
    "vus_pr": _VUS_PARAMS,
    "vus_roc": _VUS_PARAMS,
    "range_f1": {"alpha": unit_interval},
    **{name: {"n_thresholds": _ORACLE_GRID} for name in ranges.ORACLE_METRICS},
    "range_f1_oracle": {"n_thresholds": _ORACLE_GRID, "alpha": unit_interval},
}
_LABELS = {
    "vus_pr": "VUS-PR",
    "vus_roc": "VUS-ROC",
    "range_f1": "range F1",
    "event_f1": "event F1",
    "pa_f1": "point-adjusted F1",
    "affiliation_f1": "affiliation F1",
}


def _declare(name: str, function, input: str, label: str, optimistic: bool = False) -> BaseMetric:
    return register_base_metric(
        BaseMetric(
            name,
            function,
            label,
            input=input,
            chance=_chance(name),
            params=_PARAMS.get(name, {}),
            time_axis=True,
            optimistic=optimistic,
        )
    )


#: the range base metrics' declarations, by name (in declaration order)
RANGE_BASE_METRICS = {
    "vus_pr": _declare("vus_pr", _vus(1, "VUS-PR"), "scores", _LABELS["vus_pr"]),
    "vus_roc": _declare("vus_roc", _vus(0, "VUS-ROC"), "scores", _LABELS["vus_roc"]),
    **{
        name: _declare(name, _at_threshold(name), "labels", _LABELS[name])
        for name in ranges.THRESHOLD_METRICS
    },
    **{
        name: _declare(
            name,
            _oracle(name, of),
            "scores",
            f"{_LABELS[of]} at the oracle threshold (optimistic)",
            optimistic=True,
        )
        for name, of in ranges.ORACLE_METRICS.items()
    },
}
