"""Named simple baselines, run like any method: a claim reads "beats the best baseline by more than
noise" or does not stand (what each is and why: ``docs/guides/thresholds.md``).

* :class:`RandomScores` (``random_scores``): seeded uniform scores in [0, 1). The scores of a row
  set are drawn from a generator seeded by ``random_state``, the number of fits so far and the
  bytes of the rows, so scoring the same rows twice gives the same scores (whatever the threads or
  the order of scoring).

The four simple baselines of Sarfraz et al. (ICML 2024) read a row as a window ``(steps,
channels)`` (a table row: one step), its values first scaled per channel on the training rows:
``scale="standard"`` (the default: ``(x - mean) / std``), ``"minmax"`` (``(x - min) / (max -
min)``) or ``"none"``; a constant channel is only centred:

* :class:`SensorRange` (``sensor_range``): how many values of the window lie outside their channel's
  training range ``[min, max]`` (their ``SensorRangeDeviation`` with ``count_sensors``, over every
  step of the window);
* :class:`WindowL2Norm` (``window_l2_norm``): the L2 norm of the scaled window, flattened (``LNorm``),
  divided by the square root of its number of values (a root mean square: windows of any size compare);
* :class:`NearestNormalDistance` (``nearest_normal_distance``): the Euclidean distance of the scaled
  window to the nearest training window (``NNDistance``);
* :class:`PCAReconstruction` (``pca_reconstruction``): the mean absolute error of the scaled window's
  reconstruction from its first ``n_components`` principal components fitted on the training windows
  (``PCAError``; ``"auto"``: 10 components for at most 50 columns, else 30, and
  ``min(max(2, d // 5), d)`` when that is more than the ``d`` columns).

Every one's own threshold (``threshold_``) is the ``1 - contamination`` quantile of its training
scores (PyOD's convention; 0.1 by default). They read 3-D windows as they are (``_clad_detector``).

>>> import numpy as np
>>> X = np.array([[0.0, 0.0], [1.0, 2.0]])
>>> SensorRange().fit(X).score(np.array([[0.5, 3.0], [2.0, -1.0]])).tolist()
[1.0, 2.0]
>>> WindowL2Norm(scale="minmax").fit(X).score(np.array([[1.0, 2.0]])).tolist()  # scaled to [1, 1]: sqrt(2 / 2)
[1.0]
"""

from __future__ import annotations

import zlib

import numpy as np
from sklearn.base import BaseEstimator

from ..defaults import BASELINES, TIME_SERIES_BASELINES
from ..errors import DetectorError
from .tabular import check_scores

__all__ = [
    "RandomScores",
    "SensorRange",
    "WindowL2Norm",
    "NearestNormalDistance",
    "PCAReconstruction",
    "BASELINES",
    "TIME_SERIES_BASELINES",
]

#: how the values of a window are scaled per channel before a distance, a norm or a PCA
SCALES = ("standard", "minmax", "none")


