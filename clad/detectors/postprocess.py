"""Score post-processing as a declared stage: a rolling median, mean or maximum over ``k`` rows.

Time-series benchmarks smooth a detector's scores before the threshold (SKAB: a median over 5
rows). :class:`Postprocessed` (``postprocessed``) wraps any detector and smooths what it returns,
in row order within each call of ``score``: clad's evaluator scores each test concept in **one call,
rows in their order** (:class:`clad.core.evaluation.Evaluator`), so the window of a row is the row
and the ``k - 1`` rows before it in its own test concept, never rows of another concept. The
threshold is the wrapped detector's: the limit applies to the smoothed score, as in SKAB.

A detector that returns several statistics, each with its own limit (``statistics(X)``, ``limits_``
and ``rule``, as :class:`~clad.detectors.control_charts.HotellingT2` does), has *each statistic*
smoothed and then combined (:func:`~clad.detectors.control_charts.combine_statistics`), as a chart
of each statistic would be.

The first ``k - 1`` rows have no full window (the *warm-up*): ``warmup="unflagged"`` (the default)
gives them the lowest value of the call, never above the threshold (SKAB's: their smoothed value is
missing, and a missing value flags nothing); ``warmup="partial"`` smooths them over the rows there
are (pandas' ``min_periods=1``).

>>> import numpy as np
>>> rolling([1.0, 9.0, 2.0, 3.0, 8.0], "median", 3, warmup="partial").tolist()
[1.0, 5.0, 2.0, 3.0, 3.0]
>>> rolling([1.0, 9.0, 2.0, 3.0, 8.0], "max", 3, floor=0.5).tolist()
[0.5, 0.5, 9.0, 9.0, 8.0]
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import DetectorError
from ..validation import StrOptions

__all__ = ["Postprocessed", "rolling", "check_postprocess", "FILTERS", "WARMUPS"]

FILTERS = ("median", "mean", "max")
WARMUPS = ("unflagged", "partial")
_REDUCE = {"median": np.median, "mean": np.mean, "max": np.max}
_FILTER_TEXT = (
    "one filter and its window in rows, {median = k}, {mean = k} or {max = k} (k an integer >= 1)"
)


def check_postprocess(value) -> tuple[str, int]:
    """``{"median": 5}`` (one of median, mean, max: a window of at least one row) as ``(filter, k)``.

    >>> check_postprocess({"median": 5})
    ('median', 5)
    >>> check_postprocess({"mode": 5})
    Traceback (most recent call last):
    ...
    clad.errors.DetectorError: postprocess={'mode': 5}; expected one filter and its window in rows, {median = k}, {mean = k} or {max = k} (k an integer >= 1)
    """
    ok = isinstance(value, dict) and len(value) == 1
    if ok:
        ((kind, k),) = value.items()
        ok = kind in FILTERS and isinstance(k, (int, np.integer)) and not isinstance(k, bool)
        ok = ok and k >= 1
    if not ok:
        raise DetectorError(f"postprocess={value!r}; expected {_FILTER_TEXT}")
    return str(kind), int(k)


def rolling(
    values, kind: str, k: int, warmup: str = "unflagged", floor: float | None = None
) -> np.ndarray:
    """``kind`` (median, mean or max) over each row and the ``k - 1`` rows before it, in row order.

    The first ``k - 1`` rows: ``warmup="partial"`` reduces the rows there are; ``"unflagged"`` gives
    them ``floor`` (default: the smallest value of the result's full windows, or of ``values`` when
    there is none)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    out = np.empty(n, dtype=np.float64)
    reduce = _REDUCE[kind]
    if n >= k:
        out[k - 1 :] = reduce(np.lib.stride_tricks.sliding_window_view(values, k), axis=1)
    head = min(k - 1, n)
    if warmup == "partial":
        for i in range(head):
            out[i] = reduce(values[: i + 1])
    elif head:
        full = out[k - 1 :] if n >= k else values
        low = float(full.min())
        out[:head] = low if floor is None else min(low, float(floor))
    return out


class _Filter:
    """The constraint of ``postprocess`` (checked when a spec is read)."""

    hidden = False

    def is_satisfied_by(self, val) -> bool:
        try:
            check_postprocess(val)
        except DetectorError:
            return False
        return True

    def __str__(self) -> str:
        return _FILTER_TEXT


class _DetectorName:
    """The constraint of ``detector``: a registered detector name or an import path (``module:Class``)."""

    hidden = False

    def is_satisfied_by(self, val) -> bool:
        from . import DETECTORS

        return isinstance(val, str) and val != "postprocessed" and (val in DETECTORS or ":" in val)

    def __str__(self) -> str:
        from . import DETECTORS

        return f"a registered detector ({', '.join(n for n in DETECTORS.names() if n != 'postprocessed')}) or an import path"


class Postprocessed(BaseEstimator):
    """Detector ``detector`` (a registered name or an import path, built with ``params``) whose
    scores are smoothed by ``postprocess`` (``{"median": k}``, ``{"mean": k}`` or ``{"max": k}``)
    with the warm-up ``warmup`` (module docstring). ``random_state`` (None: the run seed) reaches
    the wrapped detector when it takes one and ``params`` does not set it."""

    _parameter_constraints = {
        "detector": [_DetectorName()],
        "params": [None, dict],
        "postprocess": [None, _Filter()],
        "warmup": [StrOptions(set(WARMUPS))],
        "random_state": [None, Integral],
    }

    def __init__(
        self,
        detector: str = "iforest",
        params: dict | None = None,
        postprocess: dict | None = None,
        warmup: str = "unflagged",
        random_state: int | None = None,
    ):
        self.detector = detector
        self.params = params
        self.postprocess = postprocess
        self.warmup = warmup
        self.random_state = random_state

    def fit(self, X, y=None):
        from . import make_detector, set_random_state

        self.filter_ = check_postprocess(
            self.postprocess if self.postprocess is not None else {"median": 1}
        )
        if self.warmup not in WARMUPS:
            raise DetectorError(
                f"detector Postprocessed: warmup={self.warmup!r}; expected one of {', '.join(WARMUPS)}"
            )
        self.detector_ = make_detector(self.detector, dict(self.params or {}))
        if self.random_state is not None:
            set_random_state(self.detector_, int(self.random_state))
        self.detector_.fit(X)
        self.threshold_ = float(self.detector_.threshold_)
        return self

    def _charts(self):
        inner = getattr(self.detector_, "estimator_", None)
        charts = callable(getattr(inner, "statistics", None)) and hasattr(inner, "limits_")
        return inner if charts else None

    def score(self, X) -> np.ndarray:
        """The wrapped detector's score (or each of its statistics) smoothed over the rows of ``X`` in order."""
        from .control_charts import combine_statistics

        if not hasattr(self, "detector_"):
            raise DetectorError("detector Postprocessed: score() called before fit()")
        kind, k = self.filter_
        charts = self._charts()
        if charts is None:
            return rolling(self.detector_.score(X), kind, k, self.warmup, floor=self.threshold_)
        stats = charts.statistics(X)
        smoothed = {
            name: rolling(v, kind, k, self.warmup, floor=charts.limits_[name])
            for name, v in stats.items()
        }
        return combine_statistics(smoothed, charts.limits_, charts.rule)
