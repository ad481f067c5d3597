"""A console that guides: `clad run` ends with the command for the report, its summary fits 100
columns, shared runs are counted, and the folder's lock file goes with its process."""

from __future__ import annotations

import pytest

from clad.engine.settings import Execution
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
    assert (
        "8 runs finished, 0 failed; 2 of them the same computation as another run (computed once)"
        in text
    )
    assert not (out / LOCK_NAME).exists()  # the lock went with its process


def _tiny(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC)
    return spec


@pytest.mark.slow
def test_jobs_progress_shows_each_running_run_and_its_step(tmp_path):
    from clad.engine.benchmark import run_spec
    from clad.engine.progress import Progress

    events = []
    done = run_spec(
        _tiny(tmp_path),
        tmp_path / "out",
        on_event=events.append,
        execution=Execution.of(_tiny(tmp_path), jobs=2),
    )
    steps = [e for e in events if e.kind == "step"]
    computed = [e for e in events if e.kind == "finished"]
    assert (
        len(steps) == 2 * len(computed) == 12
    )  # every concept step of every worker run, told as it happens
    assert {(e.step, e.index) for e in steps} == {("C0", 0), ("C1", 1)}
    assert done.n_ok == 8
    progress = Progress(8, bar=False)
    a, b = computed[0].config, computed[1].config
    progress.started(a)
    progress.started(b)
    progress.step(b, "C1", 1)
    assert progress._current == f"{a.describe()} | {b.describe()} step 2 (C1)"


@pytest.mark.slow
def test_a_resume_continues_the_elapsed_time_and_the_counts(tmp_path, capsys):
    from clad.engine.benchmark import run_spec
    from clad.engine.progress import Progress
    from clad.results.store import ResultStore

    out = tmp_path / "out"
    run_spec(_tiny(tmp_path), out)
    with ResultStore(out, create=False) as store:
        first = store.get_meta("elapsed_seconds")
    assert first > 0
    events = []
    run_spec(_tiny(tmp_path), out, on_event=events.append)  # everything finished: resumed
    started = events[0]
    assert (
        started.kind == "grid_started"
        and started.finished_before == 8
        and started.elapsed_before == first
    )
    with ResultStore(out, create=False) as store:
        assert store.get_meta("elapsed_seconds") >= first
    progress = Progress(10, already=4, bar=True, elapsed=125.0, flagged=3)
    meter = progress._bar.format_dict
    assert meter["elapsed"] >= 125.0 and meter["n"] == 4 and "warnings 3" in progress._counts()
    progress.close()
