"""`clad export DIR --format mlflow` logs every run into an MLflow store, read back with MLflow's client."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clad.cli import main

from tests.runner_helpers import spec_toml, synthetic

pytest.importorskip("mlflow", reason="needs MLflow: pip install 'clad[mlflow]'")
pytest.importorskip("sqlalchemy", reason="needs SQLAlchemy for MLflow's SQLite store: pip install 'clad[mlflow]'")

pytestmark = pytest.mark.slow  # MLflow creates its database schema: several seconds

SPEC = spec_toml(name="mlflow-check", base_metrics=["roc_auc", "f1"], seeds=2,
                 datasets=[synthetic(n_concepts=3, n_train=80, n_test=60)], scenarios=[{"name": "concept_aware"}],
                 detectors=[{"name": "iforest", "n_estimators": 10}])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("mlflow")
    (d / "spec.toml").write_text(SPEC, encoding="utf-8")
    assert main(["run", str(d / "spec.toml"), "--out", str(d / "out"), "--quiet"]) == 0
    return d / "out"


def test_mlflow_round_trip(results, capsys):
    from mlflow.tracking import MlflowClient

    from clad.engine.export_mlflow import default_tracking_uri

    assert main(["export", str(results), "--format", "mlflow"]) == 0
    assert "2 runs logged to MLflow (0 already there)" in capsys.readouterr().out
    assert (results / "mlruns" / "mlflow.db").is_file()
    client = MlflowClient(tracking_uri=default_tracking_uri(results))
    experiment = client.get_experiment_by_name("mlflow-check")
    runs = client.search_runs([experiment.experiment_id])
    stored = {r["run_id"]: r for r in json.loads((results / "results.json").read_text())["runs"]}
    assert len(runs) == 2 and {r.data.tags["clad.run_id"] for r in runs} == set(stored)
    for mlrun in runs:
        ours = stored[mlrun.data.tags["clad.run_id"]]
        assert mlrun.info.status == "FINISHED"
        params = mlrun.data.params
        assert params["detector"] == "iforest" and params["seed"] == str(ours["seed"])
        assert params["detector.n_estimators"] == "10" and params["dataset.n_concepts"] == "3"
        for base, values in ours["metrics"].items():
            for name, value in values.items():
                if isinstance(value, (int, float)) and value is not None and name != "left_out":
                    assert mlrun.data.metrics[f"{base}.{name}"] == pytest.approx(value), (base, name)
        assert mlrun.data.tags["clad.version.clad"] == ours["versions"]["clad"]
        assert mlrun.data.tags["clad.version.scikit-learn"] == ours["versions"]["scikit-learn"]
        # a per-step curve, with its steps
        history = client.get_metric_history(mlrun.info.run_id, "roc_auc.accuracy_seen")
        assert [m.step for m in sorted(history, key=lambda m: m.step)] == [0, 1, 2]
        assert [m.value for m in sorted(history, key=lambda m: m.step)] == pytest.approx(
            ours["metrics"]["roc_auc"]["accuracy_seen"])
        # R as a table and a heatmap
        artifacts = {a.path for a in client.list_artifacts(mlrun.info.run_id, "R")}
        assert artifacts == {"R/roc_auc.json", "R/roc_auc.png", "R/f1.json", "R/f1.png"}
        with open(client.download_artifacts(mlrun.info.run_id, "R/roc_auc.json"), encoding="utf-8") as fh:
            table = json.load(fh)  # MLflow's table format: {"columns": [...], "data": [[...], ...]}
        assert table["columns"] == ["step", *ours["test_concepts"]]
        assert [row[0] for row in table["data"]] == [f"{i}: {c}" for i, c in enumerate(ours["concepts"])]
        R = np.array([row[1:] for row in table["data"]], dtype=float)
        np.testing.assert_allclose(R, np.array(ours["R"]["roc_auc"], dtype=float))
        png = client.download_artifacts(mlrun.info.run_id, "R/roc_auc.png")
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    # exporting again adds nothing
    assert main(["export", str(results), "--format", "mlflow"]) == 0
    assert "0 runs logged to MLflow (2 already there)" in capsys.readouterr().out
    assert len(client.search_runs([experiment.experiment_id])) == 2


def test_mlflow_export_to_another_store(results, tmp_path, capsys):
    from mlflow.tracking import MlflowClient

    uri = "sqlite:///" + str(tmp_path / "elsewhere.db")  # an absolute path: four slashes
    assert main(["export", str(results), "--format", "mlflow", "--tracking-uri", uri]) == 0
    assert uri in capsys.readouterr().out
    client = MlflowClient(tracking_uri=uri)
    assert len(client.search_runs([client.get_experiment_by_name("mlflow-check").experiment_id])) == 2
    assert (tmp_path / "artifacts").is_dir()  # beside the database, not in the current folder
    assert main(["export", str(results), "--format", "csv", "--tracking-uri", uri]) == 2
