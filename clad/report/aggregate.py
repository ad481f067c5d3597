"""Pure aggregation of run results over seeds: what the plots and tables show.

Nothing here plots or writes files. A *configuration* is dataset x scenario x strategy x detector;
its runs differ only by seed. Means over seeds leave NaN out (a cell undefined in one seed does not
hide the others); a value undefined in every seed stays NaN. ``std`` is the sample standard
deviation (``ddof=1``) and is NaN with fewer than two values.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..core.results import RunResult
from ..errors import DataError
from ..metrics import SCALAR_METRICS, accuracy_all, accuracy_seen, learned_at

__all__ = [
    "CONFIG_KEYS",
    "LOWER_IS_BETTER",
    "HeatmapData",
    "group_runs",
    "mean_std",
    "heatmap_data",
    "heatmaps",
    "learning_curves",
    "forgetting_per_concept",
    "forgetting_table",
    "leaderboard",
    "best_marks",
]

#: the fields that identify a configuration (its runs differ only by seed)
CONFIG_KEYS = ("dataset", "scenario", "strategy", "detector")
#: scalar metrics for which lower is better (all others: higher is better)
LOWER_IS_BETTER = frozenset({"forgetting"})


def group_runs(results: Iterable[RunResult]) -> dict[tuple[str, str, str, str], list[RunResult]]:
    """Finished runs grouped by configuration (first-seen order), each group sorted by seed.

    >>> from clad.core.results import RunResult
    >>> rs = [RunResult("d", "s", "naive", "iforest", 1), RunResult("d", "s", "naive", "iforest", 0),
    ...       RunResult("d", "s", "naive", "lof", 0, status="failed")]
    >>> {k: [r.seed for r in v] for k, v in group_runs(rs).items()}
    {('d', 's', 'naive', 'iforest'): [0, 1]}
    """
    groups: dict[tuple[str, str, str, str], list[RunResult]] = {}
    for r in results:
        if r.ok:
            groups.setdefault((r.dataset, r.scenario, r.strategy, r.detector), []).append(r)
    return {k: sorted(v, key=lambda r: r.seed) for k, v in groups.items()}


def mean_std(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample std and count over axis 0, NaN left out.

    >>> m, s, n = mean_std([[1.0, np.nan], [3.0, np.nan], [2.0, 5.0]])
    >>> m.tolist(), s.tolist(), n.tolist()
    ([2.0, 5.0], [1.0, nan], [3, 1])
    """
    a = np.asarray(values, dtype=np.float64)
    n = (~np.isnan(a)).sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(a, axis=0)
        std = np.nanstd(a, axis=0, ddof=1)
    std = np.where(n >= 2, std, np.nan)
    return np.asarray(mean), np.asarray(std), np.asarray(n)


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

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.dataset, self.scenario, self.strategy, self.detector, self.base_metric)

    @property
    def title(self) -> str:
        return " / ".join(self.key)


def heatmap_data(runs: Sequence[RunResult], base_metric: str) -> HeatmapData:
    """Average R over the seeds of one configuration.

    The runs must share the configuration and the row and column labels.

    >>> from clad.core.results import RunResult
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
        if r.concepts != first.concepts or r.test_concepts != first.test_concepts:
            raise DataError(f"{' / '.join(key)}: seed {r.seed} has concepts {r.concepts} x {r.test_concepts}, "
                            f"seed {first.seed} has {first.concepts} x {first.test_concepts}; R cannot be averaged")
        if base_metric not in r.R:
            raise DataError(f"{' / '.join(key)}: seed {r.seed} has no R for base metric {base_metric!r} "
                            f"(it has {', '.join(r.R) or 'none'})")
        mats.append(np.asarray(r.R[base_metric], dtype=np.float64))
    mean, std, n = mean_std(np.stack(mats))
    return HeatmapData(*key, base_metric=base_metric, mean=mean, std=std, n=n, rows=tuple(first.concepts),
                       cols=tuple(first.test_concepts), learned_at=learned_at(first.concepts, first.test_concepts),
                       seeds=tuple(r.seed for r in runs))


def _base_metrics(runs: Sequence[RunResult]) -> list[str]:
    names = [m for m in runs[0].R]
    return [m for m in names if all(m in r.R for r in runs)]


def _averaged(results: Iterable[RunResult]):
    """(runs, HeatmapData) per configuration and base metric, and the problems met."""
    out, problems = [], []
    for runs in group_runs(results).values():
        for m in _base_metrics(runs):
            try:
                out.append((runs, heatmap_data(runs, m)))
            except DataError as exc:
                problems.append(str(exc))
    return out, problems


def heatmaps(results: Iterable[RunResult]) -> tuple[list[HeatmapData], list[str]]:
    """:func:`heatmap_data` for every configuration and base metric, and a message for each that
    could not be averaged (instead of raising)."""
    pairs, problems = _averaged(results)
    return [hm for _, hm in pairs], problems


def learning_curves(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, base metric and step: mean/std/n over seeds of
    :func:`clad.metrics.accuracy_seen` (``kind="seen"``) and :func:`clad.metrics.accuracy_all`
    (``kind="all"``). Long format, one row per (configuration, base metric, kind, step).
    """
    rows = []
    for runs, hm in _averaged(results)[0]:
        for kind, fn in (("seen", accuracy_seen), ("all", accuracy_all)):
            curves = np.stack([fn(r.R[hm.base_metric], hm.learned_at) for r in runs])
            mean, std, n = mean_std(curves)
            for step in range(curves.shape[1]):
                rows.append({"dataset": hm.dataset, "scenario": hm.scenario, "strategy": hm.strategy,
                             "detector": hm.detector, "base_metric": hm.base_metric, "kind": kind, "step": step,
                             "concept": hm.rows[step], "mean": mean[step], "std": std[step], "n": int(n[step])})
    return pd.DataFrame(rows, columns=["dataset", "scenario", "strategy", "detector", "base_metric", "kind",
                                       "step", "concept", "mean", "std", "n"])


