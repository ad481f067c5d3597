"""Plotting prepared results with matplotlib (no pyplot, no global backend, never ``show()``).

Every ``plot_*`` function takes data already aggregated by :mod:`clad.report.aggregate` or
:mod:`clad.report.stats` and an optional :class:`matplotlib.axes.Axes`; without one it draws on a
new :class:`matplotlib.figure.Figure` (rendered off-screen by the Agg canvas). It returns the Axes
and computes nothing but layout. The ``*_figure`` functions build the whole figures of a report
(small multiples sharing one legend, colour scale and key), sized from their data by
:mod:`clad.report.layout`: figures grow with the number of concepts and the length of names, tick
labels stand upright when they fit and are rotated when they do not, titles are wrapped to their
figure and legends sit outside the axes. matplotlib is imported when a function is called, not at
``import clad``.
"""

from __future__ import annotations

import math
import zlib
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import pandas as pd

from ..metrics.base import base_metric_shown
from . import layout as L
from .figure_data import HeatmapData
from .charts import cd_significance, cd_title
from .canvas import FONT, figure_png, new_axes
from .canvas import legend_below as _legend_below
from .canvas import mpl as _mpl
from .canvas import new_figure as _figure
from .canvas import suptitle as _suptitle

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .stats import Comparison

__all__ = [
    "new_axes",
    "figure_png",
    "plot_heatmap",
    "plot_curves",
    "plot_forgetting",
    "plot_cd",
    "heatmap_figures",
    "HeatmapFigures",
    "curves_figure",
    "forgetting_figure",
    "cd_figure",
    "CD_WIDTH",
    "config_styles",
    "cells_of",
    "BAD_COLOUR",
    "FUTURE_HATCH",
    "UNLEARNED_HATCH",
    "FONT",
    "plot_stream",
]

#: colour of undefined (NaN) cells
BAD_COLOUR = "#d9d9d9"
#: hatching of future cells (step i before the concept was learned, i < t(j))
FUTURE_HATCH = "//"
#: hatching of test concepts never learned
UNLEARNED_HATCH = ".."
#: tallest figure (inches) before a heatmap grid continues in another figure
MAX_HEIGHT = 18.0


def _axes(ax, figsize):
    if ax is None:
        _, ax = new_axes(figsize)
    return ax


def _axes_width(ax) -> float:
    """Width of ``ax`` in inches (before the layout engine has run: an upper bound)."""
    return ax.get_position().width * ax.figure.get_figwidth()


def _title(ax, text: str, width: float | None = None, fontsize: float = FONT["title"]) -> None:
    ax.set_title(
        L.wrap(text, width if width is not None else max(_axes_width(ax), 1.0), fontsize),
        fontsize=fontsize,
    )


def _category_ticks(ax, axis: str, labels: Sequence[str], spacing: float, positions=None) -> None:
    """Ticks at ``positions`` (default 0..n-1) labelled ``labels``; x labels rotated 90° when the
    widest does not fit in ``spacing`` inches."""
    positions = range(len(labels)) if positions is None else positions
    if axis == "x":
        rotation = L.tick_rotation(labels, spacing, FONT["tick"])
        ax.set_xticks(
            list(positions), labels=list(labels), rotation=rotation, fontsize=FONT["tick"]
        )
    else:
        ax.set_yticks(list(positions), labels=list(labels), fontsize=FONT["tick"])


def _x_label_extent(labels: Sequence[str], spacing: float) -> float:
    """Height (inches) the x tick labels take under the axis."""
    if L.tick_rotation(labels, spacing, FONT["tick"]):
        return L.text_width(labels, FONT["tick"]) + 0.1
    return L.line_height(FONT["tick"]) + 0.1


def _legend_height(labels: Sequence[str], width: float) -> float:
    labels = [L.wrap(t, width - 0.8, FONT["legend"]) for t in labels]
    ncols = L.legend_columns(labels, FONT["legend"], width - 0.8)
    lines = max((t.count("\n") + 1 for t in labels), default=1)
    return math.ceil(len(labels) / ncols) * (lines * L.line_height(FONT["legend"]) + 0.06) + 0.15


