"""Tuning without test data: a spec's ``[tuning]`` section, its tuning runs and the choice.

The section's keys, its two modes and an example spec are in docs/guides/tuning.md. Each run of
the spec's grid is an *evaluation run*; for each one whose detector or strategy has values to try,
one *tuning run* per candidate is run on the ``tune`` part of the data
(:mod:`clad.core.data_views`), the best candidate is chosen **per dataset x scenario x strategy x
detector x seed** (ties: the first in the order of the grid; a NaN score never wins), and the
evaluation run uses it on the ``evaluate`` part. Every evaluation run of a spec with a ``[tuning]``
section sees the ``evaluate`` part, so that all of them are comparable. The evaluation run records
the candidates, their scores, the objective and the choice in ``extras["tuning"]`` (:func:`record`).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..defaults import DEFAULT_BASE_METRIC, DEFAULT_METRIC
from ..core.data_views import MODES
from ..errors import CladError
from ..registry import did_you_mean
from ..validation import Interval, Real
from ..validation import problems as validation_problems
from .config import Component, RunConfig
from .sections import MAX_RUNS, count_constraint, entries, grid_size, registries

__all__ = ["TuningPlan", "parse_tuning", "TUNING_KEYS", "SCOPE"]

TUNING_KEYS = ("mode", "k", "fraction", "objective", "base_metric", "detectors", "strategies")
#: what one choice is made for
SCOPE = "dataset x scenario x strategy x detector x seed"

_CONSTRAINTS = {
    "k": count_constraint("the number of first concepts to tune on"),
    "fraction": [
        Interval(
            Real,
            0,
            1,
            closed="neither",
            description="a number strictly between 0 and 1 (the share of each test concept "
            "kept for validation)",
        )
    ],
}


@dataclass(frozen=True)
class TuningPlan:
    """A validated ``[tuning]`` section: the mode and its parameter, the objective and, per
    detector or strategy display label, the list of parameter combinations to try."""

    mode: str
    objective: str
    base_metric: str
    k: int | None = None
    fraction: float | None = None
    detectors: Mapping[str, list[dict]] = field(default_factory=dict)
    strategies: Mapping[str, list[dict]] = field(default_factory=dict)

    @property
    def higher_is_better(self) -> bool:
        """The objective's direction, as :data:`clad.metrics.registry.REGISTRY` declares it."""
        from ..metrics.registry import REGISTRY

        return REGISTRY[self.objective].higher_is_better

    def view(self, part: str) -> dict:
        """The data view of a tuning run (``"tune"``) or an evaluation run (``"evaluate"``)."""
        arg = {"k": self.k} if self.mode == "first_concepts" else {"fraction": self.fraction}
        return {"mode": self.mode, "part": part, **arg}

    def evaluation_base(self, cfg: RunConfig) -> RunConfig:
        """A grid configuration as an evaluation run before the choice (the ``evaluate`` view)."""
        return dataclasses.replace(cfg, data_view=self.view("evaluate"))

    def candidates(self, cfg: RunConfig) -> list[tuple[dict, dict]]:
        """``(strategy values, detector values)`` to try for ``cfg``, in grid order (strategy
        values vary slowest); one pair of empty dicts when nothing is tuned."""
        st = self.strategies.get(cfg.strategy.display, [{}])
        det = self.detectors.get(cfg.detector.display, [{}])
        return list(itertools.product(st, det))

    def tuned(self, cfg: RunConfig) -> bool:
        return len(self.candidates(cfg)) > 1

    def tuning_runs(self, cfg: RunConfig) -> list[RunConfig]:
        """The tuning runs serving the evaluation run of grid configuration ``cfg`` (none when
        there is only one candidate)."""
        if not self.tuned(cfg):
            return []
        return [
            _with(cfg, st, det, self.view("tune"), labelled=True)
            for st, det in self.candidates(cfg)
        ]

    def tuning_configs(self, configs: Sequence[RunConfig]) -> list[RunConfig]:
        """Every tuning run of a grid, each once, in the grid's order."""
        out: dict[str, RunConfig] = {}
        for cfg in configs:
            for t in self.tuning_runs(cfg):
                out.setdefault(t.run_id, t)
        return list(out.values())

    def count_upper(self, grid) -> int:
        """The number of tuning runs of a :class:`~clad.engine.spec_grid.Grid` (exact unless it lists a
        run twice), computed arithmetically: datasets x seeds x the candidates of every
        (scenario, strategy) pair and detector, none of them built."""
        per = 0
        for _, st in grid.pairs:
            n_st = len(self.strategies.get(st.display, [{}]))
            for det in grid.detectors:
                n = n_st * len(self.detectors.get(det.display, [{}]))
                per += n if n > 1 else 0
        return per * len(grid.datasets) * len(grid.seeds)

    def count(self, configs: Sequence[RunConfig]) -> int:
        """How many distinct tuning runs the grid ``configs`` needs."""
        return len(self.tuning_configs(configs))

    def choose(self, cfg: RunConfig, results: Mapping[str, Any]) -> tuple[RunConfig | None, dict]:
        """The evaluation run of grid configuration ``cfg`` and its record, from ``results``
        (``{run_id: RunResult}`` of the tuning runs). The configuration is None when no candidate
        has a score (every tuning run failed or gave an undefined objective)."""
        rows, best = [], None
        for (st, det), run in itertools.zip_longest(self.candidates(cfg), self.tuning_runs(cfg)):
            result = results.get(run.run_id) if run is not None else None
            score = _score(result, self.base_metric, self.objective)
            rows.append(
                {
                    "strategy": st,
                    "detector": det,
                    "run_id": None if run is None else run.run_id,
                    "status": None
                    if run is None
                    else (result.status if result is not None else "missing"),
                    "score": score,
                }
            )
            if score is not None and (best is None or self._better(score, rows[best]["score"])):
                best = len(rows) - 1
        if not self.tuned(cfg):
            best = 0
        rec = {
            "mode": self.mode,
            **({"k": self.k} if self.mode == "first_concepts" else {"fraction": self.fraction}),
            "objective": self.objective,
            "base_metric": self.base_metric,
            "higher_is_better": self.higher_is_better,
            "scope": SCOPE,
            "candidates": rows,
            "chosen": best,
        }
        if best is None:
            return None, rec
        st, det = rows[best]["strategy"], rows[best]["detector"]
        rec["chosen_params"] = {"strategy": st, "detector": det}
        return _with(cfg, st, det, self.view("evaluate"), labelled=False), rec

    def _better(self, a: float, b: float) -> bool:
        return a > b if self.higher_is_better else a < b


