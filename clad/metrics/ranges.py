r"""Range-aware metrics of one time series: labels and scores (or predictions) in, a number out.

The metrics of the TSB-AD benchmark (Liu & Paparrizos, NeurIPS 2024), equal to its numbers except
where its code has a defect: VUS-PR and VUS-ROC from the scores (:mod:`clad.metrics.vus`), and at
given predictions (``pred``: 1 = flagged) point-adjusted, event, range and affiliation F1
(:mod:`clad.metrics.affiliation`). :func:`oracle` is the best of one of these over a grid of
thresholds chosen on the test labels (**optimistic**); :func:`chance_level` what a detector without
scores gets. Undefined values are NaN with a :class:`RangeMetricWarning` saying why. Every function
is vectorised over thresholds (and buffer widths). The definitions, the two defects of TSB-AD's code
that clad does not copy and the comparison with TSB-AD's values: ``docs/guides/time-series.md``.

>>> import numpy as np
>>> y = np.array([0, 0, 1, 1, 1, 0, 0, 0, 1, 0])
>>> pred = np.array([0, 0, 0, 1, 0, 0, 1, 0, 0, 0])
>>> pa_f1(y, pred), event_f1(y, pred), round(range_f1(y, pred), 4)
(0.75, 0.5, 0.3182)
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from .affiliation import affiliation_curve, affiliation_f1
from .range_inputs import (
    CHUNK_CELLS,
    DEFAULT_ALPHA,
    DEFAULT_ORACLE_THRESHOLDS,
    DEFAULT_VUS_THRESHOLDS,
    DEFAULT_WINDOW,
    MAX_THRESHOLDS,
    MAX_WINDOW,
    RangeMetricWarning,
    anomaly_ranges,
    check_int,
    check_labels,
    check_series,
    harmonic_f1,
    undefined,
)
from .vus import vus, vus_pr, vus_roc

__all__ = [
    "RangeMetricWarning",
    "anomaly_ranges",
    "vus",
    "vus_pr",
    "vus_roc",
    "pa_f1",
    "event_f1",
    "range_f1",
    "affiliation_f1",
    "oracle",
    "oracle_thresholds",
    "chance_level",
    "THRESHOLD_METRICS",
    "ORACLE_METRICS",
    "DEFAULT_WINDOW",
    "DEFAULT_VUS_THRESHOLDS",
    "DEFAULT_ORACLE_THRESHOLDS",
    "DEFAULT_ALPHA",
    "MAX_WINDOW",
    "MAX_THRESHOLDS",
]


# ------------------------------------------------------------------------ metrics at given predictions


def _pred_ranges(preds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, first point and end (exclusive) of every flagged range of each row of ``preds``."""
    k, n = preds.shape
    padded = np.zeros((k, n + 2), dtype=np.int8)
    padded[:, 1:-1] = preds
    edges = np.diff(padded, axis=1)
    rows, first = np.nonzero(edges == 1)
    _, stop = np.nonzero(edges == -1)
    return rows, first, stop


def _cumsum0(a: np.ndarray) -> np.ndarray:
    out = np.zeros(a.shape[:-1] + (a.shape[-1] + 1,), dtype=np.int64)
    np.cumsum(a, axis=-1, out=out[..., 1:])
    return out


def _point_counts(y: np.ndarray, preds: np.ndarray):
    """Per row of ``preds``: flagged points, true positives, and per true range the flagged points in it."""
    ranges = anomaly_ranges(y)
    cum = _cumsum0(preds)
    inside = cum[:, ranges[:, 1] + 1] - cum[:, ranges[:, 0]]
    return ranges, cum[:, -1], inside.sum(axis=1), inside


def _pa_f1_rows(y: np.ndarray, preds: np.ndarray) -> np.ndarray:
    ranges, n_pred, tp, inside = _point_counts(y, preds)
    lengths = ranges[:, 1] - ranges[:, 0] + 1
    tp_adjusted = (inside > 0) @ lengths
    fp = n_pred - tp
    fn = lengths.sum() - tp_adjusted
    return np.where(
        tp_adjusted > 0, 2 * tp_adjusted / np.maximum(2 * tp_adjusted + fp + fn, 1), 0.0
    )


