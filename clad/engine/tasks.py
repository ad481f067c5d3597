"""Tasks: what every back end computes, and the one function that computes a task.

A grid is planned into :class:`Task` objects (:func:`plan_tasks`): the runs of a replica unit
trained together (:mod:`clad.engine.replicas`), or runs computed one after another through one step
cache (a sharing group, :mod:`clad.engine.sharing`; one run when nothing is shared). Every back end
— this process, worker processes (:mod:`clad.engine.pool`), Dask (:mod:`clad.engine.dask_cluster`),
SLURM jobs (:mod:`clad.engine.slurm_worker`) — maps :func:`compute` over its tasks, so a task gives
the same results, and fits the same steps, wherever it is computed.

>>> from clad.engine.config import Component
>>> from clad.engine.sharing import Sharing
>>> data = Component("synthetic", {"n_concepts": 3, "n_train": 61, "n_test": 40})
>>> cfgs = [RunConfig(data, Component("concept_incremental"), Component(s), Component("hbos"))
...         for s in ("naive", "cumulative", "window")]
>>> [len(t.runs) for t in plan_tasks(cfgs, Sharing())]
[3]
>>> [r.status for r, _, _ in compute(plan_tasks(cfgs, Sharing())[0])]
['ok', 'ok', 'ok']
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import sys
import threading
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from ..core.time_limit import RunTimeout, time_limit
from ..results.record import RunResult
from ..results.store import utc_now
from .config import RunConfig
from .run import failed_result, run_safely

__all__ = [
    "Task",
    "plan_tasks",
    "compute",
    "outcomes",
    "limited_threads",
    "THREAD_ENV_VARS",
    "Outcome",
    "RunEvent",
]

log = logging.getLogger(__name__)

#: what computing one run gives: its result, when it started and when it finished (UTC ISO 8601)
Outcome = tuple[RunResult, str, str]

#: environment variables that cap the threads of BLAS / OpenMP libraries in worker processes
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@dataclass(frozen=True)
class RunEvent:
    """What happened to one run: ``kind`` is ``"started"``, ``"step"`` (a run evaluated its
    training step ``index``, named ``step``) or ``"finished"`` (then ``result``, ``started`` and
    ``finished`` are set; times are UTC ISO 8601)."""

    kind: str
    config: RunConfig
    result: RunResult | None = None
    started: str | None = None
    finished: str | None = None
    step: str | None = None
    index: int | None = None


@dataclass(frozen=True)
class Task:
    """Runs computed as one: ``together`` (a replica unit: trained together, in threads of one
    process) or one after another through one step cache (``sharing``, a
    :class:`~clad.engine.sharing.Sharing`; None: nothing shared). A replica unit is always
    computed with all its runs, so that each gives the same numbers as in the whole grid; ``keep``
    (run ids; None: all) names those whose outcomes are wanted (the others finished before)."""

    runs: tuple[RunConfig, ...]
    together: bool = False
    sharing: object = None
    keep: frozenset | None = None

    @property
    def kept(self) -> tuple[RunConfig, ...]:
        """The runs whose outcomes :func:`compute` gives, in order."""
        if self.keep is None:
            return self.runs
        return tuple(c for c in self.runs if c.run_id in self.keep)

    def starts(self) -> list[tuple[RunConfig, ...]]:
        """The kept runs that start at once, in the order they start: a replica unit's all
        together, other runs one by one."""
        return [self.kept] if self.together else [(c,) for c in self.kept]

    def alone(self) -> list["Task"]:
        """The task as tasks tried on their own (after a failed pool): a replica unit whole, other
        runs one each."""
        if self.together:
            return [self]
        return [dataclasses.replace(self, runs=(c,)) for c in self.kept]

    def without(self, done) -> "Task":
        """The task without the outcomes of the run ids ``done`` (a replica unit is still
        computed whole)."""
        if self.together:
            return dataclasses.replace(self, keep=frozenset(c.run_id for c in self.kept) - done)
        return dataclasses.replace(self, runs=tuple(c for c in self.runs if c.run_id not in done))


def plan_tasks(
    configs: Sequence[RunConfig],
    sharing=None,
    workers: int = 1,
    replicas: int = 1,
    whole: Sequence[RunConfig] | None = None,
) -> list[Task]:
    """The grid as tasks: its replica units of several runs (``replicas`` > 1), then the other
    runs, one each without sharing (``sharing`` None or off), else in their sharing groups; for
    several ``workers`` the largest first and the largest halved while there are fewer tasks than
    workers. Which runs form a task depends on the list of runs (and ``workers``) alone.

    ``whole`` (default ``configs``) is the grid the replica units are cut from: a unit holding a
    run of ``configs`` is computed whole, keeping the outcomes of the runs of ``configs`` (a
    resumed grid's R is the uninterrupted grid's)."""
    from .replicas import replica_units
    from .sharing import sharing_groups

    sharing = sharing if sharing is not None and sharing.active else None
    todo = {c.run_id for c in configs}
    units = [
        u
        for u in replica_units(configs if whole is None else whole, int(replicas or 1))
        if len(u) > 1 and todo & {c.run_id for c in u}
    ]
    tasks = [Task(tuple(u), together=True) for u in units]
    tasks = [t.without(frozenset({c.run_id for c in t.runs} - todo)) for t in tasks]
    together = {c.run_id for u in units for c in u}
    alone = [c for c in configs if c.run_id not in together]
    if sharing is None:
        return tasks + [Task((c,)) for c in alone]
    groups = sharing_groups(alone) if alone else []
    if workers > 1:
        while groups and len(groups) < workers and max(len(g) for g in groups) > 1:
            big = max(range(len(groups)), key=lambda i: len(groups[i]))
            g = groups.pop(big)
            groups[big:big] = [g[: len(g) // 2], g[len(g) // 2 :]]
        groups.sort(key=len, reverse=True)
    return tasks + [Task(tuple(g), sharing=sharing) for g in groups]


def compute(
    task: Task,
    timeout: float | None = None,
    threads: int | None = 1,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
) -> list[Outcome]:
    """Compute a task: ``[(result, started, finished)]`` of its kept runs in order; never raises
    for a failing run (its result is failed, with the traceback or ``"timeout..."``).
    ``timeout`` is each run's; ``on_step(config, step, index)`` is called after each evaluated
    concept step."""
    return list(outcomes(task, timeout, threads, on_step))


def outcomes(
    task: Task,
    timeout: float | None = None,
    threads: int | None = 1,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
) -> Iterator[Outcome]:
    """:func:`compute` one run at a time: each run's outcome as soon as it is known (a replica
    unit's all at its end); the next run starts when the next outcome is asked for."""
    if task.together and len(task.runs) > 1:
        kept = {c.run_id for c in task.kept}
        told = on_step and (
            lambda cfg, step, index: cfg.run_id in kept and on_step(cfg, step, index)
        )
        unit = _unit(task.runs, timeout, threads, told or None)
        yield from (o for c, o in zip(task.runs, unit) if c.run_id in kept)
        return
    from ..core.steps import using

    cache = task.sharing.cache_for(task.runs) if task.sharing is not None else None
    for cfg in task.runs:  # each with its time limit, never raising (a failed result instead)
        step = None if on_step is None else functools.partial(on_step, cfg)
        started = utc_now()
        try:
            with using(cache), limited_threads(threads), time_limit(timeout):
                result = run_safely(cfg, on_step=step)
        except RunTimeout:  # a BaseException: run_safely lets it through
            result = timeout_result(cfg, timeout or 0.0, traceback.format_exc())
        yield result, started, utc_now()


