"""Rows as a table: what tabular detectors get when a concept's rows are windows.

A windowed concept (:mod:`clad.datasets.windows`) has 3-D rows ``(n, window, features)``.
Detectors that take a table (scikit-learn, PyOD, clad's dense autoencoders, river's) see each
window flattened, step after step, to ``window * features`` columns; :func:`as_table` is the one
place that does it, and 2-D input passes through untouched. Every adapter of :func:`~clad.detectors.as_detector`
calls it; a detector of one's own that wants the 3-D windows sets ``_clad_detector = True`` (then
``as_detector`` passes it through unwrapped), as clad's sequence autoencoders do.

>>> import numpy as np
>>> W = np.arange(12.0).reshape(2, 3, 2)
>>> as_table(W).tolist()
[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]
>>> X = np.zeros((4, 2)); as_table(X) is X
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_table"]


def as_table(X):
    """``X`` unchanged unless it has more than two axes; then each row flattened (``reshape``: a view
    when the rows are contiguous, else one copy, e.g. of overlapping windows)."""
    if getattr(X, "ndim", 2) <= 2:
        return X
    X = np.asarray(X)
    return X.reshape(X.shape[0], -1)
