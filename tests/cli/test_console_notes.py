"""The console says each thing once: failures grouped by cause template, the statistics' caveats in
one short note after a report, never a WARNING line per comparison."""

from __future__ import annotations

import logging

from clad.engine.progress import format_failures
from clad.results.record import RunResult


def test_failures_that_differ_only_in_a_seed_are_one_cause():
    runs = [
        RunResult(
            "d",
            "s",
            "naive",
            "x",
            seed,
            status="failed",
            error=f"Traceback ...\nclad.errors.DataError: dataset 'adbench' with random_state {1000 + seed}: "
            "concept 'c2' has no anomalies",
        )
        for seed in range(6)
    ]
    text = format_failures(runs)
    assert text.count(" runs:") == 1 and "6 runs:" in text
    assert "random_state 1000" in text and "5 more causes that differ only in their numbers" in text


def test_clad_report_ends_with_one_short_note_not_warning_lines(tmp_path, capsys, caplog):
    from clad.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text(
        'name = "one"\nseeds = 3\nstrategies = ["naive", "cumulative"]\n'
        '[[datasets]]\nname = "synthetic"\nn_concepts = 3\nn_train = 80\nn_test = 60\n'
        '[[scenarios]]\nname = "concept_incremental"\n'
        '[[detectors]]\nname = "hbos"\n[[detectors]]\nname = "iforest"\nn_estimators = 10\n'
    )
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(["report", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "one independent block (dataset: synthetic)" in notes[0], out
    assert len(notes[0]) < 200 and "statistics.html" in notes[0]
    assert not [
        r
        for r in caplog.records
        if r.levelno >= logging.WARNING and "independent block" in r.getMessage()
    ]


def test_identical_tuning_runs_are_computed_once(tmp_path):
    """first_concepts tuning with k = 1: naive and replay learn one concept alike, so every replay
    tuning run takes its fitted step and its scoring from naive's (the step cache): none is computed twice."""
    from clad.engine.benchmark import run_spec
    from clad.engine.spec import parse_spec
    from clad.results.store import ResultStore

    spec = parse_spec(
        {
            "name": "tune",
            "seeds": 2,
            "strategies": ["naive", "replay"],
            "datasets": [{"name": "synthetic", "n_concepts": 4, "n_train": 80, "n_test": 60}],
            "scenarios": ["concept_incremental"],
            "detectors": [{"name": "iforest", "n_estimators": 10}],
            "tuning": {
                "mode": "first_concepts",
                "k": 1,
                "detectors": {"iforest": {"max_samples": [32, 64]}},
            },
        }
    )
    run_spec(spec, tmp_path / "out")
    with ResultStore(tmp_path / "out" / "results.sqlite") as store:
        tuning = [r for r in store.load_results() if len(r.concepts) == 1]
    assert len(tuning) == 8
    fitted = {
        s: sum(r.timings["work"]["fitted"] for r in tuning if r.strategy == s)
        for s in ("naive", "replay")
    }
    scored = {
        s: sum(r.timings["work"]["scored"] for r in tuning if r.strategy == s)
        for s in ("naive", "replay")
    }
    assert fitted == {"naive": 4, "replay": 0} and scored == {"naive": 4, "replay": 0}
