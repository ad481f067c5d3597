"""The HTML report in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``
packages, driven by Selenium) opens ``index.html`` of a report made from real runs with long names and
checks that every image loads, that nothing is wider than the page (the page and each figure, at a
desktop and at a narrow window width), and that the browser's console has no errors; it saves a
screenshot.

``CLAD_REPORT_SCREENSHOT=/tmp/report.png python -m pytest tests/report/test_report_browser.py`` also
writes its screenshot there. The quickstart's report is measured in a 1,400-px-wide window (a
page that reads in a minute: at most a third of the 25,285 px it measured before it was reorganised)
and checked for what a reader needs first; ``CLAD_REPORT_SHOTS=docs`` writes its screenshots (top of
the page, leaderboard, a heatmap with chance marks: the ones the README shows) into that folder.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pytest

import clad
from clad.report import StatisticsWarning, make_report

from tests.browser_helpers import browser, needs_browser  # noqa: F401

pytestmark = [pytest.mark.slow, needs_browser]

LONG = "detector_with_a_long_name_to_check_that_nothing_overflows_x1"  # 60 characters


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from sklearn.ensemble import IsolationForest
    from sklearn.neighbors import LocalOutlierFactor

    ds = clad.make_synthetic(n_concepts=3, n_features=4, n_train=150, n_test=100, random_state=0)
    detectors = {
        "iforest": lambda: IsolationForest(n_estimators=20),
        LONG: lambda: LocalOutlierFactor(n_neighbors=10, novelty=True),
    }
    runs = []
    for scenario in (clad.ConceptAware(), clad.ConceptAgnostic(batch_size=75)):
        for strategy in (clad.Naive, clad.Cumulative):
            for name, make in detectors.items():
                for seed in (0, 1):
                    runs.append(
                        clad.run_experiment(
                            ds,
                            scenario,
                            strategy(make()),
                            base_metrics=["roc_auc", "f1"],
                            seed=seed,
                            labels={"detector": name, "strategy": strategy.__name__.lower()},
                        )
                    )
    out = tmp_path_factory.mktemp("browser") / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        return make_report(runs, out, spec={"name": "browser check", "seeds": 2})


#: the quickstart report's height (px, 1,400-px window) before the page was reorganised: 25,285
QUICKSTART_HEIGHT_BEFORE = 25_285


@pytest.fixture(scope="module")
def quickstart_report(quickstart, tmp_path_factory):
    from clad.report import load_spec_record, load_spec_text
    from clad.results import load_results

    out = tmp_path_factory.mktemp("quickstart-report") / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        return make_report(
            load_results(quickstart.out),
            out,
            load_spec_record(quickstart.out),
            spec_text=load_spec_text(quickstart.out),
        )


_IMAGES = """
return Array.from(document.images).map(img => ({alt: img.alt, complete: img.complete,
                                                width: img.naturalWidth, height: img.naturalHeight}));
