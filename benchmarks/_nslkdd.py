"""The pyCLAD NSL-KDD concept file as a clad dataset (shared by the benchmarks)."""

from __future__ import annotations

import os

import numpy as np

from clad.core.concepts import Concept, ConceptDataset

DEFAULT = os.environ.get(
    "CLAD_PYCLAD_NSL_KDD",
    os.path.join(
        os.path.dirname(os.path.abspath(__file__)),
        "..",
        "..",
        "shared",
        "datasets",
        "pyclad-nsl-kdd",
        "nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy",
    ),
)


def find(path: str | None = None) -> str:
    path = os.path.abspath(path or DEFAULT)
    if not os.path.exists(path):
        raise SystemExit(
            f"NSL-KDD concept file not found at {path}; give --data PATH or set CLAD_PYCLAD_NSL_KDD"
        )
    return path


def load(path: str | None = None) -> ConceptDataset:
    # a numpy object array of dicts: a pickle, loaded only because this file is trusted
    raw = np.load(find(path), allow_pickle=True)
    train = [Concept(str(c["name"]), c["train_data"]) for c in raw]
    test = [Concept(str(c["name"]), c["test_data"], c["test_labels"]) for c in raw]
    return ConceptDataset(train, test, name="pyclad-nsl-kdd")
