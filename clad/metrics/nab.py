"""The NAB score (Numenta Anomaly Benchmark) as base metrics, and its corpus-level normalisation.

NAB scores *detections* (rows whose score is at least a threshold) against label *windows* (the
runs of 1 in the labels), after a probationary period of ``min(floor(0.15 n), 750)`` rows whose
detections and windows are not scored:

* a window with a detection earns ``tp_weight`` times ``S(p) / S(-1)`` for its earliest detection,
  where ``S(p) = 2 sigmoid(-5 p) - 1`` and ``p = -(right - i + 1) / width`` is the detection's
  place in the window (-1 at its left edge, near 0 at its right edge); a window without one costs
  ``fn_weight``;
* a detection outside every window costs ``fp_weight`` times ``-S(d)``, ``d`` its distance past
  the preceding window's right edge in widths of that window less one (``S = -1`` with no
  preceding window or ``d > 3``).

The weights are NAB's profiles (:data:`PROFILES`): ``standard`` (TP 1, FP 0.11, FN 1),
``reward_low_FP_rate`` (FP 0.22) and ``reward_low_FN_rate`` (FN 2). The raw score of a test concept
is additive, so ``nab_standard``, ``nab_low_fp`` and ``nab_low_fn`` are declared
``additive``; their parameter ``threshold`` is the detection threshold (NAB's tuned one per
detector and profile). NAB's scoreboard pools the raw scores of all files and normalises once,
``100 (raw - null) / (perfect - null)``, with the null detector's raw score (``-fn_weight`` per
scored window) and the perfect one (``tp_weight`` per window): :func:`nab_normalized`.

>>> y = np.zeros(2000, dtype=int); y[1000:1100] = 1        # one window of 100 rows, probation 300
>>> s = np.zeros(2000); s[1000] = 1.0                       # detected at its first row
>>> round(nab_raw(y, s, threshold=1.0), 4)
1.0
>>> s[1000], s[1099] = 0.0, 1.0                             # detected at its last row only
>>> round(nab_raw(y, s, threshold=1.0), 4)
0.0253

"""

from __future__ import annotations

import math

import numpy as np

from .base import BaseMetric, register_base_metric

__all__ = [
    "nab_raw",
    "nab_normalized",
    "nab_record",
    "NAB_METRICS",
    "scaled_sigmoid",
    "probation_length",
    "label_windows",
    "PROFILES",
    "NAB_STANDARD",
    "NAB_LOW_FP",
    "NAB_LOW_FN",
]

#: NAB's application profiles: (tp, fp, fn) weights
PROFILES = {
    "standard": (1.0, 0.11, 1.0),
    "reward_low_FP_rate": (1.0, 0.22, 1.0),
    "reward_low_FN_rate": (1.0, 0.11, 2.0),
}


def scaled_sigmoid(p: float) -> float:
    """``2 sigmoid(-5 p) - 1``, and -1 beyond ``p > 3``."""
    return -1.0 if p > 3.0 else 2.0 / (1.0 + math.exp(5.0 * p)) - 1.0


def probation_length(n: int, share: float = 0.15) -> float:
    """NAB's probationary rows of an ``n``-row series: ``min(floor(share n), share * 5000)``.

    >>> probation_length(4032), probation_length(22695)
    (604, 750.0)
    """
    return min(math.floor(share * n), share * 5000)


def label_windows(y) -> np.ndarray:
    """The windows of labels ``y``: ``[[first, last], ...]`` of each run of 1 (inclusive).

    >>> label_windows([0, 1, 1, 0, 1]).tolist()
    [[1, 2], [4, 4]]
    """
    d = np.diff(np.concatenate([[0], np.asarray(y, dtype=np.int8), [0]]))
    return np.column_stack([np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1])


