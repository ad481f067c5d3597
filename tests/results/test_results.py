"""Typed results serialise to strict JSON and back without loss."""

import json

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

from clad import ConceptAgnostic, ConceptAware, Cumulative, make_synthetic, run_experiment
from clad.errors import DataError
from clad.results import RunResult, load_results, write_results


def strict_loads(text):
    def refuse(name):
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def result():
    ds = make_synthetic(n_concepts=3, n_train=100, n_test=60, random_state=0)
    r = run_experiment(
        ds,
        ConceptAgnostic(batch_size=70, anytime_every=2),
        Cumulative(IsolationForest(n_estimators=10)),
        ("roc_auc", "f1"),
        seed=3,
    )
    # put a NaN cell in to check it survives as null
    R = dict(r.R)
    R["f1"] = R["f1"].copy()
    R["f1"][0, 2] = np.nan
    return RunResult(**{**r.__dict__, "R": R})


def test_round_trip_is_lossless(result, tmp_path):
    path = tmp_path / "results.json"
    write_results(path, [result])
    text = path.read_text()
    doc = strict_loads(text)
    run = doc["runs"][0]
    for key in (
        "dataset",
        "scenario",
        "strategy",
        "detector",
        "seed",
        "concepts",
        "test_concepts",
        "R",
        "metrics",
        "timings",
        "versions",
    ):
        assert key in run
    assert run["R"]["f1"][0][2] is None
    assert set(run["versions"]) >= {"clad", "numpy", "scikit-learn", "pyod", "torch", "python"}
    back = load_results(path)[0]
    for m in result.R:
        np.testing.assert_array_equal(back.R[m], result.R[m])
    assert back.to_dict() == result.to_dict()
    assert back.anytime["rows_seen"] == result.anytime["rows_seen"]


def test_files_are_written_atomically(tmp_path, result):
    path = tmp_path / "results.json"
    write_results(path, [result])
    before = path.read_text()

    class Boom(RunResult):
        def to_dict(self):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_results(path, [result, Boom(**result.__dict__)])
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_read_bad_files(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_results(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(DataError, match="is not valid JSON"):
        load_results(tmp_path / "bad.json")
    (tmp_path / "norun.json").write_text("{}")
    with pytest.raises(DataError, match="has no 'runs' list"):
        load_results(tmp_path / "norun.json")
    (tmp_path / "badrun.json").write_text('{"runs": [{"dataset": "x"}]}')
    with pytest.raises(DataError, match="run record is not a clad result"):
        load_results(tmp_path / "badrun.json")


def test_same_seed_same_R_different_seed_different():
    ds = make_synthetic(n_concepts=3, n_train=100, n_test=60, random_state=0)
    runs = [
        run_experiment(ds, ConceptAware(), Cumulative(IsolationForest(n_estimators=10)), seed=s)
        for s in (1, 1, 2)
    ]
    assert np.array_equal(runs[0].R["roc_auc"], runs[1].R["roc_auc"])
    assert not np.array_equal(runs[0].R["roc_auc"], runs[2].R["roc_auc"])


def test_the_record_is_declared_once_and_the_database_follows_it(result, tmp_path):
    """The keys of a record are RunResult's fields in order; the database's runs table has a column
    for every stored field (and only its own bookkeeping besides), and gives back the same record."""
    from dataclasses import fields

    from clad.results import ResultStore
    from clad.results.record import RECORD_FIELDS

    assert (
        list(result.to_dict())
        == [f.name for f in fields(RunResult)]
        == [f.name for f in RECORD_FIELDS]
    )
    stored = {f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["column"]}
    assert {"R", "metrics"}.isdisjoint(stored) and "run_order" in stored and "order" not in stored
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.write(RunResult(**{**result.__dict__, "run_id": "r1", "order": "random"}))
        columns = set(store.runs_table().columns)
        back = store.load_results()[0]
    assert columns == stored | {"curves", "started", "finished"}
    assert back.order == "random" and back.to_dict() == {
        **result.to_dict(),
        "run_id": "r1",
        "order": "random",
    }
