"""Aggregation over seeds, tables, reading a results folder, and make_report on hand-made runs."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from clad import metrics
from clad.errors import DataError
from clad.report import (
    StatisticsWarning,
    best_marks,
    best_status,
    forgetting_per_concept,
    heatmap_data,
    leaderboard,
    learning_curves,
    make_report,
)
from clad.report.table_formats import leaderboard_markdown
from clad.report.table_formats import leaderboard_latex
from clad.results import RunResult, load_results, write_results

NAN = float("nan")


def _run(
    seed,
    R,
    detector="iforest",
    strategy="naive",
    scenario="aware",
    dataset="toy",
    concepts=("A", "B", "C"),
):
    R = np.asarray(R, dtype=float)
    t = metrics.learned_at(concepts[: R.shape[0]], concepts)
    return RunResult(
        dataset,
        scenario,
        strategy,
        detector,
        seed,
        tuple(concepts[: R.shape[0]]),
        tuple(concepts),
        R={"roc_auc": R},
        metrics={"roc_auc": metrics.summarize(R, t)},
        run_id=f"id{seed}{detector}",
    )


R0 = [[0.9, 0.5, 0.4], [0.7, 0.8, NAN], [0.6, 0.75, 0.95]]
R1 = [[0.8, 0.6, 0.4], [0.5, 0.9, NAN], [0.4, 0.65, 0.85]]
R2 = [[1.0, 0.4, NAN], [0.6, 0.7, NAN], [0.5, 0.7, 0.9]]


def test_heatmap_data_averages_seeds_leaving_nan_out():
    h = heatmap_data([_run(2, R2), _run(0, R0), _run(1, R1)], "roc_auc")
    assert h.seeds == (0, 1, 2)
    assert h.mean[0, 0] == pytest.approx(0.9) and h.std[0, 0] == pytest.approx(0.1)
    assert h.mean[0, 2] == pytest.approx(0.4) and h.n[0, 2] == 2 and h.std[0, 2] == 0.0
    assert (
        np.isnan(h.mean[1, 2]) and h.n[1, 2] == 0 and np.isnan(h.std[1, 2])
    )  # NaN in every seed stays NaN
    assert h.learned_at.tolist() == [0, 1, 2]


def test_heatmap_data_refuses_runs_with_other_concepts():
    other = _run(1, [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], concepts=("A", "C", "B"))
    with pytest.raises(DataError, match="cannot be averaged"):
        heatmap_data([_run(0, R0), other], "roc_auc")


def test_forgetting_per_concept_agrees_with_clad_metrics():
    rng = np.random.default_rng(0)
    for _ in range(20):
        R = rng.uniform(size=(4, 5))
        R[rng.uniform(size=R.shape) < 0.2] = np.nan
        t = np.array([0, 1, 2, 3, -1])
        per = forgetting_per_concept(R, t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.nanmean(per) if (~np.isnan(per)).any() else np.nan
        assert metrics.forgetting(R, t) == pytest.approx(expected, nan_ok=True)
    # by hand: C0 peaks at 0.9 then ends at 0.6; C1 peaks at 0.8 then ends at 0.75
    np.testing.assert_allclose(forgetting_per_concept(R0), [0.3, 0.05, np.nan])


def test_learning_curves_mean_and_std_over_seeds():
    lc = learning_curves([_run(0, R0), _run(1, R1)])
    seen = lc[lc.kind == "seen"].sort_values("step")
    # step 1 seen concepts A, B: seed 0 (0.7 + 0.8) / 2 = 0.75, seed 1 (0.5 + 0.9) / 2 = 0.7
    last = ((0.6 + 0.75 + 0.95) / 3 + (0.4 + 0.65 + 0.85) / 3) / 2
    assert seen["mean"].tolist() == pytest.approx([0.85, 0.725, last])
    assert seen["std"].iloc[1] == pytest.approx(np.std([0.75, 0.7], ddof=1))
    every = lc[lc.kind == "all"].sort_values("step")
    assert every["mean"].iloc[1] == pytest.approx((0.75 + 0.7) / 2)  # C's NaN is left out, not zero


def test_leaderboard_and_best_marks():
    runs = [_run(s, R, "iforest") for s, R in ((0, R0), (1, R1))] + [
        _run(s, R, "lof") for s, R in ((0, R2), (1, R2))
    ]
    lb = leaderboard(runs, ["continual_average", "forgetting"])
    assert lb["detector"].tolist() == ["iforest", "lof"]
    ca = [metrics.continual_average(R) for R in (R0, R1)]
    assert lb.loc[0, "continual_average_mean"] == pytest.approx(np.mean(ca))
    assert lb.loc[0, "continual_average_std"] == pytest.approx(np.std(ca, ddof=1))
    # lof's two seeds hold the same R: one computation, one independent value (no std, no interval)
    assert np.isnan(lb.loc[1, "continual_average_std"]) and lb.loc[1, "continual_average_n"] == 1
    assert lb["runs"].tolist() == [2, 2] and lb["computations"].tolist() == [2, 1]
    # lof rests on one value: neither "clear" nor "within noise" can be said of the best mean
    status = best_status(lb, ["continual_average", "forgetting"])
    c = lb["continual_average_mean"]
    assert set(status["forgetting"]) <= {"", "no noise estimate"}
    # the two means differ in their last bit only and print alike (0.733): a tie, so neither is marked
    assert [f"{v:.3f}" for v in c] == ["0.733", "0.733"] and status[
        "continual_average"
    ].tolist() == ["", ""]
    assert not best_marks(lb, ["continual_average", "forgetting"]).to_numpy().any()
    md = leaderboard_markdown(lb)
    best_ca = lb.loc[c.idxmax()]
    shown = f"{best_ca.continual_average_mean:.3f}" + (
        f" ± {best_ca.continual_average_std:.3f}"
        if best_ca.continual_average_std == best_ca.continual_average_std
        else ""
    )
    assert f"| {shown} |" in md  # neither bold nor "≈": no noise estimate
    row = lb.loc[0]
    assert np.isnan(row.continual_average_ci_low) and np.isnan(row.continual_average_ci_high)
    assert row.continual_average_values == " ".join(f"{v:.3f}" for v in ca)
    assert row.continual_average_n == 2 and row.runs == 2
    assert "### toy — roc_auc" in md
    tex = leaderboard_latex(lb)
    assert r"\toprule" in tex


def test_load_results_reads_the_json_file(tmp_path):
    runs = [_run(0, R0), _run(1, R1)]
    write_results(tmp_path / "results.json", runs, spec={"name": "toy"})
    got = load_results(tmp_path)
    assert [r.run_id for r in got] == [r.run_id for r in runs]
    np.testing.assert_array_equal(got[0].R["roc_auc"], runs[0].R["roc_auc"])
    assert [r.seed for r in load_results(tmp_path / "results.json")] == [0, 1]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="neither results.sqlite nor results.json"):
        load_results(tmp_path / "empty")
    with pytest.raises(DataError, match="does not exist"):
        load_results(tmp_path / "missing")


def test_load_results_prefers_the_sqlite_store(tmp_path):
    store = pytest.importorskip("clad.results.store")
    runs = [_run(0, R0), _run(1, R1)]
    write_results(tmp_path / "results.json", runs[:1])
    s = store.ResultStore(tmp_path / "results.sqlite")
    try:
        for r in runs:
            s.write(r)
    finally:
        s.close()
    assert sorted(r.seed for r in load_results(tmp_path)) == [
        0,
        1,
    ]  # the JSON file holds only seed 0


def _many_blocks() -> list[RunResult]:
    """3 datasets x 2 scenarios x 3 detectors x 2 seeds; lof is best everywhere."""
    out = []
    for d in range(3):
        for scenario in ("aware", "agnostic"):
            for k, det in enumerate(("iforest", "ecod", "lof")):
                for seed in (0, 1):
                    R = np.clip(np.array(R0) + 0.03 * k + 0.01 * d - 0.005 * seed, 0, 1)
                    out.append(_run(seed, R, det, dataset=f"data{d}", scenario=scenario))
    failed = RunResult(
        "data0",
        "aware",
        "naive",
        "iforest",
        9,
        status="failed",
        error="Traceback\nValueError: boom",
        run_id="deadbeef",
    )
    return out + [failed]


@pytest.mark.slow
def test_make_report_writes_cd_diagrams_and_lists_failures(tmp_path):
    results = _many_blocks()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = make_report(
            results, tmp_path / "rep", spec={"name": "hand-made"}, by=("detector", "strategy")
        )
    # one strategy: that comparison is impossible, said as a warning and in the report
    assert any(
        issubclass(w.category, StatisticsWarning) and "only 1 strateg" in str(w.message)
        for w in caught
    )
    assert any("only 1 strateg" in m for m in report.messages)
    det = next(c for c in report.comparisons if c.by == "detector")
    # blocks are datasets; in each, aware and agnostic hold identical R (the same computation): counted once
    assert det.n_blocks == 3 and det.average_ranks.index[0] == "lof" and det.significant
    assert any("aware = agnostic hold identical R" in n for n in det.notes)
    cd = [p for n, p in report.figures.items() if n.startswith("cd__detector__")]
    assert len(cd) == 1 and cd[0].read_text().startswith(
        'cladChart("cd__detector__'
    )  # drawn by the browser
    stats_csv = pd.read_csv(report.tables["statistics"])
    assert stats_csv.loc[0, "friedman_statistic"] == pytest.approx(det.statistic)
    page = report.all_text()
    assert "deadbeef" in page and "ValueError: boom" in page and "hand-made" in page
    assert "1 of 37 runs failed" in page
    # 3 blocks, 3 methods, same order everywhere: chi2 = 12/(3*3*4)*(9+36+81) - 36 = 6; exactly, 6 of the
    # (3!)^3 = 216 rank arrangements (every block alike) reach it: p = 6/216
    assert "Friedman over 3 blocks (χ² = 6), exact p" in page
    assert det.test.method == "exact" and det.pvalue == pytest.approx(6 / 216)
    assert "Verdict: the 3 detectors differ (Friedman, exact p = 0.0278 &lt; α = 0.05)" in page
    assert stats_csv.loc[0, "p_method"] == "exact" and stats_csv.loc[0, "verdict"] == "differ"
    assert "data0: aware = agnostic hold identical R for every detector and seed" in page


def test_make_report_without_finished_runs_still_writes_a_page(tmp_path):
    failed = RunResult("d", "s", "naive", "iforest", 0, status="failed", error="boom")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        report = make_report([failed], tmp_path)
    assert report.index.is_file() and not report.figures
    assert "no finished run" in report.all_text()
