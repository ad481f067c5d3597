"""The detector modules a grid names, imported once by the worker server before it forks any worker.

:mod:`clad.engine.forkserver` starts the server that forks the worker processes of ``--jobs N``; it
imports clad's run machinery once, and this module last: the modules of the detectors the grid
names, so that every worker starts with them instead of importing them itself (a PyOD module can
pull in matplotlib and numba: half a second in each worker). The names come in the environment
variable :data:`VARIABLE` (a JSON list of detector names, registered or import paths), set while the
server starts.

Only modules of packages that are safe to import before a fork are imported here (:data:`PACKAGES`:
PyOD and scikit-learn); a plug-in's own module, which may start threads or a GPU context when
imported, is imported in each worker, as before. A module that cannot be imported is left to the
run, which says why.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Iterable

__all__ = ["VARIABLE", "PACKAGES", "detector_modules", "import_detector_modules"]

#: the environment variable holding the grid's detector names while the worker server starts
VARIABLE = "CLAD_WORKER_DETECTORS"

#: the packages whose modules the server imports before it forks (they start no thread, open no device)
PACKAGES = ("pyod", "sklearn")


def detector_modules(names: Iterable[str]) -> list[str]:
    """The modules of PyOD and scikit-learn that the detectors ``names`` (registered names or
    import paths) live in, each once.

    >>> detector_modules(["iforest", "pyod.models.ecod:ECOD", "tests.plugins:Mean", "no such name"])
    ['sklearn.ensemble', 'pyod.models.ecod']
    """
    from ..detectors import DETECTORS

    modules: list[str] = []
    for name in names:
        path = DETECTORS.path(name) if name in DETECTORS else name
        module = path.partition(":")[0] if isinstance(path, str) and ":" in path else None
        if module and module.split(".")[0] in PACKAGES and module not in modules:
            modules.append(module)
    return modules


def import_detector_modules(names: Iterable[str]) -> list[str]:
    """Import the modules :func:`detector_modules` gives for ``names``; the modules imported."""
    done = []
    for module in detector_modules(names):
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - the run that builds the detector says what is wrong
            continue
        done.append(module)
    return done


def _from_environment() -> None:
    try:
        names = json.loads(os.environ.pop(VARIABLE, "") or "[]")
    except ValueError:
        return
    if isinstance(names, list):
        import_detector_modules(n for n in names if isinstance(n, str))


_from_environment()
