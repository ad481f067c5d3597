"""How fast the command line starts: ``clad --help`` wall time, and ``clad run --jobs 2``'s time to
its first finished run (process start to the earliest ``finished`` stamp in results.sqlite), on a
small grid (synthetic data, three PyOD / scikit-learn detectors, one seed).

Each source tree given is used in turn (``PYTHONPATH=TREE``, the command run in it), alternating
``--repeat`` times, and the medians are printed: this machine's speed drifts from one run to the
next, so trees are compared only within one invocation.

    python benchmarks/cli_startup.py [--trees /path/to/before .] [--repeat 5]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SPEC = """name = "startup"
seeds = 1
strategies = ["naive"]
detectors = ["iforest", "lof", "ecod"]

[[datasets]]
name = "synthetic"
n_concepts = 3
n_features = 8
n_train = 300
n_test = 200

[[scenarios]]
name = "concept_aware"
"""


def _env(tree: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    return env


def help_seconds(tree: str) -> float:
    """Wall time of ``python -m clad.cli --help`` in ``tree``."""
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "clad.cli", "--help"],
        cwd=tree,
        env=_env(tree),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def first_run_seconds(tree: str, spec: str, out: str) -> float:
    """Seconds from starting ``clad run SPEC --jobs 2`` in ``tree`` to its first finished run."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.time()
    subprocess.run(
        [sys.executable, "-m", "clad.cli", "run", spec, "--out", out, "--jobs", "2", "--quiet"],
        cwd=tree,
        env=_env(tree),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    con = sqlite3.connect(os.path.join(out, "results.sqlite"))
    try:
        (first,) = con.execute("SELECT MIN(finished) FROM runs").fetchone()
    finally:
        con.close()
    stamp = datetime.datetime.fromisoformat(first.replace("Z", "+00:00")).timestamp()
    return stamp - start


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs="+", default=[ROOT])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    trees = [os.path.abspath(t) for t in args.trees]
    helps: dict[str, list[float]] = {t: [] for t in trees}
    firsts: dict[str, list[float]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "startup.toml")
        with open(spec, "w") as f:
            f.write(SPEC)
        for _ in range(args.repeat):
            for tree in trees:
                helps[tree].append(help_seconds(tree))
                firsts[tree].append(first_run_seconds(tree, spec, os.path.join(tmp, "out")))
    for tree in trees:
        print(
            f"{tree}: clad --help {statistics.median(helps[tree]):.3f} s; "
            f"clad run --jobs 2, first run finished after {statistics.median(firsts[tree]):.2f} s "
            f"(median of {args.repeat}; each: {', '.join(f'{t:.2f}' for t in firsts[tree])})"
        )


if __name__ == "__main__":
    main()
