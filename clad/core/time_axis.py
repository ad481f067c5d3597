"""The time points behind a concept's rows: which series (channels) it holds, their point labels,
and how its rows (time steps or windows) map back to points.

A time-series concept is one or more series (the channels of a telemetry subsystem, say)
concatenated in order. Its rows are either the time steps themselves (``window = 1``) or windows
of ``window`` steps taken every ``stride`` steps within each series (never across two series). The
range metrics (:mod:`clad.metrics.ranges`) are computed on the points, so a window's score is
mapped back to the points it covers:

* ``rule = "max"`` (default): a point takes the largest score of the windows covering it, so it
  is flagged when any window holding it is flagged (``score > threshold``);
* ``rule = "mean"``: the mean score of the windows covering it.

A point that no window covers (the last ``(T - window) % stride`` points of a series, or the
gaps when ``stride > window``) takes the score of the last window that starts at or before it.
A series shorter than ``window`` gives no window and is not on the axis.

>>> import numpy as np
>>> axis = TimeAxis(("a",), (6,), np.array([0, 0, 0, 1, 1, 0]), window=3, stride=1)
>>> axis.n_rows, axis.points(np.array([0.1, 0.5, 0.9, 0.2])).tolist()
(4, [0.1, 0.5, 0.9, 0.9, 0.9, 0.2])
>>> TimeAxis(("a",), (6,), np.zeros(6), window=3, stride=1, rule="mean").points(np.array([0.0, 3.0, 6.0, 3.0])).tolist()
[0.0, 1.5, 3.0, 4.0, 4.5, 3.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ["TimeAxis", "POINT_RULES"]

#: how a point's score comes from the scores of the windows covering it
POINT_RULES = ("max", "mean")


def _rows_of(length: int, window: int, stride: int) -> int:
    return 0 if length < window else (length - window) // stride + 1


@dataclass(frozen=True, eq=False)
class TimeAxis:
    """Series names, their lengths in points, the point labels ``y`` (all series concatenated),
    and the windows (``window``, ``stride``; 1 and 1 when a row is a point) with the ``rule``
    mapping window scores to points (see the module docstring)."""

    series: tuple[str, ...]
    lengths: tuple[int, ...]
    y: np.ndarray
    window: int = 1
    stride: int = 1
    rule: str = "max"

    def __post_init__(self):
        series = tuple(str(s) for s in self.series)
        lengths = tuple(int(k) for k in self.lengths)
        if not series or len(series) != len(lengths):
            raise DataError(
                f"time axis: {len(series)} series names for {len(lengths)} lengths; expected one length "
                "per series, at least one series"
            )
        if self.rule not in POINT_RULES:
            raise DataError(
                f"time axis: rule={self.rule!r}; expected one of {', '.join(POINT_RULES)}"
            )
        if int(self.window) < 1 or int(self.stride) < 1:
            raise DataError(
                f"time axis: window={self.window!r}, stride={self.stride!r}; expected integers >= 1"
            )
        if min(lengths) < int(self.window):
            raise DataError(
                f"time axis: a series of {min(lengths)} points is shorter than window={self.window}; "
                "leave it out (it gives no window)"
            )
        y = np.asarray(self.y).astype(np.int8)
        if y.ndim != 1 or y.size != sum(lengths):
            raise DataError(f"time axis: {y.size} point labels for series of {sum(lengths)} points")
        y.flags.writeable = False
        object.__setattr__(self, "series", series)
        object.__setattr__(self, "lengths", lengths)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "window", int(self.window))
        object.__setattr__(self, "stride", int(self.stride))

    @property
    def rows_per_series(self) -> tuple[int, ...]:
        """The rows (windows, or points) each series gives."""
        return tuple(_rows_of(k, self.window, self.stride) for k in self.lengths)

    @property
    def n_rows(self) -> int:
        return sum(self.rows_per_series)

    def row_bounds(self) -> np.ndarray:
        """Row offsets of the series: series ``k`` is rows ``[b[k], b[k + 1])``."""
        return np.concatenate(([0], np.cumsum(self.rows_per_series)))

    def point_bounds(self) -> np.ndarray:
        """Point offsets of the series: series ``k`` is points ``[b[k], b[k + 1])``."""
        return np.concatenate(([0], np.cumsum(self.lengths)))

    def values(self, X, feature: int = 0) -> np.ndarray:
        """The series' values of one ``feature`` at every point, read back from the rows ``X``
        (2-D steps, or 3-D windows); NaN at a point no window covers."""
        X = np.asarray(X)
        if X.ndim == 2:
            return X[:, feature].astype(np.float64)
        rows, points = self.row_bounds(), self.point_bounds()
        out = np.full(points[-1], np.nan)
        for k, length in enumerate(self.lengths):
            t = np.arange(length)
            i = np.minimum(t // self.stride, rows[k + 1] - rows[k] - 1)
            offset = t - i * self.stride
            ok = offset < self.window
            out[points[k] + t[ok]] = X[rows[k] + i[ok], offset[ok], feature]
        return out

    def points(self, row_scores) -> np.ndarray:
        """Scores of the points from the scores of the rows (one per window, series after series)."""
        row_scores = np.asarray(row_scores, dtype=np.float64)
        if row_scores.shape != (self.n_rows,):
            raise DataError(
                f"time axis: {row_scores.shape[0] if row_scores.ndim else 0} row scores for "
                f"{self.n_rows} rows"
            )
        if self.window == 1 and self.stride == 1:
            return row_scores
        rows, points = self.row_bounds(), self.point_bounds()
        out = np.empty(points[-1])
        w, s = self.window, self.stride
        for k, length in enumerate(self.lengths):
            scores = row_scores[rows[k] : rows[k + 1]]
            n = scores.size
            t = np.arange(length)
            latest = t // s  # the last window starting at or before t (if it exists)
            total = np.zeros(length)
            count = np.zeros(length)
            best = np.full(length, -np.inf)
            for back in range(-(-w // s)):
                i = latest - back
                covers = (i >= 0) & (i < n) & (i * s + w > t)
                if not covers.any():
                    continue
                v = scores[np.clip(i, 0, n - 1)]
                best = np.where(covers, np.maximum(best, v), best)
                total += np.where(covers, v, 0.0)
                count += covers
            value = best if self.rule == "max" else np.divide(total, np.maximum(count, 1))
            out[points[k] : points[k + 1]] = np.where(
                count > 0, value, scores[np.minimum(latest, n - 1)]
            )
        return out
