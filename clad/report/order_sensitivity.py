"""Order sensitivity: how much a configuration's metrics move when only the concept order changes,
and whether a ranking of methods survives the order (:func:`order_agreement`).

For every configuration (dataset x scenario x strategy x detector) and base metric whose runs cover
at least two concept orders (a spec's ``orders = { random = 3 }``: the same permutations under
every seed), each metric is first averaged over the seeds of one order (NaN left out), then
described over those per-order means: the number of orders with a value, their min, max, range
(max - min) and sample standard deviation (``ddof=1``). The spread over orders is separate from the
spread over seeds, which the leaderboard reports.

>>> from clad.results.record import RunResult
>>> runs = [RunResult("d", "s", "naive", "if", seed, concepts=order, metrics={"roc_auc": {"continual_average": v}})
...         for order, seed, v in [(("A", "B"), 0, 0.8), (("A", "B"), 1, 0.6), (("B", "A"), 0, 0.9)]]
>>> t = order_sensitivity(runs, ["continual_average"])
>>> t[["CA_orders", "CA_min", "CA_max", "CA_range"]].round(3).values.tolist()
[[2.0, 0.7, 0.9, 0.2]]
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..defaults import DEFAULT_BASE_METRIC, DEFAULT_METRIC
from ..results.record import RunResult
from ..metrics import get_metric
from ..metrics.cells import nanmean
from .aggregate import dataset_of
from .describe import CONFIG_KEYS, group_runs
from .figure_data import by_order
from .leaderboard import scalar_value
from .blocks import DEFAULT_BLOCKS, evidence_blocks
from .exact import kendall_w

__all__ = [
    "order_sensitivity",
    "ORDER_METRICS",
    "OrderAgreement",
    "order_agreement",
    "order_key",
    "several_orders",
    "order_agreement_by_dataset",
]

#: the metrics whose order sensitivity is reported by default
ORDER_METRICS = ("continual_average", "backward_transfer", "forward_transfer")


def order_sensitivity(
    results: Iterable[RunResult], metrics: Sequence[str] = ORDER_METRICS
) -> pd.DataFrame:
    """One row per configuration and base metric with several concept orders (see the module)."""
    rows = []
    # a configuration's orders are one dataset's: labelled `<label>[order=<name>]`, they group here
    one_dataset = (dataclasses.replace(r, dataset=dataset_of(r)) for r in results)
    for key, runs in group_runs(one_dataset).items():
        orders = by_order(runs)
        if len(orders) < 2:
            continue
        for base in dict.fromkeys([*runs[0].R, *runs[0].metrics]):
            row = {
                **dict(zip(CONFIG_KEYS, key)),
                "base_metric": base,
                "orders": len(orders),
                "runs": len(runs),
            }
            for name in metrics:
                label = get_metric(name).label
                values = ([scalar_value(r, base, name) for r in part] for part in orders.values())
                means = np.array([nanmean(v) for v in values])
                ok = means[~np.isnan(means)]
                row.update(
                    {
                        f"{label}_orders": float(ok.size),
                        f"{label}_min": float(ok.min()) if ok.size else np.nan,
                        f"{label}_max": float(ok.max()) if ok.size else np.nan,
                        f"{label}_range": float(ok.max() - ok.min()) if ok.size else np.nan,
                        f"{label}_std": float(ok.std(ddof=1)) if ok.size > 1 else np.nan,
                    }
                )
            rows.append(row)
    return pd.DataFrame(rows)


def several_orders(results: Iterable[RunResult]) -> bool:
    """Whether some dataset was run in more than one concept order (training sequence): the only
    evidence an order analysis can rest on. Datasets that each ran in one order (one with a named
    order, another without) are not "several orders".

    >>> a = RunResult("d", "s", "n", "i", 0, ("A", "B"), order="given")
    >>> b = RunResult("e", "s", "n", "i", 0, ("X", "Y"))
    >>> several_orders([a, b]), several_orders([a, RunResult("d", "s", "n", "i", 0, ("B", "A"), order="random:1")])
    (False, True)
    """
    seen: dict[str, set] = {}
    for r in results:
        if r.ok:
            seen.setdefault(dataset_of(r), set()).add(tuple(r.concepts))
    return any(len(v) > 1 for v in seen.values())


def order_key(r: RunResult) -> str:
    """The concept order a run learned in: its recorded order name (``random:<seed>`` under a
    spec's ``orders = { random = 3 }``, the same name for every dataset), else its training sequence."""
    return r.order or " → ".join(map(str, r.concepts))


@dataclass(frozen=True, eq=False)
class OrderAgreement:
    """Whether the methods' ranking survives the concept order.

    ``ranks``: orders x methods, each method's average rank over the blocks of that order alone
    (1 = best); ``kendall_w``: Kendall's W of those rankings (the orders as raters; 1 = every
    order ranks the methods alike, 0 = no agreement); ``best``: the headline best (by average rank
    over every order together); ``best_orders``: in how many orders it is best (ties for best
    count); ``order_dependent``: it is not best in every order.
    """

    ranks: pd.DataFrame
    kendall_w: float
    best: str | None
    best_orders: int

    @property
    def n_orders(self) -> int:
        return int(self.ranks.shape[0])

    @property
    def best_share(self) -> float:
        return self.best_orders / self.n_orders if self.n_orders else float("nan")

    @property
    def order_dependent(self) -> bool:
        return self.best_orders < self.n_orders


def order_agreement(
    results: Iterable[RunResult],
    by: str = "detector",
    metric: str = DEFAULT_METRIC,
    base_metric: str = DEFAULT_BASE_METRIC,
    blocks: Sequence[str] = DEFAULT_BLOCKS,
    best: str | None = None,
) -> OrderAgreement | None:
    """Rank the methods (``by``) within each concept order (:func:`order_key`) separately, on the
    same blocks as the statistics (:func:`clad.report.blocks.evidence_blocks`: per order, each block's
    score the mean over seeds and the other fields; a method's rank in an order its average rank
    over that order's complete blocks), and measure their agreement (see :class:`OrderAgreement`).
    ``best`` defaults to the method best in the most orders. None with fewer than 2 orders or 2
    methods present in every order.

    >>> runs = [RunResult("d", "s", "naive", det, 0, concepts=c, order=o,
    ...                   metrics={"roc_auc": {"continual_average": v}})
    ...         for o, c, det, v in [("o1", ("A", "B"), "x", 0.9), ("o1", ("A", "B"), "y", 0.7),
    ...                              ("o2", ("B", "A"), "x", 0.6), ("o2", ("B", "A"), "y", 0.8)]]
    >>> a = order_agreement(runs, best="x")
    >>> a.kendall_w, a.best_orders, a.order_dependent
    (0.0, 1, True)
    """
    higher = get_metric(metric).higher_is_better
    results = [r for r in results if r.ok]
    if not several_orders(results):
        return None
    parts: dict[str, list[RunResult]] = {}
    for r in results:
        parts.setdefault(order_key(r), []).append(r)
    if len(parts) < 2:
        return None
    rows = {}
    for key, runs in parts.items():
        scores = (
            evidence_blocks(runs, by, metric, base_metric, blocks).scores.astype(float).dropna()
        )
        if scores.empty:
            continue
        values = -scores.to_numpy() if higher else scores.to_numpy()
        rows[key] = pd.Series(stats.rankdata(values, axis=1).mean(axis=0), index=scores.columns)
    table = pd.DataFrame(rows).T.dropna(axis=1)
    if table.shape[0] < 2 or table.shape[1] < 2:
        return None
    table.columns.name = None
    within = stats.rankdata(table.to_numpy(), axis=1)  # each order's ranking of the methods
    top = np.isclose(table.to_numpy(), table.min(axis=1).to_numpy()[:, None])
    if best is None or best not in table.columns:
        best = str(table.columns[int(np.argmax(top.sum(axis=0)))]) if best is None else None
    best_orders = int(top[:, list(table.columns).index(best)].sum()) if best is not None else 0
    return OrderAgreement(
        ranks=table, kendall_w=kendall_w(within), best=best, best_orders=best_orders
    )


def order_agreement_by_dataset(
    results: Iterable[RunResult],
    by: str = "detector",
    metric: str = DEFAULT_METRIC,
    base_metric: str = DEFAULT_BASE_METRIC,
    best: str | None = None,
) -> dict[str, OrderAgreement]:
    """:func:`order_agreement` within each dataset (over its own concept orders), for the datasets
    run in at least two orders: whether a ranking survives the order on *that* data, which the
    statistics across datasets cannot say (its orders are one block there).

    >>> cfg = lambda o: {"dataset": {"params": {"order": o}}}
    >>> runs = [RunResult(f"d[order={o}]", "s", "naive", det, 0, concepts=c, order=o, config=cfg(o),
    ...                   metrics={"roc_auc": {"continual_average": v}})
    ...         for o, c, det, v in [("given", ("A", "B"), "x", 0.9), ("given", ("A", "B"), "y", 0.7),
    ...                              ("random", ("B", "A"), "x", 0.8), ("random", ("B", "A"), "y", 0.6)]]
    >>> a = order_agreement_by_dataset(runs)["d"]
    >>> a.kendall_w, a.best, a.best_orders, a.n_orders
    (1.0, 'x', 2, 2)
    """
    parts: dict[str, list[RunResult]] = {}
    for r in results:
        if r.ok:
            parts.setdefault(dataset_of(r), []).append(r)
    found = {d: order_agreement(rs, by, metric, base_metric, best=best) for d, rs in parts.items()}
    return {d: a for d, a in found.items() if a is not None}
