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
from .detectors import as_detector
from .engine.benchmark import BenchmarkResult, run_spec
from .engine.config import RunConfig
from .engine.spec import load_spec
from .errors import CladError, DataError, DetectorError, ScenarioError, SpecError
from .scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental
from .strategies import Cumulative, Naive, Scored, Strategy

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
    "ConceptAware",
    "ConceptIncremental",
    "ConceptAgnostic",
    "load_spec",
    "run_spec",
    "BenchmarkResult",
    "Naive",
    "Cumulative",
    "Scored",
    "Strategy",
]
