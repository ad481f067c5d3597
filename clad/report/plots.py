"""Plotting prepared results with matplotlib, for a paper (no pyplot, no global backend, never
``show()``; the report's own figures are drawn by the browser, :mod:`clad.report.charts`).

Every ``plot_*`` function (and :func:`clad.report.cd_diagram.plot_cd`) takes data aggregated by
:mod:`clad.report.aggregate` or :mod:`clad.report.stats` and an optional Axes, in the shape of
scikit-learn's displays and autorank's ``plot_stats``: without one it draws on a new off-screen
:class:`matplotlib.figure.Figure` sized from its data (rendered by the Agg canvas). It returns the
Axes and computes nothing but layout. matplotlib is imported when a function is called, not at
``import clad``.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import pandas as pd

from ..metrics.base import base_metric_shown
from .figure_data import HeatmapData

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["plot_heatmap", "plot_curves", "plot_forgetting"]

#: font sizes (points) of the figures
FONT = {"tick": 7.0, "label": 8.0, "title": 8.0, "legend": 7.0, "cell": 7.0}
#: a character's mean width, in font sizes (a label's width is estimated from its length)
CHAR_WIDTH = 0.58


def _mpl():
    """matplotlib, or an ImportError that says how to install it."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a dependency of clad
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from None
    return matplotlib


def new_axes(figsize) -> "Axes":
    """The Axes of a new off-screen Figure (the Agg canvas, constrained layout) of ``figsize`` inches."""
    _mpl()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig.subplots()


def line_height(fontsize: float) -> float:
    return fontsize * 1.2 / 72.0


def text_width(labels: Sequence[str], fontsize: float) -> float:
    """About the width (inches) of the longest of ``labels``' lines at ``fontsize``.

    >>> round(text_width(["abc", "a"], 7.2), 3)
    0.174
    """
    lines = [line for t in labels for line in str(t).split("\n")]
    return max((len(t) for t in lines), default=0) * fontsize * CHAR_WIDTH / 72.0


def wrap_text(text: str, width: float, fontsize: float) -> str:
    """``text`` broken into lines about ``width`` inches wide at ``fontsize`` (its breaks kept)."""
    chars = max(8, int(width * 72.0 / (fontsize * CHAR_WIDTH)))
    return "\n".join(textwrap.fill(p, chars) if p else p for p in str(text).split("\n"))


def _legend_width(labels: Sequence[str]) -> float:
    """Room (inches) for a legend of ``labels`` beside the axes: the longest, its handle and gaps."""
    return text_width(labels, FONT["legend"]) + 0.7


def _category_spacing(labels: Sequence[str], fontsize: float, minimum: float) -> float:
    """Distance between neighbouring category ticks (inches): at least ``minimum``; enough for the
    labels to sit upright when that costs at most 0.8 in per category and 9 in for all of them;
    else enough for them to stand rotated."""
    upright = text_width(labels, fontsize) + 0.08
    if upright <= max(minimum, 0.8) and (upright <= minimum or len(labels) * upright <= 9.0):
        return max(minimum, upright)
    return max(minimum, line_height(fontsize) * 1.3)


#: colour of undefined (NaN) cells
BAD_COLOUR = "#d9d9d9"
#: hatching of future cells (step i before the concept was learned, i < t(j))
FUTURE_HATCH = "//"
#: hatching of test concepts never learned
UNLEARNED_HATCH = ".."


def _axes(ax, figsize):
    return new_axes(figsize) if ax is None else ax


def _axes_width(ax) -> float:
    """Width of ``ax`` in inches (before the layout engine has run: an upper bound)."""
    return ax.get_position().width * ax.figure.get_figwidth()


def set_title(ax, text: str, width: float | None = None, fontsize: float = FONT["title"]) -> None:
    ax.set_title(
        wrap_text(text, width if width is not None else max(_axes_width(ax), 1.0), fontsize),
        fontsize=fontsize,
    )


def _category_ticks(ax, axis: str, labels: Sequence[str], spacing: float, positions=None) -> None:
    """Ticks at ``positions`` (default 0..n-1) labelled ``labels``; x labels rotated 90° when the
    widest does not fit in ``spacing`` inches."""
    positions = range(len(labels)) if positions is None else positions
    if axis == "x":
        rotation = 0 if text_width(labels, FONT["tick"]) + 0.06 <= spacing else 90
        ax.set_xticks(
            list(positions), labels=list(labels), rotation=rotation, fontsize=FONT["tick"]
        )
    else:
        ax.set_yticks(list(positions), labels=list(labels), fontsize=FONT["tick"])


def _x_label_extent(labels: Sequence[str], spacing: float) -> float:
    """Height (inches) the x tick labels take under the axis."""
    if text_width(labels, FONT["tick"]) + 0.06 > spacing:
        return text_width(labels, FONT["tick"]) + 0.1
    return line_height(FONT["tick"]) + 0.1


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


