"""A console that guides: `clad run` ends with the command for the report, its summary fits 100
columns, shared runs are counted, and the folder's lock file goes with its process."""

from __future__ import annotations

import pytest

from clad.cli import main
from clad.engine.folder import LOCK_NAME, FolderLock

SPEC = """
name = "tiny"
seeds = 2
strategies = ["naive", "experts"]
[[datasets]]
name = "synthetic"
n_concepts = 2
n_features = 3
n_train = 60
n_test = 40
[[scenarios]]
name = "concept_aware"
[[scenarios]]
name = "concept_incremental"
[[detectors]]
name = "sklearn.neighbors:LocalOutlierFactor"
novelty = true
n_neighbors = 5
"""


@pytest.mark.slow
def test_run_ends_with_the_report_command_in_100_columns(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    lines = text.rstrip().splitlines()
    assert lines[-1] == f"To see the report: clad report {out}"
    summary = text[: text.index("runs finished")]
    assert max(len(line) for line in summary.splitlines()) <= 100
    assert "concept_aware = concept_incremental" in summary  # naive: one computation, shown once
    assert "8 runs finished, 0 failed; 2 of them the same computation as another run (computed once)" in text
    assert not (out / LOCK_NAME).exists()  # the lock went with its process


def test_the_lock_file_goes_with_its_last_holder(tmp_path):
    first, second = FolderLock(tmp_path, "a").acquire(), FolderLock(tmp_path, "a").acquire()
    first.release()
    assert (tmp_path / LOCK_NAME).exists()  # the second still holds it
    second.release()
    assert not (tmp_path / LOCK_NAME).exists()
    with FolderLock(tmp_path, "a") as again:  # a new one is made when needed
        assert again.holder()["spec"] == "a"
    assert not (tmp_path / LOCK_NAME).exists()
