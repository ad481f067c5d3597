"""Replay buffers, replay and sliding-window strategies."""

import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.ensemble import IsolationForest

from clad import Concept, ConceptDataset, make_synthetic, run_experiment
from clad.errors import CladValueError, ScenarioError
from clad.scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental
from clad.strategies import (
    STRATEGIES,
    BalancedReplay,
    Cumulative,
    Naive,
    Replay,
    Window,
    make_strategy,
)
from clad.strategies.memory import ConceptBalancedBuffer, ReservoirBuffer, RingBuffer

NSL_KDD = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "datasets"
    / "pyclad-nsl-kdd"
    / "nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy"
)


def iforest():
    return IsolationForest(n_estimators=10, random_state=0)


# -- reservoir ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    capacity=st.integers(1, 40),
    batches=st.lists(st.integers(1, 90), min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_reservoir_never_over_capacity_nor_empty(capacity, batches, seed):
    rng = np.random.default_rng(seed)
    buf = ReservoirBuffer(capacity)
    seen = 0
    for m in batches:
        rows = np.arange(seen, seen + m, dtype=float).reshape(-1, 1)
        buf.add(rows, rng)
        seen += m
        assert 1 <= len(buf) <= capacity
        assert len(buf) == min(capacity, seen)
        kept = buf.view()[:, 0]
        assert len(np.unique(kept)) == len(kept)  # each row stored at most once
        assert kept.min() >= 0 and kept.max() < seen  # only rows that were offered
    assert buf.n_seen == seen


@pytest.mark.slow
def test_reservoir_is_uniform_over_the_stream():
    # every one of the 100 rows ends up in a buffer of 10 with probability 1/10
    rng = np.random.default_rng(1)
    counts = np.zeros(100)
    trials = 2000
    for _ in range(trials):
        buf = ReservoirBuffer(10)
        for start in range(0, 100, 7):  # uneven batches, one spanning the fill-up point
            buf.add(np.arange(start, min(start + 7, 100), dtype=float)[:, None], rng)
        counts[buf.view()[:, 0].astype(int)] += 1
    freq = counts / trials
    # binomial sd of a frequency around 0.1 with 2000 trials is 0.0067: allow about 4.5 sd
    assert np.abs(freq - 0.1).max() < 0.03
    # early, fill-up and late rows alike
    assert abs(freq[:10].mean() - 0.1) < 0.01 and abs(freq[-10:].mean() - 0.1) < 0.01


def test_reservoir_same_seed_same_sample():
    X = np.arange(500, dtype=float).reshape(-1, 1)
    a, b = ReservoirBuffer(20), ReservoirBuffer(20)
    a.add(X, np.random.default_rng(3))
    b.add(X, np.random.default_rng(3))
    assert np.array_equal(a.view(), b.view())


# -- concept-balanced ------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    capacity=st.integers(1, 30),
    sizes=st.lists(st.integers(1, 50), min_size=1, max_size=9),
    seed=st.integers(0, 2**16),
)
def test_balanced_buffer_bounds_and_balance(capacity, sizes, seed):
    rng = np.random.default_rng(seed)
    buf = ConceptBalancedBuffer(capacity)
    for k, m in enumerate(sizes):
        buf.add(np.full((m, 2), float(k)), f"c{k}", rng)
        per = buf.rows_per_concept()
        assert 1 <= len(buf) <= capacity
        assert len(buf.view()) == len(buf)
        # a concept holds min(its quota, its rows); quotas differ by at most one
        quotas = buf.quotas()
        assert max(quotas.values()) - min(quotas.values()) <= 1 and sum(quotas.values()) == capacity
        # the view holds the shares concept after concept
        shares = np.split(buf.view(), np.cumsum([per[c] for c in buf.concepts])[:-1])
        for j, c in enumerate(buf.concepts):
            assert per[c] == min(quotas[c], sizes[j])
            if per[c]:
                assert set(shares[j][:, 0]) == {float(j)}


