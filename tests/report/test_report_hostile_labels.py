"""Labels a spec may hold, however hostile, reach the report's pages and figures as text only: every
block gets a page of its own (labels whose file names would coincide included), a figure carries its
labels as data (never inside a Vega expression, and the figure's script escapes ``</`` and the line
separators), and in headless Chromium every figure of every page is drawn with no console error and
no injected script run, every link resolving."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest

from clad.metrics import learned_at, summarize
from clad.report import make_report
from clad.report.charts import curves_chart, forgetting_chart
from clad.report.charts_heatmap import heatmap_chart
from clad.report.cost import cost_chart
from clad.results import RunResult

from tests.browser_helpers import browser, needs_browser, page_figures  # noqa: F401

#: names an adversarial user might give a data set, detector, strategy or concept
HOSTILE = (
    "if",
    "datum",
    "</script><script>window.clad_injected = 1</script>",
    "a\u2028b",
    "c\u2029d",
    "../x",
    "x" * 10_000,
    "שלום עולם",
    "e\u0301\u0301\u0308",
    "'\"\\`${1}",
    "null",
    "this",
)


def _runs(datasets, detectors, strategies, concepts, seeds=(0, 1)):
    rng = np.random.default_rng(0)
    out = []
    k = len(concepts)
    for ds in datasets:
        for det in detectors:
            for strategy in strategies:
                for seed in seeds:
                    R = np.clip(0.6 + rng.normal(0, 0.08, (k, k)), 0, 1)
                    out.append(
                        RunResult(
                            ds,
                            "concept_incremental",
                            strategy,
                            det,
                            seed,
                            concepts,
                            concepts,
                            R={"roc_auc": R},
                            metrics={"roc_auc": summarize(R, learned_at(concepts, concepts))},
                            timings={"fit": [0.01] * k, "score": [0.002] * k},
                            chance={"roc_auc": [0.5] * k},
                            run_id=f"{len(out)}",
                        )
                    )
    return out


def _report(runs, out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_report(runs, out, spec={"name": "labels"})


def _block_links(index: Path) -> list[str]:
    return [
        unquote(h)
        for h in re.findall(r"<a href='(blocks/[^']+)'>", index.read_text(encoding="utf-8"))
    ]


COLLIDING = ("set a", "set-a", "set/a", "データ", "数据", "x" * 130 + "a", "x" * 130 + "b", "Set-A")


def test_every_block_gets_its_own_page_when_labels_share_a_file_name(tmp_path):
    report = _report(
        _runs(COLLIDING, ("iforest",), ("naive",), ("A", "B"), seeds=(0,)), tmp_path / "rep"
    )
    pages = [p for p in report.pages if p.startswith("blocks/")]
    assert len(pages) == len(COLLIDING)  # one page per block, none overwriting another
    assert len({p.lower() for p in pages}) == len(
        pages
    )  # distinct where letter case is ignored too
    assert len(list((tmp_path / "rep" / "blocks").glob("*.html"))) == len(COLLIDING)
    links = list(dict.fromkeys(_block_links(report.index)))
    assert sorted(links) == sorted(pages)
    for block, link in zip(
        COLLIDING, links
    ):  # the first page lists the blocks in order: each opens its own
        text = (tmp_path / "rep" / link).read_text(encoding="utf-8")
        assert f"block {block}:" in text, (block, link)
    figures = [
        n.lower() for n in report.figures
    ]  # 'set-a' and 'Set-A' figures: files apart, letter case aside
    assert len(set(figures)) == len(figures)


def _expressions(node):
    """Every Vega expression of a specification (calculate, filter, test), and every sort."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("calculate", "filter", "test", "expr", "labelExpr") and isinstance(
                value, str
            ):
                yield key, value
            elif key == "sort":
                yield key, value
            else:
                yield from _expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _expressions(item)


