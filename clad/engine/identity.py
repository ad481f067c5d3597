"""Which runs of a grid are one computation: what decides a run's result, and nothing else.

Two configurations are the same computation when they differ only in what provably does not
change R:

* the display labels;
* the scenario, when the strategy never reads the concept id (``reads_concept_id = False``) and
  the scenario's loop equals another's but for the id it passes (``same_without_id``: the
  concept-aware loop is the concept-incremental loop with ``concept_id=`` given to ``learn`` and
  ``score``);
* the seed, when no part of the run consumes it (:func:`clad.core.seeding.seed_consumers`: no
  ``random_state`` left to fill that is used, in the loader, scenario, strategy or detector).

:func:`computation_keys` gives each configuration its key
(:meth:`~clad.engine.config.RunConfig.computation_key`); ``run_spec`` computes each key once and
records the other configurations as sharing that result (``shared_from``).
"""

from __future__ import annotations

import functools
import logging
from typing import Iterable

from .config import RunConfig, canonical

__all__ = ["computation_keys", "run_traits", "seed_reach", "code_inputs", "module_fingerprint"]

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=None)
def _traits(
    dataset_json: str, scenario_json: str, strategy_json: str, detector_json: str
) -> tuple[str | None, tuple[str, ...]]:
    import json

    from ..core.seeding import seed_consumers
    from ..datasets import DATASETS
    from ..detectors import make_detector
    from ..scenarios import SCENARIOS
    from ..strategies import make_strategy

    dataset, scenario_c, strategy_c, detector_c = (
        json.loads(x) for x in (dataset_json, scenario_json, strategy_json, detector_json)
    )
    scenario = SCENARIOS.build(scenario_c["name"], scenario_c["params"])
    detector = make_detector(detector_c["name"], detector_c["params"])
    strategy = make_strategy(strategy_c["name"], detector, strategy_c["params"])
    factory = DATASETS.resolve(dataset["name"])
    same = None
    if not getattr(strategy, "reads_concept_id", True):
        same = getattr(scenario, "same_without_id", None)
    consumers = seed_consumers(
        strategy=strategy,
        scenario=scenario,
        dataset_factory=factory,
        dataset_params=dataset["params"],
    )
    return same, consumers


def _built_traits(cfg: RunConfig) -> tuple[str | None, tuple[str, ...]]:
    parts = [
        canonical({"name": c.name, "params": dict(c.params)})
        for c in (cfg.dataset, cfg.scenario, cfg.strategy, cfg.detector)
    ]
    return _traits(*parts)


def run_traits(cfg: RunConfig) -> tuple[str | None, bool]:
    """``(scenario, seed_matters)`` for :meth:`RunConfig.computation_key`: the scenario this run's
    loop equals for its strategy (None: its own) and whether any part consumes the seed. A
    configuration that cannot be built is its own computation (the run reports the error)."""
    try:
        same, consumers = _built_traits(cfg)
    except Exception as exc:  # noqa: BLE001 - the run itself will say what is wrong
        log.debug("%s: not shared (%s)", cfg.describe(), exc)
        return None, True
    return same, bool(consumers)


def seed_reach(cfg: RunConfig) -> tuple[str, ...] | None:
    """The parts of ``cfg``'s run that consume the run seed (what the run records as its
    ``seed_reach``), read once per configuration; None when it cannot be built.

    >>> from clad.engine.config import Component
    >>> seed_reach(RunConfig(Component("synthetic"), Component("concept_aware"),
    ...                      Component("replay"), Component("iforest")))
    ('dataset', 'strategy', 'detector')
    """
    try:
        return _built_traits(cfg)[1]
    except Exception:  # noqa: BLE001 - the run itself will say what is wrong
        return None


