"""`clad export DIR --format mlflow` logs every run into an MLflow store, read back with MLflow's client."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clad.cli import main

from tests.runner_helpers import spec_toml, synthetic, write_spec

pytest.importorskip("mlflow", reason="needs MLflow: pip install 'clad[mlflow]'")
pytest.importorskip(
    "sqlalchemy", reason="needs SQLAlchemy for MLflow's SQLite store: pip install 'clad[mlflow]'"
)

pytestmark = pytest.mark.slow  # MLflow creates its database schema: several seconds

SPEC = spec_toml(
    name="mlflow-check",
    base_metrics=["roc_auc", "f1"],
    seeds=2,
    datasets=[synthetic(n_concepts=3, n_train=80, n_test=60)],
    scenarios=[{"name": "concept_aware"}],
    detectors=[{"name": "iforest", "n_estimators": 10}],
)


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
    assert "2 runs logged to MLflow, 0 updated, 0 already there" in capsys.readouterr().out
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
                    assert mlrun.data.metrics[f"{base}.{name}"] == pytest.approx(value), (
                        base,
                        name,
                    )
        assert mlrun.data.tags["clad.version.clad"] == ours["versions"]["clad"]
        assert mlrun.data.tags["clad.version.scikit-learn"] == ours["versions"]["scikit-learn"]
        # a per-step curve, with its steps
        history = client.get_metric_history(mlrun.info.run_id, "roc_auc.accuracy_seen")
        assert [m.step for m in sorted(history, key=lambda m: m.step)] == [0, 1, 2]
        assert [m.value for m in sorted(history, key=lambda m: m.step)] == pytest.approx(
            ours["metrics"]["roc_auc"]["accuracy_seen"]
        )
        # R as a table and a heatmap
        artifacts = {a.path for a in client.list_artifacts(mlrun.info.run_id, "R")}
        assert artifacts == {"R/roc_auc.json", "R/roc_auc.png", "R/f1.json", "R/f1.png"}
        with open(
            client.download_artifacts(mlrun.info.run_id, "R/roc_auc.json"), encoding="utf-8"
        ) as fh:
            table = json.load(fh)  # MLflow's table format: {"columns": [...], "data": [[...], ...]}
        assert table["columns"] == ["step", *ours["test_concepts"]]
        assert [row[0] for row in table["data"]] == [
            f"{i}: {c}" for i, c in enumerate(ours["concepts"])
        ]
        R = np.array([row[1:] for row in table["data"]], dtype=float)
        np.testing.assert_allclose(R, np.array(ours["R"]["roc_auc"], dtype=float))
        png = client.download_artifacts(mlrun.info.run_id, "R/roc_auc.png")
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    # exporting again adds nothing
    assert main(["export", str(results), "--format", "mlflow"]) == 0
    assert "0 runs logged to MLflow, 0 updated, 2 already there" in capsys.readouterr().out
    assert len(client.search_runs([experiment.experiment_id])) == 2


def test_mlflow_export_to_another_store(results, tmp_path, capsys):
    from mlflow.tracking import MlflowClient

    uri = "sqlite:///" + str(tmp_path / "elsewhere.db")  # an absolute path: four slashes
    assert main(["export", str(results), "--format", "mlflow", "--tracking-uri", uri]) == 0
    assert uri in capsys.readouterr().out
    client = MlflowClient(tracking_uri=uri)
    assert (
        len(client.search_runs([client.get_experiment_by_name("mlflow-check").experiment_id])) == 2
    )
    assert (tmp_path / "artifacts").is_dir()  # beside the database, not in the current folder
    assert main(["export", str(results), "--format", "csv", "--tracking-uri", uri]) == 2


def _table(path, shift: float) -> None:
    import os
    import time

    import pandas as pd

    rng = np.random.default_rng(0)
    pd.DataFrame(
        {
            "c": ["a"] * 60 + ["b"] * 60,
            "y": ([0] * 50 + [1] * 10) * 2,
            "x1": rng.normal(size=120) + shift * np.r_[np.zeros(110), np.ones(10)],
            "x2": rng.normal(size=120),
        }
    ).to_csv(path, index=False)
    later = time.time() + 5
    os.utime(path, (later, later))


def test_a_recomputed_run_and_a_cut_short_export_are_logged_again(tmp_path, capsys):
    """Exports are idempotent by content: the fingerprint tag tells a recomputed run, the missing
    clad.complete tag an export that was killed half-way; a retired run leaves MLflow too."""
    from mlflow.tracking import MlflowClient

    from clad.engine.export_mlflow import default_tracking_uri

    data = tmp_path / "data"
    data.mkdir()
    _table(data / "t.csv", 0.5)
    spec = write_spec(
        tmp_path,
        name="fp",
        datasets=[
            {
                "name": "table",
                "file": "t.csv",
                "data_dir": str(data),
                "concept_column": "c",
                "label_column": "y",
            }
        ],
    )
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out), "--quiet"]) == 0
    assert main(["export", str(out), "--format", "mlflow"]) == 0
    assert "1 runs logged to MLflow, 0 updated, 0 already there" in capsys.readouterr().out
    client = MlflowClient(tracking_uri=default_tracking_uri(out))
    exp = client.get_experiment_by_name("fp").experiment_id

    _table(data / "t.csv", 3.0)  # the input changes: the same run id, other numbers
    assert main(["run", str(spec), "--out", str(out), "--quiet"]) == 0
    assert main(["export", str(out), "--format", "mlflow"]) == 0
    assert (
        "0 runs logged to MLflow, 1 updated (1 computed again since), 0 already there"
        in capsys.readouterr().out
    )
    ours = json.loads((out / "results.json").read_text())["runs"][0]
    (live,) = client.search_runs([exp])
    assert live.data.metrics["roc_auc.continual_average"] == pytest.approx(
        ours["metrics"]["roc_auc"]["continual_average"]
    )

    # an export killed half-way: RUNNING, one artifact, no clad.complete tag
    client.delete_run(live.info.run_id)
    half = client.create_run(
        exp,
        tags={
            "clad.run_id": ours["run_id"],
            "clad.fingerprint": live.data.tags["clad.fingerprint"],
        },
    )
    client.log_text(half.info.run_id, "partial", "R/roc_auc.json")
    assert main(["export", str(out), "--format", "mlflow"]) == 0
    assert (
        "0 runs logged to MLflow, 1 updated (1 its export was cut short), 0 already there"
        in capsys.readouterr().out
    )
    (live,) = client.search_runs([exp])
    assert live.info.status == "FINISHED" and live.data.tags["clad.complete"] == "true"
    from mlflow.entities import ViewType

    # the cut-short run is gone, and not left RUNNING among the deleted ones either
    everything = client.search_runs([exp], run_view_type=ViewType.ALL)
    assert [r.info.status for r in everything if r.info.run_id == half.info.run_id] == ["KILLED"]
    assert not [r for r in everything if r.info.status == "RUNNING"]
    assert {a.path for a in client.list_artifacts(live.info.run_id, "R")} == {
        "R/roc_auc.json",
        "R/roc_auc.png",
    }
    assert main(["export", str(out), "--format", "mlflow"]) == 0
    assert "0 runs logged to MLflow, 0 updated, 1 already there" in capsys.readouterr().out

    # a run the folder no longer holds (retired after an input changed) leaves MLflow too
    from clad.results.store import ResultStore

    with ResultStore(out / "results.sqlite") as store:
        store.retire([ours["run_id"]])
    assert main(["export", str(out), "--format", "mlflow"]) == 0
    assert (
        "0 runs logged to MLflow, 0 updated, 0 already there, 1 retired (no longer in the folder)"
        in capsys.readouterr().out
    )
    assert client.search_runs([exp]) == []


def test_an_unreachable_tracking_server_fails_at_once_naming_it(results, capsys):
    import time

    start = time.perf_counter()
    assert (
        main(["export", str(results), "--format", "mlflow", "--tracking-uri", "http://127.0.0.1:9"])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    print(f"refused connection reported after {time.perf_counter() - start:.2f} s")
    assert (
        len(err) == 1 and "cannot reach the MLflow tracking server at http://127.0.0.1:9" in err[0]
    )
