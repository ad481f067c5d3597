"""Pure aggregation of run results over seeds: what the plots and tables show.

Nothing here plots or writes files. A *configuration* is dataset x scenario x strategy x detector;
its runs differ only by seed. Means over seeds leave NaN out (a cell undefined in one seed does not
hide the others); a value undefined in every seed stays NaN. ``std`` is the sample standard
deviation (``ddof=1``), ``n`` the number of values (not runs) that entered the mean.

**Intervals hold at a few seeds.** ``ci_low``/``ci_high`` are the 95 % Student-t interval of the
mean over seeds, cut to the range the metric can take (``bounds``, :func:`value_bounds`); with fewer
than :data:`MIN_INTERVAL_N` values none is given (NaN), and a page shows the values instead
(:mod:`clad.report.describe`, the rule's one home). Which scalar metrics exist,
and whether higher or lower is better, is read from :data:`clad.metrics.REGISTRY`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..results.record import RunResult
from ..errors import DataError
from ..metrics import (
    REGISTRY,
    accuracy_all,
    accuracy_seen,
    forgetting_per_concept,
    get_metric,
    learned_at,
    scalar_names,
)
from ..metrics.base import base_metric_bounds as base_bounds
from .describe import (
    CONFIG_KEYS,
    MIN_INTERVAL_N,
    STATS,
    UNBOUNDED,
    describe,
    describe_each,
    distinct_runs,
    group_runs,
    intervals,
    mean_std,
    stats_at,
)
from .cost import COST, cost_columns

__all__ = [
    "dataset_of",
    "HeatmapData",
    "heatmap_data",
    "heatmaps",
    "learning_curves",
    "forgetting_per_concept",
    "forgetting_table",
    "leaderboard",
    "best_marks",
    "best_status",
    "chance_table",
    "merge_shared",
    "scenario_groups",
    "spec_base_metrics",
]


def merge_shared(results: Iterable[RunResult]) -> list[RunResult]:
    """``results`` with every configuration that is the same computation as another shown once.

    A configuration whose runs all record ``shared_from`` (see :mod:`clad.engine.identity`)
    pointing at the runs of one other configuration with as many runs is dropped; the configuration
    that computed them keeps its runs, relabelled with every value it stands for, joined by
    ``" = "`` (``concept_aware = concept_incremental``). Other runs are returned as they are, in order.

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "aware", "naive", "if", s, run_id=f"a{s}") for s in (0, 1)]
    >>> rs += [RunResult("d", "incremental", "naive", "if", s, run_id=f"b{s}", shared_from=f"a{s}") for s in (0, 1)]
    >>> [(r.scenario, r.seed) for r in merge_shared(rs)]
    [('aware = incremental', 0), ('aware = incremental', 1)]
    """
    import dataclasses

    results = list(results)
    key_of = {
        r.run_id: (tuple(getattr(r, k) for k in CONFIG_KEYS), r.seed)
        for r in results
        if r.run_id and r.ok
    }
    groups: dict[tuple, list[RunResult]] = {}
    for r in results:
        if r.ok:
            groups.setdefault(tuple(getattr(r, k) for k in CONFIG_KEYS), []).append(r)
    stands_for: dict[tuple, list[tuple]] = {}
    copies: set[tuple] = set()
    for key, runs in groups.items():
        origins = {key_of.get(r.shared_from, (None, None))[0] for r in runs}
        if len(origins) != 1 or None in origins:
            continue
        (origin,) = origins
        if origin == key or origin not in groups or origin in copies:
            continue
        if len(groups[origin]) == len(runs):  # every run of this configuration is one of origin's
            copies.add(key)
            stands_for.setdefault(origin, [origin]).append(key)
    if not copies:
        return results
    relabel = {}
    for origin, keys in stands_for.items():
        relabel[origin] = {
            k: " = ".join(dict.fromkeys(key[i] for key in keys))
            for i, k in enumerate(CONFIG_KEYS)
            if len({key[i] for key in keys}) > 1
        }
    out = []
    for r in results:
        key = tuple(getattr(r, k) for k in CONFIG_KEYS)
        if r.ok and key in copies:
            continue
        out.append(dataclasses.replace(r, **relabel[key]) if r.ok and key in relabel else r)
    return out


def chance_matrix(r: RunResult, base_metric: str) -> np.ndarray | None:
    """R of a scoreless detector on run ``r``'s test concepts: every row holds each test
    concept's chance level (``r.chance``), NaN where ``r``'s own cell is undefined; None when the
    run recorded no chance level for ``base_metric``."""
    levels = (r.chance or {}).get(base_metric)
    if levels is None or base_metric not in r.R:
        return None
    R = np.asarray(r.R[base_metric], dtype=np.float64)
    C = np.tile(np.asarray(levels, dtype=np.float64), (R.shape[0], 1))
    return np.where(np.isnan(R), np.nan, C)


def chance_value(r: RunResult, base_metric: str, name: str) -> float:
    """Scalar metric ``name`` of run ``r``'s :func:`chance_matrix`: what a scoreless detector gets
    through the same metric (0 for a difference such as BWT; NaN for a metric that needs a
    reference, or without recorded chance levels)."""
    C = chance_matrix(r, base_metric)
    if C is None or name not in REGISTRY or get_metric(name).needs:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(
            get_metric(name).function(C, learned_at=learned_at(r.concepts, r.test_concepts))
        )


def chance_table(
    results: Iterable[RunResult], metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """Per dataset, base metric and scenario: every scalar metric of the chance matrices
    (:func:`chance_value`), mean over the finished runs (``m_mean``); the chance row of a leaderboard.

    >>> from clad.results.record import RunResult
    >>> r = RunResult("d", "s", "naive", "if", 0, ("A", "B"), ("A", "B"), R={"f1": np.array([[0.9, 0.2], [0.7, 0.8]])},
    ...               chance={"f1": [2 * 0.1 / 1.1, 0.5]})
    >>> t = chance_table([r], ["continual_average", "backward_transfer"])
    >>> round(float(t.at[0, "continual_average_mean"]), 4), float(t.at[0, "backward_transfer_mean"])
    (0.2879, 0.0)
    """
    metrics = scalar_names() if metrics is None else list(metrics)
    rows: dict[tuple, list[RunResult]] = {}
    for r in results:
        if r.ok and r.chance:
            for bm in r.chance:
                rows.setdefault((r.dataset, bm, r.scenario), []).append(r)
    out = []
    memo: dict[
        tuple, float
    ] = {}  # runs on one test set share their chance matrix: each computed once

    def test_set(r: RunResult, bm: str) -> tuple:
        """What a run's chance matrix of ``bm`` is computed from."""
        R = r.R.get(bm)
        return (
            tuple(r.concepts),
            tuple(r.test_concepts),
            repr(r.chance.get(bm)),
            None if R is None else np.isnan(np.asarray(R, dtype=np.float64)).tobytes(),
        )

    def value(r: RunResult, bm: str, name: str, of: tuple) -> float:
        key = (bm, name, *of)
        if key not in memo:
            memo[key] = chance_value(r, bm, name)
        return memo[key]

    for (dataset, bm, scenario), runs in rows.items():
        row = {"dataset": dataset, "base_metric": bm, "scenario": scenario}
        sets = [test_set(r, bm) for r in runs]  # once per run, not once per run and metric
        for name in metrics:
            values = [value(r, bm, name, of) for r, of in zip(runs, sets)]
            values = [v for v in values if v == v]
            row[f"{name}_mean"] = float(np.mean(values)) if values else float("nan")
        out.append(row)
    return pd.DataFrame(
        out, columns=["dataset", "base_metric", "scenario", *(f"{m}_mean" for m in metrics)]
    )


