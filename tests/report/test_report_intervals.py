"""Intervals that respect their quantity and chance levels beside every score.

Intervals: on random per-seed tables no interval leaves the range its metric can take (declared once,
with the metric), fewer than 3 seeds give none, and "best" needs an interval clear of the next one's.
Chance: what a scoreless detector gets, computed once per test concept from its labels, equals the
hand-computed values (ROC-AUC 0.5, AP the anomaly rate, F1 of flagging every row 2p/(1+p)).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import clad
from clad.core.concepts import Concept, ConceptDataset
from clad.results.record import RunResult
from clad.metrics import REGISTRY, get_metric, scalar_names
from clad.metrics.base import base_metric_bounds, chance_level
from clad.report import best_status, chance_table, describe, leaderboard
from clad.report.aggregate import value_bounds
from clad.report.cost import COST


def test_no_interval_outside_its_metric_bounds_on_200_random_tables():
    rng = np.random.default_rng(27)
    names = [m for m in scalar_names() if not get_metric(m).needs] + list(COST)
    checked = 0
    for _ in range(200):
        name = names[rng.integers(len(names))]
        lo, hi = value_bounds(name, "roc_auc")
        n_seeds = int(rng.integers(2, 11))
        if np.isfinite(hi):  # values piled against a bound: where a t-interval would cross it
            edge = lo if rng.random() < 0.5 else hi
            values = edge + (hi - lo) * rng.beta(0.3, 3.0, size=(n_seeds, 5)) * (
                1 if edge == lo else -1
            )
        else:  # seconds, bytes, rows: skewed, close to 0
            values = rng.exponential(rng.uniform(0.001, 100), size=(n_seeds, 5))
        values[rng.random(values.shape) < 0.1] = np.nan  # undefined cells are left out
        d = describe(values, (lo, hi))
        for k in range(values.shape[1]):
            n = int(d["n"][k])
            if n < 3:
                assert np.isnan(d["ci_low"][k]) and np.isnan(d["ci_high"][k]), (name, n)
                continue
            checked += 1
            assert lo <= d["ci_low"][k] <= d["mean"][k] <= d["ci_high"][k] <= hi, (
                name,
                values[:, k],
            )
    assert checked > 500


def test_every_bounded_metric_declares_its_range():
    assert {m: base_metric_bounds(m) for m in ("roc_auc", "f1", "average_precision", "vus_pr")} == {
        "roc_auc": (0.0, 1.0),
        "f1": (0.0, 1.0),
        "average_precision": (0.0, 1.0),
        "vus_pr": (0.0, 1.0),
    }
    assert value_bounds("backward_transfer", "roc_auc") == (-1.0, 1.0)
    assert value_bounds("memory_stability", "roc_auc") == (0.0, 0.25)
    assert value_bounds("peak_memory_mb") == (0.0, np.inf)
    assert all(
        get_metric(m).scale in ("value", "difference", "variance", "unbounded") for m in REGISTRY
    )


def test_leaderboard_intervals_stay_inside_with_values_near_one():
    runs = [
        RunResult("d", "s", "naive", "if", seed, metrics={"roc_auc": {"continual_average": v}})
        for seed, v in enumerate([0.99, 1.0, 0.995, 1.0])
    ]
    row = leaderboard(runs, ["continual_average"]).iloc[0]
    # the Student-t interval of the mean (hand-computed by scipy's t distribution), cut at ROC-AUC's 1
    from scipy import stats

    v = np.array([0.99, 1.0, 0.995, 1.0])
    low, high = stats.t.interval(0.95, df=3, loc=v.mean(), scale=v.std(ddof=1) / 2)
    assert (
        row.continual_average_ci_low == pytest.approx(low, abs=1e-12) and low < 0.99
    )  # wider than the values
    assert row.continual_average_ci_high == 1.0 < high
    two = leaderboard(runs[:2], ["continual_average"]).iloc[0]
    assert np.isnan(two.continual_average_ci_high) and two.continual_average_values == "0.990 1.000"


def _table(means, lows, highs):
    return pd.DataFrame(
        {
            "dataset": ["d"] * len(means),
            "base_metric": ["roc_auc"] * len(means),
            "scenario": ["s"] * len(means),
            "continual_average_mean": means,
            "continual_average_ci_low": lows,
            "continual_average_ci_high": highs,
        }
    )


def test_best_only_when_clear_of_the_next_interval():
    clear = best_status(_table([0.9, 0.8], [0.88, 0.7], [0.92, 0.85]), ["continual_average"])
    assert clear["continual_average"].tolist() == ["best", ""]
    overlap = best_status(_table([0.9, 0.8], [0.7, 0.75], [0.95, 0.85]), ["continual_average"])
    assert overlap["continual_average"].tolist() == ["within noise", ""]
    few = best_status(_table([0.9, 0.8], [np.nan, np.nan], [np.nan, np.nan]), ["continual_average"])
    assert few["continual_average"].tolist() == ["within noise", ""]


def _concepts(rate: float, names=("A", "B", "C"), n: int = 200, seed: int = 0) -> ConceptDataset:
    rng = np.random.default_rng(seed)
    out = []
    for k, name in enumerate(names):
        y = np.zeros(n, dtype=int)
        y[: int(round(rate * n))] = 1
        X = rng.normal(3 * k, 1, (n, 3)) + 4 * y[:, None]
        out.append(Concept(name, X, y))
    return ConceptDataset(train=[Concept(c.name, c.X[c.y == 0]) for c in out], test=out, name="toy")


def test_chance_levels_equal_hand_computed_values():
    y = np.array([1] * 10 + [0] * 90)
    assert chance_level("roc_auc", y) == 0.5
    assert chance_level("average_precision", y) == pytest.approx(0.1)
    assert chance_level("f1", y) == pytest.approx(0.2 / 1.1) == pytest.approx(0.181818, abs=1e-6)


def test_chance_rows_on_synthetic_concepts():
    from sklearn.ensemble import IsolationForest

    ds = _concepts(0.1)
    run = clad.run_experiment(
        ds,
        clad.ConceptIncremental(),
        clad.Naive(IsolationForest(n_estimators=10)),
        base_metrics=["roc_auc", "f1", "average_precision"],
        seed=0,
    )
    assert run.chance == {
        "roc_auc": [0.5] * 3,
        "f1": [pytest.approx(2 * 0.1 / 1.1)] * 3,
        "average_precision": [pytest.approx(0.1)] * 3,
    }
    table = chance_table(
        [run], ["continual_average", "backward_transfer", "forward_transfer"]
    ).set_index("base_metric")
    assert table.at["f1", "continual_average_mean"] == pytest.approx(0.181818, abs=1e-6)
    assert table.at["f1", "backward_transfer_mean"] == 0.0  # a difference of chance levels
    assert table.at["average_precision", "forward_transfer_mean"] == pytest.approx(0.1)
    assert table.at["roc_auc", "continual_average_mean"] == 0.5
    again = RunResult.from_dict(run.to_dict())  # recorded in results.json
    assert again.chance["f1"] == pytest.approx([2 * 0.1 / 1.1] * 3)


def test_scores_below_chance_on_most_concepts_warn():
    from clad.core.data_checks import check_reversed
    from clad.errors import RunWarning

    R = {"average_precision": np.array([[0.05, 0.5], [0.2, 0.04]])}
    with pytest.warns(RunWarning, match="average_precision below chance on 2 of 2 concepts"):
        check_reversed(R, ["A", "B"], ["A", "B"], {"average_precision": [0.1, 0.1]})


def test_intervals_of_many_columns_at_once_equal_each_column_alone_bit_for_bit():
    """describe_each / intervals (every metric of a configuration at once, as the leaderboard
    describes them) give the numbers of describe / interval column by column, to the last bit, on
    random columns of 1 to 30 values with NaN and bounds that clip."""
    from clad.report.describe import describe_each, interval, intervals

    rng = np.random.default_rng(32)
    compared = 0
    for _ in range(150):
        n, k = int(rng.integers(1, 31)), int(rng.integers(1, 12))
        values = rng.normal(0.5, 0.3, (n, k)) * rng.choice([1.0, 1000.0])
        values[rng.random((n, k)) < 0.2] = np.nan
        lows, highs = rng.choice([0.0, -np.inf, 0.3], k), rng.choice([1.0, np.inf, 0.6], k)
        low, high = intervals(values, lows, highs)
        each = describe_each(values.T, lows, highs)
        for c in range(k):
            alone = describe(values[:, c][:, None], (lows[c], highs[c]))
            assert np.array_equal(
                [low[c], high[c]], interval(values[:, c], (lows[c], highs[c])), equal_nan=True
            )
            for key in ("mean", "std", "n", "ci_low", "ci_high"):
                assert np.array_equal(each[key][c], alone[key][0], equal_nan=True), (key, n, k, c)
            compared += 1
    assert compared > 500
