"""The incremental strategy: one detector that learns every batch, never starting over."""

from __future__ import annotations

from ..detectors.partial_fit import as_incremental
from .base import Strategy

__all__ = ["Incremental"]


class Incremental(Strategy):
    """One detector, fitted on the first batch and updated with ``partial_fit`` on every later one.

    The natural strategy of the concept-agnostic stream: it needs neither ids nor boundaries, keeps
    no rows (``memory_rows() == 0``), and its detector adapts to each batch as it comes (forgetting
    is the detector's own: a river ``HalfSpaceTrees`` forgets with its window, a network as far
    as the new data overwrite it). The detector may be a river anomaly detector (wrapped in
    :class:`~clad.detectors.incremental.RiverDetector`), anything with ``partial_fit`` (clad's
    PyTorch detectors, :class:`~clad.detectors.partial_fit.PartialFitDetector` for a scikit-learn
    estimator such as ``SGDOneClassSVM``); any other is refused at the first ``learn`` with a
    :class:`~clad.errors.CladValueError` naming it.

    >>> import numpy as np
    >>> from clad.detectors.incremental import half_space_trees
    >>> s = Incremental(half_space_trees(n_trees=5, window_size=50), random_state=0)
    >>> rng = np.random.default_rng(0)
    >>> for k in range(3):
    ...     s = s.learn(rng.uniform(size=(100, 2)))
    >>> s.n_learn_calls_, s.detector_.n_rows_learned_, s.memory_rows()
    (3, 300, 0)
    """

    replicas_problem = "it trains river detectors (partial_fit), not a torch network"

    def detector_problem(self, detector) -> str | None:
        from ..detectors import as_detector
        from ..errors import CladError

        try:
            as_incremental(as_detector(detector))
        except CladError as exc:
            return str(exc)
        return None

    def learn(self, X, concept_id=None):
        if not hasattr(self, "detector_"):
            self.detector_ = as_incremental(self._new_detector()).fit(X)
        else:
            self.detector_.partial_fit(X)
        return self