def config_styles(labels: Sequence[str]) -> dict[str, dict]:
    """A distinct colour, line style and marker per label (the same label gets the same style in
    every figure of a report): 10 colours, then 20, then combined with line styles."""
    mpl = _mpl()
    labels = list(dict.fromkeys(labels))
    colours = list(mpl.colormaps["tab10" if len(labels) <= 10 else "tab20"].colors)
    dashes = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    return {
        lab: {
            "color": colours[k % len(colours)],
            "linestyle": dashes[(k // len(colours)) % len(dashes)],
            "marker": markers[(k // len(colours)) % len(markers)],
        }
        for k, lab in enumerate(labels)
    }


# -- heatmaps ------------------------------------------------------------------------------


def _fmt(v: float) -> str:
    return f"{v:.2f}"


def _heatmap_geometry(data: HeatmapData, annotate: bool | None):
    """(annotate, cell width, cell height) in inches for R of this shape."""
    n_rows, n_cols = np.shape(data.mean)
    if annotate is None:
        annotate = n_cols <= 10 and n_rows <= 16
    with_std = annotate and bool(np.isfinite(np.asarray(data.std, float)).any())
    cell_w = L.category_spacing(data.cols, FONT["tick"], 0.55 if annotate else 0.16)
    cell_h = max(0.42 if with_std else 0.3 if annotate else 0.16, L.line_height(FONT["tick"]) * 1.3)
    if annotate and data.at_chance is not None:  # room for a chance mark above a two-line value
        cell_h = max(cell_h, 2 * (_chance_offset_points() + CHANCE_SIZE_POINTS / 2 + 1.0) / 72.0)
    return annotate, cell_w, cell_h


def _row_labels(data: HeatmapData) -> list[str]:
    return [f"{i}: {c}" for i, c in enumerate(data.rows)]


#: the mark of a heatmap cell that cannot be told from its chance level
CHANCE_MARKER = "o"


#: the chance mark's diameter (points)
CHANCE_SIZE_POINTS = 4.7


def _chance_offset_points() -> float:
    """How far above a cell's centre its chance mark sits (points): clear of a two-line value
    (``mean`` and ``± std``, centred in the cell) by a point."""
    text_half = FONT["cell"] * 1.2  # two lines of the cell font, half their height
    return text_half + CHANCE_SIZE_POINTS / 2 + 1.0


def _chance_points(data: HeatmapData) -> np.ndarray:
    """(x, y) of the chance marks: the centre of every cell at chance (drawn above its value)."""
    if data.at_chance is None:
        return np.empty((0, 2))
    i, j = np.nonzero(np.asarray(data.at_chance))
    return np.column_stack([j, i]).astype(float)


def _draw_chance(ax, data: HeatmapData, annotate: bool = True):
    """The chance marks of ``data`` on ``ax`` (an empty set of points when none: it is updated
    later): above the cell's value when values are written, so a mark never covers one."""
    from matplotlib.transforms import ScaledTranslation

    pts = _chance_points(data)
    marks = ax.scatter(
        pts[:, 0],
        pts[:, 1],
        s=CHANCE_SIZE_POINTS**2,
        marker=CHANCE_MARKER,
        facecolors="white",
        edgecolors="black",
        linewidths=0.8,
        zorder=5,
        gid="chance",
    )
    if annotate:
        marks.set_offset_transform(
            ax.transData
            + ScaledTranslation(0, _chance_offset_points() / 72.0, ax.figure.dpi_scale_trans)
        )
    marks.set_in_layout(False)
    return marks


def _heatmap_key(show_unlearned: bool, show_chance: bool = False):
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor="white", edgecolor="black", lw=2, label="learned at this step"),
        Patch(
            facecolor="#888888",
            hatch=FUTURE_HATCH,
            edgecolor="white",
            label="future (not yet learned)",
        ),
        Patch(facecolor=BAD_COLOUR, edgecolor="none", label="n/a (undefined)"),
    ]
    if show_unlearned:
        handles.insert(
            2,
            Patch(
                facecolor="#888888", hatch=UNLEARNED_HATCH, edgecolor="white", label="never learned"
            ),
        )
    if show_chance:
        from matplotlib.lines import Line2D

        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker=CHANCE_MARKER,
                markersize=7,
                markerfacecolor="white",
                markeredgecolor="black",
                label="cannot be told from chance",
            )
        )
    return handles


