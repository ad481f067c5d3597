"""Running experiments: one run from objects, from a configuration, or a whole grid.

* :func:`run_experiment` — the Python API: a dataset, a scenario and a strategy object in, a
  :class:`~clad.results.RunResult` out.
* :class:`RunConfig` / :func:`run_config` — the same from registered names and parameters (what a
  spec file expands to); every stochastic piece gets a seed derived from the run seed with
  :class:`numpy.random.SeedSequence`, so the same configuration gives bit-identical R.
* :func:`run_safely` — :func:`run_config` where a run that raises becomes a failed result with its
  traceback. Whole grids (sequential, worker processes, Dask) are run by :mod:`clad.executors`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from sklearn.base import clone

from . import __version__
from .concepts import ConceptDataset
from .detectors import as_detector, detector_name, make_detector, set_random_state
from .evaluation import Evaluator, check_base_metrics
from .metrics import learned_at, summarize
from .results import RunResult, versions

__all__ = ["Component", "RunConfig", "derive_seeds", "run_experiment", "run_config", "run_safely",
           "build_run", "failed_result", "dataset_key"]

log = logging.getLogger(__name__)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)


@dataclass(frozen=True)
class Component:
    """A registered name (or import path) with keyword parameters and a display label."""

    name: str
    params: dict = field(default_factory=dict)
    label: str | None = None

    @property
    def display(self) -> str:
        return self.label or self.name

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "label": self.display}


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides one run's numbers."""

    dataset: Component
    scenario: Component
    strategy: Component
    detector: Component
    seed: int = 0
    base_metrics: tuple[str, ...] = ("roc_auc",)

    def to_dict(self) -> dict:
        return {
            "dataset": self.dataset.to_dict(),
            "scenario": self.scenario.to_dict(),
            "strategy": self.strategy.to_dict(),
            "detector": self.detector.to_dict(),
            "seed": int(self.seed),
            "base_metrics": list(self.base_metrics),
        }

    @property
    def run_id(self) -> str:
        """A hash of the full configuration and clad's version (the run's identity)."""
        return hashlib.sha256(_canonical({"config": self.to_dict(), "clad": __version__}).encode()).hexdigest()[:16]

    def describe(self) -> str:
        return (f"{self.dataset.display} / {self.scenario.display} / {self.strategy.display} / "
                f"{self.detector.display} / seed {self.seed}")


def derive_seeds(seed: int) -> dict[str, int]:
    """Independent 32-bit seeds for the dataset, the detector, the strategy and the scenario of a run.

    >>> derive_seeds(0) == derive_seeds(0), derive_seeds(0) == derive_seeds(1)
    (True, False)
    """
    children = np.random.SeedSequence(int(seed)).spawn(4)
    ints = [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]
    return dict(zip(("dataset", "detector", "strategy", "scenario"), ints))


class _StepEvaluator(Evaluator):
    """An :class:`Evaluator` that tells ``on_step(step_name, step_index)`` after each row of R
    (it only observes: nothing it is given can change the run)."""

    def __init__(self, test_concepts, base_metrics, on_step, n_jobs=1):
        super().__init__(test_concepts, base_metrics, n_jobs=n_jobs)
        self._on_step = on_step
        self._n_rows = 0

    def evaluate(self, strategy, step, with_ids, memory_rows=None, concept_end=True, anytime_rows_seen=None):
        super().evaluate(strategy, step, with_ids, memory_rows=memory_rows, concept_end=concept_end,
                         anytime_rows_seen=anytime_rows_seen)
        if concept_end:
            self._n_rows += 1
            self._on_step(str(step), self._n_rows - 1)


