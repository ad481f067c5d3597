"""The R heatmaps of a block page as one Vega-Lite figure per dataset, scenario and base metric
(small multiples of every strategy + detector on one colour scale), drawn by the browser."""

from __future__ import annotations

import json
import math
from typing import Sequence

import numpy as np

from ..metrics.base import base_metric_shown
from .charts import (
    MAX_ANNOTATED_HEIGHT,
    MAX_ANNOTATED_PANELS,
    NA_COLOUR,
    SMALL_CELL,
    WIDTH,
    base_spec,
    config_label,
    lookup_labels,
    text_px,
)

__all__ = ["heatmap_chart"]


def _heatmap_cells(items: Sequence) -> tuple[list[dict], list[str]]:
    """One row per cell of every panel, with short keys (its labels and text are made by the
    browser: :func:`_heatmap_transforms`), and each panel's configuration."""
    values = []
    panels = []
    for h in items:
        p = len(panels)
        panels.append(config_label(h.strategy, h.detector))
        mean, std, n = np.asarray(h.mean, float), np.asarray(h.std, float), np.asarray(h.n)
        chance = (
            np.asarray(h.at_chance, bool) if h.at_chance is not None else np.zeros(mean.shape, bool)
        )
        t = np.asarray(h.learned_at)[None, :]
        i = np.arange(mean.shape[0])[:, None]
        code = np.where(t < 0, 3, np.where(i == t, 1, np.where(i < t, 2, 0)))
        # a cell: short keys, its labels and text made by the browser
        for (a, b), m in np.ndenumerate(mean):
            cell = {"p": p, "i": a, "j": b, "n": int(n[a, b]), "k": int(code[a, b])}
            if math.isfinite(m):
                cell["m"] = round(float(m), 5)
            if math.isfinite(std[a, b]):
                cell["e"] = round(float(std[a, b]), 5)
            if chance[a, b]:
                cell["c"] = 1
            values.append(cell)
    return values, panels


def _heatmap_transforms(
    items: Sequence, rows: list[str], panels: list[str], vmin: float, vmax: float
) -> list[dict]:
    """The transforms that give each cell its labels (looked up as data, never inside an
    expression), its state, values and text."""
    states = ["learned", "learned here", "future", "never learned"]  # a cell's state by its code
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
    return [
        lookup_labels("p", panel_rows, ("panel", "s", "d", "si", "di")),
        lookup_labels("i", [{"i": k, "step": r} for k, r in enumerate(rows)], ("step",)),
        lookup_labels(
            "j", [{"j": k, "concept": str(c)} for k, c in enumerate(items[0].cols)], ("concept",)
        ),
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


def _heatmap_tooltip(first) -> list[dict]:
    """What hovering a cell tells: its configuration, step, concept, values, state and chance."""
    return [
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


def _heatmap_layers(
    first, domain: list[float], annotate: bool, chance: bool, cell_h: float
) -> list[dict]:
    """The cells (grey under every one: the undefined ones stay grey), the faded future cells, the
    borders, the numbers when ``annotate`` and the chance marks when some cell is at ``chance``."""
    tooltip = _heatmap_tooltip(first)
    # under every cell: the undefined ones stay grey
    layer = [
        {"mark": {"type": "rect", "color": NA_COLOUR}},
        {
            "mark": {"type": "rect"},
            "encoding": {
                "color": {
                    "field": "mean",
                    "type": "quantitative",
                    "scale": {"scheme": "viridis", "domain": domain},
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
    if chance:
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
    return layer


def _heatmap_facet(
    items: Sequence, header: dict, label_w: float, panel_w: float, columns: int
) -> tuple[dict, int]:
    """Strategies in rows and detectors in columns when every pair has a panel and that is no
    taller, else the panels wrapped ``columns`` a row; and the number of rows of panels."""
    strategies = list(dict.fromkeys(h.strategy for h in items))
    detectors = list(dict.fromkeys(h.detector for h in items))
    full = (
        len({(h.strategy, h.detector) for h in items})
        == len(items)
        == len(strategies) * len(detectors)
    )
    row_head = min(text_px(strategies, 11), 160.0) + 30
    wrapped_rows = math.ceil(len(items) / columns)
    # strategies in rows, detectors in columns: no taller
    if (
        full
        and row_head + label_w + len(detectors) * (panel_w + 14) + 90 <= WIDTH
        and len(strategies) <= wrapped_rows + 1
    ):
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
    return facet, grid_rows


def heatmap_chart(
    items: Sequence, *, vmin: float = 0.0, vmax: float = 1.0, annotate: bool | None = None
) -> tuple[dict, int]:
    """Small multiples of R for the configurations of one dataset, scenario and base metric
    (:class:`clad.report.figure_data.HeatmapData`, one
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
        46.0 if annotate else 14.0, min(text_px(first.cols) * 0.75, 60.0) if annotate else 14.0
    )
    cell_h = (32.0 if with_std else 20.0) if annotate else 14.0
    values, panels = _heatmap_cells(items)
    derived = _heatmap_transforms(items, rows, panels, vmin, vmax)
    label_w = min(text_px(rows), 180.0) + 40

    def layout(cell: float, title_room: float = 40) -> tuple[float, float, int]:
        """The panel's width, its title's width and the panels per row, for cells of ``cell`` px."""
        width = n_cols * cell
        title_w = min(text_px(panels, 11), width + title_room)
        return (
            width,
            title_w,
            max(1, min(len(items), int((WIDTH - label_w - 90) // (max(width, title_w) + 18)))),
        )

    panel_w, head, columns = layout(cell_w)
    # many colour-only panels: smaller cells, titles cut at the panel's width (the header's label
    # limit)
    if not annotate and math.ceil(len(items) / columns) > 3:
        cell_w = cell_h = SMALL_CELL
        panel_w, head, columns = layout(cell_w, title_room=10)
    x_axis = {
        "title": "test concept",
        "labelAngle": -40 if text_px(first.cols) > cell_w - 4 else 0,
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
    layer = _heatmap_layers(first, [vmin, vmax], annotate, any("c" in v for v in values), cell_h)
    title = (
        f"R of {first.dataset} / {first.scenario}: {base_metric_shown(first.base_metric)} ({first.seeds_text}; mean"
        + (" ± std" if with_std else "")
        + " per cell)"
    )
    header = {"labelLimit": max(panel_w + 10, 80), "labelFontWeight": "bold"}
    facet, grid_rows = _heatmap_facet(items, header, label_w, panel_w, columns)
    spec = {
        **base_spec(title, "rows: training step (concept learned); columns: test concept"),
        "data": {"values": values},
        "transform": derived,
        **facet,
        "spacing": 14,
        "spec": {"width": panel_w, "height": n_rows * cell_h, "encoding": encoding, "layer": layer},
    }
    x_h = 70 if x_axis["labelAngle"] else 40
    return spec, int(60 + grid_rows * (n_rows * cell_h + 30) + x_h)
