"""The statistics against hand-computed and independently computed values."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from clad.report import StatisticsWarning, compare, compare_methods, score_matrix
from clad.report.exact import PERMUTATIONS
from clad.results import RunResult
from tests.stats_helpers import exact_friedman_p

# blocks x methods, higher is better, no ties within a block
TABLE = pd.DataFrame(
    {
        "A": [0.90, 0.85, 0.70, 0.95, 0.60, 0.88],
        "B": [0.80, 0.88, 0.75, 0.70, 0.65, 0.86],
        "C": [0.70, 0.60, 0.80, 0.72, 0.55, 0.84],
        "D": [0.60, 0.70, 0.65, 0.71, 0.50, 0.90],
    },
    index=[f"b{i}" for i in range(1, 7)],
)
# the same ranks worked out by hand, block by block (1 = best)
HAND_RANKS = pd.DataFrame(
    {
        "A": [1, 2, 3, 1, 2, 2],
        "B": [2, 1, 2, 4, 1, 3],
        "C": [3, 4, 1, 2, 3, 4],
        "D": [4, 3, 4, 3, 4, 1],
    },
    index=TABLE.index,
    dtype=float,
)


@pytest.mark.slow
def test_friedman_matches_hand_formula_and_scipy():
    c = compare_methods(TABLE, by="detector")
    n, k = TABLE.shape
    pd.testing.assert_frame_equal(c.ranks, HAND_RANKS)
    # rank sums 11, 13, 17, 19: chi2 = 12 / (n k (k+1)) * sum R_j^2 - 3 n (k+1) = 0.1 * 940 - 90 = 4
    rank_sums = HAND_RANKS.sum().to_numpy()
    assert rank_sums.tolist() == [11, 13, 17, 19]
    hand = 12.0 / (n * k * (k + 1)) * np.sum(rank_sums**2) - 3.0 * n * (k + 1)
    assert hand == pytest.approx(4.0)
    independent = stats.friedmanchisquare(*(TABLE[c_].to_numpy() for c_ in TABLE.columns))
    assert c.statistic == pytest.approx(hand) == pytest.approx(independent.statistic)
    # 6 blocks <= EXACT_MAX_BLOCKS, (4!)^6 ≈ 1.9e8 arrangements: exact by the dynamic programme over
    # rank-sum vectors; the asymptotic p-value is kept beside it
    assert c.test.method == "exact" and c.test.arrangements == 24**6
    assert (
        c.test.pvalue_asymptotic
        == pytest.approx(independent.pvalue)
        == pytest.approx(stats.chi2.sf(4.0, k - 1))
    )
    assert c.test.pvalue_asymptotic == pytest.approx(0.2614641, abs=1e-6)
    assert c.pvalue == pytest.approx(float(exact_friedman_p(HAND_RANKS.to_numpy())), abs=1e-12)
    assert not c.significant
    assert c.average_ranks.to_dict() == pytest.approx(
        {"A": 11 / 6, "B": 13 / 6, "C": 17 / 6, "D": 19 / 6}
    )
    assert list(c.average_ranks.index) == ["A", "B", "C", "D"]
    assert c.message is None


def _clear_winner() -> pd.DataFrame:
    """10 blocks: A is 0.3 above the rest everywhere; B, C, D cycle through every order."""
    orders = list(itertools.permutations((0, 1, 2)))
    base = np.linspace(0.5, 0.8, 10)
    rows = [[b + 0.3] + [b + 0.01 * q for q in orders[i % 6]] for i, b in enumerate(base)]
    return pd.DataFrame(rows, columns=list("ABCD"), index=[f"block{i}" for i in range(10)])


@pytest.mark.slow
def test_a_clearly_best_method_ranks_first_and_differs_significantly():
    scores = _clear_winner()
    c = compare_methods(scores, by="detector")
    n, k = scores.shape
    assert c.average_ranks.index[0] == "A" and c.average_ranks["A"] == 1.0
    assert c.significant and c.pvalue < 0.01
    # Wilcoxon: A beats each other method in all 10 blocks -> exact two-sided p = 2 / 2**10; Holm over the
    # 6 pairs multiplies the three smallest (equal) p-values by 6, 5, 4 and keeps them monotone -> 6 / 512
    for other in "BCD":
        assert stats.wilcoxon(scores["A"], scores[other]).pvalue == pytest.approx(2 / 2**10)
        assert c.wilcoxon_holm.loc["A", other] == pytest.approx(6 / 512)
        assert c.wilcoxon_holm.loc[other, "A"] == pytest.approx(6 / 512)
    assert c.wilcoxon_holm.loc["B", "C"] > 0.05
    # Nemenyi: studentized range of the rank difference (Demšar 2006), computed independently here
    avg = scores.rank(axis=1, ascending=False).mean()
    for a, b in itertools.combinations("ABCD", 2):
        q = abs(avg[a] - avg[b]) / np.sqrt(k * (k + 1) / (6 * n))
        expected = stats.studentized_range.sf(q * np.sqrt(2), k, np.inf)
        assert c.nemenyi.loc[a, b] == pytest.approx(expected, rel=1e-6)
    assert (c.nemenyi.loc["A", ["B", "C", "D"]] < 0.05).all()
    assert (c.nemenyi.loc["B", ["C", "D"]] > 0.05).all()


def test_nemenyi_p_values_equal_scikit_posthocs():
    """The Nemenyi matrix is scikit-posthocs' on the same tied ranks, bit for bit (ties included)."""
    sp = pytest.importorskip("scikit_posthocs")
    from clad.report.exact import tied_ranks

    scores = _clear_winner().round(1)  # rounded: some blocks hold ties
    c = compare_methods(scores, by="detector")
    assert c.nemenyi is not None
    expected = sp.posthoc_nemenyi_friedman(tied_ranks(scores.to_numpy()))
    np.testing.assert_array_equal(
        c.nemenyi.loc[list("ABCD"), list("ABCD")].to_numpy(), expected.to_numpy()
    )