def _heatmap_geometry(data: HeatmapData, annotate: bool | None):
    """(annotate, cell width, cell height) in inches for R of this shape."""
    n_rows, n_cols = np.shape(data.mean)
    if annotate is None:
        annotate = n_cols <= 10 and n_rows <= 16
    with_std = annotate and bool(np.isfinite(np.asarray(data.std, float)).any())
    cell_w = _category_spacing(data.cols, FONT["tick"], 0.55 if annotate else 0.16)
    cell_h = max(0.42 if with_std else 0.3 if annotate else 0.16, line_height(FONT["tick"]) * 1.3)
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
    set them). Its ``gid`` is ``label``."""
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


def _draw_heatmap(ax, data: HeatmapData, *, vmin, vmax, cmap, annotate, cell_w):
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
    _category_ticks(ax, "x", data.cols, cell_w)
    _category_ticks(ax, "y", _row_labels(data), 0.0)
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
            + text_width(rows, FONT["tick"])
            + 0.6
            + (1.0 if colorbar else 0.1)
        )
        height = (
            n_rows * cell_h + _x_label_extent(data.cols, cell_w) + 1.0 + (0.6 if legend else 0.0)
        )
        ax = new_axes((width, height))
    im = _draw_heatmap(ax, data, vmin=vmin, vmax=vmax, cmap=cmap, annotate=annotate, cell_w=cell_w)
    set_title(
        ax,
        f"{data.dataset} / {data.scenario}\n{data.strategy} + {data.detector}: {base_metric_shown(data.base_metric)} "
        f"({data.seeds_text})",
        width=max(_axes_width(ax), 2.5),
    )
    if legend:
        from matplotlib.transforms import ScaledTranslation

        # under the x label
        below = ax.transAxes + ScaledTranslation(0, -0.5, ax.figure.dpi_scale_trans)
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
    s = f"{v:.2f}" + ("" if np.isnan(data.std[i, j]) else f"\n±{float(data.std[i, j]):.2f}")
    return s, ("black" if norm(v) > 0.6 else "white")


# -- learning curves -----------------------------------------------------------------------


def _label(strategy: str, detector: str) -> str:
    return f"{strategy} + {detector}"


def _config_axes(ax, groups: list, categories: Sequence[str], spacing: float, legend: bool, styles):
    """The Axes of a figure with ``categories`` on x and a line or bar per configuration of
    ``groups`` (a new Figure sized for them and their legend when ``ax`` is None), the legend's
    width and each configuration's style."""
    labels = [_label(s, d) for (s, d), _ in groups]
    legend_w = _legend_width(labels) if legend else 0.0
    width = max(4.0, len(categories) * spacing) + 1.0 + legend_w
    ax = _axes(ax, (width, 3.2 + _x_label_extent(categories, spacing)))
    return ax, legend_w, styles or config_styles(labels)


def _finish(ax, title: str, legend_w: float, legend: bool) -> "Axes":
    """The title, in the width the legend leaves, and the legend beside the axes."""
    set_title(ax, title, width=max(_axes_width(ax) - legend_w, 1.0))
    if legend:
        ax.legend(
            fontsize=FONT["legend"], loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False
        )
    return ax


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
    """Learning curves from :func:`clad.report.figure_data.learning_curves` (rows of one dataset,
    scenario and base metric): the mean per step of ``kind`` (``"seen"``: average over learned
    concepts; ``"all"``: over every test concept), one line per strategy + detector, with a
    ± std band over seeds. ``legend=False`` leaves the legend to the caller (a figure legend)."""
    part = curves[curves["kind"] == kind]
    steps, step_labels = _step_labels(part) if not part.empty else (np.array([]), [])
    spacing = _category_spacing(step_labels, FONT["tick"], 0.3)
    groups = list(part.groupby(["strategy", "detector"], sort=False))
    ax, legend_w, styles = _config_axes(ax, groups, step_labels, spacing, legend, styles)
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
    ax.grid(alpha=0.3)
    seen = "average over concepts seen so far" if kind == "seen" else "average over all concepts"
    return _finish(ax, title or seen, legend_w, legend and bool(groups))


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
    """Per-concept forgetting bars (peak − final) from :func:`clad.report.figure_data.forgetting_table`
    (rows of one dataset, scenario and base metric): concepts on x, one bar per strategy +
    detector, error bars = std over seeds. A value too small to show as a bar (zero forgetting)
    gets a marker in the bar's colour on the zero line, so that every legend entry has a mark."""
    concepts = list(dict.fromkeys(table["concept"]))
    groups = list(table.groupby(["strategy", "detector"], sort=False))
    spacing = _category_spacing(concepts, FONT["tick"], _bar_spacing(len(groups)))
    ax, legend_w, styles = _config_axes(ax, groups, concepts, spacing, legend, styles)
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
    ax.grid(axis="y", alpha=0.3)
    title = title or "per-concept forgetting (positive = forgotten; ◆ = zero)"
    return _finish(ax, title, legend_w, legend and bool(groups))
