"""Every figure kind of a report renders with readable axes: every drawn axis has ticks with
labels and a label, shared axes excepted where the axis they share shows them; heatmap chance
marks never cover a cell's value; the critical-difference diagram has its CD bar and fits a column."""

from __future__ import annotations

import json

import os
import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from clad import metrics  # noqa: E402
from clad.report import compare_methods, make_report  # noqa: E402
from clad.report.figures import FigureStore  # noqa: E402
from clad.results import RunResult  # noqa: E402


def _drawn(axis, spines) -> bool:
    """Whether an axis is drawn at all (a spine or tick marks visible)."""
    ticks = [
        t for t in axis.get_major_ticks() if t.tick1line.get_visible() or t.tick2line.get_visible()
    ]
    return any(s.get_visible() for s in spines) or bool(ticks and axis.get_visible())


def axis_problems(fig) -> list[str]:
    """What is missing on the figure's axes: an axis drawn without tick labels or without a label
    (an axis whose ticks are shared with one that shows them counts as labelled)."""
    fig.canvas.draw()
    problems = []
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        if ax.get_label() == "<colorbar>":
            if not (ax.get_ylabel() or ax.get_xlabel()):
                problems.append(f"axes {k} (colour bar): no label")
            continue
        for name, axis, spines in (
            ("x", ax.xaxis, (ax.spines["bottom"], ax.spines["top"])),
            ("y", ax.yaxis, (ax.spines["left"], ax.spines["right"])),
        ):
            if not _drawn(axis, spines):
                continue
            shared = ax.get_shared_x_axes() if name == "x" else ax.get_shared_y_axes()
            group = [a for a in shared.get_siblings(ax)]
            labels = [
                t.get_text()
                for a in group
                for t in (a.get_xticklabels() if name == "x" else a.get_yticklabels())
                if t.get_visible() and t.get_text()
            ]
            if not labels:
                problems.append(
                    f"axes {k} {ax.get_title()[:40]!r}: {name} axis without tick labels"
                )
            title = [a.get_xlabel() if name == "x" else a.get_ylabel() for a in group]
            if not any(title):
                problems.append(f"axes {k} {ax.get_title()[:40]!r}: {name} axis without a label")
    return problems


def overlaps_in_heatmaps(fig) -> list[str]:
    """Chance marks whose bounding box meets a cell annotation's."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        marks = [c for c in ax.collections if c.get_gid() == "chance"]
        texts = [t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
        for m in marks:
            offsets = m.get_offsets()
            if not len(offsets):
                continue
            size = np.sqrt(m.get_sizes()[0]) * fig.dpi / 72.0
            for x, y in m.get_offset_transform().transform(offsets):
                from matplotlib.transforms import Bbox

                box = Bbox.from_bounds(x - size / 2, y - size / 2, size, size)
                out += [f"mark at {x:.0f},{y:.0f} meets text" for t in texts if box.overlaps(t)]
    return out


class CheckingStore(FigureStore):
    """A figure store that records the kind of every figure it is given or planned; the figures
    themselves are checked as they are rendered (:func:`checking_png`)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.kinds = set()
        self.charts = {}

    def add(self, fig, section, description, kind, *parts):
        self.kinds.add(kind)
        return super().add(fig, section, description, kind, *parts)

    def plan(self, draw, args, figures):
        self.kinds.update(kind for _, _, kind, _ in figures)
        return super().plan(draw, args, figures)

    def chart(self, spec, height, section, description, kind, *parts):
        self.kinds.add(kind)
        self.charts.setdefault(kind, []).append(spec)
        return super().chart(spec, height, section, description, kind, *parts)


def checking_png(render, problems, seen=None):
    """clad's ``figure_png`` that first checks the figure's axes and its heatmap chance marks."""

    def png(fig, *a, **k):
        if seen is not None:
            seen.append(fig)
        title = fig.axes[0].get_title()[:30] if fig.axes else ""
        problems.extend(f"{title!r}: {p}" for p in axis_problems(fig) + overlaps_in_heatmaps(fig))
        return render(fig, *a, **k)

    return png


