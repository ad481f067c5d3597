"""Harness overhead: clad's run against a hand-written loop doing only the same fit and scoring calls.

Scenario: the pyCLAD NSL-KDD concept file (5 concepts; train 600 x 41, test 800 x 41 each),
concept-aware and concept-incremental, Naive and Cumulative, IsolationForest / LOF (novelty) /
OneClassSVM (scikit-learn, the detectors clad registers as ``iforest``, ``lof``, ``ocsvm``).

The bare loop is what the detectors cost and nothing else: for each training concept it fits a
fresh clone of the estimator (on that concept, or for Cumulative on the concatenation of all so far)
and calls ``score_samples`` once on each test set, keeping the scores. clad's run is
``run_experiment`` (strategy, scenario, evaluator with ROC-AUC into R, continual metrics, the
result object). Both run in this process on the same arrays; repetitions are interleaved after one
warm-up, and medians are compared. R computed from the bare loop's scores must equal clad's R
exactly (the same work). Target: clad <= 1.03 x the bare loop. Because wall times of separate runs
vary with the machine's load, clad's own time is also measured *inside* each clad run: the
estimators' ``fit`` and ``score_samples`` are timed there, and the rest (adapters, strategy,
evaluator and its ROC-AUC, result) is clad's own.

    python benchmarks/harness_overhead.py [--reps 7] [--n-jobs 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's clad, even when another is installed
# one BLAS / OpenMP thread (before numpy loads), in this process and in any child it starts: both
# sides of a comparison then use the cores the same way, and idle BLAS threads do not spin on a
# loaded machine; clad's own parallelism (n_jobs) is what is measured
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.ensemble import IsolationForest  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.neighbors import LocalOutlierFactor  # noqa: E402
from sklearn.svm import OneClassSVM  # noqa: E402

import _nslkdd  # noqa: E402
from _machine import describe, load_now  # noqa: E402
from _timed import CLOCK, TimedDetector, reset  # noqa: E402
from clad.core.experiment import run_experiment  # noqa: E402
from clad.scenarios import ConceptAware, ConceptIncremental  # noqa: E402
from clad.strategies import Cumulative, Naive  # noqa: E402

DETECTORS = {
    "IsolationForest": IsolationForest(random_state=0),
    "LOF": LocalOutlierFactor(novelty=True),
    "OCSVM": OneClassSVM(),
}
SCENARIOS = {"concept_aware": ConceptAware, "concept_incremental": ConceptIncremental}
STRATEGIES = {"naive": Naive, "cumulative": Cumulative}


def bare_loop(ds, estimator, cumulative: bool) -> list[list[np.ndarray]]:
    """Only the detector's own calls: fit, then one score_samples per test set."""
    scores, seen = [], []
    for concept in ds.train:
        if cumulative:
            seen.append(concept.X)
            X = np.concatenate(seen)
        else:
            X = concept.X
        det = clone(estimator).fit(X)
        scores.append([det.score_samples(t.X) for t in ds.test])
    return scores


def clad_run(ds, scenario_cls, strategy_cls, estimator, n_jobs):
    """clad's run; the estimator's own calls are timed inside it (two clock reads per call)."""
    reset()
    return run_experiment(
        ds, scenario_cls(), strategy_cls(TimedDetector(estimator)), ("roc_auc",), n_jobs=n_jobs
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument(
        "--n-jobs",
        type=int,
        default=1,
        help="clad's scoring threads (1: the same single thread as the loop)",
    )
    ap.add_argument("--data", default=None)
    ap.add_argument("--detectors", default=",".join(DETECTORS))
    args = ap.parse_args(argv)
    print(describe())
    ds = _nslkdd.load(args.data)
    print(
        f"data: {ds}; reps {args.reps} (interleaved, after one warm-up), medians; clad n_jobs={args.n_jobs}"
    )
    print(
        f"{'scenario':20s} {'strategy':10s} {'detector':16s} {'bare s':>8s} {'clad s':>8s} {'ratio':>6s} {'own ms':>8s} {'own %':>7s}  R equal"
    )
    tot_bare = tot_clad = tot_own = 0.0
    for sc_name, sc in SCENARIOS.items():
        for st_name, st in STRATEGIES.items():
            for det_name in args.detectors.split(","):
                est = DETECTORS[det_name]
                cum = st_name == "cumulative"
                bare_loop(ds, est, cum)  # warm-up
                clad_run(ds, sc, st, est, args.n_jobs)
                tb, tc, inside = [], [], []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    scores = bare_loop(ds, est, cum)
                    tb.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    res = clad_run(ds, sc, st, est, args.n_jobs)
                    tc.append(time.perf_counter() - t0)
                    inside.append(CLOCK["fit"] + CLOCK["score"])
                # the same work: R from the bare loop's scores (higher = more anomalous) equals clad's
                R = np.array(
                    [[roc_auc_score(t.y, -s) for t, s in zip(ds.test, row)] for row in scores]
                )
                same = bool(np.array_equal(R, res.R["roc_auc"]))
                mb, mc = statistics.median(tb), statistics.median(tc)
                own = statistics.median(c - i for c, i in zip(tc, inside))
                tot_bare += mb
                tot_clad += mc
                tot_own += own
                print(
                    f"{sc_name:20s} {st_name:10s} {det_name:16s} {mb:8.3f} {mc:8.3f} {mc / mb:6.3f} "
                    f"{1000 * own:8.1f} {100 * own / mc:6.2f}%  {same}",
                    flush=True,
                )
    ratio = tot_clad / tot_bare
    verdict = "meets" if ratio <= 1.03 else "MISSES"
    print(
        f"total of medians: bare {tot_bare:.3f} s, clad {tot_clad:.3f} s; "
        f"overhead ratio clad / bare = {ratio:.3f} (target <= 1.03): {verdict}"
    )
    print(
        f"clad's own time inside its runs (total minus the estimators' fit and score_samples, measured in "
        f"the same run, so not affected by load between runs): {tot_own:.3f} s of {tot_clad:.3f} s = "
        f"{100 * tot_own / tot_clad:.2f}%, i.e. clad / floor = {tot_clad / (tot_clad - tot_own):.3f}"
    )
    print(f"load average at the end: {load_now()}")


if __name__ == "__main__":
    main()
