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

import json
import math
import textwrap
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import CladValueError
from ..metrics.base import base_metric_shown

__all__ = [
    "heatmap_chart",
    "curves_chart",
    "forgetting_chart",
    "cost_chart",
    "cost_quality_chart",
    "cd_chart",
    "cd_significance",
    "cd_title",
    "cd_cliques",
    "PALETTE",
    "WIDTH",
    "SCHEMA",
]

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
#: widest figure (px): the page's text column, less the room of the figure's menu button
WIDTH = 1080
#: the configurations' colours (matplotlib's tab10, then the light tab20 shades), one per label in order
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
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
_CONFIG = {
    "view": {"stroke": None},
    "axis": {"labelFontSize": 10, "titleFontSize": 11},
    "header": {"labelFontSize": 11, "titleFontSize": 11},
    "legend": {"labelFontSize": 10, "titleFontSize": 11, "labelLimit": 360},
}


def _num(v) -> float | None:
    """A JSON number, or None for NaN and infinities."""
    v = float(v)
    return v if math.isfinite(v) else None


def _label(strategy: str, detector: str) -> str:
    return f"{strategy} + {detector}"


def _order(values: list[dict], field: str, order: Sequence, key: str) -> dict:
    """Give each of ``values`` its ``field``'s position in ``order`` as ``key``; return the sort
    by it. Text from a spec reaches a figure as data only: a list of labels in a Vega-Lite sort
    becomes part of a Vega expression, where a label such as ``if`` or a line separator breaks it.

    >>> v = [{"c": "b"}, {"c": "a"}]
    >>> _order(v, "c", ["a", "b"], "ci"), v
    ({'field': 'ci', 'op': 'min'}, [{'c': 'b', 'ci': 1}, {'c': 'a', 'ci': 0}])
    """
    position = {label: k for k, label in enumerate(order)}
    for v in values:
        v[key] = position.get(v[field], len(position))
    return {"field": key, "op": "min"}


def _lookup(key: str, table: Sequence[dict], fields: Sequence[str]) -> dict:
    """A transform adding ``fields`` to every datum from the row of ``table`` with its ``key``:
    labels carried once, as data (never inside an expression)."""
    return {
        "lookup": key,
        "from": {"data": {"values": list(table)}, "key": key, "fields": list(fields)},
    }


def _colours(labels: Sequence[str]) -> dict:
    """A colour scale: one colour per label in order (the palette repeats past 20 labels)."""
    return {
        "domain": list(labels),
        "range": [PALETTE[k % len(PALETTE)] for k in range(len(labels))],
    }


def _text_px(labels: Sequence[str], size: float = 10.0) -> float:
    """Roughly the width (px) of the longest label at ``size`` px."""
    return max((len(str(s)) for s in labels), default=0) * size * 0.58


def _base(title: str, subtitle: str | None = None) -> dict:
    t: dict = {"text": title, "anchor": "start", "fontSize": 13, "limit": WIDTH}
    if subtitle:
        t["subtitle"] = subtitle
    return {"$schema": SCHEMA, "title": t, "config": _CONFIG}


