"""Range metrics inside R: windows mapped back to time points, per-series values, the spec's
metric parameters, clad export --per-series and the report's time-series figure."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from clad.core.concepts import Concept, ConceptDataset
from clad.metrics.base import BASE_METRIC_REGISTRY, base_metric_label, chance_level
from clad.core.experiment import run_experiment
from clad.core.time_axis import TimeAxis
from clad.datasets.windows import window_dataset
from clad.engine.export import per_series_table
from clad.engine.spec import parse_spec
from clad.errors import DataError, SpecError
from clad.scenarios import ConceptIncremental
from clad.strategies import Naive


class MaxAbs(BaseEstimator):
    """A window's score is its largest absolute value; threshold 2.5."""

    _clad_detector = True

    def fit(self, X):
        self.threshold_ = 2.5
        return self

    def score(self, X):
        X = np.asarray(X)
        return np.abs(X.reshape(len(X), -1)).max(axis=1)


def _dataset(window=2, stride=2, rule="max"):
    # channel a: 12 points, anomaly [3, 4], a bump of 3 on points 3-4; channel b: 10 points,
    # anomaly [6, 7], a bump of 4 on point 8 (late)
    xa, ya = np.zeros(12), np.zeros(12, dtype=int)
    xa[3:5], ya[3:5] = 3.0, 1
    xb, yb = np.zeros(10), np.zeros(10, dtype=int)
    xb[8], yb[6:8] = 4.0, 1
    X, y = np.r_[xa, xb][:, None], np.r_[ya, yb]
    test = Concept("T", X, y, time=TimeAxis(("a", "b"), (12, 10), y))
    train = Concept("T", np.zeros((20, 1)))
    ds = ConceptDataset(
        [train], [test], metadata={"segments": {"train": [[20]], "test": [[12, 10]]}}
    )
    return window_dataset(ds, window=window, stride=stride, score_rule=rule)


def test_points_from_windows_gaps_and_tail():
    # windows of 2 every 3 points over 7 points: windows [0,1], [3,4]; point 2 is in no window (takes
    # window 0's score), points 5-6 are the tail (take window 1's)
    axis = TimeAxis(("s",), (7,), np.zeros(7), window=2, stride=3)
    assert axis.n_rows == 2
    assert axis.points(np.array([1.0, 5.0])).tolist() == [1, 1, 1, 5, 5, 5, 5]
    # overlapping windows of 3, stride 1: max and mean of the covering windows
    axis = TimeAxis(("s", "t"), (4, 3), np.zeros(7), window=3, stride=1)
    assert axis.points(np.array([1.0, 4.0, 2.0])).tolist() == [1, 4, 4, 4, 2, 2, 2]
    axis = TimeAxis(("s", "t"), (4, 3), np.zeros(7), window=3, stride=1, rule="mean")
    assert axis.points(np.array([1.0, 4.0, 2.0])).tolist() == [1, 2.5, 2.5, 4, 2, 2, 2]
    with pytest.raises(DataError, match="row scores"):
        axis.points(np.zeros(4))
    with pytest.raises(DataError, match="rule"):
        TimeAxis(("s",), (4,), np.zeros(4), rule="median")


def test_concept_checks_its_time_axis():
    with pytest.raises(DataError, match="time axis gives 4 rows"):
        Concept("c", np.zeros((5, 1)), np.zeros(5), time=TimeAxis(("s",), (4,), np.zeros(4)))


