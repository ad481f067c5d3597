"""The figure helpers every report figure shares: an off-screen figure, its PNG, the font sizes, a
wrapped title and one legend under the axes (:mod:`clad.report.plots` and :mod:`clad.report.cost`
draw with them). matplotlib is imported when a function is called.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Sequence

from . import layout as L

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "FONT",
    "FIGURE_DPI",
    "mpl",
    "new_figure",
    "new_axes",
    "figure_png",
    "suptitle",
    "legend_below",
]

#: font sizes (points) of the report's figures
FONT = {"tick": 7.0, "label": 8.0, "title": 8.0, "suptitle": 10.0, "legend": 7.0, "cell": 7.0}
#: resolution the figures are laid out for (the report's PNGs): text is hinted to whole pixels, so
#: its relative width changes a little with the resolution
FIGURE_DPI = 90


def mpl():
    """matplotlib, or an ImportError that says how to install it."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a dependency of clad
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from None
    return matplotlib


def new_axes(figsize=(6.0, 4.0), nrows: int = 1, ncols: int = 1):
    """A new off-screen Figure and its Axes (an array of Axes when ``nrows * ncols > 1``)."""
    fig = new_figure(figsize)
    axes = fig.subplots(nrows, ncols, squeeze=True)
    return fig, axes


def new_figure(figsize) -> "Figure":
    """A new off-screen Figure (drawn by the Agg canvas, constrained layout) of ``figsize`` inches."""
    mpl()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=FIGURE_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def figure_png(fig, dpi: int = 100) -> bytes:
    """The figure as PNG bytes, drawn once by the Agg canvas at ``dpi``.

    ``Figure.savefig`` draws a figure with a layout engine twice (once to lay it out, once to
    print it); drawing once at the final resolution (the layout engine runs inside that draw) and
    encoding the canvas's pixels with Pillow gives the same picture in half the time.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    fig.set_dpi(dpi)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    image = Image.frombuffer(
        "RGBA", canvas.get_width_height(physical=True), canvas.buffer_rgba(), "raw", "RGBA", 0, 1
    )
    buf = io.BytesIO()
    image.save(
        buf, format="png", compress_level=3
    )  # 7 % larger than level 6, encoded in 2/3 of the time
    return buf.getvalue()


def suptitle(fig, text: str) -> None:
    """The figure's title, wrapped to its width."""
    fig.suptitle(
        L.wrap(text, fig.get_figwidth() - 0.3, FONT["suptitle"]), fontsize=FONT["suptitle"]
    )


def legend_below(fig, handles, labels: Sequence[str]) -> None:
    """One legend for the whole figure, under its axes; labels wrapped to the figure's width."""
    width = fig.get_figwidth() - 0.8
    labels = [L.wrap(t, width, FONT["legend"]) for t in labels]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=L.legend_columns(labels, FONT["legend"], width),
        fontsize=FONT["legend"],
        frameon=False,
    )
