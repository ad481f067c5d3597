"""Who wins at equal compute: each configuration's quality against its cost, the Pareto front marked.

Quality is a scalar metric's mean over blocks (by default the continual average), cost the seconds
per training step spent fitting and scoring (mean over seeds and blocks); a configuration is on the
*Pareto front* when no other is at least as good on both and better on one; the figure is
:func:`cost_quality_chart`. Only configurations
with a value in every block are placed (as in :mod:`clad.report.ranking`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .charts import WIDTH, base_spec, json_number, order_by

__all__ = ["pareto_front", "cost_quality_table", "cost_quality_chart"]


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
        n = int(sub["dataset"].nunique())
        if n < blocks[scenario] or np.isnan(q).any():
            continue
        seconds = float(np.nanmean(t)) if np.isfinite(t).any() else float("nan")
        rows.append([scenario, f"{strategy} + {detector}", float(q.mean()), seconds, n, False])
    table = pd.DataFrame(rows, columns=cols)
    for scenario, sub in table.groupby("scenario", sort=False):
        table.loc[sub.index, "pareto"] = pareto_front(
            sub["seconds"], sub["quality"], higher_is_better
        )
    return table


def _cost_quality_values(table: pd.DataFrame, scenarios: list) -> list[dict]:
    """One row per configuration and scenario; ``name`` is its label where it is one of the first
    eight configurations of its scenario's Pareto front (by seconds), else empty."""
    values = [
        {
            "scenario": row.scenario,
            "configuration": row.configuration,
            "quality": json_number(row.quality),
            "seconds": json_number(row.seconds),
            "blocks": int(row.blocks),
            "pareto": bool(row.pareto),
        }
        for row in table.itertuples(index=False)
    ]
    named = set()
    for scenario in scenarios:
        front = sorted(
            (
                v
                for v in values
                if v["scenario"] == scenario and v["pareto"] and v["seconds"] is not None
            ),
            key=lambda v: v["seconds"],
        )
        named.update(id(v) for v in front[:8])
    for v in values:
        v["name"] = v["configuration"] if id(v) in named else ""
    return values


def cost_quality_chart(table: pd.DataFrame, label: str) -> tuple[dict, int]:
    """Quality against compute (rows of :func:`clad.report.costquality.cost_quality_table`): one
    panel per scenario, one grey point per configuration at its fit + score seconds per training
    step (log scale when every value is positive) and its quality, the Pareto front joined in red
    and its first eight configurations named."""
    scenarios = list(dict.fromkeys(table["scenario"]))
    values = _cost_quality_values(table, scenarios)
    seconds = [v["seconds"] for v in values if v["seconds"] is not None]
    log = bool(seconds) and min(seconds) > 0
    x = {
        "field": "seconds",
        "type": "quantitative",
        "title": "seconds per training step (fit + score)",
        "scale": {"type": "log"} if log else {"zero": False},
        "axis": {"tickCount": 5, "format": "~g"},
    }
    y = {"field": "quality", "type": "quantitative", "title": label, "scale": {"zero": False}}
    tooltip = [
        {"field": "configuration"},
        {"field": "quality", "title": label, "format": ".4f"},
        {"field": "seconds", "title": "seconds per step", "format": ".3g"},
        {"field": "blocks"},
        {"field": "pareto", "title": "on the Pareto front"},
    ]
    columns = min(max(1, len(scenarios)), 3)
    width = int(min(420, (WIDTH - 60) / columns - 70))
    front = {"filter": "datum.pareto && datum.seconds !== null"}
    spec = {
        **base_spec(
            f"Quality against compute: {label} (mean over blocks) and fit + score seconds per training step",
            "red: the Pareto front (no configuration both cheaper and better), joined and named",
        ),
        "data": {"values": values},
        "facet": {
            "field": "scenario",
            "type": "nominal",
            "sort": order_by(values, "scenario", scenarios, "si"),
            "title": None,
        },
        "columns": columns,
        "resolve": {"scale": {"x": "independent"}},
        "spec": {
            "width": width,
            "height": 240,
            "encoding": {"x": x, "y": y},
            "layer": [
                {
                    "mark": {
                        "type": "point",
                        "filled": True,
                        "color": "#7f7f7f",
                        "opacity": 0.6,
                        "size": 30,
                    },
                    "encoding": {"tooltip": tooltip},
                },
                {
                    "transform": [front],
                    "mark": {"type": "line", "color": "#d62728", "point": {"color": "#d62728"}},
                    "encoding": {"order": {"field": "seconds"}, "tooltip": tooltip},
                },
                {
                    "transform": [front],
                    "mark": {
                        "type": "text",
                        "align": "left",
                        "dx": 5,
                        "dy": -5,
                        "fontSize": 9,
                        "limit": 220,
                    },
                    "encoding": {"text": {"field": "name"}},
                },
            ],
        },
    }
    rows = math.ceil(max(1, len(scenarios)) / columns)
    return spec, int(80 + rows * 310)
