"""Detectors: the interface, adapters for PyOD and scikit-learn, and registered names.

Contract (see :mod:`clad.detectors.base`): ``fit(X) -> self``; ``score(X) -> (n,)`` finite floats,
**higher = more anomalous**; ``threshold_`` after fit, a row is an anomaly when ``score > threshold_``.

Registered names usable in spec files (any ``package.module:Class`` path works too), read from
the registry (``clad list detectors`` prints the same):

>>> for name in DETECTORS.names():
...     print(f"{name:24} {DETECTORS.doc(name)}")
autoencoder              dense PyTorch autoencoder scored by reconstruction error
copod                    PyOD COPOD
ecod                     PyOD ECOD
elliptic_envelope        scikit-learn EllipticEnvelope
gru_autoencoder          GRU sequence autoencoder over windows
half_space_trees         river HalfSpaceTrees (incremental)
hbos                     PyOD HBOS
hotelling_t2             Hotelling's T² control chart; pca=true: the PCA-based T² + Q chart (any / all rule)
iforest                  scikit-learn IsolationForest
knn                      PyOD KNN
lof                      scikit-learn LocalOutlierFactor (novelty=True)
lstm_autoencoder         LSTM sequence autoencoder over windows
nearest_normal_distance  baseline: distance to the nearest training window (Sarfraz et al. 2024)
ocsvm                    scikit-learn OneClassSVM
pca                      PyOD PCA
pca_reconstruction       baseline: PCA reconstruction error of the window (Sarfraz et al. 2024)
postprocessed            a detector whose scores are smoothed in row order (rolling median / mean / max over k rows)
pyod_iforest             PyOD IForest
pyod_lof                 PyOD LOF
pyod_ocsvm               PyOD OCSVM
random_scores            baseline: seeded uniform scores (chance as a run, with a spread over seeds)
river_one_class_svm      river online OneClassSVM
sensor_range             baseline: values outside their channel's training range (Sarfraz et al. 2024)
vae                      small PyTorch variational autoencoder
window_l2_norm           baseline: L2 norm of the window scaled to the training range (Sarfraz et al. 2024)
windowed_gaussian        NAB's windowed Gaussian: tail probability under a sliding window of the values before (learns as it scores)

The PyTorch and river detectors are registered as import paths: torch and river are imported only
when one is built.
"""

from __future__ import annotations

from ..registry import Registry
from .base import (
    DetectorAdapter,
    ProtocolDetector,
    PyODDetector,
    SklearnDetector,
    as_detector,
    detector_name,
    set_random_state,
)
from .tabular import check_scores

__all__ = [
    "DETECTORS",
    "make_detector",
    "as_detector",
    "check_scores",
    "detector_name",
    "set_random_state",
    "DetectorAdapter",
    "ProtocolDetector",
    "PyODDetector",
    "SklearnDetector",
]

DETECTORS = Registry(
    "detector",
    methods=("fit",),
    any_of=("score", "decision_function", "score_samples"),
    or_methods=("learn_one", "score_one"),  # river's incremental detectors
    not_bases=("ClassifierMixin", "RegressorMixin"),  # scikit-learn's supervised estimators
)
DETECTORS.add("iforest", "sklearn.ensemble:IsolationForest", "scikit-learn IsolationForest")
DETECTORS.add(
    "lof",
    "sklearn.neighbors:LocalOutlierFactor",
    "scikit-learn LocalOutlierFactor (novelty=True)",
    defaults={"novelty": True},
)
DETECTORS.add("ocsvm", "sklearn.svm:OneClassSVM", "scikit-learn OneClassSVM")
DETECTORS.add(
    "elliptic_envelope", "sklearn.covariance:EllipticEnvelope", "scikit-learn EllipticEnvelope"
)
for _name, _path in {
    "knn": "pyod.models.knn:KNN",
    "hbos": "pyod.models.hbos:HBOS",
    "ecod": "pyod.models.ecod:ECOD",
    "copod": "pyod.models.copod:COPOD",
    "pca": "pyod.models.pca:PCA",
    "pyod_iforest": "pyod.models.iforest:IForest",
    "pyod_lof": "pyod.models.lof:LOF",
    "pyod_ocsvm": "pyod.models.ocsvm:OCSVM",
}.items():
    DETECTORS.add(_name, _path, f"PyOD {_path.rsplit(':', 1)[1]}")
DETECTORS.add(
    "autoencoder",
    "clad.detectors.torch_ae:AutoEncoder",
    "dense PyTorch autoencoder scored by reconstruction error",
)
DETECTORS.add("vae", "clad.detectors.torch_ae:VAE", "small PyTorch variational autoencoder")
DETECTORS.add(
    "lstm_autoencoder",
    "clad.detectors.torch_seq:LSTMAutoEncoder",
    "LSTM sequence autoencoder over windows",
)
DETECTORS.add(
    "gru_autoencoder",
    "clad.detectors.torch_seq:GRUAutoEncoder",
    "GRU sequence autoencoder over windows",
)
DETECTORS.add(
    "random_scores",
    "clad.detectors.baselines:RandomScores",
    "baseline: seeded uniform scores (chance as a run, with a spread over seeds)",
)
DETECTORS.add(
    "sensor_range",
    "clad.detectors.baselines:SensorRange",
    "baseline: values outside their channel's training range (Sarfraz et al. 2024)",
)
DETECTORS.add(
    "window_l2_norm",
    "clad.detectors.baselines:WindowL2Norm",
    "baseline: L2 norm of the window scaled to the training range (Sarfraz et al. 2024)",
)
DETECTORS.add(
    "nearest_normal_distance",
    "clad.detectors.baselines:NearestNormalDistance",
    "baseline: distance to the nearest training window (Sarfraz et al. 2024)",
)
DETECTORS.add(
    "pca_reconstruction",
    "clad.detectors.baselines:PCAReconstruction",
    "baseline: PCA reconstruction error of the window (Sarfraz et al. 2024)",
)
DETECTORS.add(
    "hotelling_t2",
    "clad.detectors.control_charts:HotellingT2",
    "Hotelling's T² control chart; pca=true: the PCA-based T² + Q chart (any / all rule)",
)
DETECTORS.add(
    "windowed_gaussian",
    "clad.detectors.windowed_gaussian:WindowedGaussian",
    "NAB's windowed Gaussian: tail probability under a sliding window of the values before (learns as it scores)",
)
DETECTORS.add(
    "postprocessed",
    "clad.detectors.postprocess:Postprocessed",
    "a detector whose scores are smoothed in row order (rolling median / mean / max over k rows)",
)
DETECTORS.add(
    "half_space_trees",
    "clad.detectors.incremental:half_space_trees",
    "river HalfSpaceTrees (incremental)",
)
DETECTORS.add(
    "river_one_class_svm",
    "clad.detectors.incremental:river_one_class_svm",
    "river online OneClassSVM",
)


def make_detector(name: str, params: dict | None = None, random_state: int | None = None):
    """Build the detector registered as ``name`` (or at import path ``name``) wrapped by
    :func:`as_detector`; ``random_state`` fills the estimator's ``random_state`` if it has one
    and ``params`` did not set it.

    >>> det = make_detector("iforest", {"n_estimators": 10}, random_state=3)
    >>> det.estimator.random_state, det.estimator.n_estimators
    (3, 10)
    """
    det = as_detector(DETECTORS.build(name, params))
    if random_state is not None:
        set_random_state(det, random_state)
    return det
