"""The component sections of a spec (``datasets``, ``scenarios``, ``strategies``, ``detectors``):
each entry's name, keys and values checked, and its parameter grid expanded into components. Read
by the spec (:mod:`clad.engine.spec`) and by its ``[tuning]`` section (:mod:`clad.engine.tuning`)."""

from __future__ import annotations

import collections
import inspect
import itertools
import math
from typing import Any

from ..errors import CladError
from ..registry import Registry, check_params
from ..validation import Integral, Interval
from .config import Component

__all__ = ["TOP_LEVEL_KEYS", "RESERVED", "MAX_RUNS", "registries", "entries", "grid_size"]

#: the keys a spec may have at its top level
TOP_LEVEL_KEYS = (
    "name",
    "description",
    "base_metrics",
    "base_metric_params",
    "threshold",
    "postprocess",
    "baselines",
    "seeds",
    "orders",
    "order_seed",
    "skip_incompatible",
    "jobs",
    "threads",
    "dask",
    "slurm",
    "timeout",
    "share",
    "replicas",
    "max_runs",
    "max_evaluations",
    "max_data_gb",
    "datasets",
    "scenarios",
    "strategies",
    "detectors",
    "tuning",
    "references",
)
#: a grid larger than this needs an explicit ``max_runs`` in the spec
MAX_RUNS = 100_000
#: anytime evaluations of one run above this need an explicit ``max_evaluations``
MAX_EVALUATIONS = 10_000
#: a data set a spec generates (its size known from its parameters) above this many GB needs ``max_data_gb``
MAX_DATA_GB = 4.0
#: a parameter grid with at most this many combinations has every combination checked; a larger
#: one has every value checked (each with the other parameters at their first value)
CHECK_EVERY_COMBINATION = 256
#: the keys of a section entry that are not the component's parameters
RESERVED = ("name", "label", "grid")


def count_constraint(meaning: str) -> list:
    """The constraint of a key that holds an integer >= 1 (``meaning`` says what it counts)."""
    return [Interval(Integral, 1, None, closed="left", description=f"an integer >= 1 ({meaning})")]


def grid_size(grid: dict) -> int:
    """How many combinations a parameter grid (``{name: [values]}``) has: the product of its
    lengths, computed before any combination is built.

    >>> grid_size({"a": list(range(500)), "b": list(range(300))})
    150000
    """
    return math.prod(len(v) for v in grid.values()) if grid else 1


def _combos_to_check(grid: dict, combos: list[dict]) -> list[dict]:
    """The combinations of ``grid`` whose values are checked: all of them for a small grid, else
    one per value (the sum of the list lengths, not their product)."""
    if len(combos) <= CHECK_EVERY_COMBINATION:
        return combos
    first = {k: v[0] for k, v in grid.items()}
    out = [first]
    for k, values in grid.items():
        out += [{**first, k: v} for v in values[1:]]
    return out


def registries() -> dict[str, Registry]:
    from ..datasets import DATASETS
    from ..detectors import DETECTORS
    from ..scenarios import SCENARIOS
    from ..strategies import STRATEGIES

    return {
        "datasets": DATASETS,
        "scenarios": SCENARIOS,
        "strategies": STRATEGIES,
        "detectors": DETECTORS,
    }


def _fmt(v: Any) -> str:
    return repr(v) if not isinstance(v, str) else v


def _value_problems(
    section: str, who: str, name: str, factory: Any, registry: Registry, params: dict, located: dict
) -> list[str]:
    """The values of one component (its declared constraints; a detector built and checked by
    scikit-learn's declarations; a dataset's files located and verified): see spec_checks."""
    from . import spec_checks

    full = {**registry.defaults(name), **params}
    if section == "datasets":
        return spec_checks.dataset_problems(who, factory, full, located)
    if section == "strategies" and inspect.isclass(factory):
        return spec_checks.strategy_problems(who, factory, full)
    if section == "detectors":
        try:
            obj = registry.build(name, params)
        except CladError as exc:
            return [f"{who}: {exc}"]
        return spec_checks.detector_problems(who, obj)
    return []  # scenarios are built and checked by _check_scenarios


def entries(
    section: str,
    value: Any,
    registry: Registry,
    problems: list[str],
    located: dict | None = None,
    where: str | None = None,
    max_runs: int = MAX_RUNS,
) -> list[Component]:
    """Validate one list section (names, keys and values) and expand its parameter grids into
    components; ``where`` names the section's entries in messages (default: ``section``). A grid
    with more combinations than ``max_runs`` is refused before any combination is built."""
    located = {} if located is None else located
    if value is None:
        problems.append(
            f"{section}: missing; give at least one entry (known: {', '.join(registry.names())})"
        )
        return []
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list) or not value:
        problems.append(f"{section}: expected a non-empty list of names or tables, got {value!r}")
        return []
    out: list[Component] = []
    for i, entry in enumerate(value):
        key = f"{where or section}[{i}]"
        out += _entry(section, key, entry, registry, problems, located, max_runs)
    return _distinct_labels(section, out, problems)


