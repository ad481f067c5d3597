"""clad: a benchmark suite for continual (lifelong) anomaly detection.

A stream of *concepts* is fed through a *scenario* to a *strategy* that manages a pluggable
*detector*; after every training step every test concept is scored once into the matrix R
(rows = training steps, columns = test concepts), and continual metrics are computed from R.

>>> import clad
>>> from sklearn.ensemble import IsolationForest
>>> ds = clad.make_synthetic(n_concepts=3, random_state=0)
>>> result = clad.run_experiment(ds, clad.ConceptIncremental(), clad.Cumulative(IsolationForest()), seed=0)
>>> result.R["roc_auc"].shape
(3, 3)
"""

from . import metrics
from ._version import __version__
from .core.concepts import Concept, ConceptDataset
from .core.experiment import run_experiment
from .core.results import RunResult, read_results, write_results
from .datasets import make_synthetic
from .detectors import DetectorAdapter, ProtocolDetector, PyODDetector, SklearnDetector, as_detector
from .engine.benchmark import BenchmarkResult, run_spec
from .engine.config import RunConfig
from .engine.spec import load_spec
from .errors import CladError, DataError, DetectorError, ScenarioError, SpecError
from .scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental, Scenario
from .strategies import (AGEM, DER, EWC, BalancedReplay, Cumulative, DriftExperts, Experts, FineTune, Incremental, LwF,
                         Naive, Replay, Scored, Strategy, Window)

#: names imported on first use because their module imports torch (``import clad`` does not)
_LAZY = {"AutoEncoder": "clad.detectors.torch_ae", "VAE": "clad.detectors.torch_ae",
         "TorchDetector": "clad.detectors.torch_ae", "GRUAutoEncoder": "clad.detectors.torch_seq",
         "LSTMAutoEncoder": "clad.detectors.torch_seq"}

__all__ = [
    "__version__",
    "metrics",
    "Concept",
    "ConceptDataset",
    "make_synthetic",
    "as_detector",
    "CladError",
    "DataError",
    "DetectorError",
    "ScenarioError",
    "SpecError",
    "RunResult",
    "read_results",
    "write_results",
    "RunConfig",
    "run_experiment",
    "load_spec",
    # scenarios
    "Scenario",
    "ConceptAware",
    "ConceptIncremental",
    "ConceptAgnostic",
    "run_spec",
    "BenchmarkResult",
    # strategies
    "Strategy",
    "Scored",
    "Naive",
    "Cumulative",
    "FineTune",
    "Replay",
    "BalancedReplay",
    "Window",
    "Experts",
    "EWC",
    "LwF",
    "AGEM",
    "DER",
    "DriftExperts",
    "Incremental",
    # detectors
    "DetectorAdapter",
    "ProtocolDetector",
    "PyODDetector",
    "SklearnDetector",
    "TorchDetector",
    "AutoEncoder",
    "VAE",
    "GRUAutoEncoder",
    "LSTMAutoEncoder",
]


def __getattr__(name: str):
    """The PyTorch detectors, imported when first asked for (``clad.AutoEncoder``)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'clad' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