def timeout_result(cfg: RunConfig, seconds: float, detail: str = "") -> RunResult:
    """The failed record of a run stopped by its time limit."""
    return failed_result(
        cfg, f"timeout: the run took longer than {seconds:g} s (time limit)\n{detail}".rstrip()
    )


@contextmanager
def thread_env(threads: int):
    """Set the thread-capping variables (those the user did not set) while workers start."""
    added = [v for v in THREAD_ENV_VARS if v not in os.environ]
    for v in added:
        os.environ[v] = str(threads)
    try:
        yield
    finally:
        for v in added:
            os.environ.pop(v, None)


@contextmanager
def limited_threads(threads: int | None):
    """Run the block with at most ``threads`` BLAS/OpenMP/torch threads (``None``: no limit):
    threadpoolctl limits, ``torch.set_num_threads`` if torch is loaded, and the thread-count
    environment variables the user did not set (read by libraries loaded inside the block)."""
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    torch_before = torch.get_num_threads() if torch is not None else None
    with thread_env(threads), threadpool_limits(limits=int(threads)):
        if torch is not None:
            torch.set_num_threads(int(threads))
        try:
            yield
        finally:
            if torch_before is not None:
                torch.set_num_threads(torch_before)


# -- replica units (clad.engine.replicas) --------------------------------------------------------
def _unit_share(timings: dict | None, size: int) -> dict | None:
    """A run's share of its replica unit's seconds: the runs of a unit are trained together, so each
    thread's clock measured the unit's time; divided by the unit's size, the runs' seconds add up to
    the unit's (the unit's measured total is kept as ``unit_total``).

    >>> _unit_share({"fit": [2.0, 4.0], "score": [1.0, 1.0], "total": 8.0}, 4)
    {'fit': [0.5, 1.0], 'score': [0.25, 0.25], 'total': 2.0, 'unit_total': 8.0}
    """
    if not timings or size <= 1:
        return timings
    out = dict(timings)
    for key in ("fit", "score"):
        if isinstance(out.get(key), list):
            out[key] = [v / size if isinstance(v, (int, float)) else v for v in out[key]]
    if isinstance(out.get("total"), (int, float)):
        out["unit_total"], out["total"] = out["total"], out["total"] / size
    return out


