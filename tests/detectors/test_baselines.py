"""Named baselines run like any method: hand computations on tiny series, chance-level random
scores with a spread over seeds, the spec option and the page's verdict."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from clad.cli import main
from clad.detectors import DETECTORS, make_detector
from clad.detectors.baselines import (
    BASELINES,
    NearestNormalDistance,
    PCAReconstruction,
    RandomScores,
    SensorRange,
    WindowL2Norm,
)
from clad.engine.spec import parse_spec
from clad.errors import SpecError

from tests.runner_helpers import small_spec, spec_toml, synthetic

# three training windows of 2 steps x 2 channels, and two test windows
TRAIN = np.array(
    [[[0.0, 10.0], [1.0, 12.0]], [[2.0, 14.0], [1.0, 10.0]], [[0.0, 12.0], [2.0, 14.0]]]
)
TEST = np.array([[[3.0, 12.0], [1.0, 9.0]], [[1.0, 11.0], [1.0, 11.0]]])


def test_sensor_range_counts_values_outside_each_channels_training_range():
    # channel 0 lies in [0, 2], channel 1 in [10, 14]: the first window has 3 (> 2) and 9 (< 10) outside
    det = SensorRange().fit(TRAIN)
    assert det.score(TEST).tolist() == [2.0, 0.0]
    assert det.threshold_ == 0.0  # every training window lies inside the range


def test_window_l2_norm_is_the_root_mean_square_of_the_scaled_window():
    raw = WindowL2Norm(scale="none").fit(TRAIN)
    assert raw.score(TEST)[1] == pytest.approx(math.sqrt((1 + 121 + 1 + 121) / 4))
    std = WindowL2Norm().fit(
        TRAIN
    )  # standardised per channel: channel 0 mean 1, std sqrt(2/3); channel 1 mean 12, std sqrt(8/3)
    z = [(3 - 1) / math.sqrt(2 / 3), 0.0, 0.0, (9 - 12) / math.sqrt(8 / 3)]
    assert std.score(TEST)[0] == pytest.approx(math.sqrt(sum(v * v for v in z) / 4))


def test_nearest_normal_distance_is_the_distance_to_the_closest_training_window():
    det = NearestNormalDistance(scale="none").fit(TRAIN)
    # the second test window [1, 11, 1, 11] against [0, 10, 1, 12], [2, 14, 1, 10], [0, 12, 2, 14]
    expected = min(math.sqrt(1 + 1 + 0 + 1), math.sqrt(1 + 9 + 0 + 1), math.sqrt(1 + 1 + 1 + 9))
    assert det.score(TEST)[1] == pytest.approx(expected)
    assert det.score(TRAIN).tolist() == [0.0, 0.0, 0.0]


def test_pca_reconstruction_is_the_mean_absolute_error_of_the_projection():
    train = np.array(
        [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    )  # on the line y = x: one component holds it all
    det = PCAReconstruction(n_components=1, scale="none").fit(train)
    # (1, 2) - mean (1, 1) = (0, 1); its projection on (1, 1)/sqrt(2) is (0.5, 0.5): rebuilt (1.5, 1.5)
    assert det.score(np.array([[1.0, 2.0]]))[0] == pytest.approx(0.5)
    assert det.score(train) == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    assert (
        PCAReconstruction()._components(d=100, n=500) == 30
        and PCAReconstruction()._components(d=8, n=500) == 2
    )


def test_random_scores_are_at_chance_over_200_seeds_with_a_spread():
    rng = np.random.default_rng(0)
    X_train, X_test = rng.normal(size=(100, 3)), rng.normal(size=(300, 3))
    y = (np.arange(300) < 30).astype(int)
    X_test[y == 1] += 5.0  # easy anomalies: a detector with any signal would find them
    aucs = np.array(
        [
            roc_auc_score(y, RandomScores(random_state=s).fit(X_train).score(X_test))
            for s in range(200)
        ]
    )
    se = aucs.std(ddof=1) / math.sqrt(aucs.size)
    assert abs(aucs.mean() - 0.5) < 3 * se
    assert aucs.std() > 0.01  # a spread over seeds, unlike the analytic chance level
    det = RandomScores(random_state=7).fit(X_train)
    assert np.array_equal(
        det.score(X_test), det.score(X_test.copy())
    )  # the same rows, the same scores


def test_every_baseline_is_registered_and_seeded_from_the_run():
    assert set(BASELINES) <= set(DETECTORS.names())
    det = make_detector("random_scores", random_state=3)
    assert det.random_state == 3


def test_spec_option_adds_the_baselines_to_every_block():
    spec = parse_spec(small_spec(baselines=True, datasets=[synthetic(), synthetic(n_concepts=3)]))
    names = {(c.dataset.params.get("n_concepts"), c.detector.name) for c in spec.configs}
    for n in (2, 3):
        assert {d for k, d in names if k == n} == {"hbos", *BASELINES}
    some = parse_spec(small_spec(baselines=["random_scores"]))
    assert sorted({c.detector.name for c in some.configs}) == ["hbos", "random_scores"]
    with pytest.raises(
        SpecError,
        match=r"baselines: 'random_score' is not a baseline \(did you mean 'random_scores'\?\)",
    ):
        parse_spec(small_spec(baselines=["random_score"]))


def test_random_scores_enter_the_statistics_and_the_page_says_who_beats_them(tmp_path):
    from clad.report import make_report
    from clad.results import load_results

    spec = tmp_path / "b.toml"
    spec.write_text(
        spec_toml(
            name="b",
            seeds=3,
            baselines=["random_scores"],
            detectors=[{"name": "iforest", "n_estimators": 20}],
            datasets=[synthetic(n_concepts=3, n_train=100, n_test=80)],
        )
    )
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 0
    runs = json.loads((tmp_path / "out" / "results.json").read_text())["runs"]
    auc = {
        r["seed"]: r["metrics"]["roc_auc"]["continual_average"]
        for r in runs
        if r["detector"] == "random_scores"
    }
    assert len(set(auc.values())) == 3  # a spread over seeds
    report = make_report(load_results(tmp_path / "out"), tmp_path / "page")
    verdicts = report.tables["baselines"].read_text()
    assert "iforest,naive" in verdicts and ",random_scores," in verdicts
    assert "random_scores" in report.tables["statistics"].read_text()  # compared like any detector
    page = report.all_text()
    assert "do not beat the best baseline by more than noise" in page
    assert (
        "configurations beat the best baseline (random_scores) by more than noise" in page
    )  # the headline
