"""Base metrics: one declaration each, pluggable by import path, checked for their contract."""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest

from clad.cli import main
from clad.metrics import BaseMetric, get_base_metric
from clad.metrics.pr_auc_normalized import pr_auc_normalized
from clad.testing import ConformanceError, check_base_metric

from tests.runner_helpers import spec_toml, synthetic

PLUGIN = '''
import numpy as np
from clad.metrics import BaseMetric
from clad.metrics.base import undefined_on_one_class


@undefined_on_one_class
def balanced_accuracy(y, labels):
    """The mean of the recall on anomalies and the recall on normal rows."""
    y, labels = np.asarray(y), np.asarray(labels)
    return float((np.mean(labels[y == 1] == 1) + np.mean(labels[y == 0] == 0)) / 2)


BALANCED = BaseMetric("balanced_accuracy", balanced_accuracy, "balanced accuracy of the flags",
                      input="labels", chance=0.5)
TOO_BIG = BaseMetric("too_big", lambda y, s: 2.0 * float(np.mean(np.asarray(s) > 0)) + 0.5, "out of its bounds")
'''


@pytest.fixture
def plugin_folder(tmp_path, monkeypatch):
    (tmp_path / "my_base_metrics.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_base_metrics", None)


def test_pr_auc_normalized_on_hand_computed_cases():
    # a perfect ranking: AP 1, normalised 1
    assert pr_auc_normalized([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9]) == 1.0
    # one anomaly ranked second of four: AP 1/2, p 1/4: (1/2 - 1/4) / (3/4) = 1/3
    assert pr_auc_normalized([0, 0, 0, 1], [0.4, 0.1, 0.2, 0.3]) == pytest.approx(1 / 3)
    # anomalies ranked 1st and 3rd of five: AP = (1/1 + 2/3) / 2 = 5/6, p 2/5: (5/6 - 2/5) / (3/5) = 13/18
    assert pr_auc_normalized([1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.1, 0.2]) == pytest.approx(13 / 18)
    # ranked last: AP = (1/4 + 2/5) / 2 = 13/40, p 2/5: (13/40 - 16/40) / (3/5) = -1/8, below chance
    assert pr_auc_normalized([0, 0, 0, 1, 1], [0.9, 0.8, 0.7, 0.2, 0.1]) == pytest.approx(-1 / 8)
    assert np.isnan(pr_auc_normalized([0, 0, 0], [0.1, 0.2, 0.3]))
    assert get_base_metric("pr_auc_normalized").chance_level([0, 1, 0, 0]) == 0.0


def test_every_builtin_base_metric_passes_its_conformance_check():
    from clad.metrics import base_metric_names

    for name in base_metric_names():
        assert check_base_metric(name, raise_on_failure=False).ok, name


def test_conformance_fails_on_a_metric_that_leaves_its_bounds(plugin_folder, capsys):
    from my_base_metrics import TOO_BIG

    report = check_base_metric(TOO_BIG, raise_on_failure=False)
    assert set(report.failures) == {
        "bounds_on_random_inputs",
        "chance_level_of_a_scoreless_detector",
        "nan_on_one_class",
    }
    assert "outside its declared bounds [0, 1]" in report.failures["bounds_on_random_inputs"]
    with pytest.raises(ConformanceError, match="bounds_on_random_inputs"):
        check_base_metric(TOO_BIG)
    assert main(["check", "my_base_metrics:TOO_BIG"]) == 1
    assert "FAIL bounds_on_random_inputs" in capsys.readouterr().out
    assert main(["check", "my_base_metrics:BALANCED"]) == 0
    assert "4/4 checks passed" in capsys.readouterr().out


def test_a_declaration_must_hold_together():
    with pytest.raises(ValueError, match="input='rank'"):
        BaseMetric("x", lambda y, s: 0.0, "x", input="rank")
    with pytest.raises(ValueError, match="bounds"):
        BaseMetric("x", lambda y, s: 0.0, "x", bounds=(1.0, 0.0))
    with pytest.raises(ValueError, match="is a function; expected a clad.metrics.BaseMetric"):
        get_base_metric("clad.metrics.point:roc_auc")


def test_a_base_metric_from_outside_clad_runs_in_a_spec(plugin_folder, tmp_path, capsys):
    name = "my_base_metrics:BALANCED"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        spec_toml(
            name="outside-metric",
            base_metrics=["roc_auc", name],
            seeds=2,
            strategies=["naive"],
            datasets=[synthetic(n_concepts=3, n_features=4, n_train=120, n_test=80)],
            scenarios=[{"name": "concept_incremental"}],
            detectors=[{"name": "iforest", "n_estimators": 10}],
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 0
    runs = json.loads((out / "results.json").read_text())["runs"]
    for run in runs:
        R = np.array(run["R"][name], dtype=float)
        assert R.shape == (3, 3) and np.all((R >= 0) & (R <= 1))
        assert run["chance"][name] == [0.5, 0.5, 0.5]  # its declared chance level, per test concept
        assert "continual_average" in run["metrics"][name]
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    page = "\n".join(
        p.read_text() for p in (out / "report").rglob("*.html")
    )  # every page of the report
    assert name in page and "balanced accuracy of the flags" in page
    assert main(["list", "base_metrics", name]) == 0
    listing = capsys.readouterr().out
    assert (
        name in listing
        and "balanced accuracy of the flags" in listing
        and "reads the labels" in listing
    )


def test_a_spec_naming_a_missing_base_metric_says_why(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        spec_toml(
            name="missing-metric",
            base_metrics=["roc_auc", "no_such_module:METRIC", "roc_acu"],
            datasets=[synthetic(n_concepts=2)],
            scenarios=[{"name": "concept_incremental"}],
            strategies=["naive"],
            detectors=[{"name": "iforest"}],
        )
    )
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert (
        "base_metrics[1]: base metric 'no_such_module:METRIC': module 'no_such_module' could not be imported"
        in err
    )
    assert "base_metrics[2]: unknown base metric 'roc_acu' (did you mean 'roc_auc'?)" in err