def test_labels_reach_figures_as_data_only(tmp_path):
    from clad.report.figure_data import forgetting_table, heatmap_data, learning_curves
    from clad.report.cost import cost_table
    from clad.report.stream import stream_chart
    from clad.report.timeseries import trace_chart

    detectors, strategies = ("if", "ZZ1 a\u2028b", "ZZ2 </script>"), ("ZZ3 datum", "ZZ4 c\u2029d")
    concepts = ("ZZ5 a\u2028b", "ZZ6 if", "ZZ7")  # every label but "if" marked ZZ, to be found
    runs = _runs(("d",), detectors, strategies, concepts)
    panels = [
        heatmap_data([r for r in runs if (r.strategy, r.detector) == (s, d)], "roc_auc")
        for s in strategies
        for d in detectors
    ]
    specs = [
        heatmap_chart(panels)[0],
        curves_chart(learning_curves(runs), "t")[0],
        forgetting_chart(forgetting_table(runs), "t")[0],
        cost_chart(cost_table(runs), "t")[0],
        trace_chart(
            {
                "concept": concepts[0],
                "series": detectors[2],
                "bucket": 1,
                "values": [0.0, 1.0],
                "ranges": [[0, 0]],
                "steps": list(concepts),
                "scores": [[0.1, 0.9]] * 3,
                "thresholds": [0.5] * 3,
            },
            strategies[0],
        )[0],
        stream_chart(
            pd.DataFrame(
                {
                    "strategy": [strategies[1]] * 2,
                    "detector": [detectors[1]] * 2,
                    "kind": [concepts[1], concepts[0]],
                    "rows_seen": [1, 2],
                    "mean": [0.5, 0.6],
                    "std": [0.1, 0.1],
                }
            ),
            "t",
            "kind",
            "y",
            line="kind",
            boundaries=[1],
        )[0],
    ]
    for spec in specs:
        for key, value in _expressions(spec):
            if key == "sort":  # a list of labels in a sort would become an expression
                assert not isinstance(value, list), value
            else:
                assert "ZZ" not in value and "'if'" not in value and '"if"' not in value, value
    report = _report(runs, tmp_path / "rep")
    scripts = [p for n, p in report.figures.items() if n.endswith(".js")]
    assert len(scripts) >= 4
    for path in scripts:
        text = path.read_text(encoding="utf-8")
        assert (
            "</" not in text and "\u2028" not in text and "\u2029" not in text
        )  # escaped in the script
        assert "<\\/script>" in text or path.name.startswith(("cost", "cd"))


# -- in a real browser -----------------------------------------------------------------------------


@pytest.mark.slow
@needs_browser
def test_hostile_names_give_distinct_pages_and_every_figure_drawn(browser, tmp_path):
    datasets = ("if", "set a", "set/a", "../x", "x" * 10_000, "a\u2028b", "</script><b>x</b>")
    runs = _runs(
        datasets,
        ("datum", "x" * 10_000, "</script><script>window.clad_injected = 1</script>"),
        ("if", "שלום עולם"),
        ("a\u2028b", "c\u2029d", "e\u0301\u0301\u0308"),
    )
    report = _report(runs, tmp_path / "rep")
    blocks = [p for p in report.pages if p.startswith("blocks/")]
    assert len(blocks) == len(datasets)
    drawn, failed = 0, []
    for name, path in report.pages.items():
        state = page_figures(browser, path)
        drawn += sum("drawn" in c for _, c, _ in state)
        failed += [(name, ident, text) for ident, c, text in state if "drawn" not in c]
        errors = [
            e["message"][:300]
            for e in browser.get_log("browser")
            if e.get("level") in ("SEVERE", "ERROR")
        ]
        assert not errors, (name, errors)
        assert browser.execute_script(
            "return window.clad_injected === undefined"
        )  # no script of a label ran
        hrefs = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
        )
        for href in hrefs:
            if href.startswith("file://"):
                target = Path(unquote(href[len("file://") :].split("#")[0]))
                assert target.exists(), (name, href[:200])
    assert not failed, failed
    assert drawn >= 4 * len(datasets)  # heatmap, curves, forgetting and cost on each block page


