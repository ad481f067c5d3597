"""Detector adapters: PyOD and scikit-learn detectors through one code path, and contract errors."""

import importlib
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from clad.detectors import (
    DETECTORS,
    ProtocolDetector,
    PyODDetector,
    SklearnDetector,
    as_detector,
    make_detector,
)
from clad.errors import CladTypeError, CladValueError, DetectorError


@pytest.fixture(scope="module")
def easy():
    rng = np.random.default_rng(42)
    X_train = rng.normal(size=(300, 4))
    normal = rng.normal(size=(200, 4))
    direction = rng.normal(size=(20, 4))
    anomalies = 7.0 * direction / np.linalg.norm(direction, axis=1, keepdims=True)
    X_test = np.vstack([normal, anomalies])
    y_test = np.r_[np.zeros(200), np.ones(20)]
    return X_train, X_test, y_test


SKLEARN = [
    ("sklearn.ensemble", "IsolationForest", {"random_state": 0}),
    ("sklearn.svm", "OneClassSVM", {"nu": 0.1, "gamma": "scale"}),
    ("sklearn.neighbors", "LocalOutlierFactor", {"novelty": True}),
    ("sklearn.covariance", "EllipticEnvelope", {"random_state": 0}),
]
PYOD = [
    ("pyod.models.knn", "KNN", {}),
    ("pyod.models.hbos", "HBOS", {}),
    ("pyod.models.ecod", "ECOD", {}),
    ("pyod.models.copod", "COPOD", {}),
    ("pyod.models.pca", "PCA", {}),
    ("pyod.models.iforest", "IForest", {"random_state": 0}),
    ("pyod.models.lof", "LOF", {}),
    ("pyod.models.ocsvm", "OCSVM", {}),
    ("pyod.models.mcd", "MCD", {"random_state": 0}),
    ("pyod.models.kde", "KDE", {}),
    ("pyod.models.gmm", "GMM", {"random_state": 0}),
    ("pyod.models.inne", "INNE", {"random_state": 0}),
    ("pyod.models.loda", "LODA", {}),
    ("pyod.models.cblof", "CBLOF", {"random_state": 0}),
    ("pyod.models.abod", "ABOD", {}),
    ("pyod.models.cof", "COF", {}),
    ("pyod.models.sampling", "Sampling", {"random_state": 0}),
]


def build(module, cls, params):
    return getattr(importlib.import_module(module), cls)(**params)


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, cls, params", SKLEARN + PYOD, ids=[c for _, c, _ in SKLEARN + PYOD]
)
def test_every_adapter_scores_anomalies_higher(easy, module, cls, params):
    X_train, X_test, y_test = easy
    det = as_detector(build(module, cls, params))
    expected = SklearnDetector if module.startswith("sklearn") else PyODDetector
    assert type(det) is expected
    assert det.fit(X_train) is det
    scores = det.score(X_test)
    assert scores.shape == (len(X_test),)
    assert roc_auc_score(y_test, scores) > 0.9
    assert np.isfinite(det.threshold_)


@pytest.mark.parametrize("module, cls, params", SKLEARN, ids=[c for _, c, _ in SKLEARN])
def test_sklearn_labels_match_sklearn_predict(easy, module, cls, params):
    X_train, X_test, _ = easy
    det = as_detector(build(module, cls, params)).fit(X_train)
    ours = det.score(X_test) > det.threshold_
    theirs = det.estimator_.predict(X_test) == -1
    assert (ours == theirs).all()


def test_pyod_labels_match_pyod_predict(easy):
    X_train, X_test, _ = easy
    det = as_detector(build("pyod.models.knn", "KNN", {})).fit(X_train)
    assert (
        (det.score(X_test) > det.threshold_).astype(int) == det.estimator_.predict(X_test)
    ).all()


