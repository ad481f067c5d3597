"""What SLURM costs on one node: the same grid with ``--jobs 2`` and with ``--slurm`` (chunked).

    python benchmarks/slurm_overhead.py [--runs 200] [--runs-per-job 100] [--max-jobs 2] [--slurm-first]

Starts a one-node SLURM cluster on this machine (:class:`clad.engine.slurm_local.LocalSlurm`:
needs root and Debian's slurm-wlm and munge), then runs the same grid — the synthetic dataset (2
concepts of 1,500 rows), IsolationForest with 100 trees, the cumulative strategy, ``--runs``
seeds — into two fresh results folders with :func:`~clad.engine.benchmark.run_spec`: 2 worker
processes, and SLURM jobs of ``--runs-per-job`` runs (0: clad's default chunk), at most
``--max-jobs`` at once (the node has as many CPUs as ``--jobs 2`` uses); ``--slurm-first`` swaps
the order (on a shared machine the load moves between the two). Each wall time covers the whole command (for SLURM: sbatch,
the queue, each job's Python start-up and imports, the folding of the results, results.json).
Prints both, their ratio (target: SLURM <= 1.5 x ``--jobs 2``), the jobs submitted, and checks
that R is bit-identical. On a shared machine the figures move with the load (printed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the clad of this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import describe, load_now  # noqa: E402

from clad.engine.benchmark import run_spec  # noqa: E402
from clad.engine.slurm import SUBMITTED_META  # noqa: E402
from clad.engine.slurm_config import SlurmConfig  # noqa: E402
from clad.results.store import ResultStore  # noqa: E402


def grid(runs: int) -> dict:
    return {
        "name": "slurm-overhead",
        "seeds": runs,
        "strategies": ["cumulative"],
        "scenarios": ["concept_incremental"],
        "datasets": [
            {"name": "synthetic", "n_concepts": 2, "n_features": 8, "n_train": 1500, "n_test": 500}
        ],
        "detectors": [{"name": "iforest", "n_estimators": 100}],
    }


def timed(spec: dict, out: Path, **how):
    t0 = time.perf_counter()
    done = run_spec(spec, out, **how)
    wall = time.perf_counter() - t0
    if done.n_failed or done.n_ok != done.n_total:
        raise SystemExit(f"runs failed: {[r.error for r in done.runs if not r.ok][:1]}")
    return wall, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--runs-per-job", type=int, default=100)
    ap.add_argument("--max-jobs", type=int, default=2)
    ap.add_argument("--slurm-first", action="store_true")
    args = ap.parse_args()
    from clad.engine.slurm_local import LocalSlurm, unavailable

    why = unavailable()
    if why:
        raise SystemExit(f"cannot start a one-node SLURM cluster here: {why}")
    print(describe())
    spec = grid(args.runs)
    with tempfile.TemporaryDirectory() as tmp, LocalSlurm() as cluster:
        print(f"one-node SLURM cluster: {cluster.conf}")
        load = [load_now()]
        slurm = SlurmConfig(
            runs_per_job=args.runs_per_job or None, max_jobs=args.max_jobs, poll_seconds=1
        )
        for mode in ["slurm", "jobs"] if args.slurm_first else ["jobs", "slurm"]:
            if mode == "jobs":
                jobs_wall, local = timed(spec, Path(tmp) / "jobs2", jobs=2)
            else:
                slurm_wall, on_slurm = timed(spec, Path(tmp) / "slurm", slurm=slurm)
            load.append(load_now())
        with ResultStore(Path(tmp) / "slurm", create=False, readonly=True) as store:
            submitted = store.get_meta(SUBMITTED_META)
    same = all(
        np.array_equal(a.R[m], b.R[m], equal_nan=True)
        for a, b in zip(
            sorted(local.runs, key=lambda r: r.run_id),
            sorted(on_slurm.runs, key=lambda r: r.run_id),
        )
        for m in a.R
    )
    print(f"\n{args.runs} runs (IsolationForest, 100 trees; 2 concepts of 1,500 rows)")
    print(f"  --jobs 2:                                   {jobs_wall:7.1f} s")
    chunk = f"{args.runs_per_job} runs a job" if args.runs_per_job else "default chunk"
    print(
        f"  --slurm ({chunk}, {args.max_jobs} at once): {slurm_wall:7.1f} s   "
        f"{submitted['jobs']} jobs in {submitted['sbatch_calls']} sbatch call(s)"
    )
    print(f"  ratio --slurm / --jobs 2: {slurm_wall / jobs_wall:.2f} (target <= 1.5)")
    print(f"  R bit-identical: {same}")
    print(
        f"  order: {'--slurm first' if args.slurm_first else '--jobs 2 first'}; load average (1, 5, 15 min) "
        f"before, between, after: {' | '.join(load)}"
    )


if __name__ == "__main__":
    main()
