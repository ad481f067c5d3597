"""scenarios/nasa_smap_ranges.toml end to end on the shared SMAP copy: subsystems as concepts,
VUS-PR and range F1 on the time points beside ROC-AUC, the report's time-series figure and the
per-channel export."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from clad.cli import main
from clad.engine.spec import load_spec

from tests.data_helpers import SHARED, needs_smap  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUBSYSTEMS = ["A", "B", "D", "E", "F", "G", "P", "R", "S", "T"]
METRICS = ["vus_pr", "range_f1", "roc_auc"]


def test_spec_grid(monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = load_spec(ROOT / "scenarios" / "nasa_smap_ranges.toml")
    assert {c.strategy.name for c in spec.configs} == {"naive", "experts"}
    assert all(
        c.scenario.name == "concept_incremental"
        and c.dataset.params["concepts"] == "subsystem"
        and list(c.base_metrics) == METRICS
        for c in spec.configs
    )


@pytest.mark.slow
@needs_smap
def test_nasa_smap_ranges_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CLAD_DATA", str(SHARED))
    out = tmp_path / "smap"
    assert main(["run", "scenarios/nasa_smap_ranges.toml", "--out", str(out), "--quiet"]) == 0
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
    for r in runs:
        assert r["concepts"] == SUBSYSTEMS and r["test_concepts"] == SUBSYSTEMS
        for m in METRICS:
            R = r["R"][m]
            assert len(R) == 10 and all(
                len(row) == 10 and all(v is not None and 0 <= v <= 1 for v in row) for row in R
            )
            assert math.isfinite(r["metrics"][m]["continual_average"])
        trace = r["extras"]["time_series"]["trace"]
        assert trace["concept"] == "A" and len(trace["scores"]) == 10 and trace["ranges"]
    assert main(["report", str(out)]) == 0
    page = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((out / "report").rglob("*.html"))
    )
    assert "Time series: scores per step" in page
    # the spec's first base metric leads; the per-series (per-channel) mean sits beside R, on TSB-AD's scale
    assert "Best per scenario</b> by CA (vus_pr)" in page
    lb = pd.read_csv(out / "report" / "leaderboard.csv")
    naive = lb[
        (lb.strategy == "naive") & (lb.base_metric.isin(["vus_pr", "vus_pr_per_series_mean"]))
    ]
    diagonal = dict(zip(naive.base_metric, naive.learning_average_mean))
    run = next(r for r in runs if r["strategy"] == "naive")
    values = run["extras"]["time_series"]["per_series"]["values"]["vus_pr"]
    channels = [v for j, c in enumerate(SUBSYSTEMS) for v in values[c][j] if v is not None]
    assert len(channels) == 54
    assert diagonal["vus_pr_per_series_mean"] == pytest.approx(
        sum(channels) / 54
    )  # 0.209 (0.116 concatenated)
    assert diagonal["vus_pr"] == pytest.approx(
        sum(r_ for r_ in (run["R"]["vus_pr"][j][j] for j in range(10))) / 10
    )
    channel_table = pd.read_csv(out / "report" / "per_series.csv")
    assert channel_table["series"].nunique() == 54 and channel_table["chance"].notna().any()
    assert len(list((out / "report" / "figures").glob("trace__*.js"))) == 2  # drawn by the browser
    assert main(["export", str(out), "--per-series"]) == 0
    table = pd.read_csv(out / "per_series.csv")
    # 54 channels (P-2 once) x 10 steps, for each of the two runs
    assert table.groupby("run_id").size().tolist() == [540, 540]
    assert table["series"].nunique() == 54 and table["step"].nunique() == 10
    assert not table.duplicated(["run_id", "step", "series"]).any()
    assert set(METRICS) <= set(table.columns)
