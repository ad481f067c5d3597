"""Executors: where the runs of a grid are computed.

:func:`execute_grid` plans the runs into tasks (:mod:`clad.engine.tasks`) and yields
:class:`~clad.engine.tasks.RunEvent` objects (a run started, a run finished) while the back end of
the :class:`~clad.engine.settings.Execution` maps :func:`~clad.engine.tasks.compute` over them:
this process (``jobs=1``, with a per-step callback), worker processes (``jobs=N``,
:mod:`clad.engine.pool`), a Dask cluster (:mod:`clad.engine.dask_cluster`) or SLURM jobs
(:mod:`clad.engine.slurm`).

Results never depend on where or in which order runs are computed: every seed derives from the run
seed, and every run uses ``threads`` BLAS/OpenMP/torch threads (default 1) wherever it runs (a
thread count can change the rounding of parallel reductions). A run that raises, or takes longer
than ``timeout``, becomes a failed :class:`~clad.results.record.RunResult` (the grid goes on). Runs
start in :func:`~clad.engine.run.execution_order` (the order ``clad run --dry-run`` lists), so a
process loads each dataset once.
"""

from __future__ import annotations

import logging
import os
from typing import Callable, Iterator, Sequence

from ..core.time_limit import check_timeout
from ..errors import CladValueError
from .config import RunConfig
from .run import execution_order
from .settings import Execution
from ..results.store import utc_now
from .tasks import RunEvent, Task, outcomes, plan_tasks

__all__ = ["execute_grid", "check_execution"]

log = logging.getLogger(__name__)


def check_execution(jobs: int, threads: int | None, timeout: float | None) -> None:
    """A :class:`~clad.errors.CladValueError` naming ``jobs``, ``threads`` or ``timeout`` when it is not allowed.

    >>> check_execution(2, 1, None)
    >>> check_execution(0, 1, None)
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: jobs=0; expected an integer >= 1
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CladValueError(f"jobs={jobs!r}; expected an integer >= 1")
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise CladValueError(f"threads={threads!r}; expected an integer >= 1 or None")
    check_timeout(timeout)


def _iter_sequential(
    tasks: Sequence[Task], timeout: float | None, threads: int | None, on_step
) -> Iterator[RunEvent]:
    """The tasks one after another in this process; each run's ``"started"`` event just before it
    starts (a replica unit's runs start together)."""
    for task in tasks:
        computing = outcomes(task, timeout, threads, on_step)
        for runs in task.starts():
            for cfg in runs:
                yield RunEvent("started", cfg, started=utc_now())
            for cfg in runs:
                result, started, finished = next(computing)
                yield RunEvent("finished", cfg, result=result, started=started, finished=finished)


def execute_grid(
    configs: Sequence[RunConfig],
    execution: Execution | None = None,
    *,
    sharing=None,
    on_step: Callable[[RunConfig, str, int], None] | None = None,
    store=None,
    whole: Sequence[RunConfig] | None = None,
) -> Iterator[RunEvent]:
    """Compute every configuration where ``execution`` (an :class:`~clad.engine.settings.Execution`;
    default: one after another here) says, and yield a ``"started"`` and a ``"finished"`` event
    for each, as they happen. Each run uses at most ``execution.threads`` BLAS/OpenMP/torch
    threads (None: no limit, and then results may depend on the executor). ``on_step(config,
    step_name, step_index)`` is called after every evaluated concept step of a run computed here
    (``jobs=1``, no Dask); with ``jobs > 1`` and ``on_step`` given, each step of a worker's run is
    yielded as a ``"step"`` event instead (through a queue; not on Dask nor SLURM). SLURM records
    its jobs in ``store`` (:mod:`clad.engine.slurm`). Closing the generator (or Ctrl-C) stops the workers.

    The runs are planned into tasks (:func:`~clad.engine.tasks.plan_tasks`: replica units of
    ``execution.replicas`` runs at most, sharing groups when ``sharing`` — a
    :class:`~clad.engine.sharing.Sharing` — is on; with several workers, the largest group first
    and a grid with fewer groups than workers has its largest groups halved until every worker has
    one), and every back end computes each task with :func:`~clad.engine.tasks.compute`. ``whole``
    (default: ``configs``) is the grid the replica units are cut from, so that a resumed grid trains
    its runs in the units of the uninterrupted one."""
    ex = execution or Execution()
    check_execution(ex.jobs, ex.threads, ex.timeout)
    if ex.dask is None and ex.slurm is None and ex.threads is not None:
        if ex.jobs * ex.threads > (os.cpu_count() or 1):
            log.warning(
                "%d jobs x %d threads is more than the %d cores of this machine",
                ex.jobs,
                ex.threads,
                os.cpu_count() or 1,
            )
    # runs on the same data one after another, so each process loads a dataset once (results do
    # not depend on the order); the order --dry-run lists
    configs = execution_order(configs)
    whole = execution_order(whole) if whole is not None else None
    if not configs:
        return iter(())
    if ex.slurm is not None:
        from .slurm import execute_slurm

        return execute_slurm(configs, store, ex, sharing, whole)
    if ex.dask is not None:
        from .dask_cluster import iter_dask

        tasks = plan_tasks(configs, sharing, max(ex.jobs, 2), ex.replicas, whole)
        return iter_dask(tasks, ex.dask, ex.timeout, ex.threads)
    workers = 1 if ex.jobs == 1 else max(ex.jobs, 2)
    tasks = plan_tasks(configs, sharing, workers, ex.replicas, whole)
    if ex.jobs > 1:  # the steps of worker runs come back as "step" events
        from .pool import iter_processes

        jobs = min(ex.jobs, len(configs))
        return iter_processes(tasks, jobs, ex.timeout, ex.threads, on_step is not None)
    return _iter_sequential(tasks, ex.timeout, ex.threads, on_step)
