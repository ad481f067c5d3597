"""The cluster's view of SLURM jobs: their states (``squeue``, ``sacct``), cancelling them, and why
a job ended without the result of each of its runs (its state and its log)."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from ..errors import CladValueError
from .config import RunConfig
from .run import failed_result

__all__ = ["failure_kind", "job_states", "ClusterUnreachable", "LIVE_STATES"]


#: seconds ``squeue`` may fail in a row before ``clad run`` gives up (the jobs stay recorded)
UNREACHABLE_SECONDS = 600.0
#: job states in which a job may still write results
LIVE_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "CONFIGURING",
        "COMPLETING",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "SUSPENDED",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
        "RESV_DEL_HOLD",
    }
)
#: a job's log lines that say why SLURM ended it
_LOG_CAUSES = (
    ("memory", re.compile(r"exceeded (job )?memory limit|oom[-_ ]kill|out of memory", re.I)),
    ("time", re.compile(r"DUE TO TIME LIMIT", re.I)),
    ("preempted", re.compile(r"DUE TO PREEMPTION", re.I)),
    ("node", re.compile(r"DUE TO NODE FAILURE", re.I)),
    ("cancelled", re.compile(r"CANCELLED AT", re.I)),
)
_STATE_CAUSES = {
    "OUT_OF_MEMORY": "memory",
    "TIMEOUT": "time",
    "PREEMPTED": "preempted",
    "NODE_FAIL": "node",
    "BOOT_FAIL": "node",
    "CANCELLED": "cancelled",
    "DEADLINE": "time",
}
CAUSE_TEXT = {
    "memory": "went over its memory limit",
    "time": "reached its time limit",
    "preempted": "was preempted",
    "node": "lost its node",
    "cancelled": "was cancelled",
    "gone": "is no longer known to SLURM",
    "failed": "failed",
    "lost": "ended without writing the result",
}


def failure_kind(result) -> str | None:
    """``"infrastructure"`` for a run that failed because of the cluster (its job went over its
    memory or time limit, was cancelled, preempted, lost its node or never ran), ``"method"``
    for a run that raised, None for a run that did not fail."""
    if result.ok:
        return None
    return (
        "infrastructure" if (result.extras or {}).get("failure") == "infrastructure" else "method"
    )


def _command(args: list[str], timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)


class ClusterUnreachable(RuntimeError):
    """``squeue`` did not answer (the controller is busy or down): nothing is known of the jobs."""


def job_states(job_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``{job_id: (state, reason)}`` of the jobs SLURM still knows (``squeue``, then ``sacct``
    for those it has forgotten); array tasks are ``ARRAY_TASK`` ids. A job neither knows is left
    out; :class:`ClusterUnreachable` when ``squeue`` fails."""
    if not job_ids:
        return {}
    bases = sorted({j.split("_")[0] for j in job_ids})
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(bases), 200):
        ids = ",".join(bases[i : i + 200])
        try:
            res = _command(["squeue", "-h", "-r", "--states=all", "-o", "%i|%T|%r", "-j", ids])
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClusterUnreachable(f"squeue: {exc}") from None
        if res.returncode != 0 and "invalid job id" not in res.stderr.lower():
            raise ClusterUnreachable(f"squeue: {res.stderr.strip()[:300]}")
        out.update(_states(res.stdout))
    missing = [j for j in job_ids if j not in out]
    if missing:
        ids = ",".join(sorted({j.split("_")[0] for j in missing}))
        try:
            res = _command(["sacct", "-n", "-P", "-X", "-o", "JobID,State,Reason", "-j", ids])
        except (OSError, subprocess.TimeoutExpired):
            res = None
        if res is not None and res.returncode == 0:
            out.update((j, s) for j, s in _states(res.stdout) if j in missing)
    return {j: out[j] for j in job_ids if j in out}


def _states(table: str):
    """``(job_id, (state, reason))`` of each ``ID|STATE|REASON`` line (``squeue``, ``sacct``)."""
    for line in table.splitlines():
        parts = line.strip().split("|") + [""]
        if len(parts) >= 3:
            yield parts[0], ((parts[1].split() or ["UNKNOWN"])[0], parts[2])


def jobs_by_name(name: str) -> list[str]:
    res = _command(["squeue", "-h", "-r", "--states=all", "-n", name, "-o", "%i"])
    return [line.strip() for line in res.stdout.splitlines() if line.strip()]


def cancel_jobs(job_ids: Sequence[str]) -> None:
    for i in range(0, len(job_ids), 200):
        _command(["scancel", *job_ids[i : i + 200]])


def why_ended(jobs_folder: Path, job: str, state: str, reason: str) -> tuple[str, str]:
    """Why a job ended without every result: a cause of :data:`CAUSE_TEXT` and a detail."""
    from submitit.core.utils import JobPaths

    log_text = _tail(JobPaths(jobs_folder, job_id=job, task_id=0).stderr)
    cause = (
        next((name for name, pattern in _LOG_CAUSES if pattern.search(log_text)), None)
        or _STATE_CAUSES.get(state)
        or ("gone" if state == "GONE" else "lost" if state == "COMPLETED" else "failed")
    )
    error = _worker_error(jobs_folder, job)
    lines = [f"state {state}" + (f", reason {reason}" if reason and reason != "None" else "")]
    if error:
        lines.append("the job's Python process failed:\n" + error)
    relevant = [ln for ln in log_text.splitlines() if "slurmstepd" in ln or "error" in ln.lower()]
    relevant = relevant[-5:]
    if relevant:
        lines.append("job log: " + " | ".join(ln.strip() for ln in relevant))
    return cause, "; ".join(lines)


def _worker_error(jobs_folder: Path, job: str) -> str | None:
    from submitit.core.utils import JobPaths

    path = JobPaths(jobs_folder, job_id=job, task_id=0).result_pickle
    try:
        with open(path, "rb") as f:
            outcome, value = pickle.load(f)
    except (OSError, EOFError, ValueError, pickle.UnpicklingError, AttributeError, ImportError):
        return None
    return str(value)[-2000:] if outcome == "error" else None


def infrastructure_failure(
    cfg: RunConfig, job: str, state: str, cause: str, detail: str, tries: int
):
    """The failed record of a run its job could not compute (``extras["failure"] ==
    "infrastructure"``), saying why and what to change."""
    import dataclasses

    what = {"memory": "out of memory", "time": "time limit"}.get(cause, "infrastructure failure")
    hint = {
        "memory": "; give its runs more memory (mem_gb in [slurm])",
        "time": "; give its jobs more time (time_minutes in [slurm]) or fewer runs per job",
    }.get(cause, "")
    tried = "" if cause == "memory" else f" (after {tries} attempt{'s' if tries > 1 else ''})"
    msg = f"{what}: SLURM job {job} {CAUSE_TEXT[cause]} while this run was to be computed{tried}"
    result = failed_result(cfg, f"{msg}{hint}\n{detail}")
    return dataclasses.replace(
        result,
        extras={
            "failure": "infrastructure",
            "slurm": {"job": job, "state": state, "cause": cause, "attempts": tries},
        },
    )


def _tail(path: Path, size: int = 20000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def check_slurm() -> None:
    try:
        import submitit  # noqa: F401
    except ImportError:
        raise CladValueError("running on SLURM needs submitit: pip install 'clad[slurm]'") from None
    for tool in ("sbatch", "squeue", "scancel"):
        if shutil.which(tool) is None:
            raise CladValueError(
                f"running on SLURM needs the {tool} command, which is not on the PATH of this "
                "machine; run clad on a machine that submits jobs to the cluster (a login node)"
            )
