"""The post-hoc tests of a comparison, read only when the omnibus test rejects: pairwise Wilcoxon
signed-rank tests with Holm's correction (:func:`holm`) and the Nemenyi test
(:func:`nemenyi_pvalues`, :func:`critical_difference`), with what each can reach at a number of
blocks (:func:`holm_floor`, :func:`nemenyi_reachable`), and the pair table
(:data:`PAIR_COLUMNS`)."""

from __future__ import annotations

import itertools
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .exact import median_interval, wilcoxon_test

__all__ = [
    "holm",
    "holm_floor",
    "nemenyi_reachable",
    "critical_difference",
    "nemenyi_pvalues",
    "PAIR_COLUMNS",
    "pairs_frame",
    "symmetric_matrix",
]


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment: the i-th smallest of m p-values times (m - i + 1), made
    non-decreasing in that order and capped at 1 (what ``statsmodels``' ``multipletests(...,
    method="holm")`` returns, which the tests check; written out here because that call runs a full
    garbage collection each time, 0.15 s, and a report makes many).

    >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate(p[order] * (p.size - np.arange(p.size))))
    out = np.empty_like(p)
    out[order] = stepped
    return out


def holm_floor(n: int, k: int) -> float:
    """The smallest Holm-adjusted p-value any pair of ``k`` methods can get from exact two-sided
    Wilcoxon signed-rank tests over ``n`` blocks: the number of pairs times 2/2^n (capped at 1).
    At or above α, no Wilcoxon–Holm decision can say "differ", whatever the data.

    >>> holm_floor(6, 3), holm_floor(6, 2), holm_floor(8, 4)
    (0.09375, 0.03125, 0.046875)
    """
    return min(1.0, (k * (k - 1) // 2) * 2.0 / 2.0**n)


def nemenyi_reachable(n: int, k: int, alpha: float = 0.05) -> bool:
    """Whether any pair of ``k`` methods can differ by the Nemenyi test over ``n`` blocks: the
    largest possible difference of average ranks, k - 1, exceeds the critical difference
    q_α sqrt(k(k+1) / 6n) (q_α the studentized range quantile over sqrt 2, Demšar 2006).

    >>> nemenyi_reachable(2, 4), nemenyi_reachable(6, 4)
    (False, True)
    """
    return bool(k - 1 > critical_difference(n, k, alpha))


def critical_difference(n: int, k: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks for ``k`` methods over ``n`` blocks at
    ``alpha`` (Demšar 2006): q_α sqrt(k(k+1) / 6n), q_α the studentized range quantile / sqrt 2.

    >>> round(critical_difference(6, 4), 3)
    1.915
    """
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def nemenyi_pvalues(scores: pd.DataFrame) -> pd.DataFrame:
    """Methods x methods p-values of Nemenyi's test on a complete blocks x methods table (Demšar
    2006): the studentized range's survival function at sqrt 2 |R_a - R_b| / sqrt(k(k+1) / 6n), R
    the average ranks of k methods over n blocks; 1.0 on the diagonal. The computation of
    ``scikit_posthocs.posthoc_nemenyi_friedman`` on a complete table, step for step (the same
    numbers), without importing scikit-posthocs and the plotting it brings."""
    from .exact import tied_ranks

    # the ranks with clad's one tie tolerance (Nemenyi's statistic reads ranks only): float noise is a tie
    ranks = tied_ranks(scores.to_numpy())
    n, k = ranks.shape
    mean_ranks = ranks.mean(axis=0)
    upper = np.triu_indices(k, 1)
    q = np.abs(mean_ranks[upper[0]] - mean_ranks[upper[1]]) / np.sqrt(k * (k + 1.0) / (6.0 * n))
    p = np.ones((k, k))
    p[upper] = stats.studentized_range.sf(q * np.sqrt(2.0), k, np.inf)
    p[upper[1], upper[0]] = p[upper]
    names = list(scores.columns)
    return pd.DataFrame(p, index=names, columns=names)


#: the columns of :attr:`Comparison.pairs`
PAIR_COLUMNS = (
    "a",
    "b",
    "blocks",
    "median_difference",
    "ci_low",
    "ci_high",
    "ci_level",
    "wilcoxon_statistic",
    "wilcoxon_p",
    "wilcoxon_method",
    "wilcoxon_holm_p",
    "nemenyi_p",
)


def pairs_frame(
    scores: pd.DataFrame, order: Sequence[str], nemenyi: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per pair (``a`` before ``b`` in ``order``, best first): the median over blocks of
    a - b with its order-statistic interval, the Wilcoxon signed-rank test and its Holm-adjusted
    p-value, the Nemenyi p-value; and the methods x methods matrix of Holm-adjusted p-values."""
    rows, tests = [], []
    for a, b in itertools.combinations(order, 2):
        x, y = scores[a].to_numpy(), scores[b].to_numpy()
        w = wilcoxon_test(x, y)
        tests.append(w)
        nemenyi_p = float(nemenyi.loc[a, b]) if nemenyi is not None else np.nan
        # the median of a - b and its interval: (median, low, high, level)
        row = [a, b, int(x.size), *median_interval(x - y)]
        rows.append([*row, w.statistic, w.pvalue, w.method, nemenyi_p])
    adjusted = holm([t.pvalue for t in tests])
    table = pd.DataFrame(rows, columns=[c for c in PAIR_COLUMNS if c != "wilcoxon_holm_p"])
    table.insert(PAIR_COLUMNS.index("wilcoxon_holm_p"), "wilcoxon_holm_p", adjusted.astype(float))
    return table, symmetric_matrix(
        list(scores.columns), table["a"], table["b"], table["wilcoxon_holm_p"]
    )


def symmetric_matrix(
    names: Sequence[str], a: Iterable[str], b: Iterable[str], values: Iterable[float]
) -> pd.DataFrame:
    """A names x names matrix holding each pair's value on both sides of the diagonal, 1.0 elsewhere."""
    where = {n: i for i, n in enumerate(names)}
    out = np.ones((len(names), len(names)))
    for x, y, v in zip(a, b, values):
        out[where[x], where[y]] = out[where[y], where[x]] = float(v)
    return pd.DataFrame(out, index=list(names), columns=list(names))
