"""The object API: a dataset, a scenario and a strategy object in, a run result out."""

from __future__ import annotations

import time
from typing import Callable, Sequence

from sklearn.base import clone

from ..detectors import as_detector, detector_name
from ..metrics import check_concept_names, learned_at, summarize
from .concepts import ConceptDataset
from .drift import stream_boundaries
from .evaluation import Evaluator, StepEvent, check_base_metrics
from .results import RunResult, versions
from .seeding import seed_run

__all__ = ["run_experiment"]


def _step_observer(on_step: Callable[[str, int], None]):
    """An evaluator observer that calls ``on_step(step_name, step_index)`` after each row of R."""

    def observe(event) -> None:
        if isinstance(event, StepEvent):
            on_step(event.step, event.index)

    return observe


def run_experiment(dataset: ConceptDataset, scenario, strategy, base_metrics: Sequence[str] = ("roc_auc",),
                   seed: int | None = None, labels: dict | None = None, config: dict | None = None,
                   on_step: Callable[[str, int], None] | None = None, n_jobs: int | None = 1) -> RunResult:
    """Run ``strategy`` through ``scenario`` on ``dataset`` and return the result.

    The strategy object is cloned (the caller's object is never fitted). With ``seed``, a
    ``random_state`` left as None in the strategy, its detector or the scenario is filled with a seed derived from
    it. ``on_step(step_name, step_index)``, if given, is called after each training step is
    evaluated (for progress display). ``n_jobs`` threads score the test concepts of a step
    concurrently (see :class:`~clad.evaluation.Evaluator`); R does not depend on it. A strategy
    with an ``extra_results(boundaries)`` method is asked, after the run, for a JSON-ready dict of
    what it reports beyond R, given the rows of the training stream at which each concept after
    the first starts (:func:`~clad.core.drift.stream_boundaries`); it is stored as ``extras``.

    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.datasets import make_synthetic
    >>> from clad.scenarios import ConceptAware
    >>> from clad.strategies import Naive
    >>> ds = make_synthetic(n_concepts=3, random_state=0)
    >>> r = run_experiment(ds, ConceptAware(), Naive(IsolationForest(n_estimators=20)), seed=0)
    >>> r.R["roc_auc"].shape, r.metrics["roc_auc"]["backward_transfer"] < 0
    ((3, 3), True)
    """
    base_metrics = check_base_metrics(base_metrics)
    strategy = clone(strategy)
    if seed is not None:
        seeded = seed_run(seed, strategy=strategy, scenario=scenario)
        strategy, scenario = seeded.strategy, seeded.scenario
    labels = dict(labels or {})
    t0 = time.perf_counter()
    observers = () if on_step is None else (_step_observer(on_step),)
    evaluator = Evaluator(dataset.test, base_metrics, n_jobs=n_jobs, observers=observers)
    evaluation = scenario.run(dataset, strategy, evaluator)
    total = time.perf_counter() - t0
    check_concept_names(evaluation.steps, dataset.test_names)  # warns when no name matches
    t = learned_at(evaluation.steps, dataset.test_names)
    metrics = {m: summarize(R, t) for m, R in evaluation.R.items()}
    anytime = None
    if evaluation.anytime_R is not None:
        anytime = {"rows_seen": list(evaluation.anytime_rows_seen), "R": evaluation.anytime_R}
    extra = getattr(strategy, "extra_results", None)  # what a strategy reports beyond R (optional)
    extras = extra(stream_boundaries(dataset)) if callable(extra) else None
    det_proto = strategy.get_params(deep=False).get("detector")
    return RunResult(
        dataset=labels.get("dataset", dataset.name),
        scenario=labels.get("scenario", getattr(scenario, "name", type(scenario).__name__)),
        strategy=labels.get("strategy", type(strategy).__name__),
        detector=labels.get("detector", detector_name(as_detector(det_proto)) if det_proto is not None else ""),
        seed=-1 if seed is None else int(seed),
        concepts=evaluation.steps,
        test_concepts=dataset.test_names,
        R=evaluation.R,
        metrics=metrics,
        timings={"fit": list(evaluation.fit_seconds), "score": list(evaluation.score_seconds), "total": total},
        versions=versions(),
        config=dict(config or {}),
        memory_rows=evaluation.memory_rows,
        anytime=anytime,
        extras=extras,
        run_id=labels.get("run_id"),
    )
