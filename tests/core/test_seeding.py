"""One seeding path: the object API and the configuration API seed a run the same way, once."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

import clad.core.seeding as seeding
from clad.core.experiment import run_experiment
from clad.core.seeding import derive_seeds, seed_run
from clad.datasets import load_dataset, make_synthetic
import clad.engine.config as engine_config
from clad.engine.config import Component, RunConfig
from clad.engine.run import build_run, run_config
from clad.scenarios import ConceptAgnostic
from clad.strategies import Replay

DATA = {"n_concepts": 3, "n_features": 3, "n_train": 120, "n_test": 60}
# every part has a random_state to fill: the data, the replay buffer, the forest and the gradual transition
CFG = RunConfig(
    Component("synthetic", DATA),
    Component("concept_agnostic", {"batch_size": 30, "transition": 20}),
    Component("replay", {"buffer_size": 50}),
    Component("iforest", {"n_estimators": 15}),
    seed=5,
    base_metrics=("roc_auc", "f1"),
)


def test_seed_run_fills_only_what_is_unset_and_changes_nothing_given():
    seeds = derive_seeds(3)
    strategy = Replay(IsolationForest(n_estimators=5))
    scenario = ConceptAgnostic(batch_size=10, transition=5)
    seeded = seed_run(
        3,
        strategy=strategy,
        scenario=scenario,
        dataset_factory=make_synthetic,
        dataset_params={"n_concepts": 2},
    )
    assert seeded.strategy.random_state == seeds["strategy"]
    assert seeded.strategy.detector.estimator.random_state == seeds["detector"]
    assert seeded.scenario.random_state == seeds["scenario"]
    assert seeded.dataset_params == {"n_concepts": 2, "random_state": seeds["dataset"]}
    # the caller's objects are untouched
    assert strategy.random_state is None and strategy.detector.random_state is None
    assert scenario.random_state is None
    # an explicit seed wins everywhere
    mine = seed_run(
        3,
        strategy=Replay(IsolationForest(random_state=1), random_state=2),
        scenario=ConceptAgnostic(transition=5, random_state=4),
        dataset_factory=make_synthetic,
        dataset_params={"random_state": 9},
    )
    assert (
        mine.strategy.random_state,
        mine.strategy.detector.estimator.random_state,
        mine.scenario.random_state,
        mine.dataset_params["random_state"],
    ) == (2, 1, 4, 9)
    # a loader without random_state gets none; the derivation has one home, clad.core.seeding
    assert seed_run(0, dataset_factory=lambda n: n, dataset_params={"n": 1}).dataset_params == {
        "n": 1
    }
    assert not hasattr(engine_config, "derive_seeds")  # one home: clad.core.seeding


@pytest.mark.slow
def test_object_and_configuration_apis_give_the_same_R_deriving_seeds_once(monkeypatch):
    calls = []
    real = seeding.derive_seeds
    monkeypatch.setattr(seeding, "derive_seeds", lambda seed: calls.append(seed) or real(seed))
    from_config = run_config(CFG)
    # one derivation of the run seed for the dataset, scenario, strategy and detector of the run
    # (the others are seed_consumers' probe of which parts take a seed, recorded as seed_reach)
    assert calls.count(5) == 1 and set(calls) <= {5, 1, 2}
    calls.clear()
    dataset = load_dataset("synthetic", {**DATA, "random_state": real(5)["dataset"]})
    from_objects = run_experiment(
        dataset,
        ConceptAgnostic(batch_size=30, transition=20),
        Replay(IsolationForest(n_estimators=15), buffer_size=50),
        ("roc_auc", "f1"),
        seed=5,
    )
    assert calls == [5]
    assert from_config.seed == from_objects.seed == 5
    for m in ("roc_auc", "f1"):
        assert np.array_equal(from_config.R[m], from_objects.R[m], equal_nan=True)
    # and the seed matters: another run seed gives another R
    other = run_config(RunConfig(CFG.dataset, CFG.scenario, CFG.strategy, CFG.detector, seed=6))
    assert not np.array_equal(other.R["roc_auc"], from_config.R["roc_auc"])


def test_build_run_seeds_every_part():
    seeds = derive_seeds(CFG.seed)
    dataset, scenario, strategy = build_run(CFG)
    assert scenario.random_state == seeds["scenario"] and strategy.random_state == seeds["strategy"]
    assert strategy.detector.estimator.random_state == seeds["detector"]
    assert dataset.metadata["random_state"] == seeds["dataset"]


def test_a_run_records_the_parts_its_seed_reaches_and_the_report_reads_them(tmp_path):
    import dataclasses

    from clad.report.headline import deterministic_configurations
    from clad.results import load_results, write_results
    from clad.results.store import ResultStore

    data = Component("synthetic", {"n_concepts": 2, "n_features": 2, "n_train": 30, "n_test": 20})
    cfg = RunConfig(data, Component("concept_aware"), Component("naive"), Component("hbos"), seed=0)
    first = run_config(cfg)
    assert first.seed_reach == ("dataset",)  # hbos and naive take no seed
    runs = [first, dataclasses.replace(first, seed=1, run_id="again")]
    write_results(tmp_path / "results.json", runs)
    with ResultStore(tmp_path / "results.sqlite") as store:
        for r in runs:
            store.write(r)
    for source in ("results.json", "results.sqlite"):
        back = load_results(tmp_path / source)
        assert [r.seed_reach for r in back] == [("dataset",)] * 2
        # found identical after the fact: the reach comes from the record, not from rebuilding
        back = [dataclasses.replace(r, config={}) for r in back]
        assert deterministic_configurations(back)["reach"].tolist() == ["dataset"]
    old = dataclasses.replace(first, seed_reach=None)  # a record written before it was recorded
    assert (
        "seed_reach" in old.to_dict() and type(old).from_dict({**old.to_dict()}).seed_reach is None
    )
