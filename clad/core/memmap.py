"""Keeping memory-mapped data on disk: give back the pages of rows already read.

Reading a memory-mapped ``.npy`` file maps its pages into the process, and they count in its
resident memory until the kernel needs them back. A stream read once from start to end would so
look as large in memory as the whole file, although nothing was copied. :func:`release` tells the
kernel that this process no longer needs the pages of a range it has read (``MADV_DONTNEED``): the
data are unchanged, still in the file and the page cache, and are read again if used again.

It acts only on arrays backed by a *shared* file mapping (:class:`numpy.memmap` opened with mode
``r``, ``r+`` or ``w+``, as ``np.load(path, mmap_mode="r")`` and ``open_memmap`` give); for every
other array (and on systems without ``madvise``) it does nothing.

>>> import numpy as np
>>> release(np.zeros((4, 2)))   # an ordinary array: nothing to do
False
"""

from __future__ import annotations

import mmap

import numpy as np

__all__ = ["release", "is_memmap"]

_PAGE = mmap.PAGESIZE
_SHARED_MODES = ("r", "r+", "w+")


def is_memmap(arr) -> bool:
    """Whether ``arr`` is (a view of) a :class:`numpy.memmap` with a live shared mapping."""
    return (
        isinstance(arr, np.memmap)
        and getattr(arr, "_mmap", None) is not None
        and getattr(arr, "mode", None) in _SHARED_MODES
    )


def release(arr) -> bool:
    """Drop this process's resident pages under ``arr`` (a memory-mapped array or a view of one).

    Only whole pages lying inside ``arr``'s bytes are dropped. Returns whether anything was done.
    """
    if not is_memmap(arr) or arr.size == 0 or not hasattr(mmap, "MADV_DONTNEED"):
        return False
    mm = arr._mmap
    try:
        base = np.frombuffer(mm, dtype=np.uint8)
    except (TypeError, ValueError):  # a closed mapping
        return False
    start_addr = base.ctypes.data
    del base
    # the bytes the view spans (strides may be negative or skip rows: take the extent)
    extent = (
        np.lib.array_utils.byte_bounds(arr)
        if hasattr(np.lib, "array_utils")
        else np.byte_bounds(arr)
    )
    lo, hi = extent[0] - start_addr, extent[1] - start_addr
    first = -(-lo // _PAGE) * _PAGE  # round up: never drop a page shared with bytes before the view
    last = (hi // _PAGE) * _PAGE  # round down: nor after it
    if lo < 0 or hi > len(mm) or last <= first:
        return False
    try:
        mm.madvise(mmap.MADV_DONTNEED, first, last - first)
    except (OSError, ValueError):
        return False
    return True
