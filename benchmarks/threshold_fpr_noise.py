"""Where the spread of the realised false-positive rate under ``threshold = {fpr = x}`` comes from,
on the quickstart's data and detectors (``benchmarks/threshold_fpr.toml``), one training concept
at a time with the ``naive`` strategy, over many calibration draws:

    python benchmarks/threshold_fpr_noise.py --draws 60

For each detector, concept and draw (a calibration split drawn as clad draws it, the detector fitted
on the rest, the threshold set by clad's rule, ``clad.core.thresholds.fpr_threshold``) it records the
realised rate on the concept's normal test rows and the *true* rate of that threshold: the share of
``--fresh`` new normal rows of the same concept above it (the generator's concepts do not depend on
its row counts, so ``make_synthetic(n_test=...)`` draws new rows of the same Gaussians). Then:

* calibration noise: the spread of the true rate over draws (the noise model:
  ``fpr (1 - fpr) / (m + 2)`` for ``m`` calibration rows);
* test noise: the spread of realised minus true (the model: ``fpr (1 - fpr) / n`` for ``n`` rows);
* bias: the mean true rate minus the target (the quantile rule, and a score that depends on its batch);
* train/test difference: the true rate of the threshold on new *training-like* rows minus that on
  new test-like rows (the synthetic concepts draw both from one Gaussian);
* the share of draws within the binomial 95 % interval of the target for ``n`` rows, beside the
  share the noise model predicts (``P(|Z| < 1.96 / sqrt(1 + n/m))``, and exactly: calibration rows
  exchangeable with the test rows, simulated), for each calibration size of ``--calibration``.

A score of ECOD depends on the rows scored with it, so its true rate is measured on new normal rows
scored in batches composed as its test concept is (its normal rows replaced, its anomalies kept),
and its calibration rows are scored in one batch with the test rows, as clad scores them.
Prints one line per measurement; no assertion.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.stats import binom, norm

from clad.core.thresholds import batch_dependent, calibration_seed, calibration_split, fpr_threshold
from clad.datasets import make_synthetic
from clad.detectors import make_detector
from clad.strategies import Naive

DETECTORS = {"iforest": {"n_estimators": 100}, "lof": {"n_neighbors": 20}, "ecod": {}}


def interval(n: int, fpr: float) -> tuple[float, float]:
    return float(binom.ppf(0.025, n, fpr) / n), float(binom.ppf(0.975, n, fpr) / n)


def exchangeable_coverage(m: int, n: int, fpr: float, sims: int = 20_000, seed: int = 0) -> float:
    """The share of cells within the binomial interval when calibration and test rows are
    exchangeable (uniform scores: a threshold t is exceeded with probability 1 - t)."""
    lo, hi = interval(n, fpr)
    rng = np.random.default_rng(seed)
    p = 1.0 - np.array([fpr_threshold(row, fpr) for row in rng.random((sims, m))])
    k_lo, k_hi = round(lo * n), round(hi * n)
    return float(np.mean(binom.cdf(k_hi, n, p) - binom.cdf(k_lo - 1, n, p)))


def batched(strategy, rows, pad):
    """Scores of ``rows`` scored in batches of 360 padded with ``pad`` (the test concept's 40
    anomalies): the composition of a test batch."""
    per = 360
    out = []
    for k in range(0, len(rows), per):
        chunk = rows[k:k + per]
        out.append(np.asarray(strategy.score(np.concatenate([chunk, pad])).scores)[:len(chunk)])
    return np.concatenate(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--fresh", type=int, default=7200, help="new normal rows per concept for the true rate")
    parser.add_argument("--fpr", type=float, default=0.05)
    parser.add_argument("--calibration", type=float, nargs="+", default=[0.2])
    parser.add_argument("--concepts", type=int, default=4)
    parser.add_argument("--detectors", nargs="+", default=list(DETECTORS))
    args = parser.parse_args()
    fpr = args.fpr
    ds = make_synthetic(n_concepts=4, n_features=8, n_train=500, n_test=400)
    # the same seed: the same concepts (centres and scales are drawn before any row); the first 500
    # training rows of C0 are ds's own, so the training-like rows start after them
    fresh = make_synthetic(n_concepts=4, n_features=8, n_train=args.fresh + 500, n_test=2 * args.fresh + 1)
    print(f"load {os.getloadavg()[0]:.2f}; {args.draws} calibration draws x {args.concepts} concepts per detector "
          f"and calibration size; true rates on {args.fresh} new normal rows per concept")
    for size in args.calibration:
        for det in args.detectors:
            t0 = time.perf_counter()
            true, real, rep, train_gap, offset, ns, ms = [], [], [], [], [], [], []
            for k in range(args.concepts):
                test = ds.test[k]
                normal, anomalies = test.X[test.y == 0], test.X[test.y == 1]
                n = len(normal)
                pool = fresh.test[k].X[fresh.test[k].y == 0]
                new_test, replicas = pool[:args.fresh], pool[args.fresh:]
                new_train = fresh.train[k].X[500:500 + args.fresh // 2]
                concept_offset = []
                for draw in range(args.draws):
                    kept, held = calibration_split(ds, size, calibration_seed(1000 + draw))
                    cal = held[f"C{k}"]
                    s = Naive(make_detector(det, DETECTORS[det], random_state=draw)).learn(kept.train[k].X)
                    if batch_dependent(s, cal):
                        t = fpr_threshold(np.asarray(s.score(np.concatenate([test.X, cal])).scores)[len(test.X):], fpr)
                        score_new = lambda rows: batched(s, rows, anomalies)  # noqa: E731
                    else:
                        t = fpr_threshold(s.score(cal).scores, fpr)
                        score_new = lambda rows: np.asarray(s.score(rows).scores)  # noqa: E731
                    test_scores = np.asarray(s.score(test.X).scores)
                    real.append(np.mean(test_scores[test.y == 0] > t))
                    true.append(np.mean(score_new(new_test) > t))
                    start = (draw * n) % (len(replicas) - n + 1)
                    rep.append(np.mean(score_new(replicas[start:start + n]) > t))
                    train_gap.append(np.mean(score_new(new_train) > t) - true[-1])
                    concept_offset.append(real[-1] - true[-1])
                    ns.append(n)
                    ms.append(len(cal))
                offset.append(float(np.mean(concept_offset)))
            true, real, rep, gap = np.array(true), np.array(real), np.array(rep), np.array(train_gap)
            n, m = ns[0], ms[0]
            lo, hi = interval(n, fpr)
            within = lambda v: np.mean((v >= lo - 1e-12) & (v <= hi + 1e-12))  # noqa: E731
            groups = true.reshape(args.concepts, args.draws)
            cal_sd = float(np.sqrt(np.mean(groups.var(axis=1, ddof=1))))  # within each concept, over draws
            cal_model = fpr * (1 - fpr) / (m + 2)
            test_model = fpr * (1 - fpr) / n
            predicted = 2 * norm.cdf(1.96 / np.sqrt(1 + n / m)) - 1
            print(f"calibration {size:g} ({m} rows), {det}, {n} normal test rows, {len(real)} cells "
                  f"({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}):\n"
                  f"  bias: mean true rate {true.mean():.4f} (target {fpr}; se {true.std() / np.sqrt(len(true)):.4f})\n"
                  f"  calibration noise: sd of the true rate over draws {cal_sd:.4f} (model {np.sqrt(cal_model):.4f})\n"
                  f"  test noise on new test sets of {n} rows: sd of realised - true {np.std(rep - true):.4f} "
                  f"(model {np.sqrt(test_model):.4f}); total sd {rep.std():.4f} "
                  f"(model {np.sqrt(cal_model + test_model):.4f})\n"
                  f"  the quickstart's own test rows: realised - true per concept "
                  f"{', '.join(f'{o:+.4f}' for o in offset)} (one binomial draw each, shared by every cell of "
                  f"the concept); mean realised {real.mean():.4f}, sd {real.std():.4f}\n"
                  f"  train/test difference: true rate on training-like minus test-like rows {gap.mean():+.4f} "
                  f"(sd {gap.std():.4f})\n"
                  f"  within the binomial interval [{lo:.4f}, {hi:.4f}]: the quickstart's test rows {within(real):.1%}, "
                  f"new test sets {within(rep):.1%}; predicted: normal approximation {predicted:.1%}, "
                  f"exchangeable simulation {exchangeable_coverage(m, n, fpr):.1%}")


if __name__ == "__main__":
    main()
