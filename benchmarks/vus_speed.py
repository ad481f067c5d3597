"""VUS-PR: seconds of clad (clad.metrics.ranges.vus_pr) against TSB-AD's own code, side by side.

TSB-AD is needed here only (``pip install --no-deps TSB-AD==1.5``). Two workloads, as TSB-AD's
``get_metrics`` computes VUS (``generate_curve``, version ``opt``, 250 thresholds):

* the 32 seeded series of ``tests/range_series.py`` (400-8,000 points, buffer widths 20-150);
* one series of 100,000 points with 6 ranges, buffer width 100.

Each clad time is the best of 3 runs (TSB-AD: one run, it takes seconds); both give the same values
(the largest difference is printed). Target: clad at least 10 times faster.

A third workload needs clad only (it runs without TSB-AD): 20,000 points with 40 ranges at buffer
widths 1,000, 2,000 and 5,000 (issue #47 case 9). A width costs one pass over the buffer points,
whatever the number of ranges, so the time grows with the window, not with ranges x window^2 (before:
0.93 s, 2.6 s and 11 s; the ratio to width 1,000 is printed beside (w / 1000)^2, the old growth).
Target: seconds at width 5,000.

    python benchmarks/vus_speed.py
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _machine import describe  # noqa: E402

from clad.metrics.ranges import vus_pr  # noqa: E402
from tests.range_series import PARAMS, make_series  # noqa: E402


def tsb_vus_pr(y, scores, window):
    from TSB_AD.evaluation.basic_metrics import generate_curve

    return float(generate_curve(y.astype(int), scores, window, "opt", 250)[-1])


def timed(fn, repeat=1):
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def long_series(n=100_000, seed=7):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int8)
    for start in np.sort(rng.choice(np.arange(1000, n - 1000, 15000), 6, replace=False)):
        y[start : start + int(rng.integers(50, 800))] = 1
    scores = rng.normal(size=n) + 2.0 * np.convolve(y, np.ones(40) / 40, mode="same")
    return y, scores


def many_ranges(n=20_000, n_ranges=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int8)
    for start in np.sort(rng.choice(np.arange(100, n - 200, 480), n_ranges, replace=False)):
        y[start : start + int(rng.integers(5, 150))] = 1
    return y, rng.normal(size=n) + y


def large_windows() -> None:
    y, scores = many_ranges()
    print(f"{'20,000 points, 40 ranges':34s} {'clad s':>9s} {'/ w=1000':>9s} {'(w/1000)^2':>11s}")
    base = None
    for window in (1000, 2000, 5000):
        seconds, _ = timed(lambda: vus_pr(y, scores, window), repeat=3)
        base = base or seconds
        print(
            f"window {window:<27,d} {seconds:9.3f} {seconds / base:9.1f} {(window / 1000) ** 2:11.0f}"
        )


def main() -> None:
    warnings.simplefilter("ignore")
    print(describe())
    large_windows()
    try:
        import TSB_AD  # noqa: F401
    except ImportError:
        print("TSB-AD is not installed: the comparison with its code is left out")
        return
    series = [
        make_series(s)
        for s in range(PARAMS["first_seed"], PARAMS["first_seed"] + PARAMS["n_series"])
    ]
    t_clad = t_tsb = 0.0
    diff = 0.0
    for y, scores, window in series:
        a, va = timed(lambda: vus_pr(y, scores, window), repeat=3)
        b, vb = timed(lambda: tsb_vus_pr(y, scores, window))
        t_clad, t_tsb, diff = t_clad + a, t_tsb + b, max(diff, abs(va - vb))
    print(f"{'workload':34s} {'clad s':>9s} {'TSB-AD s':>9s} {'ratio':>7s} {'max |diff|':>11s}")
    print(
        f"{len(series)} series, 400-8,000 points      {t_clad:9.3f} {t_tsb:9.3f} {t_tsb / t_clad:7.1f} {diff:11.1e}"
    )
    y, scores = long_series()
    a, va = timed(lambda: vus_pr(y, scores, 100), repeat=3)
    b, vb = timed(lambda: tsb_vus_pr(y, scores, 100))
    print(f"one series, 100,000 points         {a:9.3f} {b:9.3f} {b / a:7.1f} {abs(va - vb):11.1e}")


if __name__ == "__main__":
    main()
