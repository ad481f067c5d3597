"""One owner per results folder: one process writes a folder; a second ``clad run`` on it is
refused, naming the first, and the same command run again once the first has ended resumes."""

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clad.engine.folder import LOCK_NAME, FolderInUse, FolderLock

from tests.runner_helpers import synthetic, write_spec

ROOT = Path(__file__).resolve().parents[2]


def test_a_second_lock_is_refused_naming_the_holder_and_the_file_goes_with_it(tmp_path):
    first = FolderLock(tmp_path, "a").acquire()
    with pytest.raises(FolderInUse, match=rf"process {os.getpid()} on .*\(spec 'a'\).*one process"):
        FolderLock(tmp_path, "b").acquire()
    assert (tmp_path / LOCK_NAME).exists()
    first.release()
    assert not (tmp_path / LOCK_NAME).exists()
    with FolderLock(tmp_path, "b") as again:  # a new one is made when needed
        assert again.holder()["spec"] == "b"
    assert not (tmp_path / LOCK_NAME).exists()


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
def test_a_second_clad_run_on_a_folder_is_refused_and_the_first_computes_every_run_once(tmp_path):
    (tmp_path / "counting_plugin.py").write_text(PLUGIN)
    spec = write_spec(
        tmp_path,
        name="two-processes",
        seeds=6,
        share=False,
        scenarios=["concept_incremental"],
        datasets=[synthetic(n_concepts=3, n_features=2, n_train=40, n_test=30)],
        detectors=[{"name": "counting_plugin:Counting", "delay": 1.0}],
    )
    count = tmp_path / "fits.txt"
    env = {
        **os.environ,
        "CLAD_COUNT_FILE": str(count),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "clad.cli", "run", str(spec), "--out", str(out), "--quiet"]
    kw = dict(env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = subprocess.Popen(cmd, **kw)
    deadline = time.monotonic() + 120
    while not count.exists() and time.monotonic() < deadline:  # the first computes
        time.sleep(0.1)
    second = subprocess.run(cmd, timeout=300, **kw)
    assert second.returncode != 0
    assert f"is being written by process {first.pid}" in second.stderr
    assert "one process writes a results folder at a time" in second.stderr
    _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err[-3000:]
    assert len(count.read_text().splitlines()) == 6 * 3  # every run computed exactly once
    con = sqlite3.connect(out / "results.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0] == 6
    con.close()
    again = subprocess.run(cmd, timeout=300, **kw)  # the first has ended: resumed, nothing to do
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(count.read_text().splitlines()) == 6 * 3
