"""Per-step progress callback, plain progress lines, and the mean ± std summaries."""

from __future__ import annotations

import logging
import math

from clad.engine.progress import Progress
from clad.results import RunResult
from clad.engine.config import Component, RunConfig
from clad.engine.run import failed_result, run_config
from clad.engine.summary import (
    display_table,
    format_summary,
    markdown_table,
    summary_table,
    write_summaries,
)

CFG = RunConfig(
    Component("synthetic", {"n_concepts": 3, "n_features": 2, "n_train": 50, "n_test": 40}),
    Component("concept_agnostic", {"batch_size": 40, "anytime_every": 1}),
    Component("naive"),
    Component("hbos"),
)


def test_on_step_reports_each_row_of_R_and_changes_nothing():
    seen = []
    with_steps = run_config(CFG, on_step=lambda step, i: seen.append((step, i)))
    assert seen == [("C0", 0), ("C1", 1), ("C2", 2)]
    assert (with_steps.R["roc_auc"] == run_config(CFG).R["roc_auc"]).all()


def test_plain_progress_lines(caplog):
    with caplog.at_level(logging.INFO, logger="clad.engine.progress"):
        p = Progress(3, already=1, bar=False)
        p.started(CFG)
        p.finished(RunResult("d", "s", "st", "de", 0, timings={"total": 1.25}), CFG)
        p.finished(failed_result(CFG, "Traceback...\nValueError: bad value"), CFG)
        p.close()
    assert p.done == 2 and p.failed == 1 and p.remaining == 0
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("run 2/3 done (1.2s)") or lines[0].startswith("run 2/3 done (1.3s)")
    assert lines[1].startswith("run 3/3 FAILED") and lines[1].endswith("ValueError: bad value")


def _run(scenario, strategy, seed, ca, bwt, fwt, metric="roc_auc"):
    return RunResult(
        "data",
        scenario,
        strategy,
        "iforest",
        seed,
        metrics={
            metric: {"continual_average": ca, "backward_transfer": bwt, "forward_transfer": fwt}
        },
    )


def test_summary_mean_and_std_over_seeds_by_hand(tmp_path):
    runs = [
        _run("aware", "naive", 0, 0.9, -0.2, 0.5),
        _run("aware", "naive", 1, 0.7, -0.4, float("nan")),
        _run("aware", "naive", 2, 0.8, -0.3, 0.7),
        _run("agnostic", "naive", 0, 0.6, -0.1, 0.4),
        failed_result(CFG, "boom"),
    ]
    t = summary_table(runs)
    assert list(t.scenario) == ["aware", "agnostic"] and list(t.runs) == [3, 1]
    assert list(t.CA_n) == [3, 1] and list(t.FWT_n) == [
        2,
        1,
    ]  # counts of values: the NaN FWT is not one
    aware = t.iloc[0]
    assert math.isclose(aware.CA_mean, 0.8) and math.isclose(
        aware.CA_std, 0.1
    )  # sqrt(((.1)^2*2)/2)
    assert math.isclose(aware.BWT_mean, -0.3) and math.isclose(aware.BWT_std, 0.1)
    assert math.isclose(aware.FWT_mean, 0.6) and math.isclose(
        aware.FWT_std, math.sqrt(0.02)
    )  # NaN left out
    assert math.isnan(t.iloc[1].CA_std)  # one seed: no spread
    text = format_summary(t)
    # CA over 3 seeds (0.9, 0.7, 0.8): the Student-t interval 0.8 ± t(0.975, 2) · 0.1 / √3, cut at ROC-AUC's 1
    assert (
        math.isclose(aware.CA_ci_low, 0.8 - 4.302652729911275 * 0.1 / math.sqrt(3))
        and aware.CA_ci_high == 1.0
    )
    assert "  aware" in text and "0.800 ± 0.100" in text and "0.600" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    write_summaries(tmp_path, runs, title="t")
    md = (tmp_path / "summary.md").read_text()
    cell = f"0.800 ± 0.100 [{aware.CA_ci_low:.3f}, {aware.CA_ci_high:.3f}] n=3"
    assert md.count("## ") == 2 and f"| data | roc_auc | naive | iforest | 3 | {cell} |" in md
    assert (
        (tmp_path / "summary.csv")
        .read_text()
        .splitlines()[0]
        .startswith("dataset,scenario,base_metric")
    )


def test_summary_counts_values_not_runs():
    runs = [
        _run("aware", "naive", s, 0.8, bwt, 0.5)
        for s, bwt in ((0, -0.1), (1, float("nan")), (2, float("nan")))
    ]
    t = summary_table(runs)
    assert t.iloc[0].runs == 3 and t.iloc[0].BWT_n == 1 and t.iloc[0].BWT_mean == -0.1
    assert "-0.100 n=1" in display_table(t)["BWT"].iloc[0]  # not "n = 3"
    # the summary is a view of the leaderboard: the same numbers
    from clad.report import leaderboard

    lb = leaderboard(runs)
    assert lb.backward_transfer_n.tolist() == t.BWT_n.tolist()
    assert lb.continual_average_ci_high.tolist() == t.CA_ci_high.tolist()


def test_markdown_table_escapes_pipes():
    import pandas as pd

    assert markdown_table(pd.DataFrame({"a|b": ["x"]})) == "| a\\|b |\n|---|\n| x |"
