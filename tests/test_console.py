"""What `clad run` shows: each failure's cause where it happens, one table of failures by cause,
exit status 1 when runs failed and 2 only for a bad spec; a missing data file named with where clad
looked; runs in the order of `--dry-run`; warnings inside a run in its record."""

from __future__ import annotations

from tests.runner_helpers import run_clad, run_main, write_spec

FAILING = """
name = "console"
seeds = 2
strategies = ["naive"]

[[datasets]]
name = "synthetic"
n_concepts = 2
n_features = 3
n_train = 50
n_test = 30

[[scenarios]]
name = "concept_incremental"

[[detectors]]
name = "hbos"

[[detectors]]
name = "tests.plugins:FailingDetector"
label = "failing"
message = "the plug-in's own words: fit cannot work on this data"
"""


def test_a_run_failing_in_fit_shows_its_message_and_exits_1_with_the_count(tmp_path):
    spec = write_spec(tmp_path, FAILING)
    proc = run_clad("run", spec, "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    # shown where it happens (a plain log line without a terminal) and in the table at the end
    assert proc.stderr.count("RuntimeError: the plug-in's own words: fit cannot work on this data") == 3
    assert "2 of 4 runs failed" in proc.stderr
    table = proc.stderr[proc.stderr.index("Failed runs by cause (2 failed):"):]
    assert "  2 runs:\n      RuntimeError: the plug-in's own words" in table
    assert "- synthetic / concept_incremental / naive / failing / seed 0" in table
    assert "Traceback" not in proc.stderr  # the cause, not the frames


def test_a_bad_spec_exits_2_and_runs_nothing(tmp_path, capsys, caplog):
    spec = write_spec(tmp_path, FAILING.replace('name = "hbos"', 'name = "hbso"'))
    rc, _, stderr = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "out")
    assert rc == 2 and "hbso" in stderr and "hbos" in stderr  # the unknown name and the close one
    assert not (tmp_path / "out" / "results.json").exists()


MISSING = """
name = "missing-file"
strategies = ["naive"]

[[datasets]]
name = "adbench"
file = "32_shuttle.npz"
n_concepts = 2

[[scenarios]]
name = "concept_incremental"

[[detectors]]
name = "hbos"
"""


def _empty_data_dirs(tmp_path, monkeypatch):
    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("CLAD_DATA", str(empty))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return empty


def test_a_missing_data_file_during_a_run_is_named_with_where_clad_looked(tmp_path, monkeypatch, capsys, caplog):
    empty = _empty_data_dirs(tmp_path, monkeypatch)
    rc, _, stderr = run_main(capsys, caplog, "run", write_spec(tmp_path, MISSING), "--out", tmp_path / "out")
    assert rc == 1, stderr
    assert "1 of 1 runs failed" in stderr
    for text in ("data file 'adbench-classical/32_shuttle.npz' not found; looked in:",
                 str(empty / "adbench-classical" / "32_shuttle.npz"), "expected sha256 ", "public source: http"):
        assert stderr.count(text) == 2, (text, stderr)  # when it fails, and in the table by cause
