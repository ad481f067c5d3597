"""Spec files: a benchmark grid in TOML, validated completely before anything runs.

.. code-block:: toml

    name = "quickstart"
    base_metrics = ["roc_auc", "f1"]          # default ["roc_auc"]; time series: "vus_pr", "range_f1", ...;
                                              # a plug-in's: "package.module:NAME" (a clad.metrics.BaseMetric)
    base_metric_params = { vus_pr = { window = 50 } }   # optional: parameters of base metrics
    baselines = true                          # optional: add the baseline detectors (random_scores and the
                                              # simple time-series baselines) to every block; or a list
    threshold = { fpr = 0.05 }                # optional: every detector's labels at this false-positive
                                              # rate on held-out normal rows (default "own": each
                                              # detector's own threshold; docs/guides/thresholds.md)
    postprocess = { median = 5 }              # optional: every detector's scores smoothed in row order
                                              # (median, mean or max over k rows; warmup = "partial"
                                              # or "unflagged", the default; docs/guides/published.md)
    seeds = 2                                 # a count (0, 1) or a list [0, 7]; default [0]
    orders = ["given", "random"]              # optional: concept orders, passed as `order=` to
                                              # loaders that take it ("given" needs no support);
                                              # or a table: orders = { random = 3 } draws three
                                              # fixed permutations from `order_seed`, each run
                                              # with every seed (see docs/guides/orders.md)
    order_seed = 0                            # optional: seed of those permutations (default 0)
    jobs = 2                                  # optional: worker processes (clad run --jobs wins)
    threads = 1                               # optional: BLAS/OpenMP/torch threads per run (default 1)
    dask = "tcp://scheduler:8786"             # optional: run on a Dask cluster (--dask wins)
                                              # (a [slurm] table, after the top-level keys, runs
                                              # the grid as SLURM jobs: docs/guides/running.md)
    timeout = 600                             # optional: seconds per run before it is failed
    replicas = 32                             # optional: runs of one torch network trained together
                                              # as one stacked model (default 32; 1: off; see
                                              # docs/guides/replicas.md)
    max_runs = 200000                         # optional: accept a grid this large (default 100,000),
                                              # tuning runs and parameter combinations included
    max_evaluations = 20000                   # optional: evaluations per run, anytime ones or R's cells
                                              # (steps x test concepts; default 10,000)
    max_data_gb = 16                          # optional: the largest generated data set (default 4 GB)
    references = ["joint", "single_task"]     # optional: reference runs, once per dataset x detector x
                                              # seed, and every run's metrics against them
                                              # (see docs/guides/references.md)

    [[datasets]]
    name = "synthetic"                        # a registered name or "package.module:function"
    n_concepts = 4                            # every other key is a keyword parameter

    [[scenarios]]
    name = "concept_agnostic"
    batch_size = 200

    strategies = ["naive", "cumulative"]      # a plain name needs no table

    [[detectors]]
    name = "iforest"
    label = "IF-50"                           # optional display label
    n_estimators = 50
    grid = { max_samples = [64, 256] }        # optional: one entry per combination

An optional ``[tuning]`` section chooses detector (and strategy) parameters on data the evaluation
never scores (:mod:`clad.engine.tuning`, docs/guides/tuning.md); the grid's runs are then its
evaluation runs.

The grid is datasets x orders x scenarios x strategies x detectors x seeds. Every problem in the file is
reported at once (a :class:`~clad.errors.SpecError` listing them), each with the key it is about
and a did-you-mean for misspelt names. A spec names classes by import path and so runs code, like a
Python script: run only specs you trust.
"""

from __future__ import annotations

import inspect
import math
import operator
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..metrics.base import (
    base_metric_names,
    base_metric_problem,
    check_metric_params,
    metric_did_you_mean,
)
from ..defaults import DEFAULT_BASE_METRIC
from ..errors import CladError, SpecError
from ..registry import did_you_mean
from ..validation import Integral, Interval, Real, constraints_of
from ..validation import problems as validation_problems
from .config import MAX_TIMEOUT, Component, RunConfig
from .sections import MAX_RUNS, TOP_LEVEL_KEYS, entries, registries

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Spec", "load_spec", "parse_spec", "TOP_LEVEL_KEYS"]

