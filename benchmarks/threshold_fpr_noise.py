"""Where the spread of the realised false-positive rate under ``threshold = {fpr = x}`` comes from,
on the quickstart's data and detectors (``benchmarks/threshold_fpr.toml``), one training concept
at a time with the ``naive`` strategy, over many draws:

    python benchmarks/threshold_fpr_noise.py --draws 100 --calibration 0.2 0.5

Each draw sets a threshold by clad's rule (:func:`clad.core.thresholds.fpr_threshold`; a score that
depends on its batch, as ECOD's, calibrated in the test batch: :func:`~clad.core.thresholds.joint_scores`)
and records the realised rate on normal test rows and the *true* rate of that threshold: the share
of ``--fresh`` new normal rows of the same concept above it (the generator's concepts do not depend
on its row counts, so ``make_synthetic`` with more rows draws new rows of the same Gaussians; ECOD's
new rows are scored in batches composed as its test concept: 360 normal rows and its 40 anomalies).
Two kinds of draw:

* ``quickstart``: as in the quickstart's cells: the calibration split drawn as clad draws it from the
  concept's 500 training rows, which (with the test rows) are the same in every draw and every seed;
* ``replicated``: every draw a new sample of 500 training rows and of 360 normal test rows: what the
  noise model describes.

Per detector, calibration size and kind it prints: the bias (mean true rate minus the target), the
threshold noise (sd of the true rate; model ``fpr (1 - fpr) / (m + 2)``, times ``1 - m/500`` where
the draws resample one set of 500 rows), the test noise (sd of realised minus true; model ``fpr (1 -
fpr) / n``), for ``quickstart`` the per-concept offsets that every cell of a concept shares (the
true rate's mean minus the target: the 500 rows' own sample; realised minus true: the test rows'),
the train/test difference (the true rate on new training-like minus new test-like rows), and the
share within the binomial 95 % interval of the target for ``n`` rows beside the share the noise
model predicts (``P(|Z| < 1.96 / sqrt(1 + n/m))``, and simulated for exchangeable rows). One line
per measurement, no assertion.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.stats import binom, norm

from clad.core.thresholds import (
    batch_dependent,
    calibration_seed,
    calibration_size,
    calibration_split,
    fpr_threshold,
    joint_scores,
)
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
        chunk = rows[k : k + per]
        out.append(np.asarray(strategy.score(np.concatenate([chunk, pad])).scores)[: len(chunk)])
    return np.concatenate(out)


def one_draw(det, seed, train, cal, test_X, test_y, anomalies, new_test, new_train, fpr):
    """The realised and true rates of one threshold, and the true rate on training-like rows."""
    s = Naive(make_detector(det, DETECTORS[det], random_state=seed)).learn(train)
    if batch_dependent(s, cal):
        t = fpr_threshold(joint_scores(s, test_X, cal), fpr)
        score_new = lambda rows: batched(s, rows, anomalies)  # noqa: E731
    else:
        t = fpr_threshold(s.score(cal).scores, fpr)
        score_new = lambda rows: np.asarray(s.score(rows).scores)  # noqa: E731
    scores = np.asarray(s.score(test_X).scores)
    true = np.mean(score_new(new_test) > t)
    return np.mean(scores[test_y == 0] > t), true, np.mean(score_new(new_train) > t) - true


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument(
        "--fresh", type=int, default=7200, help="new normal rows per concept for the true rate"
    )
    parser.add_argument("--fpr", type=float, default=0.05)
    parser.add_argument("--calibration", type=float, nargs="+", default=[0.2])
    parser.add_argument("--concepts", type=int, default=4)
    parser.add_argument("--detectors", nargs="+", default=list(DETECTORS))
    parser.add_argument("--kinds", nargs="+", default=["quickstart", "replicated"])
    args = parser.parse_args()
    fpr, D = args.fpr, args.draws
    ds = make_synthetic(n_concepts=4, n_features=8, n_train=500, n_test=400)
    n = int(np.sum(ds.test[0].y == 0))
    # the same seed: the same concepts (centres and scales are drawn before any row); the first 500
    # training rows of C0 are ds's own, so new training-like rows start after them
    fresh = make_synthetic(
        n_concepts=4,
        n_features=8,
        n_train=500 * (D + 2),
        n_test=int(np.ceil((args.fresh + n * D) / 0.9)) + 10,
    )
    print(
        f"load {os.getloadavg()[0]:.2f}; {D} draws x {args.concepts} concepts per detector, calibration size "
        f"and kind; true rates on {args.fresh} new normal rows per concept"
    )
    for size in args.calibration:
        for kind in args.kinds:
            for det in args.detectors:
                t0 = time.perf_counter()
                real, true, gap, pool_offset, test_offset = [], [], [], [], []
                for k in range(args.concepts):
                    test = ds.test[k]
                    anomalies = test.X[test.y == 1]
                    normal_pool = fresh.test[k].X[fresh.test[k].y == 0]
                    new_test, replicas = normal_pool[: args.fresh], normal_pool[args.fresh :]
                    new_train_pool = fresh.train[k].X[500:]
                    rows = []
                    for d in range(D):
                        if kind == "quickstart":
                            kept, held = calibration_split(ds, size, calibration_seed(1000 + d))
                            train, cal, test_X, test_y = (
                                kept.train[k].X,
                                held[f"C{k}"],
                                test.X,
                                test.y,
                            )
                        else:
                            block = new_train_pool[500 * d : 500 * (d + 1)]
                            m = calibration_size(size, len(block))
                            pick = np.random.default_rng(d).permutation(len(block))
                            train, cal = block[pick[m:]], block[pick[:m]]
                            test_X = np.concatenate([replicas[n * d : n * (d + 1)], anomalies])
                            test_y = np.r_[np.zeros(n), np.ones(len(anomalies))]
                        rows.append(
                            one_draw(
                                det,
                                d,
                                train,
                                cal,
                                test_X,
                                test_y,
                                anomalies,
                                new_test,
                                new_train_pool[500 * (D + 1) - 500 :][: args.fresh // 2],
                                fpr,
                            )
                        )
                    r = np.array(rows)
                    real.extend(r[:, 0]), true.extend(r[:, 1]), gap.extend(r[:, 2])
                    pool_offset.append(r[:, 1].mean() - fpr)
                    test_offset.append(np.mean(r[:, 0] - r[:, 1]))
                real, true, gap = np.array(real), np.array(true), np.array(gap)
                m = len(cal)
                lo, hi = interval(n, fpr)
                within = np.mean((real >= lo - 1e-12) & (real <= hi + 1e-12))
                sd_threshold = float(
                    np.sqrt(np.mean(true.reshape(args.concepts, D).var(axis=1, ddof=1)))
                )
                fpc = 1 - m / 500 if kind == "quickstart" else 1.0
                cal_model, test_model = fpr * (1 - fpr) / (m + 2), fpr * (1 - fpr) / n
                predicted = 2 * norm.cdf(1.96 / np.sqrt(1 + n / m)) - 1
                print(
                    f"{kind}, calibration {size:g} ({m} rows), {det}, {n} normal test rows, {len(real)} cells "
                    f"({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}):\n"
                    f"  bias: mean true rate {true.mean():.4f} (target {fpr}); mean realised {real.mean():.4f}\n"
                    f"  threshold noise: sd of the true rate within a concept {sd_threshold:.4f} "
                    f"(model {np.sqrt(cal_model * fpc):.4f})\n"
                    f"  test noise: sd of realised - true {np.std(real - true):.4f} (model {np.sqrt(test_model):.4f})"
                    f"\n  total: sd of realised {real.std():.4f} (model {np.sqrt(cal_model + test_model):.4f})"
                )
                if kind == "quickstart":
                    print(
                        f"  shared by every cell of a concept: true rate minus target (the 500 training rows' "
                        f"sample) {', '.join(f'{o:+.4f}' for o in pool_offset)}; realised minus true (the test "
                        f"rows' sample) {', '.join(f'{o:+.4f}' for o in test_offset)}"
                    )
                print(
                    f"  train/test difference: true rate on new training-like minus test-like rows "
                    f"{gap.mean():+.4f}\n"
                    f"  within the binomial interval [{lo:.4f}, {hi:.4f}]: {within:.1%}; predicted: normal "
                    f"approximation {predicted:.1%}, exchangeable simulation {exchangeable_coverage(m, n, fpr):.1%}"
                )


if __name__ == "__main__":
    main()
