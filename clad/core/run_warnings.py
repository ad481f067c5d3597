"""Warnings raised while a run computes become part of its record.

:func:`recording` catches every warning raised in its block (a library's, such as PyOD ECOD's
``RuntimeWarning``, and clad's own :class:`~clad.errors.RunWarning` about degenerate runs) and,
when the block ends, fills the list it yielded with one line per distinct warning
(``"Category: message"``, ``" (N times)"`` when repeated). Those lines are the run's
``RunResult.warnings``: stored in results.json and the database, counted on the console, listed in
the report, never printed through a progress bar. Deprecation warnings, meant for developers, are
left out.

>>> import warnings
>>> with recording() as lines:
...     for _ in range(3):
...         warnings.warn("overflow encountered in cast", RuntimeWarning)
>>> lines
['RuntimeWarning: overflow encountered in cast (3 times)']
"""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from typing import Iterator

__all__ = ["recording", "merge", "routing"]

#: per thread: the list that :func:`recording` collects this thread's warnings in, while
#: :func:`routing` is active
_THREAD = threading.local()
_ROUTING = {"depth": 0}


@contextmanager
def routing() -> Iterator[None]:
    """While active, :func:`recording` in any thread records the warnings of that thread only
    (``warnings.catch_warnings`` is process-wide: runs computed in threads of one process, as
    replicas are, would otherwise record each other's warnings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        original = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            caught = getattr(_THREAD, "caught", None)
            if caught is None:
                return original(message, category, filename, lineno, file, line)
            caught.append(warnings.WarningMessage(message, category, filename, lineno, file, line))

        warnings.showwarning = show
        _ROUTING["depth"] += 1
        try:
            yield
        finally:
            _ROUTING["depth"] -= 1


@contextmanager
def recording() -> Iterator[list[str]]:
    """Record the warnings raised in the block (see the module docstring)."""
    lines: list[str] = []
    if _ROUTING["depth"]:  # this thread's warnings only (see routing)
        before = getattr(_THREAD, "caught", None)
        caught: list = []
        _THREAD.caught = caught
        try:
            yield lines
        finally:
            _THREAD.caught = before
            lines.extend(_summary(caught))
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        try:
            yield lines
        finally:
            lines.extend(_summary(caught))


def _summary(caught) -> list[str]:
    counts: dict[str, int] = {}
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        counts[text] = counts.get(text, 0) + 1
    return [t if n == 1 else f"{t} ({n} times)" for t, n in counts.items()]


def merge(*groups) -> tuple[str, ...]:
    """The lines of several recordings, each once, in order."""
    return tuple(dict.fromkeys(line for group in groups for line in group))
