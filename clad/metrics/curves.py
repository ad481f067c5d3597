r"""Per-step accuracy curves (CapyMOA OCLMetrics' ``accuracy_seen`` and ``accuracy_all``):
one value per training step ``i``.
"""

from __future__ import annotations

import numpy as np

from .cells import nanmean, prepare, seen
from .registry import curve_metric

__all__ = ["accuracy_seen", "accuracy_all"]


@curve_metric("seen")
def accuracy_seen(R, learned_at=None) -> np.ndarray:
    r"""Per step ``i``: mean of ``R[i, j]`` over concepts already learned (``t(j) <= i``),
    :math:`a_\text{seen}(i)`.

    >>> accuracy_seen([[0.9, 0.5], [0.7, 0.8]]).tolist()
    [0.9, 0.75]
    """
    R, t = prepare(R, learned_at)
    mask = seen(R, t)
    return np.array([nanmean(R[i, mask[i]]) for i in range(R.shape[0])])


@curve_metric("all")
def accuracy_all(R, learned_at=None) -> np.ndarray:
    r"""Per step ``i``: mean of ``R[i, j]`` over every test concept (learned or not),
    :math:`a_\text{all}(i)`.

    >>> accuracy_all([[0.9, 0.5], [0.7, 0.8]]).tolist()
    [0.7, 0.75]
    """
    R, _ = prepare(R, learned_at)
    return np.array([nanmean(R[i]) for i in range(R.shape[0])])
