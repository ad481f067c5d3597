"""The detector interface and the adapters that make library estimators follow it.

A clad detector is any object with

* ``fit(X) -> self``;
* ``score(X) -> ndarray of shape (n,)``, finite, **higher = more anomalous**;
* ``threshold_`` (set by ``fit``): a row is labelled an anomaly when its score is ``> threshold_``,
  so labels always come from the same scores as the ranking metrics (never a second pass).

:func:`as_detector` wraps whatever a user gives into an adapter that follows this interface:

* a PyOD ``BaseDetector`` -> :class:`PyODDetector` (``decision_function``, PyOD's ``threshold_``);
* a scikit-learn outlier detector -> :class:`SklearnDetector` (``-score_samples``, since scikit-learn
  scores are *lower* for abnormal rows; the threshold is ``-offset_``);
* any other object with ``fit`` and ``score`` -> :class:`ProtocolDetector` (its own ``threshold_``
  if it sets one, else the ``1 - contamination`` quantile of its training scores).
* a river anomaly detector (``learn_one`` / ``score_one``) ->
  :class:`~clad.detectors.incremental.RiverDetector`.

All adapters are scikit-learn estimators: ``sklearn.base.clone`` gives a fresh unfitted copy, and
they check every score array, naming the detector when it has the wrong shape or is not finite.

Detectors get their data read-only (a :class:`~clad.core.concepts.Concept` owns frozen arrays), so
that no run can change the data of the runs after it. A detector that writes into its input raises
a :class:`~clad.errors.DetectorError` naming it and the method (:func:`writes_guard`).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..errors import CladError, CladTypeError, DetectorError
from .tabular import as_table, check_scores

__all__ = [
    "as_detector",
    "detector_name",
    "set_random_state",
    "check_threshold",
    "writes_guard",
    "DetectorAdapter",
    "SklearnDetector",
    "PyODDetector",
    "ProtocolDetector",
]


def detector_name(obj) -> str:
    """A short readable name: the class name of the wrapped estimator."""
    inner = getattr(obj, "estimator", None)
    if inner is not None and isinstance(obj, DetectorAdapter):
        return type(inner).__name__
    return type(obj).__name__


def check_threshold(value, who: str) -> float:
    """``threshold_`` as a float, or a DetectorError naming ``who`` when it is not a finite real
    number (a NaN threshold would label no row an anomaly, and F1 would be 0 everywhere).

    >>> check_threshold(np.float32(1.5), "Mine")
    1.5
    >>> check_threshold(float("nan"), "Mine")
    Traceback (most recent call last):
    ...
    clad.errors.DetectorError: detector Mine: threshold_ is nan; expected a finite real number
    """
    t = None
    if not isinstance(value, (bool, np.bool_)) and not np.iscomplexobj(value):
        try:
            t = float(value)
        except (TypeError, ValueError):
            pass
    if t is None or not np.isfinite(t):
        v = value if t is None else t
        raise DetectorError(f"detector {who}: threshold_ is {v!r}; expected a finite real number")
    return t


@contextmanager
def writes_guard(who: str | Callable[[], str], method: str):
    """Turn numpy's error for a write into a read-only array (``ValueError: assignment
    destination is read-only``, ``output array is read-only``) raised inside the block into a
    :class:`~clad.errors.DetectorError` naming the detector ``who`` (a string, or a callable giving
    it) and its ``method``.

    >>> import numpy as np
    >>> X = np.zeros(3)
    >>> X.flags.writeable = False
    >>> with writes_guard("Zeroing", "fit"):  # doctest: +ELLIPSIS
    ...     X *= 0
    Traceback (most recent call last):
    ...
    clad.errors.DetectorError: detector Zeroing: fit() changes its input X in place ...
    """
    try:
        yield
    except ValueError as exc:
        if isinstance(exc, CladError) or "read-only" not in str(exc):
            raise
        name = who() if callable(who) else who
        raise DetectorError(
            f"detector {name}: {method}() changes its input X in place ({exc}); clad hands detectors "
            "read-only data so that no run can change another run's data. A detector that must write "
            "works on its own copy (X = np.array(X))"
        ) from exc


def set_random_state(detector, seed: int, overwrite: bool = False) -> None:
    """Give the detector (or the estimator inside an adapter) ``random_state=seed``.

    Only a ``random_state`` that is ``None`` is replaced unless ``overwrite`` is true, so an
    explicit ``random_state`` in a spec wins.
    """
    target = detector.estimator if isinstance(detector, DetectorAdapter) else detector
    get = getattr(target, "get_params", None)
    if get is None:
        if hasattr(target, "random_state") and (overwrite or target.random_state is None):
            target.random_state = seed
        return
    params = get(deep=False)
    if "random_state" in params and (overwrite or params["random_state"] is None):
        target.set_params(random_state=seed)


class DetectorAdapter(BaseEstimator):
    """Base of the adapters: holds ``estimator`` (never fitted itself) and fits a clone of it."""

    def __init__(self, estimator=None):
        self.estimator = estimator

    @property
    def name(self) -> str:
        return detector_name(self)

    def _fresh(self):
        try:
            return clone(self.estimator)
        except TypeError:
            return clone(self.estimator, safe=False)

    def fit(self, X, y=None):
        X = as_table(X)  # windows (n, window, features) reach a library estimator flattened
        self.estimator_ = self._fresh()
        with writes_guard(self.name, "fit"):
            self._fit_estimator(self.estimator_, X)
            self.threshold_ = check_threshold(self._threshold(self.estimator_, X), self.name)
        self.n_features_in_ = int(np.shape(X)[1])
        return self

    def score(self, X) -> np.ndarray:
        if not hasattr(self, "estimator_"):
            raise DetectorError(f"detector {self.name}: score() called before fit()")
        X = as_table(X)
        with writes_guard(self.name, "score"):
            raw = self._raw_score(self.estimator_, X)
        return check_scores(raw, int(np.shape(X)[0]), self.name)

    # subclass hooks
    def _fit_estimator(self, est, X):
        return est.fit(X)

    def _raw_score(self, est, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _threshold(self, est, X) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


class SklearnDetector(DetectorAdapter):
    """A scikit-learn outlier detector (``score_samples``: lower = more abnormal) as a clad detector.

    ``score = -score_samples(X)`` and ``threshold_ = -offset_``, which labels exactly the rows that
    scikit-learn's own ``predict`` calls outliers.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> rng = np.random.default_rng(0)
    >>> det = SklearnDetector(IsolationForest(random_state=0)).fit(rng.normal(size=(200, 2)))
    >>> bool(det.score(np.array([[8.0, 8.0]]))[0] > det.score(np.array([[0.0, 0.0]]))[0])
    True
    """

    def _fit_estimator(self, est, X):
        if type(est).__name__ == "LocalOutlierFactor" and not getattr(est, "novelty", True):
            raise DetectorError(
                "detector LocalOutlierFactor: novelty=False cannot score new data; "
                "use LocalOutlierFactor(novelty=True) (the registered name 'lof' does this)"
            )
        return est.fit(X)

    def _raw_score(self, est, X):
        return -np.asarray(est.score_samples(X), dtype=np.float64)

    def _threshold(self, est, X) -> float:
        return -float(np.ravel(est.offset_)[0])


class PyODDetector(DetectorAdapter):
    """A PyOD ``BaseDetector`` as a clad detector: ``decision_function`` (higher = more anomalous)
    and PyOD's own ``threshold_`` (from its ``contamination``)."""

    def _raw_score(self, est, X):
        return est.decision_function(X)

    def _threshold(self, est, X) -> float:
        return float(np.ravel(est.threshold_)[0])