def heatmap_chart(
    items: Sequence, *, vmin: float = 0.0, vmax: float = 1.0, annotate: bool | None = None
) -> tuple[dict, int]:
    """Small multiples of R for the configurations of one dataset, scenario and base metric
    (:class:`clad.report.aggregate.HeatmapData`, one
    panel per strategy + detector, one colour scale): rows are training steps, columns test
    concepts, cells the mean over seeds (and ``± std`` with several). A black border marks the step
    where each concept was first learned; future cells (before it) are faded; a concept never
    learned has dashed borders; undefined cells are grey ``n/a``; a small circle marks a cell that
    cannot be told from chance. Numbers are written while there are at most
    :data:`MAX_ANNOTATED_PANELS` panels of at most 10 test concepts and 16 steps, and the figure
    stays within :data:`MAX_ANNOTATED_HEIGHT` px."""
    first = items[0]
    n_rows, n_cols = np.shape(first.mean)
    if annotate is None:
        if len(items) <= MAX_ANNOTATED_PANELS and n_cols <= 10 and n_rows <= 16:
            spec, height = heatmap_chart(items, vmin=vmin, vmax=vmax, annotate=True)
            if height <= MAX_ANNOTATED_HEIGHT:
                return spec, height
        annotate = False
    with_std = annotate and any(np.isfinite(np.asarray(h.std, float)).any() for h in items)
    rows = [f"{i}: {c}" for i, c in enumerate(first.rows)]
    cell_w = max(
        46.0 if annotate else 14.0, min(_text_px(first.cols) * 0.75, 60.0) if annotate else 14.0
    )
    cell_h = (32.0 if with_std else 20.0) if annotate else 14.0
    values = []
    panels = []
    states = ["learned", "learned here", "future", "never learned"]  # a cell's state by its code
    for h in items:
        p = len(panels)
        panels.append(_label(h.strategy, h.detector))
        mean, std, n = np.asarray(h.mean, float), np.asarray(h.std, float), np.asarray(h.n)
        chance = (
            np.asarray(h.at_chance, bool) if h.at_chance is not None else np.zeros(mean.shape, bool)
        )
        t = np.asarray(h.learned_at)[None, :]
        i = np.arange(mean.shape[0])[:, None]
        code = np.where(t < 0, 3, np.where(i == t, 1, np.where(i < t, 2, 0)))
        for (a, b), m in np.ndenumerate(
            mean
        ):  # a cell: short keys, its labels and text made by the browser
            cell = {"p": p, "i": a, "j": b, "n": int(n[a, b]), "k": int(code[a, b])}
            if math.isfinite(m):
                cell["m"] = round(float(m), 5)
            if math.isfinite(std[a, b]):
                cell["e"] = round(float(std[a, b]), 5)
            if chance[a, b]:
                cell["c"] = 1
            values.append(cell)
    span = (vmax - vmin) or 1.0
    strategies = list(dict.fromkeys(h.strategy for h in items))
    detectors = list(dict.fromkeys(h.detector for h in items))
    panel_rows = [
        {
            "p": k,
            "panel": panels[k],
            "s": h.strategy,
            "d": h.detector,
            "si": strategies.index(h.strategy),
            "di": detectors.index(h.detector),
        }
        for k, h in enumerate(items)
    ]
    derived = [
        _lookup("p", panel_rows, ("panel", "s", "d", "si", "di")),
        _lookup("i", [{"i": k, "step": r} for k, r in enumerate(rows)], ("step",)),
        _lookup("j", [{"j": k, "concept": str(c)} for k, c in enumerate(first.cols)], ("concept",)),
        {"calculate": f"{json.dumps(states)}[datum.k]", "as": "state"},
        {"calculate": "datum.m == null ? null : datum.m", "as": "mean"},
        {"calculate": "datum.e == null ? null : datum.e", "as": "std"},
        {"calculate": "datum.c ? 'yes' : 'no'", "as": "chance"},
        {
            "calculate": "datum.m == null ? 'n/a' : format(datum.m, '.2f') + (datum.e == null ? '' : "
            "'\\n±' + format(datum.e, '.2f'))",
            "as": "text",
        },
        {"calculate": f"datum.m != null && (datum.m - {vmin!r}) / {span!r} <= 0.6", "as": "light"},
    ]
    label_w = min(_text_px(rows), 180.0) + 40

    def layout(cell: float, title_room: float = 40) -> tuple[float, float, int]:
        """The panel's width, its title's width and the panels per row, for cells of ``cell`` px."""
        width = n_cols * cell
        title_w = min(_text_px(panels, 11), width + title_room)
        return (
            width,
            title_w,
            max(1, min(len(items), int((WIDTH - label_w - 90) // (max(width, title_w) + 18)))),
        )

    panel_w, head, columns = layout(cell_w)
    if (
        not annotate and math.ceil(len(items) / columns) > 3
    ):  # many colour-only panels: smaller cells,
        cell_w = cell_h = SMALL_CELL  # titles cut at the panel's width (the header's label limit)
        panel_w, head, columns = layout(cell_w, title_room=10)
    x_axis = {
        "title": "test concept",
        "labelAngle": -40 if _text_px(first.cols) > cell_w - 4 else 0,
        "labelLimit": 120,
    }
    encoding = {
        "x": {
            "field": "concept",
            "type": "ordinal",
            "sort": {"field": "j", "op": "min"},
            "axis": x_axis,
        },
        "y": {
            "field": "step",
            "type": "ordinal",
            "sort": {"field": "i", "op": "min"},
            "axis": {"title": None, "labelLimit": 180},
        },
    }
    tooltip = [
        {"field": "panel", "title": "configuration"},
        {"field": "step", "title": "training step"},
        {"field": "concept", "title": "test concept"},
        {
            "field": "mean",
            "title": f"{base_metric_shown(first.base_metric)} (mean)",
            "format": ".4f",
        },
        {"field": "std", "title": "std over seeds", "format": ".4f"},
        {"field": "n", "title": "seeds"},
        {"field": "state", "title": "cell"},
        {"field": "chance", "title": "cannot be told from chance"},
    ]
    layer = [
        {
            "mark": {"type": "rect", "color": NA_COLOUR}
        },  # under every cell: the undefined ones stay grey
        {
            "mark": {"type": "rect"},
            "encoding": {
                "color": {
                    "field": "mean",
                    "type": "quantitative",
                    "scale": {"scheme": "viridis", "domain": [vmin, vmax]},
                    "legend": {"title": base_metric_shown(first.base_metric), "orient": "right"},
                },
                "tooltip": tooltip,
            },
        },
        {
            "transform": [
                {"filter": "datum.state === 'future' || datum.state === 'never learned'"}
            ],
            "mark": {"type": "rect", "fill": "white", "fillOpacity": 0.45},
            "encoding": {"tooltip": tooltip},
        },
        {
            "transform": [{"filter": "datum.state === 'never learned'"}],
            "mark": {
                "type": "rect",
                "filled": False,
                "stroke": "#333333",
                "strokeWidth": 1,
                "strokeDash": [3, 2],
            },
        },
        {
            "transform": [{"filter": "datum.state === 'learned here'"}],
            "mark": {"type": "rect", "filled": False, "stroke": "black", "strokeWidth": 2},
        },
    ]
    if annotate:
        layer.append(
            {
                "mark": {"type": "text", "fontSize": 9, "lineBreak": "\n", "lineHeight": 11},
                "encoding": {
                    "text": {"field": "text"},
                    "color": {
                        "condition": [
                            {"test": "datum.light", "value": "white"},
                            {"test": "datum.m == null", "value": "#444444"},
                        ],
                        "value": "black",
                    },
                    "tooltip": tooltip,
                },
            }
        )
    if any("c" in v for v in values):
        layer.append(
            {
                "transform": [{"filter": "datum.c"}],
                "mark": {
                    "type": "point",
                    "shape": "circle",
                    "filled": True,
                    "fill": "white",
                    "stroke": "black",
                    "strokeWidth": 0.8,
                    "size": 22,
                    "opacity": 1,
                    "yOffset": -(cell_h / 2 - 5) if annotate else 0,
                },
                "encoding": {"tooltip": tooltip},
            }
        )
    title = (
        f"R of {first.dataset} / {first.scenario}: {base_metric_shown(first.base_metric)} ({first.seeds_text}; mean"
        + (" ± std" if with_std else "")
        + " per cell)"
    )
    header = {"labelLimit": max(panel_w + 10, 80), "labelFontWeight": "bold"}
    full = (
        len({(h.strategy, h.detector) for h in items})
        == len(items)
        == len(strategies) * len(detectors)
    )
    row_head = min(_text_px(strategies, 11), 160.0) + 30
    wrapped_rows = math.ceil(len(items) / columns)
    if (
        full
        and row_head + label_w + len(detectors) * (panel_w + 14) + 90 <= WIDTH
        and len(strategies) <= wrapped_rows + 1
    ):  # strategies in rows, detectors in columns: no taller
        facet = {
            "facet": {
                "row": {
                    "field": "s",
                    "type": "nominal",
                    "sort": {"field": "si", "op": "min"},
                    "title": "strategy",
                    "header": {**header, "labelAngle": 0, "labelAlign": "left", "labelLimit": 160},
                },
                "column": {
                    "field": "d",
                    "type": "nominal",
                    "sort": {"field": "di", "op": "min"},
                    "title": "detector",
                    "header": header,
                },
            }
        }
        grid_rows = len(strategies)
    else:
        facet = {
            "facet": {
                "field": "panel",
                "type": "nominal",
                "sort": {"field": "p", "op": "min"},
                "title": None,
                "header": header,
            },
            "columns": columns,
        }
        grid_rows = wrapped_rows
    spec = {
        **_base(title, "rows: training step (concept learned); columns: test concept"),
        "data": {"values": values},
        "transform": derived,
        **facet,
        "spacing": 14,
        "spec": {"width": panel_w, "height": n_rows * cell_h, "encoding": encoding, "layer": layer},
    }
    x_h = 70 if x_axis["labelAngle"] else 40
    return spec, int(60 + grid_rows * (n_rows * cell_h + 30) + x_h)


def _step_values(part: pd.DataFrame) -> tuple[list[int], dict[int, str]]:
    """The training steps in order, and each one's label (``step: concept learned``)."""
    first = dict(
        zip(part["step"].astype(int).tolist(), part["concept"].tolist())
    )  # a step's last row: same concept
    steps = sorted(first)
    return steps, {s: f"{s}: {first[s]}" for s in steps}


def curves_chart(curves: pd.DataFrame, title: str, height: int = 220) -> tuple[dict, int]:
    """Learning curves of one dataset, scenario and base metric (rows of
    :func:`clad.report.aggregate.learning_curves`): the mean per step over the concepts seen so far
    and over all concepts, side by side, one line per strategy + detector with a ± std band over
    seeds; dashed grey: chance. ``height``: each panel's (px)."""
    labels = list(
        dict.fromkeys(_label(s, d) for s, d in zip(curves["strategy"], curves["detector"]))
    )
    steps, step_label = _step_values(curves)
    base = base_metric_shown(curves["base_metric"].iloc[0]) if not curves.empty else ""
    panel = {"seen": "average over concepts seen so far", "all": "average over all concepts"}
    values = []
    columns = (curves[c].tolist() for c in ("strategy", "detector", "kind", "step", "mean", "std"))
    for strategy, detector, kind, step, m, s in zip(*columns):
        m, s = _num(m), _num(s)
        values.append(
            {
                "config": _label(strategy, detector),
                "panel": panel.get(kind, kind),
                "step": step_label[int(step)],
                "st": int(step),
                "mean": m,
                "std": s,
                "lo": None if m is None or s is None else m - s,
                "hi": None if m is None or s is None else m + s,
            }
        )
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
                "mean": _num(np.mean(v)),
            }
            for (k, st), v in sorted(ref.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))
        ]
    colours = _colours(labels)
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
        "legend": {"orient": "bottom", "columns": 3, "symbolType": "stroke"},
    }
    tooltip = [
        {"field": "config", "title": "strategy + detector"},
        {"field": "step", "title": "training step"},
        {"field": "mean", "format": ".4f"},
        {"field": "std", "title": "std over seeds", "format": ".4f"},
    ]
    width = max(260, min(480, 46 * len(steps)))
    not_chance = {"filter": "datum.config !== 'chance'"}
    spec = {
        **_base(title),
        "data": {"values": values},
        "facet": {
            "field": "panel",
            "type": "nominal",
            "sort": _order(values, "panel", list(panel.values()), "pi"),
            "title": None,
        },
        "columns": 2 if 2 * width + 120 <= WIDTH else 1,
        "spec": {
            "width": width,
            "height": height,
            "encoding": {"x": x},
            "layer": [
                *(
                    [
                        {
                            "transform": [not_chance, {"filter": "datum.lo !== null"}],
                            "mark": {"type": "area", "opacity": 0.15},
                            "encoding": {
                                "y": {"field": "lo", "type": "quantitative"},
                                "y2": {"field": "hi"},
                                "color": {**colour, "legend": None},
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
            ],
        },
    }
    rows = 1 if 2 * width + 120 <= WIDTH else 2
    return spec, int(80 + rows * (height + 110) + 22 * math.ceil((len(labels) + 1) / 3))


def forgetting_chart(table: pd.DataFrame, title: str) -> tuple[dict, int]:
    """Per-concept forgetting (peak − final) of one dataset and scenario (rows of
    :func:`clad.report.aggregate.forgetting_table`): one panel per base metric, test concepts on x,
    one bar per strategy + detector with ± std error bars; a diamond on the zero line marks a value
    too small to show as a bar."""
    labels = list(dict.fromkeys(_label(s, d) for s, d in zip(table["strategy"], table["detector"])))
    concepts = list(dict.fromkeys(table["concept"]))
    means = table["mean"].to_numpy(float)
    finite = means[np.isfinite(means)]
    span = float(np.ptp(np.append(finite, 0.0))) if finite.size else 0.0
    small = max(span, 0.05) * 0.01
    values = []
    for row in table.itertuples(index=False):
        m, s = _num(row.mean), _num(row.std)
        values.append(
            {
                "config": _label(row.strategy, row.detector),
                "concept": row.concept,
                "metric": base_metric_shown(row.base_metric),
                "mean": m,
                "std": s,
                "lo": None if m is None or s is None else m - s,
                "hi": None if m is None or s is None else m + s,
                "zero": m is not None and abs(m) < small,
            }
        )
    colour = {
        "field": "config",
        "type": "nominal",
        "scale": _colours(labels),
        "title": "strategy + detector",
        "legend": {"orient": "bottom", "columns": 3},
    }
    offset = {"field": "config", "type": "nominal", "sort": _order(values, "config", labels, "ci")}
    x = {
        "field": "concept",
        "type": "nominal",
        "sort": _order(values, "concept", concepts, "ki"),
        "axis": {
            "title": "test concept",
            "labelAngle": -40 if _text_px(concepts) > 40 else 0,
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
    row_h = (
        180 if len(metrics) <= 4 else 110
    )  # many base metrics: lower panels, the page stays within its budget
    spec = {
        **_base(title, "positive = forgotten; ◆ = zero"),
        "data": {"values": values},
        "facet": {
            "row": {
                "field": "metric",
                "type": "nominal",
                "sort": _order(values, "metric", metrics, "mi"),
                "title": None,
            }
        },
        "spec": {
            "width": width,
            "height": row_h,
            "encoding": {"x": x, "xOffset": offset},
            "layer": [
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
            ],
        },
    }
    return spec, int(80 + len(metrics) * (row_h + 80) + 22 * math.ceil(len(labels) / 3))


def cost_chart(table: pd.DataFrame, title: str) -> tuple[dict, int]:
    """Cost of the configurations of one dataset and scenario (rows of
    :func:`clad.report.cost.cost_table`): fit and score seconds per training step stacked (left)
    and peak memory in MB (right), one horizontal bar per strategy + detector, mean over seeds with
    the value beside each bar."""
    labels = [_label(s, d) for s, d in zip(table["strategy"], table["detector"])]
    seconds, memory = [], []
    for label, row in zip(labels, table.itertuples(index=False)):
        fit, score = _num(row.fit_seconds_mean), _num(row.score_seconds_mean)
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
                    "std": _num(sd),
                    "total": f"{total:.3g} s" if fit is not None or score is not None else "n/a",
                }
            )
        peak = _num(row.peak_memory_mb_mean)
        memory.append(
            {
                "config": label,
                "mb": peak,
                "std": _num(row.peak_memory_mb_std),
                "text": "n/a" if peak is None else f"{peak:.3g} MB",
            }
        )
    _order(memory, "config", labels, "ci")
    y = {
        "field": "config",
        "type": "nominal",
        "sort": _order(seconds, "config", labels, "ci"),
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
    left = {
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
                    "color": part_colour,
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
    right = {
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
    spec = {
        **_base(title),
        "hconcat": [left, right],
        "spacing": 60,
        "resolve": {"scale": {"color": "independent"}},
    }
    return spec, int(120 + height + 40)


def cost_quality_chart(table: pd.DataFrame, label: str) -> tuple[dict, int]:
    """Quality against compute (rows of :func:`clad.report.costquality.cost_quality_table`): one
    panel per scenario, one grey point per configuration at its fit + score seconds per training
    step (log scale when every value is positive) and its quality, the Pareto front joined in red
    and its first eight configurations named."""
    scenarios = list(dict.fromkeys(table["scenario"]))
    values = []
    for row in table.itertuples(index=False):
        values.append(
            {
                "scenario": row.scenario,
                "configuration": row.configuration,
                "quality": _num(row.quality),
                "seconds": _num(row.seconds),
                "blocks": int(row.blocks),
                "pareto": bool(row.pareto),
            }
        )
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
        **_base(
            f"Quality against compute: {label} (mean over blocks) and fit + score seconds per training step",
            "red: the Pareto front (no configuration both cheaper and better), joined and named",
        ),
        "data": {"values": values},
        "facet": {
            "field": "scenario",
            "type": "nominal",
            "sort": _order(values, "scenario", scenarios, "si"),
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


# -- critical differences ------------------------------------------------------------------


def cd_title(comparison, used: str) -> str:
    """The title of a critical-difference diagram: what the bars mean and the omnibus test's verdict."""
    v = comparison.verdict
    if not v.posthoc_tested:
        return (
            f"{comparison.title}: average rank (1 = best). Post-hoc NOT TESTED: the {v.test.name} test did not "
            f"reject (p = {v.test.pvalue:.3g} >= alpha = {comparison.alpha}); one bar joins every method, no "
            f"pair is claimed to differ"
        )
    return (
        f"{comparison.title}: average rank (1 = best); bars join {used}-indistinguishable methods "
        f"(alpha = {comparison.alpha}; {v.test.name} p = {v.test.pvalue:.3g}, {v.test.method})"
    )


def cd_significance(comparison, test: str = "nemenyi"):
    """The p-value matrix a critical-difference diagram draws, as the comparison's verdict decides it
    (gated by the omnibus test), and the name of the post-hoc test (``"Nemenyi"``, or
    ``"Wilcoxon–Holm"`` where Nemenyi was not run)."""
    v = comparison.verdict
    if v.test is None:
        raise CladValueError(f"{comparison.title}: no test was run ({comparison.message})")
    sig = v.significance(test)
    used = "Nemenyi" if test == "nemenyi" else "Wilcoxon–Holm"
    if sig is None:  # Nemenyi needs 3 methods: the Wilcoxon test is the one there is
        sig, used = v.significance("wilcoxon_holm"), "Wilcoxon–Holm"
    if sig is None:
        raise CladValueError(f"{comparison.title}: no post-hoc test was run ({comparison.message})")
    return sig, used


def cd_cliques(sig: pd.DataFrame, alpha: float) -> list[list[str]]:
    """The bars of a critical-difference diagram: every maximal set of two methods or more in which
    no pair differs (p >= ``alpha``), found with networkx's maximal cliques; each set's names in the
    order of ``sig``, the sets sorted by their first and last method's position there."""
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "critical-difference diagrams need networkx: pip install 'clad[report]'"
        ) from None

    names = [str(m) for m in sig.index]
    p = sig.to_numpy(float)
    graph = nx.Graph()
    graph.add_nodes_from(range(len(names)))
    graph.add_edges_from(
        (i, j) for i in range(len(names)) for j in range(i + 1, len(names)) if not p[i, j] < alpha
    )
    cliques = [sorted(c) for c in nx.find_cliques(graph) if len(c) > 1]
    return [[names[i] for i in c] for c in sorted(cliques, key=lambda c: (c[0], c[-1]))]


def cd_chart(comparison, *, test: str = "nemenyi", cd: float | None = None) -> tuple[dict, int]:
    """A critical-difference diagram (Demšar 2006) of a :class:`~clad.report.stats.Comparison`:
    average ranks on an axis (1 = best, on the left), each method joined to its name (the better
    half on the left, the rest on the right), a bar under every maximal set of methods the post-hoc
    test cannot tell apart (:func:`cd_cliques`) and, for Nemenyi, the critical difference above the
    axis. When the omnibus test did not reject, the post-hoc tests are not read: one grey bar joins
    every method and the title says "not tested". ``cd`` is Nemenyi's critical difference
    (:func:`clad.report.stats.critical_difference`), drawn when Nemenyi is the test drawn."""
    sig, used = cd_significance(comparison, test)
    ranks = comparison.average_ranks.sort_values(kind="stable")
    names = [str(m) for m in ranks.index]
    k = len(names)
    tested = comparison.verdict.posthoc_tested
    ink = "black" if tested else "#9a9a9a"
    if tested:
        order = {m: i for i, m in enumerate(names)}
        sig = sig.rename(index=str, columns=str).loc[names, names]
        bars = [(c[0], c[-1]) for c in cd_cliques(sig, comparison.alpha)]
        bars = [b for b in bars if order[b[0]] < order[b[1]]]
    else:
        bars = [(names[0], names[-1])]
    labels = {m: f"{m} ({float(ranks[m]):.2f})" for m in names}
    split = (k + 1) // 2
    left, right = names[:split], names[split:]
    label_w = min(
        max(_text_px([labels[m] for m in left], 10), _text_px([labels[m] for m in right], 10)) + 12,
        300,
    )
    axis_w = max(240.0, min(560.0, 60.0 * (k - 1)))
    x0 = label_w + 20
    lo_rank, hi_rank = 1.0, float(max(k, 2))

    def x(r: float) -> float:
        return round(x0 + (r - lo_rank) / (hi_rank - lo_rank) * axis_w, 2)

    axis_y = 46.0
    levels: list[
        list[tuple[float, float]]
    ] = []  # bars stacked so that none overlaps another in its row
    bar_rows = []
    for a, b in bars:
        lo, hi = float(ranks[a]), float(ranks[b])
        row = next(
            (n for n, row in enumerate(levels) if not any(lo <= h and l <= hi for l, h in row)),
            None,
        )
        if row is None:
            levels.append([])
            row = len(levels) - 1
        levels[row].append((lo, hi))
        bar_rows.append((lo, hi, row))
    label_top = axis_y + 14 + 9 * len(levels) + 12
    lines, texts = [], []
    lines.append(
        {"x": x(lo_rank), "x2": x(hi_rank), "y": axis_y, "y2": axis_y, "w": 1.2, "c": "black"}
    )
    for r in range(1, k + 1):
        lines.append({"x": x(r), "x2": x(r), "y": axis_y - 5, "y2": axis_y, "w": 1, "c": "black"})
        texts.append({"x": x(r), "y": axis_y - 8, "t": str(r), "a": "center", "c": "black"})
    for lo, hi, row in bar_rows:
        y = axis_y + 14 + 9 * row
        lines.append({"x": x(lo) - 4, "x2": x(hi) + 4, "y": y, "y2": y, "w": 3, "c": ink})
    points = []
    colour = {m: PALETTE[i % 10] if tested else ink for i, m in enumerate(names)}
    for side, members in (("left", left), ("right", right[::-1])):
        for i, m in enumerate(members):
            y = label_top + 18 * i
            xm = x(float(ranks[m]))
            end = x0 - 6 if side == "left" else x0 + axis_w + 6
            lines.append({"x": xm, "x2": xm, "y": axis_y, "y2": y, "w": 1, "c": colour[m]})
            lines.append({"x": xm, "x2": end, "y": y, "y2": y, "w": 1, "c": colour[m]})
            points.append(
                {"x": xm, "y": axis_y, "m": m, "r": round(float(ranks[m]), 4), "c": colour[m]}
            )
            texts.append(
                {
                    "x": end + (-4 if side == "left" else 4),
                    "y": y,
                    "t": labels[m],
                    "c": colour[m],
                    "a": "right" if side == "left" else "left",
                }
            )
    if used == "Nemenyi" and cd is not None:
        end = x(lo_rank + min(cd, hi_rank - lo_rank))
        lines.append({"x": x(lo_rank), "x2": end, "y": 12, "y2": 12, "w": 1.6, "c": ink})
        lines += [{"x": e, "x2": e, "y": 8, "y2": 16, "w": 1, "c": ink} for e in (x(lo_rank), end)]
        texts.append(
            {"x": (x(lo_rank) + end) / 2, "y": 2, "t": f"CD = {cd:.2f}", "a": "center", "c": ink}
        )
    width = int(x0 + axis_w + label_w + 20)
    height = int(label_top + 18 * max(len(left), len(right)) + 6)

    def identity(field, size):
        return {
            "field": field,
            "type": "quantitative",
            "axis": None,
            "scale": {"domain": [0, size], "range": [0, size], "nice": False, "zero": False},
        }

    xs, ys = identity("x", width), identity("y", height)  # pixels: y grows downwards
    text_layers = [
        {
            "data": {"values": [t for t in texts if t["a"] == a]},
            "mark": {
                "type": "text",
                "align": a,
                "baseline": "middle" if a != "center" else "bottom",
                "fontSize": 10,
            },
            "encoding": {
                "x": xs,
                "y": ys,
                "text": {"field": "t"},
                "color": {"field": "c", "type": "nominal", "scale": None},
            },
        }
        for a in ("left", "right", "center")
        if any(t["a"] == a for t in texts)
    ]
    spec = {
        **_base(cd_title(comparison, used)),
        "width": width,
        "height": height,
        "layer": [
            {
                "data": {"values": lines},
                "mark": {"type": "rule"},
                "encoding": {
                    "x": xs,
                    "x2": {"field": "x2"},
                    "y": ys,
                    "y2": {"field": "y2"},
                    "strokeWidth": {"field": "w", "type": "quantitative", "scale": None},
                    "color": {"field": "c", "type": "nominal", "scale": None},
                },
            },
            {
                "data": {"values": points},
                "mark": {"type": "circle", "size": 30, "opacity": 1},
                "encoding": {
                    "x": xs,
                    "y": ys,
                    "color": {"field": "c", "type": "nominal", "scale": None},
                    "tooltip": [
                        {"field": "m", "title": "method"},
                        {"field": "r", "title": "average rank"},
                    ],
                },
            },
            *text_layers,
        ],
    }
    lines_of_title = textwrap.wrap(spec["title"]["text"], max(40, int(max(width, 360) / 6.3)))
    spec["title"].update(text=lines_of_title, limit=0)
    return spec, height + 40 + 16 * len(lines_of_title)
