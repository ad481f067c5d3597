"""Critical-difference diagrams (Demšar 2006) of a statistical comparison: the post-hoc test's
verdict as the verdict decides it, its bars of indistinguishable methods, the Vega-Lite figure the
report's browser draws (:func:`cd_chart`) and, for a paper, the same on a matplotlib Axes
(:func:`plot_cd`, scikit-posthocs' diagram)."""

from __future__ import annotations

import math
import textwrap
import zlib
from typing import TYPE_CHECKING

import pandas as pd

from ..errors import CladValueError
from .charts import PALETTE, base_spec, text_px
from .plots import FONT, line_height, new_axes, set_title, text_width, wrap_text

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from .stats import Comparison

#: offered by clad.report (cd_chart, cd_significance, cd_title and cd_cliques are shared inside clad)
__all__ = ["plot_cd"]


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


def _stacked(bars: list[tuple], ranks) -> tuple[list[tuple[float, float, int]], int]:
    """Each bar's (low rank, high rank, row), the bars stacked in rows so that none overlaps
    another in its row, and the number of rows.

    >>> import pandas as pd
    >>> _stacked([("a", "b"), ("b", "c"), ("c", "d")], pd.Series({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}))
    ([(1.0, 2.0, 0), (2.0, 3.0, 1), (3.0, 4.0, 0)], 2)
    """
    levels: list[list[tuple[float, float]]] = []
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
    return bar_rows, len(levels)


def _cd_spec(
    title: str, lines: list[dict], points: list[dict], texts: list[dict], width: int, height: int
) -> tuple[dict, int]:
    """A critical-difference diagram's specification from its rules, points and texts (placed in
    pixels, y growing downwards) and its height with the wrapped title."""

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
        **base_spec(title),
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


def cd_chart(comparison, *, test: str = "nemenyi", cd: float | None = None) -> tuple[dict, int]:
    """A critical-difference diagram (Demšar 2006) of a :class:`~clad.report.stats.Comparison`:
    average ranks on an axis (1 = best, on the left), each method joined to its name (the better
    half on the left, the rest on the right), a bar under every maximal set of methods the post-hoc
    test cannot tell apart (:func:`cd_cliques`) and, for Nemenyi, the critical difference above the
    axis. When the omnibus test did not reject, the post-hoc tests are not read: one grey bar joins
    every method and the title says "not tested". ``cd`` is Nemenyi's critical difference
    (:func:`clad.report.posthoc.critical_difference`), drawn when Nemenyi is the test drawn."""
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
        max(text_px([labels[m] for m in left], 10), text_px([labels[m] for m in right], 10)) + 12,
        300,
    )
    axis_w = max(240.0, min(560.0, 60.0 * (k - 1)))
    x0 = label_w + 20
    lo_rank, hi_rank = 1.0, float(max(k, 2))

    def x(r: float) -> float:
        return round(x0 + (r - lo_rank) / (hi_rank - lo_rank) * axis_w, 2)

    axis_y = 46.0
    bar_rows, n_levels = _stacked(bars, ranks)
    label_top = axis_y + 14 + 9 * n_levels + 12
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

    return _cd_spec(cd_title(comparison, used), lines, points, texts, width, height)


class _Label(str):
    """A method's name whose hash is the same in every process. scikit-posthocs finds the bars of
    a diagram as sets of names, and the order a set of plain strings iterates in changes with each
    interpreter's hash seed: which of two bars that start at the same rank is drawn on top, and the
    order of each bar's points, changed from one report to the next."""

    __slots__ = ()

    def __hash__(self) -> int:
        return zlib.crc32(self.encode("utf-8"))


def _stable_labels(ranks, sig):
    """``ranks`` and the p-value matrix ``sig`` with their names as :class:`_Label` (the same text)."""

    def labels(index):  # object dtype: a string dtype would store plain strings again
        return pd.Index([_Label(str(m)) for m in index], dtype=object)

    ranks = ranks.copy()
    ranks.index = labels(ranks.index)
    sig = sig.copy()
    sig.index, sig.columns = labels(sig.index), labels(sig.columns)
    return ranks, sig


