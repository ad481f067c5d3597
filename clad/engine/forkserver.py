"""How worker processes start: forked from a server that has imported clad once.

This module imports nothing heavy, so that the command line can start the server before it reads a
spec (:func:`prestart_workers`): the server's imports then overlap with the main process's own.
"""

from __future__ import annotations

__all__ = ["mp_context", "prestart_workers"]

#: what the forkserver imports once, before it forks any worker: clad's run machinery and PyOD's base
#: (PyOD pulls in numba and matplotlib, a second per worker otherwise); a missing one is skipped
_PRELOAD = ("clad.engine.run", "clad.engine.executors", "pyod.models.base")


def mp_context():
    """``forkserver`` where available (each worker is forked from a server that has imported clad
    once, so workers start fast), else ``spawn``; never plain ``fork`` (unsafe with threads)."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(_PRELOAD))
        return ctx
    return multiprocessing.get_context("spawn")


def prestart_workers() -> None:
    """Start the forkserver now, in the background, so that its imports overlap with the caller's
    own work (reading and checking a spec, opening the results folder) and the first worker
    processes start at once. A no-op where workers are spawned, or when it already runs."""
    ctx = mp_context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()
