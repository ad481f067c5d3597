"""Realised false-positive rates under ``threshold = {fpr = x}``: how often the rate on the normal
rows of the concept a model was just trained on lies within a 95 % interval of the target.

Run a spec with a threshold policy, then this script on its results folder:

    clad run benchmarks/threshold_fpr.toml --out results/threshold_fpr
    python benchmarks/threshold_fpr.py results/threshold_fpr

Two intervals per cell (n normal test rows, m calibration rows): the binomial interval of the
target for n rows (which ignores that the threshold itself was estimated from m rows), and the
interval of an exactly calibrated detector -- calibration and test rows exchangeable -- simulated
with clad's quantile rule (``clad.core.thresholds.fpr_threshold``). Prints the share of cells within
each, overall and per detector, beside the share within the binomial interval that the noise model
predicts (threshold noise from m rows and test noise from n rows independent: about
``P(|Z| < 1.96 / sqrt(1 + n/m))``; and exactly, simulated for exchangeable rows), and how many
independent (calibration sample, test rows) pairs the cells hold: a run seed draws one calibration
split for every detector and strategy, and the quickstart's data do not change with the seed, so
the cells of one seed and test concept share their calibration and test rows. One line per
measurement, no assertion. (``benchmarks/threshold_fpr_noise.py`` separates the sources of the
spread over many calibration draws.)
"""

from __future__ import annotations

import argparse
import collections
import functools

import numpy as np
from scipy.stats import binom, norm

from clad.core.thresholds import fpr_threshold
from clad.metrics import learned_at
from clad.results import load_results


@functools.lru_cache(maxsize=None)
def exchangeable_interval(
    m: int, n: int, fpr: float, sims: int = 20_000, seed: int = 0
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    cal, test = rng.random((sims, m)), rng.random((sims, n))
    t = np.array([fpr_threshold(row, fpr) for row in cal])
    realised = (test > t[:, None]).mean(axis=1)
    return float(np.quantile(realised, 0.025)), float(np.quantile(realised, 0.975))


def binomial_interval(n: int, fpr: float) -> tuple[float, float]:
    return float(binom.ppf(0.025, n, fpr) / n), float(binom.ppf(0.975, n, fpr) / n)


def predicted_coverage(
    m: int, n: int, fpr: float, sims: int = 20_000, seed: int = 0
) -> tuple[float, float]:
    """The share of cells within the binomial interval that the noise model predicts: the normal
    approximation, and exactly for exchangeable calibration and test rows (simulated)."""
    lo, hi = binomial_interval(n, fpr)
    rng = np.random.default_rng(seed)
    p = 1.0 - np.array([fpr_threshold(row, fpr) for row in rng.random((sims, m))])
    exact = float(np.mean(binom.cdf(round(hi * n), n, p) - binom.cdf(round(lo * n) - 1, n, p)))
    return float(2 * norm.cdf(1.96 / np.sqrt(1 + n / m)) - 1), exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument(
        "--normal-rows",
        type=int,
        required=True,
        help="normal rows of each test concept (the quickstart: 360)",
    )
    args = parser.parse_args()
    cells = collections.defaultdict(list)
    pairs = set()
    for r in load_results(args.folder):
        if not r.ok or r.shared_from or not r.threshold or r.threshold.get("policy") == "own":
            continue
        fpr = r.threshold["policy"]["fpr"]
        F = np.asarray(r.threshold["realised_fpr"], dtype=float)
        t = learned_at(r.concepts, r.test_concepts)
        for j, step in enumerate(t):
            if step >= 0:
                m = r.threshold["calibration_rows"][r.test_concepts[j]]
                cells[r.detector].append((F[step, j], m, fpr))
                pairs.add((r.seed, r.test_concepts[j]))
    n = args.normal_rows
    total = {"binomial": 0, "exchangeable": 0, "cells": 0}
    for det, values in cells.items():
        b = sum(binomial_interval(n, f)[0] <= v <= binomial_interval(n, f)[1] for v, m, f in values)
        e = sum(
            exchangeable_interval(m, n, f)[0] <= v <= exchangeable_interval(m, n, f)[1]
            for v, m, f in values
        )
        v = np.array([x for x, _, _ in values])
        print(
            f"{det}: {len(v)} cells, realised FPR mean {v.mean():.4f} sd {v.std():.4f}; within binomial interval "
            f"{b / len(v):.1%}, within exchangeable interval {e / len(v):.1%}"
        )
        total["binomial"] += b
        total["exchangeable"] += e
        total["cells"] += len(v)
    c = total["cells"]
    m, f = values[0][1], values[0][2]
    print(
        f"all: {c} cells; binomial 95 % interval of {f} for {n} rows {tuple(round(x, 4) for x in binomial_interval(n, f))}: "
        f"{total['binomial'] / c:.1%} within; exchangeable 95 % interval ({m} calibration rows) "
        f"{tuple(round(x, 4) for x in exchangeable_interval(m, n, f))}: {total['exchangeable'] / c:.1%} within"
    )
    approx, exact = predicted_coverage(m, n, f)
    print(
        f"n_cal {m}, n_test {n}: the noise model predicts {approx:.1%} within the binomial interval (normal "
        f"approximation), {exact:.1%} (exchangeable rows, simulated); the {c} cells hold {len(pairs)} distinct "
        "(seed, test concept) pairs of calibration and test rows"
    )


if __name__ == "__main__":
    main()