def computation_keys(
    configs: Iterable[RunConfig], share: bool = True, inputs: dict[str, dict] | None = None
) -> dict[str, str]:
    """``{run_id: computation key}``; without ``share`` every run is its own computation (the key
    still covers ``inputs[run_id]``, the fingerprints of what it reads)."""
    inputs = inputs or {}
    out = {}
    for cfg in configs:
        if share:
            out[cfg.run_id] = cfg.computation_key(*run_traits(cfg), inputs.get(cfg.run_id))
        else:
            out[cfg.run_id] = cfg.run_id + ":" + canonical(inputs.get(cfg.run_id, {}))
    return out


# -- inputs: the data files and plug-in code a run reads ------------------------------------------
@functools.lru_cache(maxsize=1)
def _distributions() -> dict:
    from importlib import metadata

    return metadata.packages_distributions()


@functools.lru_cache(maxsize=None)
def _distribution_of(top: str) -> str | None:
    """The installed distribution that provides the top-level module ``top`` (None: none does): the
    distribution named ``top`` when it provides it (its ``top_level.txt``, else its files), which
    reads one distribution's record; else the first in :func:`importlib.metadata.packages_distributions`,
    which reads every installed distribution's (a fifth of a second)."""
    import inspect
    from importlib import metadata

    try:
        dist = metadata.distribution(top)
    except (metadata.PackageNotFoundError, ValueError):
        dist = None
    if dist is not None:
        declared = (dist.read_text("top_level.txt") or "").split()
        provided = declared or {
            f.parts[0] if len(f.parts) > 1 else inspect.getmodulename(str(f))
            for f in dist.files or ()
        }
        if top in provided:
            return dist.metadata["Name"]
    found = _distributions().get(top)
    return found[0] if found else None


@functools.lru_cache(maxsize=None)
def _installed_version(dist: str) -> str:
    """An installed distribution's version (looked up once per process: installing a package
    over a running process is not a case a run's inputs need to follow)."""
    from importlib import metadata

    return metadata.version(dist)


def module_fingerprint(module: str) -> str:
    """An installed package's ``name==version``, else the sha256 of the module's file (``missing``
    if it cannot be found)."""
    import importlib.util
    from importlib import metadata

    top = module.split(".")[0]
    dist = _distribution_of(top) if top != "clad" else None
    if dist:  # clad's own code is covered by its version in every run_id
        try:
            return f"{dist}=={_installed_version(dist)}"
        except metadata.PackageNotFoundError:
            pass
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin or not spec.has_location:
        return "missing"
    from ..datasets.files import sha256_of

    return "sha256:" + sha256_of(spec.origin)


def code_inputs(cfg: RunConfig) -> dict[str, str]:
    """``{"code MODULE": fingerprint}`` for every component of ``cfg`` named by an import path
    (``module:Name``) outside clad."""
    out = {}
    for c in (cfg.dataset, cfg.scenario, cfg.strategy, cfg.detector):
        module, sep, _ = c.name.partition(":")
        if sep and module.split(".")[0] != "clad":
            out[f"code {module}"] = module_fingerprint(module)
    return out


def current_fingerprint(key: str) -> str:
    """The fingerprint of input ``key`` (as recorded in a run's ``inputs``) now."""
    from pathlib import Path

    from ..datasets.files import sha256_of

    kind, _, what = key.partition(" ")
    if key.startswith("data file "):
        path = Path(key[len("data file ") :])
        return sha256_of(path) if path.is_file() else "missing"
    if kind == "code":
        return module_fingerprint(what)
    return "unknown"


def changed_inputs(recorded: dict[str, str], cfg: RunConfig) -> list[str]:
    """The inputs of a finished run that are not what they were when it ran (a replaced data
    file, an edited plug-in), each as ``"KEY (OLD -> NEW)"``."""
    now = {**{k: current_fingerprint(k) for k in recorded}, **code_inputs(cfg)}
    return [
        f"{k} ({_short(recorded.get(k))} -> {_short(v)})"
        for k, v in now.items()
        if recorded.get(k) != v
    ]


def _short(v: str | None) -> str:
    if v is None:
        return "not recorded"
    return v if len(v) <= 20 else v[:19] + "…"
