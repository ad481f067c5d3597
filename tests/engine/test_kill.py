"""A grid killed mid-way (SIGKILL) resumes: every run present exactly once, nothing lost."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time

import pytest

from clad.results import load_results
from clad.engine.spec import load_spec

from tests.runner_helpers import ROOT, clad_cmd, finished_runs, run_main, synthetic, write_spec

SPEC = dict(
    name="killed",
    seeds=4,
    base_metrics=["roc_auc", "average_precision"],
    strategies=["naive", "cumulative"],
    datasets=[synthetic(n_concepts=3)],
    detectors=[{"name": "tests.plugins:SlowDetector", "delay": 0.15}],
)


def _when_finished(proc, db, n: int, what: str) -> None:
    """Wait (two minutes at most) until ``n`` runs of the grid ``proc`` computes are finished in ``db``."""
    deadline = time.monotonic() + 120
    while len(finished_runs(db)) < n:
        assert proc.poll() is None, f"the grid ended before it could be {what}"
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.slow
def test_sigkill_mid_grid_then_resume(tmp_path, capsys, caplog):
    spec_path = write_spec(tmp_path, **SPEC)
    out = tmp_path / "out"
    db = out / "results.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        clad_cmd("run", spec_path, "--out", out, "--quiet"),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _when_finished(proc, db, 3, "killed")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    before = finished_runs(db)
    configs = load_spec(spec_path).configs
    assert 3 <= len(before) < len(configs) == 8  # killed mid-way

    rc, _, log = run_main(capsys, caplog, "run", spec_path, "--out", out, "--quiet")
    assert rc == 0, log
    assert f"{len(before)} of 8 runs already finished" in log

    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        ids = [r for (r,) in con.execute("SELECT run_id FROM runs")]
        assert sorted(ids) == sorted(c.run_id for c in configs)  # each run exactly once
        assert {s for (s,) in con.execute("SELECT status FROM runs")} == {"ok"}
        per_run = dict(
            con.execute("SELECT run_id, COUNT(*) FROM r_cells GROUP BY run_id").fetchall()
        )
        assert per_run == {r: 2 * 3 * 3 for r in ids}  # 2 base metrics x 3 steps x 3 test concepts
        per_run = dict(
            con.execute("SELECT run_id, COUNT(*) FROM metrics GROUP BY run_id").fetchall()
        )
        assert len(set(per_run.values())) == 1 and set(per_run) == set(ids)
    finally:
        con.close()
    after = finished_runs(db)
    assert {r: after[r] for r in before} == before  # finished runs were kept, not run again
    runs = load_results(out / "results.json")
    assert sorted(r.run_id for r in runs) == sorted(ids)


def _default_sigint():
    # a job started in the background of a non-interactive shell (as CI may be) inherits SIGINT
    # *ignored*, and Python then never raises KeyboardInterrupt: give the child the default back
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_with_workers_stops_cleanly_and_resumes(tmp_path, capsys, caplog):
    spec_path = write_spec(
        tmp_path, **{**SPEC, "detectors": [{"name": "tests.plugins:SlowDetector", "delay": 0.25}]}
    )
    out = tmp_path / "out"
    db = out / "results.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # its own process group, as a terminal's foreground job: Ctrl-C reaches the workers too
    proc = subprocess.Popen(
        clad_cmd("run", spec_path, "--out", out, "--jobs", "2"),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    try:
        _when_finished(proc, db, 2, "interrupted")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert "interrupted" in err and "run the same command again to resume" in err
    before = finished_runs(db)
    assert 2 <= len(before) < 8
    rc, _, log = run_main(capsys, caplog, "run", spec_path, "--out", out, "--quiet")
    assert rc == 0, log
    after = finished_runs(db)
    assert len(after) == 8 and {r: after[r] for r in before} == before