def _with(cfg: RunConfig, st: dict, det: dict, view: dict, labelled: bool) -> RunConfig:
    def comp(c: Component, values: dict) -> Component:
        if not values:
            return c
        shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
        return Component(
            c.name, {**c.params, **values}, f"{c.display}({shown})" if labelled else c.label
        )

    return dataclasses.replace(
        cfg, strategy=comp(cfg.strategy, st), detector=comp(cfg.detector, det), data_view=view
    )


def _score(result, base_metric: str, objective: str) -> float | None:
    if result is None or not result.ok:
        return None
    value = (result.metrics.get(base_metric) or {}).get(objective)
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


# -- the spec section ------------------------------------------------------------------------------
def parse_tuning(
    raw: Any,
    sections: Mapping[str, list[Component]],
    base_metrics: list,
    problems: list[str],
    max_runs: int | None = None,
) -> TuningPlan | None:
    """Validate a ``[tuning]`` table against the spec's ``sections`` (its expanded datasets,
    strategies and detectors); every problem is appended to ``problems`` as ``tuning.KEY: ...``."""
    if not isinstance(raw, dict):
        problems.append(f"tuning: expected a table ([tuning] with mode = ...), got {raw!r}")
        return None
    start = len(problems)
    for key in raw:
        if key not in TUNING_KEYS:
            problems.append(
                f"tuning.{key}: unknown key{did_you_mean(key, TUNING_KEYS)}; allowed: {', '.join(TUNING_KEYS)}"
            )
    mode = raw.get("mode")
    if mode not in MODES:
        problems.append(
            f"tuning.mode: {mode!r}; expected one of {', '.join(repr(m) for m in MODES)}"
            + (did_you_mean(mode, MODES) if isinstance(mode, str) else "")
        )
        mode = None
    own, other = {"first_concepts": ("k", "fraction"), "validation_split": ("fraction", "k")}.get(
        mode, (None, None)
    )
    if own is not None:
        if own not in raw:
            problems.append(
                f"tuning.{own}: missing; mode {mode!r} needs it "
                f"({_CONSTRAINTS[own][0].description})"
            )
        else:
            problems.extend(
                f"tuning.{p}" for p in validation_problems(None, {own: raw[own]}, _CONSTRAINTS)
            )
        if other in raw:
            problems.append(
                f"tuning.{other}: only used with mode "
                f"{'validation_split' if other == 'fraction' else 'first_concepts'}; remove it"
            )
    objective = _objective(raw.get("objective", DEFAULT_METRIC), problems)
    metrics = [m for m in base_metrics if isinstance(m, str)]
    base_metric = raw.get("base_metric", metrics[0] if metrics else DEFAULT_BASE_METRIC)
    if base_metric not in metrics:
        problems.append(
            f"tuning.base_metric: {base_metric!r} is not one of the spec's base_metrics "
            f"({', '.join(metrics)})"
        )
    tables = {}
    for section in ("detectors", "strategies"):
        tables[section] = _grids(
            section, raw.get(section, {}), sections.get(section, []), problems, max_runs
        )
    if "detectors" not in raw and "strategies" not in raw:
        problems.append(
            "tuning: nothing to tune; add e.g. [tuning.detectors.iforest] with n_estimators = [50, 100]"
        )
    if (
        mode == "first_concepts"
        and isinstance(raw.get("k"), int)
        and not isinstance(raw.get("k"), bool)
    ):
        problems.extend(_k_problems(raw["k"], sections.get("datasets", [])))
    if len(problems) > start:
        return None
    return TuningPlan(
        mode=mode,
        objective=objective,
        base_metric=base_metric,
        k=raw.get("k") if mode == "first_concepts" else None,
        fraction=float(raw["fraction"]) if mode == "validation_split" else None,
        detectors=tables["detectors"],
        strategies=tables["strategies"],
    )