#: anytime evaluations of one run above this need an explicit ``max_evaluations``
MAX_EVALUATIONS = 10_000
#: a data set a spec generates (its size known from its parameters) above this many GB needs ``max_data_gb``
MAX_DATA_GB = 4.0


class Grid(Sequence):
    """The run configurations of a spec, computed on demand: datasets x (scenario, strategy) pairs
    x detectors x seeds, seeds varying fastest. Its length is a product, so a grid of 10**9 runs
    costs no memory until it is iterated (and a spec refuses it unless ``max_runs`` allows it).

    >>> from clad.engine.config import Component
    >>> g = Grid([Component("synthetic")], [(Component("concept_aware"), Component("naive"))],
    ...          [Component("iforest")], range(10**9), ("roc_auc",))
    >>> len(g), g[-1].seed, g[3].seed
    (1000000000, 999999999, 3)
    """

    def __init__(
        self, datasets, pairs, detectors, seeds, base_metrics, metric_params=None, threshold=None
    ):
        self.datasets, self.pairs, self.detectors = list(datasets), list(pairs), list(detectors)
        self.seeds, self.base_metrics = seeds, tuple(base_metrics)
        self.metric_params = metric_params or None
        self.threshold = threshold or None

    @property
    def size(self) -> int:
        """The number of runs (also when it is beyond what ``len()`` can return)."""
        return len(self.datasets) * len(self.pairs) * len(self.detectors) * self.seeds.__len__()

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        i = operator.index(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("grid index out of range")
        i, s = divmod(i, len(self.seeds))
        i, d = divmod(i, len(self.detectors))
        ds, p = divmod(i, len(self.pairs))
        sc, st = self.pairs[p]
        return RunConfig(
            dataset=self.datasets[ds],
            scenario=sc,
            strategy=st,
            detector=self.detectors[d],
            seed=int(self.seeds[s]),
            base_metrics=self.base_metrics,
            metric_params=self.metric_params,
            threshold=self.threshold,
        )


class _TunedGrid(Grid):
    """A grid whose runs are evaluation runs of a ``[tuning]`` section: each sees the ``evaluate``
    part of its data (its tuned parameters are chosen when the tuning runs have finished)."""

    def __init__(self, grid: Grid, plan):
        super().__init__(
            grid.datasets,
            grid.pairs,
            grid.detectors,
            grid.seeds,
            grid.base_metrics,
            grid.metric_params,
            grid.threshold,
        )
        self.plan = plan

    def __getitem__(self, i):
        cfg = super().__getitem__(i)
        return (
            cfg if isinstance(i, slice) else self.plan.evaluation_base(cfg)
        )  # a slice calls this per item


@dataclass
class Spec:
    """A validated spec: its name, source and the expanded grid of run configurations; ``text``
    is the TOML the user wrote (None for a spec given as a dict)."""

    name: str
    configs: Sequence[RunConfig]
    raw: dict = field(default_factory=dict)
    source: str | None = None
    skipped: list[str] = field(default_factory=list)
    jobs: int | None = None
    threads: int | None = None
    dask: str | None = None
    timeout: float | None = None
    text: str | None = None
    #: the validated ``[slurm]`` section (:class:`clad.engine.slurm_config.SlurmConfig`), or None
    slurm: Any = None
    share: bool = True
    #: the most runs of one torch network trained together (:mod:`clad.engine.replicas`; 1: off)
    replicas: int = 32
    #: the validated ``[tuning]`` section (:class:`clad.engine.tuning.TuningPlan`), or None
    tuning: Any = None
    #: the reference runs to compute (:mod:`clad.engine.references`): kinds of
    #: :data:`clad.metrics.reference_metrics.REFERENCE_KINDS`
    references: tuple[str, ...] = ()

    @property
    def tuning_configs(self) -> list[RunConfig]:
        """The tuning runs of a spec with a ``[tuning]`` section (none without)."""
        return [] if self.tuning is None else self.tuning.tuning_configs(self.configs)

    def __len__(self) -> int:
        return len(self.configs)


#: the largest spec file read (a spec is a page of text) and the deepest nesting of its tables and lists
MAX_SPEC_BYTES = 10_000_000
MAX_SPEC_DEPTH = 32


def _depth(value: Any, level: int = 0) -> int:
    """How deep ``value``'s tables and lists nest (stops counting past :data:`MAX_SPEC_DEPTH`)."""
    if level > MAX_SPEC_DEPTH or not isinstance(value, (dict, list)):
        return level
    items = value.values() if isinstance(value, dict) else value
    return max([_depth(v, level + 1) for v in items] or [level + 1])


def load_spec(path: str | Path) -> Spec:
    """Read and validate a TOML spec file."""
    path = Path(path)
    try:
        import stat as _stat

        mode = path.stat().st_mode
        if not (
            _stat.S_ISREG(mode) or _stat.S_ISDIR(mode)
        ):  # a FIFO, a device (/dev/zero), a socket
            raise SpecError(
                f"spec {str(path)!r} is not a regular file (a pipe, a device or a socket); expected a "
                "TOML file"
            )
        if _stat.S_ISREG(mode) and path.stat().st_size > MAX_SPEC_BYTES:
            raise SpecError(
                f"spec file {str(path)!r} holds {path.stat().st_size:,} bytes, more than a spec's "
                f"{MAX_SPEC_BYTES:,}; is it a spec?"
            )
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise SpecError(f"spec {str(path)!r} is a folder; expected a TOML file") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"spec file is not UTF-8 text ({exc})", source=str(path)) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", source=str(path)) from None
    except RecursionError:
        raise SpecError(
            f"its tables or lists are nested more than {MAX_SPEC_DEPTH} deep", source=str(path)
        ) from None
    if _depth(raw) > MAX_SPEC_DEPTH:
        raise SpecError(
            f"its tables or lists are nested more than {MAX_SPEC_DEPTH} deep", source=str(path)
        )
    spec = parse_spec(raw, source=str(path), default_name=path.stem)
    spec.text = text
    return spec


