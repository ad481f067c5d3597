"""Drift-triggered experts on streams with hand-placed changes, and the scoring of detections."""

import json

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

pytest.importorskip("river")

from clad import Concept, ConceptDataset, run_experiment  # noqa: E402
from clad.core.boundaries import score_detections, stream_boundaries  # noqa: E402
from clad.results import RunResult, load_results, write_results  # noqa: E402
from clad.results.store import ResultStore  # noqa: E402
from clad.errors import CladValueError, ScenarioError  # noqa: E402
from clad.scenarios import ConceptAgnostic, ConceptIncremental  # noqa: E402
from clad.strategies import STRATEGIES, DriftExperts, Experts, Naive  # noqa: E402
from clad.testing import check_strategy  # noqa: E402

# ------------------------------------------------------------------------- scoring by hand


def test_delays_missed_and_false_alarms_by_hand():
    # boundaries at rows 100 and 250 of a 400-row stream
    r = score_detections([260, 40, 130, 140], boundaries=[100, 250], n_rows=400)
    assert r["detections"] == [40, 130, 140, 260]
    assert r["delays"] == [30, 10] and r["mean_delay"] == 20.0
    assert (r["detected"], r["missed"], r["false_alarms"]) == (
        2,
        0,
        2,
    )  # 40: before any change; 140: a repeat
    r = score_detections([99, 251], boundaries=[100, 250], n_rows=400)
    assert r["delays"] == [None, 1] and (r["detected"], r["missed"], r["false_alarms"]) == (1, 1, 1)
    r = score_detections([], boundaries=[100], n_rows=200)
    assert (
        r["delays"] == [None]
        and r["mean_delay"] is None
        and r["missed"] == 1
        and r["false_alarms"] == 0
    )
    late = score_detections([180], boundaries=[100], n_rows=200, max_delay=50)
    assert late["delays"] == [None] and (late["missed"], late["false_alarms"]) == (1, 1)
    assert score_detections([150], boundaries=[100], n_rows=200, max_delay=50)["delays"] == [50]
    json.dumps(r)  # JSON-ready


def test_bad_detection_inputs():
    with pytest.raises(CladValueError, match="boundaries=\\[200, 100\\]"):
        score_detections([], [200, 100], 300)
    with pytest.raises(
        CladValueError, match="detections=\\[300\\]; expected rows of the stream \\[0, 300\\)"
    ):
        score_detections([300], [100], 300)
    with pytest.raises(CladValueError, match="max_delay=-1"):
        score_detections([], [100], 300, max_delay=-1)


# ---------------------------------------------------------------------- the strategy


def stream(n=400, burst=None, seed=0):
    """Three concepts of ``n`` rows (Gaussian blobs at (0, 0), (6, 0), (0, 6)): true changes at rows
    n and 2n. ``burst=(start, stop)`` shifts those rows of the first concept by 8: a transient
    that is not a concept change."""
    rng = np.random.default_rng(seed)
    centres = [(0.0, 0.0), (6.0, 0.0), (0.0, 6.0)]
    train, test = [], []
    for k, c in enumerate(centres):
        X = rng.normal(c, 1.0, size=(n, 2))
        if burst is not None and k == 0:
            X[burst[0] : burst[1]] += 8.0
        train.append(Concept(f"C{k}", X))
        far = rng.normal(c, 1.0, size=(10, 2)) + rng.choice([-5.0, 5.0], size=(10, 2))
        test.append(
            Concept(
                f"C{k}",
                np.vstack([rng.normal(c, 1.0, size=(190, 2)), far]),
                np.r_[np.zeros(190), np.ones(10)],
            )
        )
    return ConceptDataset(train, test, name="blobs")


def drift_experts(**kw):
    return DriftExperts(IsolationForest(n_estimators=20), window_size=250, **kw)


def run(ds, **kw):
    return run_experiment(ds, ConceptAgnostic(batch_size=50), drift_experts(**kw), seed=0)


def matched(report):
    """Delays recomputed by hand from the detections: the first detection in each segment."""
    ends = report["boundaries"][1:] + [report["n_rows"]]
    return [
        next((d - b for d in report["detections"] if b <= d < e), None)
        for b, e in zip(report["boundaries"], ends)
    ]