def test_prototype_is_never_fitted(easy):
    from sklearn.ensemble import IsolationForest

    proto = IsolationForest(random_state=0)
    det = as_detector(proto).fit(easy[0])
    assert not hasattr(proto, "estimators_")
    fresh = clone(det)
    assert not hasattr(fresh, "estimator_")
    assert pickle.loads(pickle.dumps(det)).score(easy[1]).tolist() == det.score(easy[1]).tolist()


class Distance:
    """A user's own detector: distance to the training mean."""

    def fit(self, X):
        self.mean_ = X.mean(axis=0)
        return self

    def score(self, X):
        return np.linalg.norm(X - self.mean_, axis=1)


def test_user_class_without_threshold(easy):
    X_train, X_test, y_test = easy
    det = as_detector(Distance())
    assert type(det) is ProtocolDetector
    det.fit(X_train)
    assert roc_auc_score(y_test, det.score(X_test)) > 0.9
    # threshold: 90 % quantile of training scores
    assert det.threshold_ == pytest.approx(np.quantile(Distance().fit(X_train).score(X_train), 0.9))


class WrongShape(Distance):
    def score(self, X):
        return super().score(X)[:, None]


class NonFinite(Distance):
    def score(self, X):
        s = super().score(X)
        s[0] = np.nan
        return s


class NoSelf(Distance):
    def fit(self, X):
        super().fit(X)
        return None


def test_wrong_shape_names_the_detector(easy):
    with pytest.raises(
        DetectorError,
        match=r"detector WrongShape: score\(\) returned shape \(300, 1\) for 300 rows; expected \(300,\)",
    ):
        as_detector(WrongShape()).fit(easy[0])


def test_non_finite_names_the_detector(easy):
    det = as_detector(NonFinite())
    with pytest.raises(
        DetectorError, match=r"detector NonFinite: score\(\) returned 1 non-finite value"
    ):
        det.fit(easy[0])


def test_fit_must_return_self(easy):
    with pytest.raises(
        DetectorError,
        match=r"detector NoSelf: fit\(\) returned NoneType, expected the detector itself",
    ):
        as_detector(NoSelf()).fit(easy[0])


def test_not_a_detector():
    with pytest.raises(CladTypeError, match="object is not a detector"):
        as_detector(object())
    from sklearn.ensemble import IsolationForest

    with pytest.raises(CladTypeError, match="got the class IsolationForest; call it first"):
        as_detector(IsolationForest)


def test_lof_without_novelty_is_explained(easy):
    from sklearn.neighbors import LocalOutlierFactor

    with pytest.raises(DetectorError, match="novelty=False cannot score new data"):
        as_detector(LocalOutlierFactor()).fit(easy[0])


def test_score_before_fit():
    from sklearn.ensemble import IsolationForest

    with pytest.raises(DetectorError, match=r"score\(\) called before fit\(\)"):
        as_detector(IsolationForest()).score(np.zeros((2, 2)))


def test_registry_names_and_params():
    det = make_detector("lof", {"n_neighbors": 5})
    assert det.estimator.novelty is True and det.estimator.n_neighbors == 5
    with pytest.raises(
        CladValueError, match=r"unknown detector 'iforrest' \(did you mean 'iforest'\?\)"
    ):
        make_detector("iforrest")
    with pytest.raises(
        CladValueError, match=r"unknown parameter 'n_estimator' \(did you mean 'n_estimators'\?\)"
    ):
        make_detector("iforest", {"n_estimator": 5})
    assert (
        type(make_detector("sklearn.ensemble:IsolationForest").estimator).__name__
        == "IsolationForest"
    )
    with pytest.raises(CladValueError, match="has no attribute 'IsolationForrest'"):
        make_detector("sklearn.ensemble:IsolationForrest")
    assert {"iforest", "lof", "ocsvm", "elliptic_envelope", "knn", "ecod"} <= set(DETECTORS.names())


def test_random_state_from_seed_does_not_override_explicit():
    assert make_detector("iforest", {"random_state": 5}, random_state=9).estimator.random_state == 5
    assert make_detector("iforest", {}, random_state=9).estimator.random_state == 9
