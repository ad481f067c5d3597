r"""Per-concept values: one number per test concept (NaN where it is undefined: a concept never
learned, or learned too late, or whose cells are NaN). Their NaN-free means are scalar metrics
(:func:`~clad.metrics.forgetting`, the negated :func:`~clad.metrics.gem_backward_transfer`).
"""

from __future__ import annotations

import numpy as np

from .cells import diagonal, prepare
from .registry import concept_metric

__all__ = ["forgetting_per_concept", "per_concept_drop"]


@concept_metric("Forgetting", lower_is_better=True)
def forgetting_per_concept(R, learned_at=None) -> np.ndarray:
    r"""Per test concept: peak before the last step minus the final value,
    :math:`\max_{t(j) \le l < N-1} R_{lj} - R_{N-1,j}` (NaN for concepts learned at the last step
    or never, and where no value is defined).

    >>> forgetting_per_concept([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]).round(3).tolist()
    [0.3, 0.05, nan]
    """
    R, t = prepare(R, learned_at)
    last = R.shape[0] - 1
    out = np.full(R.shape[1], np.nan)
    for j in np.nonzero((t >= 0) & (t < last))[0]:
        earlier = R[t[j] : last, j]
        earlier = earlier[~np.isnan(earlier)]
        if earlier.size and not np.isnan(R[last, j]):
            out[j] = earlier.max() - R[last, j]
    return out


@concept_metric("Drop", lower_is_better=True)
def per_concept_drop(R, learned_at=None) -> np.ndarray:
    r"""Per test concept: the score when first learned minus the final score,
    :math:`R_{t(j),j} - R_{N-1,j}` (0 for a concept learned at the last step; NaN if never learned).

    >>> per_concept_drop([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]).round(3).tolist()
    [0.3, 0.05, 0.0]
    """
    R, t = prepare(R, learned_at)
    return diagonal(R, t) - np.where(t >= 0, R[-1], np.nan)