class ProtocolDetector(DetectorAdapter):
    """Any object with ``fit(X)`` and ``score(X)`` (higher = more anomalous).

    If the fitted object has a ``threshold_`` it is used; otherwise the threshold is the
    ``1 - contamination`` quantile of the training scores (PyOD's convention), computed once at fit.
    """

    def __init__(self, estimator=None, contamination: float = 0.1):
        self.estimator = estimator
        self.contamination = contamination

    def _fit_estimator(self, est, X):
        returned = est.fit(X)
        if returned is not est:
            raise DetectorError(
                f"detector {type(est).__name__}: fit() returned {type(returned).__name__}, "
                "expected the detector itself (return self)"
            )
        return returned

    def _raw_score(self, est, X):
        return est.score(X)

    def _threshold(self, est, X) -> float:
        own = getattr(est, "threshold_", None)
        if own is not None:
            return own  # checked by check_threshold
        if not 0.0 < float(self.contamination) < 0.5:
            raise DetectorError(
                f"detector {type(est).__name__}: contamination={self.contamination!r}; expected a number in (0, 0.5)"
            )
        with writes_guard(self.name, "score"):  # the training rows' scores, for the threshold
            raw = est.score(X)
        of = " training rows (scored in fit() to set the threshold)"
        train_scores = check_scores(raw, int(np.shape(X)[0]), type(est).__name__, of)
        return float(np.quantile(train_scores, 1.0 - float(self.contamination)))


def _is_pyod(obj) -> bool:
    if "pyod" not in sys.modules:
        return False
    from pyod.models.base import BaseDetector

    return isinstance(obj, BaseDetector)


def _is_sklearn_outlier(obj) -> bool:
    from sklearn.base import is_outlier_detector

    return isinstance(obj, BaseEstimator) and hasattr(obj, "fit") and is_outlier_detector(obj)


def as_detector(obj):
    """Wrap ``obj`` so that it follows the clad detector interface (see the module docstring).

    Adapters and clad's own detectors are returned unchanged. A class (rather than an instance)
    is a :class:`~clad.errors.CladTypeError`.
    """
    if isinstance(obj, type):
        raise CladTypeError(
            f"as_detector expects a detector instance, got the class {obj.__name__}; call it first"
        )
    if isinstance(obj, DetectorAdapter) or getattr(obj, "_clad_detector", False):
        return obj
    if _is_pyod(obj):
        return PyODDetector(obj)
    if _is_sklearn_outlier(obj):
        return SklearnDetector(obj)
    if callable(getattr(obj, "fit", None)) and callable(getattr(obj, "score", None)):
        return ProtocolDetector(obj)
    if callable(getattr(obj, "learn_one", None)) and callable(getattr(obj, "score_one", None)):
        from .incremental import RiverDetector  # a river anomaly detector (learns row by row)

        return RiverDetector(obj)
    raise CladTypeError(
        f"{type(obj).__name__} is not a detector: expected a PyOD BaseDetector, a scikit-learn outlier "
        "detector (with score_samples), a river anomaly detector (learn_one/score_one), or an object with "
        "fit(X) and score(X) (higher = more anomalous)"
    )
