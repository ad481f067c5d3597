"""One run from a configuration: what a spec's grid is made of.

* :func:`run_config` — a :class:`~clad.engine.config.RunConfig` (registered names and parameters,
  what a spec file expands to) built (:func:`build_run`) and run by
  :func:`~clad.core.experiment.run_experiment` (objects in, a :class:`~clad.results.RunResult` out);
  every stochastic piece gets a seed derived from the run seed (:mod:`clad.core.seeding`), so the
  same configuration gives bit-identical R.
* :func:`run_safely` — :func:`run_config` where a run that raises becomes a failed result with its
  traceback. Whole grids (sequential, worker processes, Dask) are run by :mod:`clad.engine.executors`.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import threading
import traceback
import weakref
from typing import Callable

from ..core.concepts import ConceptDataset
from ..core.experiment import run_experiment
from ..results.record import RunResult, versions
from ..core.run_warnings import merge, recording
from ..core.seeding import seed_run
from ..detectors import make_detector
from .config import RunConfig, canonical, group_by
from .identity import seed_reach

__all__ = [
    "run_config",
    "run_safely",
    "build_run",
    "data_inputs",
    "failed_result",
    "dataset_key",
    "execution_order",
    "run_dataset",
]

log = logging.getLogger(__name__)


#: the data files each cached dataset was read from, ``{absolute path: sha256}``, by ``id(dataset)``
_DATA_FILES: dict[int, dict[str, str]] = {}


#: the datasets this process loaded last, by (loader name, canonical parameters), newest last
_DATASETS: "collections.OrderedDict[tuple[str, str], ConceptDataset]" = collections.OrderedDict()
_CACHED = 4


def _files_changed(files: dict[str, str]) -> bool:
    """Whether a data file a cached dataset was read from has changed since (its sha256, which
    :func:`~clad.datasets.files.sha256_of` remembers by size and modification time)."""
    from ..datasets.files import sha256_of

    for path, sha in files.items():
        try:
            if sha256_of(path) != sha:
                return True
        except OSError:
            return True
    return False


#: one thread at a time loads or looks up a cached dataset (runs trained as replicas are threads)
_DATASETS_LOCK = threading.RLock()


def _cached_dataset(name: str, params_json: str) -> ConceptDataset:
    """The dataset of loader ``name`` with these parameters, loaded once per process while the
    data files it read are unchanged (a replaced file is read again, never served stale)."""
    from ..datasets import load_dataset
    from ..datasets.files import recording

    key = (name, params_json)
    with _DATASETS_LOCK:
        dataset = _DATASETS.get(key)
        if dataset is not None and not _files_changed(_DATA_FILES.get(id(dataset), {})):
            _DATASETS.move_to_end(key)
            return dataset
        if dataset is not None:
            del _DATASETS[key]
            _DATA_FILES.pop(id(dataset), None)
        with recording() as seen:
            dataset = load_dataset(name, json.loads(params_json))
        _DATA_FILES[id(dataset)] = seen
        _DATASETS[key] = dataset
        while len(_DATASETS) > _CACHED:
            _, dropped = _DATASETS.popitem(last=False)
            _DATA_FILES.pop(id(dropped), None)
        return dataset


def _seeded(cfg: RunConfig, strategy=None, scenario=None):
    """:func:`~clad.core.seeding.seed_run` for a configuration: its dataset parameters and, when
    given, its strategy and scenario objects."""
    from ..datasets import DATASETS

    try:
        factory = DATASETS.resolve(cfg.dataset.name)
    except (TypeError, ValueError):  # an unknown loader: load_dataset says so when the run starts
        factory = None
    return seed_run(
        cfg.seed,
        strategy=strategy,
        scenario=scenario,
        dataset_factory=factory,
        dataset_params=cfg.dataset.params,
    )


def run_dataset(cfg: RunConfig) -> ConceptDataset:
    """The dataset a configuration's runs learn (before a ``[tuning]`` view), from this process's
    cache: what :func:`build_run` loads, seeded from ``cfg.seed``."""
    return _cached_dataset(*dataset_key(cfg))


def dataset_key(cfg: RunConfig) -> tuple[str, str]:
    """The dataset a configuration loads, as ``(loader name, canonical parameters)``: runs with the
    same key share one cached dataset, so executors run them one after another."""
    return cfg.dataset.name, canonical(_seeded(cfg).dataset_params)


def execution_order(configs) -> list[RunConfig]:
    """The order in which a grid's runs start (and ``clad run --dry-run`` lists them): the given
    order, with the runs that load the same dataset (:func:`dataset_key`) brought together at the
    place of the first of them, so a process loads each dataset once.

    >>> from clad.engine.config import Component
    >>> cfgs = [RunConfig(Component("synthetic"), Component("concept_aware"), Component("naive"),
    ...                   Component(d), seed=s) for s in (0, 1) for d in ("hbos", "iforest")]
    >>> [(c.detector.name, c.seed) for c in execution_order(cfgs)] == [(c.detector.name, c.seed) for c in cfgs]
    True
    >>> swapped = [cfgs[0], cfgs[2], cfgs[1], cfgs[3]]  # seeds interleaved: each seed's runs together
    >>> [(c.detector.name, c.seed) for c in execution_order(swapped)]
    [('hbos', 0), ('iforest', 0), ('hbos', 1), ('iforest', 1)]
    """
    return [cfg for group in group_by(configs, dataset_key).values() for cfg in group]


def build_run(cfg: RunConfig):
    """The dataset, scenario and strategy objects of a configuration, seeded from ``cfg.seed`` by
    :func:`~clad.core.seeding.seed_run` (the dataset is cached per process, so a grid loads each
    dataset once per worker)."""
    from ..scenarios import SCENARIOS
    from ..strategies import make_strategy

    scenario = SCENARIOS.build(cfg.scenario.name, cfg.scenario.params)
    strategy = make_strategy(
        cfg.strategy.name,
        make_detector(cfg.detector.name, cfg.detector.params),
        cfg.strategy.params,
    )
    seeded = _seeded(cfg, strategy, scenario)
    dataset = _cached_dataset(cfg.dataset.name, canonical(seeded.dataset_params))
    if cfg.data_view is not None:  # a [tuning] section's part of the data (clad.core.data_views)
        from ..core.data_views import apply_view
        from ..core.seeding import validation_seed

        view = apply_view(dataset, cfg.data_view, validation_seed(cfg.seed))
        # a part of the cached dataset, reading the data files the dataset read
        _VIEW_FILES[view] = _DATA_FILES.get(id(dataset), {})
        dataset = view
    return dataset, seeded.scenario, seeded.strategy


#: the data files a view's source dataset was read from, by view (released with the view)
_VIEW_FILES: "weakref.WeakKeyDictionary[ConceptDataset, dict[str, str]]" = (
    weakref.WeakKeyDictionary()
)


def run_config(cfg: RunConfig, on_step: Callable[[str, int], None] | None = None) -> RunResult:
    """Run one configuration (see :class:`RunConfig`); errors propagate. ``on_step`` as in
    :func:`run_experiment`."""
    with recording() as built:  # warnings while the run's objects are built belong to the run too
        dataset, scenario, strategy = build_run(cfg)  # seeded there, so not again by run_experiment
    learned, kind = dataset, getattr(cfg, "reference", None)
    if kind:  # a reference run (clad.engine.references) learns a dataset derived from the grid's
        from ..protocol.reference_models import reference_dataset

        learned = reference_dataset(kind, dataset)
    labels = {
        "dataset": cfg.dataset.display,
        "scenario": cfg.scenario.display,
        "strategy": cfg.strategy.display,
        "detector": cfg.detector.display,
        "run_id": cfg.run_id,
    }
    result = run_experiment(
        learned,
        scenario,
        strategy,
        cfg.base_metrics,
        labels=labels,
        config=cfg.to_dict(),
        on_step=on_step,
        metric_params=getattr(cfg, "metric_params", None),
        threshold=getattr(cfg, "threshold", None) or "own",
        threshold_seed=int(cfg.seed),
    )
    files = _VIEW_FILES.get(dataset) or _DATA_FILES.get(id(dataset), {})
    flagged = result.warnings
    # a joint run's one training concept is named after all of them: no name can match a test one
    if kind == "joint":
        flagged = tuple(w for w in flagged if not w.startswith("ConceptNamesWarning:"))
    return dataclasses.replace(
        result,
        seed=int(cfg.seed),
        warnings=merge(built, flagged),
        inputs={f"data file {p}": h for p, h in files.items()},
        seed_reach=seed_reach(cfg),
    )


def data_inputs(cfg: RunConfig) -> dict[str, str]:
    """``{"data file PATH": sha256}`` of the files ``cfg``'s dataset is read from here (loaded once
    per process, as a run loads it; empty for generated data, which its parameters describe)."""
    dataset, _, _ = build_run(cfg)
    files = _VIEW_FILES.get(dataset) or _DATA_FILES.get(id(dataset), {})
    return {f"data file {p}": h for p, h in files.items()}


def failed_result(cfg: RunConfig, error: str) -> RunResult:
    """The record of a run that raised: its configuration, ``status="failed"`` and the traceback."""
    return RunResult(
        dataset=cfg.dataset.display,
        scenario=cfg.scenario.display,
        strategy=cfg.strategy.display,
        detector=cfg.detector.display,
        seed=int(cfg.seed),
        versions=versions(),
        config=cfg.to_dict(),
        status="failed",
        error=error,
        run_id=cfg.run_id,
    )


def run_safely(cfg: RunConfig, on_step: Callable[[str, int], None] | None = None) -> RunResult:
    """:func:`run_config`, but an exception becomes a failed result carrying its traceback."""
    try:
        return run_config(cfg, on_step=on_step)
    except Exception:  # noqa: BLE001 - a failed run is recorded, the grid goes on
        return failed_result(cfg, traceback.format_exc())
    # a plug-in ending the process (sys.exit) ends its run, never the grid
    except SystemExit as exc:
        return failed_result(
            cfg,
            f"the run called sys.exit({exc.code!r}) (a plug-in ending the process); the run "
            f"is recorded as failed and the grid goes on\n{traceback.format_exc()}",
        )
