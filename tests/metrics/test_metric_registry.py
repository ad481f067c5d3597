"""One declaration per metric: a metric declared in a test reaches every consumer unchanged."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from clad import metrics
from clad.results import RunResult
from clad.engine.summary import format_summary, summary_table
from clad.errors import CladValueError
from clad.report import best_status, compare, leaderboard
from clad.report.table_formats import leaderboard_markdown


@pytest.fixture
def last_step_spread():
    """A new lower-is-better metric: the spread (max - min) of the last row over learned concepts."""

    @metrics.scalar_metric("Spread", lower_is_better=True, unit="concepts", headline=True)
    def last_step_spread(R, learned_at=None):
        """Max minus min of the last row over learned concepts (one term: the spread)."""
        R, t = metrics.cells.prepare(R, learned_at)
        row = R[-1, t >= 0]
        row = row[~np.isnan(row)]
        return np.array([row.max() - row.min()]) if row.size else np.array([np.nan])

    yield last_step_spread
    metrics.unregister("last_step_spread")


def _runs():
    """3 datasets x 3 detectors x 2 seeds; detector k's last row spreads by 0.1 * (3 - k)."""
    out = []
    for d in range(3):
        for k, det in enumerate(("a", "b", "c")):
            for seed in (0, 1):
                spread = 0.1 * (3 - k) + 0.01 * d + 0.001 * seed
                R = np.array([[0.9, 0.5], [0.9 - spread, 0.9]])
                out.append(
                    RunResult(
                        f"data{d}",
                        "aware",
                        "naive",
                        det,
                        seed,
                        ("A", "B"),
                        ("A", "B"),
                        R={"roc_auc": R},
                        metrics={"roc_auc": metrics.summarize(R)},
                    )
                )
    return out


@pytest.mark.slow
def test_a_declared_metric_reaches_summary_leaderboard_statistics(last_step_spread):
    R = np.array([[0.9, 0.5], [0.6, 0.9]])
    s = metrics.summarize(R)
    assert s["last_step_spread"] == pytest.approx(0.3) and s["left_out"]["last_step_spread"] == 0
    runs = _runs()
    # the leaderboard, from the recorded value
    lb = leaderboard(runs)
    row = lb[(lb.dataset == "data0") & (lb.detector == "a")].iloc[0]
    assert row.last_step_spread_mean == pytest.approx(0.3005) and row.last_step_spread_n == 2
    # lower is better, as declared: c has the best mean (2 seeds: too few for intervals, so "within noise")
    status = best_status(lb, ["last_step_spread"], within=["dataset"])
    assert set(lb[status["last_step_spread"] != ""].detector) == {"c"}
    assert set(status["last_step_spread"]) == {"", "within noise"}
    md = leaderboard_markdown(lb)
    assert "| Spread |" in md and "except Forgetting, Stability, Spread (lower is better)" in md
    # the summary, by its label, and in the printed text as a headline metric
    t = summary_table(runs)
    assert "Spread_mean" in t.columns and "Spread" in format_summary(t)
    # the statistics: c (smallest spread) ranks first
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare(runs, by="detector", metric="last_step_spread")
    assert c.average_ranks.index[0] == "c" and not c.higher_is_better


def test_a_declared_metric_is_computed_from_R_for_runs_recorded_before_it(last_step_spread):
    runs = [
        RunResult("d", "s", "naive", "a", seed, ("A", "B"), ("A", "B"), R={"roc_auc": np.array(R)})
        for seed, R in ((0, [[0.9, 0.5], [0.6, 0.9]]), (1, [[0.9, 0.5], [0.7, 0.9]]))
    ]
    lb = leaderboard(runs, ["last_step_spread"])
    assert lb.last_step_spread_mean.iloc[0] == pytest.approx(0.25)


def test_declarations_are_checked():
    with pytest.raises(CladValueError, match="already declared"):
        metrics.scalar_metric("CA", name="continual_average")(
            lambda R, learned_at=None: np.asarray(R)[0]
        )
    with pytest.raises(CladValueError, match="inputs are"):
        metrics.scalar_metric("X", needs=("oracle",), name="x_metric")(
            lambda R, o, learned_at=None: R
        )
    with pytest.raises(CladValueError, match="unknown continual metric"):
        leaderboard([], ["no_such_metric"])
    with pytest.raises(CladValueError, match="unknown inputs"):
        metrics.summarize([[1.0]], oracle=[1.0])
