"""Heatmaps show NaN as missing, mark the diagonal and the future cells; plotting is lazy and pure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from clad.report.figure_data import HeatmapData, heatmap_data
from clad.results import RunResult

NAN = float("nan")


def _heatmap(R, learned_at=None, std=None) -> HeatmapData:
    R = np.asarray(R, dtype=float)
    n_rows, n_cols = R.shape
    t = np.asarray(
        learned_at if learned_at is not None else [j if j < n_rows else -1 for j in range(n_cols)]
    )
    return HeatmapData(
        "toy",
        "aware",
        "naive",
        "iforest",
        "roc_auc",
        R,
        np.full_like(R, np.nan) if std is None else np.asarray(std, float),
        np.ones_like(R, int),
        tuple(f"C{i}" for i in range(n_rows)),
        tuple(f"C{j}" for j in range(n_cols)),
        t,
        (0,),
    )


def _pixel(ax, x, y):
    """RGB (0-255) of the rendered figure at data coordinates (x, y)."""
    fig = ax.figure
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())
    px, py = ax.transData.transform((x, y))
    return img[int(round(img.shape[0] - py)), int(round(px)), :3].astype(int)


def test_nan_cells_are_masked_not_zero():
    from clad.report.plots import BAD_COLOUR, plot_heatmap

    R = np.array([[0.9, 0.5, 0.4], [0.7, 0.8, NAN], [NAN, 0.0, 0.95]])
    ax = plot_heatmap(_heatmap(R))
    arr = ax.images[0].get_array()
    assert np.ma.isMaskedArray(arr)
    np.testing.assert_array_equal(np.ma.getmaskarray(arr), np.isnan(R))
    assert [t.get_text() for t in ax.texts].count("n/a") == 2
    # pixels: the NaN cell (2, 0) (seen, off the diagonal: no hatch, no border) is the 'bad' colour;
    # the cell holding a real 0.0 at (2, 1) is the colormap's lowest colour, not that grey
    from matplotlib.colors import to_rgb

    grey = np.array(to_rgb(BAD_COLOUR)) * 255
    near_corner = 0.3  # away from the annotation text in the cell's centre
    nan_px = _pixel(ax, 0 - near_corner, 2 + near_corner)
    zero_px = _pixel(ax, 1 - near_corner, 2 + near_corner)
    assert np.abs(nan_px - grey).max() <= 3, nan_px
    viridis0 = np.array(ax.images[0].cmap(0.0)[:3]) * 255
    assert np.abs(zero_px - viridis0).max() <= 3, zero_px
    assert np.abs(zero_px - grey).max() > 50


def cells_of(ax, label: str) -> set[tuple[int, int]]:
    """The cells ``(i, j)`` marked by the patch ``label`` (``"learned"``, ``"future"``, ``"never learned"``)
    of a heatmap drawn by ``plot_heatmap``."""
    out = set()
    for p in ax.patches:
        if p.get_gid() == label:
            v = p.get_path().vertices.reshape(-1, 5, 2)[:, 0] + 0.5
            out |= {(int(round(y)), int(round(x))) for x, y in v}
    return out


def test_diagonal_and_future_cells_are_marked():
    from clad.report.plots import FUTURE_HATCH, UNLEARNED_HATCH, plot_heatmap

    R = np.arange(12, dtype=float).reshape(3, 4) / 12
    t = np.array([0, 2, 1, -1])  # C1 learned at step 2, C2 at step 1, C3 never
    ax = plot_heatmap(_heatmap(R, t))
    assert cells_of(ax, "future") == {(i, j) for j in range(3) for i in range(3) if i < t[j]}
    assert cells_of(ax, "never learned") == {(i, 3) for i in range(3)}
    assert cells_of(ax, "learned") == {(0, 0), (2, 1), (1, 2)}
    style = {
        p.get_gid(): (p.get_hatch(), p.get_fill(), p.get_linewidth())
        for p in ax.patches
        if p.get_gid()
    }
    assert style["future"][0] == FUTURE_HATCH and style["never learned"][0] == UNLEARNED_HATCH
    assert style["learned"] == (None, False, 2.0)
    # the marks are drawn: pixels of a future cell carry the white hatching, a learned cell's border is black
    fig = ax.figure
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)

    def cell_pixels(i, j):
        (x0, y0), (x1, y1) = ax.transData.transform([(j - 0.45, i + 0.45), (j + 0.45, i - 0.45)])
        h = img.shape[0]
        return img[int(h - y1) : int(h - y0), int(x0) : int(x1)].reshape(-1, 3)

    def lighter_share(px):  # pixels much lighter than the cell's own colour: hatch lines
        return ((px.sum(axis=1) - np.median(px, axis=0).sum()) > 150).mean()

    assert lighter_share(cell_pixels(0, 1)) > 0.05 and lighter_share(cell_pixels(2, 0)) == 0
    x, y = ax.transData.transform((2 - 0.5, 1))  # left edge of the learned cell (1, 2)
    assert img[int(round(img.shape[0] - y)), int(round(x))].max() < 60  # black


def test_annotations_show_mean_and_std():
    from clad.report.plots import plot_heatmap

    ax = plot_heatmap(_heatmap([[0.8123]], std=[[0.0456]]), colorbar=False)
    assert [t.get_text() for t in ax.texts] == ["0.81\n±0.05"]


def test_plots_draw_on_a_given_axes_from_aggregated_data():
    from matplotlib.figure import Figure

    from clad.report.figure_data import forgetting_table, learning_curves
    from clad.report.plots import plot_curves, plot_forgetting, plot_heatmap

    runs = [
        RunResult(
            "d",
            "s",
            "naive",
            "iforest",
            seed,
            ("A", "B"),
            ("A", "B"),
            R={"roc_auc": np.array([[0.9, 0.5], [0.6 + 0.1 * seed, 0.8]])},
        )
        for seed in (0, 1)
    ]
    fig = Figure()
    axes = fig.subplots(1, 3)
    assert plot_heatmap(heatmap_data(runs, "roc_auc"), axes[0]) is axes[0]
    curves = learning_curves(runs)
    assert plot_curves(curves, axes[1], kind="seen") is axes[1]
    line = axes[1].lines[0]
    np.testing.assert_allclose(line.get_ydata(), [0.9, (0.6 + 0.7) / 2 / 2 + 0.8 / 2])
    table = forgetting_table(runs)
    assert plot_forgetting(table, axes[2]) is axes[2]
    heights = [p.get_height() for p in axes[2].patches]
    assert heights == pytest.approx([0.9 - 0.65])


@pytest.mark.slow
def test_import_clad_does_not_import_matplotlib_and_plots_never_use_pyplot():
    code = (
        "import sys, clad, clad.report\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported by import clad'\n"
        "import numpy as np\n"
        "import io\n"
        "from clad.report.plots import plot_heatmap\n"
        "from tests.report.test_report_plots import _heatmap\n"
        "png = io.BytesIO()\n"
        "plot_heatmap(_heatmap(np.eye(2))).figure.savefig(png, format='png')\n"
        "assert png.getvalue()[:4] == b'\\x89PNG'\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'\n"
    )
    root = Path(__file__).resolve().parents[2]  # imports clad and this file from the checkout
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert proc.returncode == 0, proc.stderr
