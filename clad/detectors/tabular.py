"""The arrays at the detector interface's edges: rows as a table (what tabular detectors get when a
concept's rows are windows) and scores checked (:func:`check_scores`).

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

from ..errors import DetectorError

__all__ = ["as_table", "check_scores"]


def as_table(X):
    """``X`` unchanged unless it has more than two axes; then each row flattened (``reshape``: a view
    when the rows are contiguous, else one copy, e.g. of overlapping windows)."""
    if getattr(X, "ndim", 2) <= 2:
        return X
    X = np.asarray(X)
    return X.reshape(X.shape[0], -1)


def check_scores(scores, n_rows: int, who: str, of: str = "") -> np.ndarray:
    """Return ``scores`` as a float array of shape ``(n_rows,)`` or raise a DetectorError naming
    ``who``: finite real numbers, one per row (complex scores are refused, never silently cast);
    ``of`` says which rows were scored (e.g. the training rows that set the threshold).

    >>> check_scores([0.5, 2.0], 2, "Mine")
    array([0.5, 2. ])
    >>> check_scores(np.array([1 + 2j, 3]), 2, "Mine")
    Traceback (most recent call last):
    ...
    clad.errors.DetectorError: detector Mine: score() returned complex numbers (dtype complex128); expected real scores
    >>> check_scores(["0.5", "2.0"], 2, "Mine")
    Traceback (most recent call last):
    ...
    clad.errors.DetectorError: detector Mine: score() returned text (dtype object), not numbers; expected real scores (numeric strings are refused, never parsed)
    """
    if np.iscomplexobj(scores):
        raise DetectorError(
            f"detector {who}: score() returned complex numbers (dtype {np.asarray(scores).dtype}); "
            "expected real scores"
        )
    raw = scores if isinstance(scores, np.ndarray) else np.asarray(scores, dtype=object)
    if raw.dtype.kind in "USV" or (
        raw.dtype.kind == "O"
        and any(isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in raw.ravel())
    ):
        raise DetectorError(
            f"detector {who}: score() returned text (dtype {raw.dtype}), not numbers; expected "
            "real scores (numeric strings are refused, never parsed)"
        )
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DetectorError(
            f"detector {who}: scores could not be read as numbers ({exc})"
        ) from None
    if s.shape != (n_rows,):
        raise DetectorError(
            f"detector {who}: score() returned shape {s.shape} for {n_rows} rows; expected ({n_rows},)"
        )
    if not np.isfinite(s).all():
        k = int((~np.isfinite(s)).sum())
        raise DetectorError(
            f"detector {who}: score() returned {k} non-finite value(s) (NaN or infinity) among "
            f"{n_rows}{of}; expected finite scores"
        )
    return s