"""

_OVERFLOW = """
const root = document.documentElement;
const out = {page: [root.scrollWidth, root.clientWidth], figures: []};
for (const el of document.querySelectorAll('figure, img, table, pre, section')) {
  const box = el.getBoundingClientRect();
  if (el.scrollWidth > el.clientWidth + 1 && el.tagName !== 'TABLE' && el.tagName !== 'PRE'
      || box.right > root.clientWidth + 1 || box.left < -1) {
    out.figures.push([el.tagName, el.id || (el.alt || '').slice(0, 60), el.scrollWidth, el.clientWidth, box.right]);
  }
}
return out;
"""


_CHARTS = """
return Array.from(document.querySelectorAll('div.chart[data-chart]')).map(el => {
  const svg = el.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {alt: el.getAttribute('aria-label'), complete: el.classList.contains('drawn') || el.classList.contains('failed'),
          width: el.classList.contains('drawn') ? Math.round(box.width) : 0,
          height: el.classList.contains('drawn') ? Math.round(box.height) : 0,
          marks: svg ? svg.querySelectorAll('path, rect, line, text').length : 0};
});
"""


def _load_images(browser):
    """Every figure of the page loaded now: the images (lazy ones too) and the figures the browser
    draws (:mod:`clad.report.charts`, drawn at once instead of when scrolled to); then their state,
    images first."""
    browser.execute_script(
        "for (const img of document.images) { img.loading = 'eager'; } "
        "if (window.cladDrawAllCharts) { window.cladDrawAllCharts(); }"
    )
    import time

    for _ in range(300):
        images = browser.execute_script(_IMAGES)
        charts = browser.execute_script(_CHARTS)
        if all(i["complete"] for i in images + charts):
            break
        time.sleep(0.1)
    return images + charts


def test_report_renders_in_chromium(report, browser, tmp_path):
    browser.get(report.index.resolve().as_uri())
    assert browser.title.startswith("clad report")
    images = []
    for path in report.pages.values():
        browser.get(path.resolve().as_uri())
        images += _load_images(browser)
    browser.get((report.out_dir / "blocks" / "synthetic.html").resolve().as_uri())
    _load_images(browser)
    cells = browser.execute_script(  # the numbers the browser wrote in the first R heatmap's cells
        "return Array.from(document.querySelectorAll('div.chart[data-id^=heatmap] svg text')).flatMap(t => "
        "t.querySelector('tspan') ? Array.from(t.querySelectorAll('tspan')).map(s => s.textContent) : [t.textContent])"
    )
    means = [t for t in cells if re.fullmatch(r"[01]\.\d\d", t)]
    stds = [t for t in cells if re.fullmatch(r"±0\.\d\d", t)]
    assert len(means) >= 9 and len(stds) >= 9, cells[
        :40
    ]  # mean and ± std over the 2 seeds, two lines a cell
    assert len(images) == len(report.figures) >= 6
    broken = [
        i["alt"] for i in images if not (i["complete"] and i["width"] > 0 and i["height"] > 0)
    ]
    assert not broken, f"images that did not load: {broken}"
    for width in (1280, 720):  # a desktop window and a narrow one
        browser.set_window_size(width, 1000)
        layout = browser.execute_script(_OVERFLOW)
        scroll, client = layout["page"]
        assert scroll <= client, f"the page is {scroll} px wide in a {client} px window"
        assert not layout["figures"], (
            f"elements wider than the page at {width} px: {layout['figures']}"
        )
    browser.set_window_size(1280, 1000)
    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    assert not errors, f"browser console errors: {errors}"
    browser.execute_script("document.getElementById('heatmaps').scrollIntoView()")
    _load_images(browser)
    shot = tmp_path / "report-screenshot.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    target = os.environ.get("CLAD_REPORT_SCREENSHOT")
    if target:
        Path(target).write_bytes(shot.read_bytes())


def test_quickstart_page_reads_in_a_minute(quickstart_report, browser, tmp_path):
    browser.set_window_size(1400, 1000)
    browser.get(quickstart_report.index.resolve().as_uri())
    height = browser.execute_script("return document.documentElement.scrollHeight")
    print(
        f"quickstart report: {height} px high in a 1,400-px window (before: {QUICKSTART_HEIGHT_BEFORE} px)"
    )
    assert height <= QUICKSTART_HEIGHT_BEFORE / 3, height
    top = browser.execute_script(
        "return document.querySelector('section').getBoundingClientRect().top"
    )
    intro = browser.find_element("css selector", "p.run").text
    assert intro.startswith("72 runs") and "18 shared" in intro  # what was run, in one line
    findings = "\n".join(e.text for e in browser.find_elements("css selector", ".findings"))
    assert "Best across blocks" in findings or "Best per scenario" in findings
    # one line per scenario: a configuration shared by two scenarios is ranked in each of them
    assert "concept_aware" in findings and "concept_incremental" in findings
    assert "Do the statistics support a difference?" in findings
    assert len(browser.find_elements("css selector", "div.message")) == 1  # one box of caveats
    assert top < 1000  # the leaderboard starts on the first screen
    chance_rows = browser.find_elements("css selector", "table.compact tr.chance")
    assert (
        len(chance_rows) == 4
    )  # one per scenario setting (aware = incremental, aware, incremental, agnostic)
    assert (
        "0.182" in chance_rows[0].text
        and "0.500" in chance_rows[0].text
        and "0.100" in chance_rows[0].text
    )
    tips = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.compact td[title]')).map(td => td.title)"
    )
    assert tips and all("bootstrap interval" in t or "chance" in t or "no value" in t for t in tips)
    images = _load_images(browser)
    assert all(i["complete"] and i["width"] > 0 for i in images)
    layout = browser.execute_script(_OVERFLOW)
    assert layout["page"][0] <= layout["page"][1] and not layout["figures"], layout
    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    assert not errors, errors
    shots = {
        "report-top.png": None,
        "report-leaderboard.png": "leaderboard",
        "report-heatmap-chance.png": "fig-heatmap__synthetic__concept_agnostic__f1",
    }
    target = os.environ.get("CLAD_REPORT_SHOTS")
    for name, anchor in shots.items():
        if anchor and anchor.startswith("fig-"):  # the figures are on the block's page
            browser.get(
                (quickstart_report.out_dir / "blocks" / "synthetic.html").resolve().as_uri()
            )
            _load_images(browser)
        if anchor is None:
            browser.execute_script("window.scrollTo(0, 0)")
        else:
            browser.execute_script(
                f"const d = document.getElementById('{anchor}'); "
                "let p = d; while (p) { if (p.tagName === 'DETAILS') p.open = true; p = p.parentElement; } "
                "d.scrollIntoView(); window.scrollBy(0, -60)"
            )
        shot = tmp_path / name
        assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        if target:
            Path(target, name).write_bytes(shot.read_bytes())


# -- a grid of more than a thousand runs ---------------------------------------------------------

#: the first page's budget at 1,400 px wide (height, bytes) and each block page's height
FIRST_PAGE_BUDGET = (10_000, 2_000_000)
BLOCK_PAGE_HEIGHT = 15_000


@pytest.fixture(scope="module")
def grid_report(tmp_path_factory):
    """1,000 runs: 4 datasets x 2 orders x 5 strategies x 5 detectors x 5 seeds, one failing block."""
    import numpy as np

    from clad.metrics import learned_at, summarize
    from clad.results import RunResult

    concepts = ("C0", "C1", "C2", "C3")
    rng = np.random.default_rng(0)
    runs = []
    for k in range(4):
        for order in ("given", "random"):
            block = f"dataset{k}[order={order}]"
            cs = concepts if order == "given" else concepts[::-1]
            for strategy in ("naive", "cumulative", "replay", "window", "experts"):
                for d, detector in enumerate(("hbos", "ecod", "copod", "iforest", LONG)):
                    for seed in range(5):
                        rid = f"{block}/{strategy}/{detector}/{seed}"
                        if (k, order, strategy, detector) == (3, "random", "naive", "hbos"):
                            runs.append(
                                RunResult(
                                    block,
                                    "concept_incremental",
                                    strategy,
                                    detector,
                                    seed,
                                    cs,
                                    cs,
                                    run_id=rid,
                                    status="failed",
                                    error="MemoryError: out of memory",
                                )
                            )
                            continue
                        R = np.clip(0.6 + 0.05 * d + rng.normal(0, 0.05, (4, 4)), 0, 1)
                        runs.append(
                            RunResult(
                                block,
                                "concept_incremental",
                                strategy,
                                detector,
                                seed,
                                cs,
                                cs,
                                run_id=rid,
                                R={"roc_auc": R},
                                metrics={"roc_auc": summarize(R, learned_at(cs, cs))},
                                timings={"fit": [0.01 * (d + 1)] * 4, "score": [0.003] * 4},
                                chance={"roc_auc": [0.5] * 4},
                            )
                        )
    assert len(runs) >= 1000
    out = tmp_path_factory.mktemp("grid-report") / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_report(runs, out, {"name": "a grid of 1,000 runs"})


def _holds_its_budget(browser, index: Path, pages: dict[str, Path], n_blocks: int) -> None:
    """The first page within its budget; on every page every image loaded, nothing wider than the
    page, block pages within their height, every link leading to a file of the site and no
    console error; every block page linked."""
    import urllib.parse

    browser.set_window_size(1400, 1000)
    browser.get(index.resolve().as_uri())
    height = browser.execute_script("return document.documentElement.scrollHeight")
    size = index.stat().st_size + sum(p.stat().st_size for p in (index.parent / "assets").iterdir())
    print(f"first page: {height} px, {size / 1e6:.2f} MB")
    assert height <= FIRST_PAGE_BUDGET[0] and size <= FIRST_PAGE_BUDGET[1], (height, size)
    block_pages = [p for name, p in pages.items() if name.startswith("blocks/")]
    assert len(block_pages) == n_blocks
    checked = set()
    for name, path in pages.items():
        browser.get(path.resolve().as_uri())
        images = _load_images(browser)
        broken = [
            i["alt"] for i in images if not (i["complete"] and i["width"] > 0 and i["height"] > 0)
        ]
        assert not broken, (name, broken)
        layout = browser.execute_script(_OVERFLOW)
        assert layout["page"][0] <= layout["page"][1] and not layout["figures"], (name, layout)
        if name.startswith("blocks/"):
            h = browser.execute_script("return document.documentElement.scrollHeight")
            assert h <= BLOCK_PAGE_HEIGHT, (name, h)
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
        )
        for href in links:  # every link leads to a file of the site (and an anchor on it)
            url = urllib.parse.urlsplit(href)
            assert url.scheme == "file", href
            target = urllib.parse.unquote(url.path)
            assert Path(target).is_file(), (name, href)
            checked.add(target)
    assert {str(p.resolve()) for p in block_pages} <= checked  # every block page is linked
    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    assert not errors, errors


def test_grid_report_holds_its_budget_in_chromium(grid_report, browser):
    _holds_its_budget(browser, grid_report.index, grid_report.pages, 8)
    # the ranking table sorts and filters in the browser
    browser.get(grid_report.index.resolve().as_uri())
    box = browser.find_element("css selector", "input[data-filter='ranking-table']")
    box.send_keys("copod")
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#ranking-table tbody tr'))"
        ".filter(r => r.style.display !== 'none').map(r => r.textContent)"
    )
    assert shown and all("copod" in t for t in shown)


# -- the standard benchmark's leaderboard -------------------------------------------------------

STANDARD_BUNDLE = Path(__file__).resolve().parents[2] / "scenarios/standard/clad-standard-1.bundle"
EXTRA_BUNDLE = Path(__file__).resolve().parents[1] / "data" / "standard-copod-slice.bundle"


def test_the_standard_leaderboard_holds_its_budget_in_chromium(browser, tmp_path):
    """``clad leaderboard`` of the standard benchmark's published bundle and one extra detector's
    bundle (COPOD on two of its data sets): budget, every link, no console error."""
    from clad.bundle.leaderboard import leaderboard

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = leaderboard([str(STANDARD_BUNDLE), str(EXTRA_BUNDLE)], tmp_path / "site")
    assert done.runs == 840 + 84 and not done.conflicts and done.unverified == 0
    pages = {
        p.relative_to(done.out).as_posix(): p
        for p in [*done.out.glob("*.html"), *done.out.glob("blocks/*.html")]
    }
    _holds_its_budget(browser, done.out / "index.html", pages, 5)
    browser.get((done.out / "index.html").resolve().as_uri())
    findings = "\n".join(e.text for e in browser.find_elements("css selector", ".findings"))
    assert "copod" in browser.page_source and "concept_incremental" in findings
