"""The speed-ups change no result, and the streaming path never holds the whole stream."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest
from sklearn.neighbors import LocalOutlierFactor

from clad.core.concepts import Concept, ConceptDataset
from clad.datasets import make_synthetic
from clad.errors import CladValueError, SpecError
from clad.core.evaluation import Evaluator
from clad.validation import check_n_jobs
from clad.core.memmap import is_memmap, release
from clad.core.experiment import run_experiment
from clad.scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental, stream_batches
from clad.engine.spec import parse_spec
from clad.strategies import Cumulative, Naive, Replay

METRICS = ("roc_auc", "f1", "average_precision")


@pytest.fixture(scope="module")
def ds():
    return make_synthetic(n_concepts=4, n_features=4, n_train=150, n_test=120, random_state=3)


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario",
    [ConceptAware(), ConceptIncremental(), ConceptAgnostic(batch_size=100, anytime_every=2)],
    ids=lambda s: s.name,
)
@pytest.mark.parametrize("strategy", [Naive, Cumulative], ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "detector",
    [
        IsolationForest(n_estimators=20, random_state=0),
        LocalOutlierFactor(novelty=True, n_neighbors=10),
    ],
    ids=["iforest", "lof"],
)
def test_threaded_scoring_gives_bit_identical_R(ds, scenario, strategy, detector):
    runs = {
        k: scenario.run(ds, strategy(detector), Evaluator(ds.test, METRICS, n_jobs=k))
        for k in (1, 2, 4)
    }
    for k in (2, 4):
        for m in METRICS:
            assert runs[k].R[m].tobytes() == runs[1].R[m].tobytes(), (k, m)
            if runs[1].anytime_R is not None:
                assert runs[k].anytime_R[m].tobytes() == runs[1].anytime_R[m].tobytes()
    # and the matrix is a real one: a detector trained on a concept tells its anomalies apart
    assert np.nanmax(runs[1].R["roc_auc"]) > 0.9


@pytest.mark.slow
def test_n_jobs_from_run_experiment_and_scenario_param(ds):
    strat = Naive(IsolationForest(n_estimators=20))
    base = run_experiment(ds, ConceptIncremental(), strat, METRICS, seed=5)
    via_run = run_experiment(ds, ConceptIncremental(), strat, METRICS, seed=5, n_jobs=2)
    via_scenario = run_experiment(ds, ConceptIncremental(n_jobs=-1), strat, METRICS, seed=5)
    for other in (via_run, via_scenario):
        for m in METRICS:
            assert other.R[m].tobytes() == base.R[m].tobytes()


def test_scenario_n_jobs_reaches_the_evaluator(ds):
    ev = Evaluator(ds.test)
    ConceptAware(n_jobs=3).run(ds, Naive(IsolationForest(n_estimators=5, random_state=0)), ev)
    assert ev.n_jobs == 3
    ev = Evaluator(ds.test, n_jobs=2)
    ConceptAware().run(ds, Naive(IsolationForest(n_estimators=5, random_state=0)), ev)
    assert ev.n_jobs == 2  # None leaves the evaluator's own setting


def test_spec_key_n_jobs_in_a_scenario_table():
    raw = {
        "datasets": [{"name": "synthetic", "n_concepts": 2}],
        "scenarios": [{"name": "concept_aware", "n_jobs": 2}],
        "strategies": ["naive"],
        "detectors": ["iforest"],
    }
    spec = parse_spec(raw)
    assert spec.configs[0].scenario.params == {"n_jobs": 2}
    raw["scenarios"] = [{"name": "concept_agnostic", "n_jobs": 0}]
    with pytest.raises(SpecError, match="n_jobs=0"):
        parse_spec(raw)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_bad_n_jobs_is_refused_with_the_value(bad):
    with pytest.raises(CladValueError, match="n_jobs="):
        check_n_jobs(bad)
    with pytest.raises(CladValueError, match="n_jobs="):
        Evaluator(make_synthetic(n_concepts=1, random_state=0).test, n_jobs=bad)


def test_cpu_count_for_minus_one():
    import os

    assert check_n_jobs(-1) == (os.cpu_count() or 1)


# -- streaming: memory-mapped data are never materialised --------------------------------------

N_ROWS, N_FEAT, BATCH = 800_000, 10, 10_000  # a 32 MB float32 stream


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "stream.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(N_ROWS, N_FEAT))
    rng = np.random.default_rng(0)
    for start in range(0, N_ROWS, 50_000):
        out[start : start + 50_000] = rng.standard_normal(
            (50_000, N_FEAT), dtype=np.float32
        ) + start // (N_ROWS // 4)
    out.flush()
    del out
    return path


@pytest.mark.slow
def test_stream_of_a_memmap_is_run_without_materialising_it(stream_file):
    stream_bytes = N_ROWS * N_FEAT * 4
    rng = np.random.default_rng(1)
    tracemalloc.start()
    try:
        X = np.load(stream_file, mmap_mode="r")
        per = N_ROWS // 4
        train = [Concept(f"C{k}", X[k * per : (k + 1) * per]) for k in range(4)]
        assert all(is_memmap(c.X) for c in train)  # kept as given, not copied
        tests = []
        for k in range(4):
            Xt = rng.standard_normal((400, N_FEAT)) + k
            Xt[:40] += 8
            tests.append(Concept(f"C{k}", Xt, (np.arange(400) < 40).astype(int)))
        ds = ConceptDataset(train, tests)
        tracemalloc.reset_peak()
        out = ConceptAgnostic(batch_size=BATCH).run(
            ds,
            Replay(
                IsolationForest(n_estimators=5, max_samples=64, random_state=0),
                buffer_size=2_000,
                random_state=0,
            ),
            Evaluator(ds.test),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.R["roc_auc"].shape == (4, 4)
    assert np.nanmean(np.diag(out.R["roc_auc"])) > 0.9
    # numpy reports its allocations to tracemalloc: a copy of the stream (or of one concept,
    # a quarter of it) would show; a few batches' worth is what streaming costs
    assert peak < stream_bytes / 8, (
        f"peak traced memory {peak / 1e6:.1f} MB for a {stream_bytes / 1e6:.0f} MB stream"
    )


def test_stream_batches_are_views_of_a_memmap(stream_file):
    X = np.load(stream_file, mmap_mode="r")
    a, b = X[:25_000], X[25_000:50_000]
    batches = list(stream_batches([a, b], 10_000))
    assert [len(x) for x, _ in batches] == [10_000] * 5
    assert np.shares_memory(batches[0][0], X) and not np.shares_memory(
        batches[2][0], X
    )  # [2] spans a and b
    assert np.array_equal(
        np.vstack([x for x, _ in batches]), X[:50_000]
    )  # released pages read again


def test_release_keeps_the_data_and_ignores_other_arrays(stream_file):
    X = np.load(stream_file, mmap_mode="r")
    before = X[1000:200_000].sum(dtype=np.float64)
    assert release(X[1000:200_000]) is True
    assert X[1000:200_000].sum(dtype=np.float64) == before
    assert release(np.ones((100, 3))) is False
    assert release(X[:1]) is False  # less than a page: nothing to give back
    copy = np.load(stream_file, mmap_mode="c")
    assert release(copy[:100_000]) is False  # private copy-on-write mapping: never dropped


# -- the evaluator's metric calls equal scikit-learn's metric functions bit for bit -------------


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_base_metrics_equal_sklearn_functions_exactly(seed):
    from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

    from clad.metrics import get_base_metric
    from clad.strategies import Scored

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 900))
    y = (rng.random(n) < rng.uniform(0.05, 0.6)).astype(np.int8)
    y[:2] = [0, 1]
    # ties on purpose in some cases (rounded scores, or very few distinct values)
    scores = rng.normal(size=n) + y * rng.uniform(0, 2)
    if seed % 4 == 1:
        scores = np.round(scores, 1)
    elif seed % 4 == 2:
        scores = rng.integers(0, 3, size=n).astype(float)
    elif seed % 4 == 3:
        scores = scores * 1e-12 + 5.0
    scored = Scored(scores, float(np.quantile(scores, 0.8)))
    assert get_base_metric("roc_auc")(y, scored.scores) == roc_auc_score(y, scores)
    assert get_base_metric("average_precision")(y, scored.scores) == average_precision_score(
        y, scores
    )
    assert get_base_metric("f1")(y, scored.labels) == f1_score(
        y, scores > scored.threshold, zero_division=0.0
    )


def test_roc_auc_on_hand_computed_cases():
    from clad.metrics import get_base_metric

    auc = get_base_metric("roc_auc")
    y = np.array([0, 0, 1, 1])
    assert auc(y, np.array([0.1, 0.4, 0.35, 0.8])) == 0.75  # 3 of 4 pairs ordered
    assert auc(y, np.array([0.0, 0.0, 1.0, 1.0])) == 1.0
    assert auc(y, np.array([1.0, 1.0, 0.0, 0.0])) == 0.0
    assert auc(y, np.array([0.5, 0.5, 0.5, 0.5])) == 0.5  # all tied
