"""Incremental adapters of estimators that have ``partial_fit``, and the one function that makes any
detector incremental (:func:`as_incremental`, used by the ``incremental`` strategy); river's
detectors and what the adapters share are in :mod:`clad.detectors.incremental`."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import clone

from ..errors import CladValueError, DetectorError
from .base import DetectorAdapter, as_detector, detector_name, set_random_state
from .incremental import IncrementalDetector, RiverDetector, is_river

__all__ = ["PartialFitDetector", "as_incremental"]


class PartialFitDetector(IncrementalDetector):
    """An estimator with ``partial_fit`` as an incremental clad detector: ``fit`` is its ``fit``,
    ``partial_fit`` its ``partial_fit``; scores and threshold as :func:`~clad.detectors.as_detector`'s
    adapter for it gives them (see the module docstring).

    >>> import numpy as np
    >>> from sklearn.linear_model import SGDOneClassSVM
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> det = PartialFitDetector(SGDOneClassSVM(random_state=0)).fit(X).partial_fit(X + 0.1)
    >>> det.n_rows_learned_, det.threshold_ == -float(det.estimator_.offset_[0])
    (600, True)
    """

    def _adapter(self) -> DetectorAdapter:
        adapter = as_detector(self.estimator)
        # None for a clad detector: its own interface
        return adapter if isinstance(adapter, DetectorAdapter) else None

    def _fresh(self):
        if not callable(getattr(self.estimator, "partial_fit", None)):
            raise CladValueError(
                f"PartialFitDetector: {detector_name(self.estimator)} has no partial_fit"
            )
        try:
            est = clone(self.estimator)
        except TypeError:
            est = copy.deepcopy(self.estimator)
        if self.random_state is not None:
            set_random_state(est, int(self.random_state))
        return est

    def _learn(self, X, first: bool) -> None:
        (self.estimator_.fit if first else self.estimator_.partial_fit)(X)

    def _raw_score(self, X) -> np.ndarray:
        adapter = self._adapter()
        return (
            self.estimator_.score(X) if adapter is None else adapter._raw_score(self.estimator_, X)
        )

    def _own_threshold(self, X) -> float | None:
        adapter = self._adapter()
        if adapter is None:
            own = getattr(self.estimator_, "threshold_", None)
            return None if own is None else float(own)
        try:
            return float(adapter._threshold(self.estimator_, X))
        except (AttributeError, DetectorError):
            return None


def as_incremental(detector):
    """``detector`` as a detector with ``partial_fit``: unchanged if it has one; a river estimator
    in a :class:`RiverDetector`; an adapter (or an estimator) whose estimator has ``partial_fit`` in a
    :class:`PartialFitDetector`. Anything else is a :class:`~clad.errors.CladValueError` naming it."""
    if callable(getattr(detector, "partial_fit", None)):
        return detector
    if is_river(detector):
        return RiverDetector(detector)
    inner = detector.estimator if isinstance(detector, DetectorAdapter) else None
    if callable(getattr(inner, "partial_fit", None)):
        return PartialFitDetector(inner, contamination=getattr(detector, "contamination", 0.1))
    raise CladValueError(
        f"detector {detector_name(detector)} cannot learn incrementally: it has no partial_fit and is not a "
        "river anomaly detector (learn_one/score_one); use e.g. 'half_space_trees', 'river_one_class_svm', "
        "scikit-learn's SGDOneClassSVM or a clad PyTorch detector"
    )
