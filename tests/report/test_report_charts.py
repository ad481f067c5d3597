"""The block pages' figures drawn by the browser (:mod:`clad.report.charts`): what each Vega-Lite
specification holds, checked against small tables written by hand; and that a report keeps a
figure whose content did not change (its file is not rewritten). That the browser draws them is
checked in Chromium by ``tests/report/test_report_browser.py``."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from clad import metrics
from clad.report import make_report
from clad.report.figure_data import HeatmapData
from clad.report.charts import curves_chart, forgetting_chart
from clad.report.charts_heatmap import heatmap_chart
from clad.report.cost import cost_chart
from clad.results import RunResult


def _heatmap(strategy="naive", detector="iforest", at_chance=None):
    # 3 steps x 3 test concepts; concept C is never learned; B is learned at step 1 (index 1)
    mean = np.array([[0.9, 0.5, 0.2], [0.8, 0.95, np.nan], [0.7, 0.6, 0.3]])
    std = np.array([[0.01, 0.02, 0.03], [0.04, 0.05, np.nan], [0.06, 0.07, 0.08]])
    return HeatmapData(
        "d",
        "s",
        strategy,
        detector,
        "roc_auc",
        mean,
        std,
        np.full((3, 3), 2),
        ("A", "B", "A2"),
        ("A", "B", "C"),
        np.array([0, 1, -1]),
        (0, 1),
        at_chance=at_chance,
    )


def _lookups(spec):
    """Each lookup transform's table by its key (the labels a figure carries as data)."""
    return {t["lookup"]: t["from"]["data"]["values"] for t in spec["transform"] if "lookup" in t}


def _cells(spec):
    panels = {p["p"]: p for p in _lookups(spec)["p"]}
    return {
        (panels[v["p"]]["s"], panels[v["p"]]["d"], v["i"], v["j"]): v
        for v in spec["data"]["values"]
    }


def test_heatmap_cells_carry_value_state_and_chance():
    chance = np.zeros((3, 3), bool)
    chance[0, 1] = True
    spec, height = heatmap_chart([_heatmap(at_chance=chance), _heatmap("cumulative")])
    cells = _cells(spec)
    assert len(cells) == 2 * 9 and height > 0
    a = cells[("naive", "iforest", 0, 0)]
    assert (a["m"], a["e"], a["n"], a["k"]) == (0.9, 0.01, 2, 1)  # learned here
    learned = {(i, j): v["k"] for (s, _, i, j), v in cells.items() if s == "naive"}
    # B is learned at step 1: future at step 0, learned here at 1, learned after; C is never learned
    assert [learned[(i, 1)] for i in range(3)] == [2, 1, 0] and {
        learned[(i, 2)] for i in range(3)
    } == {3}
    na = cells[("naive", "iforest", 1, 2)]
    assert "m" not in na and "e" not in na  # NaN is no JSON number: the cell has no value
    assert [k for k, v in cells.items() if v.get("c")] == [("naive", "iforest", 0, 1)]
    json.dumps(spec, allow_nan=False)  # valid JSON: no NaN anywhere
    derived = {t["as"]: t["calculate"] for t in spec["transform"] if "calculate" in t}
    tables = _lookups(spec)  # labels are data, looked up by position: never inside an expression
    assert tables["i"] == [
        {"i": 0, "step": "0: A"},
        {"i": 1, "step": "1: B"},
        {"i": 2, "step": "2: A2"},
    ]
    assert tables["j"] == [
        {"j": 0, "concept": "A"},
        {"j": 1, "concept": "B"},
        {"j": 2, "concept": "C"},
    ]
    assert [(p["panel"], p["si"], p["di"]) for p in tables["p"]] == [
        ("naive + iforest", 0, 0),
        ("cumulative + iforest", 1, 0),
    ]
    assert set(derived) == {"state", "mean", "std", "chance", "text", "light"}
    assert derived["state"] == '["learned", "learned here", "future", "never learned"][datum.k]'
    assert (
        "format(datum.m, '.2f')" in derived["text"]
        and "'\\n±' + format(datum.e, '.2f')" in derived["text"]
    )
    # strategies in rows and detectors in columns: every pair is a panel
    assert spec["facet"]["row"]["field"] == "s" and spec["facet"]["column"]["field"] == "d"
    layers = spec["spec"]["layer"]
    assert any(layer.get("transform") == [{"filter": "datum.c"}] for layer in layers)
    assert any(layer["mark"]["type"] == "text" for layer in layers)  # numbers written: few panels


def test_heatmap_of_many_panels_is_colour_only_and_wraps():
    items = [_heatmap(f"s{k}", "d") for k in range(30)]
    spec, _ = heatmap_chart(items)
    assert "columns" in spec and spec["facet"]["field"] == "panel"
    assert not any(
        layer["mark"]["type"] == "text" for layer in spec["spec"]["layer"]
    )  # over 24 panels
    assert spec["spec"]["width"] == 3 * 14  # small cells


