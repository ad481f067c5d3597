"""Incremental detectors (river, partial_fit) and the incremental strategy in the concept-agnostic stream."""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest
from sklearn.linear_model import SGDOneClassSVM

pytest.importorskip("river")
from river import anomaly, preprocessing  # noqa: E402

from clad import Concept, ConceptDataset, run_experiment  # noqa: E402
from clad.detectors import DETECTORS, as_detector, make_detector  # noqa: E402
from clad.detectors.incremental import RiverDetector, half_space_trees, river_one_class_svm  # noqa: E402
from clad.detectors.partial_fit import PartialFitDetector, as_incremental  # noqa: E402
from clad.errors import CladValueError  # noqa: E402
from clad.scenarios import ConceptAgnostic  # noqa: E402
from clad.strategies import STRATEGIES, Incremental, make_strategy  # noqa: E402
from clad.testing import DETECTOR_CHECKS, check_detector, check_strategy  # noqa: E402


def hst(**kw):
    return half_space_trees(**{"n_trees": 10, "height": 6, "window_size": 100, **kw})


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: hst(), lambda: river_one_class_svm(n_components=50)])
def test_river_detector_contract(make):
    report = check_detector(make(), raise_on_failure=False)
    assert report.ok, str(report)


def test_partial_fit_adapter_contract():
    # a linear one-class SVM separates the data from the origin: normal rows far out, anomalies near it
    rng = np.random.default_rng(0)
    X = rng.normal(5.0, 1.0, size=(300, 3))
    T = np.vstack([rng.normal(5.0, 1.0, size=(180, 3)), rng.normal(0.0, 0.3, size=(20, 3))])
    y = np.r_[np.zeros(180), np.ones(20)]
    det = PartialFitDetector(SGDOneClassSVM(nu=0.1))
    failures = {
        name: msg
        for name, check in DETECTOR_CHECKS.items()
        if (msg := check(det, (X, T, y))) is not None
    }
    assert not failures


def autoencoder():
    torch_ae = pytest.importorskip("clad.detectors.torch_ae")
    return torch_ae.AutoEncoder(hidden_sizes=(4, 2), epochs=15, num_threads=1)


@pytest.mark.slow
@pytest.mark.parametrize("make", [hst, autoencoder])
def test_strategy_contract(make):
    report = check_strategy(Incremental(make()), raise_on_failure=False)
    assert report.ok, str(report)


def test_partial_fit_goes_on_and_fit_starts_over():
    X = np.random.default_rng(0).uniform(size=(150, 3))
    det = hst(random_state=1).fit(X)
    counter = det.estimator_["HalfSpaceTrees"].counter
    det.partial_fit(X)
    assert (
        det.n_rows_learned_ == 300
        and det.estimator_["HalfSpaceTrees"].counter == (counter + 150) % 100
    )
    det.fit(X)
    assert det.n_rows_learned_ == 150
    assert det.estimator.steps["HalfSpaceTrees"].seed is None  # the prototype is never touched
    assert det.estimator_["HalfSpaceTrees"].seed == 1


def test_river_objects_are_wrapped_and_seeded():
    raw = preprocessing.MinMaxScaler() | anomaly.HalfSpaceTrees(window_size=50)
    det = as_detector(raw)
    assert isinstance(det, RiverDetector) and det.name == "HalfSpaceTrees"
    by_path = make_detector("river.anomaly:HalfSpaceTrees", {"window_size": 50}, random_state=4)
    assert isinstance(by_path, RiverDetector) and by_path.random_state == 4
    X = np.random.default_rng(0).uniform(size=(120, 2))
    a, b = (
        by_path.fit(X).score(X),
        make_detector("river.anomaly:HalfSpaceTrees", {"window_size": 50}, random_state=4)
        .fit(X)
        .score(X),
    )
    assert np.array_equal(a, b)
    assert np.array_equal(pickle.loads(pickle.dumps(by_path)).score(X), a)


def test_registered_names():
    assert DETECTORS.resolve("half_space_trees") is half_space_trees
    assert STRATEGIES.resolve("incremental") is Incremental
    strat = make_strategy(
        "incremental", make_detector("sklearn.linear_model:SGDOneClassSVM", random_state=0)
    )
    assert isinstance(
        strat.learn(np.random.default_rng(0).normal(size=(50, 2))).detector_, PartialFitDetector
    )


def test_what_cannot_learn_incrementally_is_named():
    with pytest.raises(CladValueError, match="IsolationForest cannot learn incrementally"):
        Incremental(IsolationForest()).learn(np.zeros((10, 2)))
    assert isinstance(as_incremental(as_detector(SGDOneClassSVM())), PartialFitDetector)


def drifting_stream(seed=0):
    """Three concepts in [0, 1]^2: uniform blobs at different corners; test anomalies are the
    other corners' rows plus uniform noise."""
    rng = np.random.default_rng(seed)
    centres = [(0.2, 0.2), (0.8, 0.8), (0.2, 0.8)]
    train, test = [], []
    for k, c in enumerate(centres):
        train.append(Concept(f"C{k}", np.clip(rng.normal(c, 0.05, size=(600, 2)), 0, 1)))
        normal = np.clip(rng.normal(c, 0.05, size=(180, 2)), 0, 1)
        far = rng.uniform(size=(20, 2))
        far = far[np.linalg.norm(far - c, axis=1) > 0.3][:10]
        test.append(
            Concept(
                f"C{k}", np.vstack([normal, far]), np.r_[np.zeros(len(normal)), np.ones(len(far))]
            )
        )
    return ConceptDataset(train, test, name="corners")


@pytest.mark.slow
def test_half_space_trees_through_incremental_in_concept_agnostic():
    ds = drifting_stream()
    strat = Incremental(hst(n_trees=25, window_size=200))
    r = run_experiment(ds, ConceptAgnostic(batch_size=100), strat, seed=0)
    R = r.R["roc_auc"]
    assert R.shape == (3, 3) and r.memory_rows == (0, 0, 0)
    # the trees' mass profiles follow the stream: each concept is detected well just after it is learned
    assert np.all(np.diag(R) > 0.9)
    again = run_experiment(ds, ConceptAgnostic(batch_size=100), strat, seed=0)
    assert np.array_equal(again.R["roc_auc"], R)
    other = run_experiment(ds, ConceptAgnostic(batch_size=100), strat, seed=1)
    assert not np.array_equal(other.R["roc_auc"], R)
