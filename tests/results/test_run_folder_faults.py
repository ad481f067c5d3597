"""Faults of a results folder under `clad run` are said as what they are: a damaged results.sqlite
is "damaged" (running again cannot resume from it), never "writing failed, run again"."""

from __future__ import annotations

import pytest

from tests.runner_helpers import run_main, synthetic, write_spec


def _damage(db, where: bytes) -> None:
    """Overwrite 64 bytes of ``db`` from the last place ``where`` occurs (a value clad reads back)."""
    data = bytearray(db.read_bytes())
    at = data.rfind(where)
    assert at > 0
    data[at : at + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("where", [b"SQLite format 3\x00", b"memory_rows", b'"fit"'])
def test_a_damaged_database_is_said_damaged_by_clad_run(tmp_path, capsys, caplog, where):
    spec = write_spec(tmp_path, datasets=[synthetic(n_train=30, n_test=20)], seeds=1)
    out = tmp_path / "o"
    rc, _, err = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 0
    db = out / "results.sqlite"
    if where.startswith(b"SQLite"):
        data = bytearray(db.read_bytes())  # a page in the middle of the file: its b-tree header
        data[4096 : 4096 + 64] = b"\xff" * 64
        db.write_bytes(bytes(data))
    else:
        _damage(db, where)
    before = db.read_bytes()
    (out / "results.json").unlink()
    rc, _, err = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 2, err
    assert f"{str(db)!r} is damaged" in err and "running again cannot resume from it" in err
    assert "run the same command again to resume" not in err
    assert db.read_bytes() == before  # nothing more written into it


def _started(db) -> bool:
    """Whether a results database records a run as started (read-only; False before it exists)."""
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0] > 0
        finally:
            con.close()
    except sqlite3.Error:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_results_folder_deleted_under_a_running_grid_is_said_and_not_recreated(tmp_path, jobs):
    """Waits on conditions: the runs wait for a gate file the test creates once the folder is gone."""
    import os
    import shutil
    import subprocess
    import sys
    import time
    from pathlib import Path

    from tests.runner_helpers import spec_toml

    root = Path(__file__).resolve().parents[2]
    gate, out = tmp_path / "gate", tmp_path / "out"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        spec_toml(
            name="A",
            seeds=2,
            scenarios=["concept_incremental"],
            datasets=[synthetic(n_features=2, n_train=40, n_test=30)],
            detectors=[{"name": "reliability_plugins:GateDetector", "gate": str(gate)}],
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "tests"), str(root)])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clad.cli",
            "run",
            "--quiet",
            "--jobs",
            jobs,
            "--out",
            str(out),
            str(spec),
        ],
        env=env,
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 600  # a safety net only: the loop ends when a run has started
        while (
            not _started(out / "results.sqlite") and proc.poll() is None and time.time() < deadline
        ):
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()[1]
        shutil.rmtree(out)
    finally:
        gate.touch()
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 111, err
    assert "was deleted, moved or replaced while the grid ran" in err and "are lost" in err
    assert not (out / "results.json").exists()  # no folder of summaries without a database
