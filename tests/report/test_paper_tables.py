"""The tables a paper prints and the words that fit small n: the main table (methods x datasets, a
mean-rank column, the test) in LaTeX and Markdown, blocks.csv recomputed by scipy, the block score
as the statistics guide defines it, baselines in the report, and orders of one dataset as one block."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from clad.engine.benchmark import run_spec
from clad.engine.spec import parse_spec
from clad.report import make_report
from clad.report.load import report_runs


def _report(out):
    """The report ``clad report`` writes: from the folder's slim runs."""
    return make_report(report_runs(out), out / "report")


DATASETS = [
    {
        "name": "synthetic",
        "label": f"syn{k}",
        "n_concepts": 3,
        "n_train": 120,
        "n_test": 100,
        "separation": 2.0 + k,
        "anomaly_fraction": 0.1,
    }
    for k in range(5)
]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """Five datasets in two concept orders, three detectors, three seeds: 180 runs in a few seconds."""
    out = tmp_path_factory.mktemp("paper") / "out"
    spec = parse_spec(
        {
            "name": "paper",
            "seeds": 3,
            "strategies": ["naive", "replay"],
            "orders": ["given", "random"],
            "datasets": DATASETS,
            "scenarios": ["concept_incremental"],
            "detectors": [{"name": "iforest", "n_estimators": 10}, "hbos", "ecod"],
        }
    )
    result = run_spec(spec, out)
    assert result.n_failed == 0
    report = _report(out)
    return result, report


def test_blocks_csv_recomputes_friedman_with_scipy(grid):
    result, report = grid
    blocks = pd.read_csv(report.tables["blocks_csv"])
    part = blocks[(blocks["by"] == "detector") & (blocks["metric"] == "continual_average")]
    assert sorted(part["block"].unique()) == [
        f"syn{k}" for k in range(5)
    ]  # datasets, never dataset x order
    table = part.pivot(index="block", columns="method", values="score")
    c = next(
        c for c in report.comparisons if c.by == "detector" and c.metric == "continual_average"
    )
    chi2, p_asymptotic = stats.friedmanchisquare(*(table[m].to_numpy() for m in table.columns))
    assert c.statistic == pytest.approx(chi2, rel=1e-12)
    # the exact p-value: every within-block arrangement of the ranks, each statistic by scipy
    ranks = table.rank(axis=1).to_numpy()
    arrangements = [np.array(p) for p in itertools.permutations(ranks[0])]
    count = total = 0
    for combo in itertools.product(range(len(arrangements)), repeat=len(ranks)):
        x = np.stack([arrangements[i] for i in combo])
        total += 1
        count += stats.friedmanchisquare(*x.T).statistic >= chi2 - 1e-9
    assert c.test.method == "exact" and c.pvalue == pytest.approx(count / total, rel=1e-9)
    text = report.tables["main_table_md"].read_text()
    assert f"Friedman chi2 = {c.statistic:.3f}, p = {c.pvalue:.3g} (exact)" in text


def test_block_score_is_the_guides_nested_mean(grid):
    """The statistics guide's definition, recomputed from the runs: per seed, the mean over the
    other fields (strategies, orders) within each scenario, then over scenarios, then over seeds."""
    result, report = grid
    blocks = pd.read_csv(report.tables["blocks_csv"])
    runs = pd.DataFrame(
        [
            {
                "dataset": r.dataset.split("[order=")[0],
                "detector": r.detector,
                "seed": r.seed,
                "scenario": r.scenario,
                "v": r.metrics["roc_auc"]["continual_average"],
            }
            for r in result.runs
        ]
    )
    by_hand = (
        runs.groupby(["dataset", "detector", "seed", "scenario"])["v"]
        .mean()
        .groupby(["dataset", "detector", "seed"])
        .mean()
        .groupby(["dataset", "detector"])
        .mean()
    )
    part = blocks[(blocks["by"] == "detector") & (blocks["metric"] == "continual_average")]
    for _, row in part.iterrows():
        assert row["score"] == pytest.approx(by_hand[(row["block"], row["method"])], abs=1e-12)
        assert row["seeds"] == 3


def test_main_table_markdown_and_latex(grid):
    _, report = grid
    md = report.tables["main_table_md"].read_text()
    header = next(line for line in md.splitlines() if line.startswith("| detector |"))
    assert header == "| detector | " + " | ".join(f"syn{k}" for k in range(5)) + " | mean rank |"
    assert re.search(r"\| \*\*0\.\d{3} ± 0\.\d{3}\*\* \|", md)  # a bold best cell with its interval
    assert "Nemenyi critical difference of mean ranks CD = " in md
    tex = report.tables["main_table_tex"].read_text()
    for rule in (
        "\\toprule",
        "\\midrule",
        "\\bottomrule",
        "\\caption{",
        "\\label{tab:clad-main-detector-",
    ):
        assert rule in tex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    folder = report.tables["main_table_tex"].parent
    doc = folder / "main.tex"
    doc.write_text(
        "\\documentclass{article}\\usepackage{booktabs}\\begin{document}\\input{main_table.tex}"
        "\\end{document}\n"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]


