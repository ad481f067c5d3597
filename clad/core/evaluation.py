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
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import sklearn
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from ..errors import CladValueError, RunWarning
from ..metrics.base import BASE_METRIC_FUNCTIONS, chance_levels
from ..registry import did_you_mean
from ..strategies.base import Scored
from .concepts import Concept

__all__ = ["BASE_METRICS", "PREQUENTIAL_METRICS", "Prequential", "Evaluator", "Evaluation", "StepEvent",
           "AnytimeEvent", "check_base_metrics", "check_n_jobs", "check_reversed", "check_data"]


#: base metric name -> function(y_true, Scored) -> float: a live view of the declarations in
#: :mod:`clad.metrics.base` (:data:`~clad.metrics.base.BASE_REGISTRY`, with each one's bounds and chance level)
BASE_METRICS: Mapping[str, Callable[[np.ndarray, Scored], float]] = BASE_METRIC_FUNCTIONS


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
    anytime_task: tuple[int | None, ...] | None = None
    learned_rows: tuple[dict, ...] | None = None
    prequential: dict | None = None
    #: per base metric, what a scoreless detector gets on each test concept (NaN where undefined)
    chance: dict[str, list[float]] | None = None


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
        self._any_task: list[int | None] = []
        self._learned_rows: list[dict | None] = []
        self._preq = Prequential()
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
        scores = np.asarray(scored.scores)
        if scores.size and np.all(scores == scores.flat[0]):
            self._warn_once(f"constant:{concept.name}", f"test concept {concept.name!r}: every score is the same "
                            f"({scores.flat[0]:g}), so its ROC-AUC is 0.5 and its other metrics say nothing about "
                            "the detector")
        # the arguments are clad's own, valid by construction: skip scikit-learn's parameter checks
        # (the data checks stay), which cost as much as the metric on a test set of a few hundred rows
        with sklearn.config_context(skip_parameter_validation=True):
            return {m: BASE_METRICS[m](concept.y, scored) for m in self.base_metrics}

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RunWarning, stacklevel=3)

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

    def end_of_concept(self, strategy, step: str, with_ids: bool, learned_rows: dict | None = None) -> None:
        """A training concept ended (named ``step``): score every test concept once (with their
        concept ids if ``with_ids``) and append a row to R, with the step's timings and the rows
        the strategy keeps. ``learned_rows`` (a stream's scenario) says how many rows of the
        concept and of later concepts had been learned (see :class:`~clad.scenarios.ConceptAgnostic`)."""
        self._learned_rows.append(None if learned_rows is None else dict(learned_rows))
        row, score_time = self._scores(strategy, with_ids)
        for m in self.base_metrics:
            self._rows[m].append(row[m].copy())
        self._steps.append(step)
        self._fit.append(self._pending_fit)
        self._score.append(score_time)
        self._memory.append(_memory_rows(strategy))
        self._pending_fit = 0.0
        self._tell(StepEvent(str(step), len(self._steps) - 1))

    def anytime(self, strategy, rows_seen: int, with_ids: bool = False, task: int | None = None) -> None:
        """``rows_seen`` training rows were learned, while learning training concept number ``task``
        (its index in the training order, if known): append a row to the anytime matrix."""
        row, _ = self._scores(strategy, with_ids)
        for m in self.base_metrics:
            self._any_rows[m].append(row[m].copy())
        self._any_seen.append(int(rows_seen))
        self._any_task.append(None if task is None else int(task))
        self._tell(AnytimeEvent(int(rows_seen), len(self._any_seen) - 1))

    def prequential(self, strategy, X, y, rows_seen: int, window: int) -> None:
        """Test-then-train: score the batch ``X`` (labels ``y``) before it is learned, after
        ``rows_seen`` training rows; ``window`` batches make the windowed scores (see
        :class:`Prequential`)."""
        self._preq.window = int(window)
        self._preq.add(np.asarray(y), strategy.score(X, concept_id=None), rows_seen)

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
            anytime_task=tuple(self._any_task) if self._any_seen else None,
            learned_rows=tuple(self._learned_rows) if any(r is not None for r in self._learned_rows) else None,
            prequential=self._preq.record(),
            chance={m: chance_levels(m, [c.y for c in self.test_concepts]) for m in self.base_metrics},
        )


