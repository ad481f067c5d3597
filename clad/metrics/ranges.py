r"""Range-aware metrics of one time series: labels and scores (or predictions) in, a number out.

An anomaly in a time series is a *range* of consecutive anomalous points; a detector that fires a
little early or late, or once per range, is useful. These metrics score that. They are the
metrics of the TSB-AD benchmark (Liu & Paparrizos, NeurIPS 2024, ``TSB_AD/evaluation/``) and give
its numbers (checked on seeded random series by ``tests/test_range_metrics.py`` against values
that ``benchmarks/tsb_ad_reference.py`` computed with TSB-AD's own code), except where that code has
a defect, named below. Every function is vectorised over thresholds (and buffer widths), so a
series of 8,000 points is scored in milliseconds.

Threshold-free (from ``scores``, higher = more anomalous):

* :func:`vus_pr`, :func:`vus_roc` -- the volume under the range-PR / range-ROC surface
  (Paparrizos et al., VLDB 2022): the labels get a soft buffer of ``w // 2`` points on both sides of
  every range (weight :math:`\sqrt{1 - d / w}` at distance ``d``), a range-aware TPR (recall times
  the fraction of buffered ranges hit), FPR and precision are computed at ``thresholds`` score
  quantiles, and the area under the curve is averaged over the buffer widths ``w = 0 ... window``.

At given binary predictions (``pred``: 1 = flagged):

* :func:`pa_f1` -- point-adjusted F1: a true range with one flagged point counts as wholly flagged.
  **Random scores get a high PA-F1** (a long range is almost surely hit somewhere); never read it alone.
* :func:`event_f1` -- event-wise recall (the fraction of true ranges hit) with point-wise precision.
* :func:`range_f1` -- range-based F1 of Tatbul et al. (NeurIPS 2018) with flat positional bias and
  cardinality factor :math:`1/x`: recall per true range is
  :math:`\alpha \cdot \text{existence} + (1 - \alpha) \cdot \text{overlap} \cdot \gamma`, precision
  per flagged range is its overlap fraction times :math:`\gamma` (``alpha = 0``), each averaged
  over ranges.
* :func:`affiliation_f1` -- the F1 of affiliation precision and recall (Huet et al., KDD 2022):
  every true range owns the stretch of time closer to it than to any other (its *zone*); a flagged
  point's precision is the probability that a random point of the zone lies farther from the
  range, a true point's recall the probability that a random point of the zone lies farther from
  it than the nearest flag. Precision averages over the zones holding flags, recall over all.

:func:`oracle` gives the best value of one of them over a grid of thresholds (TSB-AD's way when
it is given no predictions: ``n_thresholds`` evenly spaced between the smallest and the largest
score, ``scores > t`` flagged). That value is **optimistic**: the threshold was chosen on the
test labels.

Undefined values are NaN with a :class:`RangeMetricWarning` saying why: labels without an
anomaly (every metric), and for VUS labels without a normal point. :func:`chance_level` gives what
a detector without scores (every point the same score, so every point flagged or none) gets on
given labels: the baseline a value means something against.

Where TSB-AD's code (release 1.5, the same files as the repository's commit 8763009) has a defect,
clad computes the definition and the difference is documented (``docs/guides/time-series.md``):

* point adjustment (``basic_metrics.py``, ``_adjust_predicts``, line 122 ``for j in range(i, 0,
  -1)``) never walks back to index 0: a range starting at the first point, first flagged later,
  keeps its first point unflagged there;
* event extraction (``basic_metrics.py``, ``_get_events``, line 326 ``event_end = tim - 1``) ends a
  range that runs to the last point one point early: a flag on the last point alone does not hit it.

>>> import numpy as np
>>> y = np.array([0, 0, 1, 1, 1, 0, 0, 0, 1, 0])
>>> pred = np.array([0, 0, 0, 1, 0, 0, 1, 0, 0, 0])
>>> pa_f1(y, pred), event_f1(y, pred), round(range_f1(y, pred), 4)
(0.75, 0.5, 0.3182)
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np

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

#: TSB-AD's defaults: the largest buffer width of VUS, its threshold count, the oracle grid, range-F1's alpha
DEFAULT_WINDOW = 100
DEFAULT_VUS_THRESHOLDS = 250
DEFAULT_ORACLE_THRESHOLDS = 100
DEFAULT_ALPHA = 0.2
#: the largest values these parameters may take (50 x TSB-AD's window; a grid finer than any score
#: resolution): beyond them the memory and time of one evaluation run away with no gain
MAX_WINDOW = 5_000
MAX_THRESHOLDS = 10_000

# predictions evaluated at once by the vectorised metrics: rows x points kept below this
_CHUNK_CELLS = 1 << 22


class RangeMetricWarning(RuntimeWarning):
    """A range metric is undefined on the labels given (it returns NaN); the message says why."""


def _undefined(name: str, reason: str) -> float:
    warnings.warn(
        f"{name}: {reason}; the value is undefined (NaN)", RangeMetricWarning, stacklevel=3
    )
    return float("nan")


def _labels(name: str, y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"{name}: labels must be a non-empty 1-D array, got shape {y.shape}")
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name}: labels must be 0 (normal) or 1 (anomaly)")
    return y.astype(bool)


def _series(name: str, y, values, what: str) -> tuple[np.ndarray, np.ndarray]:
    y = _labels(name, y)
    values = np.asarray(values)
    if values.shape != y.shape:
        raise ValueError(
            f"{name}: {values.shape[0] if values.ndim else 0} {what} for {y.size} labels; "
            "expected one per point"
        )
    if what == "scores":
        if values.dtype.kind not in "biuf" or not np.isfinite(values).all():
            raise ValueError(f"{name}: scores must be finite numbers")
        return y, values.astype(np.float64, copy=False)
    if values.dtype.kind not in "biuf" or not np.isin(values, (0, 1)).all():
        raise ValueError(f"{name}: predictions must be 0 or 1 (1 = flagged)")
    return y, values.astype(bool)


def anomaly_ranges(y) -> np.ndarray:
    """The ranges of consecutive anomalous points, one row ``(first, last)`` each (inclusive).

    >>> anomaly_ranges([1, 1, 0, 0, 1, 0, 1]).tolist()
    [[0, 1], [4, 4], [6, 6]]
    """
    flags = np.asarray(y) != 0
    edges = np.diff(
        np.concatenate(
            ([0], flags.view(np.int8) if flags.dtype == bool else flags.astype(np.int8), [0])
        )
    )
    return np.stack([np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1], axis=1)


# ---------------------------------------------------------------------------------------------- VUS


def _first_flags(scores: np.ndarray, thresholds: int) -> np.ndarray:
    """For every point, the first of ``thresholds`` scores of evenly spaced rank (descending) that
    flags it (``t[j] <= score``; flags only grow with ``j``); ``thresholds`` when none does."""
    t = np.sort(scores)[::-1][np.linspace(0, scores.size - 1, thresholds).astype(int)]
    return np.searchsorted(-t, -scores, side="left")


def _buffer_distances(y: np.ndarray, ranges: np.ndarray, half: int):
    """The normal points within ``half`` of a range, and each one's distance to its nearest range
    and to its second nearest (``nearest``, ``second``; beyond the series: a distance of ``n +
    half + 1``).

    A point that two ranges' buffers reach weighs 1 whatever the width: each weight is at least
    :math:`\\sqrt{1/2}`, so their sum is clipped to 1.

    >>> y = np.array([0, 1, 0, 0, 0, 1, 1, 0], dtype=bool)
    >>> [a.tolist() for a in _buffer_distances(y, anomaly_ranges(y), 2)]
    [[0, 2, 3, 4, 7], [1, 1, 2, 1, 1], [5, 3, 2, 3, 6]]
    """
    n = y.size
    far = n + half + 1
    points = np.flatnonzero(~y)
    starts, ends = ranges[:, 0], ranges[:, 1]
    left = np.searchsorted(ends, points)  # ranges ending before each point: left - 1, left - 2
    right = np.searchsorted(starts, points)  # ranges starting after it: right, right + 1

    def distance(index, valid, edge):
        return np.where(valid, np.abs(points - edge[np.clip(index, 0, len(edge) - 1)]), far)

    left_1, left_2 = distance(left - 1, left >= 1, ends), distance(left - 2, left >= 2, ends)
    right_1 = distance(right, right < len(starts), starts)
    right_2 = distance(right + 1, right + 1 < len(starts), starts)
    nearest = np.minimum(left_1, right_1)
    second = np.minimum(np.maximum(left_1, right_1), np.minimum(left_2, right_2))
    near = nearest <= half
    return points[near], nearest[near], second[near]


def _buffer_pairs(y: np.ndarray, ranges: np.ndarray, half: int) -> int:
    """The (range, normal point within ``half`` of it) pairs.

    >>> y = np.array([0, 1, 0, 0, 0, 1, 1, 0], dtype=bool)
    >>> _buffer_pairs(y, anomaly_ranges(y), 2)  # 1 + 2 beside the first range, 2 + 1 beside the second
    6
    """
    normal = np.concatenate(([0], np.cumsum(~y)))
    starts, ends = ranges[:, 0], ranges[:, 1]
    left = normal[starts] - normal[np.maximum(starts - half, 0)]
    right = normal[np.minimum(ends + half + 1, y.size)] - normal[ends + 1]
    return int(left.sum() + right.sum())


def _range_hits(y: np.ndarray, ranges: np.ndarray, first: np.ndarray, half: int, big: int):
    """The first threshold hitting each range with a buffer of ``h = 0 ... half`` points on both
    sides: an array (ranges, half + 1)."""
    n = y.size
    starts, ends = ranges[:, 0], ranges[:, 1]
    bounds = np.stack([starts, ends + 1], axis=1).ravel()
    core = np.minimum.reduceat(np.append(first, big), bounds)[::2]
    reach = np.arange(1, half + 1)
    left_pos, right_pos = starts[:, None] - reach, ends[:, None] + reach
    left = np.where(left_pos >= 0, first[np.clip(left_pos, 0, n - 1)], big)
    right = np.where(right_pos < n, first[np.clip(right_pos, 0, n - 1)], big)
    edge = np.full((len(ranges), 1), big)
    left = np.concatenate([edge, np.minimum.accumulate(left, axis=1)], axis=1)
    right = np.concatenate([edge, np.minimum.accumulate(right, axis=1)], axis=1)
    return np.minimum(core[:, None], np.minimum(left, right))


def _vus_curves(
    y: np.ndarray, scores: np.ndarray, window: int, thresholds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Range-ROC area and range-AP for every buffer width ``0 ... window`` (two arrays).

    A buffer point's weight depends only on its distances to its two nearest ranges
    (:func:`_buffer_distances`), so a width costs one pass over the buffer points, whatever the
    number of ranges: the points are summed in the order of their first flagging threshold."""
    n, T, H = y.size, int(thresholds), window // 2
    ranges = anomaly_ranges(y)
    P = float(np.count_nonzero(y))
    first = _first_flags(scores, T)
    n_pred = np.cumsum(np.bincount(first, minlength=T + 1)[:T]).astype(np.float64)
    tp_core = np.cumsum(np.bincount(first[y], minlength=T + 1)[:T]).astype(np.float64)
    points, nearest, second = _buffer_distances(y, ranges, H)
    order = np.argsort(first[points], kind="stable")
    nearest, second = nearest[order], second[order]
    at = np.searchsorted(first[points][order], np.arange(T), side="right")
    per_range = _range_hits(y, ranges, first, H, T + 1)
    gaps = ranges[1:, 0] - ranges[:-1, 1]
    steps = np.arange(T)

    def hit_row(h: int) -> np.ndarray:
        group_starts = np.flatnonzero(np.concatenate(([True], gaps > 2 * h)))
        firsts = np.sort(np.minimum.reduceat(per_range[:, h], group_starts))
        return np.searchsorted(firsts, steps, side="right") / group_starts.size

    # the buffer widths a block at a time, so that memory stays near _CHUNK_CELLS whatever the
    # window; a block's size is counted in (range, buffer point) pairs, as the sums were once
    # taken, since the blocks' bounds move the areas' last bits
    roc, ap = np.empty(window + 1), np.empty(window + 1)
    distances = np.arange(H + 2)
    block = max(1, _CHUNK_CELLS // max(T + 2, _buffer_pairs(y, ranges, H) + 1))
    for w0 in range(0, window + 1, block):
        widths = np.arange(w0, min(window + 1, w0 + block))
        halves = widths[:, None] // 2
        # each point's weight read from a table by its distance (H + 1: two ranges reach it)
        with np.errstate(invalid="ignore"):
            weight = np.sqrt(1 - distances / np.maximum(widths, 1)[:, None])
        table = np.where(distances <= halves, weight, 0.0)
        table[:, H + 1] = 1.0
        soft = np.take_along_axis(table, np.where(second <= halves, H + 1, nearest), axis=1)
        cum = np.concatenate([np.zeros((widths.size, 1)), np.cumsum(soft, axis=1)], axis=1)
        del soft
        buffer_tp = cum[:, at]
        del cum
        hit = np.stack([hit_row(int(h)) for h in range(int(halves[0, 0]), int(halves[-1, 0]) + 1)])
        roc[widths], ap[widths] = _curve_areas(
            buffer_tp, hit[halves[:, 0] - halves[0, 0]], tp_core, n_pred, P, n
        )
    return roc, ap


def _curve_areas(buffer_tp, hit, tp_core, n_pred, P: float, n: int):
    """Range-ROC area and range-AP of a block of widths from their buffer true positives."""
    tp = tp_core[None, :] + buffer_tp
    p_new = P + buffer_tp / 2
    tpr = np.minimum(tp / p_new, 1.0) * hit
    fpr = (n_pred[None, :] - tp) / (n - p_new)
    precision = tp / n_pred[None, :]
    zeros, ones = np.zeros((tp.shape[0], 1)), np.ones((tp.shape[0], 1))
    tpr_c = np.concatenate([zeros, tpr, ones], axis=1)
    fpr_c = np.concatenate([zeros, fpr, ones], axis=1)
    roc = np.sum(np.diff(fpr_c, axis=1) * (tpr_c[:, 1:] + tpr_c[:, :-1]) / 2, axis=1)
    ap = np.sum(np.diff(tpr_c[:, :-1], axis=1) * precision, axis=1)
    return roc, ap


def _check_vus(name: str, window, thresholds) -> tuple[int, int]:
    if (
        isinstance(window, bool)
        or not isinstance(window, (int, np.integer))
        or not 0 <= window <= MAX_WINDOW
    ):
        raise ValueError(
            f"{name}: window={window!r}; expected an integer from 0 to {MAX_WINDOW:,} (the largest buffer "
            f"width, TSB-AD's slidingWindow, default {DEFAULT_WINDOW})"
        )
    if (
        isinstance(thresholds, bool)
        or not isinstance(thresholds, (int, np.integer))
        or not 2 <= thresholds <= MAX_THRESHOLDS
    ):
        raise ValueError(
            f"{name}: thresholds={thresholds!r}; expected an integer from 2 to {MAX_THRESHOLDS:,} "
            f"(default {DEFAULT_VUS_THRESHOLDS})"
        )
    return int(window), int(thresholds)


def vus(
    y, scores, window: int = DEFAULT_WINDOW, thresholds: int = DEFAULT_VUS_THRESHOLDS
) -> tuple[float, float]:
    """``(vus_roc, vus_pr)`` of ``scores`` against labels ``y``: the range-ROC area and range
    average precision, averaged over the buffer widths ``0, 1, ..., window`` (TSB-AD's
    ``slidingWindow``), each curve taken at ``thresholds`` scores of evenly spaced rank.

    NaN (with a :class:`RangeMetricWarning`) when ``y`` has no anomaly or no normal point.

    >>> import numpy as np
    >>> y = np.zeros(12, dtype=int); y[5:7] = 1
    >>> s = np.zeros(12); s[5:7] = 1.0
    >>> [round(v, 4) for v in vus(y, s, window=0, thresholds=12)]
    [1.0, 1.0]
    """
    window, thresholds = _check_vus("vus", window, thresholds)
    y, scores = _series("vus", y, scores, "scores")
    if not y.any():
        return _undefined("vus", "the labels hold no anomaly"), float("nan")
    if y.all():
        return _undefined(
            "vus", "the labels hold no normal point (the false-positive rate has no denominator)"
        ), float("nan")
    roc, ap = _vus_curves(y, scores, window, thresholds)
    return float(roc.mean()), float(ap.mean())


def vus_pr(
    y, scores, window: int = DEFAULT_WINDOW, thresholds: int = DEFAULT_VUS_THRESHOLDS
) -> float:
    """VUS-PR (TSB-AD's headline): the range average precision averaged over buffer widths; see :func:`vus`."""
    return vus(y, scores, window, thresholds)[1]


def vus_roc(
    y, scores, window: int = DEFAULT_WINDOW, thresholds: int = DEFAULT_VUS_THRESHOLDS
) -> float:
    """VUS-ROC: the range-ROC area averaged over buffer widths; see :func:`vus`."""
    return vus(y, scores, window, thresholds)[0]


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


def _f1(p, r):
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p + r > 0, 2 * p * r / (p + r), 0.0)


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
    return _f1(precision, recall)


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
    return _f1(precision, recall)