def _event_f1_rows(y: np.ndarray, preds: np.ndarray) -> np.ndarray:
    ranges, n_pred, tp, inside = _point_counts(y, preds)
    recall = (inside > 0).sum(axis=1) / len(ranges)
    precision = np.where(n_pred > 0, tp / np.maximum(n_pred, 1), 0.0)
    return harmonic_f1(precision, recall)


def _range_f1_rows(y: np.ndarray, preds: np.ndarray, alpha: float) -> np.ndarray:
    k = preds.shape[0]
    ranges, _, _, inside = _point_counts(y, preds)
    first, last = ranges[:, 0], ranges[:, 1]
    # flagged ranges overlapping each true range: the one holding its first point, plus those starting inside it
    starts = preds.copy()
    starts[:, 1:] &= ~preds[:, :-1]
    cum_starts = _cumsum0(starts)
    card = preds[:, first].astype(np.int64) + cum_starts[:, last + 1] - cum_starts[:, first + 1]
    lengths = last - first + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        overlap = np.where(card > 0, inside / lengths / np.maximum(card, 1), 0.0)
    recall = (alpha * (inside > 0) + (1 - alpha) * overlap).mean(axis=1)
    # precision: every flagged range, its overlap with the anomalies and the true ranges it overlaps
    rows, a, b = _pred_ranges(preds)
    y_cum = _cumsum0(y)
    true_starts = y.copy()
    true_starts[1:] &= ~y[:-1]
    ts_cum = _cumsum0(true_starts)
    hits = y_cum[b] - y_cum[a]
    card_p = y[a].astype(np.int64) + ts_cum[b] - ts_cum[a + 1]
    value = np.where(card_p > 0, hits / (b - a) / np.maximum(card_p, 1), 0.0)
    counts = np.bincount(rows, minlength=k)
    precision = np.where(
        counts > 0, np.bincount(rows, value, minlength=k) / np.maximum(counts, 1), 0.0
    )
    return harmonic_f1(precision, recall)


def _check_alpha(alpha) -> float:
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float, np.floating, np.integer))
        or not 0 <= alpha <= 1
    ):
        raise ValueError(
            f"range_f1: alpha={alpha!r}; expected a number in [0, 1] (the weight of existence in recall, "
            f"default {DEFAULT_ALPHA})"
        )
    return float(alpha)


def _at(name: str, rows: Callable, y, pred) -> float:
    y, pred = check_series(name, y, pred, "predictions")
    if not y.any():
        return undefined(name, "the labels hold no anomaly")
    return float(rows(y, pred[None, :])[0])


def pa_f1(y, pred) -> float:
    """Point-adjusted F1 of predictions ``pred`` (1 = flagged) against labels ``y``: every point of
    a true range counts as flagged when one of its points is; then the point-wise F1.
    Optimistic by construction: random scores get high values on long ranges.

    >>> pa_f1([0, 1, 1, 1, 0, 0], [0, 0, 1, 0, 0, 1])
    0.8571428571428571
    """
    return _at("pa_f1", _pa_f1_rows, y, pred)


def event_f1(y, pred) -> float:
    """Event-based F1: recall = the fraction of true ranges with at least one flag, precision =
    the point-wise precision of the flags.

    >>> event_f1([0, 1, 1, 0, 0, 1], [0, 0, 1, 0, 0, 0])
    0.6666666666666666
    """
    return _at("event_f1", _event_f1_rows, y, pred)


def range_f1(y, pred, alpha: float = DEFAULT_ALPHA) -> float:
    """Range-based F1 (Tatbul et al. 2018; flat bias, cardinality factor 1/x): ``alpha`` weighs
    the existence reward against the overlap reward in recall (precision uses 0).

    >>> range_f1([0, 1, 1, 1, 1, 0], [0, 1, 1, 0, 0, 0])
    0.75
    """
    return _at("range_f1", functools.partial(_range_f1_rows, alpha=_check_alpha(alpha)), y, pred)


#: threshold-dependent metrics: name -> (function of labels and a prediction matrix -> one value per row, or None)
THRESHOLD_METRICS: dict[str, Callable] = {
    "pa_f1": pa_f1,
    "event_f1": event_f1,
    "range_f1": range_f1,
    "affiliation_f1": affiliation_f1,
}


#: the oracle forms of the threshold metrics, each name declared once: oracle name -> the metric it optimises
ORACLE_METRICS: dict[str, str] = {
    "pa_f1_oracle": "pa_f1",
    "event_f1_oracle": "event_f1",
    "range_f1_oracle": "range_f1",
    "affiliation_f1_oracle": "affiliation_f1",
}