def test_curves_chart_holds_means_bands_and_chance():
    rows = []
    for kind in ("seen", "all"):
        for step, concept, m, s in ((0, "A", 0.9, 0.1), (1, "B", 0.8, np.nan)):
            rows.append(
                {
                    "dataset": "d",
                    "scenario": "s",
                    "strategy": "naive",
                    "detector": "x",
                    "base_metric": "f1",
                    "kind": kind,
                    "step": step,
                    "concept": concept,
                    "mean": m,
                    "std": s,
                    "chance": 0.25,
                }
            )
    spec, _ = curves_chart(pd.DataFrame(rows), "t")
    values = spec["data"]["values"]
    seen = [
        v
        for v in values
        if v["config"] == "naive + x" and v["panel"].startswith("average over concepts seen")
    ]
    assert [(v["step"], v["mean"], v["lo"], v["hi"]) for v in seen] == [
        ("0: A", 0.9, 0.8, 1.0),
        ("1: B", 0.8, None, None),
    ]
    chance = [v for v in values if v["config"] == "chance"]
    assert len(chance) == 4 and {v["mean"] for v in chance} == {0.25}
    assert spec["spec"]["encoding"]["x"]["sort"] == {
        "field": "st",
        "op": "min",
    }  # steps in order, by number
    assert [v["st"] for v in seen] == [0, 1]


def test_forgetting_chart_marks_zero_and_keeps_error_bars():
    table = pd.DataFrame(
        {
            "dataset": "d",
            "scenario": "s",
            "strategy": ["forgets", "keeps"],
            "detector": "x",
            "base_metric": "roc_auc",
            "concept": "A",
            "mean": [0.3, 0.0],
            "std": [0.1, np.nan],
        }
    )
    spec, _ = forgetting_chart(table, "t")
    v = {d["config"]: d for d in spec["data"]["values"]}
    assert (v["forgets + x"]["lo"], v["forgets + x"]["hi"], v["forgets + x"]["zero"]) == (
        pytest.approx(0.2),
        0.4,
        False,
    )
    assert v["keeps + x"]["zero"] and v["keeps + x"]["lo"] is None


def test_cost_chart_stacks_fit_and_score():
    table = pd.DataFrame(
        {
            "strategy": ["naive"],
            "detector": ["x"],
            "fit_seconds_mean": [0.2],
            "fit_seconds_std": [0.01],
            "score_seconds_mean": [0.05],
            "score_seconds_std": [np.nan],
            "peak_memory_mb_mean": [12.5],
            "peak_memory_mb_std": [1.0],
        }
    )
    spec, _ = cost_chart(table, "t")
    left, right = spec["hconcat"]
    assert [(d["part"], d["seconds"], d["total"]) for d in left["data"]["values"]] == [
        ("fit", 0.2, "0.25 s"),
        ("score", 0.05, "0.25 s"),
    ]
    assert right["data"]["values"] == [
        {"config": "naive + x", "mb": 12.5, "std": 1.0, "text": "12.5 MB", "ci": 0}
    ]


def _runs(shift=0.0):
    out = []
    for strategy in ("naive", "cumulative"):
        for seed in (0, 1):
            R = np.clip(np.array([[0.9, 0.5], [0.7, 0.8]]) + shift + 0.01 * seed, 0, 1)
            t = metrics.learned_at(("A", "B"), ("A", "B"))
            out.append(
                RunResult(
                    "d",
                    "s",
                    strategy,
                    "x",
                    seed,
                    ("A", "B"),
                    ("A", "B"),
                    R={"roc_auc": R},
                    metrics={"roc_auc": metrics.summarize(R, t)},
                    timings={"fit": [0.1, 0.2], "score": [0.01, 0.01]},
                    run_id=f"{strategy}{seed}",
                )
            )
    return out


