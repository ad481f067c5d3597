"""Independent reference computations for the statistics tests (written apart from clad.report.exact)."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np


def friedman_chi2(ranks: np.ndarray) -> np.ndarray:
    """Tie-corrected Friedman chi-square of one table (n x k) or of a stack of them (... x n x k)."""
    r = np.asarray(ranks, dtype=float)
    n, k = r.shape[-2:]
    sums = r.sum(axis=-2)
    chi2 = 12.0 / (n * k * (k + 1)) * (sums**2).sum(axis=-1) - 3.0 * n * (k + 1)
    ties = 0.0
    for row in r.reshape(-1, n, k)[0]:  # the tie pattern is the same in every arrangement
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts**3 - counts))
    return chi2 / (1.0 - ties / (n * (k**3 - k)))


def friedman_p_by_enumeration(ranks: np.ndarray) -> float:
    """Every one of the (k!)^n arrangements of the blocks' ranks, listed one by one."""
    r = np.asarray(ranks, dtype=float)
    observed = float(friedman_chi2(r))
    per_block = [
        sorted(itertools.permutations(row)) for row in r
    ]  # k! arrangements each (repeats kept)
    every = np.array(list(itertools.product(*per_block)))  # (k!)^n x n x k
    assert every.shape[0] == np.prod([len(p) for p in per_block])
    return float(np.mean(friedman_chi2(every) >= observed - 1e-9))


def exact_friedman_p(ranks: np.ndarray) -> Fraction:
    """The exact p-value by convolving the blocks' rank-sum distributions (a Counter over tuples of
    doubled rank sums, integers): for tables too large to list."""
    r2 = np.rint(2 * np.asarray(ranks, dtype=float)).astype(int)
    n, k = r2.shape
    dist = Counter({(0,) * k: 1})
    for row in r2:
        arrangements = Counter(itertools.permutations(row.tolist()))
        new: Counter = Counter()
        for sums, c in dist.items():
            for arr, c2 in arrangements.items():
                new[tuple(s + a for s, a in zip(sums, arr))] += c * c2
        dist = new
    observed = int(np.sum(r2.sum(axis=0) ** 2))
    total = sum(dist.values())
    return Fraction(
        sum(c for sums, c in dist.items() if sum(s * s for s in sums) >= observed), total
    )


def signed_rank_p_by_enumeration(d: np.ndarray) -> float:
    """Two-sided Wilcoxon p over every one of the 2^m sign patterns of the non-zero differences
    (zeros dropped, ties at their average rank)."""
    from scipy.stats import rankdata

    d = np.asarray(d, dtype=float)
    d = d[d != 0]
    ranks = rankdata(np.abs(d))
    total = ranks.sum()
    observed = abs(ranks[d > 0].sum() - total / 2)
    patterns = np.array(list(itertools.product((0, 1), repeat=d.size)), dtype=float).reshape(
        -1, d.size
    )
    w = patterns @ ranks  # W+ of each of the 2^m sign patterns
    return float(np.mean(np.abs(w - total / 2) >= observed - 1e-9))
