"""Concept orders from a single-task matrix M (see :mod:`clad.protocol.single_task`).

With ``M[i, j]`` the score on concept ``j`` of a detector trained on concept ``i`` alone, the
orders of :data:`MATRIX_ORDERS` arrange concepts by their **difficulty** ``1 - M[j, j]`` (curriculum)
or greedily from the easiest by their **distance** ``D[i, j] = 1 - (M[i, j] + M[j, i]) / 2`` (drift:
always the nearest, or the farthest, concept not yet placed); ties go to the concept that comes
first in M. What each name means and where it is accepted: ``docs/guides/protocol.md``.

>>> import numpy as np
>>> M = np.array([[0.90, 0.80, 0.30],
...               [0.70, 0.95, 0.40],
...               [0.20, 0.50, 0.60]])
>>> order_from_matrix(M, "curriculum_ascending"), order_from_matrix(M, "drift_abrupt")
([1, 0, 2], [1, 2, 0])
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError

__all__ = [
    "MATRIX_ORDERS",
    "difficulty",
    "drift_distance",
    "curriculum_order",
    "drift_order",
    "order_from_matrix",
]

#: orders computed from the concepts' single-task matrix, accepted by every loader's ``order``
#: (:func:`clad.datasets.build.order_concepts`)
MATRIX_ORDERS = ("curriculum_ascending", "curriculum_descending", "drift_smooth", "drift_abrupt")


def _square(M, names=None) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise DataError(
            f"single-task matrix has shape {M.shape}; expected a non-empty square matrix"
        )
    if np.isnan(M).any():
        i, j = np.argwhere(np.isnan(M))[0]
        where = f"({names[i]!r}, {names[j]!r})" if names is not None else f"[{i}, {j}]"
        raise DataError(
            f"single-task matrix cell {where} is undefined (NaN: a test concept with one class?); "
            "an order from M needs every cell"
        )
    return M


def difficulty(M) -> np.ndarray:
    """``1 - M[j, j]`` for every concept ``j``."""
    return 1.0 - np.diag(_square(M))


def drift_distance(M) -> np.ndarray:
    """``D[i, j] = 1 - (M[i, j] + M[j, i]) / 2``."""
    M = _square(M)
    return 1.0 - (M + M.T) / 2.0


def curriculum_order(M, descending: bool = False) -> list[int]:
    """Concept indices by difficulty, easiest first (``descending``: hardest first)."""
    d = difficulty(M)
    return [int(i) for i in np.argsort(-d if descending else d, kind="stable")]


def drift_order(M, abrupt: bool = False) -> list[int]:
    """Greedy order from the easiest concept, each next one the nearest (``abrupt``: farthest) left."""
    D = drift_distance(M)
    current = curriculum_order(M)[0]
    order, left = [current], [j for j in range(len(D)) if j != current]
    while left:
        dist = D[current, left]
        current = left[int(np.argmax(dist) if abrupt else np.argmin(dist))]
        order.append(current)
        left.remove(current)
    return order


def order_from_matrix(M, name: str, names=None) -> list[int]:
    """The concept indices in order ``name`` (one of :data:`MATRIX_ORDERS`)."""
    _square(M, names)
    if name == "curriculum_ascending":
        return curriculum_order(M)
    if name == "curriculum_descending":
        return curriculum_order(M, descending=True)
    if name == "drift_smooth":
        return drift_order(M)
    if name == "drift_abrupt":
        return drift_order(M, abrupt=True)
    raise DataError(
        f"order {name!r} is not an order from the single-task matrix; allowed: {', '.join(MATRIX_ORDERS)}"
    )
