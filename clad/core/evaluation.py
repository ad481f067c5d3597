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

Base metric names: ``roc_auc``, ``f1``, ``average_precision``, and the range metrics of time
series (:mod:`clad.metrics.ranges`): ``vus_pr``, ``vus_roc`` (threshold-free), ``range_f1``,
``event_f1``, ``pa_f1``, ``affiliation_f1`` (at the detector's own threshold, ``scores >
threshold``) and ``range_f1_oracle``, ``event_f1_oracle``, ``pa_f1_oracle``,
``affiliation_f1_oracle`` (at the best of a grid of thresholds chosen on the test labels:
**optimistic**). The range metrics are computed on the time points of a test concept that has a
time axis (:attr:`Concept.time <clad.core.concepts.Concept.time>`: window scores mapped back to
points, see :mod:`clad.core.time_axis`), else on its rows in order. Such a concept's values are
also computed per series (channel) and kept with the run (:attr:`Evaluation.per_series`), with the
point scores of one series at every step (:attr:`Evaluation.trace`, for the report's figure).

Parameters of a base metric (``metric_params``, e.g. ``{"vus_pr": {"window": 50}}``): see
:data:`BASE_METRIC_PARAMS` and :func:`check_metric_params`.
"""

from __future__ import annotations

import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Mapping, Callable, Iterable, Sequence

import numpy as np
import sklearn
from scipy.integrate import trapezoid
from sklearn.metrics import average_precision_score, f1_score, precision_recall_curve, roc_auc_score

from ..defaults import DEFAULT_BASE_METRIC
from ..errors import CladValueError, RunWarning
from ..metrics import ranges as range_metrics
from ..registry import did_you_mean
from ..validation import check_n_jobs
from .concepts import Concept

__all__ = ["BASE_METRICS", "BASE_METRIC_BOUNDS", "base_metric_bounds", "TIME_AXIS_METRICS", "OPTIMISTIC_METRICS", "BASE_METRIC_PARAMS", "BASE_METRIC_LABELS",
           "base_metric_label", "base_metric_shown", "check_metric_params", "chance_level",
           "concept_chance_level", "PREQUENTIAL_METRICS", "Prequential", "Evaluator", "Evaluation", "StepEvent",
           "AnytimeEvent", "Scored", "check_base_metrics", "check_reversed", "check_data"]


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


def _vus(which: int):
    def metric(y, scored: Scored, window: int = range_metrics.DEFAULT_WINDOW,
               thresholds: int = range_metrics.DEFAULT_VUS_THRESHOLDS) -> float:
        return range_metrics.vus(y, scored.scores, window, thresholds)[which]
    return metric


def _at_threshold(name: str):
    def metric(y, scored: Scored, **params) -> float:
        return range_metrics.THRESHOLD_METRICS[name](y, scored.labels, **params)
    return metric


def _oracle(name: str):
    def metric(y, scored: Scored, n_thresholds: int = range_metrics.DEFAULT_ORACLE_THRESHOLDS, **params) -> float:
        return range_metrics.oracle(name, y, scored.scores, n_thresholds, **params)
    return metric


#: base metric name -> function(y_true, Scored, **params) -> float
BASE_METRICS: dict[str, Callable[..., float]] = {
    "roc_auc": _roc_auc,
    "f1": _f1,
    "average_precision": _average_precision,
    "vus_pr": _vus(1),
    "vus_roc": _vus(0),
    **{name: _at_threshold(name) for name in range_metrics.THRESHOLD_METRICS},
    **{name: _oracle(of) for name, of in range_metrics.ORACLE_METRICS.items()},
}

#: the base metrics computed on a concept's time points (its time axis) rather than its rows
TIME_AXIS_METRICS = frozenset(["vus_pr", "vus_roc", *range_metrics.THRESHOLD_METRICS, *range_metrics.ORACLE_METRICS])
#: the base metrics whose threshold is chosen on the test labels (optimistic: no detector can do this)
OPTIMISTIC_METRICS = frozenset(range_metrics.ORACLE_METRICS)

#: how a base metric is shown in tables and figures
BASE_METRIC_LABELS = {
    "roc_auc": "ROC-AUC", "f1": "F1", "average_precision": "average precision",
    "vus_pr": "VUS-PR", "vus_roc": "VUS-ROC", "range_f1": "range F1", "event_f1": "event F1",
    "pa_f1": "point-adjusted F1", "affiliation_f1": "affiliation F1",
    "range_f1_oracle": "range F1 at the oracle threshold (optimistic)",
    "event_f1_oracle": "event F1 at the oracle threshold (optimistic)",
    "pa_f1_oracle": "point-adjusted F1 at the oracle threshold (optimistic)",
    "affiliation_f1_oracle": "affiliation F1 at the oracle threshold (optimistic)",
}


#: the range of every base metric clad computes: all of them are scores in [0, 1] (a report's
#: intervals never leave it, see :func:`clad.report.aggregate.value_bounds`)
BASE_METRIC_BOUNDS: dict[str, tuple[float, float]] = {name: (0.0, 1.0) for name in BASE_METRICS}


def base_metric_bounds(name: str) -> tuple[float, float]:
    """The range of base metric ``name``; unbounded for one clad does not know (a results file of
    another version).

    >>> base_metric_bounds("roc_auc"), base_metric_bounds("not_declared")
    ((0.0, 1.0), (-inf, inf))
    """
    return BASE_METRIC_BOUNDS.get(name, (-np.inf, np.inf))


def base_metric_label(name: str) -> str:
    """The label of a base metric (the name itself for one clad does not know).

    >>> base_metric_label("range_f1_oracle")
    'range F1 at the oracle threshold (optimistic)'
    """
    return BASE_METRIC_LABELS.get(name, name)


def base_metric_shown(name: str) -> str:
    """A base metric's name as tables and figures show it: an oracle-threshold metric is marked
    optimistic (its threshold was chosen on the test labels).

    >>> base_metric_shown("range_f1_oracle"), base_metric_shown("range_f1")
    ('range_f1_oracle (optimistic: oracle threshold)', 'range_f1')
    """
    return f"{name} (optimistic: oracle threshold)" if name in OPTIMISTIC_METRICS else name


def _integer(low: int):
    def check(metric, key, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise CladValueError(f"base metric {metric}: {key}={value!r}; expected an integer >= {low}")
        return int(value)
    return check


def _unit(metric, key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise CladValueError(f"base metric {metric}: {key}={value!r}; expected a number in [0, 1]")
    return float(value)


_VUS_PARAMS = {"window": _integer(0), "thresholds": _integer(2)}
#: the parameters each base metric takes, with their checks (defaults: TSB-AD's, see :mod:`clad.metrics.ranges`):
#: ``window`` (VUS's largest buffer width, 100), ``thresholds`` (VUS's threshold count, 250), ``alpha``
#: (range F1's weight of existence, 0.2), ``n_thresholds`` (the oracle grid, 100)
BASE_METRIC_PARAMS: dict[str, dict[str, Callable]] = {
    "vus_pr": _VUS_PARAMS, "vus_roc": _VUS_PARAMS, "range_f1": {"alpha": _unit},
    **{name: {"n_thresholds": _integer(1)} for name in range_metrics.ORACLE_METRICS},
    "range_f1_oracle": {"n_thresholds": _integer(1), "alpha": _unit},
}


def check_metric_params(params, base_metrics: Sequence[str] | None = None) -> dict[str, dict]:
    """Validate the parameters of base metrics: ``{metric: {parameter: value}}``, each metric one
    of ``base_metrics`` (when given) taking parameters (:data:`BASE_METRIC_PARAMS`).

    >>> check_metric_params({"vus_pr": {"window": 50}})
    {'vus_pr': {'window': 50}}
    >>> check_metric_params({"vus_pr": {"widow": 50}})
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: base metric vus_pr: unknown parameter 'widow' (did you mean 'window'?); it takes: window, thresholds
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise CladValueError(f"base_metric_params={params!r}; expected a table {{metric = {{parameter = value}}}}")
    out = {}
    for metric, values in params.items():
        if metric not in BASE_METRICS:
            raise CladValueError(f"base_metric_params: unknown base metric {metric!r}{did_you_mean(str(metric), BASE_METRICS)}")
        if base_metrics is not None and metric not in base_metrics:
            raise CladValueError(f"base_metric_params: {metric!r} is not one of the base metrics ({', '.join(base_metrics)})")
        allowed = BASE_METRIC_PARAMS.get(metric, {})
        if not allowed:
            raise CladValueError(f"base_metric_params: base metric {metric!r} takes no parameter; those that do: "
                                 f"{', '.join(BASE_METRIC_PARAMS)}")
        if not isinstance(values, dict):
            raise CladValueError(f"base_metric_params.{metric}={values!r}; expected a table of parameters "
                                 f"({', '.join(allowed)})")
        checked = {}
        for key, value in values.items():
            if key not in allowed:
                raise CladValueError(f"base metric {metric}: unknown parameter {key!r}{did_you_mean(str(key), allowed)}; "
                                     f"it takes: {', '.join(allowed)}")
            checked[key] = allowed[key](metric, key, value)
        out[metric] = checked
    return out


def chance_level(name: str, y, **params) -> float:
    """What a detector without scores (every row the same score) gets for base metric ``name`` on
    labels ``y``: ROC-AUC 0.5, average precision the anomaly rate, F1 of flagging every row, and for
    the range metrics :func:`clad.metrics.ranges.chance_level` (a time-series concept's point
    labels are the ones to give for those).

    >>> chance_level("average_precision", [0, 0, 0, 1]), chance_level("f1", [0, 0, 0, 1])
    (0.25, 0.4)
    """
    y = np.asarray(y)
    if name == "roc_auc":
        return 0.5
    if name == "average_precision":
        return float(np.mean(y != 0))
    if name == "f1":
        return float(f1_score(y, np.ones_like(y), zero_division=0.0))
    if name in TIME_AXIS_METRICS:
        return range_metrics.chance_level(name, y, **params)
    raise CladValueError(f"chance_level: unknown base metric {name!r}; allowed: {', '.join(BASE_METRICS)}")

def concept_chance_level(name: str, concept: Concept, **params) -> float:
    """:func:`chance_level` of base metric ``name`` on a test concept: its time points' labels for
    a range metric when it has a time axis, its row labels otherwise."""
    timed = name in TIME_AXIS_METRICS and concept.time is not None
    return chance_level(name, concept.time.y if timed else concept.y, **params)


#: points of the per-step trace of one series kept for the report (longer series are summarised)
TRACE_POINTS = 2000


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
class Scored:
    """Scores of one test set and the threshold for labels (``scores > threshold`` is an anomaly)."""

    scores: np.ndarray
    threshold: float

    @property
    def labels(self) -> np.ndarray:
        return (self.scores > self.threshold).astype(np.int8)


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

    def __init__(self, test_concepts: Sequence[Concept], base_metrics: Sequence[str] = (DEFAULT_BASE_METRIC,),
                 n_jobs: int | None = 1, observers: Iterable[Callable[[StepEvent | AnytimeEvent], None]] = (),
                 metric_params: dict | None = None):
        self.test_concepts = tuple(test_concepts)
        self.base_metrics = check_base_metrics(base_metrics)
        self.metric_params = check_metric_params(metric_params, self.base_metrics)
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
        self._timed = [c.time is not None for c in self.test_concepts]
        self._series_rows: list[list] = []
        self._last_series: list | None = None
        self._trace_at = self._trace_choice()
        self._trace_steps: list[dict] = []
        self._last_trace: dict | None = None

    @contextmanager
    def learning(self):
        """Time a ``learn`` call; the time is added to the next evaluated step."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._pending_fit += time.perf_counter() - t0
            self._last = None  # something was learned: the next evaluation must score again

    def _score_one(self, strategy, j: int, with_ids: bool) -> tuple[dict[str, float] | None, list | None, dict | None]:
        """Score test concept ``j`` once: its base metrics (None when undefined), its values per
        series (None without a time axis) and, for the traced concept, its traced series' scores."""
        concept = self.test_concepts[j]
        scored = strategy.score(concept.X, concept_id=concept.name if with_ids else None)
        if not isinstance(scored, Scored):
            raise CladValueError(
                f"strategy {type(strategy).__name__}: score() returned {type(scored).__name__}; "
                "expected clad.strategies.Scored(scores, threshold)"
            )
        trace = self._trace(concept, scored) if self._trace_at is not None and self._trace_at[0] == j else None
        series = self._per_series(concept, scored) if self._timed[j] else None
        if self._single_class[j]:
            return None, series, trace
        scores = np.asarray(scored.scores)
        if scores.size and np.all(scores == scores.flat[0]):
            self._warn_once(f"constant:{concept.name}", f"test concept {concept.name!r}: every score is the same "
                            f"({scores.flat[0]:g}), so its ROC-AUC is 0.5 and its other metrics say nothing about "
                            "the detector")
        points = None
        if self._timed[j] and any(m in TIME_AXIS_METRICS for m in self.base_metrics):
            points = (concept.time.y, Scored(concept.time.points(scores), scored.threshold))
            if np.unique(concept.time.y).size < 2:
                self._warn_once(f"points:{concept.name}", f"test concept {concept.name!r}: its time points hold a "
                                "single class; its range metrics are undefined and recorded as NaN")
                points = "undefined"
        values = {}
        # the arguments are clad's own, valid by construction: skip scikit-learn's parameter checks
        # (the data checks stay), which cost as much as the metric on a test set of a few hundred rows
        with sklearn.config_context(skip_parameter_validation=True):
            for m in self.base_metrics:
                if m in TIME_AXIS_METRICS and points is not None:
                    values[m] = float("nan") if points == "undefined" else self._metric(m, *points)
                else:
                    values[m] = self._metric(m, concept.y, scored)
        return values, series, trace

    def _metric(self, name: str, y, scored: Scored) -> float:
        # called only where both classes are present, so a range metric never warns here (no
        # warnings filter is changed: that is not thread-safe with n_jobs > 1)
        return float(BASE_METRICS[name](y, scored, **self.metric_params.get(name, {})))

    def _per_series(self, concept: Concept, scored: Scored) -> list[list[float]]:
        """Every base metric on every series of ``concept`` (NaN where a series holds one class)."""
        axis = concept.time
        rows, points = axis.row_bounds(), axis.point_bounds()
        point_scores = axis.points(scored.scores)
        out = []
        for k in range(len(axis.series)):
            y_rows, y_pts = concept.y[rows[k]:rows[k + 1]], axis.y[points[k]:points[k + 1]]
            s_rows = Scored(np.asarray(scored.scores)[rows[k]:rows[k + 1]], scored.threshold)
            s_pts = Scored(point_scores[points[k]:points[k + 1]], scored.threshold)
            row = []
            for m in self.base_metrics:
                y, s = (y_pts, s_pts) if m in TIME_AXIS_METRICS else (y_rows, s_rows)
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
                if c.time.y[bounds[k]:bounds[k + 1]].any():
                    return j, k
            return j, 0
        return None

    def _trace(self, concept: Concept, scored: Scored) -> dict:
        """The traced series' point scores and the threshold (at most :data:`TRACE_POINTS` points:
        a longer series is cut into that many equal buckets, each showing its largest score)."""
        k = self._trace_at[1]
        bounds = concept.time.point_bounds()
        scores = concept.time.points(scored.scores)[bounds[k]:bounds[k + 1]]
        return {"scores": _bucket(scores, np.max).tolist(), "threshold": float(scored.threshold)}

    def trace_record(self) -> dict | None:
        """The traced series (concept, name, values of its first feature, point labels as ranges,
        bucket size) and its scores and threshold after every step; None without a time axis."""
        if self._trace_at is None or not self._trace_steps:
            return None
        j, k = self._trace_at
        concept = self.test_concepts[j]
        bounds = concept.time.point_bounds()
        values = concept.time.values(concept.X)[bounds[k]:bounds[k + 1]]
        y = concept.time.y[bounds[k]:bounds[k + 1]]
        step = _bucket_size(y.size)
        return {"concept": concept.name, "series": concept.time.series[k], "n_points": int(y.size),
                "bucket": step, "values": [None if not np.isfinite(v) else float(v) for v in _bucket(values, np.nanmean)],
                "ranges": range_metrics.anomaly_ranges(y).tolist(), "steps": list(self._steps),
                "scores": [t["scores"] for t in self._trace_steps],
                "thresholds": [t["threshold"] for t in self._trace_steps]}

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
        self._last_series = [series for _, series, _ in cells]
        self._last_trace = next((t for _, _, t in cells if t is not None), None)
        for j, (values, _, _) in enumerate(cells):
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
        if any(self._timed):
            self._series_rows.append(self._last_series)
        if self._last_trace is not None:
            self._trace_steps.append(self._last_trace)
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
            per_series=self._per_series_record(),
            trace=self.trace_record(),
            chance=self._chance_levels(),
        )

    def _chance_levels(self) -> dict[str, list[float]]:
        """:func:`concept_chance_level` of every base metric and test concept, computed once."""
        out = {}
        for m in self.base_metrics:
            levels = []
            for j, c in enumerate(self.test_concepts):
                try:
                    levels.append(float("nan") if self._single_class[j] else
                                  float(concept_chance_level(m, c, **self.metric_params.get(m, {}))))
                except (ValueError, CladValueError):  # no chance level defined for it
                    levels.append(float("nan"))
            out[m] = levels
        return out

    def _per_series_record(self) -> dict | None:
        if not any(self._timed) or not self._series_rows:
            return None
        timed = [j for j, t in enumerate(self._timed) if t]
        names = {self.test_concepts[j].name: list(self.test_concepts[j].time.series) for j in timed}
        values = {m: {self.test_concepts[j].name: [[row[j][k][i] for k in range(len(row[j]))]
                                                   for row in self._series_rows] for j in timed}
                  for i, m in enumerate(self.base_metrics)}
        return {"series": names, "values": values,
                "chance": {m: {self.test_concepts[j].name: self._series_chance(self.test_concepts[j], m)
                               for j in timed} for m in self.base_metrics}}

    def _series_chance(self, concept: Concept, name: str) -> list[float]:
        """:func:`chance_level` of base metric ``name`` on every series of a time-series concept
        (its points' labels for a range metric, its rows' otherwise; NaN where a series holds one class)."""
        axis = concept.time
        rows, points = axis.row_bounds(), axis.point_bounds()
        out = []
        for k in range(len(axis.series)):
            y = (axis.y[points[k]:points[k + 1]] if name in TIME_AXIS_METRICS else concept.y[rows[k]:rows[k + 1]])
            try:
                out.append(float(chance_level(name, y, **self.metric_params.get(name, {})))
                           if np.unique(y).size == 2 else float("nan"))
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
    padded = np.concatenate([np.asarray(values, dtype=np.float64), np.full(pad, np.nan)]).reshape(-1, step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN bucket stays NaN
        return reduce(padded, axis=1) if reduce is np.nanmean else np.nanmax(padded, axis=1)


def check_reversed(R: dict[str, np.ndarray], steps: Sequence[str], test_names: Sequence[str],
                   chance: Mapping[str, Sequence[float]] | None = None) -> None:
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
        if name not in R or level is None or name in OPTIMISTIC_METRICS:
            continue
        pairs = [(R[name][i, position[s]], level[position[s]]) for i, s in enumerate(steps) if s in position]
        pairs = [(v, c) for v, c in pairs if np.isfinite(v) and np.isfinite(c)]
        below = sum(v < c for v, c in pairs)
        # most concepts below chance *and* their mean below the mean chance: a mean above chance
        # (a few good concepts) contradicts "reversed", so nothing is said
        if pairs and below > len(pairs) / 2 and np.mean([v for v, _ in pairs]) < np.mean([c for _, c in pairs]):
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
