"""Aggregation over seeds of what a stream records besides R: the anytime curves (derived by
:mod:`clad.metrics.anytime`) and the prequential scores (:class:`clad.core.prequential.Prequential`).

Runs of one configuration are averaged position by position when they were evaluated at the same
rows (the same stream); a run evaluated elsewhere is left out of the mean and counted in
``left_out``. Statistics as in :func:`clad.report.describe.describe`. :func:`stream_chart` draws
them (in the browser, as every figure of a report) and :func:`stream_section` is their part of the
details page.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..metrics.base import base_metric_bounds as base_bounds
from ..results.record import RunResult
from . import html as H
from .charts import WIDTH, base_spec, colour_scale, config_label, json_number, order_by
from .describe import CONFIG_KEYS, STATS, describe, group_runs, stats_at

__all__ = ["anytime_table", "prequential_table", "stream_chart", "stream_section", "ANYTIME_CURVES"]

#: the anytime curves drawn: metric name -> what it averages over
ANYTIME_CURVES = {"anytime_accuracy_all": "all", "anytime_accuracy_seen": "seen"}


def _same_stream(runs: list[RunResult], positions) -> tuple[list[RunResult], list, int]:
    """The runs evaluated at the same rows as the first one that has a record, those rows, and the
    number of runs left out."""
    kept, first = [], None
    for r in runs:
        pos = positions(r)
        if pos is None:
            continue
        if first is None:
            first = list(pos)
        if list(pos) == first:
            kept.append(r)
    return kept, first or [], len(runs) - len(kept)


def anytime_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, base metric, curve (``kind`` ``"all"`` or ``"seen"``) and anytime
    evaluation: :func:`describe` over seeds, with the rows seen, the task index and the concept
    boundaries (rows seen at each training concept's end, a list) for plotting."""
    rows = []
    for key, runs in group_runs(r for r in results if r.ok).items():
        kept, seen, left = _same_stream(runs, lambda r: (r.anytime or {}).get("rows_seen"))
        if not kept:
            continue
        tasks = kept[0].anytime.get("task", [None] * len(seen))
        boundaries = list(kept[0].anytime.get("boundaries") or [])
        for base in kept[0].metrics:
            for name, kind in ANYTIME_CURVES.items():
                values = [r.metrics.get(base, {}).get(name) for r in kept]
                if any(v is None for v in values):
                    continue
                d = describe(np.array(values, dtype=float), base_bounds(base))
                for e, rows_seen in enumerate(seen):
                    stats = stats_at(d, e).values()
                    rows.append(
                        [*key, base, kind, e, rows_seen, tasks[e], boundaries, left, *stats]
                    )
    columns = [*CONFIG_KEYS, "base_metric", "kind", "evaluation", "rows_seen", "task", "boundaries"]
    return pd.DataFrame(rows, columns=[*columns, "left_out", *STATS])


