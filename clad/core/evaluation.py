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

Base metrics are declared in :mod:`clad.metrics.base` (one :class:`~clad.metrics.base.BaseMetric`
each: ``roc_auc``, ``f1``, ``average_precision``, ``pr_auc_normalized``, the range metrics of time
series ``vus_pr``, ``vus_roc``, ``range_f1``, ``event_f1``, ``pa_f1``, ``affiliation_f1`` and their
optimistic ``*_oracle`` forms, or a user's, named by import path); the evaluator reads their
declarations. A metric declared ``input="scores"`` is given the scores, one declared
``input="labels"`` the labels ``scores > threshold``. A time-axis metric is computed on the time
points of a test concept that has a time axis (:attr:`Concept.time <clad.core.concepts.Concept.time>`: window scores mapped back to
points, see :mod:`clad.core.time_axis`), else on its rows in order. Such a concept's values are
also computed per series (channel) and kept with the run (:attr:`Evaluation.per_series`), with the
point scores of one series at every step (:attr:`Evaluation.trace`, for the report's figure).

Parameters of a base metric (``metric_params``, e.g. ``{"vus_pr": {"window": 50}}``): see
:attr:`BaseMetric.params <clad.metrics.base.BaseMetric.params>` and
:func:`~clad.metrics.base.check_metric_params`.
"""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Mapping, Callable, Iterable, Sequence

import numpy as np
import sklearn
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from ..defaults import DEFAULT_BASE_METRIC
from ..errors import CladValueError, DetectorError, RunWarning
from ..metrics import ranges as range_metrics
from ..metrics.base import (
    BaseMetric,
    check_base_metrics,
    check_metric_params,
    find_base_metric,
    get_base_metric,
)
from ..validation import check_n_jobs
from . import steps as step_sharing
from .concepts import Concept
from .thresholds import batch_dependent, check_threshold, fpr_threshold, joint_scores, realised_fpr

__all__ = [
    "concept_chance_level",
    "PREQUENTIAL_METRICS",
    "Prequential",
    "Evaluator",
    "Evaluation",
    "StepEvent",
    "AnytimeEvent",
    "Scored",
    "flags",
    "check_scored",
    "check_reversed",
    "check_data",
]


def concept_chance_level(name: str, concept: Concept, **params) -> float:
    """:func:`~clad.metrics.base.chance_level` of base metric ``name`` on a test concept: its time
    points' labels for a time-axis metric when it has a time axis, its row labels otherwise."""
    decl = get_base_metric(name)
    timed = decl.time_axis and concept.time is not None
    return decl.chance_level(concept.time.y if timed else concept.y, **params)


#: points of the per-step trace of one series kept for the report (longer series are summarised)
TRACE_POINTS = 2000


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
    #: test concepts with a time axis: ``{"series": {concept: [names]}, "values": {metric: {concept:
    #: [[value per series] per step]}}}`` (None when no test concept has a time axis)
    per_series: dict | None = None
    #: one series' point scores after every step, for the report (see :meth:`Evaluator.trace`)
    trace: dict | None = None
    #: per base metric, what a scoreless detector gets on each test concept (:func:`concept_chance_level`;
    #: NaN for a single-class concept, whose cells are NaN too)
    chance: dict[str, list[float]] | None = None
    #: the threshold policy and, like R, the threshold and the false-positive rate it reached on the
    #: normal rows of each test concept after each step (see :mod:`clad.core.thresholds`)
    threshold: dict | None = None
    #: the run's work: ``{"steps": training steps, "fitted": those computed (not shared),
    #: "passes": scoring passes, "scored": those computed}`` (see :mod:`clad.core.steps`)
    work: dict | None = None


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
    threshold : "own" or dict, default "own"
        The threshold policy (:mod:`clad.core.thresholds`): each detector's own threshold, or
        ``{"fpr": x}``, the ``1 - x`` quantile of the model's scores on ``calibration`` rows.
    calibration : mapping of str to array, optional
        Held-out normal rows of each training concept, by name (``{"fpr": x}`` needs them).
    train_names : sequence of str, optional
        The training concepts in learning order (an anytime row of training concept number ``k``
        is calibrated on the rows of ``train_names[k]``).

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

    def __init__(
        self,
        test_concepts: Sequence[Concept],
        base_metrics: Sequence[str] = (DEFAULT_BASE_METRIC,),
        n_jobs: int | None = 1,
        observers: Iterable[Callable[[StepEvent | AnytimeEvent], None]] = (),
        metric_params: dict | None = None,
        threshold="own",
        calibration: Mapping | None = None,
        train_names: Sequence[str] | None = None,
    ):
        self.test_concepts = tuple(test_concepts)
        self.threshold = check_threshold(threshold)
        self._calibration = {str(k): np.asarray(v) for k, v in (calibration or {}).items()}
        if self.threshold != "own" and not self._calibration:
            raise CladValueError(
                f"threshold={self.threshold!r} needs calibration rows (held-out normal rows of each "
                "training concept, clad.core.thresholds.calibration_split)"
            )
        self._train_names = tuple(train_names or ())
        self._cal_name: str | None = (
            None  # the training concept whose calibration rows set the threshold
        )
        self._last_cal: str | None = None
        self._last_fpr: list | None = None
        self._fpr_rows: list[list[tuple[float, float]]] = []
        self._joint_calibration: list[
            bool
        ] = []  # per scoring pass: calibration rows scored with each test concept
        self.base_metrics = check_base_metrics(base_metrics)
        self.metric_params = check_metric_params(metric_params, self.base_metrics)
        self._decls: dict[str, BaseMetric] = {m: get_base_metric(m) for m in self.base_metrics}
        self.n_jobs = check_n_jobs(n_jobs)
        self.observers = tuple(observers)
        for obs in self.observers:
            if not callable(obs):
                raise CladValueError(
                    f"observers: {obs!r} is not callable; expected functions of one event"
                )
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
        self._timed = [c.time is not None for c in self.test_concepts]
        self._series_rows: list[list] = []
        self._last_series: list | None = None
        self._trace_at = self._trace_choice()
        self._trace_steps: list[dict] = []
        self._last_trace: dict | None = None
        # steps shared through this thread's cache (clad.core.steps), read here: scoring threads have none
        self._cache = step_sharing.current()
        self._rows_fp: dict[int, str] = {}
        self._labels_fp: dict[int, str] = {}
        self._work = {"steps": 0, "fitted": 0, "passes": 0, "scored": 0}
        self._work_lock = threading.Lock()
        self._origin = ""

    @contextmanager
    def learning(self, what: str | None = None):
        """Time a ``learn`` call; the time is added to the next evaluated step. The call is a
        training step: it counts as fitted unless every fit it asked for was shared. ``what`` names
        what is learned (e.g. ``"training step 2 (concept 'b')"``): an exception raised inside says it."""
        t0 = time.perf_counter()
        before = self._cache.counts.copy() if self._cache is not None else None
        step_sharing.set_origin(step=self._work["steps"] + 1)
        self._origin = step_sharing.origin()
        try:
            yield
        except Exception as exc:
            if what is not None and hasattr(exc, "add_note"):
                exc.add_note(f"(raised while the strategy learned {what})")
            raise
        finally:
            self._pending_fit += time.perf_counter() - t0
            self._last = None  # something was learned: the next evaluation must score again
            self._work["steps"] += 1
            if before is None:
                self._work["fitted"] += 1
            else:
                d = self._cache.counts.minus(before)
                self._work["fitted"] += int(d.fits_computed > 0 or d.fits == 0)

    def _scored(self, strategy, j: int, concept: Concept, concept_id) -> tuple[Scored, str | None]:
        """``strategy.score`` of test concept ``j``, or the scores an earlier step with the same
        scoring key gave (:mod:`clad.core.steps`), and the key of its metric values (None: not
        shared). Scoring threads (``n_jobs > 1``) share nothing: the cache catches each
        computation's warnings to raise them again, which only the run's own thread may do."""
        compute = lambda: strategy.score(concept.X, concept_id=concept_id)  # noqa: E731
        key = None
        if self._cache is None or self.n_jobs > 1:
            scored, computed = compute(), True
        else:
            if j not in self._rows_fp:
                self._rows_fp[j] = step_sharing.rows_fingerprint(concept.X)
            skey = step_sharing.score_key(strategy, concept_id)
            scored, computed = self._cache.score(
                skey, concept.X, compute, origin=self._origin, rows=self._rows_fp[j]
            )
            if skey is not None and not self._timed[j]:
                key = self._values_key(j, skey)
        with self._work_lock:
            self._work["passes"] += 1
            self._work["scored"] += int(computed)
        return scored, key

    def _values_key(self, j: int, skey: str) -> str:
        """The key of test concept ``j``'s metric values under the scores of key ``skey``: the
        scores, the labels, the base metrics and their parameters."""
        if j not in self._labels_fp:
            self._labels_fp[j] = step_sharing.rows_fingerprint(self.test_concepts[j].y)
        return "values:" + step_sharing.combine(
            skey,
            self._rows_fp[j],
            self._labels_fp[j],
            self.base_metrics,
            sorted(self.metric_params.items()),
        )

    def _score_one(
        self, strategy, j: int, with_ids: bool, threshold: float | None = None
    ) -> tuple[dict[str, float] | None, list | None, dict | None, tuple[float, float]]:
        """Score test concept ``j`` once: its base metrics (None when undefined), its values per
        series (None without a time axis), for the traced concept its traced series' scores, and
        the threshold with the false-positive rate it reaches on the concept's normal rows.
        ``threshold`` (a calibrated one) replaces the strategy's own."""
        concept = self.test_concepts[j]
        try:
            scored, values_key = self._scored(
                strategy, j, concept, concept.name if with_ids else None
            )
            scored = check_scored(
                scored, len(concept.X), strategy, f"test concept {concept.name!r}"
            )
        except Exception as exc:
            if hasattr(exc, "add_note"):
                exc.add_note(
                    f"(raised while scoring test concept {concept.name!r} after training step "
                    f"{len(self._steps)})"
                )
            raise
        if threshold is not None:  # a calibrated threshold: the values are this run's own
            scored, values_key = Scored(scored.scores, threshold), None
        fpr = (float(scored.threshold), realised_fpr(concept.y, scored.scores, scored.threshold))
        trace = (
            self._trace(concept, scored)
            if self._trace_at is not None and self._trace_at[0] == j
            else None
        )
        series = self._per_series(concept, scored) if self._timed[j] else None
        if self._single_class[j]:
            counts = [m for m in self.base_metrics if self._decls[m].additive]
            if not counts:
                return None, series, trace, fpr
            # a count is defined on one class too; the other metrics are not
            return (
                {
                    m: self._metric(m, concept.y, scored) if m in counts else float("nan")
                    for m in self.base_metrics
                },
                series,
                trace,
                fpr,
            )
        scores = np.asarray(scored.scores)
        if scores.size and np.all(scores == scores.flat[0]):
            self._warn_once(
                f"constant:{concept.name}",
                f"test concept {concept.name!r}: every score is the same "
                f"({scores.flat[0]:g}), so its ROC-AUC is 0.5 and its other metrics say nothing about "
                "the detector",
            )
        points = None
        if self._timed[j] and any(d.time_axis for d in self._decls.values()):
            points = (concept.time.y, Scored(concept.time.points(scores), scored.threshold))
            if np.unique(concept.time.y).size < 2:
                self._warn_once(
                    f"points:{concept.name}",
                    f"test concept {concept.name!r}: its time points hold a "
                    "single class; its range metrics are undefined and recorded as NaN",
                )
                points = "undefined"

        def compute() -> dict[str, float]:
            values = {}
            # the arguments are clad's own, valid by construction: skip scikit-learn's parameter checks
            # (the data checks stay), which cost as much as the metric on a test set of a few hundred rows
            with sklearn.config_context(skip_parameter_validation=True):
                for m in self.base_metrics:
                    if self._decls[m].time_axis and points is not None:
                        values[m] = (
                            float("nan") if points == "undefined" else self._metric(m, *points)
                        )
                    else:
                        values[m] = self._metric(m, concept.y, scored)
            return values

        # the values of shared scores are shared too (a pure function of the scores and labels)
        values = (
            compute()
            if values_key is None
            else dict(self._cache.memo(values_key, compute, self._origin))
        )
        return values, series, trace, fpr

    def _metric(self, name: str, y, scored: Scored) -> float:
        # called only where both classes are present, so a range metric never warns here (no
        # warnings filter is changed: that is not thread-safe with n_jobs > 1)
        decl = self._decls[name]
        x = scored.scores if decl.input == "scores" else flags(scored)
        return decl.checked(y, x, **self.metric_params.get(name, {}))

    def _per_series(self, concept: Concept, scored: Scored) -> list[list[float]]:
        """Every base metric on every series of ``concept`` (NaN where a series holds one class)."""
        axis = concept.time
        rows, points = axis.row_bounds(), axis.point_bounds()
        point_scores = axis.points(scored.scores)
        out = []
        for k in range(len(axis.series)):
            y_rows, y_pts = concept.y[rows[k] : rows[k + 1]], axis.y[points[k] : points[k + 1]]
            s_rows = Scored(np.asarray(scored.scores)[rows[k] : rows[k + 1]], scored.threshold)
            s_pts = Scored(point_scores[points[k] : points[k + 1]], scored.threshold)
            row = []
            for m in self.base_metrics:
                y, s = (y_pts, s_pts) if self._decls[m].time_axis else (y_rows, s_rows)
                row.append(self._metric(m, y, s) if np.unique(y).size == 2 else float("nan"))
            out.append(row)
        return out

    def _trace_choice(self) -> tuple[int, int] | None:
        """The series whose scores are traced: the first series holding an anomaly range of the
        first test concept with a time axis (None without one)."""
        for j, c in enumerate(self.test_concepts):
            if c.time is None:
                continue
            bounds = c.time.point_bounds()
            for k in range(len(c.time.series)):
                if c.time.y[bounds[k] : bounds[k + 1]].any():
                    return j, k
            return j, 0
        return None

    def _trace(self, concept: Concept, scored: Scored) -> dict:
        """The traced series' point scores and the threshold (at most :data:`TRACE_POINTS` points:
        a longer series is cut into that many equal buckets, each showing its largest score)."""
        k = self._trace_at[1]
        bounds = concept.time.point_bounds()
        scores = concept.time.points(scored.scores)[bounds[k] : bounds[k + 1]]
        return {"scores": _bucket(scores, np.max).tolist(), "threshold": float(scored.threshold)}

    def trace_record(self) -> dict | None:
        """The traced series (concept, name, values of its first feature, point labels as ranges,
        bucket size) and its scores and threshold after every step; None without a time axis."""
        if self._trace_at is None or not self._trace_steps:
            return None
        j, k = self._trace_at
        concept = self.test_concepts[j]
        bounds = concept.time.point_bounds()
        values = concept.time.values(concept.X)[bounds[k] : bounds[k + 1]]
        y = concept.time.y[bounds[k] : bounds[k + 1]]
        step = _bucket_size(y.size)
        return {
            "concept": concept.name,
            "series": concept.time.series[k],
            "n_points": int(y.size),
            "bucket": step,
            "values": [
                None if not np.isfinite(v) else float(v) for v in _bucket(values, np.nanmean)
            ],
            "ranges": range_metrics.anomaly_ranges(y).tolist(),
            "steps": list(self._steps),
            "scores": [t["scores"] for t in self._trace_steps],
            "thresholds": [t["threshold"] for t in self._trace_steps],
        }

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RunWarning, stacklevel=3)

    def _calibrated(self, strategy, with_ids: bool) -> list[float | None]:
        """Each test concept's threshold under the policy: None (the strategy's own) for ``"own"``;
        else the ``1 - fpr`` quantile of the model's scores on the calibration rows of the concept
        just learned, scored as the test concept is: with its concept id where the scenario gives
        ids (a strategy that ignores the id gets the same threshold in every scenario), and, when the
        model's score of a row depends on the rows scored with it (:func:`batch_dependent`, probed
        after every step), in the test concept's batch (:func:`joint_scores`)."""
        if self.threshold == "own":
            return [None] * len(self.test_concepts)
        learned = (
            self._cal_name if self._cal_name in self._calibration else next(iter(self._calibration))
        )
        cal, fpr = self._calibration[learned], self.threshold["fpr"]
        found: dict[str | None, float] = {}
        joint = None
        out = []
        for c in self.test_concepts:
            key = c.name if with_ids else None
            if joint is None:
                whole = strategy.score(cal, concept_id=key).scores
                joint = batch_dependent(strategy, cal, concept_id=key, whole=whole)
                self._joint_calibration.append(joint)
                if not joint:
                    found[key] = fpr_threshold(whole, fpr)
            if joint:  # the calibration rows' scores in the test concept's batch
                out.append(fpr_threshold(joint_scores(strategy, c.X, cal, concept_id=key), fpr))
                continue
            if key not in found:
                found[key] = fpr_threshold(strategy.score(cal, concept_id=key).scores, fpr)
            out.append(found[key])
        return out

    def _score_all(self, strategy, with_ids: bool) -> dict[str, np.ndarray]:
        n = len(self.test_concepts)
        thresholds = self._calibrated(strategy, with_ids)
        if self.n_jobs > 1 and n > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=min(self.n_jobs, n), thread_name_prefix="clad-score"
                )
            cells = list(
                self._pool.map(
                    lambda j: self._score_one(strategy, j, with_ids, thresholds[j]), range(n)
                )
            )
        else:
            cells = [self._score_one(strategy, j, with_ids, thresholds[j]) for j in range(n)]
        row = {m: np.full(n, np.nan) for m in self.base_metrics}
        self._last_series = [series for _, series, _, _ in cells]
        self._last_trace = next((t for _, _, t, _ in cells if t is not None), None)
        self._last_fpr = [fpr for _, _, _, fpr in cells]
        for j, (values, _, _, _) in enumerate(cells):
            if values is None or self._single_class[j]:
                name = self.test_concepts[j].name
                if name not in self._warned:
                    self._warned.add(name)
                    warnings.warn(
                        f"test concept {name!r} has a single class; its base metrics are "
                        f"undefined and recorded as NaN{'' if values is None else ' (its additive ones, counts and raw scores, are kept)'}",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                if values is None:
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
        if self._last is not None and (self.threshold == "own" or self._cal_name == self._last_cal):
            return self._last, 0.0
        self._last_cal = self._cal_name
        t0 = time.perf_counter()
        self._last = self._score_all(strategy, with_ids)
        return self._last, time.perf_counter() - t0

    def _tell(self, event) -> None:
        for obs in self.observers:
            obs(event)

    def end_of_concept(
        self, strategy, step: str, with_ids: bool, learned_rows: dict | None = None
    ) -> None:
        """A training concept ended (named ``step``): score every test concept once (with their
        concept ids if ``with_ids``) and append a row to R, with the step's timings and the rows
        the strategy keeps. ``learned_rows`` (a stream's scenario) says how many rows of the
        concept and of later concepts had been learned (see :class:`~clad.scenarios.ConceptAgnostic`)."""
        self._learned_rows.append(None if learned_rows is None else dict(learned_rows))
        self._cal_name = str(step)
        row, score_time = self._scores(strategy, with_ids)
        self._fpr_rows.append(list(self._last_fpr))
        for m in self.base_metrics:
            self._rows[m].append(row[m].copy())
        self._steps.append(step)
        if any(self._timed):
            self._series_rows.append(self._last_series)
        if self._last_trace is not None:
            self._trace_steps.append(self._last_trace)
        self._fit.append(self._pending_fit)
        self._score.append(score_time)
        self._memory.append(_memory_rows(strategy))
        self._pending_fit = 0.0
        self._tell(StepEvent(str(step), len(self._steps) - 1))

    def anytime(
        self, strategy, rows_seen: int, with_ids: bool = False, task: int | None = None
    ) -> None:
        """``rows_seen`` training rows were learned, while learning training concept number ``task``
        (its index in the training order, if known): append a row to the anytime matrix."""
        if task is not None and 0 <= task < len(self._train_names):
            self._cal_name = self._train_names[task]
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
        self._preq.add(
            np.asarray(y),
            check_scored(
                strategy.score(X, concept_id=None),
                len(X),
                strategy,
                f"the batch after {rows_seen} training rows",
            ),
            rows_seen,
        )

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
            learned_rows=tuple(self._learned_rows)
            if any(r is not None for r in self._learned_rows)
            else None,
            prequential=self._preq.record(),
            per_series=self._per_series_record(),
            trace=self.trace_record(),
            chance=self._chance_levels(),
            threshold=self._threshold_record(),
            work={
                **self._work,
                **({"cache_bytes": int(self._cache.peak_bytes)} if self._cache is not None else {}),
            },
        )

    def _threshold_record(self) -> dict:
        """The policy, and per step and test concept the threshold and the realised false-positive rate."""
        record = {
            "policy": self.threshold,
            "threshold": [[t for t, _ in row] for row in self._fpr_rows],
            "realised_fpr": [[f for _, f in row] for row in self._fpr_rows],
            "calibration_rows": {k: int(len(v)) for k, v in self._calibration.items()},
        }
        if (
            self.threshold != "own"
        ):  # whether the model's scores depended on the batch (then calibrated in it)
            record["calibrated_in_test_batch"] = any(self._joint_calibration)
        return record

    def _chance_levels(self) -> dict[str, list[float]]:
        """:func:`concept_chance_level` of every base metric and test concept, computed once (once
        per grid process where steps are shared: a function of the labels alone)."""
        if self._cache is None or any(self._timed):
            return self._compute_chance_levels()
        key = "chance:" + step_sharing.combine(
            [step_sharing.rows_fingerprint(c.y) for c in self.test_concepts],
            self.base_metrics,
            sorted(self.metric_params.items()),
        )
        return {
            m: list(v)
            for m, v in self._cache.memo(key, self._compute_chance_levels, self._origin).items()
        }

    def _compute_chance_levels(self) -> dict[str, list[float]]:
        out = {}
        for m in self.base_metrics:
            levels = []
            for j, c in enumerate(self.test_concepts):
                try:
                    levels.append(
                        float("nan")
                        if self._single_class[j]
                        else float(concept_chance_level(m, c, **self.metric_params.get(m, {})))
                    )
                except (ValueError, CladValueError):  # no chance level defined for it
                    levels.append(float("nan"))
            out[m] = levels
        return out

    def _per_series_record(self) -> dict | None:
        if not any(self._timed) or not self._series_rows:
            return None
        timed = [j for j, t in enumerate(self._timed) if t]
        names = {self.test_concepts[j].name: list(self.test_concepts[j].time.series) for j in timed}
        values = {
            m: {
                self.test_concepts[j].name: [
                    [row[j][k][i] for k in range(len(row[j]))] for row in self._series_rows
                ]
                for j in timed
            }
            for i, m in enumerate(self.base_metrics)
        }
        return {
            "series": names,
            "values": values,
            "chance": {
                m: {
                    self.test_concepts[j].name: self._series_chance(self.test_concepts[j], m)
                    for j in timed
                }
                for m in self.base_metrics
            },
        }

    def _series_chance(self, concept: Concept, name: str) -> list[float]:
        """:func:`chance_level` of base metric ``name`` on every series of a time-series concept
        (its points' labels for a range metric, its rows' otherwise; NaN where a series holds one class)."""
        axis = concept.time
        rows, points = axis.row_bounds(), axis.point_bounds()
        out = []
        for k in range(len(axis.series)):
            decl = self._decls[name]
            y = (
                axis.y[points[k] : points[k + 1]]
                if decl.time_axis
                else concept.y[rows[k] : rows[k + 1]]
            )
            try:
                out.append(
                    float(decl.chance_level(y, **self.metric_params.get(name, {})))
                    if np.unique(y).size == 2
                    else float("nan")
                )
            except (ValueError, CladValueError):
                out.append(float("nan"))
        return out


