"""Growable row storage used by strategies that keep training data (rows, or windows of a series).

:class:`RowBuffer` appends rows in amortised O(1) (capacity doubles), so a strategy that keeps
everything it has seen does not concatenate an ever-growing array at every step.

>>> import numpy as np
>>> b = RowBuffer()
>>> b.append(np.ones((2, 3))); b.append(np.zeros((1, 3)))
>>> b.view().shape, len(b)
((3, 3), 3)
"""

from __future__ import annotations

import numpy as np

__all__ = ["RowBuffer"]


class RowBuffer:
    """Rows appended over time, readable as one contiguous array without copying."""

    def __init__(self, initial_capacity: int = 1024):
        self._data: np.ndarray | None = None
        self._n = 0
        self._initial = max(1, int(initial_capacity))

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return 0 if self._data is None else int(self._data.nbytes)

    def append(self, X: np.ndarray) -> None:
        X = np.asarray(X)
        if X.ndim not in (2, 3):
            raise ValueError(
                f"RowBuffer.append expects a 2-D array (or 3-D windows), got shape {X.shape}"
            )
        if self._data is None:
            cap = max(self._initial, X.shape[0])
            self._data = np.empty((cap, *X.shape[1:]), dtype=X.dtype)
        elif X.shape[1:] != self._data.shape[1:]:
            raise ValueError(
                f"RowBuffer.append: rows of shape {X.shape[1:]}, buffer has {self._data.shape[1:]}"
            )
        need = self._n + X.shape[0]
        if need > self._data.shape[0]:
            cap = max(need, 2 * self._data.shape[0])
            grown = np.empty((cap, *self._data.shape[1:]), dtype=np.result_type(self._data, X))
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n : need] = X
        self._n = need

    def view(self) -> np.ndarray:
        """The rows appended so far (a view: do not keep it across appends)."""
        if self._data is None:
            raise ValueError("RowBuffer is empty")
        return self._data[: self._n]
