"""One seeding path: how a run seed reaches every stochastic part of a run.

:func:`derive_seeds` spawns independent 32-bit seeds for the dataset, the detector, the strategy and
the scenario from the run seed (:class:`numpy.random.SeedSequence`). :func:`seed_run` applies them,
once per run, wherever the run comes from: :func:`clad.core.experiment.run_experiment` (objects)
and :func:`clad.engine.run.build_run` (a configuration of registered names) both call it. Only a
``random_state`` left as ``None`` (or, for dataset parameters, not given) is filled, so a seed set
explicitly always wins; the objects passed in are never changed (seeded copies are returned).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["derive_seeds", "seed_run", "SeededRun", "seed_consumers", "validation_seed"]


def derive_seeds(seed: int) -> dict[str, int]:
    """Independent 32-bit seeds for the dataset, the detector, the strategy and the scenario of a run.

    >>> derive_seeds(0) == derive_seeds(0), derive_seeds(0) == derive_seeds(1)
    (True, False)
    >>> sorted(derive_seeds(0))
    ['dataset', 'detector', 'scenario', 'strategy']
    """
    children = np.random.SeedSequence(int(seed)).spawn(4)
    ints = [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]
    return dict(zip(("dataset", "detector", "strategy", "scenario"), ints))


def validation_seed(seed: int) -> int:
    """The seed of a run's validation split (:mod:`clad.core.data_views`): a fifth child of the run
    seed, independent of the four of :func:`derive_seeds`, so that a tuning run and the evaluation
    run it serves (same run seed) split every test concept alike.

    >>> validation_seed(0) == validation_seed(0), validation_seed(0) in derive_seeds(0).values()
    (True, False)
    """
    return int(
        np.random.SeedSequence(int(seed), spawn_key=(4,)).generate_state(1, dtype=np.uint32)[0]
    )


@dataclass(frozen=True)
class SeededRun:
    """What :func:`seed_run` gives back: seeded copies (None where nothing was given)."""

    strategy: Any = None
    scenario: Any = None
    dataset_params: dict | None = None


def _takes_random_state(factory: Callable | None) -> bool:
    if factory is None:
        return False
    try:
        return "random_state" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def seed_run(
    seed: int,
    strategy=None,
    scenario=None,
    dataset_factory: Callable | None = None,
    dataset_params: Mapping | None = None,
) -> SeededRun:
    """Apply the run ``seed`` to a run's parts, deriving their seeds once (:func:`derive_seeds`).

    * ``dataset_params`` (keyword parameters of the loader ``dataset_factory``) get
      ``random_state`` if the loader takes one and the parameters do not set it;
    * the ``strategy`` (a clone of it) gets ``random_state`` if it has one left as None, and its
      detector prototype (wrapped by :func:`clad.detectors.as_detector`) likewise;
    * the ``scenario`` (a clone, only if needed) gets ``random_state`` if it has one left as None.

    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.datasets import make_synthetic
    >>> from clad.strategies import Replay
    >>> seeded = seed_run(0, strategy=Replay(IsolationForest()), dataset_factory=make_synthetic,
    ...                   dataset_params={"n_concepts": 2})
    >>> seeds = derive_seeds(0)
    >>> seeded.strategy.random_state == seeds["strategy"], seeded.dataset_params["random_state"] == seeds["dataset"]
    (True, True)
    >>> seeded.strategy.detector.estimator.random_state == seeds["detector"]
    True
    """
    from sklearn.base import clone

    from ..detectors import as_detector, set_random_state
    from ..validation import SEED, check

    check("run", {"seed": seed}, {"seed": [SEED]})  # never numpy's message, never 1.5 -> 1
    seeds = derive_seeds(seed)
    params = None
    if dataset_params is not None:
        params = dict(dataset_params)
        if "random_state" not in params and _takes_random_state(dataset_factory):
            params["random_state"] = seeds["dataset"]
    if strategy is not None:
        strategy = clone(strategy)
        own = strategy.get_params(deep=False)
        if "random_state" in own and own["random_state"] is None:
            strategy.set_params(random_state=seeds["strategy"])
        if own.get("detector") is not None:
            detector = as_detector(own["detector"])
            set_random_state(detector, seeds["detector"])
            strategy.set_params(detector=detector)
    # e.g. a gradual transition's interleaving
    if getattr(scenario, "random_state", "absent") is None:
        scenario = clone(scenario).set_params(random_state=seeds["scenario"])
    return SeededRun(strategy=strategy, scenario=scenario, dataset_params=params)


def _seed_of(obj) -> Any:
    from ..detectors.base import DetectorAdapter

    target = obj.estimator if isinstance(obj, DetectorAdapter) else obj
    return getattr(target, "random_state", None), getattr(target, "uses_random_state", True)


def seed_consumers(
    strategy=None,
    scenario=None,
    dataset_factory: Callable | None = None,
    dataset_params: Mapping | None = None,
) -> tuple[str, ...]:
    """The parts of a run whose result depends on the run seed: those :func:`seed_run` gives a
    seed to (found by seeding with two seeds and comparing, so this follows :func:`seed_run`'s
    rules), less those that declare they never use it (a class or loader attribute
    ``uses_random_state = False``, e.g. a strategy that only hands the seed on).

    >>> from sklearn.ensemble import IsolationForest
    >>> from sklearn.neighbors import LocalOutlierFactor
    >>> from clad.strategies import Naive, Replay
    >>> seed_consumers(strategy=Naive(LocalOutlierFactor(novelty=True)))
    ()
    >>> seed_consumers(strategy=Replay(IsolationForest()))
    ('strategy', 'detector')
    """
    a, b = (seed_run(s, strategy, scenario, dataset_factory, dataset_params) for s in (1, 2))
    parts = []
    if a.dataset_params != b.dataset_params and getattr(dataset_factory, "uses_random_state", True):
        parts.append("dataset")
    if strategy is not None:
        detectors = [s.get_params(deep=False).get("detector") for s in (a.strategy, b.strategy)]
        for part, x, y in (("strategy", a.strategy, b.strategy), ("detector", *detectors)):
            (sx, uses), (sy, _) = _seed_of(x), _seed_of(y)
            if sx != sy and uses:
                parts.append(part)
    if scenario is not None and _seed_of(a.scenario) != _seed_of(b.scenario):
        parts.append("scenario")
    return tuple(parts)