def _cells_patch(ax, cells, label: str, **style) -> None:
    """One patch covering the cells ``(i, j)`` (row, column) of an image (drawn at once, however
    many cells): clipped to the axes, left out of the layout and of the data limits (the image has
    set them). Its ``gid`` is ``label``; ``cells_of`` reads the cells back."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    if not cells:
        return
    corners = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5]])
    vertices = np.concatenate([corners + (j, i) for i, j in cells])
    codes = np.tile(
        [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY], len(cells)
    )
    patch = PathPatch(Path(vertices, codes), gid=label, **style)
    patch.set_in_layout(False)
    patch.set_clip_path(ax.patch)
    ax.add_artist(patch)


def cells_of(ax, label: str) -> set[tuple[int, int]]:
    """The cells ``(i, j)`` marked by the patch ``label`` (``"learned"``, ``"future"``, ``"never learned"``)
    of a heatmap drawn by :func:`plot_heatmap`."""
    out = set()
    for p in ax.patches:
        if p.get_gid() == label:
            v = p.get_path().vertices.reshape(-1, 5, 2)[:, 0] + 0.5
            out |= {(int(round(y)), int(round(x))) for x, y in v}
    return out


def _draw_heatmap(
    ax,
    data: HeatmapData,
    *,
    vmin,
    vmax,
    cmap,
    annotate,
    cell_w,
    x_labels=True,
    y_labels=True,
    axis_labels=True,
):
    """R of one configuration on ``ax``: cells, marks, annotations and ticks; returns the image."""
    mpl = _mpl()
    values = np.ma.masked_invalid(np.asarray(data.mean, dtype=np.float64))
    cm = mpl.colormaps[cmap].with_extremes(bad=BAD_COLOUR)
    im = ax.imshow(values, cmap=cm, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    n_rows, n_cols = values.shape
    t = np.asarray(data.learned_at)
    hatched = {"alpha": 0.6, "edgecolor": "white", "fill": False, "lw": 0}
    _cells_patch(
        ax,
        [(i, j) for j in range(n_cols) if t[j] >= 0 for i in range(min(t[j], n_rows))],
        "future",
        hatch=FUTURE_HATCH,
        **hatched,
    )
    _cells_patch(
        ax,
        [(i, j) for j in range(n_cols) if t[j] < 0 for i in range(n_rows)],
        "never learned",
        hatch=UNLEARNED_HATCH,
        **hatched,
    )
    _cells_patch(
        ax,
        [(t[j], j) for j in range(n_cols) if 0 <= t[j] < n_rows],
        "learned",
        fill=False,
        edgecolor="black",
        lw=2.0,
    )
    if annotate:
        for i in range(n_rows):
            for j in range(n_cols):
                s, colour = _cell_text(data, i, j, im.norm)
                ax.text(
                    j,
                    i,
                    s,
                    ha="center",
                    va="center",
                    fontsize=FONT["cell"],
                    color=colour,
                    in_layout=False,
                )
    _draw_chance(ax, data, annotate)
    if x_labels:
        _category_ticks(ax, "x", data.cols, cell_w)
    else:
        ax.set_xticks(range(n_cols), labels=[])
    if y_labels:
        _category_ticks(ax, "y", _row_labels(data), 0.0)
    else:
        ax.set_yticks(range(n_rows), labels=[])
    if axis_labels:
        ax.set_xlabel("test concept", fontsize=FONT["label"])
        ax.set_ylabel("training step: concept learned", fontsize=FONT["label"])
    return im


def plot_heatmap(
    data: HeatmapData,
    ax: "Axes | None" = None,
    *,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap: str = "viridis",
    annotate: bool | None = None,
    colorbar: bool = True,
    legend: bool = True,
) -> "Axes":
    """R averaged over seeds: rows = training steps, columns = test concepts.

    Undefined cells are masked (drawn in :data:`BAD_COLOUR`, annotated ``n/a``), never shown as a
    number; the cells ``R[t(j), j]`` where each concept was first learned carry a black border;
    future cells ``i < t(j)`` are hatched ``//`` and never-learned concepts ``..``. Annotations are
    ``mean`` and, with several seeds, ``± std`` (by default only while the cells are few enough to
    hold them: up to 10 test concepts). Without ``ax`` the figure is sized from R's shape and labels.
    """
    annotate, cell_w, cell_h = _heatmap_geometry(data, annotate)
    if ax is None:
        rows = _row_labels(data)
        n_rows, n_cols = np.shape(data.mean)
        width = (
            max(n_cols * cell_w, 2.0)
            + L.text_width(rows, FONT["tick"])
            + 0.6
            + (1.0 if colorbar else 0.1)
        )
        height = (
            n_rows * cell_h
            + _x_label_extent(data.cols, cell_w)
            + 1.0
            + (_legend_height(["x" * 30] * 2, width) if legend else 0.0)
        )
        _, ax = new_axes((width, height))
    im = _draw_heatmap(ax, data, vmin=vmin, vmax=vmax, cmap=cmap, annotate=annotate, cell_w=cell_w)
    _title(
        ax,
        f"{data.dataset} / {data.scenario}\n{data.strategy} + {data.detector}: {base_metric_shown(data.base_metric)} "
        f"({data.seeds_text})",
        width=max(_axes_width(ax), 2.5),
    )
    if legend:
        from matplotlib.transforms import ScaledTranslation

        below = ax.transAxes + ScaledTranslation(
            0, -0.5, ax.figure.dpi_scale_trans
        )  # under the x label
        ax.legend(
            handles=_heatmap_key(
                bool((np.asarray(data.learned_at) < 0).any()),
                data.at_chance is not None and bool(np.any(data.at_chance)),
            ),
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            bbox_transform=below,
            ncol=2,
            fontsize=FONT["legend"],
            frameon=False,
        )
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8, label=base_metric_shown(data.base_metric))
    return ax


def _cell_text(data: HeatmapData, i: int, j: int, norm) -> tuple[str, str]:
    """(annotation, colour) of cell (i, j): ``mean`` and ``± std``, or ``n/a`` when undefined."""
    v = float(data.mean[i, j])
    if np.isnan(v):
        return "n/a", "#444444"
    s = _fmt(v) + ("" if np.isnan(data.std[i, j]) else f"\n±{float(data.std[i, j]):.2f}")
    return s, ("black" if norm(v) > 0.6 else "white")


def _arrangement(items: Sequence[HeatmapData], max_cols: int) -> list[list[int]]:
    """Rows of panel indices: strategies as rows and detectors as columns when the panels are every
    strategy x detector pair and the detectors fit in a row; otherwise in order, ``max_cols`` a row."""
    strategies = list(dict.fromkeys(h.strategy for h in items))
    detectors = list(dict.fromkeys(h.detector for h in items))
    where = {(h.strategy, h.detector): k for k, h in enumerate(items)}
    if len(where) == len(items) == len(strategies) * len(detectors) and len(detectors) <= max_cols:
        return [[where[(s, d)] for d in detectors] for s in strategies]
    return [list(range(k, min(k + max_cols, len(items)))) for k in range(0, len(items), max_cols)]


class HeatmapFigures:
    """Builds the small-multiple R figures of :func:`heatmap_figures`, reusing the figures of the
    previous call when the next group has the same layout (same panels, concepts and seeds: e.g.
    the same configurations under another base metric or in another scenario). Only the cells, the
    annotations, the colour-bar label and the title change, and the layout computed for the first
    is kept. Save (draw) each figure before the next call: a reused figure is changed in place."""

    def __init__(
        self,
        *,
        vmin: float = 0.0,
        vmax: float = 1.0,
        cmap: str = "viridis",
        annotate: bool | None = None,
    ):
        self.vmin, self.vmax, self.cmap, self.annotate = vmin, vmax, cmap, annotate
        self._last: tuple | None = None
        self._figures: list = []

    @staticmethod
    def _signature(items: Sequence[HeatmapData]) -> tuple:
        return tuple(
            (
                h.strategy,
                h.detector,
                h.rows,
                h.cols,
                tuple(h.learned_at),
                len(h.seeds),
                h.computations,
                h.at_chance is None,
            )
            for h in items
        )

    def __call__(self, items: Sequence[HeatmapData]) -> list["Figure"]:
        if not items:
            return []
        signature = self._signature(items)
        if signature == self._last:
            return self._update(items)
        self._last, self._figures = signature, self._build(items)
        return [f[0] for f in self._figures]

    def _suptitle(self, first: HeatmapData, annotate: bool, part: int, parts: int) -> str:
        return (
            f"R of {first.dataset} / {first.scenario}: {base_metric_shown(first.base_metric)} ({first.seeds_text}; mean"
            + (" ± std" if annotate and (first.computations or len(first.seeds)) > 1 else "")
            + " per cell)"
            + (f", part {part + 1} of {parts}" if parts > 1 else "")
        )

    def _update(self, items: Sequence[HeatmapData]) -> list["Figure"]:
        out = []
        for part, (fig, panels, _, sup_lines) in enumerate(self._figures):
            text = L.wrap(
                self._suptitle(items[0], panels[0][3], part, len(self._figures)),
                fig.get_figwidth() - 0.3,
                FONT["suptitle"],
            )
            if text.count("\n") + 1 != sup_lines:  # another title height: lay the figures out again
                self._last = None
                return self(items)
        for part, (fig, panels, cbar, _) in enumerate(self._figures):
            for k, im, texts, annotate in panels:
                h = items[k]
                im.set_data(np.ma.masked_invalid(np.asarray(h.mean, dtype=np.float64)))
                for marks in im.axes.collections:
                    if marks.get_gid() == "chance":
                        marks.set_offsets(_chance_points(h))
                for (i, j), t in texts.items():
                    s, colour = _cell_text(h, i, j, im.norm)
                    t.set_text(s)
                    t.set_color(colour)
            cbar.set_label(base_metric_shown(items[0].base_metric))
            fig._suptitle.set_text(
                L.wrap(
                    self._suptitle(items[0], panels[0][3], part, len(self._figures)),
                    fig.get_figwidth() - 0.3,
                    FONT["suptitle"],
                )
            )
            out.append(fig)
        return out

    def _build(self, items: Sequence[HeatmapData]) -> list[tuple]:
        first = items[0]
        annotate = _heatmap_geometry(first, self.annotate)[0]
        cell_w = max(_heatmap_geometry(h, self.annotate)[1] for h in items)
        cell_h = max(_heatmap_geometry(h, self.annotate)[2] for h in items)
        shared = all(h.rows == first.rows and h.cols == first.cols for h in items)
        n_rows = max(np.shape(h.mean)[0] for h in items)
        n_cols = max(np.shape(h.mean)[1] for h in items)
        y_w = max(L.text_width(_row_labels(h), FONT["tick"]) for h in items) + 0.1
        x_h = max(_x_label_extent(h.cols, cell_w) for h in items)
        axes_w = max(n_cols * cell_w, 1.2)
        title_w = max(axes_w, 2.2)
        titles = [L.wrap(f"{h.strategy} + {h.detector}", title_w, FONT["title"]) for h in items]
        title_h = max(L.text_size(t, FONT["title"])[1] for t in titles) + 0.08
        panel_w = max(axes_w + (0.0 if shared else y_w + 0.3), title_w) + 0.25
        panel_h = n_rows * cell_h + title_h + (0.1 if shared else x_h + 0.3) + 0.1
        rows = _arrangement(items, max(1, int((L.MAX_WIDTH - 1.9 - y_w) // panel_w)))
        rows_per_fig = max(1, int((MAX_HEIGHT - 2.3 - x_h) // panel_h))
        chunks = [rows[k : k + rows_per_fig] for k in range(0, len(rows), rows_per_fig)]
        key = _heatmap_key(
            any((np.asarray(h.learned_at) < 0).any() for h in items),
            any(h.at_chance is not None for h in items),
        )
        built = []
        for part, grid in enumerate(chunks):
            ncols = max(len(r) for r in grid)
            width = ncols * panel_w + y_w + 1.9
            suptitle = L.wrap(
                self._suptitle(first, annotate, part, len(chunks)), width - 0.3, FONT["suptitle"]
            )
            height = (
                len(grid) * panel_h
                + x_h
                + 0.9
                + _legend_height([h.get_label() for h in key], width)
                + L.text_size(suptitle, FONT["suptitle"])[1]
                + 0.1
            )
            fig = _figure((width, height))
            axes = fig.subplots(len(grid), ncols, squeeze=False)
            panels, im = [], None
            for r, row in enumerate(grid):
                for c in range(ncols):
                    ax = axes[r, c]
                    if c >= len(row):
                        ax.remove()
                        continue
                    h = items[row[c]]
                    last_in_column = r + 1 == len(grid) or c >= len(grid[r + 1])
                    x_labels, y_labels = not shared or last_in_column, not shared or c == 0
                    im = _draw_heatmap(
                        ax,
                        h,
                        vmin=self.vmin,
                        vmax=self.vmax,
                        cmap=self.cmap,
                        annotate=annotate,
                        cell_w=cell_w,
                        axis_labels=False,
                    )
                    if (
                        shared
                    ):  # small multiples: the outer panels label the axes every panel shares
                        bottom = axes[
                            r
                            if last_in_column
                            else max(k for k in range(len(grid)) if c < len(grid[k])),
                            c,
                        ]
                        if ax is not bottom:
                            ax.sharex(bottom)
                        if c:
                            ax.sharey(axes[r, 0])
                        ax.tick_params(labelbottom=x_labels, labelleft=y_labels)
                    if x_labels:
                        ax.set_xlabel("test concept", fontsize=FONT["label"])
                    if y_labels:
                        ax.set_ylabel("training step: concept learned", fontsize=FONT["label"])
                    ax.set_title(titles[row[c]], fontsize=FONT["title"])
                    texts = (
                        {
                            (int(round(t.get_position()[1])), int(round(t.get_position()[0]))): t
                            for t in ax.texts
                        }
                        if annotate
                        else {}
                    )
                    panels.append((row[c], im, texts, annotate))
            cbar = fig.colorbar(
                im,
                ax=[a for a in axes.flat if a in fig.axes],
                shrink=min(0.8, 4.0 / max(height, 1.0) + 0.3),
                label=base_metric_shown(first.base_metric),
                aspect=30,
            )
            _legend_below(fig, key, [h.get_label() for h in key])
            fig.suptitle(suptitle, fontsize=FONT["suptitle"])
            fig.get_layout_engine().execute(
                fig
            )  # laid out once: the cells' contents do not move anything
            fig.set_layout_engine("none")
            built.append((fig, panels, cbar, suptitle.count("\n") + 1))
        return built


def heatmap_figures(
    items: Sequence[HeatmapData],
    *,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap: str = "viridis",
    annotate: bool | None = None,
) -> list["Figure"]:
    """Small multiples of R for configurations of one dataset, scenario and base metric: one panel
    per strategy + detector (strategies in rows, detectors in columns when they fit), one colour
    bar, one key; as many figures as needed to keep each at most
    :data:`~clad.report.layout.MAX_WIDTH` wide (unless one panel is wider) and :data:`MAX_HEIGHT`
    tall. Tick labels are shown on the outer panels only when every panel has the same concepts.
    :class:`HeatmapFigures` does the same and reuses figures from one group to the next."""
    return HeatmapFigures(vmin=vmin, vmax=vmax, cmap=cmap, annotate=annotate)(items)


# -- learning curves -----------------------------------------------------------------------


def _label(strategy: str, detector: str) -> str:
    return f"{strategy} + {detector}"


def _step_labels(part: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    steps = part.drop_duplicates("step").sort_values("step")
    return steps["step"].to_numpy(), [f"{s}: {c}" for s, c in zip(steps["step"], steps["concept"])]


def plot_curves(
    curves: pd.DataFrame,
    ax: "Axes | None" = None,
    *,
    kind: str = "seen",
    title: str | None = None,
    legend: bool = True,
    styles: Mapping[str, dict] | None = None,
) -> "Axes":
    """Learning curves from :func:`clad.report.aggregate.learning_curves` (rows of one dataset,
    scenario and base metric): the mean per step of ``kind`` (``"seen"``: average over learned
    concepts; ``"all"``: over every test concept), one line per strategy + detector, with a
    ± std band over seeds. ``legend=False`` leaves the legend to the caller (a figure legend)."""
    part = curves[curves["kind"] == kind]
    steps, step_labels = _step_labels(part) if not part.empty else (np.array([]), [])
    spacing = L.category_spacing(step_labels, FONT["tick"], 0.3)
    ax = _axes(
        ax,
        (max(4.0, len(step_labels) * spacing) + 1.0, 3.2 + _x_label_extent(step_labels, spacing)),
    )
    groups = list(part.groupby(["strategy", "detector"], sort=False))
    styles = styles or config_styles([_label(s, d) for (s, d), _ in groups])
    for (strategy, detector), g in groups:
        g = g.sort_values("step")
        x, m, s = g["step"].to_numpy(), g["mean"].to_numpy(float), g["std"].to_numpy(float)
        style = styles[_label(strategy, detector)]
        (line,) = ax.plot(x, m, ms=3, lw=1.2, label=_label(strategy, detector), **style)
        band = ~np.isnan(s)
        if band.any():
            ax.fill_between(
                x,
                np.where(band, m - s, np.nan),
                np.where(band, m + s, np.nan),
                color=line.get_color(),
                alpha=0.15,
                lw=0,
            )
    if "chance" in part.columns and part["chance"].notna().any():  # what a scoreless detector gets
        ref = part.groupby("step", sort=True)["chance"].mean()
        ax.plot(
            ref.index.to_numpy(),
            ref.to_numpy(float),
            color="#555555",
            ls="--",
            lw=1.0,
            label="chance",
        )
    if len(steps):
        spacing = _axes_width(ax) / max(len(steps), 1)
        _category_ticks(ax, "x", step_labels, spacing, positions=steps)
        ax.set_ylabel(
            f"{base_metric_shown(part['base_metric'].iloc[0])}, mean over {'seen' if kind == 'seen' else 'all'} concepts",
            fontsize=FONT["label"],
        )
    ax.tick_params(axis="y", labelsize=FONT["tick"])
    ax.set_xlabel("training step: concept learned", fontsize=FONT["label"])
    _title(
        ax,
        title
        or ("average over concepts seen so far" if kind == "seen" else "average over all concepts"),
    )
    ax.grid(alpha=0.3)
    if legend and groups:
        ax.legend(
            fontsize=FONT["legend"], loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False
        )
    return ax


def plot_stream(
    table: pd.DataFrame,
    ax: "Axes | None" = None,
    *,
    ylabel: str,
    title: str = "",
    boundaries=None,
    line: str | None = None,
) -> "Axes":
    """Curves over a stream from :mod:`clad.report.stream` (rows of one panel): the mean per
    evaluation against the training rows seen, one line per strategy + detector (and per value of
    the column ``line``, if given), a ± std band over seeds, and a dotted vertical line at each
    concept boundary in ``boundaries`` (training rows seen when each concept ends)."""
    ax = _axes(ax, (6.0, 4.0))
    keys = ["strategy", "detector"] + ([line] if line else [])
    for values, g in table.groupby(keys, sort=False):
        g = g.sort_values("rows_seen")
        x, m, s = (
            g["rows_seen"].to_numpy(float),
            g["mean"].to_numpy(float),
            g["std"].to_numpy(float),
        )
        (ln,) = ax.plot(
            x,
            m,
            marker=".",
            ms=3,
            label=" + ".join(map(str, values[:2])) + (f" ({values[2]})" if line else ""),
        )
        band = ~np.isnan(s)
        if band.any():
            ax.fill_between(
                x,
                np.where(band, m - s, np.nan),
                np.where(band, m + s, np.nan),
                color=ln.get_color(),
                alpha=0.2,
                lw=0,
            )
    for b in boundaries or ():
        ax.axvline(b, color="black", ls=":", lw=0.8)
    ax.set_xlabel("training rows seen" + (" (dotted: concept boundaries)" if boundaries else ""))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return ax


def _block_layout(
    labels: Sequence[str],
    legend_labels: Sequence[str],
    title: str,
    n_panels: int,
    max_cols: int,
    min_axes_w: float,
    min_spacing: float,
):
    """(figure size, rows, columns) of a figure of ``n_panels`` panels over the categories
    ``labels``: ``max_cols`` panels a row while they fit in :data:`~clad.report.layout.MAX_WIDTH`."""
    spacing = L.category_spacing(labels, FONT["tick"], min_spacing)
    panel_w = max(min_axes_w, len(labels) * spacing) + 0.9
    cols = max(1, min(max_cols, int((L.MAX_WIDTH - 0.2) // panel_w)))
    rows = math.ceil(n_panels / cols)
    width = cols * panel_w + 0.2
    title_h = L.text_size(L.wrap(title, width - 0.3, FONT["suptitle"]), FONT["suptitle"])[1]
    height = (
        rows * (2.6 + 0.6 + L.line_height(FONT["title"]) + _x_label_extent(labels, spacing))
        + 0.3
        + title_h
        + _legend_height(legend_labels, width)
    )
    return (width, height), rows, cols


def curves_figure(curves: pd.DataFrame, title: str) -> "Figure":
    """Learning curves of one dataset and scenario: per base metric, the average over the concepts
    seen so far and over all concepts (side by side when they fit, else one above the other), one
    legend under them."""
    bases = list(dict.fromkeys(curves["base_metric"]))
    labels = list(
        dict.fromkeys(_label(s, d) for s, d in zip(curves["strategy"], curves["detector"]))
    )
    _, step_labels = _step_labels(curves)
    chance = "chance" in curves.columns and bool(curves["chance"].notna().any())
    size, rows, cols = _block_layout(
        step_labels, labels + (["chance"] if chance else []), title, 2 * len(bases), 2, 3.5, 0.15
    )
    fig = _figure(size)
    _suptitle(fig, title)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    styles = config_styles(labels)
    for k, base in enumerate(bases):
        part = curves[curves["base_metric"] == base]
        plot_curves(part, axes[2 * k], kind="seen", legend=False, styles=styles)
        plot_curves(part, axes[2 * k + 1], kind="all", legend=False, styles=styles)
    handles = axes[0].get_legend_handles_labels()[0]
    _legend_below(fig, handles, [h.get_label() for h in handles])
    return fig


# -- forgetting ----------------------------------------------------------------------------


def _bar_spacing(n_bars: int) -> float:
    """Room per concept (inches) for ``n_bars`` bars of at least 0.07 in side by side."""
    return max(0.3, 0.07 * n_bars + 0.08)


def plot_forgetting(
    table: pd.DataFrame,
    ax: "Axes | None" = None,
    *,
    title: str | None = None,
    legend: bool = True,
    styles: Mapping[str, dict] | None = None,
) -> "Axes":
    """Per-concept forgetting bars (peak − final) from :func:`clad.report.aggregate.forgetting_table`
    (rows of one dataset, scenario and base metric): concepts on x, one bar per strategy +
    detector, error bars = std over seeds. A value too small to show as a bar (zero forgetting)
    gets a marker in the bar's colour on the zero line, so that every legend entry has a mark."""
    concepts = list(dict.fromkeys(table["concept"]))
    groups = list(table.groupby(["strategy", "detector"], sort=False))
    spacing = L.category_spacing(concepts, FONT["tick"], _bar_spacing(len(groups)))
    ax = _axes(
        ax, (max(4.0, len(concepts) * spacing) + 1.0, 3.2 + _x_label_extent(concepts, spacing))
    )
    styles = styles or config_styles([_label(s, d) for (s, d), _ in groups])
    width = 0.8 / max(len(groups), 1)
    means = table["mean"].to_numpy(float)
    finite = means[np.isfinite(means)]
    span = float(np.ptp(np.append(finite, 0.0))) if finite.size else 0.0
    small = max(span, 0.05) * 0.01  # under 1 % of the axis: a bar too thin to see
    for g_i, ((strategy, detector), g) in enumerate(groups):
        g = g.set_index("concept").reindex(concepts)
        x = np.arange(len(concepts)) + (g_i - (len(groups) - 1) / 2) * width
        m, err = g["mean"].to_numpy(float), g["std"].to_numpy(float)
        colour = styles[_label(strategy, detector)]["color"]
        ax.bar(
            x,
            m,
            width,
            yerr=np.where(np.isnan(err), 0.0, err),
            capsize=2,
            color=colour,
            label=_label(strategy, detector),
            error_kw={"lw": 0.8},
        )
        zero = np.isfinite(m) & (np.abs(m) < small)
        if zero.any():
            ax.plot(
                x[zero],
                np.zeros(int(zero.sum())),
                linestyle="none",
                marker="D",
                ms=4,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.5,
                zorder=3,
            )
    ax.axhline(0.0, color="black", lw=0.8)
    _category_ticks(ax, "x", concepts, _axes_width(ax) / max(len(concepts), 1))
    ax.tick_params(axis="y", labelsize=FONT["tick"])
    ax.set_xlabel("test concept", fontsize=FONT["label"])
    metric = base_metric_shown(table["base_metric"].iloc[0]) if not table.empty else ""
    ax.set_ylabel(f"forgetting in {metric}\n(peak − final)", fontsize=FONT["label"])
    _title(ax, title or "per-concept forgetting (positive = forgotten; ◆ = zero)")
    ax.grid(axis="y", alpha=0.3)
    if legend and groups:
        ax.legend(
            fontsize=FONT["legend"], loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False
        )
    return ax


