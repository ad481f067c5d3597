"""A base-metric plug-in is held to its declaration in a run, as a detector's scores are: a value
outside its declared bounds, an array or a string fails the cell's run with the metric named (never
a number stored in R); `clad list base_metrics module:NAME` imports from the current folder as
`clad run` and `clad check` do."""

from __future__ import annotations

import pytest

from clad.cli import main
from clad.engine.benchmark import run_spec

from tests.runner_helpers import small_spec, synthetic


@pytest.mark.parametrize(
    "name,words",
    [
        ("OUT_OF_BOUNDS", "base metric out_of_bounds returned 5."),
        (
            "ARRAY_METRIC",
            "base metric array_metric returned ndarray array([0.5, 0.5]); expected one real number",
        ),
        ("TEXT_METRIC", "base metric text_metric returned str '0.5'; expected one real number"),
    ],
)
def test_a_metric_plugin_breaking_its_declaration_fails_its_run_by_name(tmp_path, name, words):
    spec = small_spec(
        base_metrics=[f"reliability_plugins:{name}"], datasets=[synthetic(n_train=30, n_test=20)]
    )
    done = run_spec(spec, tmp_path / "o")
    assert not done.ok and done.n_failed == len(done.runs) >= 1
    assert all(words in r.error for r in done.runs), done.runs[0].error
    if name == "OUT_OF_BOUNDS":
        assert "outside its declared bounds [0, 1]" in done.runs[0].error
    assert all(not r.R for r in done.runs)  # nothing of the run kept as a value


def test_list_base_metrics_imports_from_the_current_folder(tmp_path, monkeypatch, capsys):
    (tmp_path / "my_metric_here.py").write_text(
        "from clad.metrics.base import BaseMetric, undefined_on_one_class\n"
        "from sklearn.metrics import roc_auc_score\n"
        "MINE = BaseMetric('mine_here', undefined_on_one_class(lambda y, s: roc_auc_score(y, s)), 'my ROC-AUC')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "sys.path", [p for p in __import__("sys").path if p not in ("", str(tmp_path))]
    )
    assert main(["list", "base_metrics", "my_metric_here:MINE"]) == 0
    assert "my ROC-AUC" in capsys.readouterr().out