def _check_scenarios(components: list[Component], problems: list[str]) -> dict[str, Any]:
    from ..scenarios import SCENARIOS

    built = {}
    for i, c in enumerate(components):
        try:
            obj = SCENARIOS.build(c.name, c.params)
            if hasattr(obj, "_validate"):
                obj._validate()
            built[c.display] = obj
        except CladError as exc:
            problems.append(f"scenarios[{i}]: {exc}")
    return built


#: the spec's own keys of numbers, in the one vocabulary of clad.validation
_EXECUTION_CONSTRAINTS = {
    "jobs": [
        Interval(Integral, 1, None, closed="left", description="an integer >= 1 (worker processes)")
    ],
    "threads": [
        Interval(
            Integral,
            1,
            None,
            closed="left",
            description="an integer >= 1 (BLAS/OpenMP/torch threads per run)",
        )
    ],
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
    "replicas": [
        Interval(
            Integral,
            1,
            None,
            closed="left",
            description="an integer >= 1 (the most runs of one torch network trained together; 1: off)",
        )
    ],
    "max_runs": [
        Interval(
            Integral,
            1,
            None,
            closed="left",
            description=f"an integer >= 1 (the largest grid to accept; default {MAX_RUNS:,})",
        )
    ],
    "max_evaluations": [
        Interval(
            Integral,
            1,
            None,
            closed="left",
            description=f"an integer >= 1 (the most evaluations of one run: anytime evaluations, "
            f"or R's cells, training steps x test concepts; "
            f"default {MAX_EVALUATIONS:,})",
        )
    ],
    "max_data_gb": [
        Interval(
            Real,
            0,
            None,
            closed="neither",
            description=f"a positive number of gigabytes (the largest generated data set; "
            f"default {MAX_DATA_GB:g})",
        )
    ],
}


