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

import warnings
from contextlib import contextmanager
from typing import Iterator

__all__ = ["recording", "merge"]


@contextmanager
def recording() -> Iterator[list[str]]:
    """Record the warnings raised in the block (see the module docstring)."""
    lines: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        try:
            yield lines
        finally:
            counts: dict[str, int] = {}
            for w in caught:
                text = f"{w.category.__name__}: {w.message}"
                counts[text] = counts.get(text, 0) + 1
            lines.extend(t if n == 1 else f"{t} ({n} times)" for t, n in counts.items())


def merge(*groups) -> tuple[str, ...]:
    """The lines of several recordings, each once, in order."""
    return tuple(dict.fromkeys(line for group in groups for line in group))
