"""Concept orders as a factor of their own: fixed permutations from an order seed, every seed runs
every order, and the report draws every figure plus the order-sensitivity table."""

import json

import pytest

from clad.engine.spec import parse_spec
from clad.errors import SpecError

from tests.runner_helpers import synthetic

SPEC = {
    "name": "orders",
    "seeds": 2,
    "orders": {"random": 3},
    "strategies": ["naive", "cumulative"],
    "datasets": [synthetic(n_concepts=3)],
    "scenarios": ["concept_incremental"],
    "detectors": [{"name": "iforest", "n_estimators": 10}],
}


def test_three_fixed_orders_each_run_with_every_seed():
    spec = parse_spec(SPEC)
    assert len(spec.configs) == 2 * 3 * 2  # strategies x orders x seeds
    naive = [c for c in spec.configs if c.strategy.name == "naive"]
    assert len(naive) == 6 and len({c.dataset.display for c in naive}) == 1
    by_seed = {s: sorted(c.dataset.params["order"] for c in naive if c.seed == s) for s in (0, 1)}
    assert by_seed[0] == by_seed[1] and len(set(by_seed[0])) == 3
    # the permutations come from order_seed, not from the run seed
    other = parse_spec({**SPEC, "order_seed": 1})
    assert {c.dataset.params["order"] for c in other.configs}.isdisjoint(by_seed[0])
    assert {c.dataset.params["order"] for c in parse_spec(SPEC).configs} == set(by_seed[0])


@pytest.mark.parametrize(
    "orders, message",
    [
        ({"random": 0}, "orders.random: 0"),
        ({"given": 2}, "orders.given: 2"),
        ({}, "an empty table"),
    ],
)
def test_bad_order_tables(orders, message):
    with pytest.raises(SpecError, match=message):
        parse_spec({**SPEC, "orders": orders})


def test_order_seed_needs_a_table():
    with pytest.raises(SpecError, match="order_seed: only used with a table"):
        parse_spec({**SPEC, "orders": ["given"], "order_seed": 3})


@pytest.mark.slow
def test_runs_over_orders_report_every_figure_and_the_sensitivity_table(tmp_path):
    from clad.engine.benchmark import run_spec
    from clad.report import make_report
    from clad.results import load_results

    run_spec(SPEC, tmp_path / "out")
    runs = load_results(tmp_path / "out")
    naive = [r for r in runs if r.strategy == "naive"]
    assert len(naive) == 6
    # the order is stored with each run: the field, the config, and the concepts learned in that order
    orders = {r.order for r in naive}
    assert len(orders) == 3 and all(o.startswith("random:") for o in orders)
    perms = {s: {(r.order, r.concepts) for r in naive if r.seed == s} for s in (0, 1)}
    assert perms[0] == perms[1] and len({c for _, c in perms[0]}) == 3
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {json.dumps(r["config"]).count(r["order"]) > 0 for r in doc["runs"]} == {True}

    report = make_report(runs, tmp_path / "report")
    names = list(report.figures)
    from clad.report.figure_data import heatmaps

    panels, problems = heatmaps(runs)
    assert len(panels) == 2 * 3 and not problems  # one R heatmap per strategy and order ...
    assert sum("heatmap" in n for n in names) >= 1  # ... drawn as small multiples
    assert sum("curves" in n for n in names) == 1 and sum("forgetting" in n for n in names) == 1
    page = report.all_text()
    assert "Order sensitivity" in page and "nothing to show" not in page
    table = (tmp_path / "report" / "order_sensitivity.csv").read_text()
    assert table.count("\n") == 1 + 2  # naive and cumulative
    assert "## Order sensitivity" in (tmp_path / "out" / "summary.md").read_text()
    assert (tmp_path / "out" / "order_sensitivity.csv").is_file()
