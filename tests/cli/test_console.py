"""What `clad run` shows: each failure's cause where it happens, one table of failures by cause,
exit status 1 when runs failed and 2 only for a bad spec; a missing data file named with where clad
looked; runs in the order of `--dry-run`; warnings inside a run in its record."""

from __future__ import annotations

import pytest

from tests.runner_helpers import run_clad, run_main, synthetic, write_spec

HBOS = {"name": "hbos"}
FAILING = dict(
    name="console",
    seeds=2,
    datasets=[synthetic(n_train=50, n_test=30)],
    detectors=[
        HBOS,
        {
            "name": "tests.plugins:FailingDetector",
            "label": "failing",
            "message": "the plug-in's own words: fit cannot work on this data",
        },
    ],
)


@pytest.mark.slow  # a real `clad` process: the console as a user sees it
def test_a_run_failing_in_fit_shows_its_message_and_exits_1_with_the_count(tmp_path):
    spec = write_spec(tmp_path, **FAILING)
    proc = run_clad("run", spec, "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    # shown where it happens (a plain log line without a terminal) and in the table at the end
    assert (
        proc.stderr.count("RuntimeError: the plug-in's own words: fit cannot work on this data")
        == 3
    )
    assert "2 of 4 runs failed" in proc.stderr
    table = proc.stderr[proc.stderr.index("Failed runs by cause (2 failed):") :]
    assert "  2 runs:\n      RuntimeError: the plug-in's own words" in table
    assert "- synthetic / concept_incremental / naive / failing / seed 0" in table
    assert "Traceback" not in proc.stderr  # the cause, not the frames


def test_a_bad_spec_exits_2_and_runs_nothing(tmp_path, capsys, caplog):
    spec = write_spec(
        tmp_path, **{**FAILING, "detectors": [{"name": "hbso"}, FAILING["detectors"][1]]}
    )
    rc, _, stderr = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "out")
    assert rc == 2 and "hbso" in stderr and "hbos" in stderr  # the unknown name and the close one
    assert not (tmp_path / "out" / "results.json").exists()


MISSING = dict(
    name="missing-file",
    seeds=None,
    datasets=[{"name": "adbench", "file": "32_shuttle.npz", "n_concepts": 2}],
)


def _empty_data_dirs(tmp_path, monkeypatch):
    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("CLAD_DATA", str(empty))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return empty


def test_a_missing_data_file_before_the_runs_is_named_with_where_clad_looked(
    tmp_path, monkeypatch, capsys, caplog
):
    empty = _empty_data_dirs(tmp_path, monkeypatch)
    rc, _, stderr = run_main(
        capsys, caplog, "run", write_spec(tmp_path, **MISSING), "--out", tmp_path / "out"
    )
    assert rc == 2, stderr  # caught at spec time: a bad spec, nothing runs and no folder is made
    assert not (tmp_path / "out").exists()
    for text in (
        "data file 'adbench-classical/32_shuttle.npz' not found; looked in:",
        str(empty / "adbench-classical" / "32_shuttle.npz"),
        "expected sha256 ",
        "public source: http",
    ):
        assert text in stderr, (text, stderr)


def test_a_data_file_gone_before_the_grid_is_named_with_where_clad_looked(
    tmp_path, monkeypatch, capsys, caplog
):
    import shutil
    from pathlib import Path

    from clad.engine.benchmark import run_spec
    from clad.engine.spec import load_spec
    from clad.errors import SpecError

    shared = (
        Path(__file__).resolve().parents[2].parent
        / "shared"
        / "datasets"
        / "adbench-classical"
        / "32_shuttle.npz"
    )
    if not shared.is_file():
        pytest.skip(f"needs {shared}")
    data = _empty_data_dirs(tmp_path, monkeypatch)
    (data / "adbench-classical").mkdir()
    shutil.copy(shared, data / "adbench-classical" / "32_shuttle.npz")
    spec = load_spec(
        write_spec(tmp_path, **MISSING)
    )  # the file is there when the spec is checked ...
    (data / "adbench-classical" / "32_shuttle.npz").unlink()  # ... and gone when the grid starts
    with pytest.raises(SpecError) as caught:  # found once, by building the dataset before any run
        run_spec(spec, tmp_path / "out")
    cause = str(caught.value)
    assert not (tmp_path / "out" / "results.sqlite").exists()
    for text in (
        "data file 'adbench-classical/32_shuttle.npz' not found; looked in:",
        str(data / "adbench-classical" / "32_shuttle.npz"),
        "expected sha256 ",
        "public source: http",
    ):
        assert text in cause, (text, cause)