def run_experiment(dataset: ConceptDataset, scenario, strategy, base_metrics: Sequence[str] = ("roc_auc",),
                   seed: int | None = None, labels: dict | None = None, config: dict | None = None,
                   on_step: Callable[[str, int], None] | None = None, n_jobs: int | None = 1) -> RunResult:
    """Run ``strategy`` through ``scenario`` on ``dataset`` and return the result.

    The strategy object is cloned (the caller's object is never fitted). With ``seed``, a
    ``random_state`` left as None in the strategy, its detector or the scenario is filled with a seed derived from
    it. ``on_step(step_name, step_index)``, if given, is called after each training step is
    evaluated (for progress display). ``n_jobs`` threads score the test concepts of a step
    concurrently (see :class:`~clad.evaluation.Evaluator`); R does not depend on it.

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
        seeds = derive_seeds(seed)
        params = strategy.get_params(deep=False)
        if "random_state" in params and params["random_state"] is None:
            strategy.set_params(random_state=seeds["strategy"])
        if params.get("detector") is not None:
            det = as_detector(params["detector"])
            set_random_state(det, seeds["detector"])
            strategy.set_params(detector=det)
        if getattr(scenario, "random_state", "absent") is None:  # e.g. a gradual transition's interleaving
            scenario = clone(scenario).set_params(random_state=seeds["scenario"])
    labels = dict(labels or {})
    t0 = time.perf_counter()
    evaluator = (Evaluator(dataset.test, base_metrics, n_jobs=n_jobs) if on_step is None
                 else _StepEvaluator(dataset.test, base_metrics, on_step, n_jobs=n_jobs))
    evaluation = scenario.run(dataset, strategy, evaluator)
    total = time.perf_counter() - t0
    t = learned_at(evaluation.steps, dataset.test_names)
    metrics = {m: summarize(R, t) for m, R in evaluation.R.items()}
    anytime = None
    if evaluation.anytime_R is not None:
        anytime = {"rows_seen": list(evaluation.anytime_rows_seen), "R": evaluation.anytime_R}
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
        run_id=labels.get("run_id"),
    )


@functools.lru_cache(maxsize=4)
def _cached_dataset(name: str, params_json: str) -> ConceptDataset:
    from .datasets import load_dataset

    return load_dataset(name, json.loads(params_json))


def _dataset_params(cfg: RunConfig, seeds: dict) -> dict:
    from .datasets import DATASETS

    params = dict(cfg.dataset.params)
    if "random_state" not in params:
        import inspect

        try:
            factory = DATASETS.resolve(cfg.dataset.name)
            if "random_state" in inspect.signature(factory).parameters:
                params["random_state"] = seeds["dataset"]
        except (TypeError, ValueError):
            pass
    return params


def dataset_key(cfg: RunConfig) -> tuple[str, str]:
    """The dataset a configuration loads, as ``(loader name, canonical parameters)``: runs with the
    same key share one cached dataset, so executors run them one after another."""
    return cfg.dataset.name, _canonical(_dataset_params(cfg, derive_seeds(cfg.seed)))


def build_run(cfg: RunConfig):
    """The dataset, scenario and strategy objects of a configuration (the dataset is cached per
    process, so a grid loads each dataset once per worker)."""
    from .scenarios import SCENARIOS
    from .strategies import make_strategy

    seeds = derive_seeds(cfg.seed)
    dataset = _cached_dataset(*dataset_key(cfg))
    scenario = SCENARIOS.build(cfg.scenario.name, cfg.scenario.params)
    detector = make_detector(cfg.detector.name, cfg.detector.params, random_state=seeds["detector"])
    strategy = make_strategy(cfg.strategy.name, detector, cfg.strategy.params, random_state=seeds["strategy"])
    return dataset, scenario, strategy


def run_config(cfg: RunConfig, on_step: Callable[[str, int], None] | None = None) -> RunResult:
    """Run one configuration (see :class:`RunConfig`); errors propagate. ``on_step`` as in
    :func:`run_experiment`."""
    dataset, scenario, strategy = build_run(cfg)
    labels = {"dataset": cfg.dataset.display, "scenario": cfg.scenario.display,
              "strategy": cfg.strategy.display, "detector": cfg.detector.display, "run_id": cfg.run_id}
    return run_experiment(dataset, scenario, strategy, cfg.base_metrics, seed=cfg.seed, labels=labels,
                          config=cfg.to_dict(), on_step=on_step)


def failed_result(cfg: RunConfig, error: str) -> RunResult:
    """The record of a run that raised: its configuration, ``status="failed"`` and the traceback."""
    return RunResult(
        dataset=cfg.dataset.display, scenario=cfg.scenario.display, strategy=cfg.strategy.display,
        detector=cfg.detector.display, seed=int(cfg.seed), versions=versions(), config=cfg.to_dict(),
        status="failed", error=error, run_id=cfg.run_id,
    )


def run_safely(cfg: RunConfig, on_step: Callable[[str, int], None] | None = None) -> RunResult:
    """:func:`run_config`, but an exception becomes a failed result carrying its traceback."""
    try:
        return run_config(cfg, on_step=on_step)
    except Exception:  # noqa: BLE001 - a failed run is recorded, the grid goes on
        return failed_result(cfg, traceback.format_exc())
