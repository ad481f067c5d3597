"""What every range metric of one time series shares: its defaults and limits, the checks of its
inputs, the ranges of a label series, the warning of an undefined value and F1's harmonic mean.

The metrics themselves: :mod:`clad.metrics.ranges` (at predictions, oracle forms, chance levels),
:mod:`clad.metrics.vus` and :mod:`clad.metrics.affiliation`.
"""

from __future__ import annotations

import warnings

import numpy as np

#: TSB-AD's defaults: the largest buffer width of VUS, its threshold count, the oracle grid, range-F1's alpha
DEFAULT_WINDOW = 100
DEFAULT_VUS_THRESHOLDS = 250
DEFAULT_ORACLE_THRESHOLDS = 100
DEFAULT_ALPHA = 0.2
#: the largest values these parameters may take (50 x TSB-AD's window; a grid finer than any score
#: resolution): beyond them the memory and time of one evaluation run away with no gain
MAX_WINDOW = 5_000
MAX_THRESHOLDS = 10_000

#: predictions evaluated at once by the vectorised metrics: rows x points kept below this
CHUNK_CELLS = 1 << 22


class RangeMetricWarning(RuntimeWarning):
    """A range metric is undefined on the labels given (it returns NaN); the message says why."""


def undefined(name: str, reason: str) -> float:
    """NaN, with a :class:`RangeMetricWarning` saying why (pointing at the metric's caller)."""
    warnings.warn(
        f"{name}: {reason}; the value is undefined (NaN)", RangeMetricWarning, stacklevel=3
    )
    return float("nan")


def check_int(name: str, key: str, value, low: int, high: int, note: str = "") -> int:
    """``value`` as an integer from ``low`` to ``high``, else a ValueError naming ``name`` and ``key``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not low <= value <= high
    ):
        raise ValueError(
            f"{name}: {key}={value!r}; expected an integer from {low} to {high:,}{note}"
        )
    return int(value)


def check_labels(name: str, y) -> np.ndarray:
    """Labels ``y`` as a boolean array, checked: 1-D, non-empty, 0 or 1 only."""
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"{name}: labels must be a non-empty 1-D array, got shape {y.shape}")
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name}: labels must be 0 (normal) or 1 (anomaly)")
    return y.astype(bool)


def check_series(name: str, y, values, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Labels and one value per point, checked: finite ``"scores"`` as floats, 0/1 ``"predictions"`` as booleans."""
    y = check_labels(name, y)
    values = np.asarray(values)
    if values.shape != y.shape:
        raise ValueError(
            f"{name}: {values.shape[0] if values.ndim else 0} {what} for {y.size} labels; "
            "expected one per point"
        )
    if what == "scores":
        if values.dtype.kind not in "biuf" or not np.isfinite(values).all():
            raise ValueError(f"{name}: scores must be finite numbers")
        return y, values.astype(np.float64, copy=False)
    if values.dtype.kind not in "biuf" or not np.isin(values, (0, 1)).all():
        raise ValueError(f"{name}: predictions must be 0 or 1 (1 = flagged)")
    return y, values.astype(bool)


def anomaly_ranges(y) -> np.ndarray:
    """The ranges of consecutive anomalous points, one row ``(first, last)`` each (inclusive).

    >>> anomaly_ranges([1, 1, 0, 0, 1, 0, 1]).tolist()
    [[0, 1], [4, 4], [6, 6]]
    """
    flags = np.asarray(y) != 0
    edges = np.diff(
        np.concatenate(
            ([0], flags.view(np.int8) if flags.dtype == bool else flags.astype(np.int8), [0])
        )
    )
    return np.stack([np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1], axis=1)


def harmonic_f1(p, r):
    """The harmonic mean of precision ``p`` and recall ``r`` (0 where both are 0), elementwise.

    >>> harmonic_f1([0.5, 0.0], [1.0, 0.0]).tolist()
    [0.6666666666666666, 0.0]
    """
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
