"""Scaling with the number of concepts: where the time of a run goes for N = 5, 10, 20, 40.

Synthetic concepts of equal size (``make_synthetic``: 500 training and 400 test rows of 8 features
each), concept-incremental, an IsolationForest(n_estimators=50). A run makes N fits and N x N
scoring calls (every test concept after every step), so the detectors' scoring grows as N^2.
The detector is wrapped so that the estimator's own ``fit`` and ``score_samples`` are timed
exactly; clad's own overhead = total - fit - score (adapters, strategy, the evaluator's metrics,
the result). It should stay a small, constant cost per scoring call: no super-linear term.

    python benchmarks/scaling.py [--sizes 5,10,20,40] [--strategy naive|cumulative] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's clad, even when another is installed
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from sklearn.ensemble import IsolationForest  # noqa: E402

from _machine import describe, load_now  # noqa: E402
from _timed import CLOCK, TimedDetector, reset  # noqa: E402
from clad.datasets import make_synthetic  # noqa: E402
from clad.core.experiment import run_experiment  # noqa: E402
from clad.scenarios import ConceptIncremental  # noqa: E402
from clad.strategies import Cumulative, Naive  # noqa: E402


def one_run(ds, strategy_cls):
    reset()
    det = TimedDetector(IsolationForest(n_estimators=50, random_state=0))
    t0 = time.perf_counter()
    run_experiment(ds, ConceptIncremental(), strategy_cls(det), ("roc_auc",))
    total = time.perf_counter() - t0
    return total, CLOCK["fit"], CLOCK["score"], CLOCK["fits"], CLOCK["scores"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5,10,20,40")
    ap.add_argument("--strategy", choices=("naive", "cumulative"), default="naive")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    print(describe())
    strategy_cls = {"naive": Naive, "cumulative": Cumulative}[args.strategy]
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"concept_incremental / {args.strategy} / IsolationForest(n_estimators=50); 500 train + 400 test rows "
        f"x 8 features per concept; median of {args.reps} runs (after one warm-up)"
    )
    print(
        f"{'N':>3s} {'fits':>5s} {'scores':>7s} {'total s':>8s} {'fit s':>7s} {'score s':>8s} {'score %':>7s} "
        f"{'overhead s':>10s} {'overhead %':>10s} {'ms / scoring call':>17s}"
    )
    rows = []
    for n in sizes:
        ds = make_synthetic(n_concepts=n, n_train=500, n_test=400, random_state=0)
        one_run(ds, strategy_cls)  # warm-up
        runs = [one_run(ds, strategy_cls) for _ in range(args.reps)]
        total, fit, score = (statistics.median(r[i] for r in runs) for i in range(3))
        fits, scores = runs[0][3], runs[0][4]
        over = total - fit - score
        rows.append((n, over / scores))
        print(
            f"{n:3d} {fits:5d} {scores:7d} {total:8.3f} {fit:7.3f} {score:8.3f} {100 * score / total:6.1f}% "
            f"{over:10.3f} {100 * over / total:9.1f}% {1000 * over / scores:17.3f}",
            flush=True,
        )
    growth = rows[-1][1] / rows[0][1]
    print(
        f"clad's overhead per scoring call at N={rows[-1][0]} is {growth:.2f} x that at N={rows[0][0]} "
        f"(1 = linear in the calls; a super-linear overhead would grow with N)"
    )
    print(f"load average at the end: {load_now()}")


if __name__ == "__main__":
    main()
