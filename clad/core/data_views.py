"""Data views for tuning: the part of a dataset a tuning run may see, and the part the evaluation scores.

Parameters chosen on the concepts an evaluation scores inflate its results. A *view* cuts a
:class:`~clad.core.concepts.ConceptDataset` into two disjoint parts, one for tuning runs and one
for the evaluation runs, so that no row the evaluation scores is ever scored while tuning:

* ``first_concepts`` (the protocol of Chaudhry et al., "Efficient Lifelong Learning with A-GEM",
  ICLR 2019): the first ``k`` distinct concepts of the learning order are the *tuning concepts*.
  The ``tune`` part trains on their training steps and tests on their test concepts only; the
  ``evaluate`` part trains on every other step and tests on every other test concept (a test
  concept never trained belongs to the evaluation). A tuning concept is neither trained nor
  tested in the evaluation.
* ``validation_split``: every test concept's labelled rows are split, stratified by label, into a
  validation part (a share ``fraction`` of each label's rows, rounded half up) and a test part.
  The ``tune`` part tests on the validation parts, the ``evaluate`` part on the test parts; both
  train on every training concept. The split is drawn from the run seed
  (:func:`clad.core.seeding.validation_seed`), so a tuning run and the evaluation run it serves
  split alike.

A view is a plain dict (``{"mode": ..., "part": "tune" | "evaluate", "k": ...}`` or ``"fraction"``),
so a run's configuration records it.

>>> from clad.datasets import make_synthetic
>>> ds = make_synthetic(n_concepts=3, n_features=2, n_train=20, n_test=10)
>>> tune = apply_view(ds, {"mode": "first_concepts", "part": "tune", "k": 1}, seed=0)
>>> evaluate = apply_view(ds, {"mode": "first_concepts", "part": "evaluate", "k": 1}, seed=0)
>>> tune.train_names, tune.test_names, evaluate.train_names, evaluate.test_names
(('C0',), ('C0',), ('C1', 'C2'), ('C1', 'C2'))
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import DataError
from .concepts import Concept, ConceptDataset

__all__ = ["MODES", "PARTS", "apply_view", "tuning_concepts", "validation_indices"]

MODES = ("first_concepts", "validation_split")
PARTS = ("tune", "evaluate")


def tuning_concepts(dataset: ConceptDataset, k: int) -> tuple[str, ...]:
    """The first ``k`` distinct concept names of the learning order (a :class:`DataError` when
    that leaves no concept to train or test in the evaluation, or none to test while tuning)."""
    names = list(dict.fromkeys(dataset.train_names))
    if not 1 <= k < len(names):
        raise DataError(
            f"tuning k = {k}: dataset {dataset.name!r} learns {len(names)} distinct concepts "
            f"({', '.join(names)}); k must be at least 1 and leave at least one concept to evaluate "
            f"(k <= {len(names) - 1})"
        )
    chosen = tuple(names[:k])
    if not any(c.name in chosen for c in dataset.test):
        raise DataError(
            f"tuning k = {k}: dataset {dataset.name!r} has no test concept named "
            f"{', '.join(chosen)}; the tuning runs would score nothing"
        )
    if all(c.name in chosen for c in dataset.test):
        raise DataError(
            f"tuning k = {k}: every test concept of dataset {dataset.name!r} is a tuning concept; "
            "the evaluation would score nothing"
        )
    return chosen


def validation_indices(y: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """The sorted row indices of the validation part of a test concept with labels ``y``: for each
    label, ``round(fraction * rows of that label)`` rows (half up) drawn without replacement by a
    generator seeded with ``seed``.

    >>> y = np.array([0] * 8 + [1] * 2)
    >>> idx = validation_indices(y, 0.5, seed=0)
    >>> len(idx), int(y[idx].sum())
    (5, 1)
    """
    rng = np.random.default_rng(seed)
    picked = []
    for label in (0, 1):  # labels are binary; a fixed order keeps the draws reproducible
        rows = np.flatnonzero(y == label)
        n = int(np.floor(fraction * rows.size + 0.5))
        if n:
            picked.append(rng.choice(rows, size=n, replace=False))
    return np.sort(np.concatenate(picked)) if picked else np.empty(0, dtype=np.intp)


def _split(concept: Concept, part: str, fraction: float, seed: int) -> Concept:
    idx = validation_indices(concept.y, fraction, seed)
    if idx.size == 0 or idx.size == concept.n_rows:
        raise DataError(
            f"tuning fraction = {fraction}: test concept {concept.name!r} has {concept.n_rows} rows; "
            f"its validation part would hold {idx.size} of them; choose a fraction that leaves rows "
            "on both sides"
        )
    if part == "evaluate":
        idx = np.setdiff1d(np.arange(concept.n_rows), idx, assume_unique=True)
    return Concept(concept.name, concept.X[idx], concept.y[idx], validate=False)


def apply_view(dataset: ConceptDataset, view: Mapping | None, seed: int) -> ConceptDataset:
    """The part ``view["part"]`` of ``dataset`` under ``view`` (see the module); ``dataset`` itself
    when ``view`` is None. ``seed`` is the seed of the validation split (unused by
    ``first_concepts``)."""
    if view is None:
        return dataset
    mode, part = view.get("mode"), view.get("part")
    if mode not in MODES or part not in PARTS:
        raise DataError(f"data view {dict(view)!r}: expected mode in {MODES} and part in {PARTS}")
    if mode == "first_concepts":
        chosen = tuning_concepts(dataset, int(view["k"]))
        tune = part == "tune"
        train = [c for c in dataset.train if (c.name in chosen) == tune]
        test = [c for c in dataset.test if (c.name in chosen) == tune]
    else:
        fraction = float(view["fraction"])
        seeds = np.random.SeedSequence(int(seed)).spawn(len(dataset.test))
        train = list(dataset.train)
        test = [
            _split(c, part, fraction, int(s.generate_state(1)[0]))
            for c, s in zip(dataset.test, seeds)
        ]
    metadata = {**dataset.metadata, "view": dict(view)}
    return ConceptDataset(train, test, name=dataset.name, metadata=metadata)
