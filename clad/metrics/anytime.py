r"""Anytime metrics (CapyMOA OCLMetrics' ``anytime_*``): from the *anytime* matrix, the test
concepts scored several times while the stream is learned (see
:class:`~clad.scenarios.ConceptAgnostic`, ``anytime_per_concept`` / ``anytime_every``).

The ``anytime`` input is a mapping with ``"R"`` (one row per anytime evaluation ``e``, one column
per test concept, as in R) and ``"task"`` (``k_e``: the index, in the training order, of the
training concept being learned at evaluation ``e``). A test concept ``j`` is *seen* at ``e`` when it
was learned at a step up to the current one, :math:`0 \le t(j) \le k_e` (``learned_at``, as for R).

* :math:`a^\text{any}_\text{all}(e) = \mathrm{mean}_j A_{ej}` (every test concept)
* :math:`a^\text{any}_\text{seen}(e) = \mathrm{mean}_{j: 0 \le t(j) \le k_e} A_{ej}`
* their averages over the evaluations (NaN values left out).

>>> A = {"R": [[0.9, 0.5], [0.8, 0.6], [0.7, 0.9], [0.6, 1.0]], "task": [0, 0, 1, 1]}
>>> anytime_accuracy_seen([[0.8, 0.6], [0.6, 1.0]], A).tolist()
[0.9, 0.8, 0.8, 0.8]
>>> anytime_accuracy_all_avg([[0.8, 0.6], [0.6, 1.0]], A)
0.75
"""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError
from .cells import nanmean, prepare
from .registry import curve_metric, scalar_metric

__all__ = [
    "anytime_accuracy_all",
    "anytime_accuracy_seen",
    "anytime_accuracy_all_avg",
    "anytime_accuracy_seen_avg",
]


def _anytime(anytime, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        A = np.asarray(anytime["R"], dtype=np.float64)
        task = np.asarray(anytime["task"], dtype=np.int64)
    except (KeyError, TypeError, ValueError) as exc:
        raise CladValueError(
            f"anytime must be a mapping with 'R' (evaluations x test concepts) and 'task' "
            f"(one training-concept index per evaluation); {type(exc).__name__}: {exc}"
        ) from None
    if A.ndim != 2 or A.shape[1] != n_cols or task.shape != (A.shape[0],):
        raise CladValueError(
            f"anytime: R of shape {A.shape} and {task.size} task indexes do not fit R's "
            f"{n_cols} test concepts"
        )
    return A, task


@curve_metric("anytime all", name="anytime_accuracy_all", needs=("anytime",))
def anytime_accuracy_all(R, anytime, learned_at=None) -> np.ndarray:
    r"""Per anytime evaluation ``e``: mean of ``A[e, j]`` over every test concept.

    >>> anytime_accuracy_all([[1.0, 0.0]], {"R": [[0.5, 0.7], [0.9, 0.3]], "task": [0, 0]}).tolist()
    [0.6, 0.6]
    """
    R, _ = prepare(R, learned_at)
    A, _ = _anytime(anytime, R.shape[1])
    return np.array([nanmean(row) for row in A])


@curve_metric("anytime seen", name="anytime_accuracy_seen", needs=("anytime",))
def anytime_accuracy_seen(R, anytime, learned_at=None) -> np.ndarray:
    r"""Per anytime evaluation ``e``: mean of ``A[e, j]`` over test concepts learned up to the
    current training concept, :math:`0 \le t(j) \le k_e`.

    >>> anytime_accuracy_seen([[1.0, 0.0]], {"R": [[0.5, 0.7], [0.9, 0.3]], "task": [0, 0]}).tolist()
    [0.5, 0.9]
    """
    R, t = prepare(R, learned_at)
    A, task = _anytime(anytime, R.shape[1])
    return np.array([nanmean(A[e, (t >= 0) & (t <= task[e])]) for e in range(A.shape[0])])


@scalar_metric("Any-all", needs=("anytime",), unit="evaluations")
def anytime_accuracy_all_avg(R, anytime, learned_at=None):
    r"""Average anytime accuracy over all test concepts: mean over evaluations of
    :math:`a^\text{any}_\text{all}(e)`.

    >>> anytime_accuracy_all_avg([[1.0, 0.0]], {"R": [[0.5, 0.7], [0.9, float("nan")]], "task": [0, 0]})
    0.75
    """
    return anytime_accuracy_all(R, anytime, learned_at=learned_at)


@scalar_metric("Any-seen", needs=("anytime",), unit="evaluations")
def anytime_accuracy_seen_avg(R, anytime, learned_at=None):
    r"""Average anytime accuracy over seen concepts: mean over evaluations of
    :math:`a^\text{any}_\text{seen}(e)`.

    >>> anytime_accuracy_seen_avg([[1.0, 0.0]], {"R": [[0.5, 0.7], [0.9, 0.3]], "task": [0, 0]})
    0.7
    """
    return anytime_accuracy_seen(R, anytime, learned_at=learned_at)
