"""The two baselines every continual comparison needs: Naive and Cumulative."""

from __future__ import annotations

import numpy as np

from ..buffers import RowBuffer
from .base import Scored, Strategy

__all__ = ["Naive", "Cumulative"]


class Naive(Strategy):
    """Train a fresh detector on the newest data only (each ``learn`` call replaces the model).

    The lower bound of continual learning: whatever was learned before is forgotten.
    Works in every scenario.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = Naive(IsolationForest(n_estimators=10, random_state=0))
    >>> s = s.learn(np.zeros((50, 2))).learn(np.ones((50, 2)))
    >>> s.n_learn_calls_, s.memory_rows()
    (2, 0)
    """

    def learn(self, X, concept_id=None):
        self.detector_ = self._new_detector().fit(X)
        self.n_learn_calls_ = getattr(self, "n_learn_calls_", 0) + 1
        return self

    def score(self, X, concept_id=None) -> Scored:
        self._check_fitted()
        return Scored(self.detector_.score(X), self.detector_.threshold_)


class Cumulative(Strategy):
    """Keep every training row seen so far and refit a fresh detector on all of them.

    The joint-training upper bound (it breaks the memory budget a continual learner has).
    Rows are kept in a growable buffer, not re-concatenated at every step.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = Cumulative(IsolationForest(n_estimators=10, random_state=0))
    >>> s = s.learn(np.zeros((50, 2))).learn(np.ones((30, 2)))
    >>> s.memory_rows()
    80
    """

    def learn(self, X, concept_id=None):
        if not hasattr(self, "buffer_"):
            self.buffer_ = RowBuffer(initial_capacity=max(1024, len(X)))
        self.buffer_.append(np.asarray(X))
        self.detector_ = self._new_detector().fit(self.buffer_.view())
        return self

    def score(self, X, concept_id=None) -> Scored:
        self._check_fitted()
        return Scored(self.detector_.score(X), self.detector_.threshold_)

    def memory_rows(self) -> int:
        return len(self.buffer_) if hasattr(self, "buffer_") else 0
