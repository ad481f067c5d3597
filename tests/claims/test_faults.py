"""Faults in a grid: detectors that raise, return NaN or hang, worker processes that die, a Dask
worker lost, the disk failing. The grid goes on, each failure is recorded with its cause, and a
rerun completes what is missing."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess

import pytest

from clad.results.store import ResultStore

from tests.runner_helpers import ROOT, clad_cmd, synthetic, write_spec

GOOD = {"name": "tests.plugins:DistanceToMean", "label": "good"}
FAULTY = dict(
    name="faults",
    seeds=1,
    datasets=[synthetic(n_train=40, n_test=30)],
    detectors=[
        GOOD,
        {"name": "tests.plugins:RaisesInFit", "label": "raises-in-fit"},
        {"name": "tests.plugins:RaisesInScore", "label": "raises-in-score"},
        {"name": "tests.plugins:NaNScores", "label": "nan-scores"},
        {"name": "tests.plugins:SlowDetector", "label": "hangs", "delay": 600.0},
        {"name": "tests.plugins:CrashingDetector", "label": "kills-its-worker"},
        {"name": "iforest", "label": "also-good", "n_estimators": 10},
    ],
)

CAUSES = {
    "raises-in-fit": "always fails in fit",
    "raises-in-score": "always fails in score",
    "nan-scores": "non-finite",
    "hangs": "timeout",
    "kills-its-worker": "died",
}


def run(*args, timeout=300, preexec=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        clad_cmd(*args),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec,
    )


def runs_by_label(db):
    with ResultStore(db) as store:
        return {r.detector: r for r in store.load_results()}


@pytest.mark.slow
def test_faulty_detectors_and_a_dying_worker_in_worker_processes(tmp_path):
    spec = write_spec(tmp_path, **FAULTY)
    out = tmp_path / "out"
    proc = run("run", spec, "--out", out, "--jobs", "2", "--timeout", "5", "--quiet")
    assert proc.returncode == 1, proc.stderr  # exit status 1: runs failed
    assert f"{len(CAUSES)} of {len(CAUSES) + 2} runs failed" in proc.stderr
    runs = runs_by_label(out / "results.sqlite")
    assert runs["good"].ok and runs["also-good"].ok
    for label, cause in CAUSES.items():
        assert runs[label].status == "failed", label
        assert cause in runs[label].error, (label, runs[label].error[-500:])
    # rerunning skips what finished and tries the failed runs again; nothing is duplicated
    again = run("run", spec, "--out", out, "--jobs", "2", "--timeout", "5", "--quiet")
    assert again.returncode == 1
    with sqlite3.connect(out / "results.sqlite") as con:
        assert con.execute("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM runs").fetchone() == (7, 7)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_a_failing_disk_stops_cleanly_and_a_rerun_completes(tmp_path):
    spec = write_spec(
        tmp_path, **{**FAULTY, "seeds": 12, "detectors": [{"name": "iforest", "n_estimators": 5}]}
    )
    out = tmp_path / "out"

    def small_disk():  # in the child: files may not grow past 160 KiB, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (160 * 1024, 160 * 1024))

    failed = run("run", spec, "--out", out, "--quiet", preexec=small_disk)
    assert failed.returncode == 111, failed.stderr
    assert "writing the results" in failed.stderr and "run the same command again" in failed.stderr
    assert "Traceback" not in failed.stderr
    with sqlite3.connect(out / "results.sqlite") as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = con.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    assert 0 < kept < 12  # some runs were stored before the disk "filled up"
    done = run("run", spec, "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(out / "results.sqlite") as con:
        assert con.execute(
            "SELECT COUNT(*), COUNT(DISTINCT run_id) FROM runs WHERE status = 'ok'"
        ).fetchone() == (12, 12)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_a_dask_worker_lost_mid_run(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    import dask

    spec = write_spec(
        tmp_path,
        **{
            **FAULTY,
            "detectors": [
                GOOD,
                {"name": "tests.plugins:CrashingDetector", "label": "kills-its-worker"},
            ],
        },
    )
    env_path = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = env_path  # the workers import tests.plugins
    try:
        with (
            dask.config.set({"distributed.scheduler.allowed-failures": 1}),
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
        ):
            proc = run(
                "run",
                spec,
                "--out",
                tmp_path / "out",
                "--dask",
                cluster.scheduler_address,
                "--quiet",
                timeout=300,
            )
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    assert proc.returncode == 1, proc.stderr
    runs = runs_by_label(tmp_path / "out" / "results.sqlite")
    assert runs["good"].ok
    lost = runs["kills-its-worker"]
    assert lost.status == "failed" and "KilledWorker" in lost.error
