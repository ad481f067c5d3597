"""Incremental detectors: estimators that learn batch after batch without starting over.

Two adapters, both built on :class:`IncrementalDetector`, give such estimators clad's detector
interface plus ``partial_fit(X)``: :class:`RiverDetector` (any river anomaly detector; a row goes
to river as ``{column index: value}``) and :class:`~clad.detectors.partial_fit.PartialFitDetector`
(any estimator with ``partial_fit``). ``fit(X)`` starts from a fresh copy of the estimator,
``partial_fit(X)`` goes on learning (``fit`` if never fitted). ``threshold_`` is the estimator's
own when the adapter has one (scikit-learn's ``offset_``), else the ``1 - contamination`` quantile
of the scores of the rows just learned, scored after learning. Windows (3-D rows) are flattened
(:func:`~clad.detectors.tabular.as_table`). ``random_state`` becomes the ``seed`` of every river
estimator in a pipeline that takes one (or the wrapped estimator's ``random_state``), so the same
seed gives the same scores.

:func:`~clad.detectors.partial_fit.as_incremental` turns a detector into one of these, or says why
it cannot; the ``incremental`` strategy (:class:`clad.strategies.Incremental`) uses it.

>>> import numpy as np
>>> det = half_space_trees(n_trees=5, height=4, window_size=50, random_state=0)
>>> X = np.random.default_rng(0).uniform(size=(200, 2))
>>> det = det.fit(X[:100]).partial_fit(X[100:])
>>> det.n_rows_learned_, bool(det.score(np.array([[5.0, 5.0]]))[0] >= det.score(np.array([[0.5, 0.5]]))[0])
(200, True)
"""

from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator

from ..errors import CladValueError, DetectorError
from ..validation import COUNT, SEED, Interval, Real, declare
from .tabular import as_table, check_scores

__all__ = [
    "IncrementalDetector",
    "RiverDetector",
    "is_river",
    "half_space_trees",
    "river_one_class_svm",
]


def is_river(obj) -> bool:
    """Whether ``obj`` is a river-style anomaly detector (``learn_one`` and ``score_one``)."""
    return callable(getattr(obj, "learn_one", None)) and callable(getattr(obj, "score_one", None))


def _check_contamination(who: str, value) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0.0 < float(value) < 0.5
    ):
        raise CladValueError(f"{who}: contamination={value!r}; expected a number in (0, 0.5)")
    return float(value)


