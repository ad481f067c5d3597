"""What a grid on a SLURM cluster asks of it: the ``[slurm]`` section of a spec, or a TOML file.

``clad run SPEC --out DIR --slurm`` reads the spec's ``[slurm]`` section; ``--slurm FILE`` reads
the same keys from ``FILE`` (a TOML file with a ``[slurm]`` table, or with the keys at its top
level) and wins over the spec's section, key by key. Every key is optional: each is a field of
:class:`SlurmConfig`, described with its default in docs/guides/running.md ("On a SLURM cluster").
``retries`` counts failures of the infrastructure (node failure, preemption, a cancelled job, a job
that never started); a failure of the method (an exception in a detector) is never retried.

Per-component resources: ``[slurm.detectors.NAME]``, ``[slurm.strategies.NAME]`` and
``[slurm.datasets.NAME]`` tables hold any of :data:`RESOURCE_KEYS` for the runs of that component
(a torch detector's runs on a GPU partition, the others not); where several apply, detectors win
over strategies over datasets.

>>> cfg = parse_slurm({"partition": "cpu", "mem_gb": 4, "detectors": {"autoencoder": {"gres": "gpu:1",
...                    "partition": "gpu"}}})
>>> cfg.partition, cfg.mem_gb, cfg.retries, cfg.overrides["detectors"]["autoencoder"]["gres"]
('cpu', 4.0, 2, 'gpu:1')
>>> parse_slurm({"runs_per_jobs": 3})
Traceback (most recent call last):
...
clad.errors.CladValueError: [slurm] runs_per_jobs: unknown key (did you mean 'runs_per_job'?); allowed: partition, time_minutes, cpus_per_run, mem_gb, gres, runs_per_job, max_jobs, retries, folder, account, qos, constraint, setup, python, poll_seconds, cancel_on_exit, sbatch, detectors, strategies, datasets
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from ..errors import CladValueError
from ..registry import did_you_mean

__all__ = [
    "SlurmConfig",
    "seconds_of",
    "parse_slurm",
    "load_slurm",
    "DEFAULT_RUN_SECONDS",
    "JOB_SECONDS",
    "START_UP_SECONDS",
]

#: seconds a run is assumed to take when no run of the results folder has finished yet
DEFAULT_RUN_SECONDS = 10.0
#: the length a job is planned to have (``runs_per_job`` default): minutes, not seconds
JOB_SECONDS = 300.0
#: seconds added to a job's time limit for its start-up (Python, imports, loading the data)
START_UP_SECONDS = 300.0

#: keys a per-component table may set
RESOURCE_KEYS = (
    "partition",
    "time_minutes",
    "cpus_per_run",
    "mem_gb",
    "gres",
    "runs_per_job",
    "account",
    "qos",
    "constraint",
    "setup",
    "sbatch",
)
COMPONENT_KINDS = ("detectors", "strategies", "datasets")
_INT_KEYS = ("time_minutes", "cpus_per_run", "runs_per_job", "max_jobs")
_STR_KEYS = ("partition", "gres", "folder", "account", "qos", "constraint", "python")
#: the largest value each number may take: beyond it a value is a slip, not a cluster's setting
#: (a year's time limit, a rack of cores, 64 TiB of memory, an hour between two looks at the cluster)
MAXIMA = {
    "time_minutes": 366 * 24 * 60,
    "cpus_per_run": 4096,
    "runs_per_job": 1_000_000,
    "max_jobs": 100_000,
    "retries": 100,
    "mem_gb": 65_536.0,
    "poll_seconds": 3_600.0,
}


@dataclass(frozen=True)
class SlurmConfig:
    """A validated ``[slurm]`` section (each key: docs/guides/running.md); ``confirm_cancel``
    (not a spec key) is asked, with the job ids, whether to cancel them on Ctrl-C when
    ``cancel_on_exit`` is None."""

    partition: str | None = None
    time_minutes: int | None = None
    cpus_per_run: int | None = None
    mem_gb: float | None = None
    gres: str | None = None
    runs_per_job: int | None = None
    max_jobs: int = 64
    retries: int = 2
    folder: str | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = None
    setup: tuple[str, ...] = ()
    python: str | None = None
    poll_seconds: float = 5.0
    cancel_on_exit: bool | None = None
    sbatch: Mapping[str, Any] = field(default_factory=dict)
    overrides: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    confirm_cancel: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        """The same checks as a spec's ``[slurm]`` section, for a configuration built in code."""
        for key in (*_INT_KEYS, "retries", "mem_gb", "poll_seconds", *_STR_KEYS):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, _check_value("SlurmConfig", key, value))

    def resources(self, cfg) -> dict[str, Any]:
        """The resource keys (:data:`RESOURCE_KEYS`) that apply to run configuration ``cfg``: the
        section's, then its dataset's, strategy's and detector's tables over them."""
        out = {k: getattr(self, k) for k in RESOURCE_KEYS}
        for kind, comp in (
            ("datasets", cfg.dataset),
            ("strategies", cfg.strategy),
            ("detectors", cfg.detector),
        ):
            for name in {comp.name, comp.display}:
                out.update((self.overrides.get(kind) or {}).get(name) or {})
        return out

    def job_folder(self, out: str | os.PathLike) -> Path:
        """Where the jobs' files go: ``folder``, else ``OUT/slurm``."""
        return Path(self.folder).expanduser() if self.folder else Path(out) / "slurm"

    def describe(self) -> str:
        """One line for ``clad run --dry-run``."""
        parts = [
            f"partition {self.partition}" if self.partition else "the default partition",
            f"at most {self.max_jobs} jobs at once",
        ]
        if self.runs_per_job:
            parts.append(f"{self.runs_per_job} runs per job")
        return "SLURM (" + ", ".join(parts) + ")"


