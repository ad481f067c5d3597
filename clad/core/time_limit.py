"""A time limit around a block of code: :func:`time_limit` raises :class:`RunTimeout` inside it
after the given seconds (``SIGALRM``, so only in the main thread on POSIX; elsewhere the block runs
unbounded and :func:`time_limit_usable` says so).

>>> import time
>>> try:
...     with time_limit(0.05):
...         time.sleep(1)
... except RunTimeout as exc:
...     print(exc)
timeout: the run took longer than 0.05 s
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from ..errors import CladValueError

__all__ = ["RunTimeout", "time_limit", "time_limit_usable", "check_timeout", "MAX_TIMEOUT"]

#: the longest time limit per run (seconds, 30 days; beyond it timers overflow): leave the
#: timeout out for no limit
MAX_TIMEOUT = 30 * 24 * 3600.0


class RunTimeout(BaseException):
    """Raised inside a run that exceeded its time limit (a BaseException, so that a detector's
    ``except Exception`` cannot swallow it)."""


def check_timeout(timeout, who: str = "timeout") -> float | None:
    """``timeout`` as seconds (None: no limit), or a :class:`~clad.errors.CladValueError`."""
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        raise CladValueError(
            f"{who}={timeout!r}; expected a positive number of seconds up to {MAX_TIMEOUT:,.0f} "
            "(30 days), or None for no limit"
        )
    return float(timeout)


def time_limit_usable() -> bool:
    """Whether :func:`time_limit` can interrupt code here (POSIX, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None):
    """Raise :class:`RunTimeout` in the block after ``seconds`` (None: no limit)."""
    if seconds is None or not time_limit_usable():
        yield
        return

    def _raise(*_):
        raise RunTimeout(f"timeout: the run took longer than {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
