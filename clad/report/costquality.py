"""Who wins at equal compute: each configuration's quality against its cost, the Pareto front marked.

Quality is a scalar metric's mean over blocks (by default the continual average), cost the seconds
per training step spent fitting and scoring (mean over seeds and blocks); a configuration is on the
*Pareto front* when no other is at least as good on both and better on one; the figure is
:func:`clad.report.charts.cost_quality_chart`. Only configurations
with a value in every block are placed (as in :mod:`clad.report.ranking`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["pareto_front", "cost_quality_table"]


def pareto_front(cost, quality, higher_is_better: bool = True) -> np.ndarray:
    """Whether each point is on the Pareto front of low ``cost`` and good ``quality`` (NaN points never).

    >>> pareto_front([1.0, 2.0, 3.0, 2.5], [0.5, 0.8, 0.7, 0.9]).tolist()
    [True, True, False, True]
    """
    c = np.asarray(cost, dtype=np.float64)
    q = np.asarray(quality, dtype=np.float64) * (1 if higher_is_better else -1)
    ok = ~(np.isnan(c) | np.isnan(q))
    out = np.zeros(len(c), dtype=bool)
    for i in np.flatnonzero(ok):
        others = ok & (c <= c[i]) & (q >= q[i]) & ((c < c[i]) | (q > q[i]))
        out[i] = not others.any()
    return out


def cost_quality_table(
    lb: pd.DataFrame, metric: str, base_metric: str, higher_is_better: bool = True
) -> pd.DataFrame:
    """Per scenario and configuration (rows of a leaderboard of one base metric): ``quality`` (mean
    over blocks of ``metric``), ``seconds`` (fit + score seconds per step, mean over blocks),
    ``blocks`` and ``pareto``; configurations missing a block are left out."""
    part = lb[lb["base_metric"] == base_metric]
    cols = ["scenario", "configuration", "quality", "seconds", "blocks", "pareto"]
    if part.empty or f"{metric}_mean" not in part:
        return pd.DataFrame(columns=cols)
    blocks = part.groupby("scenario", sort=False)["dataset"].nunique()
    rows = []
    for (scenario, strategy, detector), sub in part.groupby(
        ["scenario", "strategy", "detector"], sort=False
    ):
        q = sub[f"{metric}_mean"].to_numpy(float)
        t = (
            sub["fit_seconds_mean"].to_numpy(float) + sub["score_seconds_mean"].to_numpy(float)
            if "fit_seconds_mean" in sub
            else np.full(len(sub), np.nan)
        )
        if sub["dataset"].nunique() < blocks[scenario] or np.isnan(q).any():
            continue
        rows.append(
            {
                "scenario": scenario,
                "configuration": f"{strategy} + {detector}",
                "quality": float(q.mean()),
                "seconds": float(np.nanmean(t)) if np.isfinite(t).any() else float("nan"),
                "blocks": int(sub["dataset"].nunique()),
                "pareto": False,
            }
        )
    table = pd.DataFrame(rows, columns=cols)
    for scenario, sub in table.groupby("scenario", sort=False):
        table.loc[sub.index, "pareto"] = pareto_front(
            sub["seconds"], sub["quality"], higher_is_better
        )
    return table