def _execution_keys(raw: dict, problems: list[str]) -> tuple:
    """jobs, threads, dask, timeout, max_runs, max_evaluations and max_data_gb, each problem
    reported in that order (the limits take their defaults when absent or wrong)."""
    out = {}
    for key in ("jobs", "threads", "dask", "timeout", "max_runs", "max_evaluations", "max_data_gb"):
        value = raw.get(key)
        if value is None:
            found = []
        elif key == "dask":
            found = (
                []
                if isinstance(value, str) and value.strip()
                else [
                    f"dask: {value!r}; expected a scheduler address such as 'tcp://scheduler:8786'"
                ]
            )
        else:
            found = validation_problems(None, {key: value}, _EXECUTION_CONSTRAINTS)
        problems.extend(found)
        out[key] = None if found else value
    return (
        out["jobs"],
        out["threads"],
        out["dask"],
        out["timeout"],
        out["max_runs"] or MAX_RUNS,
        out["max_evaluations"] or MAX_EVALUATIONS,
        out["max_data_gb"] or MAX_DATA_GB,
    )


def _order_values(
    raw: dict, problems: list[str], max_runs: int = MAX_RUNS
) -> list[tuple[str, str]] | None:
    """``(order value, label)`` per concept order of ``raw["orders"]``, or None after a problem.

    A list names orders (``"random"`` is then drawn from each run's seed). A table maps an order
    name to a count: ``{ random = 3 }`` gives three permutations fixed by ``order_seed``
    (``"random:<seed>"``, labelled ``random#1`` ...), independent of the run seed, so that every
    seed runs every order; any other name takes the count 1.
    """
    orders = raw["orders"]
    if isinstance(orders, str):
        orders = [orders]
    if isinstance(orders, dict):
        order_seed = raw.get("order_seed", 0)
        if isinstance(order_seed, bool) or not isinstance(order_seed, int) or order_seed < 0:
            problems.append(f"order_seed: {order_seed!r}; expected an integer >= 0")
            return None
        out = []
        for name, count in orders.items():
            if (
                isinstance(count, bool)
                or not isinstance(count, int)
                or count < 1
                or (name != "random" and count != 1)
            ):
                problems.append(
                    f'orders.{name}: {count!r}; expected a count >= 1 (more than 1 only for "random")'
                )
                return None
            if name != "random":
                out.append((name, name))
                continue
            if count > max_runs:  # refused before any of them is drawn: each is at least one run
                problems.append(
                    f"orders.random: {count:,} orders, each at least one run: more than max_runs = "
                    f"{max_runs:,}; to run them, set max_runs = {count} at the top of the spec"
                )
                return None
            seeds = [
                int(c.generate_state(1)[0]) for c in np.random.SeedSequence(order_seed).spawn(count)
            ]
            out += [(f"random:{sd}", f"random#{i + 1}") for i, sd in enumerate(seeds)]
        if not out:
            problems.append("orders: an empty table; expected e.g. { random = 3 }")
            return None
        return out
    if "order_seed" in raw:
        problems.append(
            "order_seed: only used with a table of orders, e.g. orders = { random = 3 }"
        )
    if (
        not isinstance(orders, list)
        or not orders
        or not all(isinstance(o, str) and o for o in orders)
        or len(set(orders)) != len(orders)
    ):
        problems.append(
            f'orders: {raw["orders"]!r}; expected a list of distinct names, e.g. ["given", "random"], '
            "or a table of counts, e.g. { random = 3 }"
        )
        return None
    return [(o, o) for o in orders]


