"""From groups of rows to a continual scenario: train/test split of each concept, then concept order.

A concept recipe (see :mod:`clad.datasets.recipes`) gives, for each concept, the *row indices* of its
normal rows and of its anomalies in one flat array ``X``. :func:`make_dataset` then

* splits each concept's normal rows at random into training rows and test rows (``test_size`` is
  the share of normal rows kept for testing); every anomaly goes to the test set, except that
  with ``contamination > 0`` anomalies are moved into training until they make up that share of
  the training rows (at least one anomaly always stays in the test set);
* orders the concepts (training order = test-column order) by ``order``, every form in
  :data:`ORDERS` or ``"random:<seed>"``: ``"given"`` (as the recipe made them), ``"random"``
  (seeded by ``random_state``, i.e. the run seed), ``"random:<seed>"`` (fixed by ``<seed>``
  alone, see ``docs/guides/orders.md``), ``"easy_to_hard"`` / ``"hard_to_easy"`` by the
  ``difficulty`` measure (:func:`concept_difficulty`; the datasets guide), and the orders from the
  single-task matrix (:mod:`clad.protocol.matrix_orders`; the protocol guide). ``iforest_auc`` and
  the matrix use one fixed detector, ``IsolationForest(n_estimators=100, random_state=0)``.

Rows are gathered with one indexing ``X[idx]`` per concept part (indices sorted, so the file's row
order is kept inside a concept); nothing else copies ``X``. The difficulty values and the order are
kept in ``dataset.metadata``.

>>> import numpy as np
>>> X = np.arange(20.0).reshape(10, 2); y = np.array([0, 0, 0, 0, 1, 0, 0, 0, 0, 1])
>>> groups = [ConceptRows("a", np.arange(4), np.array([4])), ConceptRows("b", np.arange(5, 9), np.array([9]))]
>>> ds = make_dataset(X, y, groups, test_size=0.5, random_state=0)
>>> [c.n_rows for c in ds.train], [int(c.y.sum()) for c in ds.test]
([2, 2], [1, 1])
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np

from ..core.concepts import Concept, ConceptDataset
from ..errors import DataError
from ..protocol.matrix_orders import MATRIX_ORDERS, order_from_matrix
from ..protocol.single_task import single_task_matrix
from ..validation import StrOptions, check
from . import _checks

__all__ = [
    "ConceptRows",
    "make_dataset",
    "order_concepts",
    "ORDERS",
    "DIFFICULTIES",
    "concept_difficulty",
    "OrderOptions",
    "fixed_order_seed",
]

log = logging.getLogger(__name__)

ORDERS = ("given", "random", "easy_to_hard", "hard_to_easy") + MATRIX_ORDERS
DIFFICULTIES = ("iforest_auc", "anomaly_share")


class OrderOptions(StrOptions):
    """A concept order: one of :data:`ORDERS`, or ``"random:<seed>"`` (the permutation fixed by
    ``<seed>``, what a spec's ``orders = { random = N }`` gives each order).

    >>> c = OrderOptions()
    >>> c.is_satisfied_by("random:42"), c.is_satisfied_by("given"), c.is_satisfied_by("random:x")
    (True, True, False)
    """

    def __init__(self):
        super().__init__(ORDERS + ("random:<seed>",))

    def is_satisfied_by(self, val):
        return fixed_order_seed(val) is not None or (
            val != "random:<seed>" and super().is_satisfied_by(val)
        )


#: the split and order parameters every loader shares (declared once, see clad.validation)
SPLIT_CONSTRAINTS = {
    "test_size": _checks.TEST_SIZE,
    "contamination": _checks.CONTAMINATION,
    "order": [OrderOptions()],
    "difficulty": [StrOptions(DIFFICULTIES)],
    "random_state": _checks.SEEDS,
    "data_dir": [None, str, os.PathLike],
}


@dataclass(frozen=True)
class ConceptRows:
    """A concept as row indices into a flat array: its ``normal`` rows and its ``anomalies``."""

    name: str
    normal: np.ndarray
    anomalies: np.ndarray


def take_rows(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``X[idx]`` as floats (a copy of those rows only)."""
    # fancy indexing, not np.take(axis=0): np.take first copies a Fortran-ordered X whole (ADBench's are)
    part = X[idx]
    return part if part.dtype.kind == "f" else part.astype(np.float64)


def split_concept(X, y, g: ConceptRows, test_size: float, contamination: float, rng, loader: str):
    """The ``(train, test)`` concepts of group ``g``: its normal rows split at random by ``rng``
    (``test_size`` of them kept for testing), its anomalies in the test set except the share
    ``contamination`` asks for in training (see the module docstring); ``loader`` names messages."""
    n_normal = len(g.normal)
    if n_normal < 2:
        raise DataError(
            f"{loader}: concept {g.name!r} has {n_normal} normal rows; at least 2 are needed "
            "(one to train on, one to test on); use fewer concepts or another recipe"
        )
    if len(g.anomalies) == 0:
        raise DataError(
            f"{loader}: concept {g.name!r} has no anomalies, so its test set would have a single "
            "class; use fewer concepts or another recipe"
        )
    normal = rng.permutation(g.normal)
    n_test = min(max(1, int(round(test_size * n_normal))), n_normal - 1)
    test_normal, train_normal = normal[:n_test], normal[n_test:]
    anomalies = rng.permutation(g.anomalies)
    n_train_anom = 0
    if contamination > 0:
        wanted = int(round(contamination * len(train_normal) / (1.0 - contamination)))
        n_train_anom = min(wanted, len(anomalies) - 1)
        if n_train_anom < wanted:
            log.warning(
                "%s: concept %r has %d anomalies; contamination %.3g asks for %d in training, using %d",
                loader,
                g.name,
                len(anomalies),
                contamination,
                wanted,
                n_train_anom,
            )
    train_idx = np.sort(np.concatenate([train_normal, anomalies[:n_train_anom]]))
    test_idx = np.sort(np.concatenate([test_normal, anomalies[n_train_anom:]]))
    train = Concept(g.name, take_rows(X, train_idx), y[train_idx])
    test = Concept(g.name, take_rows(X, test_idx), y[test_idx])
    return train, test


def concept_difficulty(train: Concept, test: Concept, measure: str = "iforest_auc") -> float:
    """Ease of a concept, larger = easier: ``"iforest_auc"``, the ROC-AUC of the fixed detector
    trained on the concept's training rows and scored on its test rows, or ``"anomaly_share"``,
    the share of anomalies in its test rows (rarer anomalies are harder to find)."""
    if measure == "anomaly_share":
        return float(np.mean(test.y))
    from sklearn.ensemble import IsolationForest
    from sklearn.metrics import roc_auc_score

    X_fit = train.X if train.y is None else train.X[train.y == 0]
    det = IsolationForest(n_estimators=100, random_state=0).fit(X_fit)
    return float(roc_auc_score(test.y, -det.score_samples(test.X)))


def _matrix_order(pairs, order: str, name: str) -> tuple[list[int], dict]:
    """The permutation of ``order`` from the pairs' single-task matrix, and M as metadata."""
    from sklearn.ensemble import IsolationForest

    names = [p[0].name for p in pairs]
    if len(set(names)) != len(names) or any(tr.name != te.name for tr, te in pairs):
        raise DataError(
            f"order {order!r} needs one training and one test concept per name; got {names}"
        )
    st = single_task_matrix(
        ConceptDataset([p[0] for p in pairs], [p[1] for p in pairs], name=name),
        IsolationForest(n_estimators=100, random_state=0),
    )
    perm = order_from_matrix(st.M, order, st.names)
    return perm, {
        "detector": "IsolationForest(n_estimators=100, random_state=0)",
        "metric": "roc_auc",
        "names": list(st.names),
        "M": st.M.tolist(),
    }


def fixed_order_seed(order) -> int | None:
    """The seed of a fixed random order ``"random:<seed>"``, or None for any other order.

    >>> fixed_order_seed("random:42"), fixed_order_seed("random")
    (42, None)
    """
    if isinstance(order, str) and order.startswith("random:") and order[7:].isdigit():
        return int(order[7:])
    return None


def _check_order(loader: str, order) -> str:
    check(loader, {"order": order}, {"order": [OrderOptions()]})
    return order


def make_dataset(
    X: np.ndarray,
    y: np.ndarray,
    groups,
    *,
    name: str = "dataset",
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    random_state: int = 0,
    metadata: dict | None = None,
    loader: str = "dataset",
) -> ConceptDataset:
    """Split every group into training and test rows, order the concepts, return the dataset.

    ``random_state`` seeds the split and the ``"random"`` order independently (two child seeds
    of :class:`numpy.random.SeedSequence`), so changing the order never changes the split.
    """
    test_size = _checks.fraction(loader, "test_size", test_size)
    contamination = _checks.fraction(loader, "contamination", contamination, 0.5, "left")
    _check_order(loader, order)
    _checks.choice(loader, "difficulty", difficulty, DIFFICULTIES)
    seed = _checks.seed(loader, random_state)
    groups = list(groups)
    if not groups:
        raise DataError(f"{loader}: the recipe gave no concepts")
    split_ss, order_ss = np.random.SeedSequence(seed).spawn(2)
    split_rng = np.random.default_rng(split_ss)
    pairs = [split_concept(X, y, g, test_size, contamination, split_rng, loader) for g in groups]
    meta = dict(metadata or {})
    meta.update(test_size=test_size, contamination=contamination, random_state=seed)
    return order_concepts(
        pairs,
        order=order,
        difficulty=difficulty,
        random_state=order_ss,
        name=name,
        metadata=meta,
        loader=loader,
    )


def order_concepts(
    pairs,
    *,
    order: str = "given",
    difficulty: str = "iforest_auc",
    random_state=0,
    name: str = "dataset",
    metadata: dict | None = None,
    loader: str = "dataset",
) -> ConceptDataset:
    """The dataset of ``(train, test)`` concept pairs put in ``order`` (see the module docstring)."""
    order = _check_order(loader, order)
    difficulty = _checks.choice(loader, "difficulty", difficulty, DIFFICULTIES)
    meta = dict(metadata or {})
    meta["order"] = order
    pairs = list(pairs)
    perm = np.arange(len(pairs))
    if fixed_order_seed(order) is not None:
        perm = np.random.default_rng(fixed_order_seed(order)).permutation(len(pairs))
    elif order == "random":
        perm = np.random.default_rng(random_state).permutation(len(pairs))
    elif order in ("easy_to_hard", "hard_to_easy"):
        ease = np.array([concept_difficulty(tr, te, difficulty) for tr, te in pairs])
        meta["difficulty"] = {
            "measure": difficulty,
            "values": {p[0].name: float(e) for p, e in zip(pairs, ease)},
            "larger_is": "easier",
        }
        perm = np.argsort(-ease if order == "easy_to_hard" else ease, kind="stable")
    elif order in MATRIX_ORDERS:
        perm, meta["single_task"] = _matrix_order(pairs, order, name)
    pairs = [pairs[i] for i in perm]
    return ConceptDataset([p[0] for p in pairs], [p[1] for p in pairs], name=name, metadata=meta)
