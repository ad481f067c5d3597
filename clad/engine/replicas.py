"""Replica groups: runs of a grid that train the same torch network with the same strategy,
computed together in one process as one stacked model (:mod:`clad.detectors.torch_replicas`).

Runs form a group when they differ only in what a replica can differ in
(:data:`REPLICA_PARAMETERS`, the seed, a ``data_view``); everything else is the group's key
(:func:`group_key`). A group holds at most ``replicas`` runs (default :data:`DEFAULT_REPLICAS`),
a larger one is cut into consecutive units in the grid's order, and every back end computes a unit
as one task (:class:`clad.engine.tasks.Task`), so the same spec gives bit-identical R wherever it
runs. Which runs are trained together, what each replica keeps, resuming inside a unit, and the
limits (threads, time limits, peak memory): docs/guides/replicas.md. A run's strategy says whether
it can run per replica (``replicas_problem``: None, or the reason it cannot); runs whose strategy
or detector cannot are units of one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from typing import Sequence

from .config import RunConfig, canonical

__all__ = [
    "DEFAULT_REPLICAS",
    "REPLICA_PARAMETERS",
    "group_key",
    "replica_units",
    "replica_problem",
    "unit_id",
]

log = logging.getLogger(__name__)

#: the most runs trained together when a spec does not say (``replicas`` key)
DEFAULT_REPLICAS = 32

#: detector parameters in which the runs of one replica group may differ
REPLICA_PARAMETERS = ("learning_rate", "epochs", "weight_decay", "random_state")


@functools.lru_cache(maxsize=None)
def _problem(strategy_json: str, detector_json: str) -> str | None:
    from ..detectors import make_detector
    from ..strategies import make_strategy

    strategy_c, detector_c = json.loads(strategy_json), json.loads(detector_json)
    try:
        detector = make_detector(detector_c["name"], detector_c["params"])
        strategy = make_strategy(strategy_c["name"], detector, strategy_c["params"])
    except Exception as exc:  # noqa: BLE001 - the run itself reports it
        return f"cannot be built ({exc})"
    if not getattr(detector, "_clad_torch", False):
        return "the detector is not one of clad's torch detectors"
    return getattr(
        strategy, "replicas_problem", "the strategy does not say that it can run per replica"
    )


def replica_problem(cfg: RunConfig) -> str | None:
    """Why this run cannot be a replica of a stacked model (None: it can)."""
    return _problem(
        canonical({"name": cfg.strategy.name, "params": dict(cfg.strategy.params)}),
        canonical({"name": cfg.detector.name, "params": dict(cfg.detector.params)}),
    )


def group_key(cfg: RunConfig) -> str:
    """What the runs of one replica group share (see the module docstring), as a hash."""
    det = {k: v for k, v in cfg.detector.params.items() if k not in REPLICA_PARAMETERS}
    d = {
        "dataset": [cfg.dataset.name, cfg.dataset.params],
        "scenario": [cfg.scenario.name, cfg.scenario.params],
        "strategy": [cfg.strategy.name, cfg.strategy.params],
        "detector": [cfg.detector.name, det],
        "base_metrics": list(cfg.base_metrics),
        "metric_params": cfg.metric_params,
        "reference": getattr(cfg, "reference", None),
    }
    return hashlib.sha256(canonical(d).encode()).hexdigest()[:16]


def replica_units(configs: Sequence[RunConfig], replicas: int) -> list[list[RunConfig]]:
    """The grid's runs cut into units computed as one task: runs of one group (at most
    ``replicas`` each, in the given order) together, every other run alone. A unit sits at the
    place of its first run."""
    configs = list(configs)
    if replicas <= 1:
        return [[c] for c in configs]
    units: list[list[RunConfig]] = []
    open_units: dict[str, list[RunConfig]] = {}
    for cfg in configs:
        if replica_problem(cfg) is not None:
            units.append([cfg])
            continue
        key = group_key(cfg)
        unit = open_units.get(key)
        if unit is None or len(unit) >= replicas:
            unit = open_units[key] = []
            units.append(unit)
        unit.append(cfg)
    return units


def unit_id(unit: Sequence[RunConfig]) -> str:
    """A unit's identity: a hash of its runs' ids in order."""
    return hashlib.sha256(",".join(c.run_id for c in unit).encode()).hexdigest()[:16]