def _objective(name: Any, problems: list[str]) -> str:
    from ..metrics.registry import scalar_names

    allowed = scalar_names(needs_only=())
    if not isinstance(name, str) or name not in allowed:
        problems.append(
            f"tuning.objective: {name!r} is not a continual metric computed from R"
            f"{did_you_mean(str(name), allowed)}; allowed: {', '.join(allowed)}"
        )
    return str(name)


def _grids(
    section: str,
    table: Any,
    components: list[Component],
    problems: list[str],
    max_runs: int | None = None,
) -> dict[str, list[dict]]:
    """``{display label: [values, ...]}`` for the spec components that ``table`` names; each
    combination is checked as the spec checks its own entries (names, constraints, building). A
    table with more combinations than ``max_runs`` is refused from the product of its list lengths,
    before any combination is built."""
    limit = MAX_RUNS if max_runs is None else max_runs
    if not isinstance(table, dict):
        problems.append(
            f"tuning.{section}: expected a table of tables, e.g. [tuning.{section}.NAME]"
        )
        return {}
    registry = registries()[section]
    labels = [c.display for c in components]
    out: dict[str, list[dict]] = {}
    for key, grid in table.items():
        where = f"tuning.{section}.{key}"
        matched = [c for c in components if c.display == key] or [
            c for c in components if c.name == key
        ]
        if not matched:
            problems.append(
                f"{where}: no entry of '{section}' is labelled or named {key!r}"
                f"{did_you_mean(key, labels)}; known: {', '.join(labels)}"
            )
            continue
        if (
            not isinstance(grid, dict)
            or not grid
            or not all(isinstance(v, list) and v for v in grid.values())
        ):
            problems.append(
                f"{where}: expected parameters with non-empty lists of values to try, "
                "e.g. n_estimators = [50, 100]"
            )
            continue
        n_combos = grid_size(grid)
        if n_combos > limit:
            shape = " x ".join(f"{len(v):,} {k}" for k, v in grid.items())
            problems.append(
                f"{where}: {n_combos:,} candidates ({shape}), each a tuning run of every evaluation "
                f"run, more than max_runs = {limit:,}; to run them, set max_runs = {n_combos} at the "
                "top of the spec (tuning runs count towards it)"
            )
            continue
        for c in matched:
            fixed = [p for p in grid if p in c.params]
            if fixed:
                problems.append(
                    f"{where}.{fixed[0]}: {c.display!r} sets it in '{section}' too "
                    f"({fixed[0]} = {c.params[fixed[0]]!r}); fix it or tune it, not both"
                )
                continue
            entry = {"name": c.name, **c.params, "grid": grid}
            before = len(problems)
            entries(section, [entry], registry, problems, where=where, max_runs=limit)
            if len(problems) == before:
                out[c.display] = [
                    dict(zip(grid, vals)) for vals in itertools.product(*grid.values())
                ]
    return out


def _k_problems(k: int, datasets: list[Component]) -> list[str]:
    """k against the number of concepts of every dataset that declares it (``n_concepts``)."""
    from ..datasets import DATASETS

    out = []
    for c in datasets:
        try:
            factory = DATASETS.resolve(c.name)
            sig = {
                n: p.default
                for n, p in inspect.signature(factory).parameters.items()
                if p.default is not inspect.Parameter.empty
            }
        except (CladError, TypeError, ValueError):
            continue
        n = {**sig, **DATASETS.defaults(c.name), **c.params}.get("n_concepts")
        if isinstance(n, int) and not isinstance(n, bool) and k >= n:
            out.append(
                f"tuning.k: {k} leaves no concept to evaluate in dataset {c.display!r} (n_concepts = {n}); "
                f"allowed: 1 to {n - 1}"
            )
    return out
