"""Test-then-train (prequential) scores of a stream: each batch scored before it is learned."""

from __future__ import annotations

from typing import Callable

import numpy as np
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from .scored import Scored

__all__ = ["PREQUENTIAL_METRICS", "Prequential"]


#: the prequential scores: name -> function(y_true, scores, labels)
PREQUENTIAL_METRICS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], float]] = {
    "roc_auc": lambda y, s, lab: float(roc_auc_score(y, s)),
    "average_precision": lambda y, s, lab: float(average_precision_score(y, s)),
    "f1": lambda y, s, lab: float(f1_score(y, lab, zero_division=0.0)),
}


class Prequential:
    """Test-then-train scores of a stream, batch after batch.

    Each batch is scored before it is learned; after batch ``b`` every metric of
    :data:`PREQUENTIAL_METRICS` (scikit-learn's ``roc_auc_score``, ``average_precision_score`` and
    ``f1_score`` on ``scores > threshold``, the threshold of the model that scored the batch) is
    computed over every row scored so far (*cumulative*) and over the rows of the last ``window``
    batches (*windowed*). A value whose rows hold a single class is NaN.

    >>> import numpy as np
    >>> from clad.core.scored import Scored
    >>> p = Prequential(window=1)
    >>> p.add(np.array([0, 1]), Scored(np.array([0.1, 0.9]), 0.5), 10)
    >>> p.add(np.array([0, 1]), Scored(np.array([0.8, 0.2]), 0.5), 12)
    >>> rec = p.record()
    >>> rec["windowed"]["roc_auc"], rec["cumulative"]["roc_auc"]
    ([1.0, 0.0], [1.0, 0.75])
    """

    def __init__(self, window: int = 10):
        self.window = window
        self._y: list[np.ndarray] = []
        self._scores: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []
        self._rows_seen: list[int] = []
        self._values: dict[str, dict[str, list[float]]] = {
            kind: {m: [] for m in PREQUENTIAL_METRICS} for kind in ("cumulative", "windowed")
        }

    def add(self, y: np.ndarray, scored: Scored, rows_seen: int) -> None:
        self._y.append(np.asarray(y).astype(np.int8))
        self._scores.append(np.asarray(scored.scores, dtype=np.float64))
        self._labels.append(scored.labels)
        self._rows_seen.append(int(rows_seen))
        for kind, first in (("cumulative", 0), ("windowed", max(0, len(self._y) - self.window))):
            y_all = np.concatenate(self._y[first:])
            s_all = np.concatenate(self._scores[first:])
            lab_all = np.concatenate(self._labels[first:])
            defined = np.unique(y_all).size == 2
            for m, fn in PREQUENTIAL_METRICS.items():
                self._values[kind][m].append(fn(y_all, s_all, lab_all) if defined else float("nan"))

    def record(self) -> dict | None:
        """The run's prequential record (None if no batch was scored)."""
        if not self._rows_seen:
            return None
        return {
            "window": self.window,
            "rows_seen": list(self._rows_seen),
            "n_rows": [int(len(y)) for y in self._y],
            "cumulative": {m: list(v) for m, v in self._values["cumulative"].items()},
            "windowed": {m: list(v) for m, v in self._values["windowed"].items()},
        }
