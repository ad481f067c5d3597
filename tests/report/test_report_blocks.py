"""Statistics over independent evidence: same computations merged, shared datasets named, one
block compared paired over seeds."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from clad import metrics
from clad.results import RunResult
from clad.report import StatisticsWarning, compare
from clad.report.blocks import evidence_blocks

BASE = np.array([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])


def _run(dataset, scenario, strategy, detector, seed, R):
    R = np.clip(np.asarray(R, dtype=float), 0, 1)
    return RunResult(
        dataset,
        scenario,
        strategy,
        detector,
        seed,
        ("A", "B", "C"),
        ("A", "B", "C"),
        R={"roc_auc": R},
        metrics={"roc_auc": metrics.summarize(R)},
    )


def _grid(datasets=("d0",), identical=True, seeds=(0, 1, 2)):
    """Detectors a > b > c; scenarios 'aware' and 'incremental' give identical R when ``identical``."""
    out = []
    for di, ds in enumerate(datasets):
        for scenario in ("aware", "incremental"):
            shift = 0.0 if identical or scenario == "aware" else -0.02
            for k, det in enumerate("abc"):
                for seed in seeds:
                    R = BASE - 0.05 * k + 0.013 * di + 0.003 * seed + shift
                    out.append(_run(ds, scenario, "naive", det, seed, R))
    return out


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        return fn(*args, **kw)


@pytest.mark.slow
def test_identical_scenario_settings_are_merged_into_one_block():
    ev = evidence_blocks(_grid(("d0", "d1", "d2")), by="detector", blocks=("dataset", "scenario"))
    assert list(ev.scores.index) == [
        "d0 / aware = d0 / incremental",
        "d1 / aware = d1 / incremental",
        "d2 / aware = d2 / incremental",
    ]
    assert len(ev.merged) == 3 and "identical R for every detector and seed" in ev.merged[0]
    assert ev.shared == ()  # once merged, no two blocks share a dataset
    c = _quiet(compare, _grid(("d0", "d1", "d2")), by="detector", blocks=("dataset", "scenario"))
    assert c.n_blocks == 3 and any("one block" in n for n in c.notes)


def test_different_scenario_settings_are_kept_apart():
    results = _grid(("d0", "d1", "d2"), identical=False)
    ev = evidence_blocks(results, by="detector", blocks=("dataset", "scenario"))
    assert len(ev.scores) == 6 and ev.merged == ()
    assert (
        ev.shared[0]
        == "blocks d0 / aware, d0 / incremental share dataset d0: they are not independent"
    )
    # blocks = datasets: each dataset's score is the mean over its two scenario settings
    by_ds = evidence_blocks(results, by="detector")
    assert len(by_ds.scores) == 3 and by_ds.shared == () and by_ds.merged == ()
    ca = [
        metrics.continual_average(np.clip(BASE + s, 0, 1))
        for s in (0.003 * 0, 0.003 * 1, 0.003 * 2)
    ]
    ca_shifted = [
        metrics.continual_average(np.clip(BASE + s - 0.02, 0, 1)) for s in (0, 0.003, 0.006)
    ]
    assert by_ds.scores.loc["d0", "a"] == pytest.approx((np.mean(ca) + np.mean(ca_shifted)) / 2)


def test_identical_settings_count_once_inside_a_dataset_block():
    results = _grid(("d0", "d1", "d2"))
    # a third, different setting: without the merge it would weigh 1/3 instead of 1/2
    results += [
        _run(f"d{d}", "agnostic", "naive", det, seed, BASE - 0.05 * k - 0.1)
        for d in range(3)
        for k, det in enumerate("abc")
        for seed in (0, 1, 2)
    ]
    ev = evidence_blocks(results, by="detector")
    assert ev.merged[0] == (
        "d0: aware = incremental hold identical R for every detector and seed (the same "
        "computation): counted once"
    )
    aware = np.mean([metrics.continual_average(np.clip(BASE + 0.003 * s, 0, 1)) for s in range(3)])
    agnostic = metrics.continual_average(BASE - 0.1)
    assert ev.scores.loc["d0", "a"] == pytest.approx((aware + agnostic) / 2)


def test_runs_without_R_are_never_merged():
    runs = [
        RunResult("d", sc, "naive", det, 0, metrics={"roc_auc": {"continual_average": v}})
        for sc in ("aware", "incremental")
        for det, v in (("a", 0.8), ("b", 0.7))
    ]
    ev = evidence_blocks(runs, by="detector", blocks=("dataset", "scenario"))
    assert len(ev.scores) == 2 and ev.merged == ()


def test_two_blocks_are_too_few_for_a_test():
    with pytest.warns(StatisticsWarning, match="only 2 complete block"):
        c = compare(_grid(("d0", "d1")), by="detector")
    assert c.statistic is None and c.pvalue is None and not c.significant and c.paired is None


def test_one_block_compares_methods_paired_over_seeds():
    results = _grid(("d0",), identical=False)
    with pytest.warns(
        StatisticsWarning, match="paired over its seeds \\(at most 3 independent values"
    ):
        c = compare(results, by="detector")
    assert c.n_blocks == 1 and c.statistic is None and not c.significant
    assert "weaker claim" in c.message
    p = c.paired.set_index(["a", "b"])
    assert list(p.index) == [("a", "b"), ("a", "c"), ("b", "c")]
    # a - b per seed: CA of (BASE + x) minus CA of (BASE - 0.05 + x), averaged over both scenario settings
    per_seed = []
    for s in range(3):
        diff = 0.0
        for shift in (0.0, -0.02):
            diff += (
                metrics.continual_average(np.clip(BASE + 0.003 * s + shift, 0, 1))
                - metrics.continual_average(np.clip(BASE - 0.05 + 0.003 * s + shift, 0, 1))
            ) / 2
        per_seed.append(diff)
    row = p.loc[("a", "b")]
    assert (
        row.difference_mean == pytest.approx(np.mean(per_seed))
        and row.difference_n == 3
        and row.a_better == 3
    )
    # the interval of the mean difference: a bootstrap over the 3 seeds, within the differences themselves
    assert (
        min(per_seed) - 1e-12
        <= row.difference_ci_low
        <= row.difference_mean
        <= row.difference_ci_high
        <= max(per_seed) + 1e-12
    )


def test_any_declared_metric_can_be_compared():
    c = _quiet(
        compare, _grid(("d0", "d1", "d2"), identical=False), by="detector", metric="forgetting"
    )
    assert c.metric == "forgetting" and not c.higher_is_better
    with pytest.raises(ValueError, match="unknown continual metric"):
        compare([], metric="nope")
    assert isinstance(c.scores, pd.DataFrame)
