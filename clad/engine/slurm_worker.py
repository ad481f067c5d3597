"""What a SLURM job runs: a chunk of runs, one after another, each result a file of its own.

A job never opens the results database. For each run of its chunk it writes
``RESULTS/RUN_ID.started`` (which job started it, and when) as the run starts and
``RESULTS/RUN_ID.pkl`` (the pickled ``(RunResult, started, finished, job_id)``) as it ends, both
atomically; the submitting process folds the ``.pkl`` files into the database as they appear.
A job started again (requeued after a preemption, or resubmitted) skips the runs whose ``.pkl``
is there, so a run's result is written once per computation and the fold is idempotent.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Sequence

from ..atomic import atomic_output
from .config import RunConfig

__all__ = ["run_chunk", "result_path", "started_path"]


def result_path(results: Path, run_id: str) -> Path:
    """The file a run's result is written to."""
    return Path(results) / f"{run_id}.pkl"


def started_path(results: Path, run_id: str) -> Path:
    """The file that says a run has started, and in which job."""
    return Path(results) / f"{run_id}.started"


def _job_id() -> str:
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    if array and task:
        return f"{array}_{task}"
    return os.environ.get("SLURM_JOB_ID", f"pid{os.getpid()}")


def run_chunk(
    configs: Sequence[RunConfig],
    results: str,
    timeout: float | None,
    threads: int | None,
    paths: Sequence[str] = (),
    replicas: int = 1,
) -> dict:
    """Compute ``configs`` in turn, writing each one's files under ``results``: runs trained
    together as replicas (``replicas`` > 1: the chunk's replica units, which are the grid's, since
    a chunk holds whole units in order) with :func:`~clad.engine.executors.execute_unit`, every
    other run with :func:`~clad.engine.executors.execute_one` (a run that raises is a failed
    result carrying its traceback). A unit's results are written once all of its runs are done.
    ``paths`` are added to ``sys.path`` first (where the submitting process found the spec's
    plug-ins). Returns ``{"computed": n, "skipped": n}``."""
    from ..results.store import utc_now
    from .executors import execute_unit
    from .replicas import replica_units

    for p in paths:
        if p not in sys.path:
            sys.path.append(p)
    folder = Path(results)
    job = _job_id()
    computed = skipped = 0
    for unit in replica_units(list(configs), replicas):
        # a run whose result is there was computed by an earlier start of this job; the unit's
        # other runs are trained together again (fewer replicas: R may move by float rounding)
        todo = [cfg for cfg in unit if not result_path(folder, cfg.run_id).exists()]
        skipped += len(unit) - len(todo)
        if not todo:
            continue
        for cfg in todo:
            with atomic_output(started_path(folder, cfg.run_id)) as tmp:
                tmp.write_text(f"{job} {utc_now()}\n")
        for cfg, (result, started, finished) in zip(todo, execute_unit(todo, timeout, threads)):
            with atomic_output(result_path(folder, cfg.run_id)) as tmp:
                tmp.write_bytes(
                    pickle.dumps((result, started, finished, job), protocol=pickle.HIGHEST_PROTOCOL)
                )
            computed += 1
    return {"computed": computed, "skipped": skipped}
