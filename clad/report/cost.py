"""What each run cost: fit and score seconds per training step, peak memory and training rows kept.

Every run records the seconds its strategy spent learning and scoring at each step
(``RunResult.timings["fit"]`` / ``["score"]``), the training rows it kept after each step
(``memory_rows``) and its peak memory (``peak_memory``, the rise of the process's resident set
size above its start, see :mod:`clad.core.memory`). :data:`COST` declares the per-run values shown
(name -> label and how a run gives it); :func:`cost_table` describes them over seeds per
configuration (as :func:`clad.report.describe.describe`), the leaderboard adds them as columns and
:func:`cost_section` draws them. Lower is better for all of them; they are measurements of one
machine at one time, not properties of the method: compare them within one results folder.

>>> from clad.results.record import RunResult
>>> r = RunResult("d", "s", "naive", "if", 0, timings={"fit": [0.5, 1.5], "score": [0.25, 0.25]},
...               memory_rows=(100, 300), peak_memory=2_500_000)
>>> [cost_value(r, name) for name in COST]
[1.0, 0.25, 2.5, 300.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable


import numpy as np
import pandas as pd

from ..results.record import RunResult
from .charts import base_spec, config_label, json_number, order_by
from .describe import CONFIG_KEYS, STATS, describe_each, group_runs, stats_at

__all__ = ["Cost", "COST", "cost_value", "cost_table", "cost_chart", "cost_section"]


def _mean(values) -> float:
    values = [float(v) for v in values or () if v is not None]
    return float(np.mean(values)) if values else float("nan")


@dataclass(frozen=True)
class Cost:
    """One cost column: its label, the value a run gives (NaN when the run did not record it) and
    the range its values can take (seconds, bytes and rows are never negative)."""

    label: str
    value: Callable[[RunResult], float]
    description: str
    bounds: tuple[float, float] = (0.0, float("inf"))


#: the cost columns of the leaderboard, in order (all: lower is better)
COST: dict[str, Cost] = {
    "fit_seconds": Cost(
        "fit s/step",
        lambda r: _mean(r.timings.get("fit")),
        "seconds the strategy spent learning, mean over the training steps",
    ),
    "score_seconds": Cost(
        "score s/step",
        lambda r: _mean(r.timings.get("score")),
        "seconds spent scoring the test concepts, mean over the training steps",
    ),
    "peak_memory_mb": Cost(
        "peak MB",
        lambda r: float("nan") if r.peak_memory is None else r.peak_memory / 1e6,
        "peak memory of the run: rise of the process's resident set size above its start, MB",
    ),
    "memory_rows": Cost(
        "memory rows",
        lambda r: float(max(r.memory_rows)) if r.memory_rows else float("nan"),
        "training rows the strategy kept, largest over the steps",
    ),
}


def cost_value(r: RunResult, name: str) -> float:
    """The value of cost column ``name`` of run ``r`` (NaN when not recorded)."""
    return float(COST[name].value(r))


def cost_columns(runs: list[RunResult]) -> dict[str, float]:
    """``{name_mean, name_std, name_n, name_ci_low, name_ci_high}`` of every cost over ``runs``."""
    # one row of values over the runs per cost, described at once (the numbers of describe, bit for bit)
    values = np.array([[cost_value(r, name) for r in runs] for name in COST], dtype=float).reshape(
        len(COST), len(runs)
    )
    d = describe_each(
        values, [c.bounds[0] for c in COST.values()], [c.bounds[1] for c in COST.values()]
    )
    return {f"{name}_{s}": v for k, name in enumerate(COST) for s, v in stats_at(d, k).items()}


def cost_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """One row per configuration (dataset, scenario, strategy, detector): ``runs`` and every
    :data:`COST` column described over seeds (``_mean``, ``_std``, ``_n``, ``_ci_low``, ``_ci_high``)."""
    rows = [
        {**dict(zip(CONFIG_KEYS, key)), "runs": len(runs), **cost_columns(runs)}
        for key, runs in group_runs(results).items()
    ]
    return pd.DataFrame(
        rows, columns=[*CONFIG_KEYS, "runs", *[f"{n}_{s}" for n in COST for s in STATS]]
    )


def _cost_values(table: pd.DataFrame, labels: list[str]) -> tuple[list[dict], list[dict]]:
    """The rows of a cost figure: fit and score seconds per configuration (with the total written
    beside the bar), and its peak memory."""
    seconds, memory = [], []
    for label, row in zip(labels, table.itertuples(index=False)):
        fit, score = json_number(row.fit_seconds_mean), json_number(row.score_seconds_mean)
        total = (fit or 0.0) + (score or 0.0)
        for part, v, sd in (
            ("fit", fit, row.fit_seconds_std),
            ("score", score, row.score_seconds_std),
        ):
            seconds.append(
                {
                    "config": label,
                    "part": part,
                    "seconds": v,
                    "std": json_number(sd),
                    "total": f"{total:.3g} s" if fit is not None or score is not None else "n/a",
                }
            )
        peak = json_number(row.peak_memory_mb_mean)
        memory.append(
            {
                "config": label,
                "mb": peak,
                "std": json_number(row.peak_memory_mb_std),
                "text": "n/a" if peak is None else f"{peak:.3g} MB",
            }
        )
    return seconds, memory


def _seconds_panel(seconds: list[dict], y: dict, height: int, colour: dict) -> dict:
    """Fit and score seconds per training step, stacked, the total beside each bar."""
    return {
        "data": {"values": seconds},
        "width": 300,
        "height": height,
        "layer": [
            {
                "mark": {"type": "bar"},
                "encoding": {
                    "y": y,
                    "x": {
                        "field": "seconds",
                        "type": "quantitative",
                        "stack": "zero",
                        "title": "seconds per training step (mean over steps and seeds)",
                    },
                    "color": colour,
                    "order": {"field": "part"},
                    "tooltip": [
                        {"field": "config", "title": "strategy + detector"},
                        {"field": "part"},
                        {"field": "seconds", "format": ".4g"},
                        {"field": "std", "title": "std over seeds", "format": ".3g"},
                    ],
                },
            },
            {
                "transform": [
                    {
                        "joinaggregate": [{"op": "sum", "field": "seconds", "as": "end"}],
                        "groupby": ["config"],
                    },
                    {"filter": "datum.part === 'score'"},
                ],
                "mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 10},
                "encoding": {
                    "y": y,
                    "x": {"field": "end", "type": "quantitative"},
                    "text": {"field": "total"},
                },
            },
        ],
    }


def _memory_panel(memory: list[dict], y: dict, height: int) -> dict:
    """Peak memory per configuration, the value beside each bar."""
    return {
        "data": {"values": memory},
        "width": 220,
        "height": height,
        "layer": [
            {
                "mark": {"type": "bar", "color": "#2ca02c"},
                "encoding": {
                    "y": {**y, "axis": None},
                    "x": {
                        "field": "mb",
                        "type": "quantitative",
                        "title": "peak memory, MB (rise above the run's start)",
                    },
                    "tooltip": [
                        {"field": "config", "title": "strategy + detector"},
                        {"field": "mb", "title": "MB", "format": ".4g"},
                        {"field": "std", "title": "std over seeds", "format": ".3g"},
                    ],
                },
            },
            {
                "mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 10},
                "encoding": {
                    "y": {**y, "axis": None},
                    "x": {"field": "mb", "type": "quantitative"},
                    "text": {"field": "text"},
                },
            },
        ],
    }


def cost_chart(table: pd.DataFrame, title: str) -> tuple[dict, int]:
    """Cost of the configurations of one dataset and scenario (rows of
    :func:`clad.report.cost.cost_table`): fit and score seconds per training step stacked (left)
    and peak memory in MB (right), one horizontal bar per strategy + detector, mean over seeds with
    the value beside each bar."""
    labels = [config_label(s, d) for s, d in zip(table["strategy"], table["detector"])]
    seconds, memory = _cost_values(table, labels)
    order_by(memory, "config", labels, "ci")
    y = {
        "field": "config",
        "type": "nominal",
        "sort": order_by(seconds, "config", labels, "ci"),
        "axis": {"title": "strategy + detector", "labelLimit": 260},
    }
    height = max(40, 18 * len(labels))
    part_colour = {
        "field": "part",
        "type": "nominal",
        "title": None,
        "scale": {"domain": ["fit", "score"], "range": ["#1f77b4", "#ff7f0e"]},
        "legend": {"orient": "top"},
    }
    left = _seconds_panel(seconds, y, height, part_colour)
    right = _memory_panel(memory, y, height)
    spec = {
        **base_spec(title),
        "hconcat": [left, right],
        "spacing": 60,
        "resolve": {"scale": {"color": "independent"}},
    }
    return spec, int(120 + height + 40)


def cost_section(results: Iterable[RunResult], figs) -> str | None:
    """The report's cost section: one :func:`cost_chart` per dataset x scenario (None when no run
    recorded a cost)."""
    from . import html as H

    table = cost_table(results)
    if table.empty or not table[[f"{n}_mean" for n in COST]].notna().any().any():
        return None
    out = [
        "<p class='legend'>Cost of each configuration, measured while it ran (one machine, one time: compare "
        "within this report). Left: seconds per training step spent learning (fit) and scoring the test concepts "
        "(score), stacked; right: peak memory, the rise of the process's resident set size above its value at "
        "the run's start (memory an earlier run of the same process freed can be reused without showing). Mean "
        "over seeds (hover a bar for its std over seeds); the table above gives the numbers, with the training rows "
        "kept.</p>"
    ]
    figures = []
    for (dataset, scenario), part in table.groupby(["dataset", "scenario"], sort=False):
        spec, height = cost_chart(part, f"Cost of {dataset} / {scenario}")
        description = f"cost {dataset} / {scenario}"
        figures.append(figs.chart(spec, height, "Cost", description, "cost", dataset, scenario))
    return out[0] + H.figure_grid(figures)