def oracle_thresholds(scores, n_thresholds: int = DEFAULT_ORACLE_THRESHOLDS) -> np.ndarray:
    """The oracle grid: ``n_thresholds`` evenly spaced values from the smallest to the largest score."""
    scores = np.asarray(scores, dtype=np.float64)
    return np.linspace(scores.min(), scores.max(), int(n_thresholds))


def oracle(
    metric: str, y, scores, n_thresholds: int = DEFAULT_ORACLE_THRESHOLDS, **params
) -> float:
    """The best value of the threshold metric ``metric`` (``"pa_f1"``, ``"event_f1"``,
    ``"range_f1"``, ``"affiliation_f1"``) over :func:`oracle_thresholds` (``scores > t`` flagged).
    **Optimistic**: the threshold is chosen on the very labels it is scored against.

    >>> oracle("event_f1", [0, 0, 1, 1, 0], [0.1, 0.2, 0.9, 0.3, 0.1], n_thresholds=5)
    1.0
    """
    if metric not in THRESHOLD_METRICS:
        raise ValueError(
            f"oracle: metric={metric!r}; expected one of {', '.join(THRESHOLD_METRICS)}"
        )
    n_thresholds = check_int("oracle", "n_thresholds", n_thresholds, 1, MAX_THRESHOLDS)
    name = next(k for k, v in ORACLE_METRICS.items() if v == metric)
    y, scores = check_series(name, y, scores, "scores")
    if not y.any():
        return undefined(name, "the labels hold no anomaly")
    grid = oracle_thresholds(scores, n_thresholds)
    # no threshold tells the points apart: flag them all (the chance level)
    if scores.min() == scores.max():
        return chance_level(metric, y, **params)
    if metric == "affiliation_f1":
        return float(np.max(affiliation_curve(anomaly_ranges(y), scores, grid)))
    rows = {"pa_f1": _pa_f1_rows, "event_f1": _event_f1_rows}.get(metric)
    if metric == "range_f1":
        rows = functools.partial(
            _range_f1_rows, alpha=_check_alpha(params.pop("alpha", DEFAULT_ALPHA))
        )
    if params:
        raise ValueError(f"oracle: unknown parameters {sorted(params)} for {metric}")
    chunk = max(1, CHUNK_CELLS // y.size)
    best = -math.inf
    for lo in range(0, grid.size, chunk):
        preds = scores[None, :] > grid[lo : lo + chunk, None]
        best = max(best, float(np.max(rows(y, preds))))
    return best


def chance_level(metric: str, y, **params) -> float:
    """What a detector without scores gets on labels ``y``: every point has the same score, so the
    curves of VUS see one threshold that flags every point, a detector's threshold flags every point
    or none (the better of the two: flagging every point, since flagging none scores 0), and so does
    the oracle. ``metric`` is a name of :data:`clad.metrics.base.BASE_METRIC_REGISTRY` among the range
    metrics (``vus_pr``, ``vus_roc``, ``pa_f1``, ``event_f1``, ``range_f1``, ``affiliation_f1`` and
    their ``_oracle`` forms).

    VUS's chance level is not 0.5 / the anomaly rate: its buffers make the normal points next to a
    range count partly as anomalies, so flagging everything scores above that (with ``window=0``
    it is exactly 0.5 and the anomaly rate).

    >>> y = [0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    >>> chance_level("pa_f1", y), round(chance_level("event_f1", y), 4)
    (0.3333333333333333, 0.3333)
    """
    y = check_labels("chance_level", y)
    base = ORACLE_METRICS.get(metric, metric)
    # the oracle's grid: a constant score gives one threshold whatever it is
    params.pop("n_thresholds", None)
    if base in ("vus_pr", "vus_roc"):
        return {"vus_pr": vus_pr, "vus_roc": vus_roc}[base](y, np.zeros(y.size), **params)
    if base not in THRESHOLD_METRICS:
        raise ValueError(
            f"chance_level: metric={metric!r}; expected one of vus_pr, vus_roc, "
            f"{', '.join(THRESHOLD_METRICS)}, {', '.join(ORACLE_METRICS)}"
        )
    return THRESHOLD_METRICS[base](y, np.ones(y.size, dtype=np.int8), **params)
