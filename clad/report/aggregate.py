"""Pure aggregation of run results over seeds: what the plots and tables show.

Nothing here plots or writes files. A *configuration* is dataset x scenario x strategy x detector;
its runs differ only by seed. Means over seeds leave NaN out (a cell undefined in one seed does not
hide the others); a value undefined in every seed stays NaN. ``std`` is the sample standard
deviation (``ddof=1``), ``n`` the number of values (not runs) that entered the mean, and
``ci_low``/``ci_high`` a 95 % t-based confidence interval of the mean,
``mean ± t(0.975, n-1) · std / sqrt(n)`` (Student's t, as the spread over a handful of seeds
calls for: a bootstrap over 2 to 5 seeds has too few distinct resamples to give an interval).
With fewer than two values std and the interval are NaN. Which scalar metrics exist, and whether
higher or lower is better, is read from :data:`clad.metrics.REGISTRY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..results.record import RunResult
from ..errors import DataError
from ..metrics import (REGISTRY, accuracy_all, accuracy_seen, forgetting_per_concept, get_metric, learned_at,
                       scalar_names)
from .cost import COST, cost_columns
from .describe import CONFIG_KEYS, STATS, describe, group_runs, mean_std, stats_at

__all__ = [
    "HeatmapData",
    "scalar_value",
    "heatmap_data",
    "heatmaps",
    "learning_curves",
    "forgetting_per_concept",
    "forgetting_table",
    "leaderboard",
    "best_marks",
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

    @property
    def key(self) -> tuple[str, ...]:
        return (self.dataset, self.scenario, self.strategy, self.detector, self.base_metric) + (
            (f"order {self.order}",) if self.order is not None else ())

    @property
    def title(self) -> str:
        return " / ".join(self.key)


def _columns(r: RunResult, base_metric: str, cols: Sequence[str] | None) -> np.ndarray:
    """R of run ``r`` with its columns in the order ``cols`` (by test concept name), or as it is."""
    R = np.asarray(r.R[base_metric], dtype=np.float64)
    if cols is None or tuple(cols) == tuple(r.test_concepts):
        return R
    names = list(r.test_concepts)
    if sorted(names) != sorted(cols) or len(set(names)) != len(names):
        raise DataError(f"seed {r.seed} has test concepts {r.test_concepts}; they cannot be put in the order {cols}")
    return R[:, [names.index(c) for c in cols]]


def heatmap_data(runs: Sequence[RunResult], base_metric: str, cols: Sequence[str] | None = None,
                 order: str | None = None) -> HeatmapData:
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
    first = runs[0]
    key = tuple(getattr(first, k) for k in CONFIG_KEYS)
    mats = []
    for r in runs:
        if tuple(getattr(r, k) for k in CONFIG_KEYS) != key:
            raise DataError(f"runs of different configurations cannot be averaged: {key} and "
                            f"{tuple(getattr(r, k) for k in CONFIG_KEYS)}")
        if r.concepts != first.concepts or (cols is None and r.test_concepts != first.test_concepts):
            raise DataError(f"{' / '.join(key)}: seed {r.seed} has concepts {r.concepts} x {r.test_concepts}, "
                            f"seed {first.seed} has {first.concepts} x {first.test_concepts}; R cannot be averaged")
        if base_metric not in r.R:
            raise DataError(f"{' / '.join(key)}: seed {r.seed} has no R for base metric {base_metric!r} "
                            f"(it has {', '.join(r.R) or 'none'})")
        mats.append(_columns(r, base_metric, cols))
    mean, std, n = mean_std(np.stack(mats))
    cols = tuple(first.test_concepts) if cols is None else tuple(cols)
    return HeatmapData(*key, base_metric=base_metric, mean=mean, std=std, n=n, rows=tuple(first.concepts),
                       cols=cols, learned_at=learned_at(first.concepts, cols),
                       seeds=tuple(r.seed for r in runs), order=order)


def _base_metrics(runs: Sequence[RunResult]) -> list[str]:
    names = [m for m in runs[0].R]
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
                    out.append((part, heatmap_data(part, m, cols,
                                                   _order_name(part, i) if len(orders) > 1 else None)))
                except DataError as exc:
                    problems.append(str(exc))
    return out, problems


def heatmaps(results: Iterable[RunResult]) -> tuple[list[HeatmapData], list[str]]:
    """:func:`heatmap_data` for every configuration and base metric, and a message for each that
    could not be averaged (instead of raising)."""
    pairs, problems = _averaged(results)
    return [hm for _, hm in pairs], problems


def _by_configuration(results: Iterable[RunResult]):
    """(key, runs, base metric) per configuration and base metric, over every concept order."""
    for key, runs in group_runs(results).items():
        for m in _base_metrics(runs):
            yield key, runs, m


def learning_curves(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, base metric and step: :func:`describe` over seeds (and over concept
    orders, step by step, when the runs differ in order) of :func:`clad.metrics.accuracy_seen`
    (``kind="seen"``) and :func:`clad.metrics.accuracy_all` (``kind="all"``). Long format, one row
    per (configuration, base metric, kind, step); ``concept`` is the concept learned at the step,
    or ``""`` when the orders differ there.
    """
    rows = []
    for key, runs, m in _by_configuration(results):
        if len({len(r.concepts) for r in runs}) > 1:
            continue
        for kind, fn in (("seen", accuracy_seen), ("all", accuracy_all)):
            curves = np.stack([fn(r.R[m], learned_at(r.concepts, r.test_concepts)) for r in runs])
            d = describe(curves)
            for step in range(curves.shape[1]):
                names = {r.concepts[step] for r in runs}
                rows.append({**dict(zip(CONFIG_KEYS, key)), "base_metric": m, "kind": kind, "step": step,
                             "concept": names.pop() if len(names) == 1 else "", **stats_at(d, step)})
    return pd.DataFrame(rows, columns=["dataset", "scenario", "strategy", "detector", "base_metric", "kind",
                                       "step", "concept", *STATS])


