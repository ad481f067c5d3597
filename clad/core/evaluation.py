"""Evaluation into the matrix R.

After a training step the :class:`Evaluator` scores **each test concept once** through the
strategy and fills every requested base metric from those same scores (ROC-AUC and average
precision from the scores, F1 from ``scores > threshold``). A cell whose metric is undefined
(a single-class test concept) is NaN, with one warning naming the concept; it never stops a run.

``n_jobs`` scores the test concepts of a step concurrently in threads (default 1: one after the
other). The scores, and so R, are bit-identical either way: each test concept is still scored once
by the same fitted model, and every cell is written to its own place. Threads help where the
detector's scoring runs outside the GIL for long stretches (neighbour searches such as LOF, kernel
evaluations such as OneClassSVM, NumPy work); IsolationForest's scoring is a Python loop over its
trees and does not gain. It needs a detector whose scoring only reads its fitted state, as every
scikit-learn detector does; a few PyOD detectors (ECOD, COPOD) write attributes while scoring and
must keep ``n_jobs=1``.

A scenario tells the evaluator what a step is by the method it calls: :meth:`Evaluator.end_of_concept`
after the last row of a training concept (a row of R) and :meth:`Evaluator.anytime` every few
batches of a stream (a row of the anytime matrix). Code that wants to follow a run passes
*observers*: callables that receive a frozen event (:class:`StepEvent`, :class:`AnytimeEvent`)
after each row and can change nothing.

Base metric names: ``roc_auc``, ``f1``, ``average_precision``.
"""

from __future__ import annotations

import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import sklearn
from scipy.integrate import trapezoid
from sklearn.metrics import f1_score, precision_recall_curve

from ..errors import CladValueError
from ..registry import did_you_mean
from ..strategies.base import Scored
from .concepts import Concept

__all__ = ["BASE_METRICS", "Evaluator", "Evaluation", "StepEvent", "AnytimeEvent", "check_base_metrics",
           "check_n_jobs"]


def _roc_auc(y, scored: Scored) -> float:
    """ROC-AUC of binary labels ``y`` (both classes present) and finite scores.

    The arithmetic of scikit-learn's ``auc(*roc_curve(y, scores)[:2])`` -- which is what
    ``roc_auc_score`` computes for binary labels -- step for step (descending sort, one point per
    distinct score, collinear points dropped, trapezoidal rule), without its input checks: the
    evaluator has checked the labels once and the detector adapter the scores. Those checks cost
    ten times the computation on a test set of a few hundred rows, and were most of clad's own
    time in a run. The result equals ``roc_auc_score`` bit for bit (tested on tied and untied
    scores).
    """
    scores = np.asarray(scored.scores)
    order = np.argsort(scores, kind="stable")[::-1]
    ranked = scores[order]
    thresholds = np.append(np.flatnonzero(np.diff(ranked)), ranked.size - 1)
    tps = np.cumsum(np.asarray(y)[order], dtype=np.float64)[thresholds]
    fps = 1 + thresholds.astype(np.float64) - tps
    if fps.shape[0] > 2:
        corner = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        keep = np.flatnonzero(np.concatenate(([True], corner, [True])))
        fps, tps = fps[keep], tps[keep]
    fps = np.concatenate(([0.0], fps))
    tps = np.concatenate(([0.0], tps))
    return float(trapezoid(tps / tps[-1], fps / fps[-1]))


def _average_precision(y, scored: Scored) -> float:
    # average_precision_score's binary case: the step-wise area under precision_recall_curve
    precision, recall, _ = precision_recall_curve(y, scored.scores)
    return float(-np.sum(np.diff(recall) * np.asarray(precision)[:-1]))


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


