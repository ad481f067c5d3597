r"""The scalar continual metrics: each one function (returning the terms it averages) and one
declaration (:func:`~clad.metrics.registry.scalar_metric`). The public function returns the mean
of the terms, NaN terms left out.

Orientation: ``R[i, j]`` = base metric on test concept ``j`` after training step ``i`` (N steps);
``t(j)`` = first step that learned concept ``j`` (``learned_at``, ``-1``: never). In the standard
case ``t(j) = j``. Never-learned concepts are left out of every metric here except
:func:`unlearned_average` and :func:`accuracy_all_average`.

Variants the literature gives the same name are separate functions here: ``backward_transfer``
(pyCLAD's documentation, CapyMOA), ``pyclad_code_backward_transfer`` (pyCLAD's code),
``gem_backward_transfer`` (GEM, Mammoth, Avalanche's BWT); ``forward_transfer`` (zero-shot: pyCLAD,
CapyMOA), ``gem_forward_transfer`` (GEM, Mammoth, Avalanche: against an untrained baseline),
``reference_forward_transfer`` (against a reference model). docs/guides/metrics.md maps them.
"""

from __future__ import annotations

import warnings

import numpy as np

from .cells import after, diagonal, future, per_concept_vector, prepare, seen
from .curves import accuracy_all, accuracy_seen
from .per_concept import forgetting_per_concept
from .registry import scalar_metric

__all__ = [
    "continual_average",
    "backward_transfer",
    "forward_transfer",
    "final_average",
    "learning_average",
    "forgetting",
    "gem_backward_transfer",
    "pyclad_code_backward_transfer",
    "gem_forward_transfer",
    "unlearned_average",
    "memory_stability",
    "accuracy_seen_average",
    "accuracy_all_average",
    "intransigence",
    "reference_forward_transfer",
]


