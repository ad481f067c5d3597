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

__version__ = "0.1.0"

from . import metrics  # noqa: E402
from .concepts import Concept, ConceptDataset  # noqa: E402
from .datasets import make_synthetic  # noqa: E402
from .detectors import as_detector  # noqa: E402
from .errors import CladError, DataError, DetectorError, ScenarioError, SpecError  # noqa: E402
from .results import RunResult, read_results, write_results  # noqa: E402
from .runner import RunConfig, run_experiment  # noqa: E402
from .scenarios import ConceptAgnostic, ConceptAware, ConceptIncremental  # noqa: E402
from .spec import load_spec  # noqa: E402
from .strategies import Cumulative, Naive, Scored, Strategy  # noqa: E402

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
    "Naive",
    "Cumulative",
    "Scored",
    "Strategy",
]
