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

The top level holds what a user types: the functions below, and the class of every scenario and
strategy clad registers (read from :data:`clad.scenarios.SCENARIOS` and
:data:`clad.strategies.STRATEGIES`, so a new built-in one appears here without editing this file).
Everything else is imported from its module (``clad.errors``, ``clad.results``, ``clad.detectors``, ...).
Names are imported when first used, so ``import clad`` and the command line start without loading
scikit-learn, PyOD or torch until a command needs them.
"""

from ._version import __version__ as __version__

#: the public functions and data classes, and the module each is defined in
_FUNCTIONS = {
    "run_spec": "clad.engine.benchmark",
    "run_experiment": "clad.core.experiment",
    "load_results": "clad.results.reading",
    "make_synthetic": "clad.datasets.synthetic",
    "Concept": "clad.core.concepts",
    "ConceptDataset": "clad.core.concepts",
}

#: the registries whose clad classes are public names (scenarios and strategies a user constructs)
_REGISTRIES = {"clad.scenarios": "SCENARIOS", "clad.strategies": "STRATEGIES"}


def _registered_classes() -> dict[str, str]:
    """``{class name: "module:Class"}`` of every class clad registers as a scenario or strategy."""
    import importlib.util

    out = {}
    for package, name in _REGISTRIES.items():
        registry = getattr(importlib.import_module(package), name)
        for entry in registry.names():
            path = registry.path(entry)
            module, _, qualname = path.partition(":")
            if module.startswith("clad.") and qualname[:1].isupper() and "." not in qualname:
                out[qualname] = path
    return out


def __getattr__(name: str):
    """A public name (imported from its module when first asked for), ``__all__``, or a subpackage."""
    import importlib.util

    if name == "__all__":
        return [*_FUNCTIONS, *sorted(_registered_classes())]
    if name in _FUNCTIONS:
        value = getattr(importlib.import_module(_FUNCTIONS[name]), name)
    elif not name.startswith("_") and importlib.util.find_spec(f"clad.{name}") is not None:
        # a subpackage: clad.metrics, clad.errors, ...
        value = importlib.import_module(f"clad.{name}")
    elif not name.startswith("_") and name in (classes := _registered_classes()):
        module, _, qualname = classes[name].partition(":")
        value = getattr(importlib.import_module(module), qualname)
    else:
        raise AttributeError(f"module 'clad' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__getattr__("__all__")))
