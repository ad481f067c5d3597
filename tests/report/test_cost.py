"""Cost of a run: peak memory measured per run, and fit/score seconds, peak memory and rows kept in
the leaderboard and the report."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from clad.core.memory import peak_rss
from clad.results import RunResult
from clad.results.store import ResultStore
from clad.report import leaderboard, make_report
from clad.report.cost import COST, cost_table
from clad.report.table_formats import leaderboard_markdown


def _measurable():
    with peak_rss() as p:
        pass
    if p.bytes is None:
        pytest.skip("the resident set size's high-water mark cannot be reset here (not Linux)")


# 4 concepts of 40,000 x 40 rows (12.8 MB each): cumulative stacks all 51 MB at its last step, an array
# beyond malloc's largest mmap threshold (32 MiB), so new pages whatever the process freed before. The two
# runs go in a fresh interpreter: in the suite's own process, earlier tests' garbage, collected during a
# run, can give back more pages than the run takes, and the rise above the start is then 0
_TWO_RUNS = """
import json
from sklearn.ensemble import IsolationForest
from clad.core.experiment import run_experiment
from clad.datasets import make_synthetic
from clad.scenarios import ConceptIncremental
from clad.strategies import Cumulative, Naive

ds = make_synthetic(n_concepts=4, n_train=40_000, n_test=100, n_features=40, random_state=0)
out = {}
for S in (Naive, Cumulative):
    r = run_experiment(ds, ConceptIncremental(), S(IsolationForest(n_estimators=5)), seed=0)
    out[S.__name__] = {"peak": r.peak_memory, "rows": max(r.memory_rows)}
print(json.dumps(out))
"""


@pytest.mark.slow
def test_peak_memory_is_recorded_and_grows_with_what_a_strategy_holds():
    _measurable()
    done = subprocess.run(
        [sys.executable, "-c", _TWO_RUNS], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout.strip().splitlines()[-1])
    naive, cumulative = runs["Naive"], runs["Cumulative"]
    assert naive["peak"] is not None and naive["peak"] >= 0
    assert cumulative["peak"] > 0
    assert cumulative["peak"] > naive["peak"] + 40_000_000  # most of the 51 MB it stacks
    assert cumulative["rows"] == 160_000 and naive["rows"] == 0


def test_peak_memory_round_trips_through_the_record_and_the_store(tmp_path):
    r = RunResult(
        "d",
        "s",
        "naive",
        "if",
        0,
        ("A",),
        ("A",),
        R={"roc_auc": np.array([[0.5]])},
        run_id="x",
        peak_memory=123_456_789,
    )
    assert RunResult.from_dict(r.to_dict()).peak_memory == 123_456_789
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.write(r)
        store.write(RunResult("d", "s", "naive", "if", 1, run_id="y"))
        back = {x.run_id: x for x in store.load_results()}
    assert back["x"].peak_memory == 123_456_789 and back["y"].peak_memory is None


def _costly(seed, strategy, fit, score, rows, peak):
    return RunResult(
        "toy",
        "aware",
        strategy,
        "if",
        seed,
        ("A", "B"),
        ("A", "B"),
        R={"roc_auc": np.array([[0.9, 0.5], [0.7, 0.8]])},
        run_id=f"{strategy}{seed}",
        timings={"fit": fit, "score": score, "total": 1.0},
        memory_rows=rows,
        peak_memory=peak,
    )


RUNS = [
    _costly(0, "naive", [1.0, 3.0], [0.5, 0.5], (0, 0), 1_000_000),
    _costly(1, "naive", [2.0, 2.0], [0.5, 1.5], (0, 0), 3_000_000),
    _costly(0, "cumulative", [4.0, 8.0], [1.0, 1.0], (50, 100), 10_000_000),
    _costly(1, "cumulative", [4.0, 4.0], [1.0, 1.0], (50, 100), None),
]


def test_leaderboard_has_the_cost_columns():
    lb = leaderboard(RUNS).set_index("strategy")
    # by hand: naive fit per step 2.0 and 2.0 -> 2.0; score 0.5 and 1.0 -> 0.75; peak 1 and 3 MB -> 2 MB
    assert lb.loc["naive", "fit_seconds_mean"] == pytest.approx(2.0)
    assert lb.loc["naive", "score_seconds_mean"] == pytest.approx(0.75)
    assert lb.loc["naive", "peak_memory_mb_mean"] == pytest.approx(2.0)
    assert lb.loc["naive", "peak_memory_mb_std"] == pytest.approx(np.std([1.0, 3.0], ddof=1))
    assert lb.loc["naive", "memory_rows_mean"] == 0
    # cumulative: fit 6.0 and 4.0 -> 5.0; one seed without a peak memory: n = 1, not 2
    assert lb.loc["cumulative", "fit_seconds_mean"] == pytest.approx(5.0)
    assert lb.loc["cumulative", "peak_memory_mb_mean"] == pytest.approx(10.0)
    assert lb.loc["cumulative", "peak_memory_mb_n"] == 1
    assert lb.loc["cumulative", "memory_rows_mean"] == 100
    md = leaderboard_markdown(leaderboard(RUNS))
    for cost in COST.values():
        assert cost.label in md
    assert cost_table(RUNS)["fit_seconds_mean"].tolist() == pytest.approx([2.0, 5.0])


@pytest.mark.slow
def test_report_contains_the_cost_figure(tmp_path):
    report = make_report(RUNS, tmp_path, stat_metrics=())
    names = [n for n in report.figures if n.startswith("cost__")]
    assert names == ["cost__toy__aware.js"]  # drawn by the browser (clad.report.charts)
    page = report.all_text()
    assert "Cost" in page and "fit s/step" in page and "peak MB" in page
    assert "fit_seconds_mean" in report.tables["csv"].read_text()
