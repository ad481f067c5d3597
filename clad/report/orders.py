"""Order sensitivity: how much a configuration's metrics move when only the concept order changes.

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

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..results.record import RunResult
from ..metrics import get_metric
from ..metrics.cells import nanmean
from .aggregate import CONFIG_KEYS, by_order, group_runs, scalar_value

__all__ = ["order_sensitivity", "ORDER_METRICS"]

#: the metrics whose order sensitivity is reported by default
ORDER_METRICS = ("continual_average", "backward_transfer", "forward_transfer")


def order_sensitivity(results: Iterable[RunResult], metrics: Sequence[str] = ORDER_METRICS) -> pd.DataFrame:
    """One row per configuration and base metric with several concept orders (see the module)."""
    rows = []
    for key, runs in group_runs(results).items():
        orders = by_order(runs)
        if len(orders) < 2:
            continue
        for base in dict.fromkeys([*runs[0].R, *runs[0].metrics]):
            row = {**dict(zip(CONFIG_KEYS, key)), "base_metric": base, "orders": len(orders), "runs": len(runs)}
            for name in metrics:
                label = get_metric(name).label
                means = np.array([nanmean([scalar_value(r, base, name) for r in part]) for part in orders.values()])
                ok = means[~np.isnan(means)]
                row.update({f"{label}_orders": float(ok.size),
                            f"{label}_min": float(ok.min()) if ok.size else np.nan,
                            f"{label}_max": float(ok.max()) if ok.size else np.nan,
                            f"{label}_range": float(ok.max() - ok.min()) if ok.size else np.nan,
                            f"{label}_std": float(ok.std(ddof=1)) if ok.size > 1 else np.nan})
            rows.append(row)
    return pd.DataFrame(rows)
