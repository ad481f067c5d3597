"""Affiliation F1 (Huet et al., KDD 2022): the F1 of affiliation precision and recall, exactly,
at one prediction or at every threshold of a grid (the oracle's)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .range_inputs import CHUNK_CELLS, anomaly_ranges, check_series, harmonic_f1, undefined

__all__ = ["affiliation_f1"]


def affiliation_curve(
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
    zones = _zones(y_ranges, scores.size)
    precision, mass = _precision(zones, scores, thresholds)
    recall = np.zeros(thresholds.size)
    for z in range(len(zones.J0)):
        _add_zone_recall(recall, zones, z, scores, thresholds)
    recall /= len(zones.J0)
    return np.where(mass.sum(axis=0) > 0, harmonic_f1(precision, recall), 0.0)


class _Zones(NamedTuple):
    """Each true range ``[J0, J1)`` and its zone ``[E0, E1)`` of ``size`` points."""

    J0: np.ndarray
    J1: np.ndarray
    E0: np.ndarray
    E1: np.ndarray
    size: np.ndarray


def _zones(y_ranges: np.ndarray, n: int) -> _Zones:
    J0 = y_ranges[:, 0].astype(np.int64)
    J1 = y_ranges[:, 1].astype(np.int64) + 1
    mids = (J1[:-1] + J0[1:]) / 2
    E0 = np.concatenate(([0.0], mids))
    E1 = np.concatenate((mids, [float(n)]))
    return _Zones(J0, J1, E0, E1, E1 - E0)


def _precision(zones: _Zones, scores: np.ndarray, thresholds: np.ndarray):
    """Affiliation precision at every threshold, and the flagged mass of every zone (zones, T):
    every half cell's integral and zone, then per zone the sums above each threshold."""
    J0, J1, E0, E1, size = zones
    n, T, Z = scores.size, thresholds.size, len(J0)
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
    return precision, mass


def _add_zone_recall(
    recall: np.ndarray, zones: _Zones, z: int, scores: np.ndarray, thresholds: np.ndarray
) -> None:
    """Add zone ``z``'s recall at every threshold to ``recall``: the quarter points of ``J``, the
    flags inside ``J`` and the nearest flag on each side, a block of thresholds at a time."""
    j0, j1 = int(zones.J0[z]), int(zones.J1[z])
    length = j1 - j0
    grid = j0 + np.arange(4 * length + 1) / 4.0
    # the cells left of J that reach into E (nearest first), and those right of it
    left = scores[int(np.floor(zones.E0[z])) : j0][::-1]
    right = scores[j1 : int(np.ceil(zones.E1[z]))]
    run_left = np.maximum.accumulate(left) if left.size else left
    run_right = np.maximum.accumulate(right) if right.size else right
    step = max(1, (CHUNK_CELLS // 4) // grid.size)
    for lo in range(0, thresholds.size, step):
        t = thresholds[lo : lo + step]
        dist = _inner_distances(scores[j0:j1], t, grid, length)
        if left.size:
            k = np.searchsorted(run_left, t, side="right")  # first left cell above t, from J0 - 1
            end = np.where(k < left.size, j0 - k, -np.inf)  # its right end (j0 - 1 - k) + 1
            dist = np.minimum(dist, grid[None, :] - end[:, None])
        if right.size:
            k = np.searchsorted(run_right, t, side="right")
            start = np.where(k < right.size, j1 + k, np.inf)
            dist = np.minimum(dist, start[:, None] - grid[None, :])
        with np.errstate(invalid="ignore"):
            near = np.minimum(grid + dist, zones.E1[z]) - np.maximum(grid - dist, zones.E0[z])
        f = 1 - near / zones.size[z]
        recall[lo : lo + step] += np.sum((f[:, 1:] + f[:, :-1]) * 0.125, axis=1) / length


def _inner_distances(
    inside: np.ndarray, t: np.ndarray, grid: np.ndarray, length: int
) -> np.ndarray:
    """Each quarter point's distance to the nearest flag inside ``J`` (inf without one), one row
    per threshold of ``t``; ``inside`` holds the scores of ``J``'s cells."""
    flags = inside[None, :] > t[:, None]  # (thresholds, cells of J)
    cell = np.minimum(np.arange(grid.size) // 4, length - 1)
    covered = flags[:, cell]
    on_edge = (np.arange(grid.size) % 4 == 0) & (np.arange(grid.size) > 0)
    covered[:, on_edge] |= flags[:, cell[on_edge] - (np.arange(grid.size)[on_edge] < 4 * length)]
    index = np.arange(grid.size)
    last = np.maximum.accumulate(np.where(covered, index, -1), axis=1)
    nxt = np.minimum.accumulate(np.where(covered, index, grid.size)[:, ::-1], axis=1)[:, ::-1]
    dist = np.full(covered.shape, np.inf)
    has = last >= 0
    dist[has] = (grid[None, :] - grid[np.maximum(last, 0)])[has]
    has = nxt < grid.size
    dist[has] = np.minimum(dist[has], (grid[np.minimum(nxt, grid.size - 1)] - grid[None, :])[has])
    return dist


def affiliation_f1(y, pred) -> float:
    """Affiliation F1 (Huet et al. 2022): the harmonic mean of affiliation precision and recall.
    A prediction without any flag gets 0 (recall 0; TSB-AD returns NaN there).

    >>> affiliation_f1([0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0])
    1.0
    """
    y, pred = check_series("affiliation_f1", y, pred, "predictions")
    if not y.any():
        return undefined("affiliation_f1", "the labels hold no anomaly")
    return float(affiliation_curve(anomaly_ranges(y), pred.astype(np.float64), np.array([0.5]))[0])
