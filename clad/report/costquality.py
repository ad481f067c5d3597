"""Who wins at equal compute: each configuration's quality against its cost, the Pareto front marked.

Quality is a scalar metric's mean over blocks (by default the continual average), cost the seconds
per training step spent fitting and scoring (mean over seeds and blocks); a configuration is on the
*Pareto front* when no other is at least as good on both and better on one. Only configurations
with a value in every block are placed (as in :mod:`clad.report.ranking`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["pareto_front", "cost_quality_table", "cost_quality_figure"]


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


def cost_quality_table(lb: pd.DataFrame, metric: str, base_metric: str, higher_is_better: bool = True) -> pd.DataFrame:
    """Per scenario and configuration (rows of a leaderboard of one base metric): ``quality`` (mean
    over blocks of ``metric``), ``seconds`` (fit + score seconds per step, mean over blocks),
    ``blocks`` and ``pareto``; configurations missing a block are left out."""
    part = lb[lb["base_metric"] == base_metric]
    cols = ["scenario", "configuration", "quality", "seconds", "blocks", "pareto"]
    if part.empty or f"{metric}_mean" not in part:
        return pd.DataFrame(columns=cols)
    blocks = part.groupby("scenario", sort=False)["dataset"].nunique()
    rows = []
    for (scenario, strategy, detector), sub in part.groupby(["scenario", "strategy", "detector"], sort=False):
        q = sub[f"{metric}_mean"].to_numpy(float)
        t = (sub["fit_seconds_mean"].to_numpy(float) + sub["score_seconds_mean"].to_numpy(float)
             if "fit_seconds_mean" in sub else np.full(len(sub), np.nan))
        if sub["dataset"].nunique() < blocks[scenario] or np.isnan(q).any():
            continue
        rows.append({"scenario": scenario, "configuration": f"{strategy} + {detector}", "quality": float(q.mean()),
                     "seconds": float(np.nanmean(t)) if np.isfinite(t).any() else float("nan"),
                     "blocks": int(sub["dataset"].nunique()), "pareto": False})
    table = pd.DataFrame(rows, columns=cols)
    for scenario, sub in table.groupby("scenario", sort=False):
        table.loc[sub.index, "pareto"] = pareto_front(sub["seconds"], sub["quality"], higher_is_better)
    return table


def cost_quality_figure(table: pd.DataFrame, ylabel: str, higher_is_better: bool = True):
    """One panel per scenario: quality against seconds per step (log scale), one point per
    configuration, the Pareto front joined and its configurations named."""
    from .canvas import FONT, new_figure, suptitle

    scenarios = list(dict.fromkeys(table["scenario"]))
    n = max(1, len(scenarios))
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig = new_figure((min(12.5, 4.3 * cols + 0.6), 3.6 * rows + 0.6))
    suptitle(fig, f"Quality against compute: {ylabel} (mean over blocks) and fit + score seconds per training step; "
                  "the Pareto front (no configuration both cheaper and better) joined and named")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, scenario in zip(axes, scenarios):
        sub = table[table["scenario"] == scenario]
        front = sub[sub["pareto"]].sort_values("seconds")
        ax.scatter(sub["seconds"], sub["quality"], s=14, color="tab:gray", alpha=0.6, label="configuration")
        ax.plot(front["seconds"], front["quality"], "-o", color="tab:red", ms=5, lw=1.2, label="Pareto front")
        for _, r in front.head(8).iterrows():
            ax.annotate(r["configuration"], (r["seconds"], r["quality"]), xytext=(4, 3), textcoords="offset points",
                        fontsize=FONT["tick"] - 1)
        if (sub["seconds"] > 0).all() and len(sub):
            ax.set_xscale("log")
        ax.set_title(str(scenario), fontsize=FONT["title"])
        ax.set_xlabel("seconds per training step (fit + score)", fontsize=FONT["label"])
        ax.set_ylabel(ylabel, fontsize=FONT["label"])
        ax.tick_params(labelsize=FONT["tick"])
        ax.grid(alpha=0.3)
        ax.margins(x=0.15, y=0.1)
    for ax in axes[len(scenarios):]:
        ax.remove()
    axes[0].legend(fontsize=FONT["tick"], loc="best")
    return fig


def draw_cost_quality(table: pd.DataFrame, ylabel: str, higher_is_better: bool) -> list[list]:
    """The planned drawing of :func:`cost_quality_figure`."""
    return [[cost_quality_figure(table, ylabel, higher_is_better)]]
