"""Exact and permutation p-values against independent enumerations, scipy and statsmodels; the
median's interval against scipy; Kendall's W against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from clad.report import compare_methods
from clad.report.exact import (
    STATE_LIMIT,
    EXACT_MAX_BLOCKS,
    PERMUTATIONS,
    ZERO_METHOD,
    friedman_statistic,
    friedman_test,
    iman_davenport,
    kendall_w,
    median_interval,
    wilcoxon_test,
)
from tests.stats_helpers import (
    exact_friedman_p,
    friedman_p_by_enumeration,
    signed_rank_p_by_enumeration,
)


def _ranks(scores) -> np.ndarray:
    return stats.rankdata(-np.asarray(scores, dtype=float), axis=1)


# the two tables of the issue: the chi-square p is 0.0498 in both ("significant"), the exact p is not
ISSUE_4x3 = [[1, 2, 3], [1, 2, 3], [1, 3, 2], [1, 3, 2]]
ISSUE_3x3 = [[1, 1, 2], [1, 1, 2], [1, 1, 2]]


def _small_tables():
    rng = np.random.default_rng(7)
    tables = [ISSUE_4x3, ISSUE_3x3]
    for i in range(14):
        n = 3 + i % 2
        values = rng.integers(0, 3 if i % 3 == 0 else 100, size=(n, 3))  # a third with many ties
        tables.append(values.tolist())
    return tables


def test_exact_friedman_equals_full_enumeration_on_3_and_4_blocks_of_3_methods():
    for table in _small_tables():
        ranks = _ranks(table)
        if np.allclose(ranks, ranks[:, :1]):
            continue
        r = friedman_test(ranks)
        n, k = ranks.shape
        assert r.method == "exact" and r.arrangements == math.factorial(k) ** n
        assert r.statistic == pytest.approx(
            stats.friedmanchisquare(*np.asarray(table, float).T).statistic
        )
        assert r.pvalue == pytest.approx(friedman_p_by_enumeration(ranks), abs=1e-12)
    # the issue's examples: chi-square 0.0498 on both; exactly 0.0694 (4 x 3) and 1/9 (3 x 3)
    a, b = friedman_test(_ranks(ISSUE_4x3)), friedman_test(_ranks(ISSUE_3x3))
    assert a.pvalue_asymptotic == pytest.approx(0.0498, abs=5e-5) == b.pvalue_asymptotic
    assert a.pvalue == pytest.approx(90 / 1296) and b.pvalue == pytest.approx(1 / 9)
    # scipy's own permutation test over every within-block arrangement agrees ("samples": observations
    # exchanged between the methods within each block)
    for table in (ISSUE_4x3, [[3, 1, 2], [2, 1, 3], [3, 2, 1]]):
        ranks = _ranks(table)
        ref = stats.permutation_test(
            tuple(ranks.T),
            lambda *m: friedman_statistic(np.column_stack(m)),
            permutation_type="samples",
            n_resamples=np.inf,
            alternative="greater",
        )
        assert friedman_test(ranks).pvalue == pytest.approx(ref.pvalue)


def test_exact_friedman_on_4_methods(monkeypatch):
    ranks = _ranks([[4, 1, 3, 2], [4, 2, 3, 1], [3, 1, 4, 2]])  # (4!)^3 = 13,824 arrangements
    expected = friedman_p_by_enumeration(ranks)
    assert friedman_test(ranks).pvalue == pytest.approx(expected, abs=1e-12)
    # rank-sum vectors too wide to pack into one integer are merged row-wise: the same p
    from clad.report import exact

    monkeypatch.setattr(exact, "_PACKED_LIMIT", 0)
    assert friedman_test(ranks).pvalue == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "n, k, ties",
    [(6, 4, False), (6, 4, True), (5, 5, False), (5, 5, True), (11, 3, True), (13, 3, False)],
)
def test_permutation_p_within_its_stated_monte_carlo_error(n, k, ties):
    rng = np.random.default_rng(n * k)
    scores = rng.normal(size=(n, k)) + np.linspace(0, 0.8, k)
    ranks = _ranks(np.round(scores) if ties else scores)
    assert math.factorial(k) ** n > 10**8 and n <= EXACT_MAX_BLOCKS  # too many arrangements to list
    exact = float(exact_friedman_p(ranks))
    # within the budget the programme gives the exact p, equal to the independent convolution's
    e = friedman_test(ranks)
    assert e.method == "exact" and e.pvalue == pytest.approx(exact, abs=1e-12)
    # beyond it (a budget of 10 vectors here), the permutation test, within 3 Monte-Carlo errors of it
    r = friedman_test(ranks, state_limit=10)
    assert r.method == "permutation" and r.permutations == PERMUTATIONS
    assert r.mc_se == pytest.approx(math.sqrt(r.pvalue * (1 - r.pvalue) / PERMUTATIONS))
    assert abs(r.pvalue - exact) <= 3 * r.mc_se, (r.pvalue, exact, r.mc_se)
    assert friedman_test(ranks, state_limit=10).pvalue == r.pvalue  # seeded: the same p every time
    assert friedman_test(ranks, state_limit=10, seed=1).pvalue != r.pvalue or r.pvalue == 1 / (
        1 + PERMUTATIONS
    )


def test_exact_friedman_of_the_issue_grid_shape():
    # 4 methods x 6 blocks, (4!)^6 ≈ 1.9e8 arrangements: exact, and in small chunks the same p
    rng = np.random.default_rng(37)
    ranks = _ranks(rng.normal(size=(6, 4)))
    r = friedman_test(ranks)
    assert r.method == "exact" and "dynamic programme" in r.reason
    from clad.report import exact

    assert exact._exact_friedman(exact._doubled(ranks), chunk_rows=7) == pytest.approx(
        r.pvalue, abs=1e-12
    )
    assert r.pvalue == pytest.approx(float(exact_friedman_p(ranks)), abs=1e-12)
    # and an 8 x 8 table is beyond the budget: the permutation test, which says why
    big = friedman_test(_ranks(rng.normal(size=(8, 8))))
    assert big.method == "permutation" and f"{STATE_LIMIT:,}" in big.reason


def test_above_the_switch_point_the_asymptotic_test_stays():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(EXACT_MAX_BLOCKS + 1, 4))
    r = friedman_test(_ranks(scores))
    assert r.method == "asymptotic" and r.pvalue == pytest.approx(
        stats.friedmanchisquare(*scores.T).pvalue
    )
    w = wilcoxon_test(scores[:, 0], scores[:, 1])
    assert w.method == "asymptotic" and w.pvalue == pytest.approx(
        stats.wilcoxon(scores[:, 0], scores[:, 1]).pvalue
    )


def test_iman_davenport_by_hand():
    # chi2 = 4.5, n = 4, k = 3: F = 3 * 4.5 / (8 - 4.5) = 27/7 on (2, 6) degrees of freedom
    f, p = iman_davenport(4.5, 4, 3)
    assert f == pytest.approx(27 / 7) and p == pytest.approx(stats.f.sf(27 / 7, 2, 6))
    assert all(
        math.isnan(v) for v in iman_davenport(8.0, 4, 3)
    )  # every block ranks alike: undefined


# differences that are exact binary fractions, with zeros and tied absolute values
WILCOXON_TABLES = [
    [0.25, -0.25, 0.5, 0.5, 0.0, 0.75, 0.125, 0.5],
    [0.125, 0.125, 0.125, -0.125, 0.0, 0.0, 0.25],
    [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -0.5, 0.0, 0.25, 0.25],
    [-0.0625, 0.0625, 0.125, 0.1875, 0.1875, 0.1875, 0.25, 0.25, 0.0, 0.375, 0.375],
    [0.5, 0.25, 0.25, 0.0],
]


@pytest.mark.parametrize("d", WILCOXON_TABLES)
def test_wilcoxon_exact_equals_every_sign_pattern_with_ties_and_zeros(d):
    d = np.asarray(d)
    y = np.full(d.size, 0.5)
    x = y + d
    r = wilcoxon_test(x, y)
    m = int(np.count_nonzero(d))
    assert r.method == "exact" and r.arrangements == 2**m and f"2^{m}" in r.reason
    assert r.pvalue == pytest.approx(signed_rank_p_by_enumeration(d), abs=1e-12)
    ref = stats.wilcoxon(
        x, y, zero_method=ZERO_METHOD, method=stats.PermutationMethod(n_resamples=np.inf)
    )
    assert r.pvalue == pytest.approx(ref.pvalue) and r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue_asymptotic == pytest.approx(
        stats.wilcoxon(x, y, zero_method=ZERO_METHOD, method="approx").pvalue
    )


def test_wilcoxon_exact_differs_from_the_normal_approximation_where_the_issue_saw_it():
    # 10 non-zero differences, 9 positive: W- = 1; ties among the positives
    d = np.array([0.5, 0.5, 0.25, 0.25, 0.75, 0.75, 1.0, 0.125, 0.375, -0.0625])
    r = wilcoxon_test(d, np.zeros_like(d))
    assert r.pvalue == pytest.approx(signed_rank_p_by_enumeration(d))
    assert r.pvalue == pytest.approx(4 / 1024) and r.pvalue < r.pvalue_asymptotic


def test_holm_on_the_exact_p_values():
    from statsmodels.stats.multitest import multipletests

    scores = pd.DataFrame(
        {
            "A": [0.9, 0.8, 0.85, 0.95, 0.7, 0.9, 0.6],
            "B": [0.7, 0.8, 0.65, 0.8, 0.5, 0.85, 0.6],
            "C": [0.5, 0.55, 0.6, 0.7, 0.4, 0.8, 0.65],
        }
    )
    c = compare_methods(scores)
    raw = c.pairs["wilcoxon_p"].to_numpy()
    for (a, b), p in zip(zip(c.pairs["a"], c.pairs["b"]), raw):
        assert p == pytest.approx(
            signed_rank_p_by_enumeration(scores[a].to_numpy() - scores[b].to_numpy())
        )
    # Holm by hand: sorted ascending, multiplied by m, m-1, ..., made monotone, capped at 1
    order = np.argsort(raw)
    hand = np.minimum(1, np.maximum.accumulate(raw[order] * (len(raw) - np.arange(len(raw)))))
    expected = np.empty_like(hand)
    expected[order] = hand
    np.testing.assert_allclose(c.pairs["wilcoxon_holm_p"], expected)
    np.testing.assert_allclose(c.pairs["wilcoxon_holm_p"], multipletests(raw, method="holm")[1])
    assert (
        c.wilcoxon_holm.loc["A", "C"]
        == c.wilcoxon_holm.loc["C", "A"]
        == pytest.approx(float(c.pairs.set_index(["a", "b"]).loc[("A", "C"), "wilcoxon_holm_p"]))
    )


def test_median_interval_from_order_statistics():
    rng = np.random.default_rng(0)
    for n in range(6, 16):
        d = rng.normal(size=n)
        median, low, high, level = median_interval(d)
        ci = stats.quantile_test(d, q=0, p=0.5).confidence_interval(0.95)
        assert (low, high) == pytest.approx((ci.low, ci.high)) and median == pytest.approx(
            np.median(d)
        )
        assert level >= 0.95
    # n <= 5: no order-statistic interval reaches 95 %; [min, max] with its own coverage, 1 - 2^(1-n)
    for n, coverage in ((3, 0.75), (4, 0.875), (5, 0.9375)):
        d = np.arange(n, dtype=float)
        assert median_interval(d) == pytest.approx((np.median(d), 0.0, n - 1.0, coverage))
    # by hand, n = 8: P(Bin(8, 1/2) <= 0) = 1/256, <= 1: 9/256; l = 2 would cover 1 - 18/256 = 0.93 < 0.95
    assert median_interval([5, 1, 4, 2, 8, 7, 3, 6]) == pytest.approx((4.5, 1.0, 8.0, 1 - 2 / 256))


def test_kendall_w_by_hand_3_orders_4_methods():
    ranks = np.array([[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4]])
    # rank sums 4, 6, 8, 12; mean 7.5; S = 12.25 + 2.25 + 0.25 + 20.25 = 35; W = 12 S / (m^2 (n^3 - n)) = 420/540
    assert kendall_w(ranks) == pytest.approx(7 / 9)
    # with a tie in the third order: sums 4, 5.5, 8.5, 12; S = 37.5; T = 2^3 - 2 = 6; W = 450 / (540 - 18)
    tied = np.array([[1, 2, 3, 4], [2, 1, 3, 4], [1, 2.5, 2.5, 4]])
    assert kendall_w(tied) == pytest.approx(450 / 522)
    # W = Friedman chi2 / (m (n - 1)) with the orders as blocks
    for r in (ranks, tied):
        assert kendall_w(r) == pytest.approx(stats.friedmanchisquare(*r.T).statistic / (3 * 3))
    assert kendall_w([[1, 2, 3, 4]] * 3) == 1.0 and kendall_w([[1, 2], [2, 1]]) == 0.0