def prequential_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, prequential metric (``roc_auc``, ``average_precision``, ``f1``), kind
    (``"cumulative"`` or ``"windowed"``) and scored batch: :func:`describe` over seeds, with the
    rows seen before the batch and the window (in batches)."""
    rows = []
    for key, runs in group_runs(r for r in results if r.ok).items():
        kept, seen, left = _same_stream(runs, lambda r: (r.prequential or {}).get("rows_seen"))
        if not kept:
            continue
        window = kept[0].prequential.get("window")
        for kind in ("cumulative", "windowed"):
            for metric in kept[0].prequential[kind]:
                d = describe(
                    np.array([r.prequential[kind][metric] for r in kept], dtype=float),
                    base_bounds(metric),
                )
                for b, rows_seen in enumerate(seen):
                    stats = stats_at(d, b).values()
                    rows.append([*key, metric, kind, b, rows_seen, window, left, *stats])
    columns = [*CONFIG_KEYS, "metric", "kind", "batch", "rows_seen", "window", "left_out", *STATS]
    return pd.DataFrame(rows, columns=columns)


def _stream_values(table: pd.DataFrame, panel: str, line: str | None) -> list[dict]:
    """One row per point of ``table``: its configuration, panel, line, rows seen, mean and band."""
    columns = ["strategy", "detector", panel, "rows_seen", "mean", "std"]
    columns += [line] if line else []
    values = []
    for row in zip(*(table[c].tolist() for c in columns)):
        m, s = json_number(row[4]), json_number(row[5])
        values.append(
            {
                "config": config_label(row[0], row[1]),
                "panel": str(row[2]),
                "line": str(row[6]) if line else "",
                "x": json_number(row[3]),
                "mean": m,
                "lo": None if m is None or s is None else m - s,
                "hi": None if m is None or s is None else m + s,
                "std": s,
            }
        )
    return values


def _stream_layers(x: dict, colour: dict, y_title: str, line: str | None, boundaries) -> list[dict]:
    """The ± std bands, the mean lines (dashed per value of the column ``line``) and the dotted
    concept boundaries of a stream figure."""
    curve = {"filter": "datum.config !== 'boundary'"}
    detail = {"field": "line", "type": "nominal"}
    layers = [
        {
            "transform": [curve, {"filter": "datum.lo !== null"}],
            "mark": {"type": "area", "opacity": 0.2},
            "encoding": {
                "x": x,
                "y": {"field": "lo", "type": "quantitative"},
                "y2": {"field": "hi"},
                "color": colour,  # the same legend as the lines: merged into one
                "detail": detail,
            },
        },
        {
            "transform": [curve],
            "mark": {"type": "line", "point": {"size": 12}, "strokeWidth": 1.5},
            "encoding": {
                "x": x,
                "y": {"field": "mean", "type": "quantitative", "title": y_title},
                "color": colour,
                "detail": detail,
                **(
                    {"strokeDash": {"field": "line", "type": "nominal", "title": line}}
                    if line
                    else {}
                ),
                "tooltip": [
                    {"field": "config", "title": "strategy + detector"},
                    *([{"field": "line", "title": line}] if line else []),
                    {"field": "x", "title": "training rows seen"},
                    {"field": "mean", "format": ".4f"},
                    {"field": "std", "title": "std over seeds", "format": ".4f"},
                ],
            },
        },
    ]
    if len(boundaries):
        layers.append(
            {
                "transform": [{"filter": "datum.config === 'boundary'"}],
                "mark": {"type": "rule", "color": "black", "strokeDash": [2, 2], "size": 0.8},
                "encoding": {"x": {"field": "b", "type": "quantitative"}},
            }
        )
    return layers


def stream_chart(
    table: pd.DataFrame,
    title: str,
    panel: str,
    y_title: str,
    *,
    line: str | None = None,
    boundaries=(),
) -> tuple[dict, int]:
    """Curves over a stream (rows of :func:`anytime_table` or :func:`prequential_table` of one
    dataset and scenario): one panel per value of the column ``panel``, the mean per evaluation
    against the training rows seen, one line per strategy + detector (dashed per value of the
    column ``line``, if given) with a ± std band over seeds, and a dotted vertical line at each
    concept boundary in ``boundaries``. Returns the specification and its height (px).

    >>> t = pd.DataFrame({"strategy": ["naive"] * 2, "detector": ["if"] * 2, "kind": ["all"] * 2,
    ...                   "rows_seen": [10, 20], "mean": [0.5, 0.6], "std": [0.1, float("nan")]})
    >>> spec, height = stream_chart(t, "t", "kind", "roc_auc", boundaries=[15])
    >>> [v["hi"] for v in spec["data"]["values"] if v["config"] != "boundary"], height
    ([0.6, None], 432)
    """
    values = _stream_values(table, panel, line)
    panels = list(dict.fromkeys(v["panel"] for v in values))
    labels = list(dict.fromkeys(v["config"] for v in values))
    values += [{"config": "boundary", "panel": p, "b": b} for p in panels for b in boundaries]
    columns = max(1, min(len(panels), 2))
    width = max(260, min(400, (WIDTH - 240) // columns - 80))
    x = {
        "field": "x",
        "type": "quantitative",
        "title": "training rows seen" + (" (dotted: concept boundaries)" if boundaries else ""),
    }
    colour = {
        "field": "config",
        "type": "nominal",
        "scale": colour_scale(labels),
        "title": "strategy + detector",
        "legend": {"orient": "bottom", "columns": 3, "symbolType": "stroke"},
    }
    layers = _stream_layers(x, colour, y_title, line, boundaries)
    spec = {
        **base_spec(title),
        "data": {"values": values},
        "facet": {
            "field": "panel",
            "type": "nominal",
            "sort": order_by(values, "panel", panels, "pi"),
            "title": None,
        },
        "columns": columns,
        "spec": {"width": width, "height": 220, "layer": layers},
    }
    rows = -(-len(panels) // columns)
    return spec, int(80 + rows * (220 + 110) + 22 * -(-(len(labels) + 1) // 3))


def _anytime_figures(table: pd.DataFrame, figs) -> list[str]:
    out = []
    for (dataset, scenario, base), part in table.groupby(
        ["dataset", "scenario", "base_metric"], sort=False
    ):
        part = part.assign(panel=[f"anytime: {k} concepts" for k in part["kind"]])
        spec, height = stream_chart(
            part,
            f"{dataset} / {scenario} — {base}",
            "panel",
            f"{base}, mean over the concepts",
            boundaries=list(part["boundaries"].iloc[0] or ()),
        )
        description = f"anytime curves {dataset} / {scenario} / {base}"
        out.append(
            figs.chart(spec, height, "anytime", description, "anytime", dataset, scenario, base)
        )
    return out


def _prequential_figures(table: pd.DataFrame, figs) -> list[str]:
    out = []
    for (dataset, scenario), part in table.groupby(["dataset", "scenario"], sort=False):
        part = part.assign(panel=[f"prequential {m}" for m in part["metric"]])
        spec, height = stream_chart(part, f"{dataset} / {scenario}", "panel", "score", line="kind")
        description = f"prequential scores {dataset} / {scenario}"
        out.append(
            figs.chart(spec, height, "prequential", description, "prequential", dataset, scenario)
        )
    return out


def stream_section(results, figs, kind: str) -> str | None:
    """The anytime (``kind="anytime"``) or prequential curves of the runs that record them, one
    figure per dataset and scenario (and base metric for the anytime curves); None when no run
    records them."""
    table = anytime_table(results) if kind == "anytime" else prequential_table(results)
    if table.empty:
        return None
    if kind == "anytime":
        legend = (
            "<p class='legend'>Anytime evaluation: the test concepts scored several times while the "
            "stream is learned; mean over all test concepts (left) and over the concepts learned so "
            "far (right), mean over seeds ± std; dotted lines mark the concept boundaries.</p>"
        )
        return legend + H.figure_grid(_anytime_figures(table, figs))
    window = ", ".join(sorted({str(w) for w in table["window"]}))
    legend = (
        "<p class='legend'>Prequential (test-then-train) evaluation: each batch of the stream scored "
        f"before it is learned; cumulative over every row scored so far (solid) and over the last "
        f"{H.html.escape(window)} batches (windowed), mean over seeds ± std.</p>"
    )
    return legend + H.figure_grid(_prequential_figures(table, figs))
