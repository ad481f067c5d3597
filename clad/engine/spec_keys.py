"""The keys of a spec that hold values (not components): ``name``, ``base_metrics`` and their
parameters, ``threshold``, ``seeds``, the execution keys (``jobs``, ``threads``, ``dask``,
``timeout``, ``replicas``, ``share``, ``skip_incompatible``, ``[slurm]``, the size limits) and
``references``; and :class:`SpecReading`, a spec being read, which every reader of
:data:`clad.engine.spec.SPEC_READERS` fills in.

>>> r = SpecReading({"seeds": 3, "jobs": 0}, name="demo")
>>> read_seeds(r); read_execution(r)
>>> list(r.seeds), r.jobs, r.problems
([0, 1, 2], None, ['jobs: 0; expected an integer >= 1 (worker processes)'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..defaults import DEFAULT_BASE_METRIC
from ..errors import CladError
from ..metrics.base import (
    base_metric_names,
    base_metric_problem,
    check_metric_params,
    metric_did_you_mean,
)
from ..registry import Registry, did_you_mean
from ..validation import Interval, Real
from ..validation import problems as validation_problems
from .config import MAX_TIMEOUT, Component, RunConfig
from .sections import MAX_DATA_GB, MAX_EVALUATIONS, MAX_RUNS, TOP_LEVEL_KEYS, count_constraint

if TYPE_CHECKING:
    from ..scenarios.base import Scenario
    from .slurm_config import SlurmConfig
    from .tuning import TuningPlan

__all__ = [
    "SpecReading",
    "read_keys",
    "read_name",
    "read_base_metrics",
    "read_threshold",
    "read_seeds",
    "read_execution",
    "read_references",
]


@dataclass
class SpecReading:
    """A spec being read: its table, what the readers of :data:`~clad.engine.spec.SPEC_READERS`
    have taken from it so far, and every problem found (all of them are reported together)."""

    raw: dict
    name: str
    problems: list[str] = field(default_factory=list)
    #: the base metrics' names (as written, so a wrong one is reported once)
    metrics: list[Any] = field(default_factory=list)
    metric_params: dict | None = None
    #: the threshold policy; None: each detector's own
    threshold: dict | None = None
    seeds: Sequence[int] = ()
    skip_incompatible: bool = False
    jobs: int | None = None
    threads: int | None = None
    dask: str | None = None
    slurm: SlurmConfig | None = None
    timeout: float | None = None
    max_runs: int = MAX_RUNS
    max_evaluations: int = MAX_EVALUATIONS
    max_data_gb: float = MAX_DATA_GB
    share: bool = True
    replicas: int = 32
    references: tuple[str, ...] = ()
    #: ``{section: registry}`` of the component sections
    regs: dict[str, Registry] = field(default_factory=dict)
    #: ``{section: components}``: datasets (one per concept order), scenarios, strategies, detectors
    sections: dict[str, list[Component]] = field(default_factory=dict)
    #: the built scenarios, by display label
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    #: the (scenario, strategy) pairs that can run
    pairs: list[tuple[Component, Component]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: the grid (:class:`~clad.engine.spec_grid.Grid`)
    configs: Sequence[RunConfig] | None = None
    tuning: TuningPlan | None = None


def read_keys(r: SpecReading) -> None:
    for key in r.raw:
        if key not in TOP_LEVEL_KEYS:
            r.problems.append(
                f"{key}: unknown key{did_you_mean(key, TOP_LEVEL_KEYS)}; allowed: {', '.join(TOP_LEVEL_KEYS)}"
            )


def read_name(r: SpecReading) -> None:
    name = r.raw.get("name", r.name)
    if not isinstance(name, str) or not name:
        r.problems.append(f"name: expected a non-empty string, got {name!r}")
    else:
        r.name = name


def read_base_metrics(r: SpecReading) -> None:
    metrics = r.raw.get("base_metrics", [DEFAULT_BASE_METRIC])
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not metrics:
        r.problems.append(
            f"base_metrics: expected a non-empty list, allowed names: {', '.join(base_metric_names())}"
            ", or an import path 'package.module:NAME'"
        )
        metrics = []
    for i, m in enumerate(metrics):
        known = base_metric_names()
        if isinstance(m, str) and (":" in m or "." in m):  # a plug-in's declaration, by import path
            problem = base_metric_problem(m)
            if problem:
                r.problems.append(f"base_metrics[{i}]: {problem}")
        elif not isinstance(m, str) or m not in known:
            r.problems.append(
                f"base_metrics[{i}]: unknown base metric {m!r}{metric_did_you_mean(m)}; "
                f"allowed: {', '.join(known)}, or an import path 'package.module:NAME'"
            )
    if len(set(map(str, metrics))) != len(metrics):
        r.problems.append(f"base_metrics: a name is listed twice in {metrics!r}")
    r.metrics = metrics
    try:
        r.metric_params = check_metric_params(
            r.raw.get("base_metric_params"), [m for m in metrics if isinstance(m, str)]
        )
    except CladError as exc:
        r.problems.append(str(exc))


def _flag(r: SpecReading, key: str, default: bool, meaning: str = "") -> bool:
    value = r.raw.get(key, default)
    if not isinstance(value, bool):
        r.problems.append(f"{key}: expected true or false{meaning}, got {value!r}")
        return default
    return value


def read_execution(r: SpecReading) -> None:
    r.skip_incompatible = _flag(r, "skip_incompatible", False)
    _execution_keys(r)
    r.share = _flag(r, "share", True, " (compute runs that are one computation once)")
    if r.raw.get("slurm") is not None:
        from ..errors import CladValueError
        from .slurm_config import parse_slurm

        if not isinstance(r.raw["slurm"], dict):
            r.problems.append(
                f"slurm: {r.raw['slurm']!r}; expected a table [slurm] (keys: partition, mem_gb, ...)"
            )
        else:
            try:
                r.slurm = parse_slurm(r.raw["slurm"])
            except CladValueError as exc:
                r.problems.append(str(exc))
    replicas = r.raw.get("replicas")
    if replicas is not None:
        found = validation_problems(None, {"replicas": replicas}, _EXECUTION_CONSTRAINTS)
        r.problems.extend(found)
        if not found:
            r.replicas = int(replicas)


def read_threshold(r: SpecReading) -> None:
    """``threshold = "own"`` (each detector's own, the default) or ``{fpr = 0.05}``."""
    from ..core.thresholds import check_threshold

    if "threshold" not in r.raw:
        return
    try:
        policy = check_threshold(r.raw["threshold"])
    except CladError as exc:
        r.problems.append(str(exc))
        return
    r.threshold = None if policy == "own" else policy
    if r.threshold is not None:
        r.problems.extend(_threshold_serves_nothing(r.raw["threshold"], r.metrics))


def _threshold_serves_nothing(raw, metrics) -> list[str]:
    """A problem when a threshold policy serves no base metric of the spec: it sets the labels of
    the metrics that read them, and its calibration rows (held out of every training concept)
    would change every other metric for nothing."""
    from ..metrics.base import find_base_metric

    decls = [find_base_metric(m) for m in metrics if isinstance(m, str)]
    if any(d is None for d in decls) or any(d.input == "labels" for d in decls):
        return []  # a base metric it serves (or one the base_metrics check reports)
    return [
        f"threshold = {raw!r} serves none of base_metrics {', '.join(map(str, metrics))}: a threshold policy "
        "sets the labels of the metrics that read them (such as f1, range_f1, event_f1), and the calibration "
        "rows it holds out of every training concept would change these metrics for nothing; remove "
        "threshold, or add a thresholded base metric"
    ]


#: the spec's own keys of numbers, in the one vocabulary of clad.validation
_EXECUTION_CONSTRAINTS = {
    "jobs": count_constraint("worker processes"),
    "threads": count_constraint("BLAS/OpenMP/torch threads per run"),
    "timeout": [
        Interval(
            Real,
            0,
            MAX_TIMEOUT,
            closed="right",
            description=f"a positive number of seconds per run, at most {MAX_TIMEOUT:,.0f} (30 days); "
            "leave timeout out for no limit",
        )
    ],
    "replicas": count_constraint("the most runs of one torch network trained together; 1: off"),
    "max_runs": count_constraint(f"the largest grid to accept; default {MAX_RUNS:,}"),
    "max_evaluations": count_constraint(
        "the most evaluations of one run: anytime evaluations, or R's cells, training steps x "
        f"test concepts; default {MAX_EVALUATIONS:,}"
    ),
    "max_data_gb": [
        Interval(
            Real,
            0,
            None,
            closed="neither",
            description="a positive number of gigabytes (the largest generated data set; "
            f"default {MAX_DATA_GB:g})",
        )
    ],
}


def _execution_keys(r: SpecReading) -> None:
    """jobs, threads, dask, timeout, max_runs, max_evaluations and max_data_gb, each problem
    reported in that order (the limits keep their defaults when absent or wrong)."""
    for key in ("jobs", "threads", "dask", "timeout", "max_runs", "max_evaluations", "max_data_gb"):
        value = r.raw.get(key)
        if value is None:
            continue
        if key != "dask":
            found = validation_problems(None, {key: value}, _EXECUTION_CONSTRAINTS)
        elif isinstance(value, str) and value.strip():
            found = []
        else:
            found = [
                f"dask: {value!r}; expected a scheduler address such as 'tcp://scheduler:8786'"
            ]
        r.problems.extend(found)
        if not found:
            setattr(r, key, value)


def read_seeds(r: SpecReading) -> None:
    """The seeds: a count ``n`` is ``range(n)`` (never a list), or a list of distinct seeds."""
    value = r.raw.get("seeds", [0])
    if isinstance(value, int) and not isinstance(value, bool):
        if 1 <= value < 2**63:
            r.seeds = range(value)
            return
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63 for s in value)
    ):
        if len(set(value)) == len(value):
            r.seeds = value
            return
    shown = (
        repr(value)
        if not isinstance(value, list) or len(value) < 20
        else f"a list of {len(value)} values"
    )
    r.problems.append(
        f"seeds: {shown}; expected a count >= 1 or a list of distinct non-negative integers"
    )


def read_references(r: SpecReading) -> None:
    """The reference kinds of the ``references`` key: a list of distinct kinds."""
    from ..metrics.reference_metrics import REFERENCE_KINDS

    value, problems = r.raw.get("references", []), r.problems

    allowed = ", ".join(f'"{k}"' for k in REFERENCE_KINDS)
    if not isinstance(value, list):
        problems.append(
            f'references: {value!r}; expected a list of reference kinds, e.g. ["joint", '
            f'"single_task"] (allowed: {allowed})'
        )
        return
    found = []
    for i, v in enumerate(value):
        if not isinstance(v, str) or v not in REFERENCE_KINDS:
            problems.append(
                f"references[{i}]: {v!r} is not a reference kind{did_you_mean(str(v), REFERENCE_KINDS)}; "
                f"allowed: {allowed}"
            )
        elif v in found:
            problems.append(f"references: {v!r} is listed twice in {value!r}")
        else:
            found.append(v)
    r.references = tuple(found)
