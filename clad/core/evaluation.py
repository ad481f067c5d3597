"""Evaluation into the matrix R.

After a training step the :class:`Evaluator` scores **each test concept once** through the
strategy and fills every requested base metric from those same scores (ROC-AUC and average
precision from the scores, F1 from ``scores > threshold``). A cell whose metric is undefined
(a single-class test concept) is NaN, with one warning naming the concept; it never stops a run.

``n_jobs`` scores the test concepts of a step concurrently in threads; R is bit-identical either
way, each test concept still scored once by the same fitted model into its own cells (which
detectors it suits: ``docs/guides/performance.md``).

A scenario tells the evaluator what a step is by the method it calls: :meth:`Evaluator.end_of_concept`
after the last row of a training concept (a row of R) and :meth:`Evaluator.anytime` every few
batches of a stream (a row of the anytime matrix). Code that wants to follow a run passes
*observers*: callables that receive a frozen event (:class:`StepEvent`, :class:`AnytimeEvent`)
after each row and can change nothing.

The evaluator reads each base metric's declaration (:mod:`clad.metrics.base`): one declared
``input="scores"`` is given the scores, one declared ``input="labels"`` the labels ``scores >
threshold``. A time-axis metric is computed on the time points of a test concept that has a time
axis, else on its rows in order; such a concept's values per series and one series' scores are
kept too (:mod:`clad.core.series_values`).
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

from ..defaults import DEFAULT_BASE_METRIC
from ..errors import CladValueError, RunWarning
from ..metrics.base import BaseMetric, check_base_metrics, check_metric_params, get_base_metric
from ..validation import check_n_jobs
from . import steps as step_sharing
from .chance import chance_levels
from .concepts import Concept
from .prequential import Prequential
from .scored import Scored, check_scored, flags
from .series_values import per_series, per_series_record, trace_choice, trace_record, trace_scores
from .step_keys import combine, rows_fingerprint, score_key
from .thresholds import calibrated_thresholds, check_threshold, realised_fpr, threshold_record

__all__ = ["Evaluator", "Evaluation", "StepEvent", "AnytimeEvent"]

#: what the single-class warning adds where the concept's additive base metrics are kept
_ADDITIVE_KEPT = " (its additive ones, counts and raw scores, are kept)"


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
    metric_params : dict, optional
        Parameters of a base metric (e.g. ``{"vus_pr": {"window": 50}}``): see
        :attr:`BaseMetric.params <clad.metrics.base.BaseMetric.params>`.
    n_jobs : int or None, default 1
        Threads scoring the test concepts of a step concurrently (-1: one per CPU). R does not
        depend on it (the detectors it suits: ``docs/guides/performance.md``).
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

    Examples
    --------
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
        # the training concept whose calibration rows set the threshold
        self._cal_name: str | None = None
        self._last_cal: str | None = None
        self._last_fpr: list | None = None
        self._fpr_rows: list[list[tuple[float, float]]] = []
        # per scoring pass: calibration rows scored with each test concept
        self._joint_calibration: list[bool] = []
        self.base_metrics = check_base_metrics(base_metrics)
        self.metric_params = check_metric_params(metric_params, self.base_metrics)
        self._decls: dict[str, BaseMetric] = {m: get_base_metric(m) for m in self.base_metrics}
        self._time_axis = {m: d.time_axis for m, d in self._decls.items()}
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
        self._trace_at = trace_choice(self.test_concepts)
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
                self._rows_fp[j] = rows_fingerprint(concept.X)
            skey = score_key(strategy, concept_id)
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
            self._labels_fp[j] = rows_fingerprint(self.test_concepts[j].y)
        return "values:" + combine(
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
        traced = self._trace_at is not None and self._trace_at[0] == j
        trace = trace_scores(concept, scored, self._trace_at[1]) if traced else None
        series = (
            per_series(concept, scored, self._time_axis, self._metric) if self._timed[j] else None
        )
        if self._single_class[j]:
            counts = [m for m in self.base_metrics if self._decls[m].additive]
            # a count is defined on one class too; the other metrics are not
            values = {
                m: self._metric(m, concept.y, scored) if m in counts else float("nan")
                for m in self.base_metrics
            }
            return (values if counts else None), series, trace, fpr
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

        def value(m: str) -> float:
            if not self._decls[m].time_axis or points is None:
                return self._metric(m, concept.y, scored)
            return float("nan") if points == "undefined" else self._metric(m, *points)

        def compute() -> dict[str, float]:
            # the arguments are clad's own, valid by construction: skip scikit-learn's parameter checks
            # (the data checks stay), which cost as much as the metric on a test set of a few hundred rows
            with sklearn.config_context(skip_parameter_validation=True):
                return {m: value(m) for m in self.base_metrics}

        if values_key is None:
            return compute(), series, trace, fpr
        # the values of shared scores are shared too (a pure function of the scores and labels)
        return dict(self._cache.memo(values_key, compute, self._origin)), series, trace, fpr

    def _metric(self, name: str, y, scored: Scored) -> float:
        # called only where both classes are present, so a range metric never warns here (no
        # warnings filter is changed: that is not thread-safe with n_jobs > 1)
        decl = self._decls[name]
        x = scored.scores if decl.input == "scores" else flags(scored)
        return decl.checked(y, x, **self.metric_params.get(name, {}))

    def _warn_once(self, key: str, message: str, category: type[Warning] = RunWarning) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, category, stacklevel=3)

    def _calibrated(self, strategy, with_ids: bool) -> list[float | None]:
        """Each test concept's threshold under the policy: None (the strategy's own) for ``"own"``;
        else the ``1 - fpr`` quantile of the model's scores on the calibration rows of the concept
        just learned, scored as the test concept is: with its concept id where the scenario gives
        ids (a strategy that ignores the id gets the same threshold in every scenario), and, when the
        model's score of a row depends on the rows scored with it, in the test concept's batch
        (:func:`~clad.core.thresholds.calibrated_thresholds`)."""
        if self.threshold == "own":
            return [None] * len(self.test_concepts)
        learned = (
            self._cal_name if self._cal_name in self._calibration else next(iter(self._calibration))
        )
        thresholds, joint = calibrated_thresholds(
            strategy,
            self.test_concepts,
            self._calibration[learned],
            self.threshold["fpr"],
            with_ids,
        )
        if joint is not None:
            self._joint_calibration.append(joint)
        return thresholds

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
                self._warn_once(
                    name,
                    f"test concept {name!r} has a single class; its base metrics are undefined and "
                    f"recorded as NaN{'' if values is None else _ADDITIVE_KEPT}",
                    RuntimeWarning,
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
        """Test-then-train: score the batch ``X`` (labels ``y``) before it is learned.

        Parameters
        ----------
        strategy : Strategy
            The strategy whose ``score`` scores the batch (as it is before learning it).
        X : array
            The batch's rows.
        y : array of int
            Their labels (1 = anomaly).
        rows_seen : int
            Training rows learned before this batch.
        window : int
            How many of the last batches make the windowed scores (see
            :class:`~clad.core.prequential.Prequential`).
        """
        self._preq.window = int(window)
        scored = strategy.score(X, concept_id=None)
        what = f"the batch after {rows_seen} training rows"
        self._preq.add(np.asarray(y), check_scored(scored, len(X), strategy, what), rows_seen)

    def result(self) -> Evaluation:
        self.close()
        any_seen = tuple(self._any_seen) or None
        return Evaluation(
            R={m: np.vstack(rows) for m, rows in self._rows.items()},
            steps=tuple(self._steps),
            fit_seconds=tuple(self._fit),
            score_seconds=tuple(self._score),
            memory_rows=tuple(self._memory),
            anytime_R={m: np.vstack(r) for m, r in self._any_rows.items()} if any_seen else None,
            anytime_rows_seen=any_seen,
            anytime_task=tuple(self._any_task) if any_seen else None,
            learned_rows=tuple(self._learned_rows)
            if any(r is not None for r in self._learned_rows)
            else None,
            prequential=self._preq.record(),
            per_series=self._per_series_record(),
            trace=self._trace_record(),
            chance=self._chance_levels(),
            threshold=threshold_record(
                self.threshold, self._fpr_rows, self._calibration, self._joint_calibration
            ),
            work={
                **self._work,
                **({"cache_bytes": int(self._cache.peak_bytes)} if self._cache is not None else {}),
            },
        )

    def _chance_levels(self) -> dict[str, list[float]]:
        """:func:`concept_chance_level` of every base metric and test concept, computed once (once
        per grid process where steps are shared: a function of the labels alone)."""
        if self._cache is None or any(self._timed):
            return self._compute_chance_levels()
        key = "chance:" + combine(
            [rows_fingerprint(c.y) for c in self.test_concepts],
            self.base_metrics,
            sorted(self.metric_params.items()),
        )
        return {
            m: list(v)
            for m, v in self._cache.memo(key, self._compute_chance_levels, self._origin).items()
        }

    def _compute_chance_levels(self) -> dict[str, list[float]]:
        return chance_levels(
            self.test_concepts, self.base_metrics, self.metric_params, self._single_class
        )

    def _trace_record(self) -> dict | None:
        """The traced series and its scores after every step (:func:`trace_record`); None without a
        time axis."""
        if self._trace_at is None or not self._trace_steps:
            return None
        j, k = self._trace_at
        return trace_record(self.test_concepts[j], k, self._steps, self._trace_steps)

    def _per_series_record(self) -> dict | None:
        if not any(self._timed) or not self._series_rows:
            return None
        return per_series_record(
            self.test_concepts, self._series_rows, self._decls, self.metric_params
        )


def _memory_rows(strategy) -> int:
    fn = getattr(strategy, "memory_rows", None)
    return int(fn()) if callable(fn) else 0