def _cd_size(comparison: "Comparison", used: str) -> tuple[float, float]:
    """A critical-difference diagram's size (inches): 3.5 in wide (one journal column), wider only
    where the methods' names on both sides leave the rank axis less than 1.2 in."""
    labels = [f"{k} ({v:.2f})" for k, v in comparison.average_ranks.items()]
    width = max(3.5, 2 * text_width(labels, FONT["tick"]) + 1.6)
    title = wrap_text(cd_title(comparison, used), width - 0.6, FONT["title"])
    return width, (title.count("\n") + 1) * line_height(FONT["title"]) + 1.3 + 0.3 * (
        math.ceil(comparison.n_methods / 2) + 2
    )


def plot_cd(comparison: "Comparison", ax: "Axes | None" = None, *, test: str = "nemenyi") -> "Axes":
    """Critical-difference diagram (``scikit_posthocs.critical_difference_diagram``) of a
    :class:`~clad.report.stats.Comparison`: average ranks on the axis, methods joined by a bar
    where the post-hoc test (``"nemenyi"`` or ``"wilcoxon_holm"``) finds no significant difference.
    It draws the comparison's verdict (:func:`clad.report.stats.comparison_verdict`): when the
    omnibus test did not reject, the post-hoc tests are not read, one grey bar joins every method
    and the title says "not tested"."""
    try:
        import scikit_posthocs as sp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "critical-difference diagrams need scikit-posthocs: pip install 'clad[report]'"
        ) from None
    sig, used = cd_significance(comparison, test)
    if ax is None:
        ax = new_axes(_cd_size(comparison, used))
    grey = not comparison.verdict.posthoc_tested  # gated off by the omnibus test: drawn in grey
    ranks, sig = _stable_labels(comparison.average_ranks, sig)
    palette = {m: "#9a9a9a" for m in ranks.index} if grey else None
    sp.critical_difference_diagram(
        ranks,
        sig,
        alpha=comparison.alpha,
        ax=ax,
        label_fmt_left="{label} ({rank:.2f})",
        label_fmt_right="({rank:.2f}) {label}",
        label_props={"fontsize": FONT["tick"]},
        color_palette=palette,
        crossbar_props={"color": "#9a9a9a"} if grey else None,
    )
    ax.tick_params(labelsize=FONT["tick"])
    # the critical difference: average ranks further apart than this differ (Nemenyi)
    if used == "Nemenyi":
        from .posthoc import critical_difference

        cd = critical_difference(comparison.n_blocks, comparison.n_methods, comparison.alpha)
        start = 1.0
        from matplotlib.transforms import ScaledTranslation, blended_transform_factory

        # above the tick labels (in points from the rank axis, whatever the figure's height)
        above = blended_transform_factory(
            ax.transData, ax.transData + ScaledTranslation(0, 0.3, ax.figure.dpi_scale_trans)
        )
        ax.plot(
            [start, start + cd],
            [0, 0],
            color="#9a9a9a" if grey else "black",
            lw=1.6,
            gid="cd-bar",
            solid_capstyle="butt",
            marker="|",
            markersize=6,
            transform=above,
            clip_on=False,
        )
        ax.text(
            start + cd / 2,
            0,
            f"CD = {cd:.2f}",
            ha="center",
            va="bottom",
            fontsize=FONT["tick"],
            transform=above + ScaledTranslation(0, 0.04, ax.figure.dpi_scale_trans),
        )
    ax.set_xlabel("average rank (1 = best)", fontsize=FONT["label"])
    set_title(ax, cd_title(comparison, used), width=ax.figure.get_figwidth() - 0.6)
    if used == "Nemenyi":
        ax.title.set_y(1.0)
        # room for the CD bar above the ticks
        ax.set_title(ax.get_title(), fontsize=FONT["title"], pad=34)
    return ax