def test_windowed_concept_keeps_its_series_and_point_labels():
    ds = _dataset()
    axis = ds.test[0].time
    assert axis.series == ("a", "b") and axis.lengths == (12, 10) and axis.rows_per_series == (6, 5)
    assert axis.y.tolist() == [0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    # the window labels stay as they were (any step anomalous)
    assert ds.test[0].y.tolist() == [0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0]


def test_range_metrics_in_R_are_computed_on_points():
    metrics = ["range_f1", "event_f1", "range_f1_oracle", "roc_auc"]
    r = run_experiment(_dataset(), ConceptIncremental(), Naive(MaxAbs()), metrics)
    # points flagged (max rule, threshold 2.5): 2-5 (channel a) and 20-21 (channel b, the window of
    # points 8-9); true ranges [3, 4] and [18, 19].
    # range F1: recall (1 + 0) / 2; precision ((2/4) + 0) / 2
    assert r.R["range_f1"][0, 0] == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    # event F1: recall 1/2, precision 2 of 6 flagged points
    assert r.R["event_f1"][0, 0] == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert r.R["range_f1_oracle"][0, 0] >= r.R["range_f1"][0, 0]
    per = r.extras["time_series"]["per_series"]
    assert per["series"] == {"T": ["a", "b"]}
    # channel a alone: recall 1, precision 1/2; channel b: nothing hit
    assert per["values"]["range_f1"]["T"] == [[pytest.approx(2 * 0.5 / 1.5), 0.0]]
    trace = r.extras["time_series"]["trace"]
    assert (trace["concept"], trace["series"], trace["ranges"]) == ("T", "a", [[3, 4]])
    assert trace["scores"] == [[0, 0, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0]] and trace["thresholds"] == [
        2.5
    ]
    assert trace["values"] == [0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0]
    # the mean rule gives the same points here (windows do not overlap)
    r2 = run_experiment(_dataset(rule="mean"), ConceptIncremental(), Naive(MaxAbs()), ["range_f1"])
    assert r2.R["range_f1"][0, 0] == r.R["range_f1"][0, 0]


def test_metric_params_reach_the_metric():
    base = run_experiment(_dataset(), ConceptIncremental(), Naive(MaxAbs()), ["range_f1"])
    existence = run_experiment(
        _dataset(),
        ConceptIncremental(),
        Naive(MaxAbs()),
        ["range_f1"],
        metric_params={"range_f1": {"alpha": 1.0}},
    )
    # alpha 1: recall is existence only (1/2), the same here; channel a's overlap is full anyway
    assert existence.R["range_f1"][0, 0] == pytest.approx(base.R["range_f1"][0, 0])
    wide = run_experiment(
        _dataset(),
        ConceptIncremental(),
        Naive(MaxAbs()),
        ["vus_pr"],
        metric_params={"vus_pr": {"window": 0}},
    )
    narrow = run_experiment(_dataset(), ConceptIncremental(), Naive(MaxAbs()), ["vus_pr"])
    assert wide.R["vus_pr"][0, 0] != narrow.R["vus_pr"][0, 0]


_SPEC = {
    "datasets": [{"name": "synthetic"}],
    "scenarios": [{"name": "concept_aware"}],
    "strategies": ["naive"],
    "detectors": [{"name": "iforest"}],
}


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            {"base_metrics": ["vus_pr"], "base_metric_params": {"vus_pr": {"widow": 3}}},
            "did you mean 'window'",
        ),
        (
            {"base_metrics": ["vus_pr"], "base_metric_params": {"range_f1": {"alpha": 0.1}}},
            "not one of the base metrics",
        ),
        (
            {"base_metrics": ["range_f1"], "base_metric_params": {"range_f1": {"alpha": 3}}},
            r"in \[0, 1\]",
        ),
        (
            {"base_metrics": ["roc_auc"], "base_metric_params": {"roc_auc": {"x": 1}}},
            "takes no parameter",
        ),
        (
            {"base_metrics": ["vus_pr"], "base_metric_params": {"vus_pr": {"thresholds": 1}}},
            "integer from 2",
        ),
    ],
)
def test_spec_checks_metric_params(extra, message):
    with pytest.raises(SpecError, match=message):
        parse_spec({**_SPEC, **extra})


def test_spec_records_metric_params_in_the_run_identity():
    plain = parse_spec({**_SPEC, "base_metrics": ["vus_pr"]}).configs[0]
    tuned = parse_spec(
        {**_SPEC, "base_metrics": ["vus_pr"], "base_metric_params": {"vus_pr": {"window": 20}}}
    ).configs[0]
    assert "base_metric_params" not in plain.to_dict()
    assert tuned.to_dict()["base_metric_params"] == {"vus_pr": {"window": 20}}
    assert plain.run_id != tuned.run_id


def test_oracle_metrics_are_labelled_optimistic():
    optimistic = {name for name, m in BASE_METRIC_REGISTRY.items() if m.optimistic}
    for name in BASE_METRIC_REGISTRY:
        assert ("optimistic" in base_metric_label(name)) == (name in optimistic)
    assert optimistic == {
        "range_f1_oracle",
        "event_f1_oracle",
        "pa_f1_oracle",
        "affiliation_f1_oracle",
    }