def _runs():
    rng = np.random.default_rng(0)
    out = []
    for dataset in ("d1", "d2", "d3", "d4"):
        for strategy in ("naive", "cumulative"):
            for k, detector in enumerate(("a", "b", "c")):
                for seed in range(3):
                    R = np.clip(0.55 + 0.1 * k + 0.05 * rng.normal(size=(3, 3)), 0, 1)
                    R[0, 2] = 0.5  # at chance: a chance mark beside the value
                    t = metrics.learned_at(("A", "B", "C"), ("A", "B", "C"))
                    out.append(
                        RunResult(
                            dataset,
                            "s",
                            strategy,
                            detector,
                            seed,
                            ("A", "B", "C"),
                            ("A", "B", "C"),
                            R={"roc_auc": R},
                            metrics={"roc_auc": metrics.summarize(R, t)},
                            chance={"roc_auc": [0.5, 0.5, 0.5]},
                            timings={"fit": [0.1, 0.2, 0.3], "score": [0.01] * 3, "total": 1.0},
                            run_id=f"{dataset}{strategy}{detector}{seed}",
                        )
                    )
    return out


@pytest.mark.slow
def test_every_figure_kind_has_axes_with_ticks_and_labels(tmp_path, monkeypatch):
    from clad.report import make as make_module

    stores = []

    def store(folder, dpi):
        stores.append(CheckingStore(folder, dpi))
        return stores[-1]

    from clad.report import canvas

    problems, seen = [], []
    monkeypatch.setattr(
        make_module, "FigureStore", store
    )  # clad's own class, recording what it draws
    monkeypatch.setattr(canvas, "figure_png", checking_png(canvas.figure_png, problems, seen))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_report(
            _runs(), tmp_path / "r", jobs=1
        )  # drawn in this process, where the check sees them
    (s,) = stores
    assert {"heatmap", "curves", "forgetting", "cd"} <= s.kinds, s.kinds
    assert not problems, problems  # PNGs drawn here (none in this report) pass the axis checks
    for kind in (
        "heatmap",
        "curves",
        "forgetting",
        "cost",
    ):  # the browser's figures: titled, with data and axes
        for spec in s.charts[kind]:
            assert spec["title"]["text"], kind
            parts = spec["hconcat"] if kind == "cost" else [spec]
            assert all(part["data"]["values"] for part in parts), kind
            titles = {
                "heatmap": '"title": "test concept"',
                "curves": '"title": "training step: concept learned"',
                "forgetting": '"title": "test concept"',
                "cost": '"title": "seconds per training step',
            }
            assert titles[kind] in json.dumps(spec, ensure_ascii=False), kind


def test_cd_diagram_has_a_cd_bar_and_fits_a_column():
    from clad.report.plots import CD_WIDTH, cd_figure

    scores = pd.DataFrame(
        {
            "A": [0.9, 0.8, 0.85, 0.95, 0.9, 0.7],
            "B": [0.7, 0.6, 0.65, 0.8, 0.7, 0.6],
            "C": [0.5, 0.55, 0.6, 0.7, 0.5, 0.5],
            "D": [0.6, 0.5, 0.62, 0.72, 0.55, 0.52],
        }
    )
    c = compare_methods(scores)
    fig = cd_figure(c)
    assert fig.get_figwidth() <= CD_WIDTH + 1e-9
    ax = fig.axes[0]
    bar = [line for line in ax.lines if line.get_gid() == "cd-bar"]
    assert len(bar) == 1
    from clad.report.posthoc import critical_difference

    (x0, x1) = sorted(bar[0].get_xdata()[:2])
    assert x1 - x0 == pytest.approx(critical_difference(c.n_blocks, c.n_methods, c.alpha))
    assert any("CD" in t.get_text() for t in ax.texts)
    assert not axis_problems(fig)


_CD_PNG = """
import hashlib, sys, warnings
warnings.simplefilter("ignore")
import numpy as np, pandas as pd
from clad.report.stats import compare_methods
from clad.report.plots import cd_figure, figure_png
rng = np.random.default_rng(0)  # seven methods a few ranks apart: bars that overlap and share ends
scores = pd.DataFrame(np.linspace(0.9, 0.78, 7) + rng.normal(0, 0.03, (12, 7)),
                      columns=[f"method_{c}" for c in "abcdefg"])
print(hashlib.sha256(figure_png(cd_figure(compare_methods(scores)))).hexdigest())
"""


