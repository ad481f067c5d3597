"""Executors: where the runs of a grid are computed.

:func:`execute_grid` plans a list of :class:`~clad.engine.run.RunConfig` into tasks
(:class:`~clad.engine.tasks.Task`) and yields :class:`~clad.engine.tasks.RunEvent` objects (a run
started, a run finished) while a back end maps :func:`~clad.engine.tasks.compute` over them. The
back end is the :class:`~clad.engine.settings.Execution`'s:

* ``jobs=1`` (default): one after another in this process, with a per-step callback;
* ``jobs=N``: N worker processes (:mod:`clad.engine.pool`), at most N tasks in flight. A worker
  that dies (killed, out of memory, a crash in native code) fails only its own task and is
  replaced; workers end by themselves when the main process ends, even by SIGKILL;
* ``dask="tcp://host:8786"``: a running Dask distributed cluster (:mod:`clad.engine.dask_cluster`);
* ``slurm``: SLURM jobs (:mod:`clad.engine.slurm`).

Every run uses ``threads`` BLAS/OpenMP/torch threads (default 1) wherever it runs: environment
variables set before worker processes start, :mod:`threadpoolctl` limits and
``torch.set_num_threads`` around each run. So N workers do not oversubscribe the cores, and —
since a thread count can change the rounding of parallel reductions — the numbers do not depend
on the executor either.

Results never depend on where or in which order runs are computed: every seed derives from the
run seed. A run that raises becomes a failed :class:`~clad.results.record.RunResult` carrying its
traceback (the grid goes on). With ``timeout`` a run taking longer is stopped and recorded as
failed with an error starting ``"timeout"`` (in this process and in worker processes through
``SIGALRM``; with worker processes a run stuck in native code is stopped by killing and replacing
its worker). Dask runs tasks in threads, which cannot be interrupted: there the limit is not
enforced (a warning says so). Datasets are loaded once per process
(``clad.engine.run._cached_dataset``) and runs on the same dataset are computed one after
another, so a worker reuses the arrays for every run on the same dataset: runs start in
:func:`~clad.engine.run.execution_order`, the order ``clad run --dry-run`` lists.
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
from .tasks import RunEvent, Task, outcomes, plan_tasks, utc

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
                yield RunEvent("started", cfg, started=utc())
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
        yielded as a ``"step"`` event instead (through a queue; not on Dask nor SLURM).
        SLURM records its jobs in
        ``store`` (:mod:`clad.engine.slurm`). Closing the generator (or Ctrl-C) stops the workers.

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