#: the keys of a ``[slurm]`` section: the fields of :class:`SlurmConfig` but the two set in code
_TOP_KEYS = tuple(
    f.name for f in fields(SlurmConfig) if f.name not in ("overrides", "confirm_cancel")
)


def runs_per_job(
    n: int,
    max_jobs: int,
    run_seconds: float | None,
    time_minutes: int | None = None,
    timeout: float | None = None,
) -> int:
    """Default runs per job for ``n`` runs of about ``run_seconds`` each: as many as make a job
    of :data:`JOB_SECONDS`, but no more than spread the runs over ``max_jobs`` jobs, and no more
    than fit half of ``time_minutes`` (when given).

    >>> runs_per_job(20000, 100, 5.0)   # 60 runs of 5 s: 5-minute jobs
    60
    >>> runs_per_job(200, 64, 0.3)      # few short runs: spread over the 64 jobs
    4
    >>> runs_per_job(10, 64, None)
    1
    """
    est = run_seconds if run_seconds and run_seconds > 0 else DEFAULT_RUN_SECONDS
    if timeout:
        est = min(est, float(timeout))
    chunk = min(math.ceil(JOB_SECONDS / est), math.ceil(n / max(1, max_jobs)))
    if time_minutes:
        chunk = min(chunk, max(1, math.floor(time_minutes * 60 / 2 / est)))
    return max(1, chunk)


def time_limit_minutes(resources: Mapping[str, Any], chunk: int, timeout: float | None) -> int:
    """A job's time limit: ``time_minutes`` when set, else ``chunk`` x ``timeout`` plus
    :data:`START_UP_SECONDS` (60 minutes without a ``timeout``).

    >>> time_limit_minutes({"time_minutes": None}, 10, 60.0)
    15
    >>> time_limit_minutes({"time_minutes": 30}, 10, 60.0)
    30
    """
    if resources.get("time_minutes"):
        return int(resources["time_minutes"])
    if timeout:
        return max(1, math.ceil((chunk * float(timeout) + START_UP_SECONDS) / 60))
    return 60


def _no_control(where: str, key: str, value: str) -> None:
    """A value written into a job script or an sbatch option holds no control character (a line
    break there would start another line of the script)."""
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        raise CladValueError(
            f"{where} {key}: {value!r} holds the control character {bad!r}; expected printable text"
        )


