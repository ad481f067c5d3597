"""The results database: runs round-trip exactly, one transaction per run, integrity."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from clad.errors import DataError
from clad.results import RunResult
from clad.engine.config import Component, RunConfig
from clad.engine.run import failed_result, run_config
from clad.results.store import ResultStore

CFG = RunConfig(
    Component("synthetic", {"n_concepts": 3, "n_features": 3, "n_train": 80, "n_test": 40}),
    Component("concept_agnostic", {"batch_size": 60, "anytime_every": 2}),
    Component("naive"),
    Component("iforest", {"n_estimators": 5}),
    seed=3,
    base_metrics=("roc_auc", "f1"),
)


def test_a_real_run_round_trips_bit_for_bit(tmp_path):
    result = run_config(CFG)
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.write(result, "2026-01-01T00:00:00", "2026-01-01T00:00:01")
        (back,) = store.load_results()
    assert back.run_id == CFG.run_id and back.status == "ok"
    assert (back.dataset, back.scenario, back.strategy, back.detector, back.seed) == (
        result.dataset,
        result.scenario,
        result.strategy,
        result.detector,
        3,
    )
    assert back.concepts == result.concepts and back.test_concepts == result.test_concepts
    for m in result.R:
        assert np.array_equal(back.R[m], result.R[m], equal_nan=True)
        assert back.metrics[m].keys() == result.metrics[m].keys()
        for k, v in result.metrics[m].items():
            assert np.array_equal(
                np.asarray(
                    back.metrics[m][k]
                    if not isinstance(v, dict)
                    else list(back.metrics[m][k].values())
                ),
                np.asarray(v if not isinstance(v, dict) else list(v.values())),
                equal_nan=True,
            ), k
        assert np.array_equal(back.anytime["R"][m], result.anytime["R"][m], equal_nan=True)
    assert back.anytime["rows_seen"] == result.anytime["rows_seen"]
    assert back.config == CFG.to_dict() and back.memory_rows == result.memory_rows
    assert back.timings == result.timings and back.versions == result.versions
    # the strict-JSON contract still holds for what comes back from the database
    assert RunResult.from_dict(back.to_dict()).to_dict() == result.to_dict()


def test_nan_cells_are_null_and_long_format_is_complete(tmp_path):
    R = np.array([[0.9, np.nan], [0.5, 0.7]])
    r = RunResult(
        "d",
        "s",
        "naive",
        "det",
        0,
        concepts=("A", "B"),
        test_concepts=("A", "B"),
        R={"roc_auc": R},
        metrics={
            "roc_auc": {
                "continual_average": 0.7,
                "forward_transfer": float("nan"),
                "left_out": {"continual_average": 0, "forward_transfer": 1},
            }
        },
        run_id="x1",
    )
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.write(r)
        tidy = store.tidy()
    con = sqlite3.connect(path)
    rows = con.execute(
        "SELECT step_index, step_concept, test_index, test_concept, value FROM r_cells "
        "ORDER BY step_index, test_index"
    ).fetchall()
    assert rows == [
        (0, "A", 0, "A", 0.9),
        (0, "A", 1, "B", None),
        (1, "B", 0, "A", 0.5),
        (1, "B", 1, "B", 0.7),
    ]
    assert con.execute(
        "SELECT metric, value, left_out FROM metrics ORDER BY metric"
    ).fetchall() == [("continual_average", 0.7, 0), ("forward_transfer", None, 1)]
    con.close()
    assert len(tidy) == 4 and tidy["value"].isna().sum() == 1


def test_rewriting_a_run_replaces_it_and_failed_runs_keep_their_traceback(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.mark_started(
            CFG.run_id,
            {"dataset": "d", "scenario": "s", "strategy": "st", "detector": "de", "seed": 3},
            CFG.to_dict(),
        )
        assert store.status() == {CFG.run_id: "running"}
        assert store.load_results() == []  # unfinished runs are not results
        store.write(failed_result(CFG, "Traceback ...\nRuntimeError: boom"))
        assert store.status() == {CFG.run_id: "failed"} and store.finished_ids() == set()
        store.write(run_config(CFG))
        store.mark_started(
            CFG.run_id,
            {"dataset": "d", "scenario": "s", "strategy": "st", "detector": "de", "seed": 3},
            CFG.to_dict(),
        )  # a finished run is not reopened
        assert store.status() == {CFG.run_id: "ok"} and store.count() == 1
        n_cells = store._con.execute("SELECT COUNT(*) FROM r_cells").fetchone()[0]
        assert n_cells == 2 * 3 * 3
        assert store._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store._con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_write_that_fails_leaves_nothing_behind(tmp_path):
    bad = RunResult(
        "d",
        "s",
        "naive",
        "det",
        0,
        concepts=("A",),
        test_concepts=("A", "B"),
        R={"roc_auc": np.array([[0.9, 0.8], [0.1, 0.2]])},
        run_id="bad",
    )  # more rows than labels
    with ResultStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(IndexError):
            store.write(bad)
        assert store.count() == 0
        assert store._con.execute("SELECT COUNT(*) FROM r_cells").fetchone()[0] == 0


def test_not_a_database(tmp_path):
    path = tmp_path / "r.sqlite"
    path.write_text("hello, this is not sqlite" * 100)
    with pytest.raises(DataError, match="not a clad results database"):
        ResultStore(path)


def _open_at_once(path, barrier, errors):
    barrier.wait()
    try:
        ResultStore(path).close()
    except Exception as exc:  # noqa: BLE001 - every failure is reported to the parent
        errors.put(repr(exc))


@pytest.mark.slow
def test_processes_creating_one_database_at_once_all_open_it(tmp_path):
    """Two `clad run` of one spec may create the folder's database at the same moment: each
    process opens it (none finds it busy, a column already added, or a half-made database it
    takes for someone else's), and the database has each column once."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    problems = []
    for attempt in range(12):
        path = tmp_path / f"db{attempt}" / "results.sqlite"
        path.parent.mkdir()
        barrier, errors = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_at_once, args=(path, barrier, errors)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0] * 4
        while not errors.empty():
            problems.append(errors.get())
        columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(runs)")]
        assert len(columns) == len(set(columns)) and {"peak_memory", "chance"} <= set(columns)
    assert problems == []


def test_a_folder_of_an_earlier_clad_with_a_claims_table_still_opens(tmp_path):
    """Folders written while runs were claimed hold a ``claims`` table: it is left alone."""
    db = tmp_path / "results.sqlite"
    with ResultStore(db) as store:
        store.write(failed_result(CFG, "Traceback: boom"))
    con = sqlite3.connect(db)
    con.execute(
        "CREATE TABLE claims (run_id TEXT PRIMARY KEY, host TEXT, pid INTEGER, expires REAL)"
    )
    con.execute("INSERT INTO claims VALUES ('x', 'h', 1, 0.0)")
    con.commit()
    con.close()
    with ResultStore(db) as store:
        store.retire([CFG.run_id])
        assert store.load_results() == []
    with ResultStore(db, create=False) as store:
        assert store.count() == 0
