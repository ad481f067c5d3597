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

from ._version import __version__

#: every public name and the module it lives in: imported when first used (``clad.run_spec``,
#: ``from clad import Naive``), so ``import clad`` and the command line start without loading
#: scikit-learn, PyOD or torch until a command needs them
_LAZY = {
    "metrics": None,
    **dict.fromkeys(("Concept", "ConceptDataset"), "clad.core.concepts"),
    "run_experiment": "clad.core.experiment",
    **dict.fromkeys(("RunResult", "load_results", "write_results"), "clad.results"),
    "make_synthetic": "clad.datasets",
    **dict.fromkeys(("DetectorAdapter", "ProtocolDetector", "PyODDetector", "SklearnDetector", "as_detector"),
                    "clad.detectors"),
    **dict.fromkeys(("BenchmarkResult", "run_spec"), "clad.engine.benchmark"),
    "RunConfig": "clad.engine.config",
    "load_spec": "clad.engine.spec",
    **dict.fromkeys(("CladError", "DataError", "DetectorError", "ScenarioError", "SpecError"), "clad.errors"),
    **dict.fromkeys(("ConceptAgnostic", "ConceptAware", "ConceptIncremental", "Scenario"), "clad.scenarios"),
    **dict.fromkeys(("AGEM", "DER", "EWC", "BalancedReplay", "Cumulative", "DriftExperts", "Experts", "FineTune",
                     "Incremental", "LwF", "Naive", "Replay", "Scored", "Strategy", "Window"), "clad.strategies"),
    **dict.fromkeys(("AutoEncoder", "VAE", "TorchDetector"), "clad.detectors.torch_ae"),
    **dict.fromkeys(("GRUAutoEncoder", "LSTMAutoEncoder"), "clad.detectors.torch_seq"),
}

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
    "load_results",
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
    """A public name, imported from its module when first asked for."""
    if name in _LAZY:
        import importlib

        module = _LAZY[name]
        value = importlib.import_module(f"clad.{name}") if module is None else getattr(
            importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'clad' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