def _check_value(where: str, key: str, value: Any) -> Any:
    if key in _INT_KEYS or key in ("retries",):
        low = 0 if key == "retries" else 1
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAXIMA[key]:
            raise CladValueError(
                f"{where} {key}: {value!r}; expected an integer in [{low}, {MAXIMA[key]:,}]"
            )
        return int(value)
    if key in ("mem_gb", "poll_seconds"):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 < value <= MAXIMA[key]
        ):
            raise CladValueError(
                f"{where} {key}: {value!r}; expected a number > 0 and at most {MAXIMA[key]:,g}"
            )
        return float(value)
    if key in _STR_KEYS:
        if not isinstance(value, str) or not value:
            raise CladValueError(f"{where} {key}: {value!r}; expected a non-empty string")
        _no_control(where, key, value)
        return value
    if key == "setup":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise CladValueError(f"{where} setup: {value!r}; expected a list of shell lines")
        return tuple(value)
    if key == "cancel_on_exit":
        if not isinstance(value, bool):
            raise CladValueError(f"{where} cancel_on_exit: {value!r}; expected true or false")
        return value
    if key == "sbatch":
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise CladValueError(f"{where} sbatch: {value!r}; expected a table of sbatch options")
        for k, v in value.items():
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", k):
                raise CladValueError(
                    f"{where} sbatch: option {k!r}; expected an sbatch option name (letters, "
                    "digits, '-' and '_')"
                )
            if (
                isinstance(v, float)
                and not math.isfinite(v)
                or not isinstance(v, (str, int, float))
            ):
                raise CladValueError(
                    f"{where} sbatch.{k}: {v!r}; expected a string or a finite number"
                )
            _no_control(where, f"sbatch.{k}", str(v))
        return dict(value)
    raise AssertionError(key)  # pragma: no cover


def parse_slurm(table: Mapping[str, Any] | None, base: SlurmConfig | None = None) -> SlurmConfig:
    """A :class:`SlurmConfig` from a ``[slurm]`` table (keys given win over ``base``'s); a
    :class:`~clad.errors.CladValueError` naming the key, the value and what is allowed."""
    table = dict(table or {})
    values: dict[str, Any] = {}
    overrides = {k: dict(v) for k, v in (base.overrides if base else {}).items()}
    allowed = _TOP_KEYS + COMPONENT_KINDS
    for key, value in table.items():
        if key in COMPONENT_KINDS:
            if not isinstance(value, Mapping):
                raise CladValueError(
                    f"[slurm] {key}: {value!r}; expected tables [slurm.{key}.NAME]"
                )
            for name, res in value.items():
                if not isinstance(res, Mapping):
                    raise CladValueError(
                        f"[slurm.{key}.{name}]: {res!r}; expected a table of resources"
                    )
                checked = {}
                for k, v in res.items():
                    if k not in RESOURCE_KEYS:
                        raise CladValueError(
                            f"[slurm.{key}.{name}] {k}: unknown key{did_you_mean(k, RESOURCE_KEYS)}; "
                            f"allowed: {', '.join(RESOURCE_KEYS)}"
                        )
                    checked[k] = _check_value(f"[slurm.{key}.{name}]", k, v)
                overrides.setdefault(key, {})[str(name)] = checked
        elif key in _TOP_KEYS:
            values[key] = _check_value("[slurm]", key, value)
        else:
            raise CladValueError(
                f"[slurm] {key}: unknown key{did_you_mean(key, allowed)}; allowed: {', '.join(allowed)}"
            )
    return replace(base or SlurmConfig(), **values, overrides=overrides)


def load_slurm(path: str | os.PathLike, base: SlurmConfig | None = None) -> SlurmConfig:
    """:func:`parse_slurm` of a TOML file: its ``[slurm]`` table, or its top level without one."""
    import tomllib

    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise CladValueError(
            f"--slurm {str(path)!r}: cannot read the file ({exc.strerror or exc})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise CladValueError(f"--slurm {str(path)!r}: not valid TOML ({exc})") from None
    return parse_slurm(
        doc.get("slurm", doc) if isinstance(doc.get("slurm"), Mapping) else doc, base
    )


def seconds_of(timings) -> float:
    """The seconds a run's ``timings`` add up to (0 for anything but finite numbers)."""
    if isinstance(timings, (int, float)) and not isinstance(timings, bool):
        return float(timings) if math.isfinite(timings) else 0.0
    if isinstance(timings, dict):
        return sum(seconds_of(v) for v in timings.values())
    if isinstance(timings, (list, tuple)):
        return sum(seconds_of(v) for v in timings)
    return 0.0