def test_chance_level_of_every_base_metric():
    y = np.array([0, 0, 0, 1, 1, 0, 0, 0, 0, 0])
    assert chance_level("roc_auc", y) == 0.5 and chance_level("average_precision", y) == 0.2
    for name, m in BASE_METRIC_REGISTRY.items():
        value = chance_level(name, y)
        assert m.bounds[0] <= value <= m.bounds[1], name


def test_chance_level_of_a_windowed_concept_reads_its_points():
    from clad.core.chance import concept_chance_level

    concept = _dataset().test[0]
    # 4 anomalous points of 22, flagged all: event F1 = 2 * (4/22) / (1 + 4/22); the windows: 3 of 11
    assert concept_chance_level("event_f1", concept) == pytest.approx(2 * (4 / 22) / (1 + 4 / 22))
    assert concept_chance_level("average_precision", concept) == pytest.approx(3 / 11)


def test_export_per_series_is_for_tables(capsys):
    from clad.cli import main

    assert main(["export", "nowhere", "--per-series", "--format", "json"]) == 2
    assert "--per-series" in capsys.readouterr().err


def test_per_series_table_one_row_per_series_and_step():
    r = run_experiment(_dataset(), ConceptIncremental(), Naive(MaxAbs()), ["range_f1", "roc_auc"])
    import dataclasses

    table = per_series_table([dataclasses.replace(r, run_id="x")])
    assert table[["step", "test_concept", "series"]].values.tolist() == [
        [0, "T", "a"],
        [0, "T", "b"],
    ]
    assert table["range_f1"].tolist() == [pytest.approx(2 / 3), 0.0]


@pytest.mark.slow
def test_report_time_series_figure_renders(tmp_path):
    from clad.report.figures import FigureStore
    from clad.report.timeseries import trace_section

    r = run_experiment(_dataset(), ConceptIncremental(), Naive(MaxAbs()), ["range_f1"])
    figs = FigureStore(tmp_path)
    part = trace_section([r], figs)
    assert part is not None
    html = figs.render(part)  # the figure's mark on the page becomes its <figure>
    assert 'class="chart"' in html and "threshold" in html
    (path,) = figs.paths.values()
    assert path.suffix == ".js" and path.read_text().startswith(
        "cladChart("
    )  # drawn by the browser
    # a run without a time axis has no such figure
    plain = run_experiment(
        ConceptDataset(
            [Concept("A", np.zeros((5, 1)))], [Concept("A", np.zeros((4, 1)), [0, 1, 0, 0])]
        ),
        ConceptIncremental(),
        Naive(MaxAbs()),
        ["roc_auc"],
    )
    assert plain.extras is None or "time_series" not in plain.extras
    assert trace_section([plain], FigureStore(tmp_path / "b")) is None


@pytest.mark.slow
def test_trace_figure_is_readable_at_ten_steps(tmp_path):
    from clad.report.timeseries import PANEL_HEIGHT, trace_chart

    rng = np.random.default_rng(0)
    trace = {
        "concept": "A",
        "series": "A-1",
        "bucket": 4,
        "values": rng.normal(size=500).tolist(),
        "ranges": [[100, 180], [1500, 1510]],
        "steps": [f"C{i}" for i in range(10)],
        "scores": [rng.random(500).tolist() for _ in range(10)],
        "thresholds": [0.9] * 10,
    }
    spec, height = trace_chart(trace, "d / s / naive / iforest / seed 0")
    assert len(spec["vconcat"]) == 11  # the series and a panel per step
    assert PANEL_HEIGHT >= 60 and height >= 11 * PANEL_HEIGHT  # every panel its own height


@pytest.mark.slow
def test_report_marks_oracle_metrics_optimistic_wherever_shown(tmp_path):
    import re

    from sklearn.ensemble import IsolationForest

    from clad.datasets import make_synthetic
    from clad.report import make_report
    from clad.scenarios import ConceptAware

    ds = make_synthetic(n_concepts=3, random_state=0)
    runs = [
        run_experiment(
            ds,
            ConceptAware(),
            Naive(IsolationForest(n_estimators=10, random_state=0)),
            ["range_f1_oracle", "roc_auc"],
            seed=s,
        )
        for s in (0, 1)
    ]
    report = make_report(runs, tmp_path)
    page = report.all_text()
    text = re.sub(r'src="data:[^"]*"|href="[^"]*"|id="[^"]*"', "", page)
    shown = [
        m.end() for m in re.finditer(r"range_f1_oracle(?!\.png|\.js)", text)
    ]  # file names aside
    assert shown and all(text[i:].startswith(" (optimistic") for i in shown)