def check_n_jobs(n_jobs) -> int:
    """The number of scoring threads for ``n_jobs``: None -> 1, -1 -> every CPU, k >= 1 -> k.

    >>> check_n_jobs(None), check_n_jobs(3)
    (1, 3)
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or (n_jobs < 1 and n_jobs != -1):
        raise CladValueError(f"n_jobs={n_jobs!r}; expected None, -1 (every CPU) or an integer >= 1")
    return int(os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


@dataclass(frozen=True)
class StepEvent:
    """Row ``index`` of R was filled, after the training concept ``step`` ended."""

    step: str
    index: int


@dataclass(frozen=True)
class AnytimeEvent:
    """Row ``index`` of the anytime matrix was filled, after ``rows_seen`` training rows."""

    rows_seen: int
    index: int


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
    """Fills R row by row. One per run; a scenario calls :meth:`learning`, :meth:`end_of_concept`
    and :meth:`anytime`.

    Parameters
    ----------
    test_concepts : sequence of Concept
    base_metrics : sequence of str, default ("roc_auc",)
    n_jobs : int or None, default 1
        Threads scoring the test concepts of a step concurrently (-1: one per CPU). R does not
        depend on it (see the module docstring for the detectors it suits).
    observers : iterable of callables, default ()
        Each is called with a frozen :class:`StepEvent` or :class:`AnytimeEvent` after every row
        (progress display, logging); nothing they are given can change the run.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.datasets import make_synthetic
    >>> from clad.scenarios import ConceptIncremental
    >>> from clad.strategies import Naive
    >>> ds = make_synthetic(n_concepts=3, random_state=0)
    >>> runs = [ConceptIncremental().run(ds, Naive(IsolationForest(n_estimators=10, random_state=0)),
    ...                                  Evaluator(ds.test, n_jobs=k)) for k in (1, 2)]
    >>> np.array_equal(runs[0].R["roc_auc"], runs[1].R["roc_auc"])
    True
    >>> seen = []
    >>> out = ConceptIncremental().run(ds, Naive(IsolationForest(n_estimators=10, random_state=0)),
    ...                                Evaluator(ds.test, observers=[seen.append]))
    >>> seen[-1]
    StepEvent(step='C2', index=2)
    """

    def __init__(self, test_concepts: Sequence[Concept], base_metrics: Sequence[str] = ("roc_auc",),
                 n_jobs: int | None = 1, observers: Iterable[Callable[[StepEvent | AnytimeEvent], None]] = ()):
        self.test_concepts = tuple(test_concepts)
        self.base_metrics = check_base_metrics(base_metrics)
        self.n_jobs = check_n_jobs(n_jobs)
        self.observers = tuple(observers)
        for obs in self.observers:
            if not callable(obs):
                raise CladValueError(f"observers: {obs!r} is not callable; expected functions of one event")
        self._pool: ThreadPoolExecutor | None = None
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

    @contextmanager
    def learning(self):
        """Time a ``learn`` call; the time is added to the next evaluated step."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._pending_fit += time.perf_counter() - t0
            self._last = None  # something was learned: the next evaluation must score again

    def _score_one(self, strategy, j: int, with_ids: bool) -> dict[str, float] | None:
        """Score test concept ``j`` once; its base metrics, or None when they are undefined."""
        concept = self.test_concepts[j]
        scored = strategy.score(concept.X, concept_id=concept.name if with_ids else None)
        if not isinstance(scored, Scored):
            raise CladValueError(
                f"strategy {type(strategy).__name__}: score() returned {type(scored).__name__}; "
                "expected clad.strategies.Scored(scores, threshold)"
            )
        if self._single_class[j]:
            return None
        # the arguments are clad's own, valid by construction: skip scikit-learn's parameter checks
        # (the data checks stay), which cost as much as the metric on a test set of a few hundred rows
        with sklearn.config_context(skip_parameter_validation=True):
            return {m: BASE_METRICS[m](concept.y, scored) for m in self.base_metrics}

    def _score_all(self, strategy, with_ids: bool) -> dict[str, np.ndarray]:
        n = len(self.test_concepts)
        if self.n_jobs > 1 and n > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=min(self.n_jobs, n), thread_name_prefix="clad-score")
            cells = list(self._pool.map(lambda j: self._score_one(strategy, j, with_ids), range(n)))
        else:
            cells = [self._score_one(strategy, j, with_ids) for j in range(n)]
        row = {m: np.full(n, np.nan) for m in self.base_metrics}
        for j, values in enumerate(cells):
            if values is None:
                name = self.test_concepts[j].name
                if name not in self._warned:
                    self._warned.add(name)
                    warnings.warn(
                        f"test concept {name!r} has a single class; its base metrics are "
                        "undefined and recorded as NaN",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                continue
            for m in self.base_metrics:
                row[m][j] = values[m]
        return row

    def close(self) -> None:
        """Stop the scoring threads (if any); :meth:`result` calls it."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _scores(self, strategy, with_ids: bool) -> tuple[dict[str, np.ndarray], float]:
        """The base metrics of every test concept and the seconds spent scoring. If nothing was
        learned since the last row, the previous scores are reused (0 seconds), not computed again."""
        if self._last is not None:
            return self._last, 0.0
        t0 = time.perf_counter()
        self._last = self._score_all(strategy, with_ids)
        return self._last, time.perf_counter() - t0

    def _tell(self, event) -> None:
        for obs in self.observers:
            obs(event)

    def end_of_concept(self, strategy, step: str, with_ids: bool) -> None:
        """A training concept ended (named ``step``): score every test concept once (with their
        concept ids if ``with_ids``) and append a row to R, with the step's timings and the rows
        the strategy keeps."""
        row, score_time = self._scores(strategy, with_ids)
        for m in self.base_metrics:
            self._rows[m].append(row[m].copy())
        self._steps.append(step)
        self._fit.append(self._pending_fit)
        self._score.append(score_time)
        self._memory.append(_memory_rows(strategy))
        self._pending_fit = 0.0
        self._tell(StepEvent(str(step), len(self._steps) - 1))

    def anytime(self, strategy, rows_seen: int, with_ids: bool = False) -> None:
        """``rows_seen`` training rows were learned: append a row to the anytime matrix."""
        row, _ = self._scores(strategy, with_ids)
        for m in self.base_metrics:
            self._any_rows[m].append(row[m].copy())
        self._any_seen.append(int(rows_seen))
        self._tell(AnytimeEvent(int(rows_seen), len(self._any_seen) - 1))

    def result(self) -> Evaluation:
        self.close()
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
