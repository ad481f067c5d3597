"""The figures for a paper (:mod:`clad.report.plots`) stay readable from 2 to 40 concepts and with
60-character names: no two tick labels overlap, titles and legends fit their figure, legends sit
outside the axes, zero bars are marked (all measured from matplotlib's text extents after drawing);
and the report's figure file names are whole, unique and indexed in the page."""

from __future__ import annotations

import re
import warnings
from itertools import combinations

import numpy as np
import pytest

import clad
from clad.report import (
    StatisticsWarning,
    compare,
    forgetting_table,
    heatmaps,
    learning_curves,
    make_report,
)
from clad.report.figures import MAX_NAME
from clad.report.cd_diagram import plot_cd
from clad.report.plots import plot_curves, plot_forgetting, plot_heatmap
from plugins import DistanceToMean

LONG_STRATEGY = "cumulative_with_a_deliberately_long_name_for_layout_checks_ab"  # 60 characters
LONG_DETECTORS = (
    "distance_to_the_mean_of_training_rows_with_a_long_name_x01",
    "distance_to_the_mean_of_training_rows_with_a_long_name_x02",
)


def _runs(
    n_concepts: int,
    datasets=("synthetic",),
    detectors=None,
    seeds=(0, 1),
    strategies=((clad.Naive, "naive"), (clad.Cumulative, LONG_STRATEGY)),
):
    detectors = detectors or {name: DistanceToMean for name in LONG_DETECTORS}
    out = []
    for k, dataset in enumerate(datasets):
        ds = clad.make_synthetic(
            n_concepts=n_concepts, n_features=2, n_train=16, n_test=20, random_state=k
        )
        for strategy, name in strategies:
            for det, make in detectors.items():
                for seed in seeds:
                    out.append(
                        clad.run_experiment(
                            ds,
                            clad.ConceptIncremental(),
                            strategy(make()),
                            base_metrics=["roc_auc", "f1"],
                            seed=seed,
                            labels={"dataset": dataset, "strategy": name, "detector": det},
                        )
                    )
    return out


def _extent(artist, renderer):
    return artist.get_window_extent(renderer)


def _overlap(a, b, tol=0.5) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol)


def _inside(box, outer, tol=1.0) -> bool:
    return (
        box.x0 >= outer.x0 - tol
        and box.x1 <= outer.x1 + tol
        and box.y0 >= outer.y0 - tol
        and box.y1 <= outer.y1 + tol
    )