def test_balanced_buffer_smaller_than_number_of_concepts():
    rng = np.random.default_rng(0)
    buf = ConceptBalancedBuffer(3)
    for k in range(5):
        buf.add(np.full((10, 1), float(k)), f"c{k}", rng)
        assert len(buf) == min(3, 10 * (k + 1))
    # the three newest concepts keep one row each
    assert buf.rows_per_concept() == {"c0": 0, "c1": 0, "c2": 1, "c3": 1, "c4": 1}
    assert sorted(buf.view()[:, 0].tolist()) == [2.0, 3.0, 4.0]


def test_balanced_buffer_recurring_concept_adds_to_its_share():
    rng = np.random.default_rng(0)
    buf = ConceptBalancedBuffer(10)
    buf.add(np.zeros((4, 1)), "A", rng)
    buf.add(np.ones((20, 1)), "B", rng)
    buf.add(np.zeros((4, 1)), "A", rng)
    assert buf.rows_per_concept() == {"A": 5, "B": 5}
    assert np.array_equal(buf.view(), np.r_[np.zeros((5, 1)), np.ones((5, 1))])


# -- ring buffer -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 30), batches=st.lists(st.integers(1, 70), min_size=1, max_size=10))
def test_ring_buffer_holds_the_last_rows_in_order(capacity, batches):
    buf = RingBuffer(capacity)
    seen = 0
    for m in batches:
        buf.add(np.arange(seen, seen + m, dtype=float)[:, None])
        seen += m
        expected = np.arange(max(0, seen - capacity), seen, dtype=float)
        assert np.array_equal(buf.view()[:, 0], expected)


# -- strategies in the scenarios ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [1, 7, 256])
def test_replay_buffer_bounded_in_concept_agnostic_stream(batch_size):
    ds = make_synthetic(n_concepts=3, n_features=2, n_train=40, n_test=20, random_state=0)
    size = 25
    strat = Replay(
        IsolationForest(n_estimators=2, max_samples=1.0, random_state=0),
        buffer_size=size,
        random_state=0,
    )
    result = run_experiment(ds, ConceptAgnostic(batch_size=batch_size), strat)
    # one memory figure per concept end: never empty, never over the size
    assert result.memory_rows == (size, size, size)

    # and after every single batch, including the ones straddling a concept boundary
    s = clone(strat)
    rows = np.concatenate([c.X for c in ds.train])
    for start in range(0, len(rows), batch_size):
        s.learn(rows[start : start + batch_size])
        assert 1 <= s.memory_rows() <= size
        assert s.memory_rows() == min(size, min(start + batch_size, len(rows)))


def test_replay_modes_train_on_what_they_say():
    X1, X2 = np.zeros((40, 2)), np.ones((30, 2))
    with_new = Replay(iforest(), buffer_size=25, random_state=0).learn(X1).learn(X2)
    assert with_new.n_trained_rows_ == 25 + 30  # buffer before the call + the new rows
    only = Replay(iforest(), buffer_size=25, mode="buffer_only", random_state=0).learn(X1).learn(X2)
    assert only.n_trained_rows_ == 25
    assert make_strategy("replay_buffer_only", iforest()).mode == "buffer_only"


def test_balanced_replay_refused_in_concept_agnostic():
    ds = make_synthetic(n_concepts=2, n_features=2, n_train=50, n_test=20, random_state=0)
    with pytest.raises(ScenarioError, match="BalancedReplay needs concept boundaries"):
        run_experiment(
            ds, ConceptAgnostic(batch_size=10), BalancedReplay(iforest(), buffer_size=10)
        )


def test_balanced_replay_uses_concept_ids_when_given():
    ds = make_synthetic(n_concepts=3, n_features=2, n_train=60, n_test=20, random_state=0)
    strat = BalancedReplay(iforest(), buffer_size=2, random_state=0)
    result = run_experiment(ds, ConceptAware(), strat)
    assert result.memory_rows == (2, 2, 2)
    fitted = BalancedReplay(iforest(), buffer_size=2, random_state=0)
    for c in ds.train:
        fitted.learn(c.X, concept_id=c.name)
    assert fitted.buffer_.rows_per_concept() == {"C0": 0, "C1": 1, "C2": 1}


