"""The block pages' figures as Vega-Lite specifications, drawn by the browser.

A block page of a large grid holds dozens of figures (R heatmaps, learning curves, per-concept
forgetting, cost); drawing them as images costs more than the grid's own runs. Here each figure is
a Vega-Lite specification (a JSON document: its data and how to draw it) that the page's browser
draws when the figure scrolls into view, with the Vega libraries shipped in ``assets/`` (so the
pages work offline and from a file). The specification is cheap to write, its tooltips give every
value, and the figure's menu saves it as SVG or PNG.

Each function takes the same tables as the matplotlib figures of :mod:`clad.report.plots` and
returns ``(spec, height)``: the specification (a dict, JSON-ready) and the figure's height in
pixels, which the page reserves before the figure is drawn.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..metrics.base import base_metric_shown

__all__ = ["curves_chart", "forgetting_chart", "PALETTE", "WIDTH", "SCHEMA"]

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
#: widest figure (px): the page's text column, less the room of the figure's menu button
WIDTH = 1080
#: the configurations' colours (matplotlib's tab10, then the light tab20 shades), one per label in order
PALETTE = tuple(
    "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf "
    "#aec7e8 #ffbb78 #98df8a #ff9896 #c5b0d5 #c49c94 #f7b6d2 #c7c7c7 #dbdb8d #9edae5".split()
)
#: colour of an undefined cell
NA_COLOUR = "#d9d9d9"
#: most panels of a heatmap figure whose cells carry their numbers (beyond, colour and tooltips)
MAX_ANNOTATED_PANELS = 24
#: tallest heatmap figure (px) whose cells carry their numbers: a taller one is drawn with small
#: colour-only cells (values in the tooltips), so that a block page of many base metrics and
#: configurations keeps its height budget with every figure open
MAX_ANNOTATED_HEIGHT = 1_500
#: a colour-only heatmap cell (px) when its panels would wrap into more than three rows (else 14)
SMALL_CELL = 10.0
CHART_CONFIG = {
    "view": {"stroke": None},
    "axis": {"labelFontSize": 10, "titleFontSize": 11},
    "header": {"labelFontSize": 11, "titleFontSize": 11},
    "legend": {"labelFontSize": 10, "titleFontSize": 11, "labelLimit": 360},
}


def json_number(v) -> float | None:
    """A JSON number, or None for NaN and infinities."""
    v = float(v)
    return v if math.isfinite(v) else None


def config_label(strategy: str, detector: str) -> str:
    return f"{strategy} + {detector}"


def band(m: float | None, s: float | None) -> dict:
    """A mean and its std as figure data, with the ± std band (None where either is undefined)."""
    none = m is None or s is None
    return {"mean": m, "std": s, "lo": None if none else m - s, "hi": None if none else m + s}


def order_by(values: list[dict], field: str, order: Sequence, key: str) -> dict:
    """Give each of ``values`` its ``field``'s position in ``order`` as ``key``; return the sort
    by it. Text from a spec reaches a figure as data only: a list of labels in a Vega-Lite sort
    becomes part of a Vega expression, where a label such as ``if`` or a line separator breaks it.

    >>> v = [{"c": "b"}, {"c": "a"}]
    >>> order_by(v, "c", ["a", "b"], "ci"), v
    ({'field': 'ci', 'op': 'min'}, [{'c': 'b', 'ci': 1}, {'c': 'a', 'ci': 0}])
    """
    position = {label: k for k, label in enumerate(order)}
    for v in values:
        v[key] = position.get(v[field], len(position))
    return {"field": key, "op": "min"}


def lookup_labels(key: str, table: Sequence[dict], fields: Sequence[str]) -> dict:
    """A transform adding ``fields`` to every datum from the row of ``table`` with its ``key``:
    labels carried once, as data (never inside an expression)."""
    return {
        "lookup": key,
        "from": {"data": {"values": list(table)}, "key": key, "fields": list(fields)},
    }


def colour_scale(labels: Sequence[str]) -> dict:
    """A colour scale: one colour per label in order (the palette repeats past 20 labels)."""
    return {
        "domain": list(labels),
        "range": [PALETTE[k % len(PALETTE)] for k in range(len(labels))],
    }


def text_px(labels: Sequence[str], size: float = 10.0) -> float:
    """Roughly the width (px) of the longest label at ``size`` px."""
    return max((len(str(s)) for s in labels), default=0) * size * 0.58


def base_spec(title: str, subtitle: str | None = None) -> dict:
    t: dict = {"text": title, "anchor": "start", "fontSize": 13, "limit": WIDTH}
    if subtitle:
        t["subtitle"] = subtitle
    return {"$schema": SCHEMA, "title": t, "config": CHART_CONFIG}


def _step_values(part: pd.DataFrame) -> tuple[list[int], dict[int, str]]:
    """The training steps in order, and each one's label (``step: concept learned``)."""
    # a step's last row: same concept
    first = dict(zip(part["step"].astype(int).tolist(), part["concept"].tolist()))
    steps = sorted(first)
    return steps, {s: f"{s}: {first[s]}" for s in steps}


