"""The three scenarios feed a strategy exactly what they promise; evaluation scores each test set once."""

import warnings

import numpy as np
import pytest

from clad import Concept, ConceptDataset
from clad.errors import CladValueError, ScenarioError
from clad.core.evaluation import Evaluator
from clad.scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental, stream_batches
from clad.strategies import Cumulative, Naive, Scored, Strategy


class Recorder(Strategy):
    """Records every call; scores = first feature (which holds the row's concept index)."""

    def learn(self, X, concept_id=None):
        self.calls_ = getattr(self, "calls_", []) + [("learn", X.copy(), concept_id)]
        return self

    def score(self, X, concept_id=None):
        self.calls_.append(("score", len(X), concept_id))
        return Scored(X[:, 0].astype(float), 0.5)


class NeedsId(Recorder):
    requires_concept_id = True


class NeedsBoundaries(Recorder):
    requires_boundaries = True


def dataset(sizes=(5, 7, 4)):
    """Training concept k has rows whose first column is k and second column the row index."""
    train = [
        Concept(f"c{k}", np.c_[np.full(n, k), np.arange(n)].astype(float))
        for k, n in enumerate(sizes)
    ]
    rng = np.random.default_rng(0)
    test = [
        Concept(f"c{k}", rng.normal(size=(6, 2)), np.array([0, 0, 0, 0, 1, 1]))
        for k in range(len(sizes))
    ]
    return ConceptDataset(train, test)


def run(scenario, strategy, ds=None, metrics=("roc_auc",)):
    ds = ds or dataset()
    strategy.learn  # noqa: B018
    ev = Evaluator(ds.test, metrics)
    out = scenario.run(ds, strategy, ev)
    return out, strategy.calls_


def test_concept_aware_gives_ids_at_learn_and_score():
    out, calls = run(ConceptAware(), Recorder())
    learns = [c for c in calls if c[0] == "learn"]
    assert [c[2] for c in learns] == ["c0", "c1", "c2"]
    assert [len(c[1]) for c in learns] == [5, 7, 4]
    scores = [c for c in calls if c[0] == "score"]
    assert len(scores) == 3 * 3  # every test concept after every step
    assert [c[2] for c in scores] == ["c0", "c1", "c2"] * 3
    assert out.steps == ("c0", "c1", "c2")
    assert out.R["roc_auc"].shape == (3, 3)


def test_concept_incremental_gives_no_id():
    out, calls = run(ConceptIncremental(), Recorder())
    learns = [c for c in calls if c[0] == "learn"]
    assert len(learns) == 3 and all(c[2] is None for c in learns)
    assert [len(c[1]) for c in learns] == [5, 7, 4]
    assert all(c[2] is None for c in calls if c[0] == "score")


def test_concept_agnostic_batches_cross_boundaries():
    out, calls = run(ConceptAgnostic(batch_size=3), Recorder())
    learns = [c for c in calls if c[0] == "learn"]
    sizes = [len(c[1]) for c in learns]
    # 16 rows in batches of 3: five full batches and one short *last* batch only
    assert sizes == [3, 3, 3, 3, 3, 1]
    assert all(c[2] is None for c in learns)
    # the stream is the concatenation in order, nothing lost or repeated
    stream = np.vstack([c[1] for c in learns])
    expected = np.vstack([c.X for c in dataset().train])
    assert np.array_equal(stream, expected)
    # batch 2 = rows 3..5 holds c0 rows 3, 4 and c1 row 0: it spans the boundary
    crossing = [np.unique(c[1][:, 0]).size > 1 for c in learns]
    assert crossing == [False, True, False, False, False, False]
    # evaluated once per concept: c0 ends inside batch 2, which holds a c1 row, so by default c0's row
    # comes before batch 2 (no look-ahead); c1 ends with batch 4, c2 with batch 6
    assert out.steps == ("c0", "c1", "c2")
    positions = [i for i, c in enumerate(calls) if c[0] == "score"]
    learn_index_before = [sum(1 for c in calls[:p] if c[0] == "learn") for p in positions[::3]]
    assert learn_index_before == [1, 4, 6]
    assert out.learned_rows == (
        {"concept": 3, "later": 0, "size": 5},
        {"concept": 7, "later": 0, "size": 7},
        {"concept": 4, "later": 0, "size": 4},
    )
    # the earlier behaviour, by name: after the batch that crosses the boundary
    out, calls = run(ConceptAgnostic(batch_size=3, evaluate="after_crossing_batch"), Recorder())
    positions = [i for i, c in enumerate(calls) if c[0] == "score"]
    assert [sum(1 for c in calls[:p] if c[0] == "learn") for p in positions[::3]] == [2, 4, 6]
    assert [r["later"] for r in out.learned_rows] == [1, 0, 0]


