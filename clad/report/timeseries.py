"""The time-series figure of a report: one series (channel) of a test concept, its labelled
anomaly ranges, and the detector's scores and threshold after every training step.

A run whose test concepts have a time axis (the telemanom loader) keeps the trace of one series
(``extras["time_series"]["trace"]``, see :class:`clad.core.evaluation.Evaluation`): the first
series holding an anomaly of the first such test concept, its values (first feature), its ranges,
and after every step the point scores (windows mapped back to points) and the threshold. A long
series is summarised in buckets of ``bucket`` points (the largest score of each bucket, the mean
value), at most 2,000 per series. The figure (drawn by the browser, :mod:`clad.report.charts`)
stacks one panel per step under the series, on one time axis, so 7-10 steps stay readable; scores
above the threshold are what the detector flags.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..results.record import RunResult
from . import html as H
from .charts import WIDTH, base_spec

__all__ = ["trace_chart", "trace_section"]

#: height (px) of each panel of a trace figure
PANEL_HEIGHT = 70
#: what each line of a trace figure is, and its colour
TRACE_COLOURS = {
    "value": "#333333",
    "score": "#1f77b4",
    "above threshold": "#ff7f0e",
    "threshold": "#ff7f0e",
}


def _round(v) -> float | None:
    """A drawn value to 5 significant digits (None for a missing or infinite one).

    >>> _round(1 / 3), _round(None), _round(float("nan"))
    (0.33333, None, None)
    """
    if v is None or not math.isfinite(v):
        return None
    return float(f"{v:.5g}")


def _above(x: list, scores: list, threshold) -> list[dict]:
    """The runs of consecutive points above ``threshold``, one ``{seg, x, y}`` each.

    >>> _above([0, 1, 2, 3], [0.1, 0.9, 0.8, 0.2], 0.5)
    [{'seg': 0, 'x': [1, 2], 'y': [0.9, 0.8]}]
    """
    runs: list[dict] = []
    last = None
    for k, (t, s) in enumerate(zip(x, scores)):
        if s is None or s <= threshold:
            continue
        if last != k - 1:
            runs.append({"seg": len(runs), "x": [], "y": []})
        runs[-1]["x"].append(t)
        runs[-1]["y"].append(s)
        last = k
    return runs


def _trace_panels(trace: dict) -> list[tuple[str, list[dict]]]:
    """Each panel's label and rows (the series, or a step's scores, its threshold and the runs
    above it; the labelled ranges in every panel), x and y as columns the browser flattens."""
    bucket = int(trace.get("bucket") or 1)
    x = [k * bucket for k in range(len(trace["values"]))]  # the first point of each bucket
    ranges = [{"kind": "range", "a": a, "b": b + 1} for a, b in trace["ranges"]]
    panels = [("value", [{"kind": "value", "x": x, "y": [_round(v) for v in trace["values"]]}])]
    for step, scores, threshold in zip(trace["steps"], trace["scores"], trace["thresholds"]):
        y = [_round(v) for v in scores]
        rows = [{"kind": "score", "x": x, "y": y}]
        if threshold is not None and math.isfinite(threshold):
            rows.append({"kind": "threshold", "t": _round(threshold)})
            rows += [{"kind": "above threshold", **r} for r in _above(x, y, threshold)]
        panels.append((f"after {step}", rows))
    return [(label, ranges + rows) for label, rows in panels]


def _trace_layers(x: dict, colour: dict) -> list[dict]:
    """A panel's layers on the time axis ``x``: the ranges shaded, the series or scores, the part
    above the threshold and the threshold (dashed, across the panel)."""
    line = {"type": "line", "strokeWidth": 0.8, "clip": True}
    return [
        {
            "transform": [{"filter": "datum.kind === 'range'"}],
            "mark": {"type": "rect", "color": "#d62728", "opacity": 0.18, "clip": True},
            "encoding": {"x": {**x, "field": "a"}, "x2": {"field": "b"}},
        },
        {
            "transform": [
                {"filter": "datum.kind === 'value' || datum.kind === 'score'"},
                {"flatten": ["x", "y"]},
            ],
            "mark": line,
            "encoding": {"x": x, "y": {"field": "y", "type": "quantitative"}, "color": colour},
        },
        {
            "transform": [{"filter": "datum.kind === 'above threshold'"}, {"flatten": ["x", "y"]}],
            "mark": {**line, "strokeWidth": 1.0},
            "encoding": {
                "x": x,
                "y": {"field": "y", "type": "quantitative"},
                "detail": {"field": "seg", "type": "nominal"},
                "color": colour,
            },
        },
        {
            "transform": [{"filter": "datum.kind === 'threshold'"}],
            "mark": {"type": "rule", "strokeDash": [5, 3], "strokeWidth": 1},
            "encoding": {
                "y": {"field": "t", "type": "quantitative"},
                "color": colour,
                "tooltip": [{"field": "t", "title": "threshold"}],
            },
        },
    ]


def trace_chart(trace: dict, title: str) -> tuple[dict, int]:
    """The figure of one run's trace (see the module docstring) and its height (px): one panel per
    row on one time axis, its own data each; labels (the steps, the title) reach it as text only.

    >>> trace = {"concept": "A", "series": "A-1", "bucket": 1, "values": [0.0, 1.0, 0.5],
    ...          "ranges": [[1, 1]], "steps": ["if"], "scores": [[0.1, 0.9, 0.2]], "thresholds": [0.5]}
    >>> spec, height = trace_chart(trace, "d / s")
    >>> [p["encoding"]["y"]["title"] for p in spec["vconcat"]], height
    (['value', 'after if'], 322)
    """
    panels = _trace_panels(trace)
    bucket = int(trace.get("bucket") or 1)
    end = max(1, len(trace["values"]) * bucket)
    legend = {"orient": "top", "title": None}
    colour = {
        "field": "kind",
        "type": "nominal",
        "scale": {"domain": list(TRACE_COLOURS), "range": list(TRACE_COLOURS.values())},
    }
    x_title = "time point" + (f" (largest score of every {bucket} points)" if bucket > 1 else "")
    charts = []
    for k, (label, rows) in enumerate(panels):
        last = k == len(panels) - 1
        x = {
            "field": "x",
            "type": "quantitative",
            "scale": {"domain": [0, end], "nice": False},
            "title": x_title if last else None,
            "axis": {"labels": last, "ticks": True},
        }
        y = {"title": label, "axis": {"titleAngle": 0, "titleAlign": "right", "titleLimit": 120}}
        charts.append(
            {
                "data": {"values": rows},
                "width": WIDTH - 300,
                "height": PANEL_HEIGHT,
                "encoding": {"y": y},
                "layer": _trace_layers(x, {**colour, "legend": legend if k == 0 else None}),
            }
        )
    spec = {
        **base_spec(
            f"{title}: series {trace['series']} of test concept {trace['concept']} (ranges "
            "shaded), scores after each step (dashed: threshold)"
        ),
        "vconcat": charts,
        "spacing": 6,
        "resolve": {"scale": {"y": "independent", "color": "shared"}},
    }
    return spec, int(120 + len(panels) * (PANEL_HEIGHT + 6) + 50)


def trace_section(results: Sequence[RunResult], figs) -> str | None:
    """One figure per (dataset, scenario, strategy, detector) whose first run keeps a trace; None
    when no run does."""
    seen, out = set(), []
    for r in sorted(results, key=lambda r: r.seed):
        trace = ((r.extras or {}).get("time_series") or {}).get("trace")
        key = (r.dataset, r.scenario, r.strategy, r.detector)
        if not trace or key in seen:
            continue
        seen.add(key)
        title = " / ".join(key) + f" / seed {r.seed}"
        spec, height = trace_chart(trace, title)
        description = f"scores per step on series {trace['series']}: {title}"
        out.append(figs.chart(spec, height, "time series", description, "trace", *key))
    if not out:
        return None
    legend = (
        "<p class='legend'>One test series of a time-series dataset, its labelled anomaly ranges (shaded) "
        "and, after every training step, the detector's score at each time point (a window's score mapped "
        "back to the points it covers) with its threshold (dashed); the part above the threshold is what the "
        "detector flags, what the range metrics at the detector's threshold score.</p>"
    )
    return legend + H.figure_grid(out)
