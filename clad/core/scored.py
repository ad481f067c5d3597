"""What a strategy's ``score`` returns: :class:`Scored` (scores and a threshold), the rows it
flags (:func:`flags`) and the contract its output is held to (:func:`check_scored`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CladValueError, DetectorError

__all__ = ["Scored", "flags", "check_scored"]


@dataclass(frozen=True)
class Scored:
    """Scores of one test set and the threshold for labels (``scores > threshold`` is an anomaly)."""

    scores: np.ndarray
    threshold: float

    @property
    def labels(self) -> np.ndarray:
        return (self.scores > self.threshold).astype(np.int8)


def flags(scored: Scored) -> np.ndarray:
    """The rows flagged: ``scores > threshold``, except that scores all equal (a detector without
    scores) flag every row, as the chance level's scoreless detector does -- so such a detector is
    drawn at its chance level, never below it (by a threshold that flags nothing)."""
    scores = np.asarray(scored.scores)
    if scores.size and scores.min() == scores.max():
        return np.ones(scores.shape, dtype=np.int8)
    return scored.labels


def check_scored(scored, n_rows: int, strategy, what: str) -> "Scored":
    """``scored`` unchanged if it is what a strategy's ``score`` must return for ``n_rows`` rows:
    a :class:`Scored` with one finite real score per row and a real, non-NaN threshold; else a
    :class:`~clad.errors.DetectorError` naming the strategy and ``what`` was scored (the checks a
    detector's scores get, so a strategy plug-in is held to the same contract).

    >>> check_scored(Scored(np.array([0.1, np.nan]), 0.5), 2, "Mine", "test concept 'a'")
    Traceback (most recent call last):
    ...
    clad.errors.DetectorError: strategy 'Mine': score() returned 1 non-finite value(s) (NaN or infinity) among 2 scores of test concept 'a'; expected finite scores
    """
    who = strategy if isinstance(strategy, str) else type(strategy).__name__
    if not isinstance(scored, Scored):
        raise CladValueError(
            f"strategy {who}: score() returned {type(scored).__name__}; "
            "expected clad.strategies.Scored(scores, threshold)"
        )
    scores = scored.scores
    kind = getattr(getattr(scores, "dtype", None), "kind", None)
    if not isinstance(scores, np.ndarray) or kind not in "biuf":
        raise DetectorError(
            f"strategy {who!r}: score() returned scores of type {type(scores).__name__}"
            f"{f' (dtype {scores.dtype})' if kind else ''} for {what}; expected a numpy array "
            "of real numbers"
        )
    if scores.shape != (n_rows,):
        raise DetectorError(
            f"strategy {who!r}: score() returned {scores.shape} scores for the {n_rows} rows of "
            f"{what}; expected ({n_rows},)"
        )
    finite = np.isfinite(scores)
    if not finite.all():
        raise DetectorError(
            f"strategy {who!r}: score() returned {int((~finite).sum())} non-finite value(s) (NaN or "
            f"infinity) among {n_rows} scores of {what}; expected finite scores"
        )
    t = scored.threshold
    if (
        isinstance(t, (bool, np.bool_))
        or not isinstance(t, (int, float, np.integer, np.floating))
        or t != t
    ):
        raise DetectorError(
            f"strategy {who!r}: score() returned threshold {t!r} for {what}; expected a real "
            "number, not NaN (scores above it are flagged)"
        )
    return scored
