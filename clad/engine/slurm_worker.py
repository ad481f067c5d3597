"""What a SLURM job runs: a chunk of tasks (:class:`~clad.engine.tasks.Task`), one after another, each
run's result a file of its own.

A job never opens the results database. For each run of its chunk it writes
``RESULTS/RUN_ID.started`` (which job started it, and when) as the run starts and
``RESULTS/RUN_ID.pkl`` (the pickled ``(RunResult, started, finished, job_id)``) as it ends, both
atomically; the submitting process folds the ``.pkl`` files into the database as they appear.
A job started again (requeued after a preemption, or resubmitted) skips the runs whose ``.pkl``
is there (a replica unit with a run still to compute is computed whole, writing that run's), so a
run's result is written once per computation and the fold is idempotent.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Sequence

from ..atomic import atomic_output
from .tasks import Task, outcomes

__all__ = ["run_chunk", "result_path", "started_path", "who_started"]


def result_path(results: Path, run_id: str) -> Path:
    """The file a run's result is written to."""
    return Path(results) / f"{run_id}.pkl"


def started_path(results: Path, run_id: str) -> Path:
    """The file that says a run has started, and in which job."""
    return Path(results) / f"{run_id}.started"


def who_started(results: Path, run_id: str) -> tuple[str | None, str | None]:
    """Which job started a run, and when (None, None: none did, or its file cannot be read)."""
    try:
        job, when = started_path(results, run_id).read_text().split()[:2]
    except (OSError, ValueError):
        return None, None
    return job, when


def _job_id() -> str:
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    if array and task:
        return f"{array}_{task}"
    return os.environ.get("SLURM_JOB_ID", f"pid{os.getpid()}")


def run_chunk(
    tasks: Sequence[Task],
    results: str,
    timeout: float | None,
    threads: int | None,
    paths: Sequence[str] = (),
) -> dict:
    """Compute ``tasks`` in turn with :func:`~clad.engine.tasks.outcomes` (the same function as
    every other back end, through the same step cache), writing each run's files under
    ``results`` as it ends (a replica unit's once all of its runs are done). A run whose result is
    there was computed by an earlier start of this job and is skipped; a replica unit one of whose
    runs is still to compute is computed whole again, so its runs' R is the uninterrupted unit's.
    ``paths`` are added to ``sys.path`` first (where the submitting process found the spec's
    plug-ins). Returns ``{"computed": n, "skipped": n}``."""
    from ..results.store import utc_now

    for p in paths:
        if p not in sys.path:
            sys.path.append(p)
    folder = Path(results)
    job = _job_id()
    computed = skipped = 0
    for task in tasks:
        done = {c.run_id for c in task.kept if result_path(folder, c.run_id).exists()}
        skipped += len(done)
        task = task.without(frozenset(done))
        if not task.kept:
            continue
        computing = outcomes(task, timeout, threads)
        for runs in task.starts():
            for cfg in runs:
                with atomic_output(started_path(folder, cfg.run_id)) as tmp:
                    tmp.write_text(f"{job} {utc_now()}\n")
            for cfg in runs:
                result, started, finished = next(computing)
                with atomic_output(result_path(folder, cfg.run_id)) as tmp:
                    outcome = (result, started, finished, job)
                    tmp.write_bytes(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
                computed += 1
    return {"computed": computed, "skipped": skipped}
