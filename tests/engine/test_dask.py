"""A real Dask distributed cluster (scheduler + 2 worker processes) gives the same R as --jobs 1."""

from __future__ import annotations

import pytest

from clad.results.store import ResultStore

from tests.runner_helpers import SMALL_SPEC, run_main, same_results, small_spec, write_spec

distributed = pytest.importorskip("dask.distributed")


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_R_as_jobs_1(tmp_path, capsys, caplog):
    spec = write_spec(tmp_path, SMALL_SPEC)
    rc1, _, _ = run_main(
        capsys, caplog, "run", spec, "--out", tmp_path / "seq", "--jobs", "1", "--quiet"
    )
    assert rc1 == 0
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        rc2, _, log = run_main(
            capsys,
            caplog,
            "run",
            spec,
            "--out",
            tmp_path / "dask",
            "--quiet",
            "--dask",
            cluster.scheduler_address,
        )
        with distributed.Client(cluster.scheduler_address) as client:
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 2
    assert rc2 == 0, log
    with (
        ResultStore(tmp_path / "seq" / "results.sqlite") as a,
        ResultStore(tmp_path / "dask" / "results.sqlite") as b,
    ):
        ra, rb = a.load_results(), b.load_results()
        assert b.count("ok") == 8
        assert b._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    same_results(ra, rb)


@pytest.mark.slow
def test_a_plugin_the_workers_cannot_import_is_refused_before_submitting(tmp_path, capsys, caplog):
    """The plug-in lies beside the spec (importable here, where the spec's folder is on the path),
    not on the workers' path: every module is imported on every worker first, nothing is submitted."""
    (tmp_path / "only_here_plugin.py").write_text(
        "import numpy as np\n\nclass Mean:\n    def fit(self, X):\n        self.m_ = np.asarray(X).mean(0)\n"
        "        self.threshold_ = 1.0\n        return self\n\n    def score(self, X):\n"
        "        return np.linalg.norm(np.asarray(X) - self.m_, axis=1)\n"
    )
    spec = write_spec(tmp_path, **small_spec(detectors=["only_here_plugin:Mean"]))
    with distributed.LocalCluster(
        n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        rc, _, err = run_main(
            capsys,
            caplog,
            "run",
            spec,
            "--out",
            tmp_path / "o",
            "--quiet",
            "--dask",
            cluster.scheduler_address,
        )
    assert rc == 2, err
    assert "module 'only_here_plugin' cannot be imported on 1 of 1 Dask worker(s)" in err
    assert "Nothing was submitted" in err and "client.upload_file" in err and "PYTHONPATH" in err


@pytest.mark.slow
def test_a_lost_scheduler_ends_the_command_promptly_naming_the_cluster(tmp_path):
    """The scheduler goes away mid-grid: clad run ends by itself (within the stated limit), names
    the lost cluster, records no run as failed by it, and a later run resumes."""
    import json
    import subprocess
    import time

    from tests.runner_helpers import run_clad, synthetic

    gate = tmp_path / "gate"
    spec = write_spec(
        tmp_path,
        **small_spec(
            seeds=list(range(6)),
            datasets=[synthetic(n_train=30, n_test=20)],
            detectors=[{"name": "tests.reliability_plugins:GateDetector", "gate": str(gate)}],
        ),
    )
    out = tmp_path / "o"
    cluster = distributed.LocalCluster(
        n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None
    )
    env_cmd = ["run", spec, "--out", out, "--quiet", "--dask", cluster.scheduler_address]
    from tests.runner_helpers import ROOT, clad_cmd
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        clad_cmd(*env_cmd),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 300  # a safety net: the loop ends when the runs have started
        while time.time() < deadline and proc.poll() is None:
            try:
                import sqlite3

                con = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True, timeout=5)
                started = con.execute("SELECT count(*) FROM runs").fetchone()[0]
                con.close()
            except sqlite3.Error:
                started = 0
            if started:
                break
            time.sleep(0.2)
        cluster.close()  # the scheduler and its worker go away while runs wait at the gate
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # pragma: no cover - what this test is here to catch
            proc.kill()
            pytest.fail("clad run did not end within 120 s of losing its Dask scheduler")
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2 and "lost the Dask cluster at tcp://" in err, err
    import sqlite3

    con = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True)
    failed = con.execute("SELECT count(*) FROM runs WHERE status = 'failed'").fetchone()[0]
    con.close()
    assert failed == 0
    done = run_clad("run", spec, "--out", out, "--quiet")  # resumes, here
    assert done.returncode == 0, done.stderr
    assert len(json.loads((out / "results.json").read_text())["runs"]) == 6
