"""The peak memory of one run, measured while it computes.

:func:`peak_rss` measures how far the process's resident set size (RSS) rose above its value at
the start of a block: the kernel's high-water mark of the RSS (``VmHWM`` in ``/proc/self/status``),
reset to the current RSS when the block starts (writing ``5`` to ``/proc/self/clear_refs``, Linux
4.0 and later), minus the RSS at the start; None where that file cannot be written (not Linux).
Why not :mod:`tracemalloc`, and the measure's limits: ``docs/guides/references.md`` (cost).

>>> import numpy as np
>>> with peak_rss() as peak:
...     a = np.ones(10_000_000)  # 80 MB, written: beyond malloc's largest mmap threshold, so new pages
...     del a
>>> peak.bytes is None or 78_000_000 <= peak.bytes < 90_000_000
True
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

__all__ = ["PeakMemory", "peak_rss"]

_STATUS = "/proc/self/status"
_CLEAR = "/proc/self/clear_refs"


@dataclass
class PeakMemory:
    """The result of :func:`peak_rss`: ``bytes`` (None until the block ends, or if not measurable)."""

    bytes: int | None = None


def _status(*keys: str) -> dict[str, int]:
    """``{key: bytes}`` of the kB fields ``keys`` of ``/proc/self/status``."""
    out = {}
    with open(_STATUS, encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in keys:
                out[key] = int(value.split()[0]) * 1024
    return out


@contextmanager
def peak_rss() -> Iterator[PeakMemory]:
    """Measure the peak RSS of the block above the RSS at its start (see the module)."""
    out = PeakMemory()
    try:
        with open(_CLEAR, "w", encoding="ascii") as f:
            f.write("5")  # resets the high-water mark to the current RSS
        base = _status("VmRSS")["VmRSS"]
    except (OSError, KeyError, ValueError):
        base = None
    try:
        yield out
    finally:
        if base is not None:
            try:
                out.bytes = max(0, _status("VmHWM")["VmHWM"] - base)
            except (OSError, KeyError, ValueError):
                out.bytes = None