@pytest.mark.slow
def test_detects_each_hand_placed_change_with_a_short_delay():
    ds = stream()
    assert stream_boundaries(ds) == (400, 800)
    r = run(ds)
    report = r.extras["drift"]
    assert report["boundaries"] == [400, 800] and report["n_rows"] == 1200
    assert report["delays"] == matched(report)
    assert (report["detected"], report["missed"], report["false_alarms"]) == (2, 0, 0)
    assert all(0 <= d <= 150 for d in report["delays"])  # within three batches of 50 rows
    assert report["n_experts"] == 3
    # one expert per concept, chosen without an id: every concept is scored by its own expert
    assert np.all(np.diag(r.R["roc_auc"]) > 0.95)
    again = run(ds)
    assert again.extras == r.extras and np.array_equal(again.R["roc_auc"], r.R["roc_auc"])


@pytest.mark.slow
def test_a_transient_burst_is_reported_as_false_alarms():
    r = run(stream(burst=(150, 230)))
    report = r.extras["drift"]
    early = [d for d in report["detections"] if d < 400]
    assert early and min(early) >= 150  # nothing fires before the burst starts
    assert report["false_alarms"] == len(early)  # every detection before the first change is false
    assert report["missed"] == 0 and report["delays"] == matched(report)


@pytest.mark.slow
def test_page_hinkley_and_the_raw_score_signal():
    # Page-Hinkley's threshold is in units of the signal: a rank lies in [0, 1]
    report = run(stream(), drift="page_hinkley", drift_params={"threshold": 20.0}).extras["drift"]
    assert (report["detected"], report["false_alarms"]) == (2, 0) and report["delays"] == matched(
        report
    )
    raw = run(stream(), signal="score").extras["drift"]
    assert raw["detected"] >= 1 and raw["delays"] == matched(raw)


@pytest.mark.slow
def test_gradual_transitions_keep_the_boundaries_in_the_middle():
    r = run_experiment(
        stream(), ConceptAgnostic(batch_size=50, transition=40), drift_experts(), seed=0
    )
    assert r.extras["drift"]["boundaries"] == [400, 800] and r.extras["drift"]["detected"] == 2


@pytest.mark.slow
def test_extras_survive_json_and_the_results_database(tmp_path):
    r = run(stream(n=200))
    back = RunResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.extras == r.extras
    write_results(tmp_path / "results.json", [r])
    assert load_results(tmp_path / "results.json")[0].extras == r.extras
    stored = RunResult.from_dict({**r.to_dict(), "run_id": "x1"})
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.write(stored)
        assert store.load_results()[0].extras == r.extras
    plain = run_experiment(
        stream(n=200), ConceptAgnostic(batch_size=50), Naive(IsolationForest(n_estimators=5))
    )
    assert plain.extras is None  # strategies without the hook report nothing beyond R


@pytest.mark.slow
def test_contract_registration_and_errors():
    assert STRATEGIES.resolve("drift_experts") is DriftExperts
    report = check_strategy(
        DriftExperts(IsolationForest(n_estimators=20), window_size=300), raise_on_failure=False
    )
    assert report.ok, str(report)
    X = np.zeros((60, 2))
    with pytest.raises(CladValueError, match="drift='kswin'.*; allowed: 'adwin', 'page_hinkley'"):
        DriftExperts(IsolationForest(), drift="kswin").learn(X)
    with pytest.raises(CladValueError, match="signal='mean'"):
        DriftExperts(IsolationForest(), signal="mean").learn(X)
    with pytest.raises(CladValueError, match="drift_params=\\{'bogus': 1\\}"):
        DriftExperts(IsolationForest(), drift_params={"bogus": 1}).learn(X)
    # it runs in every scenario; Experts, which needs boundaries, does not run in the stream
    run_experiment(stream(n=200), ConceptIncremental(), drift_experts(), seed=0)
    with pytest.raises(ScenarioError):
        run_experiment(stream(n=200), ConceptAgnostic(), Experts(IsolationForest()))


def test_a_database_from_before_extras_gains_the_column(tmp_path):
    import sqlite3

    from clad.results.store import SCHEMA

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA.replace("    extras        TEXT,\n", ""))
    con.execute(
        "INSERT INTO meta(key, value) VALUES ('clad_version', '\"0.1.0\"')"
    )  # written by clad
    con.commit()
    con.close()
    r = RunResult(
        "d",
        "s",
        "st",
        "det",
        0,
        concepts=("A",),
        test_concepts=("A",),
        R={"roc_auc": np.array([[0.5]])},
        extras={"drift": {"detected": 1}},
        run_id="r1",
    )
    with ResultStore(path) as store:
        store.write(r)
        assert store.load_results()[0].extras == {"drift": {"detected": 1}}
