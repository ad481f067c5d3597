"""The console says each thing once: failures grouped by cause template, the statistics' caveats in
one short note after a report, never a WARNING line per comparison."""

from __future__ import annotations

import logging

from clad.engine.progress import format_failures
from clad.results.record import RunResult


def test_failures_that_differ_only_in_a_seed_are_one_cause():
    runs = [RunResult("d", "s", "naive", "x", seed, status="failed",
                      error=f"Traceback ...\nclad.errors.DataError: dataset 'adbench' with random_state {1000 + seed}: "
                            "concept 'c2' has no anomalies")
            for seed in range(6)]
    text = format_failures(runs)
    assert text.count(" runs:") == 1 and "6 runs:" in text
    assert "random_state 1000" in text and "5 more causes that differ only in their numbers" in text


def test_clad_report_ends_with_one_short_note_not_warning_lines(tmp_path, capsys, caplog):
    from clad.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text('name = "one"\nseeds = 3\nstrategies = ["naive", "cumulative"]\n'
                    '[[datasets]]\nname = "synthetic"\nn_concepts = 3\nn_train = 80\nn_test = 60\n'
                    '[[scenarios]]\nname = "concept_incremental"\n'
                    '[[detectors]]\nname = "hbos"\n[[detectors]]\nname = "iforest"\nn_estimators = 10\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(["report", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "one independent block (dataset: synthetic)" in notes[0], out
    assert len(notes[0]) < 200 and "statistics.html" in notes[0]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "independent block" in r.getMessage()]
