"""The time-series figure of a report: one series (channel) of a test concept, its labelled
anomaly ranges, and the detector's scores and threshold after every training step.

A run whose test concepts have a time axis (the telemanom loader) keeps the trace of one series
(``extras["time_series"]["trace"]``, see :class:`clad.core.evaluation.Evaluation`): the first
series holding an anomaly of the first such test concept, its values (first feature), its ranges,
and after every step the point scores (windows mapped back to points) and the threshold. A long
series is summarised in buckets of ``bucket`` points (the largest score of each bucket, the mean
value), at most 2,000 per series. The figure stacks one panel per step under the series, on one
time axis, so 7-10 steps stay readable; scores above the threshold are what the detector flags.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..results.record import RunResult
from . import html as H

__all__ = ["trace_figure", "draw_traces", "trace_section"]


def _shade(ax, ranges) -> None:
    for a, b in ranges:
        ax.axvspan(a, b + 1, color="#d62728", alpha=0.18, linewidth=0)


def trace_figure(trace: dict, title: str):
    """The figure of one run's trace (see the module docstring)."""
    from .plots import new_axes

    steps = list(trace["steps"])
    n = len(steps)
    fig, axes = new_axes((11.0, 1.5 + 1.05 * (n + 1)), n + 1, 1)
    axes = np.atleast_1d(axes)
    bucket = int(trace.get("bucket") or 1)
    x = np.arange(len(trace["values"])) * bucket  # the first point of each bucket
    values = np.array([np.nan if v is None else v for v in trace["values"]], dtype=float)
    top = axes[0]
    top.plot(x, values, color="#333333", linewidth=0.7)
    _shade(top, trace["ranges"])
    top.set_ylabel("value", fontsize=8)
    top.set_title(
        f"{title}: series {trace['series']} of test concept {trace['concept']} (ranges shaded), "
        "scores after each step (dashed: threshold)",
        fontsize=9,
    )
    for ax, step, scores, threshold in zip(axes[1:], steps, trace["scores"], trace["thresholds"]):
        s = np.array([np.nan if v is None else v for v in scores], dtype=float)
        ax.plot(x, s, color="#1f77b4", linewidth=0.7)
        if threshold is not None and np.isfinite(threshold):
            ax.axhline(threshold, color="#ff7f0e", linestyle="--", linewidth=0.9)
            above = np.where(s > threshold, s, np.nan)
            ax.plot(x, above, color="#ff7f0e", linewidth=0.9)
        _shade(ax, trace["ranges"])
        ax.set_ylabel(f"after {step}", fontsize=8, rotation=0, ha="right", va="center")
        ax.tick_params(labelsize=7)
    for ax in axes[:-1]:  # one time axis: the panels share the bottom one's ticks and label
        ax.sharex(axes[-1])
        ax.tick_params(labelbottom=False)
    axes[-1].tick_params(axis="x", labelbottom=True, labelsize=7)
    axes[-1].set_xlabel(
        "time point" + (f" (largest score of every {bucket} points)" if bucket > 1 else ""),
        fontsize=8,
    )
    return fig


def draw_traces(parts: list) -> list[list]:
    """One :func:`trace_figure` per (trace, title) of ``parts`` (a planned drawing of the report: kept
    while its content does not change, drawn in worker processes with ``clad report --jobs``)."""
    return [[trace_figure(trace, title)] for trace, title in parts]


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
        out.extend(
            figs.plan(
                draw_traces,
                ([(trace, title)],),
                [
                    (
                        "time series",
                        f"scores per step on series {trace['series']}: {title}",
                        "trace",
                        key,
                    )
                ],
            )
        )
    if not out:
        return None
    legend = (
        "<p class='legend'>One test series of a time-series dataset, its labelled anomaly ranges (shaded) "
        "and, after every training step, the detector's score at each time point (a window's score mapped "
        "back to the points it covers) with its threshold (dashed); the part above the threshold is what the "
        "detector flags, what the range metrics at the detector's threshold score.</p>"
    )
    return legend + H.figure_grid(out)
