"""One owner per results folder: an OS file lock held by the one process that writes into it.

``clad run`` (and ``clad pull``) holds an exclusive lock on ``DIR/.clad.lock`` while it writes: a
second process on the same folder is refused, naming the process that writes there (its runs are
not lost: run the command again once that process has ended, and it resumes). The lock is
``fcntl.flock``: the operating system drops it when its process ends, however it ends. The process
removes the file as it lets go of the lock, so a folder no process writes holds no ``.clad.lock``;
a process that opened the file just before it was removed sees that its file is no longer the
folder's and opens the new one. A process killed with SIGKILL leaves the file behind, but not the
lock: the next process takes it and removes it when it ends.

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

from typing import TYPE_CHECKING, Any

from ..errors import CladError
from .config import canonical

if TYPE_CHECKING:
    from .spec import Spec

__all__ = ["FolderLock", "FolderInUse", "LOCK_NAME", "check_owner", "spec_differences"]

LOCK_NAME = ".clad.lock"


class FolderInUse(CladError):
    """The results folder is being written by another process, or belongs to another spec."""


class FolderLock:
    """The lock of results folder ``out`` for a process running spec ``spec_name``; use as a
    context manager, or :meth:`acquire` and :meth:`release`."""

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
            link = os.path.islink(self.path) or exc.errno == errno.ELOOP
            if not (link or os.path.isdir(self.path) or exc.errno == errno.EISDIR):
                raise
            self._not_plain("a symbolic link" if link else "a folder")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            self._not_plain("not a plain file")
        return fd

    def _not_plain(self, what: str) -> None:
        raise FolderInUse(
            f"{str(self.path)!r} is {what}; clad's lock file must be a plain file (nothing is "
            "written through a link): remove it or choose another --out folder"
        ) from None

    def _is_current(self) -> bool:
        """Whether the open file is still the folder's lock file (not removed by a process ending)."""
        try:
            return os.fstat(self._fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def acquire(self) -> "FolderLock":
        """Take the folder: :class:`FolderInUse`, naming the process, when another one writes it."""
        import fcntl

        while True:
            if self._fd is None:
                self._fd = self._open()
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                h = self.holder()
                who = (
                    f"process {h.get('pid')} on {h.get('host')} (spec {h.get('spec')!r})"
                    if h
                    else "another process"
                )
                os.close(self._fd)
                self._fd = None
                raise FolderInUse(
                    f"{str(self.path.parent)!r} is being written by {who}; one process writes a "
                    "results folder at a time: wait for it to end and run this command again (what "
                    "it finished is kept, the rest is resumed), or use another --out folder"
                ) from None
            if self._is_current():
                break
            # the file was removed by a process that let go of it: take the new one
            os.close(self._fd)
            self._fd = None
        os.ftruncate(self._fd, 0)
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "spec": self.spec_name}
        os.pwrite(self._fd, json.dumps(holder).encode(), 0)
        return self

    def release(self) -> None:
        """Let go of the lock, removing the file."""
        if self._fd is None:
            return
        try:
            if self._is_current():
                self.path.unlink()
        except OSError:
            pass  # the next holder removes it
        os.close(self._fd)  # drops the lock
        self._fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire() if self._fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()


def check_owner(store, spec: Spec, out: Path, add: bool) -> None:
    """Refuse to write ``spec``'s runs into a folder holding another spec's runs, unless ``add``."""
    recorded = store.get_meta("spec")
    known = [canonical(s) for s in [recorded, *store.get_meta("specs_added", [])] if s is not None]
    if recorded is None or not store.count() or canonical(spec.raw) in known:
        return
    if add:
        store.set_meta("specs_added", [*store.get_meta("specs_added", []), recorded])
        return
    name = recorded.get("name", "?") if isinstance(recorded, dict) else "?"
    differs = spec_differences(recorded, spec.raw)
    shown = "; ".join(differs[:5]) + (f"; and {len(differs) - 5} more" if len(differs) > 5 else "")
    raise FolderInUse(
        f"{str(out)!r} holds the results of another spec ({name!r}); this is spec {spec.name!r}"
        f"{f' ({spec.source})' if spec.source else ''}, which differs in: {shown}; use another "
        "--out folder, --fresh to replace those results, or --add to add this spec's runs to them"
    )


def spec_differences(old: Any, new: Any, where: str = "") -> list[str]:
    """Where spec ``new`` differs from ``old`` (both as parsed TOML), as ``key: old -> new`` lines.

    >>> spec_differences({"seeds": 2, "detectors": [{"name": "iforest", "n_estimators": 10}]},
    ...                  {"seeds": 2, "detectors": [{"name": "iforest", "n_estimators": 20}]})
    ['detectors[0].n_estimators: 10 -> 20']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            key = f"{where}.{k}" if where else str(k)
            if k not in new:
                out.append(f"{key}: {_short(old[k])} -> (removed)")
            elif k not in old:
                out.append(f"{key}: (absent) -> {_short(new[k])}")
            else:
                out += spec_differences(old[k], new[k], key)
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            d
            for i, (a, b) in enumerate(zip(old, new))
            for d in spec_differences(a, b, f"{where}[{i}]")
        ]
    if canonical(old) == canonical(new):
        return []
    return [f"{where or 'the spec'}: {_short(old)} -> {_short(new)}"]


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
