"""Evaluation into the matrix R.

After a training step the :class:`Evaluator` scores **each test concept once** through the
strategy and fills every requested base metric from those same scores (ROC-AUC and average
precision from the scores, F1 from ``scores > threshold``). A cell whose metric is undefined
(a single-class test concept) is NaN, with one warning naming the concept; it never stops a run.

Base metric names: ``roc_auc``, ``f1``, ``average_precision``.
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from .concepts import Concept
from .errors import CladValueError
from .registry import did_you_mean
from .strategies.base import Scored

__all__ = ["BASE_METRICS", "Evaluator", "Evaluation", "check_base_metrics"]


def _roc_auc(y, scored: Scored) -> float:
    return float(roc_auc_score(y, scored.scores))


def _average_precision(y, scored: Scored) -> float:
    return float(average_precision_score(y, scored.scores))


def _f1(y, scored: Scored) -> float:
    return float(f1_score(y, scored.labels, zero_division=0.0))


#: base metric name -> function(y_true, Scored) -> float
BASE_METRICS: dict[str, Callable[[np.ndarray, Scored], float]] = {
    "roc_auc": _roc_auc,
    "f1": _f1,
    "average_precision": _average_precision,
}


def check_base_metrics(names) -> tuple[str, ...]:
    """Validate a list of base metric names (non-empty, known, no duplicates)."""
    if isinstance(names, str):
        names = [names]
    try:
        names = list(names)
    except TypeError:
        raise CladValueError(f"base_metrics must be a list of names, got {names!r}") from None
    if not names:
        raise CladValueError(f"base_metrics is empty; choose from {', '.join(BASE_METRICS)}")
    for n in names:
        if n not in BASE_METRICS:
            raise CladValueError(
                f"unknown base metric {n!r}{did_you_mean(str(n), BASE_METRICS)}; allowed: {', '.join(BASE_METRICS)}"
            )
    if len(set(names)) != len(names):
        raise CladValueError(f"base_metrics lists a name twice: {names!r}")
    return tuple(names)


@dataclass(frozen=True)
class Evaluation:
    """What a scenario produced: R per base metric, row labels, timings, and the anytime matrix."""

    R: dict[str, np.ndarray]
    steps: tuple[str, ...]
    fit_seconds: tuple[float, ...]
    score_seconds: tuple[float, ...]
    memory_rows: tuple[int, ...]
    anytime_R: dict[str, np.ndarray] | None = None
    anytime_rows_seen: tuple[int, ...] | None = None


class Evaluator:
    """Fills R row by row. One per run; a scenario calls :meth:`learn` and :meth:`evaluate`."""

    def __init__(self, test_concepts: Sequence[Concept], base_metrics: Sequence[str] = ("roc_auc",)):
        self.test_concepts = tuple(test_concepts)
        self.base_metrics = check_base_metrics(base_metrics)
        self._single_class = [len(np.unique(c.y)) < 2 for c in self.test_concepts]
        self._warned: set[str] = set()
        self._rows: dict[str, list[np.ndarray]] = {m: [] for m in self.base_metrics}
        self._any_rows: dict[str, list[np.ndarray]] = {m: [] for m in self.base_metrics}
        self._any_seen: list[int] = []
        self._steps: list[str] = []
        self._fit: list[float] = []
        self._score: list[float] = []
        self._memory: list[int] = []
        self._pending_fit = 0.0
        self._last: dict[str, np.ndarray] | None = None
        self._last_score_time = 0.0

    @contextmanager
    def learning(self):
        """Time a ``learn`` call; the time is added to the next evaluated step."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._pending_fit += time.perf_counter() - t0
            self._last = None  # something was learned: the next evaluation must score again

    def _score_all(self, strategy, with_ids: bool) -> dict[str, np.ndarray]:
        row = {m: np.full(len(self.test_concepts), np.nan) for m in self.base_metrics}
        for j, concept in enumerate(self.test_concepts):
            scored = strategy.score(concept.X, concept_id=concept.name if with_ids else None)
            if not isinstance(scored, Scored):
                raise CladValueError(
                    f"strategy {type(strategy).__name__}: score() returned {type(scored).__name__}; "
                    "expected clad.strategies.Scored(scores, threshold)"
                )
            if self._single_class[j]:
                if concept.name not in self._warned:
                    self._warned.add(concept.name)
                    warnings.warn(
                        f"test concept {concept.name!r} has a single class; its base metrics are "
                        "undefined and recorded as NaN",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                continue
            for m in self.base_metrics:
                row[m][j] = BASE_METRICS[m](concept.y, scored)
        return row

    def evaluate(self, strategy, step: str, with_ids: bool, memory_rows: int | None = None,
                 concept_end: bool = True, anytime_rows_seen: int | None = None) -> None:
        """Score every test concept once and append a row (to R if ``concept_end``, and to the
        anytime matrix if ``anytime_rows_seen`` is given). If nothing was learned since the last
        evaluation, the previous scores are reused rather than computed again."""
        if self._last is None:
            t0 = time.perf_counter()
            self._last = self._score_all(strategy, with_ids)
            self._last_score_time = time.perf_counter() - t0
            score_time = self._last_score_time
        else:
            score_time = 0.0
        if concept_end:
            for m in self.base_metrics:
                self._rows[m].append(self._last[m].copy())
            self._steps.append(step)
            self._fit.append(self._pending_fit)
            self._score.append(score_time)
            self._memory.append(int(memory_rows if memory_rows is not None else _memory_rows(strategy)))
            self._pending_fit = 0.0
        if anytime_rows_seen is not None:
            for m in self.base_metrics:
                self._any_rows[m].append(self._last[m].copy())
            self._any_seen.append(int(anytime_rows_seen))

    def result(self) -> Evaluation:
        R = {m: np.vstack(rows) for m, rows in self._rows.items()}
        anytime = None
        if self._any_seen:
            anytime = {m: np.vstack(rows) for m, rows in self._any_rows.items()}
        return Evaluation(
            R=R,
            steps=tuple(self._steps),
            fit_seconds=tuple(self._fit),
            score_seconds=tuple(self._score),
            memory_rows=tuple(self._memory),
            anytime_R=anytime,
            anytime_rows_seen=tuple(self._any_seen) if self._any_seen else None,
        )


def _memory_rows(strategy) -> int:
    fn = getattr(strategy, "memory_rows", None)
    return int(fn()) if callable(fn) else 0