def _curves_values(curves: pd.DataFrame, panel: dict, step_label: dict) -> list[dict]:
    """One row per point of the learning curves, then the chance curve's (``config`` "chance":
    the mean chance level per panel and step)."""
    columns = (curves[c].tolist() for c in ("strategy", "detector", "kind", "step", "mean", "std"))
    values = [
        {
            "config": config_label(strategy, detector),
            "panel": panel.get(kind, kind),
            "step": step_label[int(step)],
            "st": int(step),
            **band(json_number(m), json_number(s)),
        }
        for strategy, detector, kind, step, m, s in zip(*columns)
    ]
    if "chance" in curves.columns and curves["chance"].notna().any():
        ref: dict[tuple, list[float]] = {}
        for kind, step, c in zip(
            curves["kind"].tolist(), curves["step"].tolist(), curves["chance"].tolist()
        ):
            if c is not None and math.isfinite(c):
                ref.setdefault((kind, int(step)), []).append(c)
        values += [
            {
                "config": "chance",
                "panel": panel.get(k, k),
                "step": step_label[st],
                "st": st,
                "mean": json_number(np.mean(v)),
            }
            for (k, st), v in sorted(ref.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))
        ]
    return values


def _curves_layers(values: list[dict], colour: dict, tooltip: list, base: str) -> list[dict]:
    """The ± std bands (where there is a std), the mean lines (``base``: the base metric shown) and
    the dashed chance line."""
    not_chance = {"filter": "datum.config !== 'chance'"}
    return [
        *(
            [
                {
                    "transform": [not_chance, {"filter": "datum.lo !== null"}],
                    "mark": {"type": "area", "opacity": 0.15},
                    "encoding": {
                        "y": {"field": "lo", "type": "quantitative"},
                        "y2": {"field": "hi"},
                        "color": colour,  # the lines' legend: merged into one
                    },
                }
            ]
            if any(v.get("lo") is not None for v in values)
            else []
        ),
        {
            "transform": [not_chance],
            "mark": {"type": "line", "point": {"size": 20}, "strokeWidth": 1.5},
            "encoding": {
                "y": {
                    "field": "mean",
                    "type": "quantitative",
                    "title": f"{base}, mean",
                    "scale": {"zero": False},
                },
                "color": colour,
                "tooltip": tooltip,
            },
        },
        {
            "transform": [{"filter": "datum.config === 'chance'"}],
            "mark": {"type": "line", "strokeDash": [5, 3], "strokeWidth": 1},
            "encoding": {
                "y": {"field": "mean", "type": "quantitative"},
                "color": colour,
                "tooltip": tooltip[:3],
            },
        },
    ]


def curves_chart(curves: pd.DataFrame, title: str, height: int = 220) -> tuple[dict, int]:
    """Learning curves of one dataset, scenario and base metric (rows of
    :func:`clad.report.figure_data.learning_curves`): the mean per step over the concepts seen so far
    and over all concepts, side by side, one line per strategy + detector with a ± std band over
    seeds; dashed grey: chance. ``height``: each panel's (px)."""
    labels = list(
        dict.fromkeys(config_label(s, d) for s, d in zip(curves["strategy"], curves["detector"]))
    )
    steps, step_label = _step_values(curves)
    base = base_metric_shown(curves["base_metric"].iloc[0]) if not curves.empty else ""
    panel = {"seen": "average over concepts seen so far", "all": "average over all concepts"}
    values = _curves_values(curves, panel, step_label)
    colours = colour_scale(labels)
    colours["domain"].append("chance")
    colours["range"].append("#555555")
    x = {
        "field": "step",
        "type": "ordinal",
        "sort": {"field": "st", "op": "min"},
        "axis": {"title": "training step: concept learned", "labelAngle": -40, "labelLimit": 140},
    }
    colour = {
        "field": "config",
        "type": "nominal",
        "scale": colours,
        "title": "strategy + detector",
        # the band's opacity would fade the merged legend's swatches: drawn as solid lines
        "legend": {
            "orient": "bottom",
            "columns": 3,
            "symbolType": "stroke",
            "symbolOpacity": 1,
            "symbolStrokeWidth": 2,
        },
    }
    tooltip = [
        {"field": "config", "title": "strategy + detector"},
        {"field": "step", "title": "training step"},
        {"field": "mean", "format": ".4f"},
        {"field": "std", "title": "std over seeds", "format": ".4f"},
    ]
    width = max(260, min(480, 46 * len(steps)))
    spec = {
        **base_spec(title),
        "data": {"values": values},
        "facet": {
            "field": "panel",
            "type": "nominal",
            "sort": order_by(values, "panel", list(panel.values()), "pi"),
            "title": None,
        },
        "columns": 2 if 2 * width + 120 <= WIDTH else 1,
        "spec": {
            "width": width,
            "height": height,
            "encoding": {"x": x},
            "layer": _curves_layers(values, colour, tooltip, base),
        },
    }
    rows = 1 if 2 * width + 120 <= WIDTH else 2
    return spec, int(80 + rows * (height + 110) + 22 * math.ceil((len(labels) + 1) / 3))


