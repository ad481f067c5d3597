"""A time-series grid's block page holds its height budget in Chromium with every figure open: the
shape of a SMAP grid (10 subsystems as concepts, 5 range metrics and their per-series means, 16
configurations) measured at 1,400 px wide, every <details> opened and every figure drawn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from clad.metrics import learned_at, summarize
from clad.report import make_report
from clad.results import RunResult

from tests.browser_helpers import browser, needs_browser, page_figures  # noqa: F401

#: a block page's height (px, 1,400-px window), every figure open (tests/report/test_report_browser.py)
BLOCK_PAGE_HEIGHT = 15_000
SUBSYSTEMS = tuple("ABDEFGPRST")
RANGE_METRICS = ("vus_pr", "range_f1", "pa_f1", "event_f1", "affiliation_f1")
#: the detectors of a real SMAP grid of 16 runs (its block page measured by hand: 49,784 px before, 14,425 px now)
DETECTORS = (
    "hbos(n_bins=5)",
    "hbos(n_bins=10)",
    "hbos(n_bins=20)",
    "hbos(n_bins=50)",
    "ecod",
    "copod",
    "pca",
    "iforest",
)


def smap_shaped_runs():
    """16 configurations (2 strategies x 8 detectors, one seed) on 10 subsystems, 5 range metrics,
    each subsystem made of 1-4 channels with per-channel values (so every metric has its per-series
    mean too: 10 base metrics)."""
    rng = np.random.default_rng(0)
    t = learned_at(SUBSYSTEMS, SUBSYSTEMS)
    series = {c: [f"{c}-{k}" for k in range(1 + j % 4)] for j, c in enumerate(SUBSYSTEMS)}
    runs = []
    for strategy in ("naive", "experts"):
        for detector in DETECTORS:
            R = {m: np.clip(0.4 + rng.normal(0, 0.1, (10, 10)), 0, 1) for m in RANGE_METRICS}
            values = {
                m: {
                    c: [
                        list(np.clip(0.3 + rng.normal(0, 0.1, len(series[c])), 0, 1))
                        for _ in SUBSYSTEMS
                    ]
                    for c in SUBSYSTEMS
                }
                for m in RANGE_METRICS
            }
            chance = {m: {c: [0.1] * len(series[c]) for c in SUBSYSTEMS} for m in RANGE_METRICS}
            runs.append(
                RunResult(
                    "nasa-smap",
                    "concept_incremental",
                    strategy,
                    detector,
                    0,
                    SUBSYSTEMS,
                    SUBSYSTEMS,
                    R=R,
                    metrics={m: summarize(R[m], t) for m in RANGE_METRICS},
                    timings={"fit": [0.1] * 10, "score": [0.05] * 10},
                    chance={m: [0.2] * 10 for m in RANGE_METRICS},
                    extras={
                        "time_series": {
                            "per_series": {"series": series, "values": values, "chance": chance}
                        }
                    },
                )
            )
    return runs


@pytest.mark.slow
@needs_browser
def test_a_smap_shaped_block_page_holds_its_budget_with_every_figure_open(browser, tmp_path):  # noqa: F811
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = make_report(
            smap_shaped_runs(),
            tmp_path / "rep",
            spec={"name": "smap", "base_metrics": list(RANGE_METRICS)},
        )
    page = report.pages["blocks/nasa-smap.html"]
    browser.set_window_size(1400, 1000)
    state = page_figures(browser, page)  # every figure drawn, folded ones included
    opened = browser.execute_script(
        "const d = document.querySelectorAll('details'); d.forEach(x => x.open = true); "
        "return d.length"
    )
    assert opened >= 9 and len(state) >= 21  # 10 heatmaps, 10 curves, forgetting, cost
    assert all("drawn" in c for _, c, _ in state), [s for s in state if "drawn" not in s[1]]
    height = browser.execute_script("return document.documentElement.scrollHeight")
    print(
        f"SMAP-shaped block page: {height:,} px with every figure open (budget {BLOCK_PAGE_HEIGHT:,})"
    )
    assert height <= BLOCK_PAGE_HEIGHT, height
    errors = [
        e["message"][:300]
        for e in browser.get_log("browser")
        if e.get("level") in ("SEVERE", "ERROR")
    ]
    assert not errors, errors
