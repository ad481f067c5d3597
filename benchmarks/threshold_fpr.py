"""Realised false-positive rates under ``threshold = {fpr = x}``: how often the rate on the normal
rows of the concept a model was just trained on lies within a 95 % interval of the target.

Run a spec with a threshold policy, then this script on its results folder:

    clad run benchmarks/threshold_fpr.toml --out results/threshold_fpr
    python benchmarks/threshold_fpr.py results/threshold_fpr

Two intervals per cell (n normal test rows, m calibration rows): the binomial interval of the
target for n rows (which ignores that the threshold itself was estimated from m rows), and the
interval of an exactly calibrated detector -- calibration and test rows exchangeable -- simulated
with clad's quantile rule (``clad.core.thresholds.fpr_threshold``). Prints the share of cells within
each, overall and per detector; one line per measurement, no assertion.
"""

from __future__ import annotations

import argparse
import collections
import functools

import numpy as np
from scipy.stats import binom

from clad.core.thresholds import fpr_threshold
from clad.metrics import learned_at
from clad.results import load_results


@functools.lru_cache(maxsize=None)
def exchangeable_interval(m: int, n: int, fpr: float, sims: int = 20_000, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    cal, test = rng.random((sims, m)), rng.random((sims, n))
    t = np.array([fpr_threshold(row, fpr) for row in cal])
    realised = (test > t[:, None]).mean(axis=1)
    return float(np.quantile(realised, 0.025)), float(np.quantile(realised, 0.975))


def binomial_interval(n: int, fpr: float) -> tuple[float, float]:
    return float(binom.ppf(0.025, n, fpr) / n), float(binom.ppf(0.975, n, fpr) / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--normal-rows", type=int, required=True,
                        help="normal rows of each test concept (the quickstart: 360)")
    args = parser.parse_args()
    cells = collections.defaultdict(list)
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
    n = args.normal_rows
    total = {"binomial": 0, "exchangeable": 0, "cells": 0}
    for det, values in cells.items():
        b = sum(binomial_interval(n, f)[0] <= v <= binomial_interval(n, f)[1] for v, m, f in values)
        e = sum(exchangeable_interval(m, n, f)[0] <= v <= exchangeable_interval(m, n, f)[1] for v, m, f in values)
        v = np.array([x for x, _, _ in values])
        print(f"{det}: {len(v)} cells, realised FPR mean {v.mean():.4f} sd {v.std():.4f}; within binomial interval "
              f"{b / len(v):.1%}, within exchangeable interval {e / len(v):.1%}")
        total["binomial"] += b
        total["exchangeable"] += e
        total["cells"] += len(v)
    c = total["cells"]
    m, f = values[0][1], values[0][2]
    print(f"all: {c} cells; binomial 95 % interval of {f} for {n} rows {tuple(round(x, 4) for x in binomial_interval(n, f))}: "
          f"{total['binomial'] / c:.1%} within; exchangeable 95 % interval ({m} calibration rows) "
          f"{tuple(round(x, 4) for x in exchangeable_interval(m, n, f))}: {total['exchangeable'] / c:.1%} within")


if __name__ == "__main__":
    main()
