"""A derived record follows its inputs: after an input changes, the tuning choices, evaluation runs
and references that are no longer part of the spec's computation are retired, so that the folder
describes one computation of one spec, and the console says what replaced what and why."""

import json
import os
import time

import numpy as np
import pandas as pd
import pytest

from clad.engine.benchmark import run_spec
from clad.results.store import ResultStore


def _table(path, seed: int) -> None:
    """Two concepts; with seed 1 the tuning picks max_samples=64, with seed 0 max_samples=16."""
    rng = np.random.default_rng(seed)
    parts = []
    for c, shift in (("a", 0.0), ("b", 3.0)):
        X = rng.normal(size=(80, 3)) + shift
        y = np.zeros(80, int)
        y[-8:] = 1
        X[-8:] += rng.normal(0, 3, size=(8, 3))
        parts.append(pd.DataFrame({"c": c, "y": y, **{f"x{i}": X[:, i] for i in range(3)}}))
    pd.concat(parts).to_csv(path, index=False)
    later = time.time() + 5
    os.utime(path, (later, later))


def _spec(data_dir) -> dict:
    return {
        "name": "tuned-refs",
        "seeds": 1,
        "references": ["joint"],
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "detectors": [{"name": "iforest", "n_estimators": 10}],
        "datasets": [
            {
                "name": "table",
                "file": "data.csv",
                "data_dir": str(data_dir),
                "concept_column": "c",
                "label_column": "y",
                "random_state": 0,
            }
        ],
        "tuning": {
            "mode": "first_concepts",
            "k": 1,
            "detectors": {"iforest": {"max_samples": [16, 64]}},
        },
    }


@pytest.mark.slow
def test_a_changed_data_file_retires_the_old_evaluation_run_and_its_reference(tmp_path, caplog):
    data = tmp_path / "data"
    data.mkdir()
    _table(data / "data.csv", 1)
    first = run_spec(_spec(data), tmp_path / "out")
    assert first.runs[0].extras["tuning"]["chosen_params"]["detector"] == {"max_samples": 64}
    old_run, old_ref = first.runs[0].run_id, first.references[0].run_id

    _table(data / "data.csv", 0)  # the input changes: the tuning now picks 16
    with caplog.at_level("WARNING"):
        again = run_spec(_spec(data), tmp_path / "out")
    assert again.runs[0].extras["tuning"]["chosen_params"]["detector"] == {"max_samples": 16}
    new_run, new_ref = again.runs[0].run_id, again.references[0].run_id
    assert new_run != old_run and new_ref != old_ref

    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["run_id"] for r in doc["runs"]] == [new_run]
    assert [r["run_id"] for r in doc["references"]] == [new_ref]
    with ResultStore(tmp_path / "out" / "results.sqlite", create=False) as store:
        assert old_run not in store.status() and new_run in store.status()
        assert [r.run_id for r in store.load_references()] == [new_ref]
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert summary["runs"].tolist() == [1]
    assert (
        f"(run {old_run}) replaced by run {new_run}: after an input changed, the tuning chose "
        "max_samples=16 instead of max_samples=64"
    ) in caplog.text
    assert (
        f"joint reference table / iforest / seed 0 (run {old_ref}) replaced by run {new_ref}: the runs it "
        "serves changed" in caplog.text
    )

    # the folder now holds what a fresh folder computes from the new file
    fresh = run_spec(_spec(data), tmp_path / "fresh")
    assert fresh.runs[0].run_id == new_run
    assert (
        fresh.runs[0].metrics["roc_auc"]["continual_average"]
        == again.runs[0].metrics["roc_auc"]["continual_average"]
    )