def test_a_second_report_rewrites_only_the_figures_whose_content_changed(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = make_report(_runs(), tmp_path, stat_metrics=())
        charts = sorted(n for n in first.figures if n.endswith(".js"))
        assert charts and first.drawn >= len(charts)
        stamp = {n: (tmp_path / "figures" / n).stat().st_mtime_ns for n in charts}
        again = make_report(_runs(), tmp_path, stat_metrics=())
        assert again.drawn == 0 and again.reused == len(again.figures)
        assert {n: (tmp_path / "figures" / n).stat().st_mtime_ns for n in charts} == stamp
        changed = make_report(
            _runs(shift=-0.1), tmp_path, stat_metrics=()
        )  # new values: the figures of R change
    rewritten = [n for n in charts if (tmp_path / "figures" / n).stat().st_mtime_ns != stamp[n]]
    assert any(n.startswith("heatmap__") for n in rewritten) and changed.drawn >= len(rewritten)


def _bars_in_ranks(spec):
    """The bars of a CD chart as (lowest, highest) average ranks: the thick rules, mapped back from pixels."""
    lines = spec["layer"][0]["data"]["values"]
    ticks = sorted(
        {v["x"] for v in lines if v["w"] == 1 and v["y2"] - v["y"] == 5}
    )  # one per rank 1..k

    def to_rank(x):
        return 1 + (x - ticks[0]) * (len(ticks) - 1) / (ticks[-1] - ticks[0])

    return sorted(
        (round(to_rank(v["x"] + 4), 6), round(to_rank(v["x2"] - 4), 6))
        for v in lines
        if v["w"] == 3
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cd_chart_bars_are_the_cliques_scikit_posthocs_draws(seed):
    import matplotlib

    matplotlib.use("Agg")
    import scikit_posthocs as sp
    from matplotlib import pyplot as plt

    from clad.report import compare_methods
    from clad.report.cd_diagram import cd_chart, cd_significance
    from clad.report.posthoc import critical_difference

    rng = np.random.default_rng(seed)
    scores = pd.DataFrame(rng.random((12, 6)) + np.linspace(0, 0.6, 6), columns=list("ABCDEF"))
    c = compare_methods(scores)
    assert c.verdict.posthoc_tested
    spec, height = cd_chart(c, cd=critical_difference(c.n_blocks, c.n_methods, c.alpha))
    sig, used = cd_significance(c)
    fig, ax = plt.subplots()
    drawn = sp.critical_difference_diagram(c.average_ranks, sig, alpha=c.alpha, ax=ax)
    expected = sorted(
        (round(min(b.get_xdata()), 6), round(max(b.get_xdata()), 6))
        for bars in drawn["crossbars"]
        for b in bars
    )
    plt.close(fig)
    ours = _bars_in_ranks(spec)
    assert len(ours) == len(expected) and np.allclose(ours, expected, atol=1e-3), (ours, expected)
    texts = [t["t"] for layer in spec["layer"][2:] for t in layer["data"]["values"]]
    assert all(f"{m} ({c.average_ranks[m]:.2f})" in texts for m in "ABCDEF") and used == "Nemenyi"
    assert any(t.startswith("CD = ") for t in texts) and height > 0


def test_cd_chart_not_tested_draws_one_grey_bar():
    from clad.report import compare_methods
    from clad.report.cd_diagram import cd_chart

    scores = pd.DataFrame(
        {"A": [0.5, 0.6, 0.4, 0.55], "B": [0.52, 0.58, 0.41, 0.56], "C": [0.49, 0.61, 0.42, 0.54]}
    )
    c = compare_methods(scores)
    assert not c.verdict.posthoc_tested
    spec, _ = cd_chart(c)
    bars = [v for v in spec["layer"][0]["data"]["values"] if v["w"] == 3]
    assert (
        len(bars) == 1
        and bars[0]["c"] == "#9a9a9a"
        and "NOT TESTED" in " ".join(spec["title"]["text"])
    )


# -- what the figures' data costs: the same numbers without the work they do not show ---------------


def _seeded_runs(n_seeds=5):
    out = []
    rng = np.random.default_rng(7)
    for strategy in ("naive", "cumulative"):
        for seed in range(n_seeds):
            R = np.clip(
                np.array([[0.9, 0.5, 0.55], [0.7, 0.8, 0.5], [0.6, 0.7, 0.85]])
                + rng.normal(0, 0.03, (3, 3)),
                0,
                1,
            )
            R[0, 2] = 0.5 + rng.normal(0, 0.001)  # a cell at its chance level
            t = metrics.learned_at(("A", "B", "C"), ("A", "B", "C"))
            out.append(
                RunResult(
                    "d",
                    "s",
                    strategy,
                    "x",
                    seed,
                    ("A", "B", "C"),
                    ("A", "B", "C"),
                    R={"roc_auc": R},
                    metrics={"roc_auc": metrics.summarize(R, t)},
                    chance={"roc_auc": [0.5] * 3},
                    run_id=f"{strategy}{seed}",
                )
            )
    return out


def test_curves_and_forgetting_without_intervals_keep_every_other_number():
    from clad.report.figure_data import forgetting_table, learning_curves

    runs = _seeded_runs()
    for table in (learning_curves, forgetting_table):
        full, light = table(runs), table(runs, with_intervals=False)
        assert full["ci_low"].notna().any() and light[["ci_low", "ci_high"]].isna().all().all()
        others = [c for c in full.columns if c not in ("ci_low", "ci_high")]
        pd.testing.assert_frame_equal(full[others], light[others])


def test_chance_marks_equal_the_interval_of_every_cell():
    """The heatmap's at-chance cells (intervals computed only where the chance level lies within a
    cell's values) equal the rule applied to every cell with its own interval."""
    from clad.report.chance import CHANCE_TOLERANCE
    from clad.report.figure_data import heatmaps
    from clad.report.describe import interval

    runs = _seeded_runs()
    for h in heatmaps(runs)[0]:
        mine = [r for r in runs if r.strategy == h.strategy]
        stack = np.stack([r.R["roc_auc"] for r in mine])
        expected = np.zeros(stack.shape[1:], bool)
        for i in range(3):
            for j in range(3):
                lo, hi = interval(stack[:, i, j])
                expected[i, j] = lo - CHANCE_TOLERANCE <= 0.5 <= hi + CHANCE_TOLERANCE
        assert np.array_equal(h.at_chance, expected) and expected[0, 2], (
            h.strategy,
            h.at_chance,
            expected,
        )