def _affiliation_curve(
    y_ranges: np.ndarray, scores: np.ndarray, thresholds: np.ndarray
) -> np.ndarray:
    """Affiliation F1 of the flags ``scores > t`` for every ``t`` of ``thresholds``, exactly.

    Each true range ``J = [J0, J1)`` owns the zone ``E`` between the midpoints to its neighbours
    (the series' ends outside). A flagged point ``x`` is the cell ``[x, x + 1)``; its precision
    integrand is the share of ``E`` farther from ``J`` than it (1 inside ``J``), a true point's
    recall integrand the share of ``E`` farther from it than the nearest flag in ``E``. The
    integrands are piecewise linear with kinks at multiples of 1/4 (zone ends are midpoints of
    integers), so the trapezoidal rule on half cells (precision) and quarter points (recall) is
    exact. Precision only depends on which points are flagged, so it is a sum over points sorted
    by score; recall needs, per zone, the flags inside ``J`` and the nearest one on each side.
    """
    n = scores.size
    T = thresholds.size
    J0 = y_ranges[:, 0].astype(np.int64)
    J1 = y_ranges[:, 1].astype(np.int64) + 1
    mids = (J1[:-1] + J0[1:]) / 2
    E0 = np.concatenate(([0.0], mids))
    E1 = np.concatenate((mids, [float(n)]))
    size = E1 - E0
    Z = len(J0)
    # precision: every half cell's integral and zone, then per zone the sums above each threshold
    a = np.concatenate([np.arange(n), np.arange(n) + 0.5])
    item_scores = np.concatenate([scores, scores])
    zone = np.minimum(np.searchsorted(E1, a + 0.25, side="right"), Z - 1)
    inside = (a + 0.25 >= J0[zone]) & (a + 0.25 < J1[zone])

    def survive(u):
        dist = np.maximum(J0[zone] - u, u - J1[zone])
        return (
            np.maximum(J0[zone] - E0[zone] - dist, 0.0)
            + np.maximum(E1[zone] - J1[zone] - dist, 0.0)
        ) / size[zone]

    integral = np.where(inside, 0.5, 0.25 * (survive(a) + survive(a + 0.5)))
    sums = np.zeros((Z, T))
    mass = np.zeros((Z, T))
    order = np.lexsort((item_scores, zone))
    zone_s, score_s, integral_s = zone[order], item_scores[order], integral[order]
    bounds = np.searchsorted(zone_s, np.arange(Z + 1))
    for z in range(Z):
        lo, hi = bounds[z], bounds[z + 1]
        cum = np.concatenate(([0.0], np.cumsum(integral_s[lo:hi])))
        below = np.searchsorted(score_s[lo:hi], thresholds, side="right")  # items with score <= t
        sums[z] = cum[-1] - cum[below]
        mass[z] = 0.5 * (hi - lo - below)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_zone = np.where(mass > 0, sums / np.where(mass > 0, mass, 1), np.nan)
    flagged_zones = (mass > 0).sum(axis=0)
    precision = np.where(
        flagged_zones > 0, np.nansum(per_zone, axis=0) / np.maximum(flagged_zones, 1), 0.0
    )
    # recall: per zone, the quarter points of J, the flags inside J and the nearest flag on each side
    recall = np.zeros(T)
    chunk_cells = _CHUNK_CELLS // 4
    for z in range(Z):
        j0, j1 = int(J0[z]), int(J1[z])
        length = j1 - j0
        grid = j0 + np.arange(4 * length + 1) / 4.0
        left = scores[int(np.floor(E0[z])) : j0][
            ::-1
        ]  # the cells left of J that reach into E, nearest first
        right = scores[j1 : int(np.ceil(E1[z]))]
        run_left = np.maximum.accumulate(left) if left.size else left
        run_right = np.maximum.accumulate(right) if right.size else right
        cell = np.minimum(np.arange(grid.size) // 4, length - 1)
        step = max(1, chunk_cells // grid.size)
        for lo in range(0, T, step):
            t = thresholds[lo : lo + step]
            flags = scores[j0:j1][None, :] > t[:, None]  # (thresholds, cells of J)
            covered = flags[:, cell]
            on_edge = (np.arange(grid.size) % 4 == 0) & (np.arange(grid.size) > 0)
            covered[:, on_edge] |= flags[
                :, cell[on_edge] - (np.arange(grid.size)[on_edge] < 4 * length)
            ]
            index = np.arange(grid.size)
            last = np.maximum.accumulate(np.where(covered, index, -1), axis=1)
            nxt = np.minimum.accumulate(np.where(covered, index, grid.size)[:, ::-1], axis=1)[
                :, ::-1
            ]
            dist = np.full(covered.shape, np.inf)
            has = last >= 0
            dist[has] = (grid[None, :] - grid[np.maximum(last, 0)])[has]
            has = nxt < grid.size
            dist[has] = np.minimum(
                dist[has], (grid[np.minimum(nxt, grid.size - 1)] - grid[None, :])[has]
            )
            if left.size:
                k = np.searchsorted(
                    run_left, t, side="right"
                )  # first left cell above t, counted from J0 - 1
                end = np.where(k < left.size, j0 - k, -np.inf)  # its right end (j0 - 1 - k) + 1
                dist = np.minimum(dist, grid[None, :] - end[:, None])
            if right.size:
                k = np.searchsorted(run_right, t, side="right")
                start = np.where(k < right.size, j1 + k, np.inf)
                dist = np.minimum(dist, start[:, None] - grid[None, :])
            with np.errstate(invalid="ignore"):
                near = np.minimum(grid + dist, E1[z]) - np.maximum(grid - dist, E0[z])
            f = 1 - near / size[z]
            recall[lo : lo + step] += np.sum((f[:, 1:] + f[:, :-1]) * 0.125, axis=1) / length
    recall /= Z
    return np.where(mass.sum(axis=0) > 0, _f1(precision, recall), 0.0)


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
    y, pred = _series(name, y, pred, "predictions")
    if not y.any():
        return _undefined(name, "the labels hold no anomaly")
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
    alpha = _check_alpha(alpha)
    return _at("range_f1", lambda y, p: _range_f1_rows(y, p, alpha), y, pred)


def affiliation_f1(y, pred) -> float:
    """Affiliation F1 (Huet et al. 2022): the harmonic mean of affiliation precision and recall.
    A prediction without any flag gets 0 (recall 0; TSB-AD returns NaN there).

    >>> affiliation_f1([0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0])
    1.0
    """
    y, pred = _series("affiliation_f1", y, pred, "predictions")
    if not y.any():
        return _undefined("affiliation_f1", "the labels hold no anomaly")
    return float(_affiliation_curve(anomaly_ranges(y), pred.astype(np.float64), np.array([0.5]))[0])


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
    if (
        isinstance(n_thresholds, bool)
        or not isinstance(n_thresholds, (int, np.integer))
        or not 1 <= n_thresholds <= MAX_THRESHOLDS
    ):
        raise ValueError(
            f"oracle: n_thresholds={n_thresholds!r}; expected an integer from 1 to {MAX_THRESHOLDS:,}"
        )
    name = next(k for k, v in ORACLE_METRICS.items() if v == metric)
    y, scores = _series(name, y, scores, "scores")
    if not y.any():
        return _undefined(name, "the labels hold no anomaly")
    grid = oracle_thresholds(scores, n_thresholds)
    if (
        scores.min() == scores.max()
    ):  # no threshold tells the points apart: flag them all (the chance level)
        return chance_level(metric, y, **params)
    if metric == "affiliation_f1":
        return float(np.max(_affiliation_curve(anomaly_ranges(y), scores, grid)))
    if metric == "range_f1":
        alpha = _check_alpha(params.pop("alpha", DEFAULT_ALPHA))

        def rows(y, p):
            return _range_f1_rows(y, p, alpha)
    else:
        rows = _pa_f1_rows if metric == "pa_f1" else _event_f1_rows
    if params:
        raise ValueError(f"oracle: unknown parameters {sorted(params)} for {metric}")
    chunk = max(1, _CHUNK_CELLS // y.size)
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
    y = _labels("chance_level", y)
    base = ORACLE_METRICS.get(metric, metric)
    params.pop(
        "n_thresholds", None
    )  # the oracle's grid: a constant score gives one threshold whatever it is
    if base in ("vus_pr", "vus_roc"):
        return {"vus_pr": vus_pr, "vus_roc": vus_roc}[base](y, np.zeros(y.size), **params)
    if base not in THRESHOLD_METRICS:
        raise ValueError(
            f"chance_level: metric={metric!r}; expected one of vus_pr, vus_roc, "
            f"{', '.join(THRESHOLD_METRICS)}, {', '.join(ORACLE_METRICS)}"
        )
    return THRESHOLD_METRICS[base](y, np.ones(y.size, dtype=np.int8), **params)