@pytest.mark.slow
def test_lower_is_better_reverses_the_ranks():
    c = compare_methods(TABLE, higher_is_better=False)
    pd.testing.assert_frame_equal(c.ranks, 5.0 - HAND_RANKS)
    assert c.average_ranks.index[0] == "D"
    assert c.statistic == pytest.approx(4.0)  # the statistic does not depend on the direction


def test_too_few_blocks_is_a_message_and_a_warning_not_an_exception():
    with pytest.warns(StatisticsWarning, match="only 2 complete block"):
        c = compare_methods(TABLE.iloc[:2], by="detector")
    assert (
        c.statistic is None and c.pvalue is None and c.nemenyi is None and c.wilcoxon_holm is None
    )
    assert "at least 3" in c.message
    assert c.average_ranks.index[0] == "A"  # still shown, for information
    with pytest.warns(StatisticsWarning, match="only 1 detector"):
        c = compare_methods(TABLE[["A"]], by="detector")
    assert c.statistic is None and "at least 2" in c.message


@pytest.mark.slow
def test_two_methods_use_wilcoxon_alone():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a usable comparison issues no warning
        c = compare_methods(_clear_winner()[["A", "B"]], by="strategy")
    assert c.statistic is None and c.nemenyi is None
    assert c.wilcoxon_holm.loc["A", "B"] == pytest.approx(
        2 / 2**10
    )  # one pair: Holm changes nothing
    assert "needs at least 3 strategies" in c.message


@pytest.mark.slow
def test_blocks_with_a_missing_value_are_left_out():
    scores = TABLE.copy()
    scores.loc["b7"] = [0.5, np.nan, 0.4, 0.3]
    c = compare_methods(scores)
    assert c.dropped_blocks == ("b7",) and c.n_blocks == 6
    assert c.statistic == pytest.approx(4.0)


def _results_from_table(table: pd.DataFrame) -> list[RunResult]:
    """Runs whose continual average reproduces ``table`` once averaged over seeds and strategies."""
    out = []
    for b_i, block in enumerate(table.index):
        dataset, scenario = f"data{b_i // 2}", ("aware", "agnostic")[b_i % 2]
        for det in table.columns:
            v = float(table.loc[block, det])
            for strategy, shift in (("naive", -0.02), ("cumulative", 0.02)):
                for seed, noise in ((0, -0.01), (1, 0.01)):
                    out.append(
                        RunResult(
                            dataset,
                            scenario,
                            strategy,
                            det,
                            seed,
                            metrics={
                                "roc_auc": {
                                    "continual_average": v + shift + noise,
                                    "forgetting": 1 - v,
                                }
                            },
                        )
                    )
    out.append(RunResult("data0", "aware", "naive", "A", 2, status="failed", error="boom"))
    return out


@pytest.mark.slow
def test_compare_from_run_results():
    results = _results_from_table(TABLE)
    fine = ("dataset", "scenario")
    scores = score_matrix(results, by="detector", blocks=fine)
    assert scores.shape == (6, 4)
    np.testing.assert_allclose(scores.to_numpy(), TABLE.to_numpy())
    c = compare(results, by="detector", blocks=fine)
    assert c.statistic == pytest.approx(4.0)
    assert c.average_ranks.index[0] == "A"
    # dataset x scenario blocks share datasets: said with the result
    assert any("share dataset data0" in n for n in c.notes)
    # the default blocks are datasets, each the mean of its two scenario settings
    by_dataset = score_matrix(results, by="detector")
    assert list(by_dataset.index) == ["data0", "data1", "data2"]
    np.testing.assert_allclose(
        by_dataset.to_numpy(), TABLE.to_numpy().reshape(3, 2, 4).mean(axis=1)
    )
    assert not any("share" in n for n in compare(results, by="detector").notes)
    # forgetting = 1 - v: lower is better, so the order is the same as for the continual average
    f = compare(results, by="detector", metric="forgetting", blocks=fine)
    assert list(f.average_ranks.index) == list(c.average_ranks.index)
    with pytest.warns(StatisticsWarning, match="only 1 detector"):
        compare([r for r in results if r.detector == "A"], by="detector")
    # strategies over the same blocks: cumulative is 0.04 above naive in every block
    s = compare(results, by="strategy", blocks=fine)
    assert s.average_ranks.to_dict() == {"cumulative": 1.0, "naive": 2.0}


def test_bad_arguments_are_clear_errors():
    from clad.errors import CladValueError

    with pytest.raises(CladValueError, match="by='seed'"):
        score_matrix([], by="seed")
    with pytest.raises(CladValueError, match="blocks"):
        score_matrix([], by="detector", blocks=("detector",))
    with pytest.raises(CladValueError, match="alpha"):
        compare_methods(TABLE, alpha=1.5)
