"""Plotting prepared results with matplotlib (no pyplot, no global backend, never ``show()``).

Every function takes data already aggregated by :mod:`clad.report.aggregate` or
:mod:`clad.report.stats` and an optional :class:`matplotlib.axes.Axes`; without one it draws on a
new :class:`matplotlib.figure.Figure` (rendered off-screen by the Agg canvas). It returns the Axes
and computes nothing but layout. matplotlib is imported when a function is called, not at
``import clad``.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import CladValueError
from .aggregate import HeatmapData

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from .stats import Comparison

__all__ = ["new_axes", "figure_png", "plot_heatmap", "plot_curves", "plot_forgetting", "plot_cd", "plot_stream",
           "BAD_COLOUR", "FUTURE_HATCH", "UNLEARNED_HATCH"]

#: colour of undefined (NaN) cells
BAD_COLOUR = "#d9d9d9"
#: hatching of future cells (step i before the concept was learned, i < t(j))
FUTURE_HATCH = "//"
#: hatching of test concepts never learned
UNLEARNED_HATCH = ".."


def _mpl():
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a dependency of clad
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from None
    return matplotlib


def new_axes(figsize=(6.0, 4.0), nrows: int = 1, ncols: int = 1):
    """A new off-screen Figure and its Axes (an array of Axes when ``nrows * ncols > 1``)."""
    _mpl()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=True)
    return fig, axes


def figure_png(fig, dpi: int = 100) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _axes(ax, figsize):
    if ax is None:
        _, ax = new_axes(figsize)
    return ax


def _fmt(v: float) -> str:
    return f"{v:.2f}"


def plot_heatmap(data: HeatmapData, ax: "Axes | None" = None, *, vmin: float = 0.0, vmax: float = 1.0,
                 cmap: str = "viridis", annotate: bool = True, colorbar: bool = True) -> "Axes":
    """R averaged over seeds: rows = training steps, columns = test concepts.

    Undefined cells are masked (drawn in :data:`BAD_COLOUR`, annotated ``n/a``), never shown as a
    number; the cells ``R[t(j), j]`` where each concept was first learned carry a black border;
    future cells ``i < t(j)`` are hatched ``//`` and never-learned concepts ``..``. Annotations are
    ``mean`` and, with several seeds, ``± std``.
    """
    mpl = _mpl()
    from matplotlib.patches import Patch, Rectangle

    ax = _axes(ax, (1.2 + 0.9 * len(data.cols), 1.0 + 0.6 * len(data.rows)))
    values = np.ma.masked_invalid(np.asarray(data.mean, dtype=np.float64))
    cm = mpl.colormaps[cmap].with_extremes(bad=BAD_COLOUR)
    im = ax.imshow(values, cmap=cm, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    n_rows, n_cols = values.shape
    t = np.asarray(data.learned_at)
    for j in range(n_cols):
        for i in range(n_rows):
            hatch = UNLEARNED_HATCH if t[j] < 0 else (FUTURE_HATCH if i < t[j] else None)
            if hatch:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch=hatch, lw=0,
                                       edgecolor="white", alpha=0.6))
        if t[j] >= 0:
            ax.add_patch(Rectangle((j - 0.5, t[j] - 0.5), 1, 1, fill=False, edgecolor="black", lw=2.0))
    if annotate:
        norm, mask = im.norm, np.ma.getmaskarray(values)
        for i in range(n_rows):
            for j in range(n_cols):
                if mask[i, j]:
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="#444444")
                    continue
                v = float(values[i, j])
                s = _fmt(v)
                if not np.isnan(data.std[i, j]):
                    s += f"\n±{float(data.std[i, j]):.2f}"
                colour = "black" if norm(v) > 0.6 else "white"
                ax.text(j, i, s, ha="center", va="center", fontsize=7, color=colour)
    ax.set_xticks(range(n_cols), labels=list(data.cols))
    ax.set_yticks(range(n_rows), labels=[f"{i}: {c}" for i, c in enumerate(data.rows)])
    ax.set_xlabel("test concept")
    ax.set_ylabel("training step: concept learned")
    seeds = f"{len(data.seeds)} seed{'s' if len(data.seeds) != 1 else ''}"
    ax.set_title(f"{data.dataset} / {data.scenario}\n{data.strategy} + {data.detector}: {data.base_metric} "
                 f"({seeds})", fontsize=9)
    handles = [Patch(facecolor="white", edgecolor="black", lw=2, label="learned at this step"),
               Patch(facecolor="#888888", hatch=FUTURE_HATCH, edgecolor="white", label="future (not yet learned)"),
               Patch(facecolor=BAD_COLOUR, edgecolor="none", label="n/a (undefined)")]
    if (t < 0).any():
        handles.insert(2, Patch(facecolor="#888888", hatch=UNLEARNED_HATCH, edgecolor="white", label="never learned"))
    from matplotlib.transforms import ScaledTranslation

    below = ax.transAxes + ScaledTranslation(0, -0.5, ax.figure.dpi_scale_trans)  # under the x label
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below, ncol=2,
              fontsize=7, frameon=False)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8, label=data.base_metric)
    return ax


def _label(row) -> str:
    return f"{row['strategy']} + {row['detector']}"


def plot_curves(curves: pd.DataFrame, ax: "Axes | None" = None, *, kind: str = "seen",
                title: str | None = None) -> "Axes":
    """Learning curves from :func:`clad.report.aggregate.learning_curves` (rows of one dataset,
    scenario and base metric): the mean per step of ``kind`` (``"seen"``: average over learned
    concepts; ``"all"``: over every test concept), one line per strategy + detector, with a
    ± std band over seeds."""
    ax = _axes(ax, (6.0, 4.0))
    part = curves[curves["kind"] == kind]
    for (strategy, detector), g in part.groupby(["strategy", "detector"], sort=False):
        g = g.sort_values("step")
        x, m, s = g["step"].to_numpy(), g["mean"].to_numpy(float), g["std"].to_numpy(float)
        (line,) = ax.plot(x, m, marker="o", ms=3, label=f"{strategy} + {detector}")
        band = ~np.isnan(s)
        if band.any():
            ax.fill_between(x, np.where(band, m - s, np.nan), np.where(band, m + s, np.nan),
                            color=line.get_color(), alpha=0.2, lw=0)
    if not part.empty:
        steps = part.drop_duplicates("step").sort_values("step")
        ax.set_xticks(steps["step"].to_numpy(), labels=[f"{s}: {c}" for s, c in zip(steps["step"], steps["concept"])])
        ax.set_ylabel(f"{part['base_metric'].iloc[0]}, mean over {'seen' if kind == 'seen' else 'all'} concepts")
    ax.set_xlabel("training step: concept learned")
    ax.set_title(title or ("average over concepts seen so far" if kind == "seen" else "average over all concepts"),
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return ax


def plot_stream(table: pd.DataFrame, ax: "Axes | None" = None, *, ylabel: str, title: str = "",
                boundaries=None, line: str | None = None) -> "Axes":
    """Curves over a stream from :mod:`clad.report.stream` (rows of one panel): the mean per
    evaluation against the training rows seen, one line per strategy + detector (and per value of
    the column ``line``, if given), a ± std band over seeds, and a dotted vertical line at each
    concept boundary in ``boundaries`` (training rows seen when each concept ends)."""
    ax = _axes(ax, (6.0, 4.0))
    keys = ["strategy", "detector"] + ([line] if line else [])
    for values, g in table.groupby(keys, sort=False):
        g = g.sort_values("rows_seen")
        x, m, s = g["rows_seen"].to_numpy(float), g["mean"].to_numpy(float), g["std"].to_numpy(float)
        (ln,) = ax.plot(x, m, marker=".", ms=3, label=" + ".join(map(str, values[:2])) + (
            f" ({values[2]})" if line else ""))
        band = ~np.isnan(s)
        if band.any():
            ax.fill_between(x, np.where(band, m - s, np.nan), np.where(band, m + s, np.nan),
                            color=ln.get_color(), alpha=0.2, lw=0)
    for b in boundaries or ():
        ax.axvline(b, color="black", ls=":", lw=0.8)
    ax.set_xlabel("training rows seen" + (" (dotted: concept boundaries)" if boundaries else ""))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return ax


def plot_forgetting(table: pd.DataFrame, ax: "Axes | None" = None, *, title: str | None = None) -> "Axes":
    """Per-concept forgetting bars (peak − final) from :func:`clad.report.aggregate.forgetting_table`
    (rows of one dataset, scenario and base metric): concepts on x, one bar per strategy +
    detector, error bars = std over seeds."""
    ax = _axes(ax, (6.0, 4.0))
    concepts = list(dict.fromkeys(table["concept"]))
    groups = list(table.groupby(["strategy", "detector"], sort=False))
    width = 0.8 / max(len(groups), 1)
    for g_i, ((strategy, detector), g) in enumerate(groups):
        g = g.set_index("concept").reindex(concepts)
        x = np.arange(len(concepts)) + (g_i - (len(groups) - 1) / 2) * width
        err = g["std"].to_numpy(float)
        ax.bar(x, g["mean"].to_numpy(float), width, yerr=np.where(np.isnan(err), 0.0, err), capsize=2,
               label=f"{strategy} + {detector}")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xticks(range(len(concepts)), labels=concepts)
    ax.set_xlabel("test concept")
    metric = table["base_metric"].iloc[0] if not table.empty else ""
    ax.set_ylabel(f"forgetting in {metric} (peak − final)")
    ax.set_title(title or "per-concept forgetting (positive = forgotten)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    if groups:
        ax.legend(fontsize=7)
    return ax


def plot_cd(comparison: "Comparison", ax: "Axes | None" = None, *, test: str = "nemenyi") -> "Axes":
    """Critical-difference diagram (``scikit_posthocs.critical_difference_diagram``) of a
    :class:`~clad.report.stats.Comparison`: average ranks on the axis, methods joined by a bar
    where the post-hoc test (``"nemenyi"`` or ``"wilcoxon_holm"``) finds no significant difference."""
    try:
        import scikit_posthocs as sp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("critical-difference diagrams need scikit-posthocs: pip install 'clad[report]'") from None
    sig = comparison.nemenyi if test == "nemenyi" else comparison.wilcoxon_holm
    if sig is None:
        sig = comparison.wilcoxon_holm
    if sig is None:
        raise CladValueError(f"{comparison.title}: no post-hoc test was run ({comparison.message})")
    ax = _axes(ax, (6.0, 0.6 + 0.35 * comparison.n_methods))
    sp.critical_difference_diagram(comparison.average_ranks, sig, alpha=comparison.alpha, ax=ax,
                                   label_fmt_left="{label} ({rank:.2f})", label_fmt_right="({rank:.2f}) {label}")
    used = "Nemenyi" if sig is comparison.nemenyi else "Wilcoxon–Holm"
    ax.set_title(f"{comparison.title}: average rank (1 = best), bars join {used}-indistinguishable "
                 f"(alpha={comparison.alpha})", fontsize=8)
    return ax
