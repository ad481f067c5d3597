"""The single-task matrix M of a scenario: a fresh detector per concept, scored on every concept.

``M[i, j]`` is a base metric (default ROC-AUC) on test concept ``j`` of a detector trained on concept
``i`` *alone*. It is what the :class:`~clad.strategies.Naive` strategy computes in a
concept-incremental run, since Naive fits a fresh clone of its detector at every step: M is the R
of that run over the concepts that are both trained and tested, each trained once, in the order of
their first training step. Naive's backward transfer on that run is read from the same R.

>>> from sklearn.ensemble import IsolationForest
>>> from clad.datasets import make_synthetic
>>> st = single_task_matrix(make_synthetic(n_concepts=3, random_state=0), IsolationForest(n_estimators=20), seed=0)
>>> st.M.shape, st.names
((3, 3), ('C0', 'C1', 'C2'))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..defaults import DEFAULT_BASE_METRIC
from ..core.concepts import ConceptDataset
from ..errors import DataError

__all__ = ["SingleTaskMatrix", "single_task_matrix", "single_task_dataset", "naive_matrix"]


@dataclass(frozen=True, eq=False)
class SingleTaskMatrix:
    """M (rows: the concept trained on; columns: the concept scored), its concept ``names``, the
    base ``metric``, each test concept's normal and anomalous row counts, and naive's backward
    transfer (the BWT of R = M, :func:`clad.metrics.backward_transfer`)."""

    names: tuple[str, ...]
    M: np.ndarray
    metric: str
    n_normal: tuple[int, ...]
    n_anomalous: tuple[int, ...]
    naive_bwt: float
    #: each test concept's chance level for ``metric`` (what a scoreless detector gets there; None: unknown)
    chance: tuple[float, ...] | None = None

    def to_dict(self) -> dict:
        from ..results.record import to_jsonable

        return to_jsonable(
            {
                "names": list(self.names),
                "metric": self.metric,
                "M": self.M,
                "n_normal": list(self.n_normal),
                "n_anomalous": list(self.n_anomalous),
                "naive_bwt": self.naive_bwt,
                "chance": None if self.chance is None else list(self.chance),
            }
        )


def single_task_dataset(dataset: ConceptDataset) -> ConceptDataset:
    """The concepts of ``dataset`` that are both trained and tested, each trained once (its first
    training concept), in the order of their first training step; test concepts in the same order."""
    tests = {c.name: c for c in dataset.test}
    train, seen = [], set()
    for c in dataset.train:
        if c.name in tests and c.name not in seen:
            seen.add(c.name)
            train.append(c)
    if not train:
        raise DataError(
            f"dataset {dataset.name!r}: no concept is both trained and tested "
            f"(training: {list(dataset.train_names)}, test: {list(dataset.test_names)}); "
            "a single-task matrix needs at least one"
        )
    return ConceptDataset(
        train, [tests[c.name] for c in train], name=dataset.name, metadata=dataset.metadata
    )


def single_task_matrix(
    dataset: ConceptDataset, detector, metric: str = DEFAULT_BASE_METRIC, seed: int | None = None
) -> SingleTaskMatrix:
    """M of ``dataset`` with ``detector`` (any detector :func:`clad.detectors.as_detector` accepts;
    a fresh clone per concept). ``seed`` fills a ``random_state`` left as None, as in
    :func:`clad.core.experiment.run_experiment`."""
    from ..scenarios import ConceptIncremental
    from ..strategies import Naive

    return naive_matrix(dataset, ConceptIncremental(), Naive(detector), metric, seed)


def naive_matrix(
    dataset: ConceptDataset,
    scenario,
    strategy,
    metric: str = DEFAULT_BASE_METRIC,
    seed: int | None = None,
) -> SingleTaskMatrix:
    """M from a run of ``strategy`` (a :class:`~clad.strategies.Naive`, which fits a fresh detector at
    every step) in a concept-incremental ``scenario`` on :func:`single_task_dataset` of ``dataset``."""
    from ..core.experiment import run_experiment

    ds = single_task_dataset(dataset)
    result = run_experiment(ds, scenario, strategy, (metric,), seed=seed)
    M = np.asarray(result.R[metric], dtype=np.float64)
    levels = (result.chance or {}).get(metric)
    return SingleTaskMatrix(
        names=ds.test_names,
        M=M,
        metric=metric,
        n_normal=tuple(int((c.y == 0).sum()) for c in ds.test),
        n_anomalous=tuple(int((c.y == 1).sum()) for c in ds.test),
        naive_bwt=float(result.metrics[metric]["backward_transfer"]),
        chance=None if levels is None else tuple(np.nan if v is None else float(v) for v in levels),
    )