def _bucket_size(n: int) -> int:
    return max(1, -(-n // TRACE_POINTS))


def _bucket(values: np.ndarray, reduce) -> np.ndarray:
    """``values`` cut into consecutive buckets of :func:`_bucket_size` points, each reduced to one."""
    step = _bucket_size(values.size)
    if step == 1:
        return np.asarray(values, dtype=np.float64)
    pad = (-values.size) % step
    padded = np.concatenate([np.asarray(values, dtype=np.float64), np.full(pad, np.nan)]).reshape(
        -1, step
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN bucket stays NaN
        return reduce(padded, axis=1) if reduce is np.nanmean else np.nanmax(padded, axis=1)


def check_reversed(
    R: dict[str, np.ndarray],
    steps: Sequence[str],
    test_names: Sequence[str],
    chance: Mapping[str, Sequence[float]] | None = None,
) -> None:
    """Warn (:class:`~clad.errors.RunWarning`) when a base metric is below its chance level on most
    concepts right after they were learned, and below it on average over them (the cells of R where the step and the test concept have
    the same name): a detector ranks anomalies *lower* than normal rows there, so its scores may be
    reversed (clad expects higher = more anomalous). ``chance`` gives each base metric's chance level
    per test concept (:func:`concept_chance_level`); without it, ROC-AUC against 0.5."""
    position = {name: j for j, name in enumerate(test_names)}
    levels = dict(chance or {})
    if not levels and "roc_auc" in R:
        levels = {"roc_auc": [0.5] * len(test_names)}
    for name, level in levels.items():
        decl = find_base_metric(name)
        if name not in R or level is None or decl is None or decl.optimistic or decl.additive:
            continue
        pairs = [
            (R[name][i, position[s]], level[position[s]])
            for i, s in enumerate(steps)
            if s in position
        ]
        pairs = [(v, c) for v, c in pairs if np.isfinite(v) and np.isfinite(c)]
        below = sum((v < c) if decl.higher_is_better else (v > c) for v, c in pairs)
        # most concepts below chance *and* their mean below the mean chance: a mean above chance
        # (a few good concepts) contradicts "reversed", so nothing is said
        mean_v, mean_c = (
            (np.mean([v for v, _ in pairs]), np.mean([c for _, c in pairs]))
            if pairs
            else (0.0, 0.0)
        )
        if (
            pairs
            and below > len(pairs) / 2
            and (mean_v < mean_c if decl.higher_is_better else mean_v > mean_c)
        ):
            shown = "ROC-AUC below 0.5" if name == "roc_auc" else f"{name} below chance"
            warnings.warn(
                f"{shown} on {below} of {len(pairs)} concepts just learned (mean "
                f"{np.mean([v for v, _ in pairs]):.3f}, chance {np.mean([c for _, c in pairs]):.3f}): are "
                "the scores reversed? clad expects higher scores for more anomalous rows",
                RunWarning,
                stacklevel=2,
            )
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
        if (
            key.rsplit("__", 1)[-1] in _ROW_PARAMETERS
            and isinstance(value, (int, np.integer))
            and value + 1 > needed
        ):
            needed, why = int(value) + 1, f"the detector's {key.rsplit('__', 1)[-1]}={int(value)}"
    return needed, why


def check_data(dataset, detector=None, batch_size: int | None = None) -> None:
    """Warn (:class:`~clad.errors.RunWarning`) before a run about data that makes its numbers
    meaningless: constant or near-constant features in a training concept, a training concept with
    fewer rows than ``detector`` needs, finite values beyond float32's range (a detector that casts
    to float32 sees infinities), and a ``batch_size`` at least as long as the whole training stream
    (concept-agnostic: one batch, so every row of R is the same)."""
    big = float(np.finfo(np.float32).max)
    needed, why = (
        _rows_needed(detector) if detector is not None else (2, "a detector needs at least 2 rows")
    )
    flat_concepts: list[str] = []  # constant features: one warning for the whole dataset
    for c in dataset.train:
        X = np.asarray(c.X)
        if len(X) < needed:
            warnings.warn(
                f"training concept {c.name!r} has {len(X)} row(s); {why}, so what it learns there "
                "means little",
                RunWarning,
                stacklevel=2,
            )
        if len(X) > 1 and np.issubdtype(X.dtype, np.number):
            rows = X.reshape(len(X), -1)  # windows (rows x steps x channels): every value of a row
            spread = np.ptp(rows, axis=0).astype(np.float64)
            scale = np.abs(rows).max(axis=0).astype(np.float64)
            flat = np.flatnonzero(spread <= _NEAR_CONSTANT * np.maximum(scale, 1.0))
            if flat.size:
                shown = ", ".join(map(str, flat[:10])) + (", ..." if flat.size > 10 else "")
                what = (
                    "feature(s)"
                    if X.ndim <= 2
                    else f"value(s) per window ({' x '.join(map(str, X.shape[1:]))}, flattened)"
                )
                flat_concepts.append(
                    f"{c.name!r}: {flat.size} of {rows.shape[1]} {what} constant or near-constant "
                    f"(column {shown})"
                )
    if len(flat_concepts) == 1:
        warnings.warn(
            f"training concept {flat_concepts[0]}; a detector learns nothing from them",
            RunWarning,
            stacklevel=2,
        )
    elif flat_concepts:
        listed = "; ".join(flat_concepts[:5]) + (
            f"; and {len(flat_concepts) - 5} more" if len(flat_concepts) > 5 else ""
        )
        warnings.warn(
            f"{len(flat_concepts)} of {len(dataset.train)} training concepts have constant or "
            f"near-constant features, which a detector learns nothing from: {listed}",
            RunWarning,
            stacklevel=2,
        )
    for c in (*dataset.train, *dataset.test):
        X = np.asarray(c.X)
        if np.issubdtype(X.dtype, np.floating) and X.size:
            with np.errstate(invalid="ignore"):
                over = int(np.count_nonzero(np.isfinite(X) & (np.abs(X) > big)))
            if over:
                warnings.warn(
                    f"concept {c.name!r}: {over} value(s) beyond float32's range (|x| > {big:.3g}) become "
                    "non-finite when a detector casts to float32; rescale the features",
                    RunWarning,
                    stacklevel=2,
                )
    if batch_size is not None:
        stream = sum(len(c.X) for c in dataset.train)
        if stream and int(batch_size) >= stream:
            warnings.warn(
                f"batch_size={batch_size} is at least the whole training stream ({stream} rows): one "
                "batch, so every row of R is the same",
                RunWarning,
                stacklevel=2,
            )


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
    >>> from clad.core.evaluation import Scored
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
            kind: {m: [] for m in PREQUENTIAL_METRICS} for kind in ("cumulative", "windowed")
        }

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
        return {
            "window": self.window,
            "rows_seen": list(self._rows_seen),
            "n_rows": [int(len(y)) for y in self._y],
            "cumulative": {m: list(v) for m, v in self._values["cumulative"].items()},
            "windowed": {m: list(v) for m, v in self._values["windowed"].items()},
        }


def _memory_rows(strategy) -> int:
    fn = getattr(strategy, "memory_rows", None)
    return int(fn()) if callable(fn) else 0