def test_window_strategy_keeps_last_rows():
    strat = Window(iforest(), window_size=30)
    strat.learn(np.zeros((25, 2))).learn(np.ones((10, 2)))
    assert strat.memory_rows() == 30
    assert np.array_equal(strat.buffer_.view()[:, 0], np.r_[np.zeros(20), np.ones(10)])
    ds = make_synthetic(n_concepts=2, n_features=2, n_train=60, n_test=20, random_state=0)
    result = run_experiment(ds, ConceptAgnostic(batch_size=7), Window(iforest(), window_size=40))
    assert result.memory_rows == (40, 40)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, None])
def test_bad_sizes_are_clear_errors(bad):
    with pytest.raises(CladValueError, match=r"buffer_size=.*expected an integer >= 1"):
        Replay(iforest(), buffer_size=bad).learn(np.zeros((5, 2)))
    with pytest.raises(CladValueError, match=r"window_size=.*expected an integer >= 1"):
        Window(iforest(), window_size=bad).learn(np.zeros((5, 2)))


def test_bad_mode_is_a_clear_error():
    with pytest.raises(CladValueError, match="mode='both'; allowed: 'with_new', 'buffer_only'"):
        Replay(iforest(), mode="both").learn(np.zeros((5, 2)))


def test_replay_is_seeded_by_random_state_only():
    X = np.random.default_rng(0).normal(size=(300, 2))
    a = Replay(iforest(), buffer_size=20, random_state=5).learn(X[:100]).learn(X[100:])
    b = Replay(iforest(), buffer_size=20, random_state=5).learn(X[:100]).learn(X[100:])
    c = Replay(iforest(), buffer_size=20, random_state=6).learn(X[:100]).learn(X[100:])
    assert np.array_equal(a.buffer_.view(), b.buffer_.view())
    assert not np.array_equal(a.buffer_.view(), c.buffer_.view())


@pytest.mark.parametrize("name", ["replay", "replay_buffer_only", "balanced_replay", "window"])
def test_registered_clone_and_pickle(name):
    strat = make_strategy(name, iforest(), random_state=0)
    X = np.random.default_rng(0).normal(size=(80, 2))
    strat.learn(X[:40]).learn(X[40:])
    fresh = clone(strat)
    assert not hasattr(fresh, "buffer_") and not hasattr(fresh, "detector_")
    back = pickle.loads(pickle.dumps(strat))
    assert np.array_equal(back.score(X).scores, strat.score(X).scores)
    assert back.memory_rows() == strat.memory_rows() > 0
    assert STRATEGIES.resolve(name) is type(strat)


def test_supported_scenarios_match_requirements():
    for cls in (Replay, Window):
        assert not cls.requires_boundaries and "concept_agnostic" in cls.supported_scenarios
    assert (
        BalancedReplay.requires_boundaries
        and "concept_agnostic" not in BalancedReplay.supported_scenarios
    )


@pytest.mark.slow
@pytest.mark.skipif(not NSL_KDD.exists(), reason="shared NSL-KDD concept file not available")
def test_replay_reduces_forgetting_on_nsl_kdd():
    # a pyCLAD concept file from the shared data folder (a trusted pickle)
    raw = np.load(NSL_KDD, allow_pickle=True)
    train = [Concept(str(d["name"]), d["train_data"]) for d in raw]
    test = [Concept(str(d["name"]), d["test_data"], d["test_labels"]) for d in raw]
    ds = ConceptDataset(train, test, name="nsl-kdd")
    bwt = {}
    for name, strat in {
        "naive": Naive(IsolationForest(random_state=0)),
        "replay": Replay(IsolationForest(random_state=0), buffer_size=300),
        "cumulative": Cumulative(IsolationForest(random_state=0)),
    }.items():
        result = run_experiment(ds, ConceptIncremental(), strat, seed=0)
        bwt[name] = result.metrics["roc_auc"]["backward_transfer"]
    assert bwt["naive"] < bwt["replay"]
    assert bwt["naive"] < bwt["cumulative"]
    assert bwt["naive"] < -0.05  # forgetting is real
