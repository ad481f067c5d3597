r"""Per-step (dynamic) continual average, backward and forward transfer: after each step ``s``,
the metric on the leading block of R, the rows ``0..s`` and the concepts learned by step ``s``
(in the standard case the leading ``(s+1) x (s+1)`` block). The last value is the metric itself.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .cells import prepare
from .continual import backward_transfer, continual_average, forward_transfer
from .registry import curve_metric

__all__ = ["continual_average_curve", "backward_transfer_curve", "forward_transfer_curve"]


def _per_step(metric: Callable, R, learned_at) -> np.ndarray:
    R, t = prepare(R, learned_at)
    return np.array([metric(R[: s + 1], np.where(t <= s, t, -1)) for s in range(R.shape[0])])


@curve_metric("CA(t)")
def continual_average_curve(R, learned_at=None) -> np.ndarray:
    r"""Per step ``s``: :func:`~clad.metrics.continual_average` of rows ``0..s``,
    :math:`CA_s = \mathrm{mean}_{j \le i \le s} R_{ij}`.

    >>> continual_average_curve([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]).round(4).tolist()
    [0.9, 0.8, 0.7833]
    """
    return _per_step(continual_average, R, learned_at)


@curve_metric("BWT(t)")
def backward_transfer_curve(R, learned_at=None) -> np.ndarray:
    r"""Per step ``s``: :func:`~clad.metrics.backward_transfer` of rows ``0..s``,
    :math:`BWT_s = \mathrm{mean}_{j < i \le s} (R_{ij} - R_{jj})` (NaN at the first step).

    >>> backward_transfer_curve([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]).round(4).tolist()
    [nan, -0.2, -0.1833]
    """
    return _per_step(backward_transfer, R, learned_at)


@curve_metric("FWT(t)")
def forward_transfer_curve(R, learned_at=None) -> np.ndarray:
    r"""Per step ``s``: :func:`~clad.metrics.forward_transfer` over the concepts learned by step
    ``s``, :math:`FWT_s = \mathrm{mean}_{i < j \le s} R_{ij}` (NaN at the first step).

    >>> forward_transfer_curve([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]).round(4).tolist()
    [nan, 0.5, 0.5]
    """
    return _per_step(forward_transfer, R, learned_at)
