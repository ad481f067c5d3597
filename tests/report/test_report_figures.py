"""Every figure kind of a report is a titled Vega-Lite figure with data and axis titles (the
time-series traces and the stream curves too); the figures for a paper (:mod:`clad.report.plots`)
have readable axes: every drawn axis has ticks with labels and a label, heatmap chance marks never
cover a cell's value, the critical-difference diagram has its CD bar, fits a column and is the same
picture in every process."""

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
    """A figure store that records the kind and specification of every figure it is given."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.kinds = set()
        self.charts = {}

    def chart(self, spec, height, section, description, kind, *parts):
        self.kinds.add(kind)
        self.charts.setdefault(kind, []).append(spec)
        return super().chart(spec, height, section, description, kind, *parts)


def recording(monkeypatch) -> list:
    """The figure stores :func:`make_report` makes from now on (clad's own class, recording)."""
    from clad.report import make as make_module

    stores = []

    def store(folder):
        stores.append(CheckingStore(folder))
        return stores[-1]

    monkeypatch.setattr(make_module, "FigureStore", store)
    return stores


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
    stores = recording(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_report(_runs(), tmp_path / "r")
    (s,) = stores
    assert {"heatmap", "curves", "forgetting", "cd"} <= s.kinds, s.kinds
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
    from clad.report.cd_diagram import plot_cd

    scores = pd.DataFrame(
        {
            "A": [0.9, 0.8, 0.85, 0.95, 0.9, 0.7],
            "B": [0.7, 0.6, 0.65, 0.8, 0.7, 0.6],
            "C": [0.5, 0.55, 0.6, 0.7, 0.5, 0.5],
            "D": [0.6, 0.5, 0.62, 0.72, 0.55, 0.52],
        }
    )
    c = compare_methods(scores)
    fig = plot_cd(c).figure
    assert fig.get_figwidth() <= 3.5 + 1e-9  # one column of a two-column paper
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
from clad.report.cd_diagram import plot_cd
import io
rng = np.random.default_rng(0)  # seven methods a few ranks apart: bars that overlap and share ends
scores = pd.DataFrame(np.linspace(0.9, 0.78, 7) + rng.normal(0, 0.03, (12, 7)),
                      columns=[f"method_{c}" for c in "abcdefg"])
png = io.BytesIO()
plot_cd(compare_methods(scores)).figure.savefig(png, format="png")
print(hashlib.sha256(png.getvalue()).hexdigest())
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


def test_trace_figure_has_a_panel_per_step_on_one_time_axis():
    from clad.report.timeseries import trace_chart

    n = 50
    trace = {
        "steps": ["A", "B"],
        "values": list(np.sin(np.arange(n) / 5)),
        "ranges": [[10, 15]],
        "series": "P-1",
        "concept": "P",
        "bucket": 4,
        "scores": [list(np.linspace(0, 1, n))] * 2,
        "thresholds": [0.5, None],
    }
    spec, height = trace_chart(trace, "d / s / naive / iforest / seed 0")
    panels = spec["vconcat"]
    assert [p["encoding"]["y"]["title"] for p in panels] == ["value", "after A", "after B"]
    kinds = [[v["kind"] for v in p["data"]["values"]] for p in panels]
    assert [k.count("threshold") for k in kinds] == [0, 1, 0]  # no threshold after B
    assert [k.count("above threshold") > 0 for k in kinds] == [False, True, False]
    assert all(k.count("range") == 1 for k in kinds)  # the labelled range shaded in every panel
    (value,) = [v for v in panels[0]["data"]["values"] if v["kind"] == "value"]
    assert value["x"][:3] == [0, 4, 8]  # the first point of each bucket
    x_axes = [p["layer"][1]["encoding"]["x"] for p in panels]
    assert {json.dumps(x["scale"]) for x in x_axes} == {'{"domain": [0, 200], "nice": false}'}
    assert [x["title"] for x in x_axes] == [
        None,
        None,
        "time point (largest score of every 4 points)",
    ]
    assert spec["resolve"]["scale"]["y"] == "independent" and height > 3 * 70


@pytest.mark.parametrize("seeds", [1, 3])
def test_heatmap_chance_marks_never_cover_a_value(seeds):
    from clad.report import heatmap_data
    from clad.report.plots import plot_heatmap

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
    for item in items:
        fig = plot_heatmap(item).figure
        assert [t for ax in fig.axes for t in ax.texts if t.get_text()]
        assert not overlaps_in_heatmaps(fig)
        assert not axis_problems(fig)


@pytest.mark.slow
def test_stream_figures_are_drawn_by_the_browser_with_titled_axes(tmp_path, monkeypatch):
    from sklearn.ensemble import IsolationForest

    from clad import run_experiment
    from clad.scenarios import ConceptAgnostic
    from clad.strategies import Naive
    from tests.data_helpers import contaminated_dataset

    scenario = ConceptAgnostic(
        batch_size=25, prequential=True, prequential_window=3, anytime_per_concept=3
    )
    runs = [
        run_experiment(
            contaminated_dataset(), scenario, Naive(IsolationForest(n_estimators=10)), seed=s
        )
        for s in (0, 1)
    ]
    stores = recording(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_report(runs, tmp_path / "r")
    (s,) = stores
    assert {"anytime", "prequential"} <= s.kinds, s.kinds
    for kind in ("anytime", "prequential"):
        for spec in s.charts[kind]:
            text = json.dumps(spec)
            assert spec["title"]["text"] and spec["data"]["values"], kind
            assert '"title": "training rows seen' in text, kind
    (anytime,) = s.charts["anytime"][:1]
    rules = [layer for layer in anytime["spec"]["layer"] if layer["mark"]["type"] == "rule"]
    assert rules  # the concept boundaries
