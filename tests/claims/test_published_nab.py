"""NAB as published: the NAB score's pieces on hand cases, the loader's split, the null detector's
and the windowed Gaussian detector's scoreboard rows from the raw series."""

import json
import math

import numpy as np
import pytest

from clad.metrics.base import get_base_metric
from clad.metrics.nab import label_windows, nab_normalized, nab_raw
from tests.data_helpers import SHARED, needs

needs_data = needs("nab")

# one window of 100 rows, [1000, 1099], in 2,000 rows: the probationary period is floor(0.15 * 2000) = 300 rows
N, LO, HI = 2000, 1000, 1099
S_EDGE = math.tanh(2.5)  # 2 sigmoid(5) - 1: the score at the window's left edge


def _y():
    y = np.zeros(N, dtype=np.int8)
    y[LO : HI + 1] = 1
    return y


def _detect(*rows):
    s = np.zeros(N)
    s[list(rows)] = 1.0
    return s


def test_one_window_detected_at_its_start_earns_the_whole_true_positive():
    assert nab_raw(_y(), _detect(LO), 1.0) == pytest.approx(1.0)
    # a later detection in the same window changes nothing: the earliest counts, once
    assert nab_raw(_y(), _detect(LO, LO + 50, HI), 1.0) == pytest.approx(1.0)


def test_a_detection_at_the_window_end_earns_little():
    # place -(HI - HI + 1) / 100 = -0.01: 2 sigmoid(0.05) - 1 = tanh(0.025), scaled by the edge's value
    assert nab_raw(_y(), _detect(HI), 1.0) == pytest.approx(math.tanh(0.025) / S_EDGE)
    # halfway: place -0.5
    assert nab_raw(_y(), _detect(LO + 50), 1.0) == pytest.approx(math.tanh(1.25) / S_EDGE)


def test_a_missed_window_and_false_positives():
    assert nab_raw(_y(), np.zeros(N), 1.0) == -1.0  # the window missed: -fn weight
    assert nab_raw(_y(), np.zeros(N), 1.0, "reward_low_FN_rate") == -2.0
    # a false positive before any window: -1 times the fp weight (the window still missed)
    assert nab_raw(_y(), _detect(500), 1.0) == pytest.approx(-1.0 - 0.11)
    assert nab_raw(_y(), _detect(500), 1.0, "reward_low_FP_rate") == pytest.approx(-1.0 - 0.22)
    # one window-width (less one row) past the window's end: d = 99 / 99 = 1, 2 sigmoid(-5) - 1 = -tanh(2.5)
    assert nab_raw(_y(), _detect(LO, HI + 99), 1.0) == pytest.approx(1.0 - 0.11 * S_EDGE)
    # right after the window: barely negative; in the probationary period: not scored at all
    assert nab_raw(_y(), _detect(LO, HI + 1), 1.0) == pytest.approx(
        1.0 - 0.11 * math.tanh(5 / 99 / 2)
    )
    assert nab_raw(_y(), _detect(LO, 100), 1.0) == pytest.approx(1.0)
    # detections are scores at least the threshold
    s = np.zeros(N)
    s[LO] = 0.7
    assert nab_raw(_y(), s, 0.7) == pytest.approx(1.0) and nab_raw(_y(), s, 0.71) == -1.0


def test_normalisation_between_the_null_and_the_perfect_detector():
    assert nab_normalized(-116.0, 116) == 0.0 and nab_normalized(116.0, 116) == 100.0
    assert nab_normalized(-232.0, 116, profile="reward_low_FN_rate") == 0.0
    assert nab_normalized(0.0, 116) == pytest.approx(50.0)
    assert label_windows([0, 1, 1, 0, 0, 1]).tolist() == [[1, 2], [5, 5]]


def test_nab_metrics_pass_clad_check_and_take_a_threshold():
    from clad.metrics.base import check_metric_params
    from clad.testing import check_base_metric

    for m in ("nab_standard", "nab_low_fp", "nab_low_fn"):
        assert check_base_metric(m).ok and get_base_metric(m).additive
    assert check_metric_params({"nab_standard": {"threshold": 1.0}}) == {
        "nab_standard": {"threshold": 1.0}
    }
    with pytest.raises(Exception, match="threshold='high'"):
        check_metric_params({"nab_standard": {"threshold": "high"}})


def _corpus(detector: str, params: dict, threshold: float) -> dict[str, float]:
    from clad.datasets import load_nab
    from clad.detectors import make_detector

    ds = load_nab(data_dir=str(SHARED))
    raw = {m: 0.0 for m in ("nab_standard", "nab_low_fp", "nab_low_fn")}
    windows = 0
    for tr, te in zip(ds.train, ds.test):
        det = make_detector(detector, params).fit(tr.X)
        scores = det.score(te.X)
        windows += len(label_windows(te.y))
        for m in raw:
            raw[m] += get_base_metric(m)(te.y, scores, threshold=threshold)
    profiles = {
        "nab_standard": "standard",
        "nab_low_fp": "reward_low_FP_rate",
        "nab_low_fn": "reward_low_FN_rate",
    }
    return {m: nab_normalized(v, windows, profile=profiles[m]) for m, v in raw.items()} | {
        "windows": windows
    }


