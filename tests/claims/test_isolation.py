"""Runs cannot touch each other's data: detectors and strategies get read-only arrays, a detector
that writes into them fails with an error naming it and the method, the caller's dataset never
changes, and `clad check` fails a detector that changes its input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

from clad.cli import main
from clad.core.experiment import run_experiment
from clad.datasets import make_synthetic
from clad.engine.config import Component, RunConfig
from clad.engine.run import build_run
from clad.results.store import ResultStore
from clad.errors import DetectorError
from clad.scenarios import ConceptAgnostic, ConceptAware
from clad.strategies import STRATEGIES, Cumulative, Naive

from tests.plugins import CentresInScore, ZeroesInFit
from tests.runner_helpers import SMALL, SMALL_SPEC, run_clad, write_spec


def _snapshot(ds):
    return [c.X.copy() for c in ds.train + ds.test]


def _unchanged(ds, before) -> bool:
    return all(np.array_equal(c.X, b) for c, b in zip(ds.train + ds.test, before))


@pytest.mark.parametrize("detector, method", [(ZeroesInFit(), "fit"), (CentresInScore(), "score")])
def test_a_detector_writing_into_its_input_fails_by_name_and_the_dataset_is_unchanged(
    detector, method
):
    ds = make_synthetic(n_concepts=2, n_features=3, n_train=60, n_test=30, random_state=0)
    before = _snapshot(ds)
    name = type(detector).__name__
    with pytest.raises(
        DetectorError, match=rf"detector {name}: {method}\(\) changes its input X in place"
    ):
        run_experiment(ds, ConceptAware(), Naive(detector), seed=0)
    assert _unchanged(ds, before)
    # the next run on the same dataset object gives what it gives on a fresh one
    fresh = make_synthetic(n_concepts=2, n_features=3, n_train=60, n_test=30, random_state=0)
    a = run_experiment(ds, ConceptAware(), Naive(IsolationForest(n_estimators=10)), seed=0)
    b = run_experiment(fresh, ConceptAware(), Naive(IsolationForest(n_estimators=10)), seed=0)
    assert np.array_equal(a.R["roc_auc"], b.R["roc_auc"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["naive", "cumulative", "replay", "window", "experts", "balanced_replay"]
)
def test_strategies_keep_working_on_read_only_data_and_leave_it_unchanged(name):
    ds = make_synthetic(n_concepts=3, n_features=3, n_train=60, n_test=30, random_state=0)
    before = _snapshot(ds)
    assert not any(c.X.flags.writeable for c in ds.train + ds.test)
    scenario = (
        ConceptAware() if name in ("experts", "balanced_replay") else ConceptAgnostic(batch_size=25)
    )
    strategy = STRATEGIES.build(name, {"detector": IsolationForest(n_estimators=5)})
    r = run_experiment(ds, scenario, strategy, seed=0)
    assert r.R["roc_auc"].shape == (3, 3) and _unchanged(ds, before)


def test_strategy_buffers_are_handed_to_detectors_read_only():
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(DetectorError, match=r"ZeroesInFit: fit\(\)"):
        Cumulative(ZeroesInFit()).learn(X)
    assert X.flags.writeable  # the caller's array itself is not frozen


def test_the_per_process_dataset_cache_hands_out_read_only_arrays():
    cfg = RunConfig(
        Component("synthetic", {"n_concepts": 2, "n_features": 3, "n_train": 40, "n_test": 20}),
        Component("concept_aware"),
        Component("naive"),
        Component("iforest"),
        seed=0,
    )
    dataset, _, _ = build_run(cfg)
    assert not any(
        c.X.flags.writeable or c.y is not None and c.y.flags.writeable
        for c in dataset.train + dataset.test
    )


@pytest.mark.parametrize(
    "path, method", [("plugins:ZeroesInFit", "fit"), ("plugins:CentresInScore", "score")]
)
def test_clad_check_fails_a_detector_that_changes_its_input(path, method, capsys):
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert f"FAIL leaves_input_unchanged: {method}() changed its input X in place" in out


def test_clad_check_passes_detectors_that_leave_their_input_alone(capsys):
    assert main(["check", "plugins:DistanceToMean"]) == 0


MUTATORS = [
    {"name": "tests.plugins:ZeroesInFit", "label": "zeroes"},
    {"name": "tests.plugins:CentresInScore", "label": "centres"},
]


MUTANTS = ("zeroes", "centres")


def _others_R(folder):
    """R of the runs of the well-behaved detectors, and the runs of the mutating ones."""
    with ResultStore(folder / "results.sqlite", create=False) as store:
        runs = store.load_results()
    return {r.run_id: r.R for r in runs if r.detector not in MUTANTS}, [
        r for r in runs if r.detector in MUTANTS
    ]


@pytest.mark.slow
def test_mutating_detectors_before_iforest_leave_its_R_as_when_run_alone(tmp_path):
    # SMALL: iforest and hbos, naive and cumulative, 2 seeds, concept_agnostic; the two
    # mutating plug-ins are listed first
    alone = write_spec(tmp_path, SMALL_SPEC, "alone.toml")
    mixed = write_spec(
        tmp_path, None, "mixed.toml", **{**SMALL, "detectors": MUTATORS + SMALL["detectors"]}
    )
    done = run_clad("run", alone, "--out", tmp_path / "alone", "--jobs", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    reference, _ = _others_R(tmp_path / "alone")
    assert len(reference) == 8
    for jobs in ("1", "2"):
        out = tmp_path / f"mixed{jobs}"
        done = run_clad("run", mixed, "--out", out, "--jobs", jobs, "--quiet")
        got, failed = _others_R(out)
        assert got.keys() == reference.keys()
        for rid, R in reference.items():
            for m in R:
                assert np.array_equal(got[rid][m], R[m], equal_nan=True), (
                    jobs,
                    rid,
                    m,
                    got[rid][m],
                    R[m],
                )
        assert done.returncode == 1 and "8 of " in done.stderr, (
            done.stderr
        )  # every run of the two mutating detectors fails
        assert len(failed) == 8 and all(r.status == "failed" for r in failed)
        for r in failed:
            name, method = (
                ("ZeroesInFit", "fit") if r.detector == "zeroes" else ("CentresInScore", "score")
            )
            assert f"detector {name}: {method}() changes its input X in place" in r.error
