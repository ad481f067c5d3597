"""Scenario validity: the four checks on hand-made matrices, and `clad validate` on real and built-to-fail specs."""

import json
from pathlib import Path

import numpy as np
import pytest

from clad.cli import main
from clad.errors import CladValueError
from clad.protocol import Thresholds, auc_interval, check_matrix, single_task_matrix
from clad.protocol.single_task import single_task_dataset

from tests.runner_helpers import write_spec
from tests.data_helpers import SHARED, needs

REPO = Path(__file__).resolve().parents[2]


def _verdicts(checks):
    return {c.name: c.verdict for c in checks}


def test_checks_on_a_hand_made_matrix():
    M = np.array([[0.90, 0.80, 0.40], [0.70, 0.95, 0.50], [0.30, 0.60, 0.65]])
    checks = check_matrix(M, ("a", "b", "c"), naive_bwt=-0.2)
    v = _verdicts(checks)
    assert v == {
        "feasible": "FAIL",
        "non_trivial": "PASS",
        "forgetting": "PASS",
        "no_redundancy": "PASS",
    }
    feasible = checks[0]
    assert feasible.values["min"] == 0.65 and feasible.values["argmin"] == "c"
    # closest pair: a & b, gaps M[b,b] - M[a,b] = 0.15 and M[a,a] - M[b,a] = 0.20 -> worst 0.20;
    # a & c: 0.25, 0.60; b & c: 0.15, 0.35
    assert checks[3].values["closest_pair"] == ["a", "b"]
    assert checks[3].values["closest_gaps"] == pytest.approx([0.15, 0.20])


def test_thresholds_decide_each_verdict():
    M = np.array([[0.995, 0.990], [0.992, 0.999]])
    # every cell >= 0.99: trivial; gaps 0.009 and 0.003 are within 0.01: redundant; BWT -0.003 is not < -0.01
    v = _verdicts(check_matrix(M, ("a", "b"), naive_bwt=-0.003))
    assert v == {
        "feasible": "PASS",
        "non_trivial": "FAIL",
        "forgetting": "FAIL",
        "no_redundancy": "FAIL",
    }
    loose = Thresholds(
        feasible_min=0.999, trivial_ceiling=0.995, forgetting_max=0.0, redundancy_tol=0.001
    )
    v = _verdicts(check_matrix(M, ("a", "b"), naive_bwt=-0.003, thresholds=loose))
    assert v == {
        "feasible": "FAIL",
        "non_trivial": "PASS",
        "forgetting": "PASS",
        "no_redundancy": "PASS",
    }


def test_undefined_numbers_give_no_verdict():
    M = np.array([[np.nan]])
    v = _verdicts(check_matrix(M, ("a",), naive_bwt=float("nan")))
    assert v == {
        "feasible": "n/a",
        "non_trivial": "n/a",
        "forgetting": "n/a",
        "no_redundancy": "n/a",
    }
    with pytest.raises(CladValueError, match="redundancy_tol=-1"):
        Thresholds(redundancy_tol=-1)


def test_auc_interval_by_hand():
    # Hanley & McNeil: A = 0.8, 50 anomalous, 200 normal rows; Q1 = 0.8 / 1.2, Q2 = 1.28 / 1.8
    q1, q2 = 0.8 / 1.2, 1.28 / 1.8
    se = np.sqrt((0.8 * 0.2 + 49 * (q1 - 0.64) + 199 * (q2 - 0.64)) / (50 * 200))
    lo, hi = auc_interval(0.8, 50, 200)
    assert (lo, hi) == pytest.approx((0.8 - 1.959964 * se, 0.8 + 1.959964 * se), abs=1e-6)


def test_single_task_matrix_is_one_fresh_detector_per_concept():
    from sklearn.ensemble import IsolationForest

    from clad.core.concepts import Concept, ConceptDataset

    rng = np.random.default_rng(0)

    def concept(name, centre, n=150):
        X = np.vstack([rng.normal(centre, 1, (n, 2)), rng.normal(centre + 6, 1, (20, 2))])
        return Concept(name, X[:n]), Concept(name, X, np.r_[np.zeros(n, int), np.ones(20, int)])

    (a, ta), (b, tb) = concept("a", 0.0), concept("b", 30.0)
    ds = ConceptDataset([a, b, a], [ta, tb])  # a recurs: M trains it once
    assert single_task_dataset(ds).train_names == ("a", "b")
    st = single_task_matrix(ds, IsolationForest(n_estimators=30, random_state=0))
    from sklearn.metrics import roc_auc_score

    for i, tr in enumerate((a, b)):
        det = IsolationForest(n_estimators=30, random_state=0).fit(tr.X)
        for j, te in enumerate((ta, tb)):
            assert st.M[i, j] == pytest.approx(
                roc_auc_score(te.y, -det.score_samples(te.X)), abs=1e-12
            )
    assert st.naive_bwt == pytest.approx(st.M[1, 0] - st.M[0, 0])


def _write_failing_spec(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n, d = 300, 4
    normal = rng.normal(0, 1, (n, d))
    anomalies = rng.normal(0, 1, (30, d)) + 5
    X = np.vstack([normal, anomalies])
    y = np.r_[np.zeros(n, int), np.ones(30, int)]
    np.savez(tmp_path / "steady.npz", X=X, y=y)
    np.savez(tmp_path / "steady_again.npz", X=X, y=y)  # the same concept twice
    noise = rng.uniform(-3, 8, (n + 30, d))  # pure noise: labels unrelated to the features
    np.savez(tmp_path / "noise.npz", X=noise, y=rng.permutation(y))
    files = [str(tmp_path / f"{f}.npz") for f in ("steady", "steady_again", "noise")]
    return write_spec(
        tmp_path,
        None,
        "bad.toml",
        name="built-to-fail",
        seeds=None,
        datasets=[{"name": "npz_files", "files": files}],
        detectors=[{"name": "iforest", "n_estimators": 50}],
    )


def test_validate_flags_a_noise_concept_and_a_repeated_concept(tmp_path, capsys):
    spec = _write_failing_spec(tmp_path)
    code = main(["validate", str(spec), "--json", str(tmp_path / "v.json")])
    out = capsys.readouterr().out
    assert code == 1
    report = json.loads((tmp_path / "v.json").read_text())[0]
    verdicts = {c["name"]: c for c in report["checks"]}
    assert (
        verdicts["feasible"]["verdict"] == "FAIL"
        and verdicts["feasible"]["values"]["argmin"] == "noise"
    )
    assert verdicts["no_redundancy"]["verdict"] == "FAIL"
    assert verdicts["no_redundancy"]["values"]["redundant_pairs"][0]["pair"] == [
        "steady",
        "steady_again",
    ]
    assert verdicts["non_trivial"]["verdict"] == "PASS"
    assert "feasible       FAIL" in out and "0 of 1 scenario(s) pass every check" in out


@pytest.mark.slow
@needs("pyclad-nsl-kdd")
def test_validate_pyclad_nsl_kdd_passes(monkeypatch, capsys):
    monkeypatch.setenv("CLAD_DATA", str(SHARED))
    code = main(["validate", str(REPO / "scenarios" / "pyclad_nsl_kdd.toml")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert (
        out.count("PASS") == 8 and "2 of 2 scenario(s) pass every check" in out
    )  # 4 checks x 2 seeds