def check_reversed(R: dict[str, np.ndarray], steps: Sequence[str], test_names: Sequence[str],
                   chance: Mapping[str, Sequence[float]] | None = None) -> None:
    """Warn (:class:`~clad.errors.RunWarning`) when a base metric is below its chance level on most
    concepts right after they were learned (the cells of R where the step and the test concept have
    the same name): a detector ranks anomalies *lower* than normal rows there, so its scores may be
    reversed (clad expects higher = more anomalous). ``chance`` gives each base metric's chance level
    per test concept (:func:`clad.metrics.base.chance_level`); without it, ROC-AUC against 0.5."""
    position = {name: j for j, name in enumerate(test_names)}
    levels = dict(chance or {})
    if not levels and "roc_auc" in R:
        levels = {"roc_auc": [0.5] * len(test_names)}
    for name, level in levels.items():
        if name not in R or level is None:
            continue
        pairs = [(R[name][i, position[s]], level[position[s]]) for i, s in enumerate(steps) if s in position]
        pairs = [(v, c) for v, c in pairs if np.isfinite(v) and np.isfinite(c)]
        below = sum(v < c for v, c in pairs)
        if pairs and below > len(pairs) / 2:
            shown = "ROC-AUC below 0.5" if name == "roc_auc" else f"{name} below chance"
            warnings.warn(f"{shown} on {below} of {len(pairs)} concepts just learned (mean "
                          f"{np.mean([v for v, _ in pairs]):.3f}, chance {np.mean([c for _, c in pairs]):.3f}): are "
                          "the scores reversed? clad expects higher scores for more anomalous rows", RunWarning,
                          stacklevel=2)
            return


#: detector parameters that a training step needs more rows than
_ROW_PARAMETERS = ("n_neighbors", "n_clusters", "n_components")
#: a feature whose spread is at most this fraction of its magnitude (plus an absolute floor) is near-constant
_NEAR_CONSTANT = 1e-9


def _rows_needed(detector) -> tuple[int, str]:
    """The fewest training rows ``detector`` can learn from, and why: 2, or one more than its
    largest ``n_neighbors`` / ``n_clusters`` / ``n_components`` parameter."""
    needed, why = 2, "a detector needs at least 2 rows"
    params = detector.get_params(deep=True) if hasattr(detector, "get_params") else {}
    for key, value in params.items():
        if key.rsplit("__", 1)[-1] in _ROW_PARAMETERS and isinstance(value, (int, np.integer)) and value + 1 > needed:
            needed, why = int(value) + 1, f"the detector's {key.rsplit('__', 1)[-1]}={int(value)}"
    return needed, why


def check_data(dataset, detector=None, batch_size: int | None = None) -> None:
    """Warn (:class:`~clad.errors.RunWarning`) before a run about data that makes its numbers
    meaningless: constant or near-constant features in a training concept, a training concept with
    fewer rows than ``detector`` needs, finite values beyond float32's range (a detector that casts
    to float32 sees infinities), and a ``batch_size`` at least as long as the whole training stream
    (concept-agnostic: one batch, so every row of R is the same)."""
    big = float(np.finfo(np.float32).max)
    needed, why = _rows_needed(detector) if detector is not None else (2, "a detector needs at least 2 rows")
    for c in dataset.train:
        X = np.asarray(c.X)
        if len(X) < needed:
            warnings.warn(f"training concept {c.name!r} has {len(X)} row(s); {why}, so what it learns there "
                          "means little", RunWarning, stacklevel=2)
        if len(X) > 1 and np.issubdtype(X.dtype, np.number):
            rows = X.reshape(len(X), -1)  # windows (rows x steps x channels): every value of a row
            spread = np.ptp(rows, axis=0).astype(np.float64)
            scale = np.abs(rows).max(axis=0).astype(np.float64)
            flat = np.flatnonzero(spread <= _NEAR_CONSTANT * np.maximum(scale, 1.0))
            if flat.size:
                shown = ", ".join(map(str, flat[:10])) + (", ..." if flat.size > 10 else "")
                what = ("feature(s)" if X.ndim <= 2 else
                        f"value(s) per window ({' x '.join(map(str, X.shape[1:]))}, flattened)")
                warnings.warn(f"training concept {c.name!r}: {flat.size} of {rows.shape[1]} {what} constant or "
                              f"near-constant (column {shown}); a detector learns nothing from them", RunWarning,
                              stacklevel=2)
    for c in (*dataset.train, *dataset.test):
        X = np.asarray(c.X)
        if np.issubdtype(X.dtype, np.floating) and X.size:
            with np.errstate(invalid="ignore"):
                over = int(np.count_nonzero(np.isfinite(X) & (np.abs(X) > big)))
            if over:
                warnings.warn(f"concept {c.name!r}: {over} value(s) beyond float32's range (|x| > {big:.3g}) become "
                              "non-finite when a detector casts to float32; rescale the features", RunWarning,
                              stacklevel=2)
    if batch_size is not None:
        stream = sum(len(c.X) for c in dataset.train)
        if stream and int(batch_size) >= stream:
            warnings.warn(f"batch_size={batch_size} is at least the whole training stream ({stream} rows): one "
                          "batch, so every row of R is the same", RunWarning, stacklevel=2)


