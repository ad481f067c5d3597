"""Seeded random (labels, scores) series for checking the range metrics against TSB-AD.

``benchmarks/tsb_ad_reference.py`` computes TSB-AD's values on these series and stores them (with
the generation parameters, not the series) in ``tests/data/tsb_ad_reference.json``;
``tests/metrics/test_range_metrics.py`` regenerates the series and compares clad's values.
"""

from __future__ import annotations

import numpy as np

#: generation parameters stored beside the values (a change here makes the stored values stale)
PARAMS = {
    "n_series": 32,
    "length": [400, 8000],
    "ranges": [1, 6],
    "range_length": [1, 300],
    "windows": [20, 50, 100, 150],
    "first_seed": 0,
}


def make_series(seed: int, params: dict = PARAMS) -> tuple[np.ndarray, np.ndarray, int]:
    """Labels, scores and a VUS buffer width for one seed: 1-6 ranges of 1-300 points, apart
    from each other and from both ends of the series; scores of noise with bumps near some
    ranges (early, late, partial), rounded on every third seed so that scores tie."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(params["length"][0], params["length"][1] + 1))
    k = int(rng.integers(params["ranges"][0], params["ranges"][1] + 1))
    y = np.zeros(n, dtype=np.int8)
    lo, hi = params["range_length"]
    placed = 0
    for _ in range(200):
        if placed == k:
            break
        length = int(rng.integers(lo, min(hi, n // (2 * k)) + 1))
        start = int(rng.integers(2, n - length - 2))
        if y[start - 1 : start + length + 1].any():
            continue
        y[start : start + length] = 1
        placed += 1
    scores = rng.normal(size=n)
    for a in np.flatnonzero(np.diff(np.concatenate(([0], y))) == 1):
        b = a + int(np.argmin(y[a:] == 1)) if not y[a:].all() else n
        shift = int(rng.integers(-30, 31))
        lo_b, hi_b = max(0, a + shift), min(n, b + shift)
        if lo_b < hi_b and rng.random() < 0.8:
            scores[lo_b:hi_b] += rng.uniform(0.5, 3.0)
    if seed % 3 == 0:
        scores = np.round(scores, 1)
    window = params["windows"][seed % len(params["windows"])]
    return y, scores, int(window)


#: series with ranges at both ends (where TSB-AD's point adjustment and event extraction have their
#: defects, so only the other metrics are compared on them)
EDGE_PARAMS = {"n_series": 8, "first_seed": 100, "length": [300, 1500], "windows": [10, 50, 100]}
EDGE_METRICS = (
    "vus_roc",
    "vus_pr",
    "range_f1",
    "range_f1_oracle",
    "affiliation_f1",
    "affiliation_f1_oracle",
)


def make_edge_series(seed: int, params: dict = EDGE_PARAMS) -> tuple[np.ndarray, np.ndarray, int]:
    """Labels, scores and a buffer width for one seed: a range from the first point, one to the
    last point (1-40 points each) and one in between; noisy scores lifted on the anomalies."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(params["length"][0], params["length"][1] + 1))
    y = np.zeros(n, dtype=np.int8)
    y[: int(rng.integers(1, 41))] = 1
    y[n - int(rng.integers(1, 41)) :] = 1
    start = int(rng.integers(100, n - 150))
    y[start : start + int(rng.integers(1, 51))] = 1
    scores = rng.normal(size=n) + y * rng.uniform(0, 2)
    window = params["windows"][seed % len(params["windows"])]
    return y, scores, int(window)


def threshold_of(scores: np.ndarray) -> float:
    """The detector threshold of the reference: mean + 2 standard deviations of the scores."""
    return float(np.mean(scores) + 2 * np.std(scores))


#: series where TSB-AD's code has a defect (see clad.metrics.ranges): name -> (labels, predictions)
DEFECT_CASES = {
    # a range from the first point, flagged later: point adjustment never reaches index 0
    "pa_f1_first_point": (
        [1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0],
        [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0],
    ),
    # a one-point range at the last point, flagged: TSB-AD's events end it one point early
    "event_f1_last_point": (
        [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1],
        [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ),
}