def _forgetting_values(table: pd.DataFrame) -> list[dict]:
    """One row per bar of a forgetting figure; ``zero`` marks a value too small to show as a bar
    (under 1 % of the axis)."""
    means = table["mean"].to_numpy(float)
    finite = means[np.isfinite(means)]
    span = float(np.ptp(np.append(finite, 0.0))) if finite.size else 0.0
    small = max(span, 0.05) * 0.01
    return [
        {
            "config": config_label(row.strategy, row.detector),
            "concept": row.concept,
            "metric": base_metric_shown(row.base_metric),
            **band(json_number(row.mean), json_number(row.std)),
            "zero": bool(math.isfinite(row.mean) and abs(row.mean) < small),
        }
        for row in table.itertuples(index=False)
    ]


def _forgetting_layers(values: list[dict], colour: dict, tooltip: list) -> list[dict]:
    """The bars, their ± std error bars (where there is a std), the zero marks and the zero line."""
    return [
        {
            "mark": {"type": "bar"},
            "encoding": {
                "y": {
                    "field": "mean",
                    "type": "quantitative",
                    "title": "forgetting (peak − final)",
                },
                "color": colour,
                "tooltip": tooltip,
            },
        },
        *(
            [
                {
                    "transform": [{"filter": "datum.lo !== null"}],
                    "mark": {"type": "rule", "strokeWidth": 0.8},
                    "encoding": {
                        "y": {"field": "lo", "type": "quantitative"},
                        "y2": {"field": "hi"},
                        "color": {"value": "black"},
                    },
                }
            ]
            if any(v["lo"] is not None for v in values)
            else []
        ),
        {
            "transform": [{"filter": "datum.zero"}],
            "mark": {
                "type": "point",
                "shape": "diamond",
                "filled": True,
                "stroke": "black",
                "strokeWidth": 0.5,
                "size": 40,
            },
            "encoding": {
                "y": {"datum": 0, "type": "quantitative"},
                "color": colour,
                "tooltip": tooltip,
            },
        },
        {
            "mark": {"type": "rule", "color": "black", "strokeWidth": 0.8},
            "encoding": {"y": {"datum": 0, "type": "quantitative"}},
        },
    ]


def forgetting_chart(table: pd.DataFrame, title: str) -> tuple[dict, int]:
    """Per-concept forgetting (peak − final) of one dataset and scenario (rows of
    :func:`clad.report.figure_data.forgetting_table`): one panel per base metric, test concepts on x,
    one bar per strategy + detector with ± std error bars; a diamond on the zero line marks a value
    too small to show as a bar."""
    labels = list(
        dict.fromkeys(config_label(s, d) for s, d in zip(table["strategy"], table["detector"]))
    )
    concepts = list(dict.fromkeys(table["concept"]))
    values = _forgetting_values(table)
    colour = {
        "field": "config",
        "type": "nominal",
        "scale": colour_scale(labels),
        "title": "strategy + detector",
        "legend": {"orient": "bottom", "columns": 3},
    }
    offset = {
        "field": "config",
        "type": "nominal",
        "sort": order_by(values, "config", labels, "ci"),
    }
    x = {
        "field": "concept",
        "type": "nominal",
        "sort": order_by(values, "concept", concepts, "ki"),
        "axis": {
            "title": "test concept",
            "labelAngle": -40 if text_px(concepts) > 40 else 0,
            "labelLimit": 140,
        },
    }
    tooltip = [
        {"field": "config", "title": "strategy + detector"},
        {"field": "concept", "title": "test concept"},
        {"field": "mean", "title": "forgetting (mean)", "format": ".4f"},
        {"field": "std", "title": "std over seeds", "format": ".4f"},
    ]
    width = max(300, min(WIDTH - 120, len(concepts) * max(40, 9 * len(labels) + 12)))
    metrics = list(dict.fromkeys(v["metric"] for v in values))
    # many base metrics: lower panels, the page stays within its budget
    row_h = 180 if len(metrics) <= 4 else 110
    spec = {
        **base_spec(title, "positive = forgotten; ◆ = zero"),
        "data": {"values": values},
        "facet": {
            "row": {
                "field": "metric",
                "type": "nominal",
                "sort": order_by(values, "metric", metrics, "mi"),
                "title": None,
            }
        },
        "spec": {
            "width": width,
            "height": row_h,
            "encoding": {"x": x, "xOffset": offset},
            "layer": _forgetting_layers(values, colour, tooltip),
        },
    }
    return spec, int(80 + len(metrics) * (row_h + 80) + 22 * math.ceil(len(labels) / 3))
