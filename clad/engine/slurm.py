"""Runs of a grid computed as SLURM jobs: submitted with submitit, results folded by one writer.

``clad run SPEC --out DIR --slurm [CONFIG]`` (or :func:`~clad.engine.benchmark.run_spec` with a
:class:`~clad.engine.slurm_config.SlurmConfig`) computes the runs left to compute in SLURM job
arrays built by `submitit <https://github.com/facebookincubator/submitit>`_: each array task
computes a chunk of tasks one after another (:func:`clad.engine.slurm_worker.run_chunk`, with
:func:`~clad.engine.tasks.outcomes` as on every back end: the same threads, replica units and step
cache) and writes each run's result to a file of its own (``RUN_ID.started``, ``RUN_ID.pkl``) in
the job folder; this process — the only one that opens the results database — folds those files
into it as they appear (a file folded twice writes the same record twice: one row). What a user
sees, why submitit rather than dask-jobqueue, and how faults are classified and retried:
docs/guides/running.md ("On a SLURM cluster").

Every job submitted is recorded in the database (:data:`JOBS_META`); the job name carries a token
written (:data:`PENDING_META`) before ``sbatch`` is called, so a job submitted just before the
submitter died is found by name. A ``clad run`` started again reattaches to the recorded jobs still
queued or running and submits only the runs no job holds.
"""

from __future__ import annotations

import collections
import logging
import os
import pickle
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import CladValueError
from .config import RunConfig, canonical, group_by
from .tasks import THREAD_ENV_VARS, RunEvent, Task, plan_tasks
from .run import execution_order
from .slurm_jobs import (
    CAUSE_TEXT,
    LIVE_STATES,
    UNREACHABLE_SECONDS,
    ClusterUnreachable,
    cancel_jobs,
    check_slurm,
    infrastructure_failure,
    job_states,
    jobs_by_name,
    why_ended,
)
from .slurm_config import runs_per_job, seconds_of, time_limit_minutes
from .slurm_worker import result_path, run_chunk, started_path, who_started

__all__ = ["execute_slurm", "JOBS_META", "SUBMITTED_META"]

log = logging.getLogger(__name__)

#: ``meta`` key: ``{job_id: {"runs": [run_id, ...], "token": name}}`` of the jobs submitted and not settled
JOBS_META = "slurm:jobs"
#: ``meta`` key: ``{token: [[run_id, ...] per array task]}`` of submissions whose job ids are not known yet
PENDING_META = "slurm:pending"
#: ``meta`` key: ``{run_id: n}`` infrastructure failures of each run not settled yet
ATTEMPTS_META = "slurm:attempts"
#: ``meta`` key: ``{"jobs": n, "runs": n, "sbatch_calls": n}``: the jobs (array tasks) submitted for
#: this folder, the runs they held and the ``sbatch`` calls that submitted them
SUBMITTED_META = "slurm:submitted"


#: what reading a result file a job left half-written (or with another clad's classes) raises
_UNREADABLE = (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError)