def _entry(
    section: str,
    key: str,
    entry: Any,
    registry: Registry,
    problems: list[str],
    located: dict,
    max_runs: int,
) -> list[Component]:
    """The components of one entry of a list section (one per combination of its ``grid``), or none
    after a problem (added to ``problems``); ``key`` names the entry in messages."""
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict):
        problems.append(f"{key}: expected a name or a table with 'name', got {entry!r}")
        return []
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        problems.append(
            f"{key}.name: missing; expected a registered {registry.kind} name "
            f"({', '.join(registry.names())}) or 'package.module:Class'"
        )
        return []
    try:
        factory = registry.resolve(name)
    except CladError as exc:
        problems.append(f"{key}.name: {exc}")
        return []
    params = {k: v for k, v in entry.items() if k not in RESERVED}
    label = entry.get("label")
    if label is not None and not isinstance(label, str):
        problems.append(f"{key}.label: expected a string, got {label!r}")
        label = None
    grid = _grid(key, entry.get("grid", {}), problems, max_runs)
    if grid is None:
        return []
    if section == "strategies" and "detector" in params:
        problems.append(
            f"{key}.detector: strategies get their detector from the 'detectors' list; remove this key"
        )
        params.pop("detector")
    probe = {**registry.defaults(name), **params, **{k: v[0] for k, v in grid.items()}}
    problem = _params_problem(factory, probe, f"{key} ({name})", params)
    if problem is not None:
        problems.append(problem)
        return []
    combos = [dict(zip(grid, vals)) for vals in itertools.product(*grid.values())] if grid else [{}]
    for combo in _combos_to_check(grid, combos):
        p = {**params, **combo}
        for problem in _value_problems(
            section, f"{key} ({name})", name, factory, registry, p, located
        ):
            if problem not in problems:
                problems.append(problem)
    return [_component(name, {**params, **combo}, label, combo) for combo in combos]


def _grid(key: str, grid: Any, problems: list[str], max_runs: int) -> dict | None:
    """An entry's ``grid`` (none, ``{}``, after a problem in its form), or None when it has more
    combinations than ``max_runs`` (a problem: the entry is refused)."""
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        problems.append(
            f"{key}.grid: expected a table of non-empty lists, e.g. grid = {{ n_estimators = [50, 100] }}"
        )
        grid = {}
    n_combos = grid_size(grid)
    if n_combos > max_runs:
        shape = " x ".join(f"{len(v):,} {k}" for k, v in grid.items())
        problems.append(
            f"{key}.grid: {n_combos:,} combinations ({shape}), more than max_runs = {max_runs:,}; "
            f"to run it, set max_runs = {n_combos} at the top of the spec"
        )
        return None
    return grid


def _params_problem(factory: Any, probe: dict, who: str, params: dict) -> str | None:
    """What is wrong with the parameters ``probe`` of ``factory`` (None if nothing), with a hint
    when one of the entry's ``params`` is a top-level key written after the first table."""
    try:
        check_params(factory, probe, who)
    except CladError as exc:
        stray = [k for k in params if k in TOP_LEVEL_KEYS]
        if not stray:
            return str(exc)
        return (
            f"{exc} ('{stray[0]}' is a top-level key: in TOML, top-level keys must come before "
            "the first [[table]])"
        )
    return None


def _component(name: str, params: dict, label: str | None, combo: dict) -> Component:
    """One combination ``combo`` of an entry's grid as a component, its values in its label."""
    if combo:
        label = (label or name) + "(" + ", ".join(f"{k}={_fmt(v)}" for k, v in combo.items()) + ")"
    return Component(name=name, params=params, label=label)


def _distinct_labels(section: str, out: list[Component], problems: list[str]) -> list[Component]:
    """Distinct labels where a name is used more than once with different parameters; a label given
    to more than one entry is a problem."""
    counts: dict[str, int] = {}
    for c in out:
        counts[c.display] = counts.get(c.display, 0) + 1
    fixed = []
    for c in out:
        if counts[c.display] > 1 and c.label is None:
            shown = ", ".join(f"{k}={_fmt(v)}" for k, v in sorted(c.params.items()))
            c = Component(c.name, c.params, f"{c.name}({shown})")
        fixed.append(c)
    seen = collections.Counter(c.display for c in fixed)
    for lab in sorted(x for x, n in seen.items() if n > 1):
        problems.append(
            f"{section}: label {lab!r} is used by more than one entry; give each a distinct 'label'"
        )
    return fixed


def size_problems(sections: dict, max_evaluations: int, max_data_gb: float) -> list[str]:
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