def _channels(X) -> np.ndarray:
    """Rows as ``(n, steps, channels)``: a table row is one step."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    return X[:, None, :] if X.ndim == 2 else X.reshape(X.shape[0], X.shape[1], -1)


class _Baseline(BaseEstimator):
    _clad_detector = True
    #: a reference point, not a method: a run never asks whether its scores are reversed
    _clad_baseline = True

    def _check_contamination(self):
        if not 0.0 < float(self.contamination) < 0.5:
            raise DetectorError(
                f"detector {type(self).__name__}: contamination={self.contamination!r}; "
                "expected a number in (0, 0.5)"
            )

    def _set_threshold(self, X):
        self._check_contamination()
        scores = self.score(X)
        self.threshold_ = float(np.quantile(scores, 1.0 - float(self.contamination)))
        return self

    def _check_fitted(self, attribute: str = "threshold_"):
        if not hasattr(self, attribute):
            raise DetectorError(f"detector {type(self).__name__}: score() called before fit()")


class _Scaled(_Baseline):
    """A baseline on values scaled per channel to the training range."""

    def _fit_scale(self, X) -> np.ndarray:
        W = _channels(X)
        if W.shape[0] < 1:
            raise DetectorError(f"detector {type(self).__name__}: fit() got no rows")
        if getattr(self, "scale", "none") not in SCALES:
            raise DetectorError(
                f"detector {type(self).__name__}: scale={self.scale!r}; expected one of {', '.join(SCALES)}"
            )
        self.min_ = W.min(axis=(0, 1))
        self.max_ = W.max(axis=(0, 1))
        self.mean_ = W.mean(axis=(0, 1))
        self.std_ = W.std(axis=(0, 1))
        self.n_features_in_ = int(np.prod(np.shape(X)[1:])) if np.ndim(X) > 1 else 1
        return self._scaled(W)

    def fit(self, X, y=None):
        self._fit_scale(X)
        return self._set_threshold(X)

    def _scaled(self, W) -> np.ndarray:
        if self.scale == "none":
            return W
        if self.scale == "minmax":
            span = self.max_ - self.min_
            return (W - self.min_) / np.where(span > 0, span, 1.0)
        return (W - self.mean_) / np.where(self.std_ > 0, self.std_, 1.0)

    def _table(self, X) -> np.ndarray:
        self._check_fitted("min_")
        W = self._scaled(_channels(X))
        return W.reshape(W.shape[0], -1)


class RandomScores(_Baseline):
    """Seeded uniform scores in [0, 1): a detector that knows nothing (see the module).

    >>> det = RandomScores(random_state=0).fit(np.zeros((5, 2)))
    >>> s = det.score(np.ones((3, 2)))
    >>> bool(np.all((0 <= s) & (s < 1))), np.array_equal(s, det.score(np.ones((3, 2))))
    (True, True)
    """

    #: its scores carry no signal by design (the conformance check of "higher = more anomalous" exempts it)
    _clad_no_signal = True

    def __init__(self, random_state=None, contamination: float = 0.1):
        self.random_state = random_state
        self.contamination = contamination

    def fit(self, X, y=None):
        self._check_contamination()
        if self.random_state is not None and (
            isinstance(self.random_state, bool)
            or not isinstance(self.random_state, (int, np.integer))
        ):
            raise DetectorError(
                f"detector RandomScores: random_state={self.random_state!r}; expected an integer or None"
            )
        self.fits_ = getattr(self, "fits_", 0) + 1
        self.n_features_in_ = int(np.prod(np.shape(X)[1:])) if np.ndim(X) > 1 else 1
        # the 1 - contamination quantile of uniform scores
        self.threshold_ = 1.0 - float(self.contamination)
        return self

    def score(self, X) -> np.ndarray:
        self._check_fitted()
        X = np.ascontiguousarray(X)
        key = [
            0 if self.random_state is None else int(self.random_state),
            self.fits_,
            zlib.crc32(X.tobytes()),
            X.shape[0],
        ]
        return np.random.default_rng(np.random.SeedSequence(key)).random(X.shape[0])


class SensorRange(_Scaled):
    """The number of values outside their channel's training range (Sarfraz et al.'s sensor-range deviation)."""

    def __init__(self, contamination: float = 0.1):
        self.contamination = contamination

    scale = "none"  # a count of values outside the range does not depend on a scaling

    def score(self, X) -> np.ndarray:
        self._check_fitted("min_")
        W = _channels(X)
        outside = (W < self.min_) | (W > self.max_)
        return check_scores(outside.sum(axis=(1, 2)).astype(np.float64), W.shape[0], "SensorRange")


class WindowL2Norm(_Scaled):
    """The L2 norm of the window scaled per channel (as a root mean square over its values)."""

    def __init__(self, scale: str = "standard", contamination: float = 0.1):
        self.scale = scale
        self.contamination = contamination

    def score(self, X) -> np.ndarray:
        T = self._table(X)
        return np.sqrt(np.mean(T * T, axis=1))


class NearestNormalDistance(_Scaled):
    """The Euclidean distance to the nearest training window (both scaled per channel)."""

    def __init__(self, scale: str = "standard", contamination: float = 0.1):
        self.scale = scale
        self.contamination = contamination

    def fit(self, X, y=None):
        from sklearn.neighbors import NearestNeighbors

        self.train_ = self._fit_scale(X).reshape(np.shape(X)[0], -1)
        self.index_ = NearestNeighbors(n_neighbors=2, algorithm="auto").fit(self.train_)
        # a training window's own distance is 0: its threshold comes from the distance to its nearest other one
        dist, _ = self.index_.kneighbors(self.train_, n_neighbors=min(2, len(self.train_)))
        self._check_contamination()
        self.threshold_ = float(np.quantile(dist[:, -1], 1.0 - float(self.contamination)))
        return self

    def score(self, X) -> np.ndarray:
        dist, _ = self.index_.kneighbors(self._table(X), n_neighbors=1)
        return dist[:, 0].astype(np.float64)


class PCAReconstruction(_Scaled):
    """The mean absolute reconstruction error from the first principal components of the training windows."""

    def __init__(self, n_components="auto", scale: str = "standard", contamination: float = 0.1):
        self.n_components = n_components
        self.scale = scale
        self.contamination = contamination

    def _components(self, d: int, n: int) -> int:
        k = self.n_components
        if k == "auto":
            k = 10 if d <= 50 else 30
            if k > d:
                k = min(max(2, d // 5), d)
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise DetectorError(
                f'detector PCAReconstruction: n_components={k!r}; expected "auto" or an integer >= 1'
            )
        return int(min(k, d, n))

    def fit(self, X, y=None):
        from sklearn.decomposition import PCA

        T = self._fit_scale(X).reshape(np.shape(X)[0], -1)
        k = self._components(T.shape[1], T.shape[0])
        self.pca_ = PCA(n_components=k, svd_solver="full").fit(T)
        return self._set_threshold(X)

    def score(self, X) -> np.ndarray:
        T = self._table(X)
        rebuilt = self.pca_.inverse_transform(self.pca_.transform(T))
        return np.mean(np.abs(T - rebuilt), axis=1)
