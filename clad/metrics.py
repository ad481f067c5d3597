r"""Continual metrics: pure functions of the matrix R.

``R[i, j]`` is a base metric (ROC-AUC, F1, average precision) on test concept ``j`` after training
step ``i``: rows are training steps, columns test concepts.

Which cells count is decided by ``learned_at``: ``learned_at[j]`` is the first step ``t(j)`` at
which test concept ``j`` was learned, or ``-1`` if it never was. Cells with ``i >= t(j)`` are
*seen*, cells with ``i < t(j)`` are *future*. By default (the standard case: concept ``j`` learned at
step ``j``) ``learned_at = [0, 1, ..., N-1]`` and columns beyond the number of rows are never
learned. :func:`learned_at` builds it from concept names for the general case (recurring concepts,
other orders, test concepts never trained). Never-learned columns are left out of every metric
here except :func:`accuracy_all` and :func:`unlearned_average`.

**NaN cells** (undefined base metric, e.g. ROC-AUC on a single-class test concept) are left out of
every mean, never propagated; a mean over no cell is NaN. :func:`summarize` also reports how many
cells each metric left out.

The formulas (the documented pyCLAD formulation; N steps, standard case):

* continual average  :math:`CA = \mathrm{mean}_{i \ge j} R_{ij}`  (N(N+1)/2 cells)
* backward transfer  :math:`BWT = \mathrm{mean}_{i > j} (R_{ij} - R_{jj})`  (N(N-1)/2 cells);
  negative = forgetting. (pyCLAD's *code* averages :math:`R_{ij} - R_{i-1,j}` instead; clad follows
  the documentation.)
* forward transfer   :math:`FWT = \mathrm{mean}_{i < j} R_{ij}`  (N(N-1)/2 cells)

>>> import numpy as np
>>> R = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=float)
>>> continual_average(R), backward_transfer(R), forward_transfer(R)
(5.666666666666667, 4.0, 3.6666666666666665)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import CladValueError

__all__ = [
    "learned_at",
    "continual_average",
    "backward_transfer",
    "forward_transfer",
    "final_average",
    "learning_average",
    "forgetting",
    "gem_backward_transfer",
    "accuracy_seen",
    "accuracy_all",
    "unlearned_average",
    "summarize",
    "SCALAR_METRICS",
]


def learned_at(train_names: Sequence[str], test_names: Sequence[str]) -> np.ndarray:
    """First training step at which each test concept was learned (``-1``: never).

    >>> learned_at(["A", "B", "A"], ["A", "B", "C"]).tolist()
    [0, 1, -1]
    """
    first: dict[str, int] = {}
    for step, name in enumerate(train_names):
        first.setdefault(name, step)
    return np.array([first.get(name, -1) for name in test_names], dtype=np.int64)


def _prepare(R, t) -> tuple[np.ndarray, np.ndarray]:
    try:
        R = np.asarray(R, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise CladValueError(f"R must be a 2-D matrix of numbers (steps x test concepts); {exc}") from None
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise CladValueError(f"R must be a non-empty 2-D matrix (steps x test concepts), got shape {R.shape}")
    n_steps, n_cols = R.shape
    if t is None:
        t = np.where(np.arange(n_cols) < n_steps, np.arange(n_cols), -1)
    try:
        t = np.asarray(t, dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise CladValueError(f"learned_at must be integers (-1 for never learned); {exc}") from None
    if t.shape != (n_cols,):
        raise CladValueError(f"learned_at has shape {t.shape}; expected ({n_cols},), one entry per column of R")
    if (t >= n_steps).any() or (t < -1).any():
        raise CladValueError(f"learned_at values must be -1 (never) or a step in 0..{n_steps - 1}, got {t.tolist()}")
    return R, t


def _masks(R: np.ndarray, t: np.ndarray):
    steps = np.arange(R.shape[0])[:, None]
    learned = (t >= 0)[None, :]
    seen = learned & (steps >= t[None, :])
    after = learned & (steps > t[None, :])
    future = learned & (steps < t[None, :])
    return seen, after, future


def _mean(values: np.ndarray) -> float:
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def _diag(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``R[t(j), j]`` per column (NaN where never learned)."""
    out = np.full(R.shape[1], np.nan)
    ok = t >= 0
    out[ok] = R[t[ok], np.nonzero(ok)[0]]
    return out


def continual_average(R, learned_at=None) -> float:
    """Mean of ``R[i, j]`` over seen cells ``i >= t(j)`` (NaN cells left out).

    >>> continual_average([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    0.7833333333333333
    """
    R, t = _prepare(R, learned_at)
    seen, _, _ = _masks(R, t)
    return _mean(R[seen])