def test_cd_diagram_is_the_same_picture_in_every_process():
    """The bars of a critical-difference diagram are found as sets of names: with plain strings
    their order followed each interpreter's hash seed, and the PNG changed from report to report."""
    import subprocess
    import sys

    def png_digest(seed):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run(
            [sys.executable, "-c", _CD_PNG], env=env, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()

    digests = {png_digest(seed) for seed in (1, 2, 3)}
    assert len(digests) == 1, digests


def test_trace_figure_has_time_ticks_on_the_bottom_axis():
    from clad.report.timeseries import trace_figure

    n = 50
    trace = {
        "steps": ["A", "B"],
        "values": list(np.sin(np.arange(n) / 5)),
        "ranges": [[10, 15]],
        "series": "P-1",
        "concept": "P",
        "bucket": 1,
        "scores": [list(np.linspace(0, 1, n))] * 2,
        "thresholds": [0.5, 0.6],
    }
    fig = trace_figure(trace, "d / s / naive / iforest / seed 0")
    assert not axis_problems(fig), axis_problems(fig)
    bottom = fig.axes[-1]
    fig.canvas.draw()
    assert [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]


@pytest.mark.parametrize("seeds", [1, 3])
def test_heatmap_chance_marks_never_cover_a_value(seeds):
    from clad.report import heatmap_data
    from clad.report.plots import heatmap_figures

    rng = np.random.default_rng(seeds)
    concepts = tuple("ABCDEFGHIJ")  # ten test concepts: the narrowest annotated cells
    runs = []
    for seed in range(seeds):
        R = 0.5 + 0.02 * rng.normal(size=(10, 10))  # every cell near chance, with a std over seeds
        for det in ("a", "b"):
            runs.append(
                RunResult(
                    "d",
                    "s",
                    "naive",
                    det,
                    seed,
                    concepts,
                    concepts,
                    R={"roc_auc": R},
                    chance={"roc_auc": [0.5] * 10},
                )
            )
    items = [heatmap_data([r for r in runs if r.detector == det], "roc_auc") for det in ("a", "b")]
    assert items[0].at_chance.sum() > 10
    for fig in heatmap_figures(items):
        assert [t for ax in fig.axes for t in ax.texts if t.get_text()]
        assert not overlaps_in_heatmaps(fig)
        assert not axis_problems(fig)


@pytest.mark.slow
def test_stream_figures_have_axes_with_ticks_and_labels(tmp_path, monkeypatch):
    from sklearn.ensemble import IsolationForest

    from clad import run_experiment
    from clad.report import make as make_module
    from clad.scenarios import ConceptAgnostic
    from clad.strategies import Naive
    from test_stream_evaluation import contaminated_dataset

    scenario = ConceptAgnostic(
        batch_size=25, prequential=True, prequential_window=3, anytime_per_concept=3
    )
    runs = [
        run_experiment(
            contaminated_dataset(), scenario, Naive(IsolationForest(n_estimators=10)), seed=s
        )
        for s in (0, 1)
    ]
    stores = []

    def store(folder, dpi):
        stores.append(CheckingStore(folder, dpi))
        return stores[-1]

    from clad.report import canvas

    problems = []
    monkeypatch.setattr(make_module, "FigureStore", store)
    monkeypatch.setattr(canvas, "figure_png", checking_png(canvas.figure_png, problems))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_report(runs, tmp_path / "r", jobs=1)
    (s,) = stores
    assert {"anytime", "prequential"} <= s.kinds, s.kinds
    assert not problems, problems


@pytest.mark.slow
def test_drawings_in_worker_processes_equal_drawings_here(tmp_path):
    """Enough drawings for worker processes (``MIN_PER_WORKER`` each): the PNGs they write are
    the bytes drawn in this process, under the same names."""
    from clad.report.drawing import MIN_PER_WORKER, Planned, draw_planned
    from clad.report.timeseries import draw_traces

    rng = np.random.default_rng(3)
    traces = [
        {
            "series": k,
            "concept": "C0",
            "bucket": 1,
            "values": rng.random(200).tolist(),
            "ranges": [[50, 60]],
            "steps": ["C0", "C1"],
            "scores": [rng.random(200).tolist(), rng.random(200).tolist()],
            "thresholds": [0.8, None],
        }
        for k in range(2)
    ]
    n = 2 * MIN_PER_WORKER

    def planned():
        return [
            Planned((f"trace-{k}",), draw_traces, ([(traces[k % 2], f"run {k}")],))
            for k in range(n)
        ]

    here = draw_planned(tmp_path / "here", 60, planned(), jobs=1)
    pool = draw_planned(tmp_path / "pool", 60, planned(), jobs=2)
    assert here[0] == pool[0] == n and here[2] == pool[2]
    for k in range(n):
        name = f"trace-{k}.png"
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "pool" / name).read_bytes()