def _apply_orders(
    raw: dict, datasets: list[Component], problems: list[str], max_runs: int = MAX_RUNS
) -> list[Component]:
    """One dataset component per concept order (``order=<value>`` for loaders that take it).

    The label of a dataset names the order only when the spec has several order *names*: the fixed
    permutations of ``{ random = 3 }`` share the label ``<dataset>[order=random]`` (they are one
    configuration, run over orders and seeds; each run records its order)."""
    if "orders" not in raw:
        return datasets
    values = _order_values(raw, problems, max_runs)
    if values is None:
        return datasets
    names = list(dict.fromkeys(v.split(":")[0] for v, _ in values))

    from ..datasets import DATASETS

    from ..datasets.build import ORDERS, fixed_order_seed

    out: list[Component] = []
    reported: set[str] = set()
    for c in datasets:
        try:
            loader = DATASETS.resolve(c.name)
            sig = inspect.signature(loader).parameters
            takes_order = "order" in sig or any(p.kind is p.VAR_KEYWORD for p in sig.values())
        except (CladError, TypeError, ValueError):
            loader, takes_order = None, False
        if takes_order and (getattr(loader, "__module__", "") or "").split(".")[0] == "clad":
            # clad's loaders know the orders of clad.datasets.build; a plug-in loader may know others
            unknown = [o for o, _ in values if o not in ORDERS and fixed_order_seed(o) is None]
            for o in unknown:
                if (c.name, o) not in reported:
                    reported.add((c.name, o))
                    problems.append(
                        f"orders: {o!r} is not a concept order of dataset {c.display!r}"
                        f"{did_you_mean(o, ORDERS)}; allowed: {', '.join(map(repr, ORDERS))} or "
                        "'random:<seed>'"
                    )
            if unknown:
                continue
        if "order" in c.params:
            if c.name not in reported:
                reported.add(c.name)
                problems.append(
                    f"datasets ({c.display}).order: set the concept order either here or in the "
                    "top-level 'orders' list, not both"
                )
            continue
        for o, _ in values:
            if (
                takes_order and loader is not None
            ):  # the loader's own declaration of `order`, at spec time
                found = validation_problems(
                    f"datasets ({c.display})", {"order": o}, constraints_of(loader)
                )
                if found:
                    if (c.name, o) not in reported:
                        reported.add((c.name, o))
                        problems.extend(found)
                    continue
            if not takes_order:
                if o != "given":
                    if c.name not in reported:
                        reported.add(c.name)
                        problems.append(
                            f"orders: dataset {c.display!r} cannot be given order {o!r}: its loader "
                            f"{c.name!r} has no 'order' parameter (only \"given\" is possible)"
                        )
                    continue
                out.append(c)
                continue
            label = c.display if names == ["given"] else f"{c.display}[order={o.split(':')[0]}]"
            out.append(Component(c.name, {**c.params, "order": o}, label))
    return out


def _size_problems(sections: dict, max_evaluations: int, max_data_gb: float) -> list[str]:
    """Sizes known from the parameters before anything is built: the evaluations of a run (R's
    cells, ``n_concepts`` squared, and the anytime evaluations, ``anytime_per_concept`` x training
    concepts, where the dataset states its concept count) and
    the bytes of a generated data set (a loader's declared ``nbytes``)."""
    from ..datasets import DATASETS
    from ..validation import arguments

    out = []
    concepts = [1]
    for c in sections.get("datasets", []):
        try:
            loader = DATASETS.resolve(c.name)
            args = arguments(loader, {**DATASETS.defaults(c.name), **c.params})
        except (CladError, TypeError, ValueError):
            continue
        n = args.get("n_concepts")
        if isinstance(n, int) and not isinstance(n, bool):
            concepts.append(n)
            if n * n > max_evaluations:  # R: every test concept scored after every training step
                out.append(
                    f"datasets ({c.display}).n_concepts: {n:,} training steps x {n:,} test concepts = "
                    f"{n * n:,} evaluations of R per run, more than max_evaluations = {max_evaluations:,}; "
                    f"to run it, set max_evaluations = {n * n} at the top of the spec"
                )
        size = getattr(loader, "_data_nbytes", None)
        try:
            nbytes = size(args) if size is not None else None
        except (TypeError, ValueError, KeyError, CladError):
            nbytes = None
        if nbytes is not None and nbytes > max_data_gb * 1e9:
            out.append(
                f"datasets ({c.display}): the data set would take {nbytes / 1e9:,.1f} GB in memory "
                f"({size.__doc__ or 'from its parameters'}), more than max_data_gb = {max_data_gb:g}; "
                f"to build it, set max_data_gb = {math.ceil(nbytes / 1e9)} at the top of the spec"
            )
    for i, c in enumerate(sections.get("scenarios", [])):
        h = c.params.get("anytime_per_concept")
        if isinstance(h, int) and not isinstance(h, bool) and h > 0:
            n = h * max(concepts)
            if n > max_evaluations:
                out.append(
                    f"scenarios[{i}] ({c.display}).anytime_per_concept: {h:,} evaluations per training "
                    f"concept x {max(concepts):,} concepts = {n:,} anytime evaluations per run, more than "
                    f"max_evaluations = {max_evaluations:,}; to run it, set max_evaluations = {n} at the "
                    "top of the spec"
                )
    return out


