"""Wall-time speed-up of a grid with 2 worker processes over 1 (sequential).

    python benchmarks/grid_speedup.py [--runs 16] [--jobs 2]

The grid: the synthetic dataset (4 concepts, 3000 training rows each), IsolationForest with 300
trees, the cumulative strategy, in the concept-incremental scenario, over ``--runs`` seeds: each run
is CPU-bound and takes a few seconds, so starting the worker processes is a small part of the
time. Both executors' wall times include everything (for --jobs N: starting the workers). Also
checks that both give bit-identical R, and prints the load average and the speed-up that plain
CPU-bound processes get at the same moment (the machine may be shared: that is the ceiling).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the clad of this checkout

from clad.engine.executors import execute_grid  # noqa: E402
from clad.engine.settings import Execution  # noqa: E402
from clad.engine.spec import parse_spec  # noqa: E402


def grid(runs: int):
    return parse_spec(
        {
            "name": "speedup",
            "seeds": runs,
            "strategies": ["cumulative"],
            "scenarios": ["concept_incremental"],
            "datasets": [
                {
                    "name": "synthetic",
                    "n_concepts": 4,
                    "n_features": 16,
                    "n_train": 3000,
                    "n_test": 1500,
                }
            ],
            "detectors": [{"name": "iforest", "n_estimators": 300}],
        }
    ).configs


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def machine_capacity(jobs: int, n: int = 20_000_000) -> float:
    """Speed-up of ``jobs`` plain CPU-bound processes over one at this moment (ideal: ``jobs``): the
    best any executor can do while other programs share the cores."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(jobs) as pool:
        pool.map(_burn, [1] * jobs)  # workers started
        t0 = time.perf_counter()
        for _ in range(jobs):
            _burn(n)
        solo = time.perf_counter() - t0
        t0 = time.perf_counter()
        pool.map(_burn, [n] * jobs)
        parallel = time.perf_counter() - t0
    return solo / parallel


def timed(configs, jobs):
    t0 = time.perf_counter()
    results = {
        e.config.run_id: e.result
        for e in execute_grid(configs, Execution(jobs=jobs))
        if e.kind == "finished"
    }
    wall = time.perf_counter() - t0
    bad = [r.error for r in results.values() if not r.ok]
    if bad:
        raise SystemExit(f"runs failed:\n{bad[0]}")
    return wall, results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    configs = grid(args.runs)
    load_before = os.getloadavg()
    cap_before = machine_capacity(args.jobs)
    t1, r1 = timed(configs, 1)
    tn, rn = timed(configs, args.jobs)
    cap_after = machine_capacity(args.jobs)
    load_after = os.getloadavg()
    same = all(np.array_equal(r1[k].R[m], rn[k].R[m], equal_nan=True) for k in r1 for m in r1[k].R)
    per_run = np.mean([r.timings["total"] for r in r1.values()])
    per_run_n = np.mean([r.timings["total"] for r in rn.values()])
    print(
        f"runs: {len(configs)}  (mean time of a run: {per_run:.2f} s sequential, {per_run_n:.2f} s with "
        f"--jobs {args.jobs}; a longer run in workers means the cores were busy)"
    )
    print(f"cpu count: {os.cpu_count()}, usable by this process: {len(os.sched_getaffinity(0))}")
    print(f"--jobs 1: {t1:.1f} s wall")
    print(f"--jobs {args.jobs}: {tn:.1f} s wall")
    print(f"speed-up (jobs 1 / jobs {args.jobs}): {t1 / tn:.2f}")
    print(f"identical R: {same}")
    print(
        f"machine capacity now ({args.jobs} plain CPU-bound processes over 1; ideal {args.jobs}): "
        f"{cap_before:.2f} before, {cap_after:.2f} after"
    )
    print(
        "load average (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f}".format(
            *load_before, *load_after
        )
    )


if __name__ == "__main__":
    main()
