"""A first hour without friction: messages one step from the fix (other tools' metric names, a
missing data_dir, a misspelt file, the step and concept of a failure, training scores named),
one line for an expected condition, no SQLite side files left by a read, a log line now and then
without a terminal."""

import logging
import os
import threading

import numpy as np
import pytest

from clad.engine.benchmark import run_spec
from clad.engine.spec import parse_spec
from clad.errors import DataError, SpecError

from tests.runner_helpers import run_main, small_spec, synthetic, write_spec


@pytest.mark.parametrize(
    "name,meant",
    [("auroc", "roc_auc"), ("AUC", "roc_auc"), ("f1_score", "f1"), ("auprc", "average_precision")],
)
def test_other_tools_metric_names_point_to_clads(name, meant):
    with pytest.raises(
        SpecError, match=rf"unknown base metric '{name}' \(did you mean '{meant}'\? clad's name"
    ):
        parse_spec(small_spec(base_metrics=[name]))


def test_a_missing_data_dir_is_said_missing_and_a_misspelt_file_gets_a_did_you_mean(tmp_path):
    from clad.datasets.files import locate

    (tmp_path / "6_cardio.npz").write_bytes(b"x")
    with pytest.raises(DataError, match=r"did you mean '6_cardio.npz'"):
        locate("6_cardoi.npz", tmp_path)
    with pytest.raises(DataError, match=r"data_dir '.*nowhere' does not exist"):
        locate("6_cardio.npz", tmp_path / "nowhere")


def test_a_failure_names_the_training_step_and_concept(tmp_path):
    done = run_spec(small_spec(detectors=[{"name": "plugins:FailingDetector"}]), tmp_path / "o")
    (run,) = done.runs
    assert "raised while the strategy learned training step 0 (concept 'C0')" in run.cause


def test_non_finite_training_scores_are_called_training_scores():
    from clad.detectors.base import as_detector

    class NaNOnTraining:
        def fit(self, X):
            return self

        def score(self, X):
            return np.full(len(X), np.nan)

    det = as_detector(NaNOnTraining())
    with pytest.raises(
        Exception, match="training rows \\(scored in fit\\(\\) to set the threshold\\)"
    ):
        det.fit(np.zeros((10, 2)))


def test_the_reports_repeated_warnings_are_one_line():
    from clad.cli.report import grouped_warnings
    from types import SimpleNamespace as W

    caught = [
        W(
            message=f"{by} by continual_average ({m}): one independent block (dataset: d): paired over seeds"
        )
        for by in ("detectors", "strategies")
        for m in ("roc_auc", "f1", "average_precision")
    ]
    (line,) = grouped_warnings(caught)
    assert line.startswith("one independent block") and "6 comparisons" in line


def test_reading_a_folder_leaves_no_sqlite_side_files(tmp_path, capsys, caplog):
    spec = write_spec(tmp_path, **small_spec())
    out = tmp_path / "o"
    assert run_main(capsys, caplog, "run", spec, "--out", out, "--quiet")[0] == 0
    before = (out / "results.sqlite").read_bytes()
    assert run_main(capsys, caplog, "export", out)[0] == 0
    assert not [p for p in os.listdir(out) if p.endswith(("-wal", "-shm"))]
    assert (out / "results.sqlite").read_bytes() == before


def test_without_a_terminal_a_line_comes_now_and_then(monkeypatch, caplog):
    from clad.engine import progress

    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.05)
    with caplog.at_level(logging.INFO, logger="clad"):
        p = progress.Progress(total=3, bar=False)
        seen = threading.Event()
        for _ in range(200):  # waits on the line itself, not on a clock
            if "still running after" in caplog.text:
                seen.set()
                break
            threading.Event().wait(0.05)
        p.close()
    assert seen.is_set() and "0 of 3 runs done" in caplog.text
