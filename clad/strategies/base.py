"""The strategy protocol.

A strategy owns one or more detectors and decides what they are trained on:

* ``learn(X, concept_id=None)`` — one training call (a whole concept, or a batch of a stream);
* ``score(X, concept_id=None) -> Scored`` — scores (higher = more anomalous) and the threshold that
  turns them into labels, from **one** scoring pass.

Strategies are scikit-learn style estimators: ``__init__`` stores parameters only (the detector
*prototype* and ``random_state``); all state is created by ``learn`` and ends in ``_``. The
prototype is never fitted: each detector a strategy trains is a fresh ``clone`` of it.

Class attributes tell scenarios what a strategy needs: ``requires_concept_id`` (concept-aware only)
and ``requires_boundaries`` (not the concept-agnostic stream). A scenario refuses a strategy whose
needs it cannot meet before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..detectors import as_detector, detector_name
from ..errors import CladValueError

__all__ = ["Scored", "Strategy"]


@dataclass(frozen=True)
class Scored:
    """Scores of one test set and the threshold for labels (``scores > threshold`` is an anomaly)."""

    scores: np.ndarray
    threshold: float

    @property
    def labels(self) -> np.ndarray:
        return (self.scores > self.threshold).astype(np.int8)


class Strategy(BaseEstimator):
    """Base class of clad's strategies (a user's strategy may also just follow the protocol)."""

    requires_concept_id: bool = False
    requires_boundaries: bool = False
    #: scenario names this strategy runs in (documentation and early checks)
    supported_scenarios: tuple[str, ...] = ("concept_aware", "concept_incremental", "concept_agnostic")

    def __init__(self, detector=None, random_state: int | None = None):
        self.detector = detector
        self.random_state = random_state

    # -- helpers for subclasses -------------------------------------------------------------
    def _new_detector(self):
        """A fresh, unfitted detector cloned from the prototype."""
        if self.detector is None:
            raise CladValueError(f"{type(self).__name__}: detector=None; give a detector prototype")
        proto = as_detector(self.detector)
        return clone(proto)

    def _check_fitted(self, attr: str = "detector_"):
        if not hasattr(self, attr):
            raise CladValueError(f"{type(self).__name__}: score() called before any learn()")

    @property
    def detector_label(self) -> str:
        return detector_name(as_detector(self.detector)) if self.detector is not None else "None"

    def memory_rows(self) -> int:
        """Training rows this strategy keeps in memory (0 for strategies that keep none)."""
        return 0

    # -- protocol --------------------------------------------------------------------------
    def learn(self, X: np.ndarray, concept_id: str | None = None) -> "Strategy":  # pragma: no cover
        raise NotImplementedError

    def score(self, X: np.ndarray, concept_id: str | None = None) -> Scored:  # pragma: no cover
        raise NotImplementedError