def forgetting_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, base metric and test concept (by name, over every concept order):
    :func:`describe` over seeds of :func:`clad.metrics.forgetting_per_concept` (concepts without a
    defined value in any seed are left out)."""
    rows = []
    for key, runs, m in _by_configuration(results):
        cols = canonical_columns(runs) or tuple(runs[0].test_concepts)
        try:
            values = [forgetting_per_concept(_columns(r, m, cols), learned_at(r.concepts, cols)) for r in runs]
        except DataError:
            continue
        d = describe(np.stack(values))
        for j, concept in enumerate(cols):
            if d["n"][j]:
                rows.append({**dict(zip(CONFIG_KEYS, key)), "base_metric": m, "concept": concept,
                             **stats_at(d, j)})
    return pd.DataFrame(rows, columns=["dataset", "scenario", "strategy", "detector", "base_metric", "concept",
                                       *STATS])


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
        return float(get_metric(name).function(r.R[base_metric], learned_at=learned_at(r.concepts, r.test_concepts)))
    return float("nan") if v is None else float(v)


LEADERBOARD_KEYS = ("dataset", "base_metric", "scenario", "detector", "strategy")


def leaderboard(results: Iterable[RunResult], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per dataset x base metric x scenario x detector x strategy; ``runs`` (finished runs,
    one per seed) and, for every scalar metric ``m`` (default: every declared one), the columns of
    :func:`describe` over seeds: ``m_mean``, ``m_std``, ``m_n`` (values, NaN left out),
    ``m_ci_low``, ``m_ci_high``; then the same columns for every cost of
    :data:`clad.report.cost.COST` (fit and score seconds per step, peak memory MB, training rows kept).

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "s", "naive", "iforest", seed, metrics={"roc_auc": {"continual_average": v}})
    ...       for seed, v in [(0, 0.7), (1, 0.9), (2, None)]]
    >>> row = leaderboard(rs, ["continual_average"]).iloc[0]
    >>> float(row["continual_average_mean"]), round(float(row["continual_average_std"]), 4), int(row["runs"])
    (0.8, 0.1414, 3)
    >>> int(row["continual_average_n"]), round(float(row["continual_average_ci_high"]), 4)
    (2, 2.0706)
    """
    metrics = scalar_names() if metrics is None else list(metrics)
    for name in metrics:
        get_metric(name)  # an unknown name is a clear error
    rows = []
    for (dataset, scenario, strategy, detector), runs in group_runs(results).items():
        base = list(dict.fromkeys(m for r in runs for m in (r.metrics or r.R)))
        for bm in base:
            row = {"dataset": dataset, "base_metric": bm, "scenario": scenario, "detector": detector,
                   "strategy": strategy, "runs": len(runs)}
            for name in metrics:
                d = describe(np.array([[scalar_value(r, bm, name)] for r in runs]))
                row.update({f"{name}_{k}": v for k, v in stats_at(d, 0).items()})
            rows.append({**row, **cost_columns(runs)})
    cols = list(LEADERBOARD_KEYS) + ["runs"] + [f"{m}_{s}" for m in [*metrics, *COST] for s in STATS]
    return pd.DataFrame(rows, columns=cols)


def best_marks(table: pd.DataFrame, metrics: Sequence[str],
               within: Sequence[str] = ("dataset", "base_metric", "scenario")) -> pd.DataFrame:
    """True where a row holds the best mean of a metric column among the rows that share ``within``
    (higher or lower is better as each metric's declaration says; ties are all marked; NaN never is).

    >>> t = pd.DataFrame({"dataset": ["d"] * 3, "forgetting_mean": [0.2, 0.1, np.nan],
    ...                   "continual_average_mean": [0.9, 0.8, 0.9]})
    >>> best_marks(t, ["continual_average", "forgetting"], within=["dataset"]).values.tolist()
    [[True, False], [False, True], [True, False]]
    """
    marks = pd.DataFrame(False, index=table.index, columns=list(metrics))
    if table.empty:
        return marks
    for name in metrics:
        pick = "max" if get_metric(name).higher_is_better else "min"
        col = table[f"{name}_mean"]
        if within:
            best = col.groupby([table[w] for w in within], sort=False).transform(pick)
        else:
            best = pd.Series(getattr(col, pick)(), index=col.index)
        marks[name] = (col == best) & col.notna()
    return marks
