"""The object API: a dataset, a scenario and a strategy object in, a run result out."""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Callable, Sequence

import numpy as np
from sklearn.base import clone

from ..defaults import DEFAULT_BASE_METRIC
from ..detectors import as_detector, detector_name
from ..errors import CladValueError, RunTimeoutError
from ..metrics import check_concept_names, learned_at, summarize
from .concepts import ConceptDataset
from .boundaries import stream_boundaries
from ..metrics.base import check_base_metrics
from ..metrics.counts import COUNT_METRICS
from ..metrics.nab import NAB_METRICS, nab_record
from ..metrics.pooled import pooled_record
from .data_checks import check_data, check_reversed
from .evaluation import Evaluator, StepEvent
from .thresholds import calibration_seed, calibration_split, check_calibration_rows, check_threshold
from .memory import peak_rss
from ..results.record import RunResult, versions
from .run_warnings import recording
from .seeding import seed_run
from .steps import set_origin
from .time_limit import RunTimeout, check_timeout, time_limit, time_limit_usable

__all__ = ["run_experiment"]


def _step_observer(on_step: Callable[[str, int], None]):
    """An evaluator observer that calls ``on_step(step_name, step_index)`` after each row of R."""

    def observe(event) -> None:
        if isinstance(event, StepEvent):
            on_step(event.step, event.index)

    return observe


def _anytime_input(anytime: dict | None, base_metric: str) -> dict:
    """``summarize``'s ``anytime`` input for one base metric (none when the run has no anytime matrix
    or it does not say which training concept each evaluation came during)."""
    if anytime is None or any(k is None for k in anytime["task"]):
        return {}
    return {
        "anytime": {
            "R": anytime["R"][base_metric],
            "task": anytime["task"],
            "rows_seen": anytime["rows_seen"],
        }
    }


def run_experiment(
    dataset: ConceptDataset,
    scenario,
    strategy,
    base_metrics: Sequence[str] = (DEFAULT_BASE_METRIC,),
    seed: int | None = None,
    labels: dict | None = None,
    config: dict | None = None,
    on_step: Callable[[str, int], None] | None = None,
    n_jobs: int | None = 1,
    metric_params: dict | None = None,
    timeout: float | None = None,
    threshold="own",
    threshold_seed: int | None = None,
) -> RunResult:
    """Run ``strategy`` through ``scenario`` on ``dataset`` and return the result.

    The strategy object is cloned (the caller's object is never fitted). With ``seed``, a
    ``random_state`` left as None in the strategy, its detector or the scenario is filled with a seed derived from
    it. ``on_step(step_name, step_index)``, if given, is called after each training step is
    evaluated (for progress display). ``n_jobs`` threads score the test concepts of a step
    concurrently (see :class:`~clad.core.evaluation.Evaluator`); R does not depend on it. A strategy
    with an ``extra_results(boundaries)`` method is asked, after the run, for a JSON-ready dict of
    what it reports beyond R, given the rows of the training stream at which each concept after
    the first starts (:func:`~clad.core.boundaries.stream_boundaries`); it is stored as ``extras``. Warnings
    raised while the run computes (a library's, or clad's :class:`~clad.errors.RunWarning` about a
    degenerate run) are recorded in ``RunResult.warnings`` instead of being shown. ``metric_params``
    gives base metrics their parameters (:func:`~clad.metrics.base.check_metric_params`). For
    test concepts with a time axis, the values per series and the trace of one series go into
    ``extras["time_series"]`` (``{"per_series": ..., "trace": ...}``, see
    :class:`~clad.core.evaluation.Evaluation`). The run's peak memory
    (:func:`~clad.core.memory.peak_rss` around the scenario's loop) is ``RunResult.peak_memory``.
    With ``timeout`` (seconds), a run that takes longer is stopped and a
    :class:`~clad.errors.RunTimeoutError` raised (``SIGALRM``: in the main thread on POSIX; a
    :class:`~clad.errors.CladValueError` says so elsewhere rather than letting a hanging
    ``score()`` hang the caller). ``threshold`` is the threshold policy (:mod:`clad.core.thresholds`):
    ``"own"``, or ``{"fpr": x}``, which first takes a calibration split of every training concept's
    normal rows, drawn from ``threshold_seed`` (default ``seed``, else 0); the policy, the thresholds
    and the false-positive rates they reached are ``RunResult.threshold``.

    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.datasets import make_synthetic
    >>> from clad.scenarios import ConceptAware
    >>> from clad.strategies import Naive
    >>> ds = make_synthetic(n_concepts=3, random_state=0)
    >>> r = run_experiment(ds, ConceptAware(), Naive(IsolationForest(n_estimators=20)), seed=0)
    >>> r.R["roc_auc"].shape, r.metrics["roc_auc"]["backward_transfer"] < 0
    ((3, 3), True)
    """
    _check_objects(dataset, scenario, strategy)
    base_metrics = check_base_metrics(base_metrics)
    threshold = check_threshold(threshold)
    if threshold_seed is None:
        threshold_seed = 0 if seed is None else int(seed)
    timeout = check_timeout(timeout)
    if timeout is not None and not time_limit_usable():
        raise CladValueError(
            "run_experiment(timeout=...) needs the main thread of a POSIX process (it uses "
            "SIGALRM); call it from there, or run the spec with `clad run --timeout`"
        )
    args = (dataset, scenario, strategy, base_metrics, seed, labels, config, on_step, n_jobs)
    args += (metric_params, threshold, threshold_seed)
    try:
        with nullcontext() if timeout is None else time_limit(timeout):
            return _run_experiment(*args)
    except RunTimeout as exc:
        if timeout is None:  # an enclosing limit (an executor's) stays the caller's to catch
            raise
        raise RunTimeoutError(str(exc)) from None