def forgetting_figure(table: pd.DataFrame, title: str) -> "Figure":
    """Per-concept forgetting of one dataset and scenario: one panel per base metric, one legend."""
    bases = list(dict.fromkeys(table["base_metric"]))
    labels = list(dict.fromkeys(_label(s, d) for s, d in zip(table["strategy"], table["detector"])))
    concepts = list(dict.fromkeys(table["concept"]))
    size, _, _ = _block_layout(
        concepts, labels, title, len(bases), 1, 5.0, _bar_spacing(len(labels))
    )
    fig = _figure(size)
    _suptitle(fig, title)
    axes = fig.subplots(len(bases), 1, squeeze=False)[:, 0]
    styles = config_styles(labels)
    for ax, base in zip(axes, bases):
        plot_forgetting(
            table[table["base_metric"] == base],
            ax,
            legend=False,
            styles=styles,
            title=f"{base}: per-concept forgetting (positive = forgotten; ◆ = zero)",
        )
    from matplotlib.patches import Patch

    _legend_below(fig, [Patch(color=styles[lab]["color"]) for lab in labels], labels)
    return fig


# -- critical differences ------------------------------------------------------------------


def _cd_labels(comparison: "Comparison") -> list[str]:
    return [f"{k} ({v:.2f})" for k, v in comparison.average_ranks.items()]


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
        return cd_figure(comparison, test=test).axes[0]
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
    if (
        used == "Nemenyi"
    ):  # the critical difference: average ranks further apart than this differ (Nemenyi)
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
    _title(ax, cd_title(comparison, used), width=ax.figure.get_figwidth() - 0.6)
    if used == "Nemenyi":
        ax.title.set_y(1.0)
        ax.set_title(
            ax.get_title(), fontsize=FONT["title"], pad=34
        )  # room for the CD bar above the ticks
    return ax


#: the width of a critical-difference diagram (inches): one column of a two-column paper, unless the
#: methods' names need more
CD_WIDTH = 3.5


def cd_figure(comparison: "Comparison", *, test: str = "nemenyi") -> "Figure":
    """A critical-difference diagram :data:`CD_WIDTH` inches wide (one journal column), wider only
    where the methods' names on both sides leave the rank axis less than 1.2 inches."""
    _, used = cd_significance(comparison, test)
    label_w = L.text_width(_cd_labels(comparison), FONT["tick"])
    width = max(CD_WIDTH, 2 * label_w + 1.2 + 0.4)
    title_h = L.text_size(
        L.wrap(cd_title(comparison, used), width - 0.6, FONT["title"]), FONT["title"]
    )[1]
    height = title_h + 1.3 + 0.3 * (math.ceil(comparison.n_methods / 2) + 2)
    fig = _figure((width, height))
    plot_cd(comparison, fig.subplots(), test=test)
    return fig
