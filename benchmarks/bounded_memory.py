"""Peak memory (tracemalloc: numpy's allocations are traced) of the computations that once grew
without bound: VUS-PR over wide buffer windows on a series with many ranges (its buffer weights
were tiled per range: 9.3 GiB for window=5000 on 20,000 points with 100 ranges) and the exact
Friedman test (k! arrangements of a block were held at once: 5.4 GB for one block of 11 methods).

    python benchmarks/bounded_memory.py
"""

import time
import tracemalloc

import numpy as np

from clad.metrics import ranges
from clad.report.exact import friedman_test


def peak(fn, *args, **kwargs) -> tuple[float, float]:
    """(peak MB, seconds) of one call."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        fn(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1] / 1e6, time.perf_counter() - start
    finally:
        tracemalloc.stop()


def main() -> None:
    y = np.zeros(20_000, dtype=int)
    for a in np.linspace(0, 19_900, 100).astype(int):
        y[a : a + 20] = 1
    scores = np.random.default_rng(0).normal(size=y.size) + y
    for window in (100, 1000, 5000):
        mb, s = peak(ranges.vus_pr, y, scores, window=window)
        print(
            f"vus_pr window={window:5d}, 20,000 points, 100 ranges: peak {mb:6.0f} MB, {s:5.1f} s"
        )
    for ranks, what in (
        (np.arange(1.0, 12.0)[None, :], "1 block x 11 methods"),
        (np.array([[1, 2, 3, 4, 5, 6, 7], [2, 1, 3, 5, 4, 7, 6]], float), "2 blocks x 7 methods"),
    ):
        mb, s = peak(friedman_test, ranks)
        print(f"exact Friedman, {what}: peak {mb:6.1f} MB, {s:5.2f} s")


if __name__ == "__main__":
    main()