def _published(detector: str) -> tuple[float, float, float]:
    board = json.loads((SHARED / "nab" / "results" / "final_results.json").read_text())[detector]
    return board["standard"], board["reward_low_FP_rate"], board["reward_low_FN_rate"]


@needs_data
def test_nab_loader_trains_on_the_probationary_period():
    from clad.datasets import DATASETS

    ds = DATASETS.build("nab", {"data_dir": str(SHARED), "families": ["realKnownCause"]})
    j = ds.test_names.index("realKnownCause/nyc_taxi")
    assert ds.test[j].n_rows == 10320 and ds.train[j].n_rows == 750  # min(floor(0.15 * 10320), 750)
    np.testing.assert_array_equal(ds.train[j].X, ds.test[j].X[:750])
    assert (
        len(label_windows(ds.test[j].y))
        == len(ds.metadata["windows"]["realKnownCause/nyc_taxi"])
        == 5
    )


@needs_data
@pytest.mark.slow
def test_the_null_detector_scores_as_published():
    # NAB's null detector: every score 0.5, its threshold 0.625 (config/thresholds.json): nothing detected
    thresholds = json.loads((SHARED / "nab" / "config" / "thresholds.json").read_text())["null"]
    from clad.datasets import load_nab

    ds = load_nab(data_dir=str(SHARED))
    for m, profile in (
        ("nab_standard", "standard"),
        ("nab_low_fp", "reward_low_FP_rate"),
        ("nab_low_fn", "reward_low_FN_rate"),
    ):
        t = thresholds[profile]
        raw = sum(
            get_base_metric(m)(te.y, np.full(te.n_rows, 0.5), threshold=t["threshold"])
            for te in ds.test
        )
        assert raw == t["score"]  # -116, -116, -232: every window missed
        assert nab_normalized(raw, 116, profile=profile) == 0.0
    assert _published("null") == (0.0, 0.0, 0.0)


@needs_data
@pytest.mark.slow
def test_windowed_gaussian_scores_as_published():
    got = _corpus("windowed_gaussian", {}, 1.0)
    assert got["windows"] == 116
    for value, published in zip(
        (got["nab_standard"], got["nab_low_fp"], got["nab_low_fn"]), _published("windowedGaussian")
    ):
        assert abs(value - published) < 0.5
        assert round(value, 2) == round(published, 2)  # 39.65 / 20.87 / 47.41


def test_clad_check_refuses_a_detector_that_keeps_what_it_learned_while_scoring():
    from clad.testing import check_detector

    class Drifting:
        """Learns the running mean while it scores, and keeps it for the next call."""

        def fit(self, X):
            self.mean_ = float(np.mean(X))
            self.threshold_ = 1.0
            return self

        def score(self, X):
            out = np.abs(np.asarray(X)[:, 0] - self.mean_)
            self.mean_ = float(np.mean(X))
            return out

    report = check_detector(Drifting(), raise_on_failure=False)
    assert not report.ok and "scoring_twice_gives_the_same_scores" in str(report)
    from clad.detectors.windowed_gaussian import WindowedGaussian

    assert check_detector(WindowedGaussian()).ok


def test_a_run_records_the_scoreboard_score_of_its_cells():
    from clad.core.concepts import Concept, ConceptDataset
    from clad.core.experiment import run_experiment
    from clad.scenarios import ConceptIncremental
    from clad.strategies import Naive

    y = _y()
    X = np.zeros((N, 1))
    X[LO] = 50.0
    X[HI + 99] = 50.0  # a detection at the window's start, a false positive
    ds = ConceptDataset([Concept("s", np.zeros((300, 1)))], [Concept("s", X, y)])

    class Flags:
        def fit(self, X):
            self.threshold_ = 0.5
            return self

        def score(self, X):
            return (np.asarray(X)[:, 0] > 1).astype(float)

    res = run_experiment(
        ds,
        ConceptIncremental(),
        Naive(Flags()),
        base_metrics=["nab_standard"],
        metric_params={"nab_standard": {"threshold": 1.0}},
        seed=0,
    )
    raw = 1.0 - 0.11 * S_EDGE
    assert res.R["nab_standard"][0, 0] == pytest.approx(raw)
    # one window: null -1, perfect 1
    assert res.extras["nab"]["nab_standard"]["diagonal"] == pytest.approx(100 * (raw + 1) / 2)


def test_warm_start_primes_the_window_with_the_training_values():
    from clad.detectors.windowed_gaussian import WindowedGaussian

    rng = np.random.default_rng(0)
    train, test = rng.normal(size=(50, 1)), rng.normal(size=(30, 1))
    cold = WindowedGaussian(window_size=40, step_size=5).fit(train)
    warm = WindowedGaussian(window_size=40, step_size=5, warm_start=True).fit(train)
    # warm: the scores of the test rows when they follow the last 40 training values in one series
    joined = (
        WindowedGaussian(window_size=40, step_size=5)
        .fit(train)
        .score(np.vstack([train[-40:], test]))
    )
    np.testing.assert_array_equal(warm.score(test), joined[40:])
    np.testing.assert_array_equal(
        cold.score(test), WindowedGaussian(window_size=40, step_size=5).fit(test).score(test)
    )
    assert cold.score(test)[0] == 0.0 and warm.score(test)[0] > 0.0