def _seeds(value: Any, problems: list[str]) -> Sequence[int]:
    """The seeds: a count ``n`` is ``range(n)`` (never a list), or a list of distinct seeds."""
    if isinstance(value, int) and not isinstance(value, bool):
        if 1 <= value < 2**63:
            return range(value)
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63 for s in value)
    ):
        if len(set(value)) == len(value):
            return value
    shown = (
        repr(value)
        if not isinstance(value, list) or len(value) < 20
        else f"a list of {len(value)} values"
    )
    problems.append(
        f"seeds: {shown}; expected a count >= 1 or a list of distinct non-negative integers"
    )
    return []


def _references(value: Any, problems: list[str]) -> tuple[str, ...]:
    """The reference kinds of the ``references`` key: a list of distinct kinds."""
    from ..metrics.reference_metrics import REFERENCE_KINDS

    allowed = ", ".join(f'"{k}"' for k in REFERENCE_KINDS)
    if not isinstance(value, list):
        problems.append(
            f'references: {value!r}; expected a list of reference kinds, e.g. ["joint", '
            f'"single_task"] (allowed: {allowed})'
        )
        return ()
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
    return tuple(found)


def parse_spec(raw: dict, source: str | None = None, default_name: str = "benchmark") -> Spec:
    """Validate a spec given as a dict (the parsed TOML) and expand its grid (data files may also
    lie beside the spec file ``source``)."""
    from .spec_checks import SPEC_FOLDER

    folder = str(Path(source).resolve().parent) if source and Path(source).is_file() else None
    token = SPEC_FOLDER.set(folder)
    try:
        return _parse_spec(raw, source, default_name)
    finally:
        SPEC_FOLDER.reset(token)


def _parse_spec(raw: dict, source: str | None, default_name: str) -> Spec:
    if not isinstance(raw, dict):
        raise SpecError(
            f"expected a table at the top level, got {type(raw).__name__}", source=source
        )
    r = _Reading(raw, name=default_name)
    for read in SPEC_READERS:
        read(r)
    if r.problems:
        raise SpecError(r.problems, source=source)
    return Spec(
        name=r.name,
        configs=r.configs,
        raw=raw,
        source=source,
        skipped=r.skipped,
        jobs=r.jobs,
        threads=r.threads,
        dask=r.dask,
        timeout=None if r.timeout is None else float(r.timeout),
        share=r.share,
        tuning=r.tuning,
        references=r.references,
        slurm=r.slurm,
        replicas=r.replicas,
    )


@dataclass
class _Reading:
    """A spec being read: its table, what the readers of :data:`SPEC_READERS` have taken from it
    so far, and every problem found (all of them are reported together)."""

    raw: dict
    name: str
    problems: list[str] = field(default_factory=list)
    metrics: list = field(default_factory=list)
    metric_params: Any = None
    threshold: Any = None
    seeds: Sequence[int] = ()
    skip_incompatible: bool = False
    jobs: Any = None
    threads: Any = None
    dask: Any = None
    slurm: Any = None
    timeout: Any = None
    max_runs: int = MAX_RUNS
    max_evaluations: Any = None
    max_data_gb: Any = None
    share: bool = True
    replicas: int = 32
    references: tuple[str, ...] = ()
    regs: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)
    scenarios: dict = field(default_factory=dict)
    pairs: list = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    configs: Any = None
    tuning: Any = None