def test_orders_of_each_dataset_are_one_block_with_order_sensitivity_within_it(grid):
    _, report = grid
    c = next(
        c for c in report.comparisons if c.by == "detector" and c.metric == "continual_average"
    )
    assert c.n_blocks == 5 and c.orders is not None
    assert sorted(d for d, _ in c.orders_by_dataset) == [f"syn{k}" for k in range(5)]
    page = report.pages["statistics.html"].read_text()
    assert "Order sensitivity within each dataset" in page
    first = report.index.read_text()
    assert "5 datasets (one block each, over up to 2 concept orders)" in first


def test_no_p_first_from_few_blocks_and_no_bold_for_printed_ties():
    from clad.report.leaderboard import best_status
    from clad.report.ranking import MIN_BLOCKS_P_FIRST, rank_stability

    two = pd.DataFrame({"a": [0.9, 0.8], "b": [0.6, 0.7]})
    assert MIN_BLOCKS_P_FIRST == 5 and rank_stability(two).table["p_first"].isna().all()
    t = pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "continual_average_mean": [1.0, 0.99996],
            "continual_average_ci_low": [1.0, 0.9999],
            "continual_average_ci_high": [1.0, 0.99999],
        }
    )
    assert best_status(t, ["continual_average"], within=["dataset"])[
        "continual_average"
    ].tolist() == ["", ""]


def test_baselines_true_gives_the_section_and_csv_without_reversed_warnings(tmp_path):
    spec = parse_spec(
        {
            "name": "bl",
            "seeds": 3,
            "strategies": ["naive"],
            "baselines": True,
            "datasets": [{"name": "synthetic", "n_concepts": 3, "n_train": 120, "n_test": 100}],
            "scenarios": ["concept_incremental"],
            "detectors": [{"name": "iforest", "n_estimators": 10}],
        }
    )
    result = run_spec(spec, tmp_path / "out")
    base = [r for r in result.runs if r.detector == "random_scores"]
    assert base and not any("reversed" in w for r in base for w in r.warnings)
    report = _report(tmp_path / "out")
    frame = pd.read_csv(report.tables["baselines"])
    assert set(frame["detector"]) == {"iforest"} and "beats" in frame
    assert "Baselines" in report.pages["details.html"].read_text()


def test_the_statistics_guides_worked_example():
    """The block score of the guide's example, recomputed by the blocks the tests rank."""
    from pathlib import Path

    from clad.report.blocks import evidence_blocks
    from clad.results.record import RunResult

    table = {
        ("concept_aware", "naive"): (0.80, 0.84),
        ("concept_aware", "replay"): (0.90, 0.86),
        ("concept_agnostic", "naive"): (0.70, 0.74),
    }
    runs = [
        RunResult(
            "d",
            scenario,
            strategy,
            det,
            seed,
            metrics={"roc_auc": {"continual_average": v + shift}},
        )
        for (scenario, strategy), values in table.items()
        for seed, v in enumerate(values)
        for det, shift in (("x", 0.0), ("y", -0.1))
    ]
    scores = evidence_blocks(runs, by="detector").scores
    assert scores.at["d", "x"] == pytest.approx(0.785, abs=1e-12)
    flat = np.mean([v for values in table.values() for v in values])
    assert flat == pytest.approx(0.80667, abs=1e-5)
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "statistics.md").read_text()
    assert "the block score is **0.785**" in guide and "would give 0.8067" in guide


def test_best_per_scenario_ranks_every_strategy_that_ran_in_it(tmp_path):
    """naive and replay read no concept id, so concept_aware = concept_incremental is one computation
    for them; experts reads it, so it ran in each scenario on its own. Each scenario's ranking holds
    all three (the merged runs compete in both), never a scenario 'concept_aware = concept_incremental'."""
    from clad.report.aggregate import merge_shared
    from clad.report.ranking import rankings

    datasets = [
        {
            "name": "synthetic",
            "label": f"s{k}",
            "n_concepts": 3,
            "n_train": 80,
            "n_test": 60,
            "separation": 2.0 + k,
        }
        for k in range(3)
    ]
    spec = parse_spec(
        {
            "name": "merged",
            "seeds": 1,
            "datasets": datasets,
            "scenarios": ["concept_aware", "concept_incremental"],
            "strategies": ["naive", "replay", "experts"],
            "detectors": ["hbos"],
        }
    )
    result = run_spec(spec, tmp_path / "out")
    assert result.n_failed == 0
    merged = merge_shared(result.runs)
    assert any(r.scenario == "concept_aware = concept_incremental" for r in merged)
    ranked = {r.scenario: r for r in rankings(merged, "continual_average", "roc_auc")}
    assert set(ranked) == {"concept_aware", "concept_incremental"}
    aware = set(ranked["concept_aware"].table["configuration"])
    assert {"naive + hbos", "replay + hbos", "experts + hbos"} <= aware
    assert {"naive + hbos", "replay + hbos", "experts + hbos"} <= set(
        ranked["concept_incremental"].table["configuration"]
    )
    report = _report(tmp_path / "out")
    first = report.index.read_text()
    assert (
        "concept_aware = concept_incremental (3 blocks" not in first
    )  # a merged label is no scenario of its own
