"""Per-concept experts (MSTE)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import IsolationForest
from sklearn.metrics import roc_auc_score

from clad import ConceptDataset, make_synthetic, run_experiment
from clad.errors import CladValueError, ScenarioError
from clad.scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental
from clad.strategies import Experts, make_strategy


def iforest():
    return IsolationForest(n_estimators=25, random_state=0)


def test_concept_aware_diagonal_equals_a_detector_trained_alone():
    ds = make_synthetic(n_concepts=4, n_features=3, n_train=150, n_test=80, random_state=2)
    result = run_experiment(ds, ConceptAware(), Experts(iforest()))
    R = result.R["roc_auc"]
    for j, (train, test) in enumerate(zip(ds.train, ds.test)):
        alone = iforest().fit(train.X)
        expected = roc_auc_score(test.y, -alone.score_samples(test.X))
        assert R[j, j] == expected  # exactly: same data, same seed, one detector per concept
        # and an expert is never changed by later concepts
        assert np.all(R[j:, j] == expected)


def test_task_agnostic_choice_picks_the_right_expert():
    ds = make_synthetic(n_concepts=5, n_features=4, n_train=200, n_test=100, random_state=0)
    strat = Experts(iforest())
    for c in ds.train:
        strat.learn(c.X)  # concept-incremental: no ids
    chosen = [strat.choose_expert(t.X) for t in ds.test]
    assert chosen == [f"expert_{k}" for k in range(5)]
    # the scores returned without an id are the chosen expert's own scores
    for k, t in enumerate(ds.test):
        assert np.array_equal(strat.score(t.X).scores, strat.experts_[f"expert_{k}"].score(t.X))


def test_concept_incremental_matches_concept_aware_on_separated_concepts():
    ds = make_synthetic(n_concepts=3, n_features=4, n_train=150, n_test=80, random_state=1)
    aware = run_experiment(ds, ConceptAware(), Experts(iforest())).R["roc_auc"]
    incr = run_experiment(ds, ConceptIncremental(), Experts(iforest())).R["roc_auc"]
    # on seen concepts the task-agnostic choice finds the expert an id would give
    seen = np.tril(np.ones_like(aware, dtype=bool))
    assert np.array_equal(aware[seen], incr[seen])


def test_no_expert_policies():
    rng = np.random.default_rng(0)
    A, B, C = rng.normal(0, 1, (150, 2)), rng.normal(30, 1, (150, 2)), rng.normal(30.2, 1, (60, 2))
    agnostic = Experts(iforest()).learn(A, "A").learn(B, "B")
    scored = agnostic.score(C, concept_id="never-trained")
    assert np.array_equal(scored.scores, agnostic.experts_["B"].score(C))  # the closest expert
    latest = Experts(iforest(), no_expert="latest").learn(B, "B").learn(A, "A")
    assert np.array_equal(latest.score(C, concept_id="Z").scores, latest.experts_["A"].score(C))
    strict = Experts(iforest(), no_expert="error").learn(A, "A")
    with pytest.raises(CladValueError, match="no expert for concept 'Z' \\(trained: A\\)"):
        strict.score(C, concept_id="Z")
    with pytest.raises(CladValueError, match="no_expert='maybe'; allowed"):
        Experts(iforest(), no_expert="maybe").learn(A)


def test_unseen_test_concept_in_concept_aware_run_is_scored_by_policy():
    ds = make_synthetic(n_concepts=3, n_features=2, n_train=100, n_test=60, random_state=0)
    train_only_two = ConceptDataset(ds.train[:2], ds.test, name="future")
    R = run_experiment(train_only_two, ConceptAware(), Experts(iforest())).R["roc_auc"]
    assert np.isfinite(R).all()
    with pytest.raises(CladValueError, match="no expert for concept 'C1' \\(trained: C0\\)"):
        run_experiment(train_only_two, ConceptAware(), Experts(iforest(), no_expert="error"))


def test_recurring_concept_is_retrained_and_becomes_latest():
    rng = np.random.default_rng(0)
    strat = (
        Experts(iforest()).learn(rng.normal(size=(50, 2)), "A").learn(rng.normal(size=(50, 2)), "B")
    )
    strat.learn(rng.normal(size=(50, 2)), "A")
    assert list(strat.experts_) == ["B", "A"]


def test_refused_in_concept_agnostic():
    ds = make_synthetic(n_concepts=2, n_features=2, n_train=40, n_test=20, random_state=0)
    with pytest.raises(ScenarioError, match="Experts needs concept boundaries"):
        run_experiment(ds, ConceptAgnostic(batch_size=10), Experts(iforest()))
    assert Experts.requires_boundaries and "concept_agnostic" not in Experts.supported_scenarios


def test_registered_clone_pickle_memory():
    strat = make_strategy("experts", iforest())
    X = np.random.default_rng(0).normal(size=(60, 2))
    strat.learn(X[:30]).learn(X[30:] + 5)
    assert not hasattr(clone(strat), "experts_")
    back = pickle.loads(pickle.dumps(strat))
    assert np.array_equal(back.score(X).scores, strat.score(X).scores)
    assert strat.memory_rows() == 0


def test_score_before_learn_is_a_clear_error():
    with pytest.raises(CladValueError, match="score\\(\\) called before any learn"):
        Experts(iforest()).score(np.zeros((3, 2)))
