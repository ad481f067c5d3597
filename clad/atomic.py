"""Atomic file output: a reader sees the old file or the whole new one, never half of one.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> with atomic_output(target) as tmp:
...     _ = tmp.write_text("done")
>>> target.read_text()
'done'
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_output"]


@contextmanager
def atomic_output(path: str | os.PathLike, mode: int = 0o644) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; when the block ends without an exception the
    temporary file is flushed to disk and renamed over ``path``, otherwise it is removed.

    The file gets permissions ``mode`` (results and reports are meant to be read by others).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, mode)
        yield Path(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
