"""concept_agnostic: no look-ahead by default, anytime evaluation per concept, prequential scores."""

import json

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from clad import Concept, ConceptDataset, run_experiment
from clad.results import RunResult
from clad.errors import CladValueError
from clad.scenarios import ConceptAgnostic
from clad.strategies import Cumulative, Naive

from tests.data_helpers import contaminated_dataset


class RowLog:
    """A detector that records the training concepts of the rows it was fitted on (column 0 holds
    the row's concept index); its score is column 1."""

    fitted: list = []  # class attribute: clone() copies parameters, so a log passed in would be copied

    def __init__(self, tag: str = ""):
        self.tag = tag

    def get_params(self, deep=True):
        return {"tag": self.tag}

    def set_params(self, **params):
        self.tag = params.get("tag", self.tag)
        return self

    def fit(self, X):
        RowLog.fitted.append(set(np.unique(X[:, 0]).astype(int).tolist()))
        self.threshold_ = 0.0
        return self

    def score(self, X):
        return np.asarray(X[:, 1], dtype=float)


def stream_dataset(sizes=(23, 17, 31), n_test=20, seed=0):
    rng = np.random.default_rng(seed)
    train = [
        Concept(f"c{k}", np.c_[np.full(n, k), rng.normal(size=n)]) for k, n in enumerate(sizes)
    ]
    test = [
        Concept(
            f"c{k}",
            np.c_[np.full(n_test, k), rng.normal(size=n_test)],
            np.r_[np.zeros(n_test - 4), np.ones(4)].astype(int),
        )
        for k in range(len(sizes))
    ]
    return ConceptDataset(train, test, name="stream")


@pytest.mark.parametrize("strategy", [Naive, Cumulative])
def test_no_evaluation_of_a_concept_follows_training_on_a_later_one(strategy):
    ds = stream_dataset()
    RowLog.fitted = []
    seen_at_step = []

    def on_step(name, index):
        learned = set().union(*RowLog.fitted) if RowLog.fitted else set()
        seen_at_step.append((index, learned))

    r = run_experiment(
        ds, ConceptAgnostic(batch_size=10), strategy(RowLog()), seed=0, on_step=on_step
    )
    assert [i for i, _ in seen_at_step] == [0, 1, 2]
    for k, learned in seen_at_step:
        assert max(learned) <= k, f"row of c{k} evaluated after learning rows of {sorted(learned)}"
    # the recorded look-ahead is 0; the rows of the concept itself are those of whole batches before its end
    assert [row["later"] for row in r.learned_rows] == [0, 0, 0]
    assert [row["concept"] for row in r.learned_rows] == [20, 40 - 23, 31]
    # the record survives results.json
    back = RunResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.learned_rows == r.learned_rows


def test_after_crossing_batch_is_the_named_look_ahead():
    ds = stream_dataset()
    RowLog.fitted = []
    r = run_experiment(
        ds,
        ConceptAgnostic(batch_size=10, evaluate="after_crossing_batch"),
        Cumulative(RowLog()),
        seed=0,
    )
    # c0 ends at row 23, inside batch 3 (rows 20..29): 7 rows of c1 learned; c1 ends at 40 exactly
    assert [(row["concept"], row["later"]) for row in r.learned_rows] == [(23, 7), (17, 0), (31, 0)]


def test_bad_evaluate():
    with pytest.raises(CladValueError, match="evaluate='later'; allowed: 'before_crossing_batch'"):
        run_experiment(stream_dataset(), ConceptAgnostic(evaluate="later"), Naive(RowLog()))


SPEC = {
    "name": "anytime",
    "seeds": 1,
    "strategies": ["naive"],
    "datasets": [
        {"name": "synthetic", "n_concepts": 3, "n_features": 4, "n_train": 90, "n_test": 40}
    ],
    "scenarios": [{"name": "concept_agnostic", "batch_size": 20, "anytime_per_concept": 4}],
    "detectors": [{"name": "iforest", "n_estimators": 10}],
}


