"""How worker processes start: forked from a server that has imported clad once.

This module imports nothing heavy, so that the command line can start the server before it reads a
spec (:func:`prestart_workers`): the server's imports then overlap with the main process's own.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["mp_context", "prestart_workers", "spec_detectors"]

#: what the forkserver imports once, before it forks any worker: clad's run machinery (with the step
#: cache's groups and the dataset loaders, which a worker's first run imports otherwise) and PyOD's base
#: (PyOD pulls in numba and matplotlib, a second per worker otherwise); a missing one is skipped
_PRELOAD = (
    "clad.engine.run",
    "clad.engine.pool",
    "clad.engine.sharing",
    "clad.datasets",
    "pyod.models.base",
)
#: imported last when the grid's detectors are known: their modules (the same name as
#: clad.engine.worker_imports.VARIABLE, which this module does not import: it imports nothing heavy)
_DETECTOR_IMPORTS = "clad.engine.worker_imports"
_DETECTORS_VARIABLE = "CLAD_WORKER_DETECTORS"


def mp_context():
    """``forkserver`` where available (each worker is forked from a server that has imported clad
    once, so workers start fast), else ``spawn``; never plain ``fork`` (unsafe with threads)."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(_PRELOAD))
        return ctx
    return multiprocessing.get_context("spawn")


def prestart_workers(detectors: Sequence[str] = ()) -> None:
    """Start the forkserver now, in the background, so that its imports overlap with the caller's
    own work (reading and checking a spec, opening the results folder) and the first worker
    processes start at once. ``detectors`` (registered names or import paths) are the grid's: the
    server imports their PyOD and scikit-learn modules too, once for every worker
    (:mod:`clad.engine.worker_imports`). A no-op where workers are spawned, or when it already runs."""
    import json
    import os

    ctx = mp_context()
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    names = sorted({str(d) for d in detectors})
    if not names:
        forkserver.ensure_running()
        return
    ctx.set_forkserver_preload([*_PRELOAD, _DETECTOR_IMPORTS])
    before = os.environ.get(_DETECTORS_VARIABLE)
    os.environ[_DETECTORS_VARIABLE] = json.dumps(names)  # the server inherits it when it starts
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            os.environ.pop(_DETECTORS_VARIABLE, None)
        else:
            os.environ[_DETECTORS_VARIABLE] = before
        ctx.set_forkserver_preload(list(_PRELOAD))


def spec_detectors(path) -> list[str]:
    """The detector names a spec file lists (``detectors = ["hbos", {name = ...}]``), read without
    checking anything (the spec is checked later), so that the server can import their modules while
    the spec is checked; nothing when the file cannot be read.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = os.path.join(d, "s.toml")
    ...     _ = open(f, "w").write('detectors = ["lof", {name = "iforest"}, 3]')
    ...     spec_detectors(f), spec_detectors(os.path.join(d, "missing.toml"))
    (['lof', 'iforest'], [])
    """
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            listed = tomllib.load(f).get("detectors", [])
    except (OSError, ValueError, TypeError):
        return []
    names = (
        [d.get("name") if isinstance(d, dict) else d for d in listed]
        if isinstance(listed, list)
        else []
    )
    return [n for n in names if isinstance(n, str)]
