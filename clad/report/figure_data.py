"""What the report's figures show, averaged over seeds: heatmaps of R (:class:`HeatmapData`),
learning curves and forgetting per concept. Nothing here draws."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from ..metrics import accuracy_all, accuracy_seen, forgetting_per_concept, learned_at
from ..metrics.base import base_metric_bounds as base_bounds
from ..results.record import RunResult
from .aggregate import base_order, spec_base_metrics, value_bounds
from .chance import chance_cells, chance_matrix
from .describe import CONFIG_KEYS, STATS, describe, distinct_runs, group_runs, mean_std, stats_at

__all__ = [
    "HeatmapData",
    "heatmap_data",
    "heatmaps",
    "learning_curves",
    "forgetting_per_concept",
    "forgetting_table",
]


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
    chance, at = chance_cells(runs, base_metric, cols_given, stack)
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
                name = _order_name(part, i) if len(orders) > 1 else None
                try:
                    out.append((part, heatmap_data(part, m, cols, name)))
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
    none = np.full(mean.shape, np.nan)
    return {"mean": mean, "std": std, "n": n, "ci_low": none, "ci_high": none}


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
    # a chance curve per kind, levels, concepts and undefined cells
    chance_curves: dict[tuple, np.ndarray] = {}

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
        key = (kind, id(levels), tuple(r.concepts), tuple(r.test_concepts), undefined.shape)
        key += (undefined.tobytes(),)
        # runs holding one record of their levels (a report's slim runs) share it
        if key not in chance_curves:
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
                concept = names.pop() if len(names) == 1 else ""
                stats = stats_at(d, step).values()
                rows.append([*key, m, kind, step, concept, *stats, float(chance[step])])
    return pd.DataFrame(
        rows, columns=[*CONFIG_KEYS, "base_metric", "kind", "step", "concept", *STATS, "chance"]
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
                rows.append([*key, m, concept, *stats_at(d, j).values()])
    return pd.DataFrame(rows, columns=[*CONFIG_KEYS, "base_metric", "concept", *STATS])