def _read_keys(r: _Reading) -> None:
    for key in r.raw:
        if key not in TOP_LEVEL_KEYS:
            r.problems.append(
                f"{key}: unknown key{did_you_mean(key, TOP_LEVEL_KEYS)}; allowed: {', '.join(TOP_LEVEL_KEYS)}"
            )


def _read_name(r: _Reading) -> None:
    name = r.raw.get("name", r.name)
    if not isinstance(name, str) or not name:
        r.problems.append(f"name: expected a non-empty string, got {name!r}")
    else:
        r.name = name


def _read_base_metrics(r: _Reading) -> None:
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


def _read_seeds(r: _Reading) -> None:
    r.seeds = _seeds(r.raw.get("seeds", [0]), r.problems)


def _flag(r: _Reading, key: str, default: bool, meaning: str = "") -> bool:
    value = r.raw.get(key, default)
    if not isinstance(value, bool):
        r.problems.append(f"{key}: expected true or false{meaning}, got {value!r}")
        return default
    return value


def _read_execution(r: _Reading) -> None:
    r.skip_incompatible = _flag(r, "skip_incompatible", False)
    (r.jobs, r.threads, r.dask, r.timeout, r.max_runs, r.max_evaluations, r.max_data_gb) = (
        _execution_keys(r.raw, r.problems)
    )
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


def _read_references(r: _Reading) -> None:
    r.references = _references(r.raw.get("references", []), r.problems)


def _read_components(r: _Reading) -> None:
    r.regs = registries()
    r.sections = {
        s: entries(s, r.raw.get(s), r.regs[s], r.problems, max_runs=r.max_runs)
        for s in ("datasets", "scenarios", "strategies", "detectors")
    }
    r.sections["datasets"] = _apply_orders(r.raw, r.sections["datasets"], r.problems, r.max_runs)
    r.scenarios = _check_scenarios(r.sections["scenarios"], r.problems)


def _read_baselines(r: _Reading) -> None:
    """``baselines = true`` adds every named baseline detector (:mod:`clad.detectors.baselines`:
    ``random_scores`` and the four simple baselines of time series) to the detectors, so each runs in
    every block like any method; a list adds those named. One the spec lists already is not added twice."""
    from ..detectors.baselines import BASELINES

    value = r.raw.get("baselines", False)
    if value is False:
        return
    if value is True:
        names = list(BASELINES)
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        names = list(dict.fromkeys(value))
        for v in names:
            if v not in BASELINES:
                r.problems.append(
                    f"baselines: {v!r} is not a baseline{did_you_mean(v, BASELINES)}; the baselines: "
                    f"{', '.join(BASELINES)}"
                )
    else:
        r.problems.append(
            f"baselines = {value!r}; expected true, false or a list of baselines "
            f"({', '.join(BASELINES)})"
        )
        return
    listed = {c.name for c in r.sections.get("detectors", [])}
    r.sections.setdefault("detectors", [])
    r.sections["detectors"] = [
        *r.sections["detectors"],
        *(Component(n) for n in names if n in BASELINES and n not in listed),
    ]


def _read_postprocess(r: _Reading) -> None:
    """``postprocess = { median = 5 }`` (and optionally ``warmup``): every detector, the baselines
    too, becomes a ``postprocessed`` one with that filter (:mod:`clad.detectors.postprocess`), so the
    stage is applied to all alike and recorded in each run's detector parameters; a detector the
    spec already wraps keeps its own."""
    from ..detectors.postprocess import WARMUPS, check_postprocess

    if "postprocess" not in r.raw:
        return
    value = r.raw["postprocess"]
    stage = dict(value) if isinstance(value, dict) else value
    warmup = stage.pop("warmup", None) if isinstance(stage, dict) else None
    try:
        check_postprocess(stage)
    except CladError as exc:
        r.problems.append(f"postprocess: {exc}")
        return
    if warmup is not None and warmup not in WARMUPS:
        r.problems.append(f"postprocess: warmup={warmup!r}; expected one of {', '.join(WARMUPS)}")
        return
    extra = {} if warmup is None else {"warmup": warmup}
    r.sections["detectors"] = [
        d
        if d.name == "postprocessed"
        else Component(
            "postprocessed",
            {"detector": d.name, "params": dict(d.params), "postprocess": dict(stage), **extra},
            d.display,
        )
        for d in r.sections.get("detectors", [])
    ]