def forgetting_per_concept(R, learned_at=None) -> np.ndarray:
    """Per test concept: peak before the last step minus the final value,
    ``max_{t(j) <= l < N-1} R[l, j] - R[N-1, j]`` (NaN for concepts learned at the last step or
    never, and where no value is defined). Its NaN-free mean is :func:`clad.metrics.forgetting`.

    >>> forgetting_per_concept([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]]).round(3).tolist()
    [0.3, 0.05, nan]
    """
    R = np.asarray(R, dtype=np.float64)
    last = R.shape[0] - 1
    t = np.asarray(learned_at if learned_at is not None else
                   np.where(np.arange(R.shape[1]) < R.shape[0], np.arange(R.shape[1]), -1))
    out = np.full(R.shape[1], np.nan)
    for j in range(R.shape[1]):
        if t[j] < 0 or t[j] >= last or np.isnan(R[last, j]):
            continue
        earlier = R[t[j]:last, j]
        if not np.isnan(earlier).all():
            out[j] = np.nanmax(earlier) - R[last, j]
    return out


def forgetting_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, base metric and test concept: mean/std/n over seeds of
    :func:`forgetting_per_concept` (concepts without a defined value in any seed are left out)."""
    rows = []
    for runs, hm in _averaged(results)[0]:
        per_seed = np.stack([forgetting_per_concept(r.R[hm.base_metric], hm.learned_at) for r in runs])
        mean, std, n = mean_std(per_seed)
        for j, concept in enumerate(hm.cols):
            if n[j]:
                rows.append({"dataset": hm.dataset, "scenario": hm.scenario, "strategy": hm.strategy,
                             "detector": hm.detector, "base_metric": hm.base_metric, "concept": concept,
                             "mean": mean[j], "std": std[j], "n": int(n[j])})
    return pd.DataFrame(rows, columns=["dataset", "scenario", "strategy", "detector", "base_metric", "concept",
                                       "mean", "std", "n"])


def _scalar(r: RunResult, base_metric: str, name: str) -> float:
    v = r.metrics.get(base_metric, {}).get(name)
    if v is None and base_metric in r.R and name in SCALAR_METRICS:
        return float(SCALAR_METRICS[name](r.R[base_metric], learned_at(r.concepts, r.test_concepts)))
    return float("nan") if v is None else float(v)


LEADERBOARD_KEYS = ("dataset", "base_metric", "scenario", "detector", "strategy")


def leaderboard(results: Iterable[RunResult], metrics: Sequence[str] = tuple(SCALAR_METRICS)) -> pd.DataFrame:
    """One row per dataset x base metric x scenario x detector x strategy; for every scalar metric
    ``m`` the columns ``m_mean``, ``m_std`` and ``m_n`` (seeds with a value), plus ``seeds``.

    >>> from clad.core.results import RunResult
    >>> rs = [RunResult("d", "s", "naive", "iforest", seed, metrics={"roc_auc": {"continual_average": v}})
    ...       for seed, v in [(0, 0.7), (1, 0.9)]]
    >>> lb = leaderboard(rs, ["continual_average"])
    >>> row = lb.iloc[0]
    >>> float(row["continual_average_mean"]), round(float(row["continual_average_std"]), 4), int(row["seeds"])
    (0.8, 0.1414, 2)
    """
    rows = []
    for (dataset, scenario, strategy, detector), runs in group_runs(results).items():
        base = list(dict.fromkeys(m for r in runs for m in (r.metrics or r.R)))
        for bm in base:
            row = {"dataset": dataset, "base_metric": bm, "scenario": scenario, "detector": detector,
                   "strategy": strategy, "seeds": len(runs)}
            for name in metrics:
                mean, std, n = mean_std(np.array([[_scalar(r, bm, name)] for r in runs]))
                row[f"{name}_mean"], row[f"{name}_std"], row[f"{name}_n"] = float(mean[0]), float(std[0]), int(n[0])
            rows.append(row)
    cols = list(LEADERBOARD_KEYS) + ["seeds"] + [f"{m}_{s}" for m in metrics for s in ("mean", "std", "n")]
    return pd.DataFrame(rows, columns=cols)


def best_marks(table: pd.DataFrame, metrics: Sequence[str],
               within: Sequence[str] = ("dataset", "base_metric", "scenario")) -> pd.DataFrame:
    """True where a row holds the best mean of a metric column among the rows that share ``within``
    (higher is better except for :data:`LOWER_IS_BETTER`; ties are all marked; NaN never is).

    >>> t = pd.DataFrame({"dataset": ["d"] * 3, "forgetting_mean": [0.2, 0.1, np.nan],
    ...                   "continual_average_mean": [0.9, 0.8, 0.9]})
    >>> best_marks(t, ["continual_average", "forgetting"], within=["dataset"]).values.tolist()
    [[True, False], [False, True], [True, False]]
    """
    marks = pd.DataFrame(False, index=table.index, columns=list(metrics))
    if table.empty:
        return marks
    for name in metrics:
        col = table[f"{name}_mean"]
        if within:
            grouped = col.groupby([table[w] for w in within], sort=False)
            best = grouped.transform("min" if name in LOWER_IS_BETTER else "max")
        else:
            best = pd.Series(col.min() if name in LOWER_IS_BETTER else col.max(), index=col.index)
        marks[name] = (col == best) & col.notna()
    return marks
