"""Which cells of R a continual metric reads: the shared helpers of :mod:`clad.metrics`.

``learned_at[j]`` is the first step ``t(j)`` at which test concept ``j`` was learned (``-1``:
never). Cells with ``i >= t(j)`` are *seen*, cells with ``i > t(j)`` come *after* learning, cells
with ``i < t(j)`` are *future*. :func:`nanmean` is the one mean every metric uses: NaN left out,
NaN when nothing is left.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np

from ..errors import CladValueError

__all__ = [
    "learned_at",
    "check_concept_names",
    "ConceptNamesWarning",
    "prepare",
    "seen",
    "after",
    "future",
    "diagonal",
    "nanmean",
    "per_concept_vector",
]


class ConceptNamesWarning(UserWarning):
    """No training concept name matches a test concept name: every continual metric is undefined."""


def learned_at(train_names: Sequence[str], test_names: Sequence[str]) -> np.ndarray:
    """First training step at which each test concept was learned (``-1``: never).

    >>> learned_at(["A", "B", "A"], ["A", "B", "C"]).tolist()
    [0, 1, -1]
    """
    first: dict[str, int] = {}
    for step, name in enumerate(train_names):
        first.setdefault(name, step)
    return np.array([first.get(name, -1) for name in test_names], dtype=np.int64)


def check_concept_names(train_names: Sequence[str], test_names: Sequence[str]) -> bool:
    """Warn (:class:`ConceptNamesWarning`, naming both lists) when no training concept name is a
    test concept name; returns whether some name matches.

    Continual metrics pair a test concept with the step that learned it by name: without a match
    every one of them is NaN.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     check_concept_names(["a", "b"], ["x", "y"])
    False
    >>> print(w[0].message)  # doctest: +ELLIPSIS
    no training concept name matches a test concept name: training ['a', 'b'], test ['x', 'y']; ...
    """
    train, test = list(train_names), list(test_names)
    if set(train) & set(test):
        return True
    warnings.warn(
        f"no training concept name matches a test concept name: training {train}, test {test}; every "
        f"continual metric (CA, BWT, FWT, ...) is undefined (NaN). Name each test concept like the training "
        f"concept it evaluates.",
        ConceptNamesWarning,
        stacklevel=2,
    )
    return False


def prepare(R, t) -> tuple[np.ndarray, np.ndarray]:
    """R as a float matrix and ``learned_at`` as integers, checked (default: concept ``j`` learned
    at step ``j``, columns beyond the number of steps never learned)."""
    try:
        R = np.asarray(R, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise CladValueError(
            f"R must be a 2-D matrix of numbers (steps x test concepts); {exc}"
        ) from None
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise CladValueError(
            f"R must be a non-empty 2-D matrix (steps x test concepts), got shape {R.shape}"
        )
    n_steps, n_cols = R.shape
    if t is None:
        t = np.where(np.arange(n_cols) < n_steps, np.arange(n_cols), -1)
    try:
        t = np.asarray(t, dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise CladValueError(f"learned_at must be integers (-1 for never learned); {exc}") from None
    if t.shape != (n_cols,):
        raise CladValueError(
            f"learned_at has shape {t.shape}; expected ({n_cols},), one entry per column of R"
        )
    if (t >= n_steps).any() or (t < -1).any():
        raise CladValueError(
            f"learned_at values must be -1 (never) or a step in 0..{n_steps - 1}, got {t.tolist()}"
        )
    return R, t


def _steps(R: np.ndarray) -> np.ndarray:
    return np.arange(R.shape[0])[:, None]


def seen(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mask of the seen cells ``i >= t(j)`` of learned concepts."""
    return (t >= 0)[None, :] & (_steps(R) >= t[None, :])


def after(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mask of the cells after learning, ``i > t(j)``."""
    return (t >= 0)[None, :] & (_steps(R) > t[None, :])


def future(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mask of the future cells ``i < t(j)`` of concepts learned later."""
    return (t >= 0)[None, :] & (_steps(R) < t[None, :])


def diagonal(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``R[t(j), j]`` per column (NaN where never learned)."""
    out = np.full(R.shape[1], np.nan)
    ok = t >= 0
    out[ok] = R[t[ok], np.nonzero(ok)[0]]
    return out


def nanmean(values) -> float:
    """Mean with NaN left out; NaN when no value is left.

    >>> nanmean([1.0, float("nan"), 2.0]), nanmean([float("nan")])
    (1.5, nan)
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def per_concept_vector(values, R: np.ndarray, name: str) -> np.ndarray:
    """A per-test-concept input (a reference or baseline score per column of R), checked.

    >>> per_concept_vector([0.5, None], np.zeros((1, 2)), "reference").tolist()
    [0.5, nan]
    """
    try:
        v = np.array([np.nan if x is None else x for x in values], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise CladValueError(f"{name} must be one number per test concept; {exc}") from None
    if v.shape != (R.shape[1],):
        raise CladValueError(
            f"{name} has {v.size} values; R has {R.shape[1]} test concepts (one value each)"
        )
    return v
