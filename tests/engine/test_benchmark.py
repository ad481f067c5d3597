"""``clad.run_spec``: a whole benchmark from Python, with resume, the store, results.json and summaries."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from clad.engine.settings import Execution
import clad
from clad.results import load_results
from clad.results.store import ResultStore
from clad.engine.benchmark import BenchmarkResult
from clad.errors import CladError, CladValueError

from tests.runner_helpers import SMALL_SPEC, write_spec


@pytest.mark.slow
def test_run_spec_writes_the_folder_then_resumes_and_recomputes_a_deleted_run(tmp_path):
    spec_path = write_spec(tmp_path, SMALL_SPEC)
    out = tmp_path / "out"
    events = []
    first = clad.run_spec(spec_path, out, on_event=events.append)
    assert isinstance(first, BenchmarkResult)
    assert (first.n_total, first.n_ok, first.n_failed, first.n_resumed, first.n_computed) == (
        8,
        8,
        0,
        0,
        8,
    )
    assert first.ok and not first.interrupted
    assert first.database == out / "results.sqlite" and first.results_json == out / "results.json"
    assert sorted(r.run_id for r in load_results(first.results_json)) == sorted(
        r.run_id for r in first.runs
    )
    assert (out / "summary.csv").is_file() and (out / "summary.md").is_file()
    assert (
        len(first.summary) == 2 * 2 * 2
    )  # 2 base metrics x 2 detectors x 2 strategies, over 2 seeds
    assert set(first.summary.runs) == {2} and set(first.summary.CA_n) == {2}
    # the events: the grid, each run started and finished, each step of a sequential run, the end
    kinds = [e.kind for e in events]
    assert kinds[0] == "grid_started" and kinds[-1] == "grid_finished"
    assert events[0].total == 8 and events[0].finished_before == 0
    assert kinds.count("started") == kinds.count("finished") == 8 and kinds.count("step") == 8 * 3
    with ResultStore(out) as store:
        assert store.get_meta("spec_text") == spec_path.read_text(encoding="utf-8")
        stamps = {r: f for r, f in store._con.execute("SELECT run_id, finished FROM runs")}

    second = clad.run_spec(spec_path, out)  # resumed: nothing is computed
    assert (second.n_resumed, second.n_computed, second.n_ok) == (8, 0, 8)
    with ResultStore(out) as store:
        assert {r: f for r, f in store._con.execute("SELECT run_id, finished FROM runs")} == stamps

    gone = first.runs[3]
    con = sqlite3.connect(out / "results.sqlite")
    with con:
        con.execute("PRAGMA foreign_keys = ON")
        con.execute("DELETE FROM runs WHERE run_id = ?", (gone.run_id,))
    con.close()
    third = clad.run_spec(spec_path, out)
    assert (third.n_resumed, third.n_computed, third.n_ok) == (7, 1, 8)
    again = {r.run_id: r for r in third.runs}[gone.run_id]
    for m in gone.R:
        assert np.array_equal(again.R[m], gone.R[m], equal_nan=True)
    with ResultStore(out) as store:
        assert (
            store.count() == 8
            and store._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        )
        kept = {r: f for r, f in store._con.execute("SELECT run_id, finished FROM runs")}
    assert {r: f for r, f in kept.items() if r != gone.run_id} == {
        r: f for r, f in stamps.items() if r != gone.run_id
    }

    fresh = clad.run_spec(spec_path, out, fresh=True)
    assert (fresh.n_resumed, fresh.n_computed) == (0, 8)


@pytest.mark.slow
def test_run_spec_from_a_dict_records_no_text_and_checks_its_arguments_first(tmp_path):
    raw = {
        "seeds": 1,
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "detectors": ["hbos"],
        "datasets": [
            {"name": "synthetic", "n_concepts": 2, "n_features": 2, "n_train": 40, "n_test": 30}
        ],
    }
    with pytest.raises(CladValueError, match="jobs=0"):
        clad.run_spec(raw, tmp_path / "never", execution=Execution.of(raw, jobs=0))
    with pytest.raises(CladValueError, match="timeout=-1"):
        clad.run_spec(raw, tmp_path / "never", execution=Execution.of(raw, timeout=-1))
    assert not (tmp_path / "never").exists()
    done = clad.run_spec(raw, tmp_path / "out")
    assert done.ok and done.n_total == 1
    with ResultStore(done.database) as store:
        assert store.get_meta("spec_text") is None and store.get_meta("spec")["detectors"] == [
            "hbos"
        ]
    with pytest.raises(CladError, match="expected a Spec"):
        clad.run_spec(42, tmp_path / "x")
