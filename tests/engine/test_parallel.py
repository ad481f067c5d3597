"""Worker processes: same R as sequential runs, time limits, thread limits."""

from __future__ import annotations

import os

import pytest

from clad.engine.executors import execute_grid
from clad.engine.settings import Execution
from clad.engine.spec import parse_spec
from clad.results.store import ResultStore

from tests.runner_helpers import SMALL, run_main, same_results, write_spec


@pytest.mark.slow
def test_jobs_2_gives_the_same_R_as_jobs_1(tmp_path, capsys, caplog):
    log = tmp_path / "loads.txt"
    spec = write_spec(
        tmp_path,
        **{
            **SMALL,
            "detectors": [SMALL["detectors"][0], {"name": "lof", "n_neighbors": 10}],
            "datasets": [
                {**SMALL["datasets"][0], "name": "tests.plugins:logged_synthetic", "log": str(log)}
            ],
        },
    )
    rc1, _, _ = run_main(
        capsys, caplog, "run", spec, "--out", tmp_path / "one", "--jobs", "1", "--quiet"
    )
    loads1 = log.read_text().splitlines()
    log.unlink()
    rc2, _, log2 = run_main(
        capsys, caplog, "run", spec, "--out", tmp_path / "two", "--jobs", "2", "--quiet"
    )
    assert rc1 == rc2 == 0, log2
    loads2 = log.read_text().splitlines()
    # each dataset (one per seed) is loaded once per process, not once per run
    assert len(loads1) == 2 and len({ln.split()[0] for ln in loads1}) == 1
    assert len(loads2) == len(set(loads2)) and 2 <= len(loads2) <= 4
    assert len({ln.split()[0] for ln in loads2}) <= 2
    with (
        ResultStore(tmp_path / "one" / "results.sqlite") as a,
        ResultStore(tmp_path / "two" / "results.sqlite") as b,
    ):
        ra, rb = a.load_results(), b.load_results()
        assert b.count("ok") == 8
    assert len(ra) == 8
    same_results(ra, rb)


@pytest.mark.slow
def test_time_limit_in_worker_processes(tmp_path):
    raw = {
        "seeds": 1,
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "datasets": [
            {"name": "synthetic", "n_concepts": 2, "n_features": 2, "n_train": 30, "n_test": 20}
        ],
        "detectors": [
            {"name": "tests.plugins:SlowDetector", "label": "sleepy", "delay": 60.0},
            {"name": "tests.plugins:DeafDetector", "label": "deaf", "delay": 60.0},
            {"name": "tests.plugins:SlowDetector", "label": "quick", "delay": 0.0},
        ],
    }
    spec = parse_spec(raw)
    events = list(execute_grid(spec.configs, Execution(jobs=2, timeout=1.0)))
    finished = {e.config.detector.display: e.result for e in events if e.kind == "finished"}
    assert sorted(e.kind for e in events) == ["finished"] * 3 + ["started"] * 3
    assert finished["quick"].ok
    # interrupted by the alarm inside the worker
    assert finished["sleepy"].status == "failed" and finished["sleepy"].error.startswith("timeout")
    assert "time.sleep" in finished["sleepy"].error or "sleep" in finished["sleepy"].error
    # deaf to the alarm (like native code): stopped by restarting the worker processes
    assert finished["deaf"].status == "failed" and finished["deaf"].error.startswith("timeout")
    assert "killing and replacing its worker process" in finished["deaf"].error


@pytest.mark.slow
def test_a_worker_that_dies_fails_only_its_own_run_and_workers_limit_threads():
    spec = parse_spec(
        {
            "seeds": 1,
            "strategies": ["naive"],
            "scenarios": ["concept_incremental"],
            "datasets": [
                {"name": "synthetic", "n_concepts": 2, "n_features": 2, "n_train": 30, "n_test": 20}
            ],
            "detectors": [
                {"name": "tests.plugins:CrashingDetector", "label": "crash"},
                {"name": "tests.plugins:ThreadReport", "label": "report"},
                {"name": "hbos"},
            ],
        }
    )
    events = [
        e for e in execute_grid(spec.configs, Execution(jobs=2, threads=1)) if e.kind == "finished"
    ]
    results = {e.config.detector.display: e.result for e in events}
    assert len(events) == 3 and set(results) == {"crash", "report", "hbos"}
    assert results["hbos"].ok
    assert (
        results["crash"].status == "failed"
        and "worker process running this run died" in results["crash"].error
    )
    # every run uses one BLAS/OpenMP thread (the default), set before the worker started
    omp = os.environ.get("OMP_NUM_THREADS", "1")  # a value the user set is kept
    assert f"threads=[1] OMP_NUM_THREADS={omp}" in results["report"].error


def test_limited_threads_applies_and_restores():
    from threadpoolctl import threadpool_info

    from clad.engine.tasks import limited_threads

    before = [p["num_threads"] for p in threadpool_info()]
    env_before = os.environ.get("OPENBLAS_NUM_THREADS")
    with limited_threads(1):
        assert all(p["num_threads"] == 1 for p in threadpool_info())
        assert os.environ.get("OPENBLAS_NUM_THREADS") == (env_before or "1")
    assert [p["num_threads"] for p in threadpool_info()] == before
    assert os.environ.get("OPENBLAS_NUM_THREADS") == env_before


@pytest.mark.slow
def test_a_freed_worker_gets_its_next_run_before_the_finished_run_is_handed_on():
    """The main process schedules the next task as soon as a worker is free, before it yields the
    finished run (whose writing takes it a while): each ``finished`` event, while runs are left, comes
    after the ``started`` event of the run that took its place."""
    spec = parse_spec(
        {
            "seeds": 1,
            "strategies": ["naive"],
            "scenarios": ["concept_incremental"],
            "datasets": [
                {"name": "synthetic", "n_concepts": 2, "n_features": 2, "n_train": 30, "n_test": 20}
            ],
            "detectors": [{"name": "hbos"}, {"name": "ecod"}, {"name": "copod"}, {"name": "knn"}],
        }
    )
    kinds = [e.kind for e in execute_grid(spec.configs, Execution(jobs=2))]
    assert kinds.count("started") == kinds.count("finished") == 4
    # at most 2 in flight: the 3rd starts before the first finished run is handed on
    first = kinds.index("finished")
    assert kinds[:first].count("started") >= 3
    assert kinds[-2:] == ["finished", "finished"]


@pytest.mark.slow
def test_workers_are_stopped_behind_the_caller_once_every_run_returned():
    """When every task has returned, the pool is stopped in a background thread (the caller writes
    the results meanwhile); the thread ends once the workers have."""
    import threading

    spec = parse_spec(
        {
            "seeds": 1,
            "strategies": ["naive"],
            "scenarios": ["concept_incremental"],
            "datasets": [
                {"name": "synthetic", "n_concepts": 2, "n_features": 2, "n_train": 30, "n_test": 20}
            ],
            "detectors": [{"name": "hbos"}, {"name": "ecod"}],
        }
    )
    events = list(execute_grid(spec.configs, Execution(jobs=2)))
    assert sum(e.kind == "finished" and e.result.ok for e in events) == 2
    stopping = [t for t in threading.enumerate() if t.name == "clad-pool-stop"]
    assert len(stopping) == 1 and stopping[0].daemon
    stopping[0].join(60)
    assert not stopping[0].is_alive()