def value_bounds(name: str, base_metric: str | None = None) -> tuple[float, float]:
    """The range of scalar metric or cost ``name`` computed from base metric ``base_metric``: from
    the declarations (:meth:`clad.metrics.Metric.bounds` of the base metric's declared bounds, or
    the cost's :attr:`clad.report.cost.Cost.bounds`); unbounded for anything undeclared.

    >>> value_bounds("continual_average", "roc_auc"), value_bounds("forgetting", "f1")
    ((0.0, 1.0), (-1.0, 1.0))
    >>> value_bounds("fit_seconds")
    (0.0, inf)
    """
    if name in COST:
        return COST[name].bounds
    if name in REGISTRY:
        if base_metric and base_metric.endswith(
            "_per_series_mean"
        ):  # a mean of values in the base's range
            base_metric = base_metric[: -len("_per_series_mean")]
        return get_metric(name).bounds(base_bounds(base_metric) if base_metric else UNBOUNDED)
    return UNBOUNDED


@dataclass(frozen=True, eq=False)
class HeatmapData:
    """R of one configuration and base metric, averaged over seeds.

    ``mean``, ``std`` and ``n`` (seeds with a value) are (steps x test concepts); ``rows`` are the
    concepts learned at each step, ``cols`` the test concepts, ``learned_at`` as in
    :func:`clad.metrics.learned_at`.
    """

    dataset: str
    scenario: str
    strategy: str
    detector: str
    base_metric: str
    mean: np.ndarray
    std: np.ndarray
    n: np.ndarray
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    learned_at: np.ndarray
    seeds: tuple[int, ...]
    order: str | None = None
    #: per test concept, the chance level (mean over seeds; NaN where not recorded)
    chance: np.ndarray | None = None
    #: (steps x test concepts) True where the cell cannot be told from its chance level
    at_chance: np.ndarray | None = None
    #: how many distinct computations the seeds are (None: as many as seeds); mean and std are over them
    computations: int | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return (self.dataset, self.scenario, self.strategy, self.detector, self.base_metric) + (
            (f"order {self.order}",) if self.order is not None else ()
        )

    @property
    def title(self) -> str:
        return " / ".join(self.key)

    @property
    def seeds_text(self) -> str:
        """How many seeds the cells are over, and how many distinct computations they are."""
        text = f"{len(self.seeds)} seed{'s' if len(self.seeds) != 1 else ''}"
        if self.computations is not None:
            text += (
                f", {self.computations} distinct computation{'s' if self.computations != 1 else ''}"
            )
        return text