def _what_scenario_lacks(scenario, strategy: Component, regs: dict) -> str | None:
    """Why the built ``scenario`` (None: not built) cannot run ``strategy``, or None."""
    if scenario is None:
        return None
    try:
        cls = regs["strategies"].resolve(strategy.name)
    except CladError:
        return None
    if getattr(cls, "requires_concept_id", False) and not scenario.gives_concept_id:
        return "needs the concept id"
    if getattr(cls, "requires_boundaries", False) and not scenario.gives_boundaries:
        return "needs concept boundaries"
    return None


def _read_threshold(r: _Reading) -> None:
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


def _read_pairs(r: _Reading) -> None:
    """The (scenario, strategy) pairs that can run (a strategy that needs what a scenario does not
    give is a problem, or skipped with ``skip_incompatible``), then the strategy x detector pairs."""
    from .spec_checks import pair_problems

    for sc in r.sections["scenarios"]:
        for st in r.sections["strategies"]:
            reason = _what_scenario_lacks(r.scenarios.get(sc.display), st, r.regs)
            if reason is None:
                r.pairs.append((sc, st))
                continue
            msg = f"strategy {st.display!r} cannot run in scenario {sc.display!r} ({reason})"
            if r.skip_incompatible:
                r.skipped.append(msg)
            else:
                r.problems.append(msg + "; remove one of them or set skip_incompatible = true")
    r.problems.extend(pair_problems(r.pairs, r.sections["detectors"], r.regs))


def _read_grid(r: _Reading) -> None:
    r.configs = Grid(
        r.sections["datasets"],
        r.pairs,
        r.sections["detectors"],
        r.seeds,
        r.metrics,
        r.metric_params,
        r.threshold,
    )


def _read_tuning(r: _Reading) -> None:
    if "tuning" not in r.raw:
        return
    from .tuning import parse_tuning

    r.tuning = parse_tuning(r.raw["tuning"], r.sections, r.metrics, r.problems, max_runs=r.max_runs)
    if r.tuning is not None and not r.problems:
        r.configs = _TunedGrid(r.configs, r.tuning)
        n_tuning = r.tuning.count_upper(
            r.configs
        )  # a product, known before any tuning run is built
        if r.configs.size + n_tuning > r.max_runs:
            r.problems.append(
                f"the grid has {r.configs.size:,} evaluation runs and {n_tuning:,} tuning runs, more "
                f"than max_runs = {r.max_runs:,}; to run it, set max_runs = {r.configs.size + n_tuning}"
            )


def _read_sizes(r: _Reading) -> None:
    r.problems.extend(_size_problems(r.sections, r.max_evaluations, r.max_data_gb))
    configs = r.configs
    if configs.size > r.max_runs:
        r.problems.append(
            f"the grid has {configs.size:,} runs ({len(configs.datasets)} datasets x {len(r.pairs)} scenario-strategy "
            f"pairs x {len(configs.detectors)} detectors x {len(r.seeds):,} seeds), more than max_runs = "
            f"{r.max_runs:,}; to run it, set max_runs = {configs.size} at the top of the spec"
        )


#: The readers of a spec's parts, in the order they run (and report their problems): each takes
#: what it reads from the spec's table and what the earlier ones have read.
SPEC_READERS = (
    _read_keys,
    _read_name,
    _read_base_metrics,
    _read_threshold,
    _read_seeds,
    _read_execution,
    _read_references,
    _read_components,
    _read_baselines,
    _read_postprocess,
    _read_pairs,
    _read_grid,
    _read_tuning,
    _read_sizes,
)
