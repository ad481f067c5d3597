"""No orphans: SIGTERM or SIGKILL to ``clad run --jobs 2`` leaves no process of the run alive, and a
rerun completes the grid with nothing lost or duplicated."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time

import pytest

from clad.engine.spec import load_spec

from tests.runner_helpers import ROOT, clad_cmd, finished_runs, write_spec

psutil = pytest.importorskip("psutil")


def _spec(flag: str) -> dict:
    return dict(
        name="orphans",
        seeds=2,
        strategies=["naive", "cumulative"],
        detectors=[
            {"name": "tests.plugins:DistanceToMean", "label": "quick"},
            {"name": "orphan_plugin:WaitsForFlag", "label": "busy", "flag": flag},
        ],
    )


# a detector that stays busy (in its own process) while a file exists, up to two minutes: the workers
# are in the middle of a run when the main process gets the signal
PLUGIN = """
import os, time
import numpy as np

class WaitsForFlag:
    def __init__(self, flag=""):
        self.flag = flag

    def fit(self, X):
        t0 = time.monotonic()
        while os.path.exists(self.flag) and time.monotonic() - t0 < 120:
            time.sleep(0.05)
        self.mean_ = np.asarray(X).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)
"""


def _count(db, status) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM runs WHERE status = ?", (status,)).fetchone()[
                0
            ]
        finally:
            con.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def _alive(procs) -> list:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_to_the_main_process_leaves_no_process_and_a_rerun_completes(
    tmp_path, monkeypatch, sig
):
    family: list = []  # every process of the run, filled while it runs
    try:
        _signal_and_rerun(tmp_path, monkeypatch, sig, family)
    finally:  # whatever failed, leave nothing behind (only processes this test started)
        (tmp_path / "busy.flag").unlink(missing_ok=True)
        for p in _alive(family):
            p.kill()


def _signal_and_rerun(tmp_path, monkeypatch, sig, family):
    spec_path = write_spec(tmp_path, **_spec(str(tmp_path / "busy.flag")))
    (tmp_path / "orphan_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "busy.flag").touch()
    out = tmp_path / "out"
    db = out / "results.sqlite"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    }
    # stderr to a file, not a pipe: a pipe would stay open as long as any process of the run lives
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "w", encoding="utf-8") as err_file:
        proc = subprocess.Popen(
            clad_cmd("run", spec_path, "--out", out, "--jobs", "2", "--quiet"),
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
        )
    try:
        deadline = time.monotonic() + 120
        # the two quick runs of the first seed finished, both workers busy with a run
        while _count(db, "ok") < 2 or _count(db, "running") < 2:
            assert proc.poll() is None, "the grid ended before the signal"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        family += psutil.Process(proc.pid).children(recursive=True)
        workers = [p for p in family if p.ppid() != proc.pid]  # forked by the fork server
        assert len(workers) >= 2, [p.cmdline() for p in family]
        os.kill(proc.pid, sig)  # the main process only, as a supervisor or the OOM killer would
        signalled = time.monotonic()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = err_path.read_text(encoding="utf-8")
    if sig == signal.SIGTERM:
        assert proc.returncode == 143, err
        assert "interrupted by SIGTERM" in err and "run the same command again to resume" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    while _alive(family) and time.monotonic() - signalled < 10:
        time.sleep(0.1)
    print(
        f"{len(family)} processes of the run; all gone {time.monotonic() - signalled:.1f} s after {sig.name}"
    )
    left = _alive(family)
    assert left == [], [(p.pid, p.cmdline()) for p in left]

    before = finished_runs(db)
    configs = load_spec(spec_path).configs
    assert len(before) == 2 and len(configs) == 8
    (tmp_path / "busy.flag").unlink()
    rerun = subprocess.run(
        clad_cmd("run", spec_path, "--out", out, "--jobs", "2"),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert "2 of 8 runs already finished" in rerun.stderr
    con = sqlite3.connect(db)
    try:
        ids = [r for (r,) in con.execute("SELECT run_id FROM runs")]
        assert sorted(ids) == sorted(c.run_id for c in configs)  # each run exactly once
        assert {s for (s,) in con.execute("SELECT status FROM runs")} == {"ok"}
        per_run = dict(
            con.execute("SELECT run_id, COUNT(*) FROM r_cells GROUP BY run_id").fetchall()
        )
        assert per_run == {r: 2 * 2 for r in ids}
    finally:
        con.close()
    after = finished_runs(db)
    assert {
        r: after[r] for r in before
    } == before  # what finished before the signal was kept, not rerun