def _before_last(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Concepts learned before the last step (those that can have been forgotten)."""
    return (t >= 0) & (t < R.shape[0] - 1)


@scalar_metric("CA", unit="cells", headline=True)
def continual_average(R, learned_at=None):
    r"""Continual average: mean of ``R[i, j]`` over seen cells ``i >= t(j)``.

    :math:`CA = \mathrm{mean}_{i \ge j} R_{ij}` (N(N+1)/2 cells in the standard case).

    >>> continual_average([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    0.7833333333333333
    """
    R, t = prepare(R, learned_at)
    return R[seen(R, t)]


@scalar_metric("BWT", unit="differences", scale="difference", headline=True)
def backward_transfer(R, learned_at=None):
    r"""Backward transfer (pyCLAD's documentation): mean over ``i > t(j)`` of ``R[i, j] - R[t(j), j]``;
    negative means forgetting.

    :math:`BWT = \mathrm{mean}_{i > j} (R_{ij} - R_{jj})` (N(N-1)/2 differences). NaN with one step.

    >>> round(backward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]), 6)
    -0.183333
    >>> backward_transfer([[0.8]])
    nan
    """
    R, t = prepare(R, learned_at)
    return (R - diagonal(R, t)[None, :])[after(R, t)]


@scalar_metric("FWT", unit="cells", headline=True)
def forward_transfer(R, learned_at=None):
    r"""Forward transfer, zero-shot: mean of ``R[i, j]`` over future cells ``i < t(j)``.

    :math:`FWT = \mathrm{mean}_{i < j} R_{ij}` (N(N-1)/2 cells).

    >>> forward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    0.5
    """
    R, t = prepare(R, learned_at)
    return R[future(R, t)]


@scalar_metric("Final", unit="concepts")
def final_average(R, learned_at=None):
    r"""Final average: mean of the last row over learned concepts, :math:`\mathrm{mean}_j R_{N-1,j}`.

    >>> final_average([[0.9, 0.5], [0.7, 0.8]])
    0.75
    """
    R, t = prepare(R, learned_at)
    return R[-1, t >= 0]


@scalar_metric("Learning", unit="concepts")
def learning_average(R, learned_at=None):
    r"""Learning average: mean of ``R[t(j), j]``, each concept right after it was first learned.

    >>> learning_average([[0.9, 0.5], [0.7, 0.8]])
    0.8500000000000001
    """
    R, t = prepare(R, learned_at)
    return diagonal(R, t)[t >= 0]


@scalar_metric("Forgetting", lower_is_better=True, unit="concepts", scale="difference")
def forgetting(R, learned_at=None):
    r"""Forgetting (Chaudhry et al.): mean over concepts learned before the last step of
    :math:`\max_{t(j) \le l < N-1} R_{lj} - R_{N-1,j}` (positive = forgotten; lower is better).

    >>> forgetting([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    0.175
    """
    R, t = prepare(R, learned_at)
    return forgetting_per_concept(R, t)[_before_last(R, t)]


@scalar_metric("GEM-BWT", unit="concepts", scale="difference")
def gem_backward_transfer(R, learned_at=None):
    r"""GEM's backward transfer (Lopez-Paz & Ranzato; also Mammoth's, and Avalanche's StreamBWT):
    mean over concepts learned before the last step of :math:`R_{N-1,j} - R_{t(j),j}`.

    >>> gem_backward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
    -0.175
    """
    R, t = prepare(R, learned_at)
    ok = _before_last(R, t)
    return R[-1, ok] - diagonal(R, t)[ok]


@scalar_metric("pyCLAD-code-BWT", unit="differences", scale="difference")
def pyclad_code_backward_transfer(R, learned_at=None):
    r"""Backward transfer as pyCLAD's code computes it: mean over ``i > t(j)`` of the step-to-step
    change :math:`R_{ij} - R_{i-1,j}` (in the standard case: :math:`i \ge 1, j < i`).

    It differs from :func:`backward_transfer` (pyCLAD's documentation), which compares with
    ``R[t(j), j]``: on ``[[1,2,3],[4,5,6],[7,8,9]]`` this gives 3, the documented formula 4.

    >>> pyclad_code_backward_transfer([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    3.0
    >>> round(pyclad_code_backward_transfer([[0.8, 0, 0], [0.5, 1, 0], [0.4, 0.8, 0.9]]), 6)
    -0.2
    """
    R, t = prepare(R, learned_at)
    step_change = np.full_like(R, np.nan)
    step_change[1:] = R[1:] - R[:-1]
    return step_change[after(R, t)]


@scalar_metric("GEM-FWT", needs=("baseline",), unit="concepts", scale="difference")
def gem_forward_transfer(R, baseline, learned_at=None):
    r"""GEM's forward transfer (also Mammoth's and Avalanche's): mean over concepts learned after
    the first step of :math:`R_{t(j)-1,j} - b_j`, the score just before the concept was learned
    minus ``baseline[j]``, the score of an untrained model (standard case: :math:`j \ge 1`,
    :math:`R_{j-1,j} - b_j`).

    >>> gem_forward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]], [0.5, 0.5, 0.5])
    0.04999999999999999
    """
    R, t = prepare(R, learned_at)
    b = per_concept_vector(baseline, R, "baseline")
    cols = np.nonzero(t >= 1)[0]
    return R[t[cols] - 1, cols] - b[cols]


@scalar_metric("Unlearned", unit="cells")
def unlearned_average(R, learned_at=None):
    """Mean over all steps of the columns of test concepts never learned (NaN if there are none).

    >>> unlearned_average([[0.9, 0.5, 0.3], [0.7, 0.8, 0.5]])
    0.4
    """
    R, t = prepare(R, learned_at)
    return R[:, t < 0]


@scalar_metric("Stability", lower_is_better=True, unit="concepts", scale="variance")
def memory_stability(R, learned_at=None):
    r"""Memory stability: mean over concepts learned before the last step of the population
    variance (``ddof=0``) of :math:`R_{t(j):,\,j}`, the concept's scores from the step that learned
    it on (NaN cells left out of each variance; lower is steadier).

    >>> round(memory_stability([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]), 6)
    0.00809
    """
    R, t = prepare(R, learned_at)
    cols = np.nonzero(_before_last(R, t))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with no value: NaN, left out
        return np.array([np.nanvar(R[t[j] :, j]) for j in cols], dtype=np.float64)


@scalar_metric("AUAC", unit="steps")
def accuracy_seen_average(R, learned_at=None):
    r"""Average of the seen-concepts curve (AUAC, CapyMOA's ``accuracy_seen_avg``):
    :math:`\mathrm{mean}_i\, a_\text{seen}(i)` with :func:`~clad.metrics.accuracy_seen`.

    >>> round(accuracy_seen_average([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]), 6)
    0.805556
    """
    return accuracy_seen(R, learned_at)


@scalar_metric("All-avg", unit="steps")
def accuracy_all_average(R, learned_at=None):
    r"""Average of the all-concepts curve (CapyMOA's ``accuracy_all_avg``):
    :math:`\mathrm{mean}_i\, a_\text{all}(i)` with :func:`~clad.metrics.accuracy_all` (every test
    concept, learned or not).

    >>> round(accuracy_all_average([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]), 6)
    0.688889
    """
    return accuracy_all(R, learned_at)


@scalar_metric(
    "Intransigence", lower_is_better=True, needs=("reference",), unit="concepts", scale="difference"
)
def intransigence(R, reference, learned_at=None):
    r"""Intransigence (Chaudhry et al.): mean over learned concepts of
    :math:`\mathrm{ref}_j - R_{t(j),j}`, how far below a reference model (trained jointly, or on
    the concept alone) the concept ends when it is learned; lower is better.

    >>> round(intransigence([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]], [1.0, 0.9, 0.9]), 6)
    0.05
    """
    R, t = prepare(R, learned_at)
    ref = per_concept_vector(reference, R, "reference")
    ok = t >= 0
    return ref[ok] - diagonal(R, t)[ok]


@scalar_metric("Ref-FWT", needs=("reference",), unit="concepts", scale="difference")
def reference_forward_transfer(R, reference, learned_at=None):
    r"""Forward transfer against a reference model: mean over concepts learned after the first
    step of :math:`R_{t(j),j} - \mathrm{ref}_j` (standard case: :math:`j \ge 1`, :math:`R_{jj} - \mathrm{ref}_j`);
    positive = earlier learning helped the concept beyond what the reference reaches.

    >>> round(reference_forward_transfer([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]],
    ...                                  [1.0, 0.9, 0.9]), 6)
    -0.025
    """
    R, t = prepare(R, learned_at)
    ref = per_concept_vector(reference, R, "reference")
    ok = t >= 1
    return diagonal(R, t)[ok] - ref[ok]