def _hostile_spec(folder: Path) -> Path:
    """A spec whose data set, detector, strategy and concept names come from :data:`HOSTILE`: a table
    whose concept column holds hostile names, read twice under labels sharing a file name."""
    import json

    import pandas as pd

    rng = np.random.default_rng(0)
    concepts = [
        "if",
        "a\u2028b",
        "</script><script>window.clad_injected = 1</script>",
        "../x",
        "x" * 10_000,
    ]
    rows = []
    for c in concepts:
        for k in range(60):
            rows.append(
                {
                    "concept": c,
                    "f0": rng.normal() + (3 if k % 10 == 0 else 0),
                    "f1": rng.normal(),
                    "label": int(k % 10 == 0),
                }
            )
    frame = pd.DataFrame(rows)
    frame.to_csv(folder / "hostile1.csv", index=False)
    frame.assign(f1=frame["f1"] * 2).to_csv(
        folder / "hostile2.csv", index=False
    )  # another data set
    q = json.dumps  # TOML basic strings take JSON's escapes
    dataset = (
        'name = "table"\nfile = "hostile{}.csv"\nlabel_column = "label"\ndata_dir = '
        + q(str(folder))
        + "\n"
    )
    text = (
        f'name = "hostile"\nbase_metrics = ["roc_auc", "f1"]\nseeds = 1\n\n'
        f"[[datasets]]\n{dataset.format(1)}label = {q('set a')}\n\n"
        f"[[datasets]]\n{dataset.format(2)}label = {q('set/a ' + HOSTILE[2])}\n\n"
        '[[scenarios]]\nname = "concept_incremental"\n\n'
        f'[[strategies]]\nname = "naive"\nlabel = {q("datum")}\n\n'
        f'[[strategies]]\nname = "cumulative"\nlabel = {q("s" * 10_000)}\n\n'
        f'[[detectors]]\nname = "hbos"\nlabel = {q("if")}\n\n'
        f'[[detectors]]\nname = "hbos"\nn_bins = 5\nlabel = {q(HOSTILE[3] + " " + HOSTILE[7] + " " + HOSTILE[8])}\n'
    )
    path = folder / "hostile.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
@needs_browser
def test_a_grid_of_hostile_names_run_and_reported_end_to_end(browser, tmp_path):
    from clad.cli import main

    spec = _hostile_spec(tmp_path)
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out)]) == 0
    pages = sorted((out / "report" / "blocks").glob("*.html"))
    assert len(pages) == 2  # 'set a' and 'set/a ...' share a slug: two pages all the same
    drawn = 0
    for path in [out / "report" / "index.html", *pages]:
        state = page_figures(browser, path)
        assert all("drawn" in c for _, c, _ in state), [
            (i, t) for i, c, t in state if "drawn" not in c
        ]
        drawn += len(state)
        errors = [
            e["message"][:300]
            for e in browser.get_log("browser")
            if e.get("level") in ("SEVERE", "ERROR")
        ]
        assert not errors, (path.name, errors)
        assert browser.execute_script("return window.clad_injected === undefined")
        for href in browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
        ):
            if href.startswith("file://"):
                assert Path(unquote(href[len("file://") :].split("#")[0])).exists(), href[:200]
    assert drawn >= 2 * 4


@pytest.mark.slow
@needs_browser
def test_every_learning_curve_names_its_lines_in_a_legend(browser, tmp_path):
    """The curves' ± std bands share the lines' colours: one legend names every configuration (a
    band whose colour had no legend once hid the lines' legend as well)."""
    runs = _runs(("d",), ("iforest", "lof"), ("naive", "replay"), ("A", "B", "C"))
    report = _report(runs, tmp_path / "report")
    page = next(p for name, p in report.pages.items() if name.startswith("blocks/"))
    page_figures(browser, page)
    legends = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.chart[data-chart*=\"curves\"]'))"
        ".map(e => Array.from(e.querySelectorAll('.role-legend-label text')).map(t => t.textContent))"
    )
    assert legends, "no learning-curves figure on the block page"
    for labels in legends:
        assert {"naive + iforest", "replay + lof"} <= set(labels), labels