def _columns(r: RunResult, base_metric: str, cols: Sequence[str] | None) -> np.ndarray:
    """R of run ``r`` with its columns in the order ``cols`` (by test concept name), or as it is."""
    R = np.asarray(r.R[base_metric], dtype=np.float64)
    if cols is None or tuple(cols) == tuple(r.test_concepts):
        return R
    names = list(r.test_concepts)
    if sorted(names) != sorted(cols) or len(set(names)) != len(names):
        raise DataError(
            f"seed {r.seed} has test concepts {r.test_concepts}; they cannot be put in the order {cols}"
        )
    return R[:, [names.index(c) for c in cols]]


def heatmap_data(
    runs: Sequence[RunResult],
    base_metric: str,
    cols: Sequence[str] | None = None,
    order: str | None = None,
) -> HeatmapData:
    """Average R over the seeds of one configuration.

    The runs must share the configuration and the row labels, and the column labels unless ``cols``
    gives the test concepts' order to put every run's columns in (by name); ``order`` names the
    runs' concept order (shown in the title).

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "s", "naive", "iforest", seed, ("A", "B"), ("A", "B"),
    ...                 R={"roc_auc": np.array([[0.9, v], [0.7, 0.8]])}) for seed, v in [(0, 0.4), (1, np.nan)]]
    >>> h = heatmap_data(rs, "roc_auc")
    >>> h.mean.tolist(), h.n.tolist(), h.learned_at.tolist()
    ([[0.9, 0.4], [0.7, 0.8]], [[2, 1], [2, 2]], [0, 1])
    """
    if not runs:
        raise DataError("no runs to average")
    runs = sorted(runs, key=lambda r: r.seed)
    every = runs
    runs = distinct_runs(runs)  # one value per distinct computation
    first = runs[0]
    key = tuple(getattr(first, k) for k in CONFIG_KEYS)
    mats = []
    for r in runs:
        if tuple(getattr(r, k) for k in CONFIG_KEYS) != key:
            raise DataError(
                f"runs of different configurations cannot be averaged: {key} and "
                f"{tuple(getattr(r, k) for k in CONFIG_KEYS)}"
            )
        if r.concepts != first.concepts or (
            cols is None and r.test_concepts != first.test_concepts
        ):
            raise DataError(
                f"{' / '.join(key)}: seed {r.seed} has concepts {r.concepts} x {r.test_concepts}, "
                f"seed {first.seed} has {first.concepts} x {first.test_concepts}; R cannot be averaged"
            )
        if base_metric not in r.R:
            raise DataError(
                f"{' / '.join(key)}: seed {r.seed} has no R for base metric {base_metric!r} "
                f"(it has {', '.join(r.R) or 'none'})"
            )
        mats.append(_columns(r, base_metric, cols))
    stack = np.stack(mats)
    mean, std, n = mean_std(stack)
    cols_given = cols
    cols = tuple(first.test_concepts) if cols is None else tuple(cols)
    chance, at = _chance_cells(runs, base_metric, cols_given, stack)
    return HeatmapData(
        *key,
        base_metric=base_metric,
        mean=mean,
        std=std,
        n=n,
        rows=tuple(first.concepts),
        cols=cols,
        learned_at=learned_at(first.concepts, cols),
        seeds=tuple(r.seed for r in every),
        order=order,
        chance=chance,
        at_chance=at,
        computations=len(runs) if len(runs) < len(every) else None,
    )


#: how close to its chance level a value must come to be "at chance" with too few seeds for an interval
CHANCE_TOLERANCE = 0.005