#: the prequential scores: name -> function(y_true, scores, labels)
PREQUENTIAL_METRICS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], float]] = {
    "roc_auc": lambda y, s, lab: float(roc_auc_score(y, s)),
    "average_precision": lambda y, s, lab: float(average_precision_score(y, s)),
    "f1": lambda y, s, lab: float(f1_score(y, lab, zero_division=0.0)),
}


class Prequential:
    """Test-then-train scores of a stream, batch after batch.

    Each batch is scored before it is learned; after batch ``b`` every metric of
    :data:`PREQUENTIAL_METRICS` (scikit-learn's ``roc_auc_score``, ``average_precision_score`` and
    ``f1_score`` on ``scores > threshold``, the threshold of the model that scored the batch) is
    computed over every row scored so far (*cumulative*) and over the rows of the last ``window``
    batches (*windowed*). A value whose rows hold a single class is NaN.

    >>> import numpy as np
    >>> from clad.strategies.base import Scored
    >>> p = Prequential(window=1)
    >>> p.add(np.array([0, 1]), Scored(np.array([0.1, 0.9]), 0.5), 10)
    >>> p.add(np.array([0, 1]), Scored(np.array([0.8, 0.2]), 0.5), 12)
    >>> rec = p.record()
    >>> rec["windowed"]["roc_auc"], rec["cumulative"]["roc_auc"]
    ([1.0, 0.0], [1.0, 0.75])
    """

    def __init__(self, window: int = 10):
        self.window = window
        self._y: list[np.ndarray] = []
        self._scores: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []
        self._rows_seen: list[int] = []
        self._values: dict[str, dict[str, list[float]]] = {
            kind: {m: [] for m in PREQUENTIAL_METRICS} for kind in ("cumulative", "windowed")}

    def add(self, y: np.ndarray, scored: Scored, rows_seen: int) -> None:
        self._y.append(np.asarray(y).astype(np.int8))
        self._scores.append(np.asarray(scored.scores, dtype=np.float64))
        self._labels.append(scored.labels)
        self._rows_seen.append(int(rows_seen))
        for kind, first in (("cumulative", 0), ("windowed", max(0, len(self._y) - self.window))):
            y_all = np.concatenate(self._y[first:])
            s_all = np.concatenate(self._scores[first:])
            lab_all = np.concatenate(self._labels[first:])
            defined = np.unique(y_all).size == 2
            for m, fn in PREQUENTIAL_METRICS.items():
                self._values[kind][m].append(fn(y_all, s_all, lab_all) if defined else float("nan"))

    def record(self) -> dict | None:
        """The run's prequential record (None if no batch was scored)."""
        if not self._rows_seen:
            return None
        return {"window": self.window, "rows_seen": list(self._rows_seen),
                "n_rows": [int(len(y)) for y in self._y],
                "cumulative": {m: list(v) for m, v in self._values["cumulative"].items()},
                "windowed": {m: list(v) for m, v in self._values["windowed"].items()}}


def _memory_rows(strategy) -> int:
    fn = getattr(strategy, "memory_rows", None)
    return int(fn()) if callable(fn) else 0