def nab_raw(y, scores, threshold: float = 0.5, profile: str = "standard") -> float:
    """The raw NAB score of one series: labels ``y`` (windows), ``scores >= threshold`` detections."""
    tp_w, fp_w, fn_w = PROFILES[profile]
    y = np.asarray(y)
    detected = np.asarray(scores, dtype=np.float64) >= threshold
    probation = probation_length(y.size)
    windows = label_windows(y)
    max_tp = scaled_sigmoid(-1.0)
    total = 0.0
    for lo, hi in windows:
        if hi < probation:
            continue  # wholly probationary: not scored
        width = float(hi - lo + 1)
        hits = np.flatnonzero(detected[lo : hi + 1]) + lo
        hits = hits[hits >= probation]
        if hits.size:
            total += max(-fn_w, scaled_sigmoid(-(hi - hits[0] + 1) / width) * tp_w / max_tp)
        else:
            total -= fn_w
    inside = np.zeros(y.size, dtype=bool)
    for lo, hi in windows:
        inside[lo : hi + 1] = True
    ends, widths = windows[:, 1], windows[:, 1] - windows[:, 0] + 1
    for i in np.flatnonzero(detected & ~inside):
        if i < probation:
            continue
        k = np.searchsorted(ends, i) - 1  # the preceding window
        if k < 0:
            total += -1.0 * fp_w
        else:
            total += (
                scaled_sigmoid(abs(int(ends[k]) - int(i)) / float(max(widths[k] - 1, 1))) * fp_w
            )
    return float(total)


def nab_normalized(
    raw: float, windows: int, scored_windows: int | None = None, profile: str = "standard"
) -> float:
    """``100 (raw - null) / (perfect - null)``: the perfect score is ``tp_weight`` per window, the
    null detector's ``-fn_weight`` per scored window (``scored_windows``, default ``windows``)."""
    tp_w, _, fn_w = PROFILES[profile]
    null = -fn_w * (windows if scored_windows is None else scored_windows)
    perfect = tp_w * windows
    return float(100 * (raw - null) / (perfect - null)) if perfect != null else float("nan")


def _threshold(metric, key, value):
    from ..errors import CladValueError

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CladValueError(
            f"base metric {metric}: {key}={value!r}; expected a finite number (rows scoring at least "
            "this are detections)"
        )
    return float(value)


def _declare(name: str, profile: str, label: str) -> BaseMetric:
    def metric(y, scores, threshold: float = 0.5) -> float:
        return nab_raw(y, scores, threshold, profile)

    def every_row(y, threshold: float = 0.5) -> float:  # a scoreless detector detects every row
        return nab_raw(y, np.ones(np.size(y)), -np.inf, profile)

    metric.__doc__ = f"Raw NAB score, profile {profile} (scores >= threshold are detections)."
    return register_base_metric(
        BaseMetric(
            name,
            metric,
            label,
            input="scores",
            bounds=(-np.inf, np.inf),
            chance=every_row,
            params={"threshold": _threshold},
            additive=True,
        )
    )


NAB_STANDARD = _declare("nab_standard", "standard", "raw NAB score (standard profile)")
NAB_LOW_FP = _declare("nab_low_fp", "reward_low_FP_rate", "raw NAB score (reward low FP rate)")
NAB_LOW_FN = _declare("nab_low_fn", "reward_low_FN_rate", "raw NAB score (reward low FN rate)")


#: the NAB base metrics and their profiles
NAB_METRICS = {
    "nab_standard": "standard",
    "nab_low_fp": "reward_low_FP_rate",
    "nab_low_fn": "reward_low_FN_rate",
}


def nab_record(R, steps, test_labels) -> dict:
    """The scoreboard's NAB score of a run for each NAB base metric in ``R``: the raw scores of the
    diagonal (each test concept right after its own step) and of the last row summed, normalised
    over the windows of those test concepts (``test_labels``: name -> labels); a run records it
    (``extras["nab"]``).

    >>> y = np.zeros(2000, dtype=int); y[1000:1100] = 1
    >>> nab_record({"nab_standard": [[1.0]]}, ["a"], {"a": y})["nab_standard"]
    {'diagonal': 100.0, 'last_row': 100.0}
    """
    names = list(test_labels)
    windows = {n: label_windows(y) for n, y in test_labels.items()}
    scored = {
        n: int(np.sum(w[:, 1] >= probation_length(np.size(test_labels[n]))))
        for n, w in windows.items()
    }
    out = {}
    for metric, profile in NAB_METRICS.items():
        if metric not in R:
            continue
        M = np.asarray(R[metric], dtype=np.float64)
        diag = [(M[i, names.index(s)], s) for i, s in enumerate(steps) if s in names]
        parts = {"diagonal": diag, "last_row": [(M[-1, j], n) for j, n in enumerate(names)]}
        out[metric] = {
            k: nab_normalized(
                float(np.nansum([v for v, _ in cells])),
                sum(len(windows[n]) for _, n in cells),
                sum(scored[n] for _, n in cells),
                profile,
            )
            for k, cells in parts.items()
        }
    return out