def test_concept_agnostic_two_ends_in_one_batch_scores_once():
    ds = dataset(sizes=(2, 2, 8))
    out, calls = run(ConceptAgnostic(batch_size=5), Recorder(), ds)
    # c0 and c1 both end in the first batch: two rows of R, but test sets scored once; nothing was
    # learned before it, so they come after it (and record the look-ahead)
    assert out.steps == ("c0", "c1", "c2")
    assert [(r["concept"], r["later"]) for r in out.learned_rows] == [(2, 3), (2, 1), (8, 0)]
    assert np.array_equal(out.R["roc_auc"][0], out.R["roc_auc"][1])
    assert sum(1 for c in calls if c[0] == "score") == 2 * 3


def test_anytime_matrix():
    out, calls = run(ConceptAgnostic(batch_size=2, anytime_every=3), Recorder())
    # 8 batches of 2 rows; anytime after batches 3 and 6
    assert out.anytime_rows_seen == (6, 12)
    assert out.anytime_R["roc_auc"].shape == (2, 3)
    assert out.R["roc_auc"].shape == (3, 3)


def test_stream_batches_views_inside_a_concept():
    a = np.arange(20, dtype=float).reshape(10, 2)
    (first, ended), *_ = list(stream_batches([a], 4))
    assert np.shares_memory(first, a) and ended == []


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_bad_batch_size(bad):
    with pytest.raises(CladValueError, match=f"batch_size={bad!r}; expected an integer >= 1"):
        run(ConceptAgnostic(batch_size=bad), Recorder())


def test_strategy_needing_an_id_is_refused_before_running():
    s = NeedsId()
    with pytest.raises(
        ScenarioError,
        match="needs the concept id, which scenario 'concept_incremental' does not give",
    ):
        ConceptIncremental().run(dataset(), s, Evaluator(dataset().test))
    assert not hasattr(s, "calls_")  # nothing ran
    with pytest.raises(ScenarioError, match="needs the concept id"):
        ConceptAgnostic().run(dataset(), NeedsId(), Evaluator(dataset().test))
    with pytest.raises(
        ScenarioError, match="needs concept boundaries, which scenario 'concept_agnostic'"
    ):
        ConceptAgnostic().run(dataset(), NeedsBoundaries(), Evaluator(dataset().test))
    run(ConceptAware(), NeedsId())  # fine there


class CountingDetector:
    """Counts score calls and rows scored."""

    calls = 0

    def fit(self, X):
        self.mean_ = X.mean(axis=0)
        self.threshold_ = 1.0
        return self

    def score(self, X):
        type(self).calls += 1
        return np.linalg.norm(X - self.mean_, axis=1)


@pytest.mark.parametrize("metrics", [("roc_auc",), ("roc_auc", "f1", "average_precision")])
@pytest.mark.parametrize(
    "scenario", [ConceptAware(), ConceptIncremental(), ConceptAgnostic(batch_size=4)]
)
def test_each_test_concept_scored_once_per_step(metrics, scenario):
    CountingDetector.calls = 0
    ds = dataset()
    out = scenario.run(ds, Naive(CountingDetector()), Evaluator(ds.test, metrics))
    n_steps = len(out.steps)
    assert CountingDetector.calls == n_steps * len(ds.test)
    assert set(out.R) == set(metrics)


def test_f1_uses_threshold_of_same_scores():
    ds = dataset()
    out, _ = run(ConceptAware(), Recorder(), ds, metrics=("f1",))
    from sklearn.metrics import f1_score

    for j, c in enumerate(ds.test):
        expected = f1_score(c.y, (c.X[:, 0] > 0.5).astype(int), zero_division=0.0)
        assert out.R["f1"][0, j] == pytest.approx(expected)


def test_single_class_concept_is_nan_with_one_warning():
    rng = np.random.default_rng(1)
    train = [Concept("a", rng.normal(size=(20, 2))), Concept("b", rng.normal(size=(20, 2)))]
    test = [
        Concept("a", rng.normal(size=(10, 2)), np.r_[np.zeros(8), np.ones(2)]),
        Concept("b", rng.normal(size=(10, 2)), np.zeros(10)),
    ]
    ds = ConceptDataset(train, test)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ConceptAware().run(
            ds, Naive(CountingDetector()), Evaluator(ds.test, ("roc_auc", "f1"))
        )
    msgs = [str(w.message) for w in caught if "single class" in str(w.message)]
    assert len(msgs) == 1 and "'b'" in msgs[0]
    assert np.isnan(out.R["roc_auc"][:, 1]).all() and np.isnan(out.R["f1"][:, 1]).all()
    assert np.isfinite(out.R["roc_auc"][:, 0]).all()


