"""The peak memory of one run, measured while it computes.

:func:`peak_rss` measures how far the process's resident set size (RSS) rose above its value at
the start of a block: the kernel's high-water mark of the RSS (``VmHWM`` in ``/proc/self/status``),
reset to the current RSS when the block starts (writing ``5`` to ``/proc/self/clear_refs``, Linux
4.0 and later), minus the RSS at the start. So the measure is *per run*, not per worker lifetime,
and covers every allocation of the run: numpy arrays, a library's C buffers, torch tensors.

Why not :mod:`tracemalloc` (which sees numpy's arrays too): tracing every allocation made
clad's runs 4 to 10 times slower (an IsolationForest fit 10 times, a numba detector's first call
hundreds of times), and the fit and score seconds recorded beside the memory would then measure
the tracing. The RSS costs nothing while the run computes. Its limits, stated where the value is
shown: memory an earlier run in the same process freed but the allocator kept is reused without
raising the RSS (the measure can be lower than the run's allocations, never higher than what it
made the process take), and two runs computed at once in one process (Dask threads) share one
RSS. Where ``/proc/self/clear_refs`` cannot be written (not Linux) nothing is measured (None).

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