def _bwt_diffs(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    _, after, _ = _masks(R, t)
    return (R - _diag(R, t)[None, :])[after]


def backward_transfer(R, learned_at=None) -> float:
    """Mean over ``i > t(j)`` of ``R[i, j] - R[t(j), j]``; negative means forgetting.

    NaN when no such cell exists (a single step).

    >>> round(backward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]), 6)
    -0.183333
    >>> backward_transfer([[0.8]])
    nan
    """
    R, t = _prepare(R, learned_at)
    return _mean(_bwt_diffs(R, t))


def forward_transfer(R, learned_at=None) -> float:
    """Mean of ``R[i, j]`` over future cells ``i < t(j)`` (zero-shot performance).

    >>> forward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    0.5
    """
    R, t = _prepare(R, learned_at)
    _, _, future = _masks(R, t)
    return _mean(R[future])


def final_average(R, learned_at=None) -> float:
    """Mean of the last row over learned concepts: ``mean_j R[N-1, j]`` for ``t(j) >= 0``.

    >>> final_average([[0.9, 0.5], [0.7, 0.8]])
    0.75
    """
    R, t = _prepare(R, learned_at)
    return _mean(R[-1, t >= 0])


def learning_average(R, learned_at=None) -> float:
    """Mean of ``R[t(j), j]``: each concept right after it was first learned (the diagonal).

    >>> learning_average([[0.9, 0.5], [0.7, 0.8]])
    0.8500000000000001
    """
    R, t = _prepare(R, learned_at)
    return _mean(_diag(R, t))


def _forgetting_per_concept(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    last = R.shape[0] - 1
    out = np.full(R.shape[1], np.nan)
    for j in np.nonzero((t >= 0) & (t < last))[0]:
        earlier = R[t[j]:last, j]
        earlier = earlier[~np.isnan(earlier)]
        if earlier.size and not np.isnan(R[last, j]):
            out[j] = earlier.max() - R[last, j]
    return out


def forgetting(R, learned_at=None) -> float:
    """Chaudhry et al.'s forgetting: mean over concepts learned before the last step of
    ``max_{t(j) <= l < N-1} R[l, j] - R[N-1, j]`` (positive = forgotten).

    >>> forgetting([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    0.175
    """
    R, t = _prepare(R, learned_at)
    return _mean(_forgetting_per_concept(R, t))


def gem_backward_transfer(R, learned_at=None) -> float:
    """GEM's BWT (Lopez-Paz & Ranzato): mean over concepts learned before the last step of
    ``R[N-1, j] - R[t(j), j]``.

    >>> gem_backward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    -0.175
    """
    R, t = _prepare(R, learned_at)
    last = R.shape[0] - 1
    ok = (t >= 0) & (t < last)
    return _mean(R[last, ok] - _diag(R, t)[ok])


def accuracy_seen(R, learned_at=None) -> np.ndarray:
    """Per step ``i``: mean of ``R[i, j]`` over concepts already learned (``t(j) <= i``).

    >>> accuracy_seen([[0.9, 0.5], [0.7, 0.8]]).tolist()
    [0.9, 0.75]
    """
    R, t = _prepare(R, learned_at)
    seen, _, _ = _masks(R, t)
    return np.array([_mean(R[i, seen[i]]) for i in range(R.shape[0])])


def accuracy_all(R, learned_at=None) -> np.ndarray:
    """Per step ``i``: mean of ``R[i, j]`` over every test concept (learned or not).

    >>> accuracy_all([[0.9, 0.5], [0.7, 0.8]]).tolist()
    [0.7, 0.75]
    """
    R, _ = _prepare(R, learned_at)
    return np.array([_mean(R[i]) for i in range(R.shape[0])])


def unlearned_average(R, learned_at=None) -> float:
    """Mean over all steps of the columns of test concepts that were never learned (NaN if none).

    >>> unlearned_average([[0.9, 0.5, 0.3], [0.7, 0.8, 0.5]])
    0.4
    """
    R, t = _prepare(R, learned_at)
    return _mean(R[:, t < 0])


#: scalar metrics computed by :func:`summarize`, in order
SCALAR_METRICS = {
    "continual_average": continual_average,
    "backward_transfer": backward_transfer,
    "forward_transfer": forward_transfer,
    "final_average": final_average,
    "learning_average": learning_average,
    "forgetting": forgetting,
    "gem_backward_transfer": gem_backward_transfer,
    "unlearned_average": unlearned_average,
}


def summarize(R, learned_at=None) -> dict:
    """Every scalar metric, the per-step curves, and ``left_out``: how many NaN cells each of
    CA, BWT and FWT left out of its mean.

    >>> s = summarize([[1.0, float("nan")], [0.5, 0.7]])
    >>> s["continual_average"], s["forward_transfer"], s["left_out"]["forward_transfer"]
    (0.7333333333333334, nan, 1)
    """
    R, t = _prepare(R, learned_at)
    out: dict = {name: fn(R, t) for name, fn in SCALAR_METRICS.items()}
    out["accuracy_seen"] = accuracy_seen(R, t).tolist()
    out["accuracy_all"] = accuracy_all(R, t).tolist()
    seen, _, future = _masks(R, t)
    out["left_out"] = {
        "continual_average": int(np.isnan(R[seen]).sum()),
        "backward_transfer": int(np.isnan(_bwt_diffs(R, t)).sum()),
        "forward_transfer": int(np.isnan(R[future]).sum()),
    }
    return out
