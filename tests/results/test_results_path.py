"""One path for results: one mapping of a run (to_dict/from_dict) behind results.json and the
database, one reader of results, and an evaluator that reports to observers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

import clad
from clad.core.evaluation import AnytimeEvent, Evaluator, StepEvent
from clad.core.experiment import run_experiment
from clad.results import load_results, write_results
from clad.datasets import make_synthetic
from clad.results import reading, store
from clad.errors import CladValueError
from clad.scenarios import ConceptAgnostic, ConceptIncremental
from clad.strategies import Naive


def _result():
    ds = make_synthetic(n_concepts=3, n_features=3, n_train=80, n_test=40, random_state=0)
    r = run_experiment(
        ds,
        ConceptAgnostic(batch_size=60, anytime_every=2),
        Naive(IsolationForest(n_estimators=5)),
        base_metrics=("roc_auc", "f1"),
        seed=1,
        labels={"run_id": "abc"},
    )
    return r


def test_json_and_database_hold_the_same_record(tmp_path):
    r = _result()
    write_results(tmp_path / "results.json", [r])
    with store.ResultStore(tmp_path / "results.sqlite") as s:
        s.write(r)
    from_json = load_results(tmp_path / "results.json")
    from_db = reading.load_results(tmp_path / "results.sqlite")
    assert [x.to_dict() for x in from_json] == [x.to_dict() for x in from_db] == [r.to_dict()]
    # the database rows are the record laid out: one cell per R entry, NaN as NULL
    rec = r.to_dict()
    with store.ResultStore(tmp_path / "results.sqlite") as s:
        cells = s.tidy()
    assert len(cells) == sum(len(row) for R in rec["R"].values() for row in R)


def test_one_reader(tmp_path):
    assert load_results is reading.load_results is clad.load_results
    assert not hasattr(clad.report, "load_results")  # the report reads results through clad.results
    r = _result()
    write_results(tmp_path / "results.json", [r])
    for reader in (load_results, reading.load_results):
        assert [x.run_id for x in reader(tmp_path)] == ["abc"]
        assert [x.run_id for x in reader(tmp_path / "results.json")] == ["abc"]


def test_observers_receive_frozen_events_for_each_row():
    ds = make_synthetic(n_concepts=3, n_features=3, n_train=80, n_test=40, random_state=0)
    events = []
    out = ConceptAgnostic(batch_size=60, anytime_every=2).run(
        ds,
        Naive(IsolationForest(n_estimators=5, random_state=0)),
        Evaluator(ds.test, observers=[events.append]),
    )
    steps = [e for e in events if isinstance(e, StepEvent)]
    anytime = [e for e in events if isinstance(e, AnytimeEvent)]
    assert steps == [StepEvent(name, i) for i, name in enumerate(out.steps)]
    assert [e.rows_seen for e in anytime] == list(out.anytime_rows_seen)
    assert [e.index for e in anytime] == list(range(len(anytime)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps[0].index = 5
    # observing changes nothing
    quiet = ConceptAgnostic(batch_size=60, anytime_every=2).run(
        ds, Naive(IsolationForest(n_estimators=5, random_state=0)), Evaluator(ds.test)
    )
    assert np.array_equal(quiet.R["roc_auc"], out.R["roc_auc"])


def test_run_experiment_on_step_is_an_observer_and_bad_observers_are_refused():
    ds = make_synthetic(n_concepts=2, n_features=3, n_train=60, n_test=30, random_state=0)
    calls = []
    run_experiment(
        ds,
        ConceptIncremental(),
        Naive(IsolationForest(n_estimators=5)),
        seed=0,
        on_step=lambda step, i: calls.append((step, i)),
    )
    assert calls == [("C0", 0), ("C1", 1)]
    with pytest.raises(CladValueError, match="observers: 3 is not callable"):
        Evaluator(ds.test, observers=[3])
