"""`clad verify`: references written, rerun and compared; a changed number fails and names its run."""

import json
import re
from pathlib import Path

import pytest

from clad.cli import main
from clad.engine.verify import reference_path

from tests.runner_helpers import edit_reference, spec_toml, synthetic
from tests.data_helpers import SHARED, needs

REPO = Path(__file__).resolve().parents[2]

TINY = dict(
    strategies=["naive", "cumulative"],
    datasets=[synthetic(n_concepts=3, n_train=120, n_test=80)],
    detectors=[{"name": "iforest", "n_estimators": 10}],
)


@pytest.fixture
def tiny(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(spec_toml(**TINY))
    assert main(["verify", "--update", str(spec)]) == 0
    capsys.readouterr()
    return spec


@pytest.mark.slow
def test_update_then_verify_passes(tiny, capsys):
    doc = json.loads(reference_path(tiny).read_text())
    assert [r["key"]["strategy"] for r in doc["runs"]] == ["cumulative", "naive"]
    assert all(r["tolerance"] == 1e-9 and r["versions"]["scikit-learn"] for r in doc["runs"])
    assert main(["verify", str(tiny)]) == 0
    assert "2 runs, 2 same, 0 differ" in capsys.readouterr().out
    # rewriting an unchanged result gives the same bytes (the file holds no timestamps)
    before = reference_path(tiny).read_bytes()
    assert main(["verify", "--update", str(tiny)]) == 0
    assert reference_path(tiny).read_bytes() == before


def test_a_changed_reference_number_fails_and_names_the_run(tiny, capsys):
    def change(doc):
        run = next(r for r in doc["runs"] if r["key"]["strategy"] == "naive")
        run["R"]["roc_auc"][1][0] += 1e-6

    edit_reference(tiny, change)
    assert main(["verify", str(tiny)]) == 1
    out = capsys.readouterr().out
    assert re.search(
        r"synthetic / concept_incremental / naive / iforest / seed 0 +differs +1 +1e-06", out
    )
    assert "R.roc_auc[1][0]" in out and "|diff| 1e-06" in out
    assert re.search(r"cumulative / iforest / seed 0 +same", out)
    assert "differences in tiny.toml" in out


@pytest.mark.slow
def test_within_tolerance_passes_and_a_changed_metric_fails(tiny, capsys):
    def nudge(doc):
        doc["runs"][0]["R"]["roc_auc"][0][0] += 1e-12  # well inside 1e-9

    edit_reference(tiny, nudge)
    assert main(["verify", str(tiny)]) == 0

    def change(doc):
        doc["runs"][0]["metrics"]["roc_auc"]["backward_transfer"] = (
            None  # defined now, undefined before
        )

    edit_reference(tiny, change)
    assert main(["verify", str(tiny)]) == 1
    assert "metrics.roc_auc.backward_transfer: reference None" in capsys.readouterr().out


def test_missing_and_new_runs_are_differences(tiny, capsys):
    tiny.write_text(spec_toml(**{**TINY, "strategies": ["naive", "window"]}))
    assert main(["verify", str(tiny)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"cumulative / iforest / seed 0 +missing", out)
    assert re.search(r"window / iforest / seed 0 +new", out)


def test_no_reference_is_a_clear_error(tmp_path, capsys):
    spec = tmp_path / "lonely.toml"
    spec.write_text(spec_toml(**TINY))
    assert main(["verify", str(spec)]) == 2
    assert "clad verify --update" in capsys.readouterr().err


@pytest.mark.slow
@needs("nsl-kdd")
def test_the_reference_suite_verifies(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("CLAD_DATA", str(SHARED))
    code = main(["verify", "scenarios/suite"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "every number equals its reference" in out