class IncrementalDetector(BaseEstimator):
    """What both adapters share: fit from fresh / go on learning, the threshold, the checks."""

    _clad_detector = True

    def __init__(self, estimator=None, contamination: float = 0.1, random_state: int | None = None):
        self.estimator = estimator
        self.contamination = contamination
        self.random_state = random_state

    @property
    def name(self) -> str:
        return type(self.estimator).__name__

    def _learn(self, X, first: bool) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _raw_score(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _own_threshold(self, X) -> float | None:
        return None

    def _fresh(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _after_learning(self, X) -> None:
        own = self._own_threshold(X)
        if own is None:
            q = 1.0 - _check_contamination(self.name, self.contamination)
            own = float(np.quantile(self.score(X), q))
        self.threshold_ = float(own)
        self.n_rows_learned_ = getattr(self, "n_rows_learned_", 0) + int(X.shape[0])

    def _table(self, X) -> np.ndarray:
        X = np.asarray(as_table(X), dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise CladValueError(
                f"{self.name}: expected a non-empty 2-D array (rows x features), got shape {X.shape}"
            )
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise CladValueError(
                f"{self.name}: X has {X.shape[1]} features; the detector learned {self.n_features_in_}"
            )
        return X

    def fit(self, X, y=None):
        """Learn ``X`` with a fresh copy of the estimator."""
        if self.estimator is None:
            raise CladValueError(f"{type(self).__name__}: estimator=None; give an estimator")
        _check_contamination(self.name, self.contamination)
        for attr in ("n_features_in_", "n_rows_learned_"):
            self.__dict__.pop(attr, None)
        X = self._table(X)
        self.estimator_ = self._fresh()
        self.n_features_in_ = int(X.shape[1])
        self._learn(X, first=True)
        self._after_learning(X)
        return self

    def partial_fit(self, X, y=None):
        """Go on learning with ``X`` (``fit`` if never fitted); ``threshold_`` is set again."""
        if not hasattr(self, "estimator_"):
            return self.fit(X)
        X = self._table(X)
        self._learn(X, first=False)
        self._after_learning(X)
        return self

    def score(self, X) -> np.ndarray:
        if not hasattr(self, "estimator_"):
            raise DetectorError(f"detector {self.name}: score() called before fit()")
        X = self._table(X)
        return check_scores(self._raw_score(X), X.shape[0], self.name)


def _seeded_params(est, seed: int) -> dict:
    """river ``clone`` parameters giving every estimator in ``est`` (a pipeline too) ``seed``."""
    params = est._get_params() if callable(getattr(est, "_get_params", None)) else {}
    out = {}
    for key, value in params.items():
        if key == "seed":
            out[key] = int(seed)
        elif isinstance(value, dict) and "seed" in value:
            out[key] = {"seed": int(seed)}
    return out


def _has_learn_many(est) -> bool:
    """Whether river ``est`` (every step, for a pipeline) learns a whole batch at once."""
    steps = getattr(est, "steps", None)
    parts = list(steps.values()) if isinstance(steps, dict) else [est]
    return all(callable(getattr(p, "learn_many", None)) for p in parts)


class RiverDetector(IncrementalDetector):
    """A river anomaly detector as an incremental clad detector (see the module docstring).

    Parameters
    ----------
    estimator : river anomaly detector (or a river pipeline ending in one), never fitted itself
    contamination : float in (0, 0.5)
        ``threshold_`` is the ``1 - contamination`` quantile of the rows just learned.
    higher_is_normal : bool, default False
        Negate river's score (for detectors whose score is larger for normal rows, such as
        river's ``OneClassSVM``, whose score is a decision function).
    use_learn_many : bool, default True
        Learn a batch with ``learn_many`` (a pandas DataFrame) when the estimator has it.
    random_state : int or None
        The ``seed`` of every estimator in the pipeline that takes one.
    """

    def __init__(
        self,
        estimator=None,
        contamination: float = 0.1,
        higher_is_normal: bool = False,
        use_learn_many: bool = True,
        random_state: int | None = None,
    ):
        super().__init__(estimator, contamination, random_state)
        self.higher_is_normal = higher_is_normal
        self.use_learn_many = use_learn_many

    @property
    def name(self) -> str:
        steps = getattr(self.estimator, "steps", None)  # a river pipeline: its last step
        return str(list(steps)[-1]) if isinstance(steps, dict) and steps else super().name

    def _fresh(self):
        if not is_river(self.estimator):
            raise CladValueError(
                f"RiverDetector: {type(self.estimator).__name__} has no learn_one/score_one; "
                "expected a river anomaly detector"
            )
        if self.random_state is not None:
            return self.estimator.clone(_seeded_params(self.estimator, self.random_state))
        return self.estimator.clone()

    def _learn(self, X, first: bool) -> None:
        est = self.estimator_
        if self.use_learn_many and _has_learn_many(est):
            import pandas as pd

            est.learn_many(pd.DataFrame(X))
            return
        for row in X.tolist():
            est.learn_one(dict(enumerate(row)))

    def _raw_score(self, X) -> np.ndarray:
        score_one = self.estimator_.score_one
        rows = (score_one(dict(enumerate(row))) for row in X.tolist())
        s = np.fromiter(rows, dtype=np.float64, count=X.shape[0])
        return -s if self.higher_is_normal else s


_CONTAMINATION = [Interval(Real, 0.0, 0.5, closed="neither")]


@declare(
    {
        "n_trees": [COUNT],
        "height": [COUNT],
        "window_size": [COUNT],
        "scale": ["boolean"],
        "contamination": _CONTAMINATION,
        "random_state": [None, SEED],
    }
)
def half_space_trees(
    n_trees: int = 10,
    height: int = 8,
    window_size: int = 250,
    scale: bool = True,
    contamination: float = 0.1,
    random_state: int | None = None,
) -> RiverDetector:
    """river's ``HalfSpaceTrees`` (Tan et al. 2011) behind a running ``MinMaxScaler`` (``scale``): the
    trees expect features in [0, 1]. Registered as ``half_space_trees``."""
    from river import anomaly, preprocessing

    model = anomaly.HalfSpaceTrees(n_trees=n_trees, height=height, window_size=window_size)
    return RiverDetector(
        preprocessing.MinMaxScaler() | model if scale else model,
        contamination=contamination,
        random_state=random_state,
    )


@declare(
    {
        "nu": [Interval(Real, 0.0, 1.0, closed="right")],
        "n_components": [COUNT],
        "gamma": [Interval(Real, 0.0, None, closed="neither")],
        "contamination": _CONTAMINATION,
        "random_state": [None, SEED],
    }
)
def river_one_class_svm(
    nu: float = 0.1,
    n_components: int = 100,
    gamma: float = 1.0,
    contamination: float = 0.1,
    random_state: int | None = None,
) -> RiverDetector:
    """river's online ``OneClassSVM`` on random Fourier features of standardised rows
    (``StandardScaler | RBFSampler | OneClassSVM``, as river's documentation advises). Its score is
    a decision function, larger inside the learned region, so clad negates it. Registered as
    ``river_one_class_svm``."""
    from river import anomaly, feature_extraction, preprocessing

    model = (
        preprocessing.StandardScaler()
        | feature_extraction.RBFSampler(gamma=gamma, n_components=n_components)
        | anomaly.OneClassSVM(nu=nu)
    )
    return RiverDetector(
        model, contamination=contamination, higher_is_normal=True, random_state=random_state
    )
