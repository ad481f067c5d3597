"""Two processes on one results folder share the grid: runs are claimed before they start
(issue 13, item 3)."""

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clad.results.store import ResultStore

from tests.runner_helpers import synthetic, write_spec

ROOT = Path(__file__).resolve().parents[2]


def _foreign_claim(store, run_id, pid, expires_in):
    with store._transaction() as cur:
        cur.execute(
            "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)",
            (run_id, socket.gethostname(), pid, time.time() + expires_in),
        )


def test_a_live_claim_holds_and_a_dead_or_expired_one_is_taken_over(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with ResultStore(tmp_path) as store:
        assert store.claim("a") and store.claim("a")  # ours, renewed
        _foreign_claim(store, "b", os.getppid(), 60)  # a live process, lease running
        assert not store.claim("b")
        _foreign_claim(store, "c", os.getppid(), -1)  # a live process whose lease ended
        assert store.claim("c")
        _foreign_claim(store, "d", gone.pid, 60)  # a process that is gone
        assert store.claim("d")
        assert store.claims()["d"][1] == os.getpid()
        store.release()
        assert set(store.claims()) == {"b"}


PLUGIN = '''
import os
import numpy as np


class Counting:
    """Distance to the training mean; every fit appends a line to $CLAD_COUNT_FILE."""

    def __init__(self, delay=0.0):
        self.delay = delay

    def fit(self, X):
        import time
        time.sleep(self.delay)
        with open(os.environ["CLAD_COUNT_FILE"], "a") as f:
            f.write(f"{os.getpid()} {X.shape[0]} {float(np.asarray(X).sum())!r}\\n")
        self.mean_ = np.asarray(X).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)
'''


@pytest.mark.slow
def test_two_processes_on_one_folder_compute_every_run_once(tmp_path):
    (tmp_path / "counting_plugin.py").write_text(PLUGIN)
    spec = write_spec(
        tmp_path,
        name="two-processes",
        seeds=6,
        share=False,
        scenarios=["concept_incremental"],
        datasets=[synthetic(n_concepts=3, n_features=2, n_train=40, n_test=30)],
        detectors=[{"name": "counting_plugin:Counting", "delay": 0.15}],
    )
    count = tmp_path / "fits.txt"
    env = {
        **os.environ,
        "CLAD_COUNT_FILE": str(count),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "clad.cli", "run", str(spec), "--out", str(out), "--quiet"]
    procs = [
        subprocess.Popen(
            cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n---\n".join(
        err[-3000:] for _, err in outputs
    )  # the cause, unabridged
    lines = count.read_text().splitlines()
    assert len(lines) == 6 * 3  # 6 runs x 3 concepts: every run computed exactly once
    con = sqlite3.connect(out / "results.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0] == 6
    assert con.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    con.close()