def check_readable(fig) -> int:
    """Draw ``fig``; fail if tick labels overlap or titles, legends or labels leave the figure.
    Returns the number of tick labels checked."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    checked = 0
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            labels = [
                t
                for loc, t in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
                if lo - 1e-9 <= loc <= hi + 1e-9 and t.get_visible() and t.get_text()
            ]
            boxes = [_extent(t, renderer) for t in labels]
            checked += len(boxes)
            for (ta, a), (tb, b) in combinations(zip(labels, boxes), 2):
                assert not _overlap(a, b), (
                    f"tick labels {ta.get_text()!r} and {tb.get_text()!r} overlap"
                )
            for t, b in zip(labels, boxes):
                assert _inside(b, page), (
                    f"tick label {t.get_text()!r} leaves the figure: {b} vs {page}"
                )
        for title in (ax.title, ax.xaxis.label, ax.yaxis.label):
            if title.get_text():
                assert _inside(_extent(title, renderer), page), (
                    f"{title.get_text()!r} leaves the figure"
                )
        titles = [t for t in (ax.title,) if t.get_text()]
        for t in titles:
            assert not any(
                _overlap(_extent(t, renderer), _extent(o, renderer))
                for o in ax.xaxis.get_majorticklabels()
                if o.get_visible() and o.get_text()
            ), t.get_text()
    sup = fig.get_suptitle()
    if sup:
        assert _inside(_extent(fig._suptitle, renderer), page), (
            f"suptitle {sup!r} leaves the figure"
        )
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        box = _extent(legend, renderer)
        assert _inside(box, page), "a legend leaves the figure"
        for ax in fig.axes:
            if ax.get_label() != "<colorbar>":
                assert not _overlap(box, ax.get_window_extent(renderer), tol=1.0), (
                    "a legend covers an axes"
                )
    return checked


def _made_runs(n_concepts: int, seeds=(0, 1)):
    """Runs of a synthetic R (seeded): learned concepts near 0.9, forgetting drifting down, future
    cells near 0.5; two strategies x two detectors with 60-character names. Running 40 concepts
    through a real grid would take minutes and test nothing more about the layout."""
    from clad import metrics
    from clad.results import RunResult

    names = tuple(f"concept_{j}" for j in range(n_concepts))
    t = metrics.learned_at(names, names)
    out = []
    for s_i, strategy in enumerate(("naive", LONG_STRATEGY)):
        for d_i, detector in enumerate(LONG_DETECTORS):
            for seed in seeds:
                rng = np.random.default_rng([n_concepts, s_i, d_i, seed])
                i, j = np.indices((n_concepts, n_concepts))
                R = np.where(i >= j, 0.9 - 0.02 * (i - j) * (1 - s_i), 0.5) + rng.normal(
                    0, 0.03, (n_concepts,) * 2
                )
                R = {m: np.clip(R - 0.2 * (m == "f1"), 0, 1) for m in ("roc_auc", "f1")}
                out.append(
                    RunResult(
                        "synthetic",
                        "concept_incremental",
                        strategy,
                        detector,
                        seed,
                        names,
                        names,
                        R=R,
                        metrics={m: metrics.summarize(v, t) for m, v in R.items()},
                        run_id=f"{n_concepts}-{s_i}{d_i}{seed}",
                    )
                )
    return out


@pytest.fixture(
    scope="module",
    params=[2, pytest.param(40, marks=pytest.mark.slow)],
    ids=lambda n: f"{n}-concepts",
)
def runs(request):
    return _made_runs(request.param)


@pytest.mark.slow
def test_heatmaps_curves_and_forgetting_are_readable(runs):
    n = len(runs[0].test_concepts)
    hms, problems = heatmaps(runs)
    assert not problems
    checked = 0
    for hm in hms[:2]:
        checked += check_readable(plot_heatmap(hm).figure)
    curves = learning_curves(runs)
    first = curves[curves["base_metric"] == "roc_auc"]
    checked += check_readable(
        plot_curves(first, title="Learning curves of synthetic / " + "x" * 80).figure
    )
    table = forgetting_table(runs)
    checked += check_readable(
        plot_forgetting(table[table["base_metric"] == "roc_auc"], title="y" * 80).figure
    )
    assert checked >= 3 * n  # the concepts' tick labels were measured


@pytest.mark.slow
def test_cd_diagram_with_long_names_fits():
    # three detectors that rank the same way on every dataset: the best, the worst (scores of the
    # wrong sign) and one in between, so that the tests find differences and draw the diagram
    from sklearn.ensemble import IsolationForest

    from plugins import WrongSign

    detectors = {
        LONG_DETECTORS[0]: DistanceToMean,
        LONG_DETECTORS[1]: WrongSign,
        "isolation_forest": lambda: IsolationForest(n_estimators=10),
    }
    runs = _runs(
        3,
        datasets=tuple(f"d{k}" for k in range(6)),
        detectors=detectors,
        seeds=(0,),
        strategies=((clad.Naive, "naive"),),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        c = compare(runs, by="detector", metric="continual_average", base_metric="roc_auc")
    assert c.nemenyi is not None or c.wilcoxon_holm is not None
    fig = plot_cd(c).figure
    check_readable(fig)
    renderer = fig.canvas.get_renderer()
    texts = [t for t in fig.axes[0].texts if t.get_text()]
    assert len(texts) >= 3
    for a, b in combinations(texts, 2):
        assert not _overlap(_extent(a, renderer), _extent(b, renderer)), (
            a.get_text(),
            b.get_text(),
        )
    assert all(_inside(_extent(t, renderer), fig.bbox) for t in texts)


def test_zero_forgetting_has_a_visible_mark():
    from clad.results import RunResult
    from clad.report.plots import plot_forgetting

    R_forgets = np.array([[0.9, 0.5], [0.6, 0.8]])
    R_keeps = np.array([[0.9, 0.5], [0.9, 0.8]])  # concept A: peak 0.9 = final 0.9, zero forgetting
    runs = [
        RunResult("d", "s", name, "det", 0, ("A", "B"), ("A", "B"), R={"roc_auc": R})
        for name, R in (("forgets", R_forgets), ("keeps", R_keeps))
    ]
    ax = plot_forgetting(forgetting_table(runs))
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.0, 0.3]
    from matplotlib.colors import to_rgba

    marks = [line for line in ax.lines if line.get_marker() == "D"]  # not the error bars' caps
    assert len(marks) == 1 and list(marks[0].get_ydata()) == [0.0]
    keeps_bar = ax.patches[1]  # groups in order: "forgets", then "keeps"
    assert keeps_bar.get_height() == 0.0
    assert to_rgba(marks[0].get_color()) == keeps_bar.get_facecolor()
    assert marks[0].get_xdata()[0] == pytest.approx(keeps_bar.get_x() + keeps_bar.get_width() / 2)


@pytest.mark.slow
def test_figure_files_are_whole_unique_and_indexed(tmp_path):
    runs = _runs(3, seeds=(0,))  # a real (small) run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        report = make_report(runs, tmp_path / "rep", spec={"name": "long names"})
    names = sorted(report.figures)
    assert len(names) == len(set(n.lower() for n in names)) >= 4
    assert all(len(n) <= MAX_NAME and re.fullmatch(r"[A-Za-z0-9_.\-]+", n) for n in names)
    assert any(n.startswith("heatmap__synthetic__concept_incremental__roc_auc") for n in names), (
        names
    )
    page = report.all_text()
    assert 'id="figures"' in page
    for n in names:
        stem = n.rsplit(".", 1)[0]
        assert f'href="figures/{n}"' in page and f'id="fig-{stem}"' in page
        assert f'#fig-{stem}"' in page  # the index of figures links to it
