"""One owner per results folder: an OS file lock held by the processes that write into it.

``clad run`` holds a *shared* lock on ``DIR/.clad.lock`` while it writes (so two processes of
the same spec share the grid, through the run claims of :mod:`clad.results.store`), and takes it
*exclusively* to delete the folder's database (``--fresh``): a ``--fresh`` while another process
writes there is refused, naming that process. The lock is ``fcntl.flock``: the operating system
drops it when its process ends, however it ends. The last process to let go of the lock removes the
file (it takes the lock exclusively for a moment and unlinks it), so a folder no process writes holds
no ``.clad.lock``; a process that opened the file just before it was removed sees that its file is no
longer the folder's and opens the new one. A process killed with SIGKILL leaves the file behind, but
not the lock: the next process takes it and removes it when it ends.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> with FolderLock(d, "a") as lock:
...     lock.holder()["spec"]
'a'
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
from pathlib import Path

from ..errors import CladError

__all__ = ["FolderLock", "FolderInUse", "LOCK_NAME"]

LOCK_NAME = ".clad.lock"


class FolderInUse(CladError):
    """The results folder is being written by another process, or belongs to another spec."""


class FolderLock:
    """The lock of results folder ``out`` for a process running spec ``spec_name``; use as a
    context manager (shared), or :meth:`acquire` with ``exclusive=True`` first."""

    def __init__(self, out: str | os.PathLike, spec_name: str):
        self.path = Path(out) / LOCK_NAME
        self.spec_name = spec_name
        self._fd: int | None = None

    def holder(self) -> dict:
        """Who took the lock last: ``{"pid", "host", "spec"}`` (empty if unknown). Read without
        following a symbolic link, and at most 4 KiB of it."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return {}
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            found = json.loads(os.read(fd, 4096).decode("utf-8") or "{}")
            return found if isinstance(found, dict) else {}
        except (OSError, ValueError):
            return {}
        finally:
            os.close(fd)

    def _open(self) -> int:
        """Open (or create) the lock file without following a symbolic link: a link, a folder or
        anything but a plain file at the lock's path is refused, and nothing is written through it."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            if os.path.islink(self.path) or exc.errno == errno.ELOOP:
                raise FolderInUse(
                    f"{str(self.path)!r} is a symbolic link; clad's lock file must be a plain file "
                    "(nothing is written through a link): remove the link or choose another --out "
                    "folder"
                ) from None
            if os.path.isdir(self.path) or exc.errno == errno.EISDIR:
                raise FolderInUse(
                    f"{str(self.path)!r} is a folder; clad's lock file must be a plain file: remove "
                    "it or choose another --out folder"
                ) from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise FolderInUse(
                f"{str(self.path)!r} is not a plain file; clad's lock file must be one: remove it "
                "or choose another --out folder"
            )
        return fd

    def _is_current(self) -> bool:
        """Whether the open file is still the folder's lock file (not removed by a process ending)."""
        try:
            return os.fstat(self._fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def acquire(self, exclusive: bool = False) -> "FolderLock":
        import fcntl

        while True:
            if self._fd is None:
                self._fd = self._open()
            try:
                fcntl.flock(
                    self._fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
                )
            except BlockingIOError:
                h = self.holder()
                who = (
                    f"process {h.get('pid')} on {h.get('host')} (spec {h.get('spec')!r})"
                    if h
                    else "another process"
                )
                self.release(remove=False)
                raise FolderInUse(
                    f"{str(self.path.parent)!r} is being written by {who}; --fresh would delete "
                    "its results: wait for it to end, or use another --out folder"
                ) from None
            if self._is_current():
                break
            os.close(
                self._fd
            )  # the file was removed by a process that let go of it: take the new one
            self._fd = None
        os.ftruncate(self._fd, 0)
        os.pwrite(
            self._fd,
            json.dumps(
                {"pid": os.getpid(), "host": socket.gethostname(), "spec": self.spec_name}
            ).encode(),
            0,
        )
        return self

    def share(self) -> None:
        """Turn an exclusive lock into a shared one (after ``--fresh`` has deleted the database)."""
        import fcntl

        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self, remove: bool = True) -> None:
        """Let go of the lock; the last holder (``remove``) removes the file."""
        if self._fd is None:
            return
        if remove:
            import fcntl

            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody else holds it
                if self._is_current():
                    self.path.unlink()
            except (BlockingIOError, OSError):
                pass  # another process still holds it: it removes the file when it ends
        os.close(self._fd)  # drops the lock
        self._fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire() if self._fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()
