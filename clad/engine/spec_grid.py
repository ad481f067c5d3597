"""The grid a spec describes: its components (datasets x orders, scenarios, strategies,
detectors, with ``baselines`` and ``postprocess``), the (scenario, strategy) pairs that can run,
:class:`Grid` (the run configurations, computed on demand), a ``[tuning]`` section's evaluation
runs and the sizes checked before anything runs.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ..errors import CladError
from ..registry import did_you_mean
from .config import Component, RunConfig
from .sections import entries, registries, size_problems
from .spec_keys import SpecReading
from .spec_orders import apply_orders

__all__ = [
    "Grid",
    "TunedGrid",
    "read_components",
    "read_baselines",
    "read_postprocess",
    "read_pairs",
    "read_grid",
    "read_tuning",
    "read_sizes",
]


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


class TunedGrid(Grid):
    """A grid whose runs are evaluation runs of a ``[tuning]`` section: each sees the ``evaluate``
    part of its data (its tuned parameters are chosen when the tuning runs have finished)."""

    def __init__(self, grid: Grid, plan):
        self.__dict__.update(vars(grid))
        self.plan = plan

    def __getitem__(self, i):
        cfg = super().__getitem__(i)
        # a slice calls this per item
        return cfg if isinstance(i, slice) else self.plan.evaluation_base(cfg)


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


def read_components(r: SpecReading) -> None:
    r.regs = registries()
    r.sections = {
        s: entries(s, r.raw.get(s), r.regs[s], r.problems, max_runs=r.max_runs)
        for s in ("datasets", "scenarios", "strategies", "detectors")
    }
    r.sections["datasets"] = apply_orders(r.raw, r.sections["datasets"], r.problems, r.max_runs)
    r.scenarios = _check_scenarios(r.sections["scenarios"], r.problems)


def read_baselines(r: SpecReading) -> None:
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


def read_postprocess(r: SpecReading) -> None:
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


def read_pairs(r: SpecReading) -> None:
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


def read_grid(r: SpecReading) -> None:
    r.configs = Grid(
        r.sections["datasets"],
        r.pairs,
        r.sections["detectors"],
        r.seeds,
        r.metrics,
        r.metric_params,
        r.threshold,
    )


def read_tuning(r: SpecReading) -> None:
    if "tuning" not in r.raw:
        return
    from .tuning import parse_tuning

    r.tuning = parse_tuning(r.raw["tuning"], r.sections, r.metrics, r.problems, max_runs=r.max_runs)
    if r.tuning is not None and not r.problems:
        r.configs = TunedGrid(r.configs, r.tuning)
        # a product, known before any tuning run is built
        n_tuning = r.tuning.count_upper(r.configs)
        if r.configs.size + n_tuning > r.max_runs:
            r.problems.append(
                f"the grid has {r.configs.size:,} evaluation runs and {n_tuning:,} tuning runs, more "
                f"than max_runs = {r.max_runs:,}; to run it, set max_runs = {r.configs.size + n_tuning}"
            )


def read_sizes(r: SpecReading) -> None:
    r.problems.extend(size_problems(r.sections, r.max_evaluations, r.max_data_gb))
    configs = r.configs
    if configs.size > r.max_runs:
        r.problems.append(
            f"the grid has {configs.size:,} runs ({len(configs.datasets)} datasets x {len(r.pairs)} scenario-strategy "
            f"pairs x {len(configs.detectors)} detectors x {len(r.seeds):,} seeds), more than max_runs = "
            f"{r.max_runs:,}; to run it, set max_runs = {configs.size} at the top of the spec"
        )
