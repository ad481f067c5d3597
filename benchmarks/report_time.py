"""Time of ``clad report`` on the quickstart's results, optionally against another checkout.

    python benchmarks/report_time.py [RESULTS_DIR] [--baseline CHECKOUT] [--repeat 3]

Without RESULTS_DIR the quickstart spec is run first into a temporary folder. Each repetition runs
``clad report RESULTS_DIR --out TMP`` in a fresh process (imports included, as a user would) with
this checkout's clad and, with ``--baseline``, with the clad of another checkout (e.g. a worktree
of an earlier commit: ``git worktree add /tmp/before COMMIT``), the two interleaved so that both
see the same machine load. Prints wall and CPU seconds (user + system of the child) per
repetition, the medians, the number of figures, and the baseline / this ratio of the CPU medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from benchmarks._machine import describe, load_now  # noqa: E402


def _report(checkout: Path, results: Path, out: Path) -> tuple[float, float, int]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "clad.cli", "report", str(results), "--out", str(out)],
        env=env,
        cwd=out.parent,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, len(list((out / "figures").glob("*.png")))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "results", nargs="?", help="results folder of `clad run` (default: run the quickstart)"
    )
    p.add_argument("--baseline", help="another checkout of clad to compare with")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(describe())
    tmp = Path(tempfile.mkdtemp(prefix="clad-report-time-"))
    results = Path(args.results) if args.results else tmp / "quickstart"
    if not args.results:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "clad.cli",
                "run",
                str(HERE / "scenarios" / "quickstart.toml"),
                "--out",
                str(results),
                "--quiet",
            ],
            env={**os.environ, "PYTHONPATH": str(HERE)},
            cwd=tmp,
            check=True,
        )
    sides = {"this": HERE} | ({"baseline": Path(args.baseline).resolve()} if args.baseline else {})
    times: dict[str, list[tuple[float, float, int]]] = {k: [] for k in sides}
    for rep in range(args.repeat):
        for name, checkout in sides.items():
            wall, cpu, n = _report(checkout, results, tmp / f"report-{name}-{rep}")
            times[name].append((wall, cpu, n))
            print(
                f"{name:9s} repetition {rep + 1}: wall {wall:6.2f} s, cpu {cpu:6.2f} s, {n} figures "
                f"(load {load_now()})"
            )
    med = {
        k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v))
        for k, v in times.items()
    }
    for name, (wall, cpu) in med.items():
        print(f"{name:9s} median: wall {wall:6.2f} s, cpu {cpu:6.2f} s")
    if "baseline" in med:
        print(f"baseline / this (cpu medians): {med['baseline'][1] / med['this'][1]:.2f}")


if __name__ == "__main__":
    main()