def _unit(
    unit: Sequence[RunConfig],
    timeout: float | None,
    threads: int | None,
    on_step: Callable[[RunConfig, str, int], None] | None,
) -> list[Outcome]:
    """The runs of a replica unit in threads of this process, meeting at their torch training calls
    (:class:`~clad.detectors.torch_replicas.ReplicaGroup`); each result records its unit in
    ``extras["replicas"]``."""
    from ..core.run_warnings import routing
    from ..detectors.torch_replicas import ReplicaGroup
    from .replicas import unit_id

    unit = list(unit)
    if timeout is not None:
        log.warning(
            "the per-run time limit (%g s) is not enforced for runs trained as replicas (threads "
            "cannot be interrupted); set replicas = 1 to enforce it",
            timeout,
        )
    group = ReplicaGroup(len(unit))
    out: list = [None] * len(unit)
    step_lock = threading.Lock()

    def member(i: int, cfg: RunConfig) -> None:
        started = utc_now()
        step = None
        if on_step is not None:

            def step(name, index, cfg=cfg):
                with step_lock:
                    on_step(cfg, name, index)

        try:
            with group.member(i):
                result = run_safely(cfg, on_step=step)
        except BaseException:  # noqa: BLE001 - recorded as the run's failure
            result = failed_result(cfg, traceback.format_exc())
        out[i] = (result, started, utc_now())

    with limited_threads(threads), routing():
        workers = [
            threading.Thread(target=member, args=(i, c), name=f"clad-replica-{i}", daemon=True)
            for i, c in enumerate(unit)
        ]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    uid, calls = unit_id(unit), group.stats.stacked_calls
    done = []
    for i, (result, started, finished) in enumerate(out):
        record = {"unit": uid, "size": len(unit), "index": i, "stacked_calls": calls}
        result = dataclasses.replace(
            result,
            timings=_unit_share(result.timings, len(unit)),
            extras={**(result.extras or {}), "replicas": record},
        )
        done.append((result, started, finished))
    return done
