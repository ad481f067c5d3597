"""Exact against asymptotic p-values on random blocks x methods tables, and what a comparison costs.

The check that motivated clad's exact statistics, repeated on clad's own code: random tables of
2-6 methods and 3-15 blocks (a third with ties: scores rounded to one decimal; a quarter with two
identical methods; effects from none to large). For each table with at least 3 methods, Friedman's
chi-square p-value (the asymptotic approximation) is set against the p-value clad reports below the
switch point (exact enumeration or a seeded permutation test), and the decisions at alpha = 0.05 are
counted where they disagree; Iman-Davenport's F-distribution p-value too. For every pair of
methods, the Wilcoxon signed-rank normal approximation is set against clad's exact p-value. The
cost of ``compare_methods`` (all tests, intervals and the verdict) is timed per table size. Last,
the exact Friedman programme (a dynamic programme over sorted rank-sum vectors) is timed per table
size against the permutation test, with the switch point its budget sets.

    python benchmarks/exact_statistics.py [--tables 600] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]  # this checkout's clad, even when another is installed

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from clad.report import StatisticsWarning, compare_methods  # noqa: E402
from clad.report.exact import EXACT_MAX_BLOCKS, wilcoxon_test  # noqa: E402


def random_table(rng: np.random.Generator, i: int) -> pd.DataFrame:
    k, n = int(rng.integers(2, 7)), int(rng.integers(3, EXACT_MAX_BLOCKS + 1))
    values = (
        rng.normal(size=(n, k))
        + rng.choice([0.0, 0.3, 1.0, 3.0]) * np.linspace(0, 1, k)
        + rng.normal(size=(n, 1))
    )
    if i % 3 == 0:
        values = np.round(values, 1)
    if i % 4 == 0:
        values[:, 1] = values[:, 0]
    return pd.DataFrame(values, columns=[f"m{j}" for j in range(k)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    alpha = 0.05
    friedman = {"tables": 0, "exact": 0, "permutation": 0, "flips": 0, "F_flips": 0}
    wilcoxon = {"pairs": 0, "differ_1e-3": 0, "flips": 0}
    examples, seconds = [], {}
    warnings.simplefilter("ignore", StatisticsWarning)
    for i in range(args.tables):
        table = random_table(rng, i)
        start = time.perf_counter()
        c = compare_methods(table)
        _ = c.verdict
        seconds.setdefault((table.shape[1], table.shape[0] // 5), []).append(
            time.perf_counter() - start
        )
        if c.test is None:
            continue
        if c.n_methods >= 3:
            t = c.test
            friedman["tables"] += 1
            friedman[t.method] += 1
            if (t.pvalue < alpha) != (t.pvalue_asymptotic < alpha):
                friedman["flips"] += 1
                examples.append(
                    f"{c.n_blocks} x {c.n_methods}: chi-square p = {t.pvalue_asymptotic:.4f}, "
                    f"{t.method} p = {t.pvalue:.4f}"
                )
            if (c.iman_davenport[1] < alpha) != (t.pvalue < alpha):
                friedman["F_flips"] += 1
        for row in c.pairs.itertuples(index=False):
            w = wilcoxon_test(table[row.a].to_numpy(), table[row.b].to_numpy())
            wilcoxon["pairs"] += 1
            wilcoxon["differ_1e-3"] += abs(w.pvalue - w.pvalue_asymptotic) > 1e-3
            wilcoxon["flips"] += (w.pvalue < alpha) != (w.pvalue_asymptotic < alpha)
    print(
        f"{args.tables} random tables (2-6 methods, 3-{EXACT_MAX_BLOCKS} blocks, a third with ties), alpha = {alpha}"
    )
    print(
        f"Friedman, {friedman['tables']} tables with >= 3 methods: p exact in {friedman['exact']}, from "
        f"permutations in {friedman['permutation']}; the chi-square decision differs from clad's in "
        f"{friedman['flips']}, Iman-Davenport's F-distribution decision in {friedman['F_flips']}"
    )
    for e in examples[:6]:
        print("   ", e)
    print(
        f"Wilcoxon, {wilcoxon['pairs']} pairs: normal approximation off by > 0.001 in {wilcoxon['differ_1e-3']}, "
        f"decision at alpha different in {wilcoxon['flips']}"
    )
    print("compare_methods + verdict, median ms per table:")
    for (k, band), ts in sorted(seconds.items()):
        low, high = max(3, 5 * band), min(EXACT_MAX_BLOCKS, 5 * band + 4)
        print(
            f"    {k} methods, {low:>2}-{high:>2} blocks: {1000 * np.median(ts):6.1f} ms ({len(ts)} tables)"
        )
    exact_programme(rng)


def exact_programme(rng: np.random.Generator) -> None:
    """The exact Friedman programme (rank-sum vectors, sorted) against the permutation test: its
    time per comparison by table size, where the budget sends a table to permutations, and the
    two p-values side by side."""
    import math

    from scipy import stats

    from clad.report.exact import PERMUTATIONS, STATE_LIMIT, WORK_LIMIT, friedman_test

    print(
        f"Friedman's exact programme (budget: {STATE_LIMIT:,} vectors held, {WORK_LIMIT:,} candidates made), "
        f"against {PERMUTATIONS:,} permutations; median of 3 random tables (ties in one):"
    )
    print(
        f"    {'k x n':>7}  {'(k!)^n':>9}  {'method':>11}  {'seconds':>8}  {'exact p':>8}  {'perm. p':>8}  "
        f"{'|diff| / MC se':>14}  {'perm. seconds':>13}"
    )
    for k, n in [
        (3, 10),
        (3, 15),
        (4, 6),
        (4, 10),
        (4, 15),
        (5, 5),
        (5, 8),
        (5, 10),
        (6, 4),
        (6, 6),
        (7, 3),
        (8, 8),
    ]:
        times, rows = [], []
        for rep in range(3):
            values = rng.normal(size=(n, k)) + np.linspace(0, 0.5, k)
            ranks = stats.rankdata(-(np.round(values, 1) if rep == 0 else values), axis=1)
            start = time.perf_counter()
            r = friedman_test(ranks)
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            p = friedman_test(ranks, state_limit=0)
            rows.append((r, p, time.perf_counter() - start))
        r, p, pt = rows[int(np.argsort(times)[1])]
        gap = (
            abs(r.pvalue - p.pvalue) / p.mc_se if r.method == "exact" and p.mc_se else float("nan")
        )
        print(
            f"    {k} x {n:>2}  {float(math.factorial(k)) ** n:9.2g}  {r.method:>11}  {np.median(times):8.3f}  "
            f"{r.pvalue:8.4f}  {p.pvalue:8.4f}  {gap:14.2f}  {pt:13.3f}"
        )


if __name__ == "__main__":
    main()