def _chance_cells(runs: Sequence[RunResult], base_metric: str, cols, stack: np.ndarray):
    """Per test concept the mean chance level over ``runs``, and the cells of R (``stack``: seeds x
    steps x concepts) that cannot be told from it: the chance level lies in the cell's interval over
    seeds (:func:`interval`), or, with too few seeds for one, between its smallest and largest
    value widened by :data:`CHANCE_TOLERANCE`. (None, None) when a run recorded no chance level."""
    levels = []
    for r in runs:
        c = (r.chance or {}).get(base_metric)
        if c is None:
            return None, None
        c = np.asarray(c, dtype=np.float64)
        if cols is not None and tuple(cols) != tuple(r.test_concepts):
            c = c[[list(r.test_concepts).index(name) for name in cols]]
        levels.append(c)
    chance = np.nanmean(np.stack(levels), axis=0) if levels else None
    if chance is None:
        return None, None
    n_rows, n_cols = stack.shape[1:]
    cells = stack.reshape(stack.shape[0], -1)  # seeds x cells, each cell's values a column
    low, high = np.full(cells.shape[1], np.nan), np.full(cells.shape[1], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a cell without values
        smallest, largest = np.nanmin(cells, axis=0), np.nanmax(cells, axis=0)
    level = np.tile(chance, n_rows)
    # an interval lies within its values: only where the chance level is within them (widened by the
    # tolerance) can the interval decide, so only there is it computed (every cell's answer unchanged)
    near = np.flatnonzero(
        (smallest - CHANCE_TOLERANCE <= level) & (level <= largest + CHANCE_TOLERANCE)
    )
    if near.size:
        low[near], high[near] = intervals(
            cells[:, near], np.full(near.size, -np.inf), np.full(near.size, np.inf)
        )
    at = np.zeros(stack.shape[1:], dtype=bool)
    for i in range(n_rows):
        for j in range(n_cols):
            v = stack[:, i, j]
            v = v[~np.isnan(v)]
            if not v.size or np.isnan(chance[j]):
                continue
            lo, hi = (
                (float(low[i * n_cols + j]), float(high[i * n_cols + j]))
                if v.size >= MIN_INTERVAL_N
                else (float(v.min()), float(v.max()))
            )
            at[i, j] = lo - CHANCE_TOLERANCE <= chance[j] <= hi + CHANCE_TOLERANCE
    return chance, at


def base_order(names, first: Sequence[str] = ()) -> list[str]:
    """Base metric names in the order ``first`` gives (the spec's ``base_metrics``, a headline
    chosen on the command line), then in their declaration order
    (:data:`clad.metrics.base.BASE_METRIC_REGISTRY`: ROC-AUC, F1, AP, ...), others (a plug-in's,
    named by import path) after them as found; a results file may store them sorted.

    >>> base_order(["average_precision", "roc_auc", "x", "f1"])
    ['roc_auc', 'f1', 'average_precision', 'x']
    >>> base_order(["average_precision", "roc_auc", "vus_pr"], first=["vus_pr", "roc_auc"])
    ['vus_pr', 'roc_auc', 'average_precision']
    """
    from ..metrics.base import base_metric_names

    names = list(dict.fromkeys(names))
    suffix = "_per_series_mean"  # a derived per-series mean follows its base metric
    plain = [n[: -len(suffix)] if n.endswith(suffix) else n for n in names]
    declared = list(dict.fromkeys([*first, *base_metric_names()]))
    if any(n.endswith(suffix) for n in names):

        def key(m):
            base = m[: -len(suffix)] if m.endswith(suffix) else m
            return (
                declared.index(base) if base in declared else len(declared),
                plain.index(base),
                m != base,
            )

        return sorted(names, key=key)
    return sorted(
        names, key=lambda m: (declared.index(m) if m in declared else len(declared), names.index(m))
    )


def spec_base_metrics(runs: Iterable[RunResult]) -> list[str]:
    """The base metrics in the order the runs' spec lists them (``config["base_metrics"]``; the
    first is the spec's headline), first-seen over the runs.

    >>> spec_base_metrics([RunResult("d", "s", "n", "i", 0, config={"base_metrics": ["vus_pr", "roc_auc"]})])
    ['vus_pr', 'roc_auc']
    """
    out: dict[str, None] = {}
    for r in runs:
        for m in (r.config or {}).get("base_metrics") or ():
            out.setdefault(str(m) if not isinstance(m, dict) else str(m.get("name")), None)
    return list(out)


def _base_metrics(runs: Sequence[RunResult]) -> list[str]:
    names = base_order(runs[0].R, spec_base_metrics(runs))
    return [m for m in names if all(m in r.R for r in runs)]


def by_order(runs: Sequence[RunResult]) -> dict[tuple[str, ...], list[RunResult]]:
    """The runs of one configuration split by concept order (the training concepts' sequence),
    first-seen order.

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "s", "n", "i", 0, ("A", "B")), RunResult("d", "s", "n", "i", 0, ("B", "A")),
    ...       RunResult("d", "s", "n", "i", 1, ("A", "B"))]
    >>> {k: [r.seed for r in v] for k, v in by_order(rs).items()}
    {('A', 'B'): [0, 1], ('B', 'A'): [0]}
    """
    out: dict[tuple[str, ...], list[RunResult]] = {}
    for r in runs:
        out.setdefault(tuple(r.concepts), []).append(r)
    return out


def canonical_columns(runs: Sequence[RunResult]) -> tuple[str, ...] | None:
    """The one test-concept order for runs of several concept orders (names sorted), or None when
    the runs share their columns."""
    if len({tuple(r.test_concepts) for r in runs}) <= 1:
        return None
    return tuple(sorted(runs[0].test_concepts))


def _order_name(runs: Sequence[RunResult], index: int) -> str:
    names = {r.order for r in runs if r.order}
    return names.pop() if len(names) == 1 else f"#{index + 1}"


def _averaged(results: Iterable[RunResult]):
    """(runs, HeatmapData) per configuration, concept order and base metric, and the problems met.
    Runs of several concept orders give one heatmap per order, every one with its columns in the
    same canonical order (:func:`canonical_columns`)."""
    out, problems = [], []
    for runs in group_runs(results).values():
        orders = by_order(runs)
        cols = canonical_columns(runs) if len(orders) > 1 else None
        for m in _base_metrics(runs):
            for i, part in enumerate(orders.values()):
                try:
                    out.append(
                        (
                            part,
                            heatmap_data(
                                part, m, cols, _order_name(part, i) if len(orders) > 1 else None
                            ),
                        )
                    )
                except DataError as exc:
                    problems.append(str(exc))
    return out, problems


def heatmaps(results: Iterable[RunResult]) -> tuple[list[HeatmapData], list[str]]:
    """:func:`heatmap_data` for every configuration and base metric, and a message for each that
    could not be averaged (instead of raising)."""
    pairs, problems = _averaged(results)
    return [hm for _, hm in pairs], problems


def _by_configuration(results: Iterable[RunResult]):
    """(key, runs, base metric) per configuration and base metric, over every concept order (one
    run per distinct computation)."""
    for key, runs in group_runs(results, distinct=True).items():
        for m in _base_metrics(runs):
            yield key, runs, m


def _described(values, bounds, with_intervals: bool) -> dict[str, np.ndarray]:
    """:func:`describe` of ``values``, or without intervals (NaN) when ``with_intervals`` is False."""
    if with_intervals:
        return describe(values, bounds)
    mean, std, n = mean_std(np.asarray(values, dtype=np.float64))
    return {
        "mean": mean,
        "std": std,
        "n": n,
        "ci_low": np.full(mean.shape, np.nan),
        "ci_high": np.full(mean.shape, np.nan),
    }


def learning_curves(results: Iterable[RunResult], with_intervals: bool = True) -> pd.DataFrame:
    """Per configuration, base metric and step: :func:`describe` over seeds (and over concept
    orders, step by step, when the runs differ in order) of :func:`clad.metrics.accuracy_seen`
    (and ``chance``: the same curve of the runs' :func:`chance_matrix`, mean over seeds)
    (``kind="seen"``) and :func:`clad.metrics.accuracy_all` (``kind="all"``). Long format, one row
    per (configuration, base metric, kind, step); ``concept`` is the concept learned at the step,
    or ``""`` when the orders differ there. ``with_intervals=False`` leaves the intervals
    out (NaN; the report's figure draws mean ± std, and the intervals cost most of the time).
    """
    rows = []
    orders: dict[tuple, np.ndarray] = {}  # learned_at per (concepts, test concepts)
    chance_curves: dict[
        tuple, np.ndarray
    ] = {}  # a chance curve per kind, levels, concepts and undefined cells

    def t(r: RunResult) -> np.ndarray:
        key = (tuple(r.concepts), tuple(r.test_concepts))
        if key not in orders:
            orders[key] = learned_at(*key)
        return orders[key]

    def chance_curve(r: RunResult, kind: str, fn) -> np.ndarray | None:
        levels = (r.chance or {}).get(m)
        if levels is None or m not in r.R:
            return None
        undefined = np.isnan(np.asarray(r.R[m], dtype=np.float64))
        key = (
            kind,
            id(levels),
            tuple(r.concepts),
            tuple(r.test_concepts),
            undefined.shape,
            undefined.tobytes(),
        )
        if (
            key not in chance_curves
        ):  # runs holding one record of their levels (a report's slim runs) share it
            chance_curves[key] = fn(chance_matrix(r, m), t(r))
        return chance_curves[key]

    for key, runs, m in _by_configuration(results):
        if len({len(r.concepts) for r in runs}) > 1:
            continue
        for kind, fn in (("seen", accuracy_seen), ("all", accuracy_all)):
            curves = np.stack([fn(r.R[m], t(r)) for r in runs])
            d = _described(curves, base_bounds(m), with_intervals)
            levels = [chance_curve(r, kind, fn) for r in runs]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                chance = (
                    np.nanmean(np.stack(levels), axis=0)
                    if all(c is not None for c in levels)
                    else np.full(curves.shape[1], np.nan)
                )
            for step in range(curves.shape[1]):
                names = {r.concepts[step] for r in runs}
                rows.append(
                    {
                        **dict(zip(CONFIG_KEYS, key)),
                        "base_metric": m,
                        "kind": kind,
                        "step": step,
                        "concept": names.pop() if len(names) == 1 else "",
                        **stats_at(d, step),
                        "chance": float(chance[step]),
                    }
                )
    return pd.DataFrame(
        rows,
        columns=[
            "dataset",
            "scenario",
            "strategy",
            "detector",
            "base_metric",
            "kind",
            "step",
            "concept",
            *STATS,
            "chance",
        ],
    )


def forgetting_table(results: Iterable[RunResult], with_intervals: bool = True) -> pd.DataFrame:
    """Per configuration, base metric and test concept (by name, over every concept order):
    :func:`describe` over seeds of :func:`clad.metrics.forgetting_per_concept` (concepts without a
    defined value in any seed are left out; ``with_intervals=False``: no interval, NaN)."""
    rows = []
    for key, runs, m in _by_configuration(results):
        cols = canonical_columns(runs) or tuple(runs[0].test_concepts)
        try:
            values = [
                forgetting_per_concept(_columns(r, m, cols), learned_at(r.concepts, cols))
                for r in runs
            ]
        except DataError:
            continue
        d = _described(np.stack(values), value_bounds("forgetting", m), with_intervals)
        for j, concept in enumerate(cols):
            if d["n"][j]:
                rows.append(
                    {
                        **dict(zip(CONFIG_KEYS, key)),
                        "base_metric": m,
                        "concept": concept,
                        **stats_at(d, j),
                    }
                )
    return pd.DataFrame(
        rows,
        columns=["dataset", "scenario", "strategy", "detector", "base_metric", "concept", *STATS],
    )


def dataset_of(r: RunResult) -> str:
    """The dataset a run learned, without its concept order: a spec's ``orders`` label each
    dataset ``<label>[order=<name>]`` (:mod:`clad.engine.spec`), and the orders of one dataset are
    one source of data, never independent blocks of a test (:mod:`clad.report.blocks`). The suffix
    is removed only when it names the order the run's configuration gave the loader.

    >>> cfg = {"dataset": {"name": "adbench", "params": {"order": "random:42"}}}
    >>> dataset_of(RunResult("cardio[order=random]", "s", "n", "i", 0, config=cfg))
    'cardio'
    >>> dataset_of(RunResult("cardio[order=random]", "s", "n", "i", 0))  # no order given: a label like any other
    'cardio[order=random]'
    """
    order = (((r.config or {}).get("dataset") or {}).get("params") or {}).get("order")
    if isinstance(order, str):
        suffix = f"[order={order.split(':')[0]}]"
        if r.dataset.endswith(suffix) and len(r.dataset) > len(suffix):
            return r.dataset[: -len(suffix)]
    return r.dataset


def scalar_value(r: RunResult, base_metric: str, name: str) -> float:
    """A run's value of scalar metric ``name``: as recorded, else computed from its R when the
    metric needs nothing but R (a metric declared after the run still gets a value); NaN if neither.

    >>> from clad.results.record import RunResult
    >>> r = RunResult("d", "s", "naive", "if", 0, ("A", "B"), ("A", "B"),
    ...               R={"roc_auc": np.array([[0.9, 0.5], [0.7, 0.8]])})
    >>> scalar_value(r, "roc_auc", "final_average"), scalar_value(r, "roc_auc", "intransigence")
    (0.75, nan)
    """
    v = r.metrics.get(base_metric, {}).get(name)
    if v is None and base_metric in r.R and name in REGISTRY and not get_metric(name).needs:
        return float(
            get_metric(name).function(
                r.R[base_metric], learned_at=learned_at(r.concepts, r.test_concepts)
            )
        )
    return float("nan") if v is None else float(v)


def _scalar_values(r: RunResult, base_metric: str, names: Sequence[str]) -> list[float]:
    """:func:`scalar_value` of each of ``names``; a run read for a report holds its values in one
    array (:class:`clad.report.load.Scalars`, its ``take``), read at once, and only a value it lacks
    goes through :func:`scalar_value` (computed from R where the metric needs nothing else)."""
    take = getattr(r.metrics.get(base_metric), "take", None)
    if take is None:
        return [scalar_value(r, base_metric, name) for name in names]
    return [
        float(v) if v == v else scalar_value(r, base_metric, name)
        for v, name in zip(take(names), names)
    ]


LEADERBOARD_KEYS = ("dataset", "base_metric", "scenario", "detector", "strategy")


def leaderboard(
    results: Iterable[RunResult], metrics: Sequence[str] | None = None, headline: str | None = None
) -> pd.DataFrame:
    """One row per dataset x base metric x scenario x detector x strategy (base metrics in the
    order of ``headline`` first, then the spec's ``base_metrics``, :func:`base_order`); ``runs``
    (finished runs, one per seed), ``computations`` (how many of them are distinct computations,
    :func:`clad.report.describe.distinct_runs`: runs recorded as sharing a result, or found
    identical after the fact, count once) and, for every scalar metric ``m`` (default: every declared one), the columns of
    :func:`describe` over the distinct computations: ``m_mean``, ``m_std``, ``m_n`` (values, NaN left out),
    ``m_ci_low``, ``m_ci_high`` (inside the metric's range, NaN below :data:`MIN_INTERVAL_N`
    values), ``m_values`` (the values over seeds, a space-separated string, for pages that show
    them where an interval would say too little); then the same columns for every cost of
    :data:`clad.report.cost.COST` (fit and score seconds per step, peak memory MB, training rows kept).

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "s", "naive", "iforest", seed, metrics={"roc_auc": {"continual_average": v}})
    ...       for seed, v in [(0, 0.7), (1, 0.9), (2, None)]]
    >>> row = leaderboard(rs, ["continual_average"]).iloc[0]
    >>> float(row["continual_average_mean"]), round(float(row["continual_average_std"]), 4), int(row["runs"])
    (0.8, 0.1414, 3)
    >>> int(row["continual_average_n"]), float(row["continual_average_ci_high"])  # 2 values: no interval
    (2, nan)
    """
    metrics = scalar_names() if metrics is None else list(metrics)
    for name in metrics:
        get_metric(name)  # an unknown name is a clear error
    cols = (
        list(LEADERBOARD_KEYS)
        + ["runs", "computations"]
        + [f"{m}_{s}" for m in [*metrics, *COST] for s in (*STATS, "values")]
    )
    # column by column, the metrics' statistics as one array per row (a dict per row, or a Python
    # float per cell, costs several times the memory at a paper's grid, and leaves it fragmented)
    data: dict[str, list] = {c: [] for c in cols}
    stats: dict[str, list] = {k: [] for k in STATS}  # per row, one array over the metrics
    bounds: dict[str, tuple] = {}
    for (dataset, scenario, strategy, detector), runs in group_runs(results).items():
        base = base_order(
            (m for r in runs for m in (r.metrics or r.R)),
            [*([headline] if headline else []), *spec_base_metrics(runs)],
        )
        independent = distinct_runs(runs)
        cost = cost_columns(runs)
        for bm in base:
            if bm not in bounds:
                pairs = [value_bounds(name, bm) for name in metrics]
                bounds[bm] = ([p[0] for p in pairs], [p[1] for p in pairs])
        # one row of values over the distinct computations per base metric and metric, described at
        # once (describe_each describes each row on its own: the numbers of one call per base metric)
        values = (
            np.array(
                [[_scalar_values(r, bm, metrics) for r in independent] for bm in base],
                dtype=np.float64,
            )
            .reshape(len(base), len(independent), len(metrics))
            .transpose(0, 2, 1)
        )
        d = describe_each(
            values.reshape(len(base) * len(metrics), len(independent)),
            [low for bm in base for low in bounds[bm][0]],
            [high for bm in base for high in bounds[bm][1]],
        )
        for b, bm in enumerate(base):
            for k, v in zip(
                cols, (dataset, bm, scenario, detector, strategy, len(runs), len(independent))
            ):
                data[k].append(v)
            for k in STATS:
                stats[k].append(d[k][b * len(metrics) : (b + 1) * len(metrics)])
            for i, name in enumerate(metrics):
                data[f"{name}_values"].append(values_text(values[b, i]))
            for name in COST:
                for k in STATS:
                    data[f"{name}_{k}"].append(cost[f"{name}_{k}"])
                data[f"{name}_values"].append(np.nan)
    if not data["dataset"]:
        return pd.DataFrame([], columns=cols)
    columns: dict = dict(data)
    for k in STATS:
        table = np.vstack(stats[k]).astype(np.int64 if k == "n" else np.float64)
        for i, name in enumerate(metrics):
            columns[f"{name}_{k}"] = table[:, i]
    return pd.DataFrame(columns, columns=cols)


def values_text(values) -> str:
    """Values over seeds as compact text (NaN left out), for a page or a CSV cell.

    >>> values_text([0.71234, float("nan"), 0.9])
    '0.712 0.900'
    """
    return " ".join(f"{float(v):.3f}" for v in values if v is not None and v == v)


#: the marks :func:`best_status` gives: the best value, clear of the next one's interval; the best
#: value, within the noise of the next one (intervals overlap, or too few values for intervals); the
#: best value where it or the next one rests on fewer than two independent values (one computation
#: over every seed): no noise can be estimated, so neither "clear" nor "within noise" can be said
BEST, WITHIN_NOISE, NO_NOISE_ESTIMATE = "best", "within noise", "no noise estimate"
#: how :func:`merge_shared` joins the labels of configurations that are one computation
SHARED_LABEL = " = "


def scenario_groups(table: pd.DataFrame, within: Sequence[str]) -> list[tuple[tuple, pd.Index]]:
    """The rows of ``table`` that share ``within``, one group per value; a scenario label that
    stands for several scenarios (``concept_aware = concept_incremental``, :func:`merge_shared`)
    belongs to the group of each of them, so one scenario is never split into two groups.

    >>> t = pd.DataFrame({"dataset": ["d"] * 3, "scenario": ["a = b", "a", "b"]})
    >>> [(key, list(idx)) for key, idx in scenario_groups(t, ["dataset", "scenario"])]
    [(('d', 'a'), [0, 1]), (('d', 'b'), [0, 2])]
    """
    within = list(within)
    if not within:
        return [((), table.index)]
    if "scenario" not in within or "scenario" not in table.columns:
        return [
            ((key if isinstance(key, tuple) else (key,)), sub.index)
            for key, sub in table.groupby(within, sort=False)
        ]
    where = within.index("scenario")
    groups: dict[tuple, list] = {}
    for idx, *key in zip(table.index, *(table[k].tolist() for k in within)):
        for name in str(key[where]).split(SHARED_LABEL):
            groups.setdefault((*key[:where], name, *key[where + 1 :]), []).append(idx)
    return [(key, pd.Index(rows)) for key, rows in groups.items()]


def _first_status(
    mean: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    n: np.ndarray,
    rows: np.ndarray,
    higher: bool,
):
    """(the best row, its status) among the row positions ``rows``, or None (fewer than 2 values, a tie)."""
    rows = rows[~np.isnan(mean[rows])]
    if len(rows) < 2:
        return None
    # a stable sort, best first: of rows with equal means, the earlier one comes first
    order = np.argsort(-mean[rows] if higher else mean[rows], kind="stable")
    first, second = rows[order[0]], rows[order[1]]
    if (
        f"{mean[first]:.{PRINTED_DIGITS}f}" == f"{mean[second]:.{PRINTED_DIGITS}f}"
    ):  # a tie as the reader sees it
        return None
    if (
        min(n[first], n[second]) < 2
    ):  # NaN compares False: a table without counts is not judged here
        return first, NO_NOISE_ESTIMATE
    clear = low[first] > high[second] if higher else high[first] < low[second]
    return first, BEST if bool(clear) else WITHIN_NOISE  # NaN compares False: within noise


_WEAKEST = (NO_NOISE_ESTIMATE, WITHIN_NOISE, BEST)
#: the decimals a table prints a mean with: two means equal there are a tie, and neither is marked
PRINTED_DIGITS = 3


def best_status(
    table: pd.DataFrame,
    metrics: Sequence[str],
    within: Sequence[str] = ("dataset", "base_metric", "scenario"),
) -> pd.DataFrame:
    """Per metric column, among the rows that share ``within`` (a row standing for several
    scenarios is in each of their groups, :func:`scenario_groups`): ``"best"`` on the row with the
    best mean when its interval does not overlap the interval of the next best row, ``"within
    noise"`` on it when they overlap or either has no interval (too few values), ``"no noise
    estimate"`` when either rests on fewer than two independent values (``m_n``: distinct
    computations), ``""`` elsewhere (and in a group of one row, or where the best mean is tied as
    printed, to :data:`PRINTED_DIGITS` decimals: ``1.000`` beside ``1.000`` is bold on neither). A
    row in several groups gets a mark only where it is the best of every one (the weakest of its
    marks). Higher or lower is better as each metric's declaration says; NaN is never marked.

    >>> t = pd.DataFrame({"dataset": ["d"] * 3, "continual_average_mean": [0.9, 0.8, 0.7],
    ...                   "continual_average_ci_low": [0.88, 0.75, 0.6], "continual_average_ci_high": [0.92, 0.85, 0.8],
    ...                   "forgetting_mean": [0.2, 0.1, np.nan], "forgetting_ci_low": [0.1, 0.05, np.nan],
    ...                   "forgetting_ci_high": [0.3, 0.15, np.nan]})
    >>> best_status(t, ["continual_average", "forgetting"], within=["dataset"]).values.tolist()
    [['best', ''], ['', 'within noise'], ['', '']]
    >>> t["continual_average_n"] = [1, 1, 1]
    >>> best_status(t, ["continual_average"], within=["dataset"])["continual_average"].tolist()
    ['no noise estimate', '', '']
    """
    if table.empty:
        return pd.DataFrame("", index=table.index, columns=list(metrics))
    # the groups as row positions, and the columns as arrays: one look-up per column, not per cell
    groups = [
        idx.to_numpy()
        for _, idx in scenario_groups(table[list(within)].reset_index(drop=True), within)
    ]
    member = np.zeros(len(table), dtype=np.int64)
    for rows in groups:
        member[rows] += 1

    def column(name: str, default: float) -> np.ndarray:
        if name not in table.columns:
            return np.full(len(table), default)
        return table[name].to_numpy(dtype=np.float64, na_value=np.nan)

    out = {}
    for name in metrics:
        higher = get_metric(name).higher_is_better if name in REGISTRY else False
        mean = column(f"{name}_mean", np.nan)
        low, high = column(f"{name}_ci_low", np.nan), column(f"{name}_ci_high", np.nan)
        n = column(f"{name}_n", np.inf)
        n = np.where(np.isnan(n), 0.0, n)
        found: dict = {}
        for rows in groups:
            got = _first_status(mean, low, high, n, rows, higher)
            if got is not None:
                found.setdefault(got[0], []).append(got[1])
        marks = [""] * len(table)
        for row, got in found.items():
            if len(got) == member[row]:  # the best of every group it is in
                marks[row] = min(got, key=_WEAKEST.index)
        out[name] = marks
    return pd.DataFrame(out, index=table.index, columns=list(metrics))


def best_marks(
    table: pd.DataFrame,
    metrics: Sequence[str],
    within: Sequence[str] = ("dataset", "base_metric", "scenario"),
) -> pd.DataFrame:
    """True where :func:`best_status` says ``"best"``: the best mean of a metric column among the
    rows that share ``within``, with an interval clear of the next best row's.

    >>> t = pd.DataFrame({"dataset": ["d"] * 2, "continual_average_mean": [0.9, 0.8],
    ...                   "continual_average_ci_low": [0.88, 0.7], "continual_average_ci_high": [0.92, 0.85]})
    >>> best_marks(t, ["continual_average"], within=["dataset"]).values.tolist()
    [[True], [False]]
    """
    return best_status(table, metrics, within) == BEST
