"""One verdict per comparison: the text, the pair table and the critical-difference diagram agree on
random tables; rankings across concept orders (Kendall's W) in the verdict and the report."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from clad.results import RunResult
from clad.report import StatisticsWarning, compare, compare_methods, comparison_verdict
from clad.report.stats import DIFFER, NO_DIFFERENCE, NOT_TESTED
from clad.report.stats_html import pair_table, statistics_rows
from clad.report.tables import frame_html


def _random_table(rng: np.random.Generator, i: int) -> pd.DataFrame:
    """2-6 methods, 3-15 blocks; a third with ties (one decimal), a quarter with two identical
    methods, effects from none to large (so that every verdict occurs)."""
    k, n = int(rng.integers(2, 7)), int(rng.integers(3, 16))
    effect = rng.choice([0.0, 0.3, 1.0, 3.0])
    values = rng.normal(size=(n, k)) + effect * np.linspace(0, 1, k) + rng.normal(size=(n, 1))
    if i % 3 == 0:
        values = np.round(values, 1)
    if i % 4 == 0 and k >= 2:
        values[:, 1] = values[:, 0]
    return pd.DataFrame(
        values, columns=[f"m{j}" for j in range(k)], index=[f"b{j}" for j in range(n)]
    )


def _named_pairs(sentence: str) -> set[frozenset]:
    return {frozenset(p.split(" vs ")) for p in re.findall(r"(m\d vs m\d)", sentence)}


def _check(c, v) -> str:
    alpha = c.alpha
    pairs = {frozenset(p) for p in v.differing}
    shown, marks = pair_table(v)
    diagram = v.significance("nemenyi") if c.n_methods >= 3 else v.significance("wilcoxon_holm")
    # the omnibus test decides the status
    assert v.status == (DIFFER if c.test.pvalue < alpha else NO_DIFFERENCE)
    assert v.text.startswith(
        "Verdict: " + ("the " if v.status == DIFFER else "no significant difference")
    )
    if v.status != DIFFER:
        # gated: nothing claimed anywhere
        assert not pairs
        assert set(v.pairs["nemenyi"]) <= {NOT_TESTED, ""} and set(v.pairs["wilcoxon_holm"]) <= {
            NOT_TESTED,
            "",
        }
        assert (
            not (shown[["Wilcoxon–Holm", "Nemenyi"]] == DIFFER).any().any()
            and not marks.any().any()
        )
        assert not _named_pairs(v.text) and "Pairs that differ" not in v.text
        assert (diagram.to_numpy() >= alpha).all()
        return "gated"
    # tested: the post-hoc decisions are the p-values against alpha ...
    primary = "nemenyi" if c.n_methods >= 3 else "wilcoxon_holm"
    expected = {
        frozenset((a, b))
        for a, b, p in zip(v.pairs["a"], v.pairs["b"], v.pairs[f"{primary}_p"])
        if p < alpha
    }
    assert pairs == expected
    # ... the text names exactly those pairs ...
    if c.n_methods >= 3:
        named = next(
            (
                s
                for s in v.sentences
                if s.startswith(("Pairs that differ", "No pair differs", "No pair can be named"))
            ),
            None,
        )
        assert named is not None
        nemenyi_part = named.split(" Wilcoxon")[0]
        assert _named_pairs(nemenyi_part) == pairs
        wh = {
            frozenset((a, b))
            for a, b, p in zip(v.pairs["a"], v.pairs["b"], v.pairs["wilcoxon_holm_p"])
            if p < alpha
        }
        if (
            "Holm's correction cannot reach" in named
        ):  # too few blocks for any Holm decision: none is possible
            assert not wh
        else:
            assert _named_pairs(named.split("Holm's correction: ")[1]) == wh
    else:
        assert _named_pairs(v.text) == pairs
    # ... the table marks exactly those pairs ...
    bold = {frozenset(p.split(" vs ")) for p, m in zip(shown["pair"], marks["pair"]) if m}
    assert bold == pairs
    assert {
        frozenset(p.split(" vs "))
        for p, d in zip(shown["pair"], shown["Nemenyi" if c.n_methods >= 3 else "Wilcoxon–Holm"])
        if d == DIFFER
    } == pairs
    # ... and the diagram separates exactly those pairs
    below = {
        frozenset((a, b))
        for a in diagram.index
        for b in diagram.columns
        if a != b and diagram.loc[a, b] < alpha
    }
    assert below == pairs
    return "differ" if pairs else "no pair"


@pytest.mark.slow
def test_text_table_and_diagram_agree_on_500_random_tables():
    rng = np.random.default_rng(2025)
    seen = {"gated": 0, "differ": 0, "no pair": 0}
    methods = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        for i in range(500):
            table = _random_table(rng, i)
            c = compare_methods(table, by="detector")
            if (
                c.test is None
            ):  # every method alike in every block: nothing to test, nothing claimed
                assert c.verdict.status == NOT_TESTED and not c.verdict.differing
                continue
            v = comparison_verdict(c)
            seen[_check(c, v)] += 1
            methods.add(c.test.method)
            if i % 10 == 0:  # the rendered table and the CSV rows say the same
                html = frame_html(*pair_table(v))
                assert (
                    html.count("<strong>differ</strong>")
                    == (v.pairs[["nemenyi", "wilcoxon_holm"]] == DIFFER).sum().sum()
                )
                rows = statistics_rows(c)
                assert rows[0]["verdict"] == v.status
                assert {
                    frozenset((r["a"], r["b"])) for r in rows[1:] if r["verdict"] == DIFFER
                } == {frozenset(p) for p in v.differing}
    # every kind of verdict and every way of computing p occurred
    assert min(seen.values()) >= 10, seen
    assert methods == {"exact", "permutation"}


@pytest.mark.slow
def test_the_diagram_draws_the_verdict():
    from clad.report.cd_diagram import plot_cd

    gated = compare_methods(
        pd.DataFrame({"A": [0.6] * 4, "B": [0.7, 0.7, 0.8, 0.8], "C": [0.8, 0.8, 0.7, 0.7]})
    )
    assert (
        gated.verdict.status == NO_DIFFERENCE and gated.test.pvalue_asymptotic < 0.05
    )  # chi-square would reject
    title = plot_cd(gated).get_title()
    assert "NOT TESTED" in title and "0.0694" in title
    clear = compare_methods(
        pd.DataFrame(
            {
                "A": [0.9, 0.8, 0.85, 0.95, 0.7],
                "B": [0.7, 0.6, 0.65, 0.8, 0.5],
                "C": [0.5, 0.55, 0.6, 0.7, 0.4],
                "D": [0.6, 0.5, 0.62, 0.75, 0.45],
            }
        )
    )
    assert clear.verdict.differing == (("A", "D"), ("A", "C"))
    ax = plot_cd(clear)
    assert "NOT TESTED" not in ax.get_title() and "exact" in ax.get_title()


def _order_runs(table: dict[str, list[float]], datasets=("d",)) -> list[RunResult]:
    """One run per order, method and dataset; CA from ``table`` (order -> one value per method)."""
    runs = []
    for o_i, (order, values) in enumerate(table.items()):
        concepts = ("A", "B", "C")[o_i % 3 :] + ("A", "B", "C")[: o_i % 3]
        for d in datasets:
            for m, v in zip("wxyz", values):
                runs.append(
                    RunResult(
                        d,
                        "s",
                        "naive",
                        m,
                        0,
                        concepts=concepts,
                        order=order,
                        metrics={"roc_auc": {"continual_average": v}},
                    )
                )
    return runs


def test_kendall_w_across_three_orders_of_four_methods_by_hand():
    # per order the methods rank (1 = best): o1: w x y z; o2: x w y z; o3: w y x z
    runs = _order_runs(
        {
            "random:1": [0.9, 0.8, 0.7, 0.6],
            "random:2": [0.8, 0.9, 0.7, 0.6],
            "random:3": [0.9, 0.7, 0.8, 0.6],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        c = compare(runs, by="detector")
    o = c.orders
    # rank sums 4, 6, 8, 12, mean 7.5: S = 35; W = 12 S / (m^2 (n^3 - n)) = 420 / 540
    assert o.n_orders == 3 and o.kendall_w == pytest.approx(7 / 9)
    assert (
        o.best == "w"
        and o.best_orders == 2
        and o.order_dependent
        and o.best_share == pytest.approx(2 / 3)
    )
    v = c.verdict
    assert v.best == "w" and v.order_dependent is True
    assert "Kendall's W = 0.778" in v.text and "w is best in 2 of 3: order-dependent" in v.text
    # the same best in every order: not order-dependent
    same = compare(
        _order_runs({"o1": [0.9, 0.8, 0.7, 0.6], "o2": [0.9, 0.7, 0.8, 0.6]}, ("d1", "d2", "d3")),
        by="detector",
    )
    assert (
        same.orders.best_orders == 2
        and not same.orders.order_dependent
        and same.verdict.order_dependent is False
    )
    assert "in every order" in same.verdict.text


@pytest.mark.slow
def test_kendall_w_in_the_report_of_a_spec_with_three_random_orders(tmp_path):
    from clad.engine.benchmark import run_spec
    from scipy.stats import rankdata

    from clad.report import make_report
    from clad.report.exact import kendall_w
    from clad.results import load_results

    spec = {
        "name": "orders",
        "seeds": 1,
        "orders": {"random": 3},
        "strategies": ["naive"],
        "datasets": [
            {"name": "synthetic", "n_concepts": 3, "n_features": 3, "n_train": 60, "n_test": 40}
        ],
        "scenarios": ["concept_incremental"],
        "detectors": [
            {"name": "iforest", "n_estimators": 10},
            {"name": "ecod"},
            {"name": "lof", "n_neighbors": 5},
        ],
    }
    run_spec(spec, tmp_path / "out")
    runs = load_results(tmp_path / "out")
    # by hand from the runs: each order's CA per detector, ranked (1 = best), then W
    orders = sorted({r.order for r in runs})
    assert len(orders) == 3
    dets = sorted({r.detector for r in runs})
    ca = np.array(
        [
            [
                next(
                    r.metrics["roc_auc"]["continual_average"]
                    for r in runs
                    if r.order == o and r.detector == d
                )
                for d in dets
            ]
            for o in orders
        ]
    )
    hand = kendall_w(rankdata(-ca, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        report = make_report(runs, tmp_path / "report", by=("detector",))
    c = report.comparisons[0]
    assert c.orders is not None and c.orders.kendall_w == pytest.approx(hand)
    page = report.all_text()
    assert f"over 3 concept orders Kendall&#x27;s W = {hand:.3g}" in page
    csv = pd.read_csv(report.tables["statistics"])
    assert csv.loc[0, "kendall_w_orders"] == pytest.approx(hand)
    best = c.average_ranks.index[0]
    per_order_best = [dets[int(np.argmax(row))] for row in ca]
    assert csv.loc[0, "best_share_orders"] == pytest.approx(per_order_best.count(best) / 3)
    assert bool(csv.loc[0, "order_dependent"]) == (per_order_best.count(best) < 3)