@pytest.mark.slow
def test_anytime_per_concept_rows_metrics_and_figure(tmp_path):
    from clad.engine.benchmark import run_spec
    from clad.metrics import anytime_accuracy_seen
    from clad.report import make_report

    run_spec(SPEC, tmp_path / "out")
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    (run,) = doc["runs"]
    # 4 anytime rows per training concept, in order, labelled by the concept being learned
    assert run["anytime"]["task"] == [0] * 4 + [1] * 4 + [2] * 4
    assert len(run["anytime"]["R"]["roc_auc"]) == 12 and run["anytime"]["boundaries"] == [
        90,
        180,
        270,
    ]
    # at each quarter of a concept: 90 rows in batches of 20 -> after 40, 60, 80 rows, and c0's end (inside
    # batch 5, which holds c1 rows) before that batch
    assert run["anytime"]["rows_seen"][:4] == [40, 60, 80, 80]
    m = run["metrics"]["roc_auc"]
    for name in ("anytime_accuracy_all", "anytime_accuracy_seen"):
        assert len(m[name]) == 12
    assert m["anytime_accuracy_seen_avg"] == pytest.approx(np.mean(m["anytime_accuracy_seen"]))
    # the seen curve by hand: evaluation e during concept k averages test concepts 0..k
    A = np.array(run["anytime"]["R"]["roc_auc"], dtype=float)
    hand = [A[e, : k + 1].mean() for e, k in enumerate(run["anytime"]["task"])]
    assert m["anytime_accuracy_seen"] == pytest.approx(hand)
    assert anytime_accuracy_seen(
        run["R"]["roc_auc"], {"R": A, "task": run["anytime"]["task"]}
    ).tolist() == pytest.approx(hand)
    from clad.results import load_results

    report = make_report(load_results(tmp_path / "out"), tmp_path / "report")
    assert any("anytime" in name for name in report.figures)
    assert "Anytime curves" in report.all_text()


def test_anytime_options_exclusive():
    with pytest.raises(CladValueError, match="anytime_every or anytime_per_concept, not both"):
        run_experiment(
            stream_dataset(),
            ConceptAgnostic(anytime_every=2, anytime_per_concept=2),
            Naive(RowLog()),
        )


@pytest.mark.slow
def test_prequential_windowed_roc_auc_equals_a_hand_loop(tmp_path):
    from sklearn.ensemble import IsolationForest

    from clad.core.seeding import seed_run

    ds = contaminated_dataset()
    assert all(c.y is not None and c.y.any() for c in ds.train)
    scenario = ConceptAgnostic(batch_size=25, prequential=True, prequential_window=3)
    r = run_experiment(ds, scenario, Naive(IsolationForest(n_estimators=10)), seed=4)
    rec = r.prequential
    # the hand loop: the same stream, score each batch with the model of the batches before it
    seeded = seed_run(
        4, strategy=Naive(IsolationForest(n_estimators=10)), scenario=ConceptAgnostic(batch_size=25)
    )
    strategy = seeded.strategy
    X = np.vstack([c.X for c in ds.train])
    y = np.concatenate([c.y for c in ds.train])
    scores, labels, windowed = [], [], []
    for start in range(0, len(X), 25):
        xb, yb = X[start : start + 25], y[start : start + 25]
        if start:
            scores.append(strategy.score(xb).scores)
            labels.append(yb)
            ys, ss = np.concatenate(labels[-3:]), np.concatenate(scores[-3:])
            windowed.append(roc_auc_score(ys, ss) if len(set(ys)) == 2 else float("nan"))
        strategy.learn(xb)
    assert rec["rows_seen"] == list(range(25, len(X), 25))
    np.testing.assert_allclose(rec["windowed"]["roc_auc"], windowed, equal_nan=True)
    assert rec["cumulative"]["roc_auc"][-1] == pytest.approx(
        roc_auc_score(np.concatenate(labels), np.concatenate(scores))
    )
    back = RunResult.from_dict(json.loads(json.dumps(r.to_dict(), allow_nan=False)))
    assert back.prequential["window"] == 3
    # plotted in the report
    import warnings

    from clad.report import make_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = make_report([back], tmp_path / "report")
    assert any("prequential" in name for name in report.figures)
    assert "Prequential evaluation" in report.all_text()


def test_prequential_needs_labelled_training_rows():
    with pytest.raises(
        CladValueError, match="prequential=true needs training concepts with labelled anomalies"
    ):
        run_experiment(stream_dataset(), ConceptAgnostic(prequential=True), Naive(RowLog()))


def test_anytime_positions_follow_the_rows_of_each_concept_through_transitions():
    from clad.scenarios.concept_agnostic import _materialize, _plan, _position

    sizes = [30, 12, 25]
    plan, _ = _plan(sizes, 16, np.random.default_rng(3))
    owner = np.concatenate(_materialize(plan, [np.full(n, k) for k, n in enumerate(sizes)]))
    for k, n in enumerate(sizes):
        rows = np.flatnonzero(owner == k)
        assert [_position(plan, k, i) for i in range(1, n + 1)] == (rows + 1).tolist()
