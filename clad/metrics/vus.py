"""VUS-PR and VUS-ROC (Paparrizos et al., VLDB 2022; defined in ``docs/guides/time-series.md``). A
buffer width costs one pass over the buffer points, whatever the number of ranges."""

from __future__ import annotations

import numpy as np

from .range_inputs import (
    CHUNK_CELLS,
    DEFAULT_VUS_THRESHOLDS,
    DEFAULT_WINDOW,
    MAX_THRESHOLDS,
    MAX_WINDOW,
    anomaly_ranges,
    check_int,
    check_series,
    undefined,
)

__all__ = ["vus", "vus_pr", "vus_roc"]


def _first_flags(scores: np.ndarray, thresholds: int) -> np.ndarray:
    """For every point, the first of ``thresholds`` scores of evenly spaced rank (descending) that
    flags it (``t[j] <= score``; flags only grow with ``j``); ``thresholds`` when none does."""
    t = np.sort(scores)[::-1][np.linspace(0, scores.size - 1, thresholds).astype(int)]
    return np.searchsorted(-t, -scores, side="left")


def _buffer_distances(y: np.ndarray, ranges: np.ndarray, half: int):
    """The normal points within ``half`` of a range, and each one's distance to its nearest range
    and to its second nearest (``nearest``, ``second``; without such a range: a distance of ``n +
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


def vus_curves(
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

    # the buffer widths a block at a time, so that memory stays near CHUNK_CELLS whatever the
    # window; a block's size is counted in (range, buffer point) pairs, as the sums were once
    # taken, since the blocks' bounds move the areas' last bits
    roc, ap = np.empty(window + 1), np.empty(window + 1)
    distances = np.arange(H + 2)
    block = max(1, CHUNK_CELLS // max(T + 2, _buffer_pairs(y, ranges, H) + 1))
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
    note = f" (the largest buffer width, TSB-AD's slidingWindow, default {DEFAULT_WINDOW})"
    window = check_int("vus", "window", window, 0, MAX_WINDOW, note)
    thresholds = check_int(
        "vus", "thresholds", thresholds, 2, MAX_THRESHOLDS, f" (default {DEFAULT_VUS_THRESHOLDS})"
    )
    y, scores = check_series("vus", y, scores, "scores")
    if not y.any():
        return undefined("vus", "the labels hold no anomaly"), float("nan")
    if y.all():
        return undefined(
            "vus", "the labels hold no normal point (the false-positive rate has no denominator)"
        ), float("nan")
    roc, ap = vus_curves(y, scores, window, thresholds)
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