def _check_objects(dataset, scenario, strategy) -> None:
    """A :class:`~clad.errors.CladTypeError` naming the argument when ``dataset``, ``scenario`` or
    ``strategy`` is not an object of that kind (a name, None, a list): run_experiment takes objects;
    names are for spec files."""
    from ..errors import CladTypeError

    if not isinstance(dataset, ConceptDataset):
        raise CladTypeError(
            f"run_experiment: dataset is {type(dataset).__name__} {dataset!r:.60}; expected a "
            "clad.ConceptDataset (e.g. clad.make_synthetic(...); names are for spec files)"
        )
    if not callable(getattr(scenario, "run", None)) or isinstance(scenario, type):
        raise CladTypeError(
            f"run_experiment: scenario is {type(scenario).__name__} {scenario!r:.60}; expected a "
            "scenario object, e.g. clad.ConceptAware() (names are for spec files)"
        )
    if not (
        callable(getattr(strategy, "learn", None)) and callable(getattr(strategy, "score", None))
    ) or isinstance(strategy, type):
        raise CladTypeError(
            f"run_experiment: strategy is {type(strategy).__name__} {strategy!r:.60}; expected a "
            "strategy object with learn() and score(), e.g. clad.Naive(detector) (names are for "
            "spec files)"
        )


def _run_experiment(
    dataset,
    scenario,
    strategy,
    base_metrics,
    seed,
    labels,
    config,
    on_step,
    n_jobs,
    metric_params,
    threshold="own",
    threshold_seed=0,
) -> RunResult:
    labels = dict(labels or {})
    strategy, scenario = _seeded(strategy, scenario, seed, labels)
    t0 = time.perf_counter()
    observers = () if on_step is None else (_step_observer(on_step),)
    det_proto = strategy.get_params(deep=False).get("detector")
    calibration = None
    if threshold != "own":  # held out of training before anything is trained, as a tuning split is
        dataset, calibration = calibration_split(
            dataset, threshold["calibration"], calibration_seed(threshold_seed)
        )
    with recording() as flagged:  # every warning of the run lands in its record
        check_data(dataset, det_proto, getattr(scenario, "batch_size", None))
        if calibration is not None:
            check_calibration_rows(calibration, threshold["fpr"])
        evaluator = Evaluator(
            dataset.test,
            base_metrics,
            n_jobs=n_jobs,
            observers=observers,
            metric_params=metric_params,
            threshold=threshold,
            calibration=calibration,
            train_names=dataset.train_names,
        )
        with peak_rss() as peak:
            evaluation = scenario.run(dataset, strategy, evaluator)
        total = time.perf_counter() - t0
        anytime, metrics = _summaries(evaluation, dataset, det_proto)
    return RunResult(
        dataset=labels.get("dataset", dataset.name),
        scenario=labels.get("scenario", getattr(scenario, "name", type(scenario).__name__)),
        strategy=labels.get("strategy", type(strategy).__name__),
        detector=labels.get(
            "detector", detector_name(as_detector(det_proto)) if det_proto is not None else ""
        ),
        seed=-1 if seed is None else int(seed),
        concepts=evaluation.steps,
        test_concepts=dataset.test_names,
        R=evaluation.R,
        metrics=metrics,
        timings={
            "fit": list(evaluation.fit_seconds),
            "score": list(evaluation.score_seconds),
            "total": total,
            **({"work": evaluation.work} if evaluation.work is not None else {}),
        },
        versions=versions(),
        config=dict(config or {}),
        memory_rows=evaluation.memory_rows,
        anytime=anytime,
        extras=_extras(evaluation, dataset, strategy),
        learned_rows=evaluation.learned_rows,
        prequential=evaluation.prequential,
        order=None if dataset.metadata.get("order") is None else str(dataset.metadata["order"]),
        run_id=labels.get("run_id"),
        warnings=tuple(flagged),
        peak_memory=peak.bytes,
        chance=evaluation.chance,
        threshold=evaluation.threshold,
    )


