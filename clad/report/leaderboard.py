"""The leaderboard: one row per configuration and base metric with every scalar metric over
seeds, the groups of scenarios that share their rows, and the best configuration's marks."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..metrics import REGISTRY, get_metric, learned_at, scalar_names
from ..results.record import RunResult
from .aggregate import base_order, spec_base_metrics, value_bounds
from .cost import COST, cost_columns
from .describe import STATS, describe_each, distinct_runs, group_runs

__all__ = ["leaderboard", "best_marks", "best_status", "scenario_groups"]


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
        at = learned_at(r.concepts, r.test_concepts)
        return float(get_metric(name).function(r.R[base_metric], learned_at=at))
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


def _first_status(mean, low, high, n, rows, higher: bool):
    """(the best row, its status) among the row positions ``rows`` (the other arguments: arrays over
    every row), or None (fewer than 2 values, a tie)."""
    rows = rows[~np.isnan(mean[rows])]
    if len(rows) < 2:
        return None
    # a stable sort, best first: of rows with equal means, the earlier one comes first
    order = np.argsort(-mean[rows] if higher else mean[rows], kind="stable")
    first, second = rows[order[0]], rows[order[1]]
    # a tie as the reader sees it
    if f"{mean[first]:.{PRINTED_DIGITS}f}" == f"{mean[second]:.{PRINTED_DIGITS}f}":
        return None
    # NaN compares False: a table without counts is not judged here
    if min(n[first], n[second]) < 2:
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
    keys = table[list(within)].reset_index(drop=True)
    groups = [idx.to_numpy() for _, idx in scenario_groups(keys, within)]
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