# -- the submitting side --------------------------------------------------------------------------
class _Grid:
    """The runs this process computes on the cluster and what it knows of them."""

    def __init__(
        self,
        configs: Sequence[RunConfig],
        store,
        execution,
        sharing=None,
        whole: Sequence[RunConfig] | None = None,
    ):
        self.store, self.slurm = store, execution.slurm
        self.timeout, self.threads = execution.timeout, execution.threads
        self.replicas, self.sharing = execution.replicas, sharing
        self.whole = execution_order(list(whole if whole is not None else configs))
        self.todo = {c.run_id: c for c in configs}  # not yet folded
        self.folder = self.slurm.job_folder(Path(store.path).parent)
        self.results = self.folder / "results"
        self.jobs_folder = self.folder / "jobs"
        self.jobs: dict[str, list[str]] = {}  # job id -> its runs still in todo
        self.tokens: dict[str, str] = {}  # job id -> submission token
        self.states: dict[str, tuple[str, str]] = {}
        self.queue: list[list[Task]] = []  # chunks to submit
        self.announced: set[str] = set()
        self.attempts: dict[str, int] = dict(store.get_meta(ATTEMPTS_META, {}) or {})
        self.counts = {"ok": 0, "failed": 0}
        self.last_said = None
        self.dropped: set[str] = set()  # job ids whose records go
        self.folded: set[str] = set()  # runs written into the database
        self.job_runs: dict[str, list[str]] = {}  # job id -> every run it was given
        self.unreachable_since: float | None = None
        self.told_held: set[str] = set()
        self.missing: dict[str, int] = {}  # job id -> looks in a row SLURM did not know it

    # ---- the records in the database
    def save_jobs(self) -> None:
        """Record this process's jobs (others' records are kept; settled jobs are dropped)."""
        current = dict(self.store.get_meta(JOBS_META, {}) or {})
        for job in self.dropped:
            current.pop(job, None)
        for job, runs in self.jobs.items():
            if runs:
                current[job] = {"runs": runs, "token": self.tokens.get(job)}
            else:
                current.pop(job, None)
        self.store.set_meta(JOBS_META, current)

    def reattach(self) -> None:
        """Take over the jobs recorded in the database that compute runs of this grid; forget
        those whose runs are all finished."""
        recorded = dict(self.store.get_meta(JOBS_META, {}) or {})
        pending = dict(self.store.get_meta(PENDING_META, {}) or {})
        # submitted just before a submitter died: found by name
        for token, chunks in pending.items():
            for job in jobs_by_name(token):
                task = int(job.split("_")[1]) if "_" in job else 0
                if task < len(chunks):
                    recorded[job] = {"runs": chunks[task], "token": token}
        finished = self.store.finished_ids()
        for job, rec in recorded.items():
            runs = [r for r in rec.get("runs", []) if r in self.todo]
            if runs:
                self.jobs[job] = runs
                self.job_runs[job] = list(runs)
                self.tokens[job] = rec.get("token")
            elif all(r in finished for r in rec.get("runs", [])):
                self.dropped.add(job)
        if self.jobs:
            log.info(
                "reattached to %d SLURM jobs computing %d runs of this grid (submitted by an earlier clad run)",
                len(self.jobs),
                sum(map(len, self.jobs.values())),
            )
        self.save_jobs()
        if pending:
            self.store.set_meta(PENDING_META, {})

    # ---- planning and submitting
    def plan(self) -> None:
        """Chunks of the runs no job holds, by resources, in execution order."""
        held = {r for runs in self.jobs.values() for r in runs}
        free = [c for c in execution_order(list(self.todo.values())) if c.run_id not in held]
        self._chunk(free)

    def _chunk(self, configs: list[RunConfig]) -> None:
        groups = group_by(configs, lambda c: canonical(self.slurm.resources(c)))
        estimate = self._run_seconds()
        for members in groups.values():
            res = self.slurm.resources(members[0])
            size = res.get("runs_per_job") or runs_per_job(
                len(members), self.slurm.max_jobs, estimate, res.get("time_minutes"), self.timeout
            )
            tasks = plan_tasks(members, self.sharing, 1, self.replicas, self.whole)
            self.queue += _pack(tasks, size)

    def _run_seconds(self) -> float | None:
        """The median seconds of up to 50 runs finished in the database (None: none yet)."""
        ids = sorted(self.store.finished_ids())[:50]
        times = sorted(
            t for t in (seconds_of(r.timings) for r in self.store.load_results(ids)) if t > 0
        )
        return times[len(times) // 2] if times else None

    def submit(self) -> None:
        """Submit chunks while fewer than ``max_jobs`` jobs are queued or running: one array per
        resource set."""
        room = self.slurm.max_jobs - sum(1 for j in self.jobs if self.jobs[j])
        if room <= 0 or not self.queue:
            return
        batch, self.queue = self.queue[:room], self.queue[room:]
        by_res = group_by(batch, lambda chunk: canonical(self.slurm.resources(chunk[0].runs[0])))
        for chunks in by_res.values():
            self._submit_array(chunks)

    def _submit_array(self, chunks: list[list[Task]]) -> None:
        import submitit

        res = self.slurm.resources(chunks[0][0].runs[0])
        size = max(_size(c) for c in chunks)
        token = f"clad-{uuid.uuid4().hex[:12]}"
        executor = submitit.SlurmExecutor(
            folder=self.jobs_folder, python=self.slurm.python, max_num_timeout=0
        )
        params: dict[str, Any] = {
            "job_name": token,
            "time": time_limit_minutes(res, size, self.timeout),
            "cpus_per_task": res.get("cpus_per_run") or self.threads or 1,
            "array_parallelism": self.slurm.max_jobs,
            "signal_delay_s": 60,
        }
        for key in ("partition", "gres", "account", "qos", "constraint"):
            if res.get(key):
                params[key] = res[key]
        extra = dict(res.get("sbatch") or {})
        if res.get("mem_gb"):
            extra["mem"] = f"{max(1, int(round(float(res['mem_gb']) * 1024)))}M"
        if extra:
            params["additional_parameters"] = extra
        threads = self.threads or 1
        params["setup"] = [f"export {v}=${{{v}:-{threads}}}" for v in THREAD_ENV_VARS] + list(
            res.get("setup") or ()
        )
        executor.update_parameters(**params)
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        self.results.mkdir(parents=True, exist_ok=True)
        ids = [[c.run_id for t in chunk for c in t.kept] for chunk in chunks]
        # a job skips a run whose result file is there
        for rid in (r for chunk in ids for r in chunk):
            result_path(self.results, rid).unlink(missing_ok=True)
            started_path(self.results, rid).unlink(missing_ok=True)
        # before sbatch: a job submitted just before a crash is found
        self.store.set_meta(PENDING_META, {token: ids})
        n = len(chunks)
        try:
            jobs = executor.map_array(
                run_chunk,
                chunks,
                [str(self.results)] * n,
                [self.timeout] * n,
                [self.threads] * n,
                [paths] * n,
            )
        except Exception as exc:  # noqa: BLE001 - sbatch refused (a bad partition, a limit): say why
            self.store.set_meta(PENDING_META, {})
            raise CladValueError(f"sbatch refused the jobs: {str(exc).strip()[:2000]}") from None
        for job, run_ids in zip(jobs, ids):
            self.jobs[str(job.job_id)] = list(run_ids)
            self.job_runs[str(job.job_id)] = list(run_ids)
            self.tokens[str(job.job_id)] = token
        done = self.store.get_meta(SUBMITTED_META, {}) or {}
        added = {"jobs": n, "runs": sum(map(len, ids)), "sbatch_calls": 1}
        self.store.set_meta(SUBMITTED_META, {k: int(done.get(k, 0)) + v for k, v in added.items()})
        self.save_jobs()
        self.store.set_meta(PENDING_META, {})
        log.info(
            "submitted %d SLURM job%s (%s) computing %d runs",
            n,
            "s" if n > 1 else "",
            str(jobs[0].job_id).split("_")[0],
            sum(map(len, ids)),
        )

    # ---- collecting
    def collect(self) -> Iterator[RunEvent]:
        """A ``"started"`` event for each run a job has started, a ``"finished"`` one for each
        result file (folded; removed once its job has ended, or the grid has)."""
        held = {r for runs in self.jobs.values() for r in runs}
        for rid in list(self.todo):
            if rid not in held:  # a file of no recorded job (a deleted database's) is never folded
                continue
            cfg = self.todo[rid]
            done = result_path(self.results, rid)
            if rid not in self.announced and (
                done.exists() or started_path(self.results, rid).exists()
            ):
                self.announced.add(rid)
                yield RunEvent("started", cfg, started=who_started(self.results, rid)[1])
            if done.exists():
                try:
                    result, started, finished, job = pickle.loads(done.read_bytes())
                except _UNREADABLE as exc:
                    log.warning(
                        "%s: its result file %s cannot be read (%s); it is computed again",
                        cfg.describe(),
                        done,
                        exc,
                    )
                    done.unlink(missing_ok=True)
                    continue
                yield from self._settle(cfg, result, started, finished)

    def _settle(self, cfg: RunConfig, result, started=None, finished=None) -> Iterator[RunEvent]:
        from ..results.store import utc_now

        if cfg.run_id not in self.announced:
            self.announced.add(cfg.run_id)
            yield RunEvent("started", cfg, started=started or utc_now())
        yield RunEvent(
            "finished",
            cfg,
            result=result,
            started=started or utc_now(),
            finished=finished or utc_now(),
        )
        # the runner has written the record when the generator resumes: the files can go
        self.todo.pop(cfg.run_id, None)
        self.counts["ok" if result.ok else "failed"] += 1
        for job, runs in self.jobs.items():
            if cfg.run_id in runs:
                runs.remove(cfg.run_id)
        if self.attempts.pop(cfg.run_id, None) is not None:
            self.store.set_meta(ATTEMPTS_META, self.attempts)
        # its files stay while its job may start again (requeued: it skips the runs written)
        self.folded.add(cfg.run_id)

    def forget_files(self, run_ids) -> None:
        """Remove the files of folded runs (their job has ended)."""
        for rid in run_ids:
            if rid in self.folded:
                for path in (result_path(self.results, rid), started_path(self.results, rid)):
                    path.unlink(missing_ok=True)

    def check_jobs(self) -> Iterator[RunEvent]:
        """Look at every job holding runs; a job that ended leaves its runs without a result to
        be submitted again or recorded as failed."""
        live = [j for j, runs in self.jobs.items() if runs]
        try:
            self.states = job_states(live)
        except ClusterUnreachable as exc:  # nothing known: no job is taken for ended
            if self.unreachable_since is None:
                self.unreachable_since = time.monotonic()
                log.warning(
                    "SLURM does not answer (%s); looking again every %g s",
                    exc,
                    self.slurm.poll_seconds,
                )
            elif time.monotonic() - self.unreachable_since > UNREACHABLE_SECONDS:
                raise CladValueError(
                    f"SLURM has not answered for {UNREACHABLE_SECONDS / 60:g} minutes ({exc}); "
                    "the jobs are recorded: run the same command again to reattach to them"
                ) from None
            return
        self.unreachable_since = None
        # a job SLURM does not know yet (or any more) is taken for gone at its third miss
        for j in live:
            self.missing[j] = 0 if j in self.states else self.missing.get(j, 0) + 1
        ended = [
            j
            for j in live
            if (self.states[j][0] not in LIVE_STATES if j in self.states else self.missing[j] >= 3)
        ]
        if ended:
            yield from self.collect()  # results written just before the job ended
        retry: list[RunConfig] = []
        for job in ended:
            runs = [r for r in self.jobs.get(job, []) if r in self.todo]
            state, reason = self.states.get(job, ("GONE", ""))
            self.jobs.pop(job, None)
            self.dropped.add(job)
            self.forget_files(self.job_runs.pop(job, ()))
            if not runs:
                continue
            cause, detail = why_ended(self.jobs_folder, job, state, reason)
            here = {r for r in runs if who_started(self.results, r)[0] == job}
            for rid in runs:
                cfg = self.todo[rid]
                if cause in ("memory", "time") and here and rid not in here:
                    # it never started: the run that did used the memory or the time
                    retry.append(cfg)
                    continue
                # the same memory would end the same way: not retried
                ran_out = cause == "memory" and rid in here
                if not ran_out:
                    self.attempts[rid] = self.attempts.get(rid, 0) + 1
                if ran_out or self.attempts[rid] > self.slurm.retries:
                    tries = self.attempts.get(rid, 0)
                    failure = infrastructure_failure(cfg, job, state, cause, detail, tries)
                    yield from self._settle(cfg, failure)
                    continue
                log.warning(
                    "%s: SLURM job %s %s (state %s); submitting it again (attempt %d of %d)",
                    cfg.describe(),
                    job,
                    CAUSE_TEXT[cause],
                    state,
                    self.attempts[rid] + 1,
                    self.slurm.retries + 1,
                )
                retry.append(cfg)
            self.store.set_meta(ATTEMPTS_META, self.attempts)
        if ended:
            self.save_jobs()
        if retry:
            self._chunk(retry)

    def say(self) -> None:
        """Log the counts when they changed."""
        live = {j: self.states.get(j, ("PENDING", "")) for j in self.live_jobs()}
        queued = [j for j, (state, _) in live.items() if state == "PENDING"]
        running = sum(1 for state, _ in live.values() if state == "RUNNING")
        why = collections.Counter(live[j][1] for j in queued if live[j][1])
        held = sorted(j for j, (_, why_) in live.items() if "held" in why_.lower())
        held = [j for j in held if j not in self.told_held]
        if held:  # a held job never starts by itself
            self.told_held.update(held)
            log.warning(
                "SLURM holds job%s %s (%s): release with 'scontrol release %s', or cancel with "
                "'scancel %s' (its runs are then submitted again)",
                "s" if len(held) > 1 else "",
                ", ".join(held),
                live[held[0]][1],
                " ".join(held),
                " ".join(held),
            )
        now = (len(queued), running, len(self.queue), *self.counts.values(), len(self.todo))
        if (now, sorted(why)) != self.last_said:
            self.last_said = (now, sorted(why))
            reasons = f" ({', '.join(f'{r}: {n}' for r, n in sorted(why.items()))})" if why else ""
            log.info(
                "slurm: %d jobs queued%s, %d running, %d chunks to submit; runs: %d finished, "
                "%d failed, %d to go",
                now[0],
                reasons,
                *now[1:],
            )

    def live_jobs(self) -> list[str]:
        return [j for j, runs in self.jobs.items() if runs]


def _size(chunk) -> int:
    """How many runs a chunk of tasks computes."""
    return sum(len(t.runs) for t in chunk)


def _pack(tasks: list, size: int) -> list[list]:
    """Tasks (:func:`~clad.engine.tasks.plan_tasks`) packed in order into chunks computing at most
    ``size`` runs: a replica unit whole (one larger than ``size`` is a chunk of its own), a sharing
    group cut into parts of at most ``size`` runs. A job computes each task of its chunk with
    :func:`~clad.engine.tasks.outcomes` (:func:`~clad.engine.slurm_worker.run_chunk`).

    >>> from clad.engine.tasks import Task
    >>> tasks = [Task((1, 2, 3), together=True), Task((4,)), Task((5, 6, 7, 8, 9))]
    >>> [[t.runs for t in chunk] for chunk in _pack(tasks, 4)]
    [[(1, 2, 3), (4,)], [(5, 6, 7, 8)], [(9,)]]
    """
    import dataclasses

    parts = [
        dataclasses.replace(t, runs=t.runs[i : i + size])
        for t in tasks
        for i in (range(0, len(t.runs), size) if not t.together else [0])
    ]
    chunks: list[list] = []
    for task in parts:
        if chunks and _size(chunks[-1]) + len(task.runs) <= size:
            chunks[-1].append(task)
        else:
            chunks.append([task])
    return chunks


def execute_slurm(
    configs: Sequence[RunConfig],
    store,
    execution,
    sharing=None,
    whole: Sequence[RunConfig] | None = None,
) -> Iterator[RunEvent]:
    """Compute ``configs`` as SLURM jobs (``execution.slurm``, a
    :class:`~clad.engine.slurm_config.SlurmConfig`), planned into tasks like every other back end
    (:func:`~clad.engine.tasks.plan_tasks`: replica units cut from ``whole``, sharing groups
    through ``sharing``), and yield a
    ``"started"`` and a ``"finished"`` event for each run as its job reports it; the caller
    writes each result into ``store`` (this generator only records the jobs in its ``meta``).
    Closing the generator (or Ctrl-C) cancels the jobs or leaves them to reattach to
    (``slurm.cancel_on_exit``, else ``slurm.confirm_cancel(job_ids)``, else left)."""
    check_slurm()
    slurm = execution.slurm
    grid = _Grid(configs, store, execution, sharing, whole)
    if not grid.todo:
        return
    finished = False
    try:
        grid.reattach()
        yield from grid.collect()  # results written while no submitter was watching
        grid.plan()
        while grid.todo:
            grid.submit()
            yield from grid.collect()
            yield from grid.check_jobs()
            grid.say()
            if not grid.todo:
                break
            if not grid.live_jobs() and not grid.queue:
                # runs no job holds and none to submit: should not happen; submit them again
                grid.plan()
                if not grid.queue:
                    break
            time.sleep(slurm.poll_seconds)
        finished = True
        grid.save_jobs()  # every job settled: no record left to reattach to
        grid.forget_files(list(grid.folded))
    finally:
        live = grid.live_jobs()
        if not finished and live:
            _on_exit(grid, live)


def _on_exit(grid: _Grid, live: list[str]) -> None:
    slurm = grid.slurm
    cancel = slurm.cancel_on_exit
    if cancel is None and slurm.confirm_cancel is not None:
        try:
            cancel = bool(slurm.confirm_cancel(live))
        except (EOFError, KeyboardInterrupt, OSError):
            cancel = False
    bases = sorted({j.split("_")[0] for j in live})
    if cancel:
        cancel_jobs(bases)
        grid.jobs.clear()
        grid.save_jobs()
        log.warning(
            "cancelled %d SLURM jobs (%s); finished runs are kept; run the same command again to submit "
            "the others",
            len(live),
            ", ".join(bases),
        )
    else:
        log.warning(
            "%d SLURM jobs are still queued or running (%s); run the same clad run command again to "
            "reattach to them and collect their runs (nothing is submitted twice); to cancel them: "
            "scancel %s",
            len(live),
            ", ".join(bases),
            " ".join(shlex.quote(b) for b in bases),
        )