def _seeded(strategy, scenario, seed, labels: dict):
    """The run's own clone of ``strategy`` and the scenario, seeded from ``seed`` when given; the
    run's warnings are said to come from the run (its id, else its strategy)."""
    strategy = clone(strategy)
    if seed is not None:
        seeded = seed_run(seed, strategy=strategy, scenario=scenario)
        strategy, scenario = seeded.strategy, seeded.scenario
    set_origin(
        run=f"run {labels['run_id']}"
        if labels.get("run_id")
        else f"{labels.get('strategy', type(strategy).__name__)} run"
    )
    return strategy, scenario


def _summaries(evaluation, dataset, det_proto) -> tuple[dict | None, dict]:
    """A run's anytime record (None without an anytime matrix) and its continual metrics per base
    metric, after the checks of its concept names and of reversed scores (which warn)."""
    check_concept_names(evaluation.steps, dataset.test_names)  # warns when no name matches
    t = learned_at(evaluation.steps, dataset.test_names)
    if not getattr(det_proto, "_clad_baseline", False):  # a baseline below chance is its purpose
        check_reversed(evaluation.R, evaluation.steps, dataset.test_names, evaluation.chance)
    anytime = None
    if evaluation.anytime_R is not None:
        anytime = {
            "rows_seen": list(evaluation.anytime_rows_seen),
            "task": list(evaluation.anytime_task),
            "boundaries": np.cumsum([c.n_rows for c in dataset.train]).tolist(),
            "R": evaluation.anytime_R,
        }
    metrics = {m: summarize(R, t, **_anytime_input(anytime, m)) for m, R in evaluation.R.items()}
    return anytime, metrics


def _extras(evaluation, dataset, strategy) -> dict | None:
    """What a run records beyond R: the strategy's ``extra_results`` (optional), the time-series
    values, a loader's own split, the pooled scores of confusion counts and NAB's scoreboard."""
    extra = getattr(strategy, "extra_results", None)
    extras = extra(stream_boundaries(dataset)) if callable(extra) else None
    if evaluation.per_series is not None:
        time_series = {"per_series": evaluation.per_series, "trace": evaluation.trace}
        extras = {**(extras or {}), "time_series": time_series}
    if isinstance(dataset.metadata.get("split"), dict):  # a loader's own (e.g. time-ordered) split
        extras = {**(extras or {}), "split": dataset.metadata["split"]}
    if all(m in evaluation.R for m in COUNT_METRICS):  # their pooled scores, per set of cells
        pooled = pooled_record(evaluation.R, evaluation.steps, dataset.test_names)
        extras = {**(extras or {}), "pooled": pooled}
    if any(m in evaluation.R for m in NAB_METRICS):  # the scoreboard's normalised score
        labels = {c.name: c.y for c in dataset.test}
        extras = {**(extras or {}), "nab": nab_record(evaluation.R, evaluation.steps, labels)}
    return extras
