"""Training steps shared across a grid: which runs can share steps, and the cache they share them through.

Inside a run, and between the runs one process computes one after another, a
:class:`~clad.core.steps.StepCache` fits each training step and scores each test concept under a
fitted state once per step key (:mod:`clad.core.steps`: a step's key is its inputs). Two runs can
share a step only if they read the same dataset and build the same detector (its configuration
and the seed it draws from); :func:`sharing_groups` plans a grid into such groups, and the
executors (:mod:`clad.engine.executors`) compute each group in one process, one run after
another, through one cache, so a grid fits each distinct step once whatever the executor
(sequential, worker processes, Dask, SLURM). The cache lives as long as its group and holds at most
:attr:`Sharing.max_bytes` (least recently used out first).

:class:`Sharing` is what a grid asks for: ``mode="on"`` (default), ``"off"`` (every step
computed: ``clad run --no-share``) or ``"verify"`` (every step computed and compared with the
shared result: ``clad run --verify-sharing``; a difference fails the run naming the step key and
the two steps that gave it).

A sharing group is one task (:class:`clad.engine.tasks.Task`), computed by
:func:`clad.engine.tasks.compute` on every back end:

>>> from clad.engine.config import Component, RunConfig
>>> from clad.engine.tasks import compute, plan_tasks
>>> data = Component("synthetic", {"n_concepts": 3, "n_train": 60, "n_test": 40})
>>> cfgs = [RunConfig(data, Component("concept_incremental"), Component(s), Component("hbos"))
...         for s in ("naive", "cumulative", "window")]
>>> [len(g) for g in sharing_groups(cfgs)]
[3]
>>> results = [r for r, _, _ in compute(plan_tasks(cfgs, Sharing())[0])]
>>> [r.timings["work"]["fitted"] for r in results]
[3, 2, 0]
>>> grid_work(results)["fitted"], grid_work(results)["steps"]
(5, 9)
"""

from __future__ import annotations

import collections
import functools
import threading
import logging
from dataclasses import dataclass, field
from typing import Sequence

from ..core.step_keys import describe
from ..core.steps import DEFAULT_MAX_BYTES, StepCache, format_work, grid_work
from ..errors import CladValueError
from .config import RunConfig, canonical, group_by

__all__ = [
    "Sharing",
    "sharing_groups",
    "group_key",
    "grid_work",
    "format_work",
    "SHARING_MODES",
    "release_caches",
]

log = logging.getLogger(__name__)

#: what a grid does with training steps whose keys coincide
SHARING_MODES = ("on", "off", "verify")


@dataclass(frozen=True)
class Sharing:
    """How a grid shares work: training steps by ``mode`` (one of :data:`SHARING_MODES`),
    ``max_bytes`` the most a group's cache holds, and ``runs`` whether runs that are one
    computation (:mod:`clad.engine.identity`) are computed once.

    >>> from types import SimpleNamespace
    >>> Sharing.of(SimpleNamespace(share=False)), Sharing.of(SimpleNamespace(share=True), verify=True)
    (Sharing(mode='off', runs=False), Sharing(mode='verify', runs=True))
    """

    mode: str = "on"
    max_bytes: int = field(default=DEFAULT_MAX_BYTES, repr=False)
    runs: bool = True

    @classmethod
    def of(
        cls,
        spec,
        *,
        share: bool | None = None,
        steps: bool | None = None,
        verify: bool = False,
        max_bytes: int | None = None,
    ) -> "Sharing":
        """The ``spec``'s (as :meth:`~clad.engine.settings.Execution.of` reads it) ``share`` key unless ``share`` is given (false: nothing shared); training
        steps as runs unless ``steps`` is given; ``verify`` computes every step and compares it
        with the shared result (``--verify-sharing``)."""
        from .settings import spec_of

        runs = spec_of(spec).share if share is None else share
        steps = runs if steps is None else steps
        mode = "verify" if verify else "on" if steps else "off"
        return cls(mode, DEFAULT_MAX_BYTES if max_bytes is None else max_bytes, runs)

    def __post_init__(self):
        if self.mode not in SHARING_MODES:
            raise CladValueError(
                f"sharing mode={self.mode!r}; expected one of {', '.join(SHARING_MODES)}"
            )
        if (
            isinstance(self.max_bytes, bool)
            or not isinstance(self.max_bytes, int)
            or self.max_bytes < 0
        ):
            raise CladValueError(f"sharing max_bytes={self.max_bytes!r}; expected an integer >= 0")

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def cache_for(self, configs: Sequence[RunConfig]) -> StepCache | None:
        """The cache of the sharing group of ``configs`` in this process (None when off): the
        one an earlier group with the same :func:`group_key` used, while this process keeps it
        (a tuned grid's evaluation runs find the fitted states of its tuning runs), else a new one.
        The caches a process keeps hold at most ``max_bytes`` together (the least recently used
        group's is dropped first)."""
        if not self.active or not configs:
            return None
        kept = _kept()
        key = (group_key(configs[0]), self.mode, self.max_bytes)
        cache = kept.pop(key, None)
        if cache is None:
            cache = StepCache(self.max_bytes, verify=self.mode == "verify")
        kept[key] = cache
        while len(kept) > 1 and sum(c.bytes for c in kept.values()) > self.max_bytes:
            kept.popitem(last=False)
        return kept[key]


#: the step caches this thread keeps, by (group key, mode, limit), most recently used last (one
#: thread's: a detector is never scored by two threads at once, even on Dask's threaded workers)
_LOCAL = threading.local()


def _kept() -> "collections.OrderedDict[tuple, StepCache]":
    if not hasattr(_LOCAL, "kept"):
        _LOCAL.kept = collections.OrderedDict()
    return _LOCAL.kept


def release_caches() -> None:
    """Drop the step caches this thread keeps (a grid ends)."""
    _kept().clear()


@functools.lru_cache(maxsize=4096)
def _detector_key(name: str, params_json: str, seed: int) -> str:
    import json

    from ..core.seeding import derive_seeds
    from ..detectors import as_detector, make_detector, set_random_state

    det = as_detector(make_detector(name, json.loads(params_json)))
    set_random_state(det, derive_seeds(seed)["detector"])
    return describe(det)


def group_key(cfg: RunConfig) -> str:
    """What runs must have in common to share a step: the dataset they load (loader and seeded
    parameters) and the detector they build (configuration and seed). A configuration that
    cannot be described is a group of its own."""
    from .run import dataset_key

    try:
        det = _detector_key(cfg.detector.name, canonical(dict(cfg.detector.params)), int(cfg.seed))
        return canonical([list(dataset_key(cfg)), det])
    except Exception as exc:  # noqa: BLE001 - the run itself says what is wrong
        log.debug("%s: a sharing group of its own (%s)", cfg.describe(), exc)
        return "run:" + cfg.run_id


def sharing_groups(configs: Sequence[RunConfig]) -> list[list[RunConfig]]:
    """``configs`` planned into groups of runs that can share training steps (:func:`group_key`),
    in the order of their first run, each in the given order."""
    return list(group_by(configs, group_key).values())
