"""Reference models: what a detector reaches on each test concept without continual learning.

Two kinds (:data:`REFERENCE_KINDS`; what each is: ``docs/guides/references.md``), each the R of a
naive (fresh detector per step), concept-incremental run on a dataset derived from the benchmark's
(:func:`reference_dataset`): ``joint`` on every training concept stacked into one, a recurring
concept as often as it recurs (:func:`joint_dataset`; its R has one row), ``single_task`` on each
concept alone (the single-task matrix M, whose diagonal is each concept's expert).

:func:`reference_scores` turns a reference's R into one score per test concept of a run (NaN where
the reference has none), the ``reference_<kind>`` input of the metrics declared by
:mod:`clad.metrics.reference_metrics` (intransigence and forward transfer against each reference).

>>> import numpy as np
>>> from clad.datasets import make_synthetic
>>> ds = make_synthetic(n_concepts=3, n_train=50, random_state=0)
>>> joint = joint_dataset(ds)
>>> joint.train_names, joint.train[0].X.shape[0] == sum(c.X.shape[0] for c in ds.train), joint.test_names
(('C0+C1+C2',), True, ('C0', 'C1', 'C2'))
>>> R = np.array([[0.9, 0.8, 0.7]])
>>> reference_scores("joint", ("C0+C1+C2",), ("C0", "C1", "C2"), R, ["C2", "C0", "X"]).tolist()
[0.7, 0.9, nan]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.concepts import Concept, ConceptDataset
from ..errors import CladValueError
from ..metrics.reference_metrics import REFERENCE_KINDS
from .single_task import single_task_dataset

__all__ = [
    "REFERENCE_KINDS",
    "check_kind",
    "joint_dataset",
    "reference_dataset",
    "reference_scores",
]


def check_kind(kind) -> str:
    """``kind`` if it is a reference kind, else a :class:`~clad.errors.CladValueError` naming it."""
    if kind not in REFERENCE_KINDS:
        raise CladValueError(
            f"reference {kind!r} is not a reference kind; allowed: {', '.join(REFERENCE_KINDS)}"
        )
    return kind


def joint_dataset(dataset: ConceptDataset) -> ConceptDataset:
    """``dataset`` with its training concepts stacked into one (named by theirs joined with ``+``);
    the test concepts unchanged."""
    train = dataset.train
    y = None if any(c.y is None for c in train) else np.concatenate([c.y for c in train])
    joint = Concept("+".join(c.name for c in train), np.concatenate([c.X for c in train]), y)
    return ConceptDataset([joint], list(dataset.test), name=dataset.name, metadata=dataset.metadata)


def reference_dataset(kind: str, dataset: ConceptDataset) -> ConceptDataset:
    """The dataset a reference of ``kind`` is a naive concept-incremental run on."""
    return joint_dataset(dataset) if check_kind(kind) == "joint" else single_task_dataset(dataset)


def reference_scores(
    kind: str, concepts: Sequence[str], test_concepts: Sequence[str], R, names: Sequence[str]
) -> np.ndarray:
    """One reference score per name in ``names`` from a reference run's R (rows ``concepts``,
    columns ``test_concepts``): the joint model's (its one row) or the concept's own expert (the
    row that learned it: M's diagonal); NaN for a name the reference did not score or learn."""
    check_kind(kind)
    R = np.asarray(R, dtype=np.float64)
    rows, cols = list(concepts), list(test_concepts)
    out = np.full(len(names), np.nan)
    for k, name in enumerate(names):
        if name not in cols:
            continue
        if kind == "joint":
            out[k] = R[-1, cols.index(name)]
        elif name in rows:
            out[k] = R[rows.index(name), cols.index(name)]
    return out
