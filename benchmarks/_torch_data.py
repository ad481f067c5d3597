"""What the torch benchmarks share: their data and how their figures are written."""

from __future__ import annotations

import csv
import json

import numpy as np


def make_data(model: str, rows: int) -> np.ndarray:
    """``rows`` seeded rows for the ``"dense"`` autoencoder (40 features near an 8-dimensional
    subspace) or windows for the LSTM autoencoder (50 steps x 25 phase-shifted sines)."""
    rng = np.random.default_rng(0)
    if model == "dense":
        latent = rng.normal(size=(rows, 8))
        return latent @ rng.normal(size=(8, 40)) + 0.1 * rng.normal(size=(rows, 40))
    t = np.arange(50)[None, :, None]
    phase = rng.uniform(0, 2 * np.pi, size=(rows, 1, 25))
    return np.sin(2 * np.pi * t / 12.5 + phase) + 0.05 * rng.normal(size=(rows, 50, 25))


def write_rows(rows: list, path: str, header: dict) -> None:
    """The figures ``rows`` as CSV (a name ending in .csv) or as JSON with ``header`` beside them."""
    if path.endswith(".csv"):
        keys = sorted({k for r in rows for k in r})
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    else:
        with open(path, "w") as fh:
            json.dump({**header, "rows": rows}, fh, indent=1)
    print(f"figures written to {path}")
