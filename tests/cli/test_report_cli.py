"""`clad run` on a small grid, then `clad report DIR`: the page, the PNGs and the tables."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser

import numpy as np
import pytest

from clad.cli import main

from tests.runner_helpers import spec_toml, synthetic

SPEC = spec_toml(
    name="report-check",
    base_metrics=["roc_auc"],
    seeds=2,
    strategies=["naive", "cumulative"],
    datasets=[synthetic(n_concepts=3, n_features=4, n_train=120, n_test=80)],
    scenarios=[{"name": "concept_aware"}, {"name": "concept_incremental"}],
    detectors=[{"name": "iforest", "n_estimators": 10}, {"name": "lof", "n_neighbors": 10}],
)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images: list[dict] = []
        self.tables: list[list[str]] = []  # the column headers of each table
        self.headings: list[str] = []
        self.sections: list[str] = []
        self._in_heading = False
        self._in_th = self._in_thead = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs)
        elif tag == "table":
            self.tables.append([])
        elif tag == "thead":
            self._in_thead = True
        elif tag == "th" and self._in_thead:
            self._in_th = True
            self.tables[-1].append("")
        elif tag == "section":
            self.sections.append(attrs.get("id"))
        elif tag in ("h2", "h3"):
            self._in_heading = True
            self.headings.append("")

    def handle_endtag(self, tag):
        if tag in ("h2", "h3"):
            self._in_heading = False
        elif tag == "th":
            self._in_th = False
        elif tag == "thead":
            self._in_thead = False

    def handle_data(self, data):
        if self._in_heading:
            self.headings[-1] += data
        if self._in_th:
            self.tables[-1][-1] += data


def _png(data: bytes) -> np.ndarray:
    import matplotlib.image

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return matplotlib.image.imread(io.BytesIO(data), format="png")


def _pages(report) -> dict:
    """Every page of a report folder: path relative to it -> text (the first page first)."""
    paths = [
        report / "index.html",
        *sorted(p for p in report.rglob("*.html") if p.name != "index.html" or p.parent != report),
    ]
    return {str(p.relative_to(report)): p.read_text(encoding="utf-8") for p in paths}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    spec = d / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    out = d / "out"
    assert main(["run", str(spec), "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out)]) == 0
    return out


@pytest.mark.slow
def test_report_writes_page_pngs_and_tables(finished_run):
    report = finished_run / "report"
    names = sorted(p.name for p in (report / "figures").iterdir())
    pngs = sorted((report / "figures").glob("*.png"))  # the statistics' and cost-quality figures
    # naive and cumulative never read the concept id: concept_aware and concept_incremental are one
    # computation, drawn once (labelled with both): one figure of heatmaps (2 strategies x 2 detectors),
    # one of curves and one of forgetting, drawn by the browser
    assert sum(n.startswith("heatmap__") for n in names) == 1
    assert "heatmap__synthetic__concept_aware-concept_incremental__roc_auc.js" in names
    assert sum("curves" in n for n in names) == 1
    assert sum("forgetting" in n for n in names) == 1
    for p in pngs:
        img = _png(p.read_bytes())
        h, w = img.shape[:2]
        assert 150 <= h <= 3000 and 250 <= w <= 3000, (p.name, img.shape)
        assert img.std() > 0.05  # not a blank canvas
    for name in (
        "leaderboard.csv",
        "leaderboard.md",
        "leaderboard.tex",
        "statistics.csv",
        "index.html",
    ):
        assert (report / name).stat().st_size > 0


@pytest.mark.slow
def test_report_pages_are_complete_and_show_every_figure(finished_run):
    report = finished_run / "report"
    pages = _pages(report)
    assert set(pages) >= {
        "index.html",
        "statistics.html",
        "leaderboard.html",
        "details.html",
        "blocks/synthetic.html",
    }
    text = "\n".join(pages.values())
    page = _Page()
    page.feed(text)
    assert set(page.sections) >= {
        "leaderboard",
        "statistics",
        "curves",
        "forgetting",
        "heatmaps",
        "spec",
        "provenance",
        "blocks",
    }
    assert not {"ranking", "winners"} & set(page.sections)  # one block: no ranking across blocks
    assert "blocks/synthetic.html" in pages["index.html"]  # the first page links the block's page
    files = {p.name for p in (report / "figures").glob("*.png")}
    shown = []
    for path, body in pages.items():
        one = _Page()
        one.feed(body)
        for (
            attrs
        ) in one.images:  # figures are files beside the pages, loaded lazily, with their size
            target = (report / path).parent / attrs["src"]
            assert target.is_file() and _png(target.read_bytes()).size > 0, attrs["src"]
            assert (
                attrs.get("loading") == "lazy"
                and attrs.get("width")
                and attrs.get("height")
                and attrs.get("alt")
            )
            shown.append(target.name)
    assert set(shown) == files  # every figure shown, none missing
    assert "data:image" not in text
    # tables: the leaderboard of the dataset (every scalar metric defined here), scores per block, versions, runs
    assert "synthetic — roc_auc" in page.headings
    assert (
        "Seeds: 0, 1" in text
        and "<summary>Versions: " in text
        and "<summary>Runs (16)</summary>" in text
    )
    headers = [tuple(h) for h in page.tables]
    metric_headers = (
        "scenario",
        "strategy",
        "detector",
        "CA",
        "BWT",
        "FWT",
        "Final",
        "Learning",
        "Forgetting",
        "GEM-BWT",
        "pyCLAD-code-BWT",
        "Stability",
        "AUAC",
        "All-avg",
    )
    assert metric_headers in headers
    cost_headers = (
        "scenario",
        "strategy",
        "detector",
        "fit s/step",
        "score s/step",
        "peak MB",
        "memory rows",
    )
    assert cost_headers in headers  # cost in a table of its own (clad.report.cost)
    assert ("package", "version") in headers
    assert (
        "run",
        "run id",
        "dataset",
        "scenario",
        "strategy",
        "detector",
        "seed",
        "status",
        "seconds",
    ) in headers
    assert ("", "iforest", "lof") in headers or (
        "",
        "lof",
        "iforest",
    ) in headers  # detector scores per block
    # provenance: every run id and both seeds appear; the spec is shown
    runs = json.loads((finished_run / "results.json").read_text())["runs"]
    assert len(runs) == 16
    for r in runs:
        assert r["run_id"] in text
    assert "report-check" in text and "n_estimators" in text
    # 1 dataset; naive and cumulative never read the concept id, so concept_aware and concept_incremental are
    # the same computation: merged, said plainly, and the one block is compared paired over seeds, no test
    assert "synthetic: concept_aware = concept_incremental hold identical R" in text
    assert (
        "one independent block" in text
        and "weaker claim" in text
        and "differ significantly" not in text
    )
    assert ("pair", "difference a − b", "a better in") in headers


@pytest.mark.slow
def test_report_leaderboard_numbers_match_results(finished_run):
    import pandas as pd

    lb = pd.read_csv(finished_run / "report" / "leaderboard.csv")
    runs = json.loads((finished_run / "results.json").read_text())["runs"]
    assert (
        len(lb) == 4
    )  # 2 strategies x 2 detectors: concept_aware = concept_incremental, shown once
    row = lb[
        (lb.scenario == "concept_aware = concept_incremental")
        & (lb.detector == "iforest")
        & (lb.strategy == "naive")
    ].iloc[0]
    values = [
        r["metrics"]["roc_auc"]["continual_average"]
        for r in runs
        if (r["scenario"], r["detector"], r["strategy"]) == ("concept_aware", "iforest", "naive")
    ]
    assert len(values) == 2
    assert row["continual_average_mean"] == pytest.approx(np.mean(values))
    assert row["continual_average_std"] == pytest.approx(np.std(values, ddof=1))
    assert np.isnan(row["continual_average_ci_low"])  # 2 seeds: no interval, the values instead
    assert row["continual_average_values"] == " ".join(f"{v:.3f}" for v in values)
    md = (finished_run / "report" / "leaderboard.md").read_text()
    assert (
        "**" not in md and md.count(" ≈") >= 3
    )  # 2 seeds: a best mean is within noise, never bold
    assert (
        "| _concept_aware = concept_incremental_ | _chance_ | _no scores_ | _0.500_ |" in md
    )  # the chance row
    stats = pd.read_csv(finished_run / "report" / "statistics.csv")
    paired = stats[
        stats["level"] == "paired over seeds"
    ]  # one dataset: the methods compared over its seeds
    assert len(paired) and {"a", "b", "difference_mean", "difference_ci_low", "a_better"} <= set(
        paired.columns
    )
    tex = (finished_run / "report" / "leaderboard.tex").read_text()
    assert r"\approx" in tex and r"\begin{tabular}" in tex and r"$\pm$" in tex


def test_report_of_missing_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_report_prints_once_and_shows_the_spec_as_written(finished_run, tmp_path, capsys):
    import html

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    from clad.results.store import ResultStore

    page = (finished_run / "report" / "details.html").read_text(encoding="utf-8")
    # the spec is shown (on the details page) as TOML that reads back as the recorded spec
    shown = page.split('<section id="spec">', 1)[1].split("<pre>", 1)[1].split("</pre>", 1)[0]
    recorded = json.loads((finished_run / "results.json").read_text())["spec"]
    assert tomllib.loads(html.unescape(shown)) == recorded
    assert shown.lstrip().startswith("name = ")
    # the text of the spec file, when the run stored it, is shown as written (comments included)
    text = "# the spec as its author wrote it\n" + SPEC
    with ResultStore(finished_run / "results.sqlite") as store:
        store.set_meta("spec_text", text)
    capsys.readouterr()
    assert main(["report", str(finished_run), "--out", str(tmp_path / "again")]) == 0
    captured = capsys.readouterr()
    index = str(tmp_path / "again" / "index.html")
    assert (captured.out + captured.err).count(index) == 1, captured  # the result is printed once
    page = (tmp_path / "again" / "details.html").read_text(encoding="utf-8")
    assert html.escape("# the spec as its author wrote it") in page
