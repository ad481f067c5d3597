"""scenarios/nasa_smap.toml end to end on the shared SMAP copy: subsystem concepts, IForest on
flattened windows and the LSTM autoencoder, naive / cumulative / experts."""

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("torch")

from clad.cli import main  # noqa: E402
from clad.engine.spec import load_spec  # noqa: E402

from tests.data_helpers import SHARED, needs_smap  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUBSYSTEMS = ["A", "B", "D", "E", "F", "G", "P", "R", "S", "T"]


def test_spec_grid(monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = load_spec(ROOT / "scenarios" / "nasa_smap.toml")
    grid = {(c.strategy.name, c.detector.name) for c in spec.configs}
    assert grid == {
        (s, d) for s in ("naive", "cumulative", "experts") for d in ("iforest", "lstm_autoencoder")
    }
    assert all(
        c.scenario.name == "concept_incremental" and c.dataset.params["concepts"] == "subsystem"
        for c in spec.configs
    )


@pytest.mark.slow
@needs_smap
def test_nasa_smap_spec_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CLAD_DATA", str(SHARED))
    out = tmp_path / "nasa_smap"
    assert main(["run", "scenarios/nasa_smap.toml", "--out", str(out), "--quiet"]) == 0
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert len(runs) == 6 and all(r["status"] == "ok" for r in runs)
    for r in runs:
        assert (
            r["concepts"] == SUBSYSTEMS and r["test_concepts"] == SUBSYSTEMS
        )  # one row per subsystem
        for m in ("roc_auc", "average_precision"):
            R = r["R"][m]
            assert len(R) == 10 and all(
                len(row) == 10 and all(v is not None for v in row) for row in R
            )
            assert all(
                math.isfinite(r["metrics"][m][k])
                for k in ("continual_average", "backward_transfer", "forward_transfer")
            )
