"""NAB's windowed Gaussian detector: the tail probability of each value under a Gaussian fitted to
a sliding window of the values before it.

The detector learns while it scores, as NAB's detectors do: :meth:`WindowedGaussian.score` reads
the rows of its call in order (clad scores a test concept in one call, rows in their order), scores
each value ``1 - Q(|x - mean| / std)`` (``Q`` the standard normal tail probability) under the mean
and standard deviation of the window so far, then adds the value to the window. The window grows
to ``window_size`` values (its statistics updated after every value, by Welford's running mean
and variance), then slides forward ``step_size`` values at a time (updated after each step). A standard deviation of 0 is taken as
1e-6; the first value scores 0. ``fit`` learns nothing the scores use (the training rows of NAB's
protocol are the probationary prefix of the very series that is then scored whole); its
``threshold_`` is ``threshold``, NAB's tuned detection threshold (1.0 for every profile), and NAB
detects at ``score >= threshold``, so the NAB base metrics take it as their parameter.

``warm_start=True`` (not NAB's) primes the window with the last ``window_size`` training values:
the model then carries what it saw in training into every series it scores (in a continual
scenario, another series' values), scoring a series as if it followed them.

``significant_digits`` (default 12) rounds every score as NAB's published results files hold them
(``%.12g``, what Python 2 printed): its scoreboard was computed from those files, and at a threshold
of 1.0 a score of 0.9999999999998 is a detection there. None keeps full precision.

>>> det = WindowedGaussian(window_size=4, step_size=2).fit(np.zeros((3, 1)))
>>> det.score(np.array([[1.0], [1.0], [1.0], [50.0]])).round(3).tolist()
[0.0, 0.5, 0.5, 1.0]
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import DetectorError
from ..validation import Interval
from .tabular import as_table

__all__ = ["WindowedGaussian", "tail_probability"]


def tail_probability(x: float, mean: float, std: float) -> float:
    """``P(X > x)`` of the normal ``(mean, std)``, reflected about the mean below it (NAB's Q function)."""
    if x < mean:
        x = 2 * mean - x
    return 0.5 * math.erfc((x - mean) / std / math.sqrt(2))


class WindowedGaussian(BaseEstimator):
    """NAB's windowed Gaussian detector (module docstring); univariate: column ``column`` of the rows."""

    _parameter_constraints = {
        "window_size": [Interval(Integral, 1, None, closed="left")],
        "step_size": [Interval(Integral, 1, None, closed="left")],
        "threshold": [Interval(Real, 0.0, 1.0, closed="both")],
        "column": [Interval(Integral, 0, None, closed="left")],
        "significant_digits": [None, Interval(Integral, 1, 17, closed="both")],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        window_size: int = 6400,
        step_size: int = 100,
        threshold: float = 1.0,
        column: int = 0,
        significant_digits: int | None = 12,
        warm_start: bool = False,
    ):
        self.significant_digits = significant_digits
        self.warm_start = warm_start
        self.window_size = window_size
        self.step_size = step_size
        self.threshold = threshold
        self.column = column

    def fit(self, X, y=None):
        X = as_table(X)
        if not 0 <= self.column < np.shape(X)[1]:
            raise DetectorError(
                f"detector WindowedGaussian: column={self.column!r}; the rows have {np.shape(X)[1]} "
                "column(s)"
            )
        self.n_features_in_ = int(np.shape(X)[1])
        self.threshold_ = float(self.threshold)
        column = np.asarray(X, dtype=np.float64)[:, self.column]
        self.prefix_ = column[-int(self.window_size) :].copy() if self.warm_start else np.empty(0)
        return self

    def score(self, X) -> np.ndarray:
        if not hasattr(self, "threshold_"):
            raise DetectorError("detector WindowedGaussian: score() called before fit()")
        column = np.asarray(as_table(X), dtype=np.float64)[:, self.column]
        values = np.concatenate([self.prefix_, column])
        out = np.zeros(values.size)
        size, step = int(self.window_size), int(self.step_size)
        # while the window grows: its running mean and sum of squared deviations
        mean, m2 = 0.0, 0.0
        for i, v in enumerate(values[:size]):
            if i:
                std = math.sqrt(m2 / i)
                out[i] = 1.0 - tail_probability(float(v), mean, std if std != 0.0 else 0.000001)
            delta = float(v) - mean
            mean += delta / (i + 1)
            m2 += delta * (float(v) - mean)
        # then the window slides forward step by step, its statistics updated after each
        if values.size > size:
            mean, std = self._stats(values[:size])
            for start in range(size, values.size, step):
                block = values[start : start + step]
                out[start : start + block.size] = [
                    1.0 - tail_probability(float(v), mean, std) for v in block
                ]
                if block.size == step:
                    mean, std = self._stats(values[start + step - size : start + step])
        out = out[self.prefix_.size :]  # the primed window's own scores are not this call's
        if self.significant_digits is not None:
            digits = int(self.significant_digits)
            out = np.array([float(f"{v:.{digits}g}") for v in out])
        return out

    @staticmethod
    def _stats(values: np.ndarray) -> tuple[float, float]:
        std = float(np.std(values))
        return float(np.mean(values)), (std if std != 0.0 else 0.000001)
