"""SKAB as published: the time-ordered split, the SKAB loader, the control-chart detector, the
score post-processing, pooled counts, and the leaderboard rows reproduced from the raw files."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clad.datasets.ordered import ordered_split
from clad.errors import DataError
from tests.data_helpers import SHARED, needs

needs_data = needs("skab")


# -- the ordered split -------------------------------------------------------------------------

X = np.arange(20.0).reshape(10, 2)
Y = np.array([0, 1, 0, 1, 0, 0, 1, 1, 0, 0])


def test_ordered_split_keeps_order_and_prefix_anomalies():
    tr, te, rec = ordered_split("a", X, Y, train_rows=4)
    assert tr.X[:, 0].tolist() == [0, 2, 4, 6] and tr.y.tolist() == [0, 1, 0, 1]
    assert te.X[:, 0].tolist() == [8, 10, 12, 14, 16, 18] and te.y.tolist() == [0, 0, 1, 1, 0, 0]
    assert rec == {
        "kind": "ordered",
        "rows": 10,
        "train_rows": 4,
        "test": "rest",
        "prefix_anomalies": "keep",
        "prefix_anomalies_found": 2,
    }


def test_ordered_split_drops_or_masks_prefix_anomalies():
    tr, te, _ = ordered_split("a", X, Y, train_rows=4, prefix_anomalies="drop", test="all")
    assert tr.X[:, 0].tolist() == [0, 4] and tr.y.tolist() == [0, 0]
    assert te.n_rows == 10 and te.y.tolist() == Y.tolist()  # dropped from training only
    tr, te, _ = ordered_split("a", X, Y, train_rows=4, prefix_anomalies="mask", test="all")
    assert tr.X[:, 0].tolist() == [0, 4]
    assert te.X[:, 0].tolist() == [0, 4, 8, 10, 12, 14, 16, 18]  # masked: evaluated nowhere
    tr, te, _ = ordered_split("a", X, Y, train_share=0.35)  # floor(3.5) = 3 rows
    assert tr.n_rows == 3 and te.n_rows == 7


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"train_rows": 10}, "leaves nothing to test"),
        ({}, "give one of train_rows"),
        ({"train_rows": 3, "train_share": 0.5}, "give one of train_rows"),
        ({"train_share": 1.5}, "train_share=1.5"),
        ({"train_rows": 3, "prefix_anomalies": "hide"}, "prefix_anomalies='hide'"),
        ({"train_rows": 3, "test": "tail"}, "test='tail'"),
    ],
)
def test_ordered_split_refuses_bad_values(kwargs, words):
    with pytest.raises(DataError, match=words):
        ordered_split("a", X, Y, **kwargs)


@needs_data
def test_skab_loader_gives_the_published_split():
    from clad.datasets import DATASETS

    ds = DATASETS.build("skab", {"data_dir": str(SHARED)})
    assert len(ds.train) == len(ds.test) == 34 and ds.train_names[0] == "valve1/0"
    assert all(c.n_rows == 400 for c in ds.train)
    # SKAB's own numbers: 23,801 test rows, 12,771 of them anomalous (TP + FN of its leaderboard rows)
    assert sum(c.n_rows for c in ds.test) == 23801 and sum(c.n_anomalies for c in ds.test) == 12771
    raw = pd.read_csv(SHARED / "skab" / "other" / "14.csv", sep=";")
    j = ds.test_names.index("other/14")
    np.testing.assert_array_equal(ds.test[j].X[:, 0], raw["Accelerometer1RMS"].to_numpy()[400:])
    assert ds.metadata["split"]["files"]["other/14"]["train_rows"] == 400
    groups = DATASETS.build(
        "skab", {"data_dir": str(SHARED), "concepts": "groups", "groups": ["valve2"]}
    )
    assert groups.train_names == ("valve2",) and groups.train[0].n_rows == 4 * 400


# -- score post-processing ---------------------------------------------------------------------

from clad.detectors.postprocess import Postprocessed, check_postprocess, rolling  # noqa: E402


@pytest.mark.parametrize("kind", ["median", "mean", "max"])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_rolling_equals_pandas(kind, k):
    values = np.random.default_rng(k).normal(size=40)
    frame = pd.Series(values).rolling(k)
    expected = getattr(frame, kind)().to_numpy()
    got = rolling(values, kind, k, warmup="unflagged", floor=-10.0)
    np.testing.assert_allclose(got[k - 1 :], expected[k - 1 :], rtol=1e-12, atol=1e-12)
    assert np.all(got[: k - 1] == -10.0)  # the warm-up: below every full window and the floor
    partial = getattr(pd.Series(values).rolling(k, min_periods=1), kind)().to_numpy()
    np.testing.assert_allclose(
        rolling(values, kind, k, warmup="partial"), partial, rtol=1e-12, atol=1e-12
    )


def test_postprocessed_detector_smooths_each_test_concept_in_row_order():
    rng = np.random.default_rng(0)
    train, test = rng.normal(size=(300, 3)), rng.normal(size=(60, 3))
    test[30:33] += 8.0
    det = Postprocessed("iforest", {"n_estimators": 20, "random_state": 0}, {"median": 5}).fit(
        train
    )
    raw = det.detector_.score(test)
    expected = pd.Series(raw).rolling(5).median().to_numpy()
    got = det.score(test)
    np.testing.assert_array_equal(got[4:], expected[4:])
    assert np.all(got[:4] <= det.threshold_) and np.all(got[:4] <= np.nanmin(expected))
    # a median over 5 rows keeps the 3-row burst (its smallest score), one over 7 rows hides it
    wide = Postprocessed("iforest", {"n_estimators": 20, "random_state": 0}, {"median": 7}).fit(
        train
    )
    assert raw[30:33].min() > raw[:30].max()
    assert got[32] == raw[30:33].min() and wide.score(test)[32] < raw[30:33].min()


@pytest.mark.parametrize(
    "bad", [{"median": 0}, {"median": 2.5}, {"mode": 3}, {"median": 3, "max": 3}, 5]
)
def test_postprocess_refuses_bad_declarations(bad):
    from clad.errors import DetectorError

    with pytest.raises(DetectorError, match="expected one filter"):
        check_postprocess(bad)


# -- several statistics, one decision ----------------------------------------------------------

from clad.detectors.control_charts import HotellingT2, combine_statistics  # noqa: E402


def test_any_and_all_rules_flag_as_declared():
    stats = {"t2": np.array([1.0, 5.0, 1.0, 5.0, 4.0]), "q": np.array([1.0, 1.0, 9.0, 9.0, 3.0])}
    limits = {"t2": 4.0, "q": 3.0}
    # row 4 sits exactly on both limits: not above either (flags are statistic > limit)
    assert (combine_statistics(stats, limits, "any") > 1).tolist() == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert (combine_statistics(stats, limits, "all") > 1).tolist() == [
        False,
        False,
        False,
        True,
        False,
    ]
    # a statistic just above its limit stays flagged although its ratio rounds to 1
    just = {"t2": np.array([np.nextafter(3.0, 4.0)])}
    assert combine_statistics(just, {"t2": 3.0}) > 1


def test_t2_q_chart_flags_rows_off_the_training_subspace():
    rng = np.random.default_rng(1)
    latent = rng.normal(size=(400, 2))
    train = np.hstack([latent, latent @ [[1.0], [1.0]]]) + 0.01 * rng.normal(size=(400, 3))
    det = HotellingT2(pca=True, explained_variance=0.9).fit(train)
    assert det.pca_.n_components_ == 2 and set(det.limits_) == {"t2", "q"}
    off = np.array([[0.0, 0.0, 1.0]])  # small in T², far from the plane: Q alone exceeds its limit
    stats = det.statistics(off)
    assert stats["q"][0] > det.limits_["q"] and stats["t2"][0] < det.limits_["t2"]
    assert det.score(off)[0] > 1
    assert not (det.set_params(rule="all").score(off)[0] > 1)


# -- confusion counts and pooled aggregation ---------------------------------------------------

from clad.metrics import pooled_counts, pooled_scores  # noqa: E402
from clad.metrics.base import get_base_metric  # noqa: E402


def test_pooled_f1_far_mar_equal_hand_computed_counts():
    # two steps x three test concepts; hand-counted cells (tp, fp, fn, tn)
    cells = {
        (0, 0): (3, 1, 1, 5),
        (0, 1): (0, 2, 4, 4),
        (0, 2): (2, 0, 0, 8),
        (1, 0): (1, 3, 3, 3),
        (1, 1): (4, 1, 0, 5),
        (1, 2): (0, 0, 2, 8),
    }
    R = {
        m: np.array([[cells[i, j][k] for j in range(3)] for i in range(2)], dtype=float)
        for k, m in enumerate(("tp", "fp", "fn", "tn"))
    }
    diag = pooled_counts(R, "diagonal", steps=["a", "b"], test_names=["a", "b", "c"])
    assert diag == {"tp": 7, "fp": 2, "fn": 1, "tn": 10}  # cells (a, a) and (b, b)
    s = pooled_scores(diag)
    assert s["f1"] == pytest.approx(14 / 17) and s["precision"] == pytest.approx(7 / 9)
    assert (
        s["recall"] == pytest.approx(7 / 8)
        and s["far"] == pytest.approx(2 / 12)
        and s["mar"] == pytest.approx(1 / 8)
    )
    off = pooled_counts(R, "off_diagonal", steps=["a", "b"], test_names=["a", "b", "c"])
    assert off == {"tp": 3, "fp": 5, "fn": 9, "tn": 23}
    assert pooled_counts(R, "last_row") == {"tp": 5, "fp": 4, "fn": 5, "tn": 16}
    # pooled is not the mean of the cells' F1: the larger test sets weigh more
    f1_cells = [2 * tp / (2 * tp + fp + fn) for tp, fp, fn, _ in (cells[0, 0], cells[1, 1])]
    assert np.mean(f1_cells) != pytest.approx(s["f1"])
    assert np.isnan(pooled_scores({"tp": 0, "fp": 0, "fn": 0, "tn": 4})["precision"])


def test_count_metrics_on_labels_and_one_class():
    y = np.array([0, 0, 1, 1, 1, 0])
    flagged = np.array([1, 0, 1, 0, 0, 0])
    assert [get_base_metric(m)(y, flagged) for m in ("tp", "fp", "fn", "tn")] == [
        1.0,
        1.0,
        2.0,
        2.0,
    ]
    assert (
        get_base_metric("fp")(np.zeros(4, int), np.array([1, 1, 0, 0])) == 2.0
    )  # defined on one class


def test_a_count_metric_passes_clad_check():
    from clad.testing import check_base_metric

    for m in ("tp", "fp", "fn", "tn"):
        assert check_base_metric(m).ok


def test_counts_raise_no_reversed_scores_warning():
    import warnings

    from clad.core.data_checks import check_reversed

    # far below their chance level (flagging every row) on every concept: counts, not reversed scores
    R = {"tp": np.array([[0.0, 5.0], [5.0, 0.0]]), "fp": np.array([[0.0, 9.0], [9.0, 0.0]])}
    chance = {"tp": [5.0, 5.0], "fp": [9.0, 9.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_reversed(R, ["a", "b"], ["a", "b"], chance)


def test_counts_are_kept_on_a_single_class_test_concept():
    from clad.core.concepts import Concept
    from clad.core.evaluation import Evaluator
    from clad.core.scored import Scored

    class Fixed:
        def score(self, X, concept_id=None):
            return Scored(np.asarray(X)[:, 0].astype(float), 0.5)

    normal = Concept("n", np.array([[0.0], [1.0], [0.2]]), np.array([0, 0, 0]))
    with pytest.warns(RuntimeWarning, match="its additive ones, counts and raw scores, are kept"):
        ev = Evaluator([normal], base_metrics=["roc_auc", "fp", "tn"])
        ev.end_of_concept(Fixed(), "n", with_ids=False)
    R = ev.result().R
    assert np.isnan(R["roc_auc"][0, 0]) and R["fp"][0, 0] == 1.0 and R["tn"][0, 0] == 2.0


# -- the leaderboard rows, from the spec in scenarios/ -------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = {
    "T2": (0.66, 19.21, 42.60),
    "T2+Q": (0.76, 26.62, 24.92),
    "IForest": (0.29, 2.56, 82.89),
}


def _diagonal_counts(cfg):
    """The pooled diagonal counts of one run configuration of the spec (R's diagonal without the
    off-diagonal cells: each experiment's detector trained on its own prefix, as SKAB does)."""
    from clad.datasets import DATASETS
    from clad.detectors import make_detector

    ds = DATASETS.build(cfg.dataset.name, {**cfg.dataset.params, "data_dir": str(SHARED)})
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for tr, te in zip(ds.train, ds.test):
        det = make_detector(cfg.detector.name, cfg.detector.params).fit(tr.X)
        flagged = (det.score(te.X) > det.threshold_).astype(int)
        for m in counts:
            counts[m] += int(get_base_metric(m)(te.y, flagged))
    return counts


def _spec_configs():
    from clad.engine.spec import load_spec

    return {
        c.detector.display: c for c in load_spec(ROOT / "scenarios" / "skab_outliers.toml").configs
    }


@needs_data
@pytest.mark.parametrize("label", ["T2", "T2+Q", pytest.param("IForest", marks=pytest.mark.slow)])
def test_skab_leaderboard_rows_reproduced(label):
    counts = _diagonal_counts(_spec_configs()[label])
    s = pooled_scores(counts)
    assert sum(counts.values()) == 23801
    got = (round(s["f1"], 2), round(100 * s["far"], 2), round(100 * s["mar"], 2))
    assert got == PUBLISHED[label]


@needs_data
def test_a_run_records_the_ordered_split_and_pools_its_counts():
    import warnings

    from clad.core.experiment import run_experiment
    from clad.datasets import load_skab
    from clad.detectors import make_detector
    from clad.scenarios import ConceptIncremental
    from clad.strategies import Naive

    ds = load_skab(data_dir=str(SHARED), groups=["valve2"])
    det = make_detector(
        "postprocessed",
        {
            "detector": "hotelling_t2",
            "params": {"pca": True, "limits": "skab"},
            "postprocess": {"median": 5},
        },
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no reversed-scores warning on the counts
        res = run_experiment(
            ds, ConceptIncremental(), Naive(det), base_metrics=["tp", "fp", "fn", "tn"], seed=0
        )
    split = res.extras["split"]
    assert split["train_rows"] == 400 and split["files"]["valve2/3"]["prefix_anomalies"] == "keep"
    c = pooled_counts(res.R, "diagonal", steps=res.concepts, test_names=res.test_concepts)
    assert sum(c.values()) == sum(t.n_rows for t in ds.test)
    assert c["tp"] + c["fn"] == sum(t.n_anomalies for t in ds.test)


# -- the spec's postprocess key: every detector alike -------------------------------------------


def test_spec_postprocess_wraps_every_detector_and_is_recorded():
    from clad.engine.spec import parse_spec
    from tests.runner_helpers import small_spec

    spec = parse_spec(
        small_spec(
            postprocess={"median": 3, "warmup": "partial"},
            detectors=[{"name": "iforest", "n_estimators": 10, "label": "IF"}, {"name": "hbos"}],
        )
    )
    dets = {c.detector.display: c.detector for c in spec.configs}
    assert dets["IF"].name == "postprocessed" and dets["IF"].params == {
        "detector": "iforest",
        "params": {"n_estimators": 10},
        "postprocess": {"median": 3},
        "warmup": "partial",
    }
    assert dets["hbos"].params["detector"] == "hbos"
    # without the key nothing changes
    plain = parse_spec(small_spec(detectors=[{"name": "hbos"}]))
    assert [c.detector.name for c in plain.configs] == ["hbos"] * len(plain.configs)


@pytest.mark.parametrize(
    "value, words",
    [
        ({"median": 0}, "expected one filter"),
        ({"mode": 3}, "expected one filter"),
        ({"median": 3, "warmup": "late"}, "warmup='late'"),
    ],
)
def test_spec_postprocess_refuses_bad_values_at_spec_time(value, words):
    from clad.engine.spec import parse_spec
    from clad.errors import CladError
    from tests.runner_helpers import small_spec

    with pytest.raises(CladError, match=words):
        parse_spec(small_spec(postprocess=value))


# -- the table loader's ordered split -----------------------------------------------------------


def test_table_loader_splits_each_concept_in_row_order():
    from clad.datasets import DATASETS

    df = pd.DataFrame(
        {"m": ["a"] * 6 + ["b"] * 5, "y": [0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1], "x": np.arange(11.0)}
    )
    ds = DATASETS.build(
        "table",
        {
            "frame": df,
            "concept_column": "m",
            "label_column": "y",
            "ordered": {"train_rows": 3, "prefix_anomalies": "drop"},
        },
    )
    a, b = ds.train_names.index("a"), ds.train_names.index("b")
    assert ds.train[a].X[:, 0].tolist() == [0.0, 2.0] and ds.test[a].X[:, 0].tolist() == [
        3.0,
        4.0,
        5.0,
    ]
    assert ds.train[b].X[:, 0].tolist() == [6.0, 7.0] and ds.test[b].y.tolist() == [0, 1]
    assert ds.metadata["split"]["concepts"]["a"]["prefix_anomalies_found"] == 1
    from clad.errors import CladError

    with pytest.raises(CladError, match="ordered.trian_rows: unknown key"):
        DATASETS.build(
            "table",
            {"frame": df, "concept_column": "m", "label_column": "y", "ordered": {"trian_rows": 3}},
        )


@needs_data
def test_a_run_with_counts_records_its_pooled_scores():
    from clad.core.experiment import run_experiment
    from clad.datasets import load_skab
    from clad.detectors import make_detector
    from clad.scenarios import ConceptIncremental
    from clad.strategies import Naive

    ds = load_skab(data_dir=str(SHARED), groups=["valve2"])
    det = make_detector("hotelling_t2", {"limit_scale": 2.0})
    res = run_experiment(
        ds, ConceptIncremental(), Naive(det), base_metrics=["f1", "tp", "fp", "fn", "tn"], seed=0
    )
    pooled = res.extras["pooled"]
    counts = pooled_counts(res.R, "off_diagonal", steps=res.concepts, test_names=res.test_concepts)
    assert {k: pooled["off_diagonal"][k] for k in counts} == counts
    assert pooled["diagonal"]["far"] == pytest.approx(
        pooled["diagonal"]["fp"] / (pooled["diagonal"]["fp"] + pooled["diagonal"]["tn"])
    )
    plain = run_experiment(ds, ConceptIncremental(), Naive(det), base_metrics=["f1"], seed=0)
    assert "pooled" not in (plain.extras or {})


@pytest.mark.parametrize(
    "det, words",
    [
        (
            {"name": "postprocessed", "detector": "iforest", "postprocess": {"median": 0}},
            "postprocess=\\{'median': 0\\}",
        ),
        (
            {"name": "postprocessed", "detector": "iforset", "postprocess": {"median": 3}},
            "detector='iforset'",
        ),
        ({"name": "hotelling_t2", "rule": "either"}, "rule='either'"),
    ],
)
def test_detector_declarations_are_checked_when_the_spec_is_read(det, words):
    from clad.engine.spec import parse_spec
    from clad.errors import CladError
    from tests.runner_helpers import small_spec

    with pytest.raises(CladError, match=words):
        parse_spec(small_spec(detectors=[det]))