def test_unknown_base_metric():
    with pytest.raises(
        CladValueError, match=r"unknown base metric 'roc-auc' \(did you mean 'roc_auc'\?\)"
    ):
        Evaluator(dataset().test, ("roc-auc",))


def test_timings_and_memory_recorded():
    from sklearn.ensemble import IsolationForest

    ds = dataset()
    out = ConceptIncremental().run(
        ds, Cumulative(IsolationForest(n_estimators=5, random_state=0)), Evaluator(ds.test)
    )
    assert len(out.fit_seconds) == len(out.score_seconds) == 3
    assert all(t > 0 for t in out.fit_seconds)
    assert out.memory_rows == (5, 12, 16)


@pytest.mark.slow
def test_naive_forgets_cumulative_remembers():
    from sklearn.ensemble import IsolationForest

    from clad import make_synthetic, metrics

    ds = make_synthetic(n_concepts=3, random_state=0)
    bwt = {}
    for S in (Naive, Cumulative):
        out = ConceptIncremental().run(ds, S(IsolationForest(random_state=0)), Evaluator(ds.test))
        bwt[S.__name__] = metrics.backward_transfer(out.R["roc_auc"])
    assert bwt["Naive"] < -0.2 < bwt["Cumulative"]


def _stream(scenario, ds):
    rec = Recorder()
    out = scenario.run(ds, rec, Evaluator(ds.test))
    batches = [c[1] for c in rec.calls_ if c[0] == "learn"]
    return np.vstack(batches), [len(b) for b in batches], out


def test_gradual_transition_interleaves_around_boundaries():
    ds = dataset(sizes=(40, 40, 40))
    stream, sizes, out = _stream(ConceptAgnostic(batch_size=7, transition=20, random_state=3), ds)
    # every row exactly once, each concept in its own order
    assert stream.shape == (120, 2)
    for k in range(3):
        rows = stream[stream[:, 0] == k, 1]
        assert rows.tolist() == list(range(40))
    concept = stream[:, 0]
    # outside the windows the stream is pure; inside, the two concepts alternate
    assert (concept[:30] == 0).all() and (concept[50:70] == 1).all() and (concept[90:] == 2).all()
    window = concept[30:50]
    assert set(window) == {0, 1}
    first_new, last_old = np.argmax(window == 1), len(window) - 1 - np.argmax(window[::-1] == 0)
    assert first_new < last_old  # a real mixture, not a shifted boundary
    assert sizes[:-1] == [7] * (len(sizes) - 1)
    assert out.steps == ("c0", "c1", "c2")


def test_gradual_transition_is_seeded_and_zero_is_abrupt():
    ds = dataset(sizes=(40, 40, 40))
    a, _, _ = _stream(ConceptAgnostic(batch_size=7, transition=20, random_state=3), ds)
    b, _, _ = _stream(ConceptAgnostic(batch_size=7, transition=20, random_state=3), ds)
    c, _, _ = _stream(ConceptAgnostic(batch_size=7, transition=20, random_state=4), ds)
    abrupt, _, _ = _stream(ConceptAgnostic(batch_size=7), ds)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.array_equal(abrupt, np.vstack([x.X for x in ds.train]))


def test_gradual_transition_wider_than_concepts():
    ds = dataset(sizes=(5, 3, 6))
    stream, _, out = _stream(ConceptAgnostic(batch_size=4, transition=100, random_state=0), ds)
    assert sorted(map(tuple, stream)) == sorted(map(tuple, np.vstack([x.X for x in ds.train])))
    assert out.steps == ("c0", "c1", "c2")


@pytest.mark.parametrize("bad", [-1, 2.5, "10", True])
def test_bad_transition(bad):
    with pytest.raises(CladValueError, match=f"transition={bad!r}; expected an integer >= 0"):
        run(ConceptAgnostic(transition=bad), Recorder())


def test_run_seed_drives_the_transition():
    from clad import make_synthetic, run_experiment
    from sklearn.ensemble import IsolationForest

    ds = make_synthetic(n_concepts=3, n_train=100, n_test=60, random_state=0)
    runs = [
        run_experiment(
            ds,
            ConceptAgnostic(batch_size=50, transition=60),
            Naive(IsolationForest(n_estimators=10)),
            seed=s,
        )
        for s in (1, 1)
    ]
    assert np.array_equal(runs[0].R["roc_auc"], runs[1].R["roc_auc"])
