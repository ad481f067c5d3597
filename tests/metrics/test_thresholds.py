"""One threshold policy for every detector: "own" keeps today's numbers, {fpr = x} calibrates on
held-out normal rows, and every cell records the false-positive rate it reached."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from clad.cli import main
from clad.core.concepts import Concept, ConceptDataset
from clad.core.experiment import run_experiment
from clad.core.thresholds import (
    calibration_seed,
    calibration_split,
    check_threshold,
    fpr_threshold,
    min_calibration_rows,
)
from clad.errors import CladValueError, DataError
from clad.scenarios import ConceptAware, ConceptIncremental
from clad.strategies import Naive

from tests.runner_helpers import spec_toml, synthetic


class FirstFeature(BaseEstimator):
    """Score = the first feature (a detector easy to compute by hand)."""

    def fit(self, X):
        return self

    def score(self, X):
        return np.asarray(X, dtype=np.float64)[:, 0]


def _dataset():
    rng = np.random.default_rng(0)
    train = [
        Concept(n, rng.normal(loc=k, size=(200, 2)), np.zeros(200, dtype=np.int8))
        for k, n in enumerate("AB")
    ]
    test = []
    for k, n in enumerate("AB"):
        y = np.array([0] * 90 + [1] * 10, dtype=np.int8)
        X = rng.normal(loc=k, size=(100, 2)) + 3.0 * y[:, None]
        test.append(Concept(n, X, y))
    return ConceptDataset(train, test, name="toy")


def test_policies_are_checked():
    assert check_threshold("own") == "own" and check_threshold(None) == "own"
    assert check_threshold({"fpr": 0.1, "fraction": 0.5}) == {"fpr": 0.1, "calibration": 0.5}
    assert check_threshold({"fpr": 0.1, "calibration": 0.5}) == {"fpr": 0.1, "calibration": 0.5}
    assert check_threshold({"fpr": 0.1, "calibration": 300}) == {"fpr": 0.1, "calibration": 300}
    for bad in (0, 1, 1.0, 1.5, -3, True, "all", 0.0, 10**30, float("nan"), float("inf")):
        with pytest.raises(
            CladValueError,
            match=rf"threshold.calibration={bad!r}; expected a share of each training "
            r"concept's normal rows strictly between 0 and 1 \(e.g. 0.2\) or a "
            r"count of rows, an integer in \[2, 1,000,000,000\]",
        ):
            check_threshold({"fpr": 0.1, "calibration": bad})
    with pytest.raises(
        CladValueError, match=r"threshold.fraction=300; expected a share .* \(e.g. 0.2\)$"
    ):
        check_threshold({"fpr": 0.1, "fraction": 300})
    with pytest.raises(CladValueError, match="give calibration or fraction"):
        check_threshold({"fpr": 0.1, "fraction": 0.2, "calibration": 0.2})
    with pytest.raises(
        CladValueError, match=r"threshold.fpr=1.5; expected a number strictly between 0 and 1"
    ):
        check_threshold({"fpr": 1.5})
    with pytest.raises(CladValueError, match=r"unknown key 'fpt' \(did you mean 'fpr'\?\)"):
        check_threshold({"fpt": 0.05})
    with pytest.raises(CladValueError, match='expected "own"'):
        check_threshold("mine")


def test_fpr_threshold_and_realised_fpr_equal_a_hand_computation():
    ds = _dataset()
    r = run_experiment(
        ds,
        ConceptIncremental(),
        Naive(FirstFeature()),
        ["roc_auc", "f1"],
        seed=3,
        threshold={"fpr": 0.1, "fraction": 0.25},
    )
    kept, held = calibration_split(ds, 0.25, calibration_seed(3))
    assert (
        {k: len(v) for k, v in held.items()}
        == {"A": 50, "B": 50}
        == r.threshold["calibration_rows"]
    )
    from sklearn.metrics import f1_score

    for i, step in enumerate("AB"):
        # the concept just learned sets it, for every test concept: of 50 rows, the 0.9 * 51 = 45.9th smallest
        ordered = np.sort(held[step][:, 0])
        hand = ordered[44] + 0.9 * (ordered[45] - ordered[44])
        for j, c in enumerate(ds.test):
            threshold = r.threshold["threshold"][i][j]
            assert threshold == pytest.approx(hand, rel=1e-12, abs=0)
            normal = c.X[c.y == 0, 0]
            assert r.threshold["realised_fpr"][i][j] == np.mean(normal > threshold)
            assert r.R["f1"][i, j] == f1_score(c.y, c.X[:, 0] > threshold)
    assert r.R["roc_auc"].shape == (2, 2)
    assert r.threshold["calibrated_in_test_batch"] is False


def test_own_policy_keeps_each_detectors_threshold_and_records_its_fpr():
    ds = _dataset()
    plain = run_experiment(
        ds, ConceptIncremental(), Naive(FirstFeature()), ["roc_auc", "f1"], seed=0
    )
    own = run_experiment(
        ds, ConceptIncremental(), Naive(FirstFeature()), ["roc_auc", "f1"], seed=0, threshold="own"
    )
    for m in ("roc_auc", "f1"):
        assert np.array_equal(plain.R[m], own.R[m])
    c = ds.test[0]
    threshold = own.threshold["threshold"][0][0]
    assert own.threshold["policy"] == "own" and own.threshold["calibration_rows"] == {}
    assert own.threshold["realised_fpr"][0][0] == np.mean(c.X[c.y == 0, 0] > threshold)


def test_a_strategy_that_ignores_the_id_gets_the_same_thresholds_in_every_scenario():
    ds = _dataset()
    runs = [
        run_experiment(ds, sc, Naive(FirstFeature()), ["f1"], seed=1, threshold={"fpr": 0.05})
        for sc in (ConceptAware(), ConceptIncremental())
    ]
    assert runs[0].threshold == runs[1].threshold and np.array_equal(
        runs[0].R["f1"], runs[1].R["f1"]
    )


def test_spec_threshold_own_is_todays_run_and_fpr_enters_the_identity(tmp_path):
    base = dict(
        base_metrics=["roc_auc", "f1"], datasets=[synthetic(n_concepts=2, n_train=80, n_test=60)]
    )
    outs = {}
    for name, extra in (
        ("plain", {}),
        ("own", {"threshold": "own"}),
        ("fpr", {"threshold": {"fpr": 0.05}}),
    ):
        spec = tmp_path / f"{name}.toml"
        spec.write_text(spec_toml(name=name, **base, **extra))
        assert main(["run", str(spec), "--out", str(tmp_path / name)]) == 0
        outs[name] = json.loads((tmp_path / name / "results.json").read_text())["runs"][0]
    assert (
        outs["own"]["R"] == outs["plain"]["R"] and outs["own"]["run_id"] == outs["plain"]["run_id"]
    )
    assert outs["fpr"]["run_id"] != outs["plain"]["run_id"]
    assert outs["fpr"]["config"]["threshold"] == {"fpr": 0.05, "calibration": 0.2}
    assert outs["fpr"]["threshold"]["calibration_rows"] == {"C0": 16, "C1": 16}
    assert len(outs["fpr"]["threshold"]["realised_fpr"]) == 2


@pytest.mark.parametrize(
    "metrics,served",
    [
        (["roc_auc"], False),
        (["roc_auc", "average_precision", "vus_pr"], False),
        (["pa_f1_oracle"], False),
        (["roc_auc", "f1"], True),
        (["range_f1"], True),
    ],
)
def test_a_threshold_policy_serving_no_base_metric_is_refused(tmp_path, capsys, metrics, served):
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_toml(name="t", base_metrics=metrics, threshold={"fpr": 0.05}))
    rc = main(["run", str(spec), "--dry-run"])
    err = capsys.readouterr().err
    if served:
        assert rc == 0, err
    else:  # its calibration rows would change the scores' metrics for nothing
        assert (
            rc == 2
            and "threshold = {'fpr': 0.05} serves none of base_metrics " + ", ".join(metrics) in err
        )
        assert "remove threshold, or add a thresholded base metric" in err
        assert not (tmp_path / "out").exists()


def test_spec_rejects_a_bad_threshold(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text(spec_toml(name="bad", threshold={"fpr": 0}))
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    assert "threshold.fpr=0; expected a number strictly between 0 and 1" in capsys.readouterr().err
    spec.write_text(spec_toml(name="bad", threshold={"fpr": 0.05, "calibration": 1.5}))
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    assert "threshold.calibration=1.5; expected a share" in capsys.readouterr().err


def test_a_calibration_count_holds_that_many_rows_out_of_each_training_concept():
    ds = _dataset()
    r = run_experiment(
        ds,
        ConceptIncremental(),
        Naive(FirstFeature()),
        ["f1"],
        seed=2,
        threshold={"fpr": 0.1, "calibration": 120},
    )
    kept, held = calibration_split(ds, 120, calibration_seed(2))
    assert r.threshold["calibration_rows"] == {"A": 120, "B": 120} and [
        c.n_rows for c in kept.train
    ] == [80, 80]
    assert r.threshold["threshold"][0][0] == fpr_threshold(held["A"][:, 0], 0.1)
    with pytest.raises(
        DataError,
        match=r"threshold calibration = 200: training concept 'A' has 200 normal rows of "
        r"200; its calibration part would hold 200",
    ):
        run_experiment(
            ds,
            ConceptIncremental(),
            Naive(FirstFeature()),
            ["f1"],
            seed=2,
            threshold={"fpr": 0.1, "calibration": 200},
        )


def test_the_quantile_rule_is_exceeded_at_the_target_rate_on_average():
    # of m exchangeable rows, the k-th smallest is exceeded by a new row with probability
    # (m + 1 - k) / (m + 1): at the position 0.95 * 41 = 38.95 that is 0.05 (numpy's default
    # position 0.95 * 39 + 1 = 38.05 gives 0.0732 -- the bias this rule removes)
    assert fpr_threshold(np.arange(1.0, 41.0), 0.05) == pytest.approx(38.95)
    rng = np.random.default_rng(0)
    cal, new = rng.random((4000, 40)), rng.random((4000, 200))
    exceeded = np.mean([np.mean(n > fpr_threshold(c, 0.05)) for c, n in zip(cal, new)])
    assert abs(exceeded - 0.05) < 0.002  # its standard error over 4000 samples: about 0.0006
    assert min_calibration_rows(0.05) == 19 and fpr_threshold(np.arange(1.0, 19.0), 0.05) == 18.0


def test_too_few_calibration_rows_warn():
    ds = _dataset()
    r = run_experiment(
        ds,
        ConceptIncremental(),
        Naive(FirstFeature()),
        ["f1"],
        seed=0,
        threshold={"fpr": 0.05, "calibration": 10},
    )
    assert any(
        "has 10 calibration rows; a threshold at FPR 0.05 needs at least 19" in w
        for w in r.warnings
    )


class BatchCentred(BaseEstimator):
    """Score = the first feature minus its mean over the training rows and the rows scored with it
    (a score of a row that depends on its batch, as ECOD's)."""

    def fit(self, X):
        self.train_ = np.asarray(X, dtype=np.float64)[:, 0]
        return self

    def score(self, X):
        x = np.asarray(X, dtype=np.float64)[:, 0]
        return x - np.concatenate([self.train_, x]).mean()


def test_a_batch_dependent_score_is_calibrated_in_the_test_concepts_batch():
    ds = _dataset()
    r = run_experiment(
        ds,
        ConceptIncremental(),
        Naive(BatchCentred()),
        ["f1"],
        seed=4,
        threshold={"fpr": 0.1, "calibration": 50},
    )
    kept, held = calibration_split(ds, 50, calibration_seed(4))
    assert r.threshold["calibrated_in_test_batch"] is True
    for i, step in enumerate("AB"):
        train = kept.train[i].X[:, 0]
        cal = held[step][:, 0]
        for j, c in enumerate(ds.test):
            # each part of 5 calibration rows (5 % of the 100 test rows) scored with the test rows
            scores = np.concatenate(
                [
                    cal[k : k + 5] - np.concatenate([train, c.X[:, 0], cal[k : k + 5]]).mean()
                    for k in range(0, 50, 5)
                ]
            )
            assert r.threshold["threshold"][i][j] == pytest.approx(
                fpr_threshold(scores, 0.1), rel=1e-12
            )
            test_scores = c.X[:, 0] - np.concatenate([train, c.X[:, 0]]).mean()
            assert r.threshold["realised_fpr"][i][j] == np.mean(
                test_scores[c.y == 0] > r.threshold["threshold"][i][j]
            )


def test_report_names_the_policy_and_the_drift(tmp_path):
    from clad.report import make_report
    from clad.results import load_results

    spec = tmp_path / "fpr.toml"
    spec.write_text(
        spec_toml(
            name="fpr",
            base_metrics=["roc_auc", "f1"],
            threshold={"fpr": 0.05},
            seeds=2,
            datasets=[synthetic(n_concepts=3, n_train=80, n_test=60)],
        )
    )
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 0
    report = make_report(load_results(tmp_path / "out"), tmp_path / "page")
    page = report.all_text()
    assert "f1 (threshold at FPR 0.05 on held-out normal rows)" in page
    assert "Thresholds and false-positive rates" in page
    table = report.tables["thresholds"].read_text().splitlines()
    assert table[0].startswith("dataset,scenario,strategy,detector,policy,seeds,fpr_just_learned")
    import json

    import pandas as pd

    drift = [json.loads(v) for v in pd.read_csv(report.tables["thresholds"])["drift_per_step"]]
    assert all(
        len(d) == 3 and d[0] is None and all(isinstance(v, float) for v in d[1:]) for d in drift
    )  # JSON, not a repr

    assert main(["export", str(tmp_path / "out"), "--dest", str(tmp_path / "export")]) == 0
    cells = pd.read_csv(tmp_path / "export" / "r_cells.csv")
    runs = {r.run_id: r for r in load_results(tmp_path / "out")}
    f1 = cells[cells["base_metric"] == "f1"]
    assert (
        f1["realised_fpr"].notna().all()
        and cells.loc[cells["base_metric"] == "roc_auc", "realised_fpr"].isna().all()
    )
    row = f1.iloc[-1]
    assert (
        row["realised_fpr"]
        == runs[row["run_id"]].threshold["realised_fpr"][row["step_index"]][row["test_index"]]
    )
    assert set(f1["base_metric_label"]) == {"F1"} and not cells["optimistic"].any()