class WarnsInFit:
    """Distance to the training mean; warns in every fit, as PyOD's ECOD does on some data."""

    def fit(self, X):
        import warnings

        import numpy as np

        warnings.warn("divide by zero encountered in log (a library's warning)", RuntimeWarning)
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def score(self, X):
        import numpy as np

        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)


ORDERED = {
    **FAILING,
    "detectors": [HBOS, {"name": "tests.cli.test_console:WarnsInFit", "label": "warns"}],
}


@pytest.mark.slow
def test_runs_start_in_the_order_of_the_dry_run(tmp_path, capsys, caplog):
    spec = write_spec(tmp_path, **ORDERED)
    rc, listed, _ = run_main(capsys, caplog, "run", spec, "--dry-run")
    assert rc == 0
    listed = [line.split("  ", 2)[2] for line in listed.splitlines() if line.startswith("  ")]
    assert len(listed) == 4 and listed[0].endswith("seed 0") and listed[-1].endswith("seed 1")
    rc, _, stderr = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "out", "--quiet")
    assert rc == 0, stderr
    ran = [
        r.getMessage().rsplit("): ", 1)[1]
        for r in caplog.records
        if r.getMessage().startswith("run ")
    ]
    assert ran == listed


@pytest.mark.slow
def test_a_warning_inside_a_run_lands_in_its_record_and_is_counted(tmp_path, capsys, caplog):
    import json
    import sqlite3

    spec = write_spec(tmp_path, **{**ORDERED, "seeds": 1})
    rc, _, stderr = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "out")
    assert rc == 0, stderr
    runs = {
        r["detector"]: r
        for r in json.loads((tmp_path / "out" / "results.json").read_text())["runs"]
    }
    expected = "RuntimeWarning: divide by zero encountered in log (a library's warning) (2 times)"  # 2 concepts
    assert runs["warns"]["warnings"] == [expected] and runs["hbos"]["warnings"] == []
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as con:
        stored = dict(con.execute("SELECT detector, warnings FROM runs").fetchall())
    assert json.loads(stored["warns"]) == [expected]
    assert "1 run recorded 1 warning" in stderr and "warnings.warn(" not in stderr


def test_the_bar_keeps_its_width_and_cuts_labels_at_words_on_a_0_column_terminal(
    monkeypatch, capsys
):
    import os

    from clad.engine import progress
    from clad.engine.config import Component, RunConfig

    monkeypatch.setattr(
        progress.shutil, "get_terminal_size", lambda fallback=None: os.terminal_size((0, 0))
    )
    cfg = RunConfig(
        Component("synthetic", label="a-long-dataset-name"),
        Component("concept_incremental"),
        Component("replay"),
        Component("iforest"),
        seed=7,
    )
    p = progress.Progress(4, desc="console", bar=True)
    p.started(cfg)
    p.close()
    lines = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.strip()]
    last = lines[-1]
    assert len(last) <= progress.FALLBACK_COLUMNS
    assert "|" + " " * progress.BAR_WIDTH + "|" in last  # the bar at its full width
    label = last.rsplit("], ", 1)[1]
    words = cfg.describe().split(" ")
    kept = label.removesuffix(" …").split(" ")
    assert kept == words[: len(kept)] and label.endswith(
        "…"
    )  # whole words, then the mark of the cut
