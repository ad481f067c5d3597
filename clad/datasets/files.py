"""Where data files live, and checking that they are the files the dataset cards describe.

A data file is named by its path *inside* a data directory (``"adbench-classical/32_shuttle.npz"``)
and looked for in ``$CLAD_DATA`` (when set: it overrides a spec's ``data_dir``), then ``data_dir``
(relative to the current directory), then the default cache (``platformdirs.user_cache_dir``:
``$XDG_CACHE_HOME/clad`` or ``~/.cache/clad`` on Linux, ``~/Library/Caches/clad`` on macOS); the
first place holding the file wins. A missing file, and a file whose sha256 is not its card's, is a
:class:`~clad.errors.DataError` (what it says: the datasets guide, ``docs/guides/datasets.md``).
Hashes are computed by :func:`pooch.file_hash` and remembered per process (by path, size and
modification time), so a grid of runs hashes each file once; downloads go through
:func:`pooch.retrieve`.

>>> from pathlib import Path
>>> default_cache_dir().name
'clad'
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path

import platformdirs
import pooch

from ..errors import DataError

__all__ = [
    "default_cache_dir",
    "search_dirs",
    "outside_data_dirs",
    "locate",
    "sha256_of",
    "verify_sha256",
    "download",
    "recording",
]

#: open :func:`recording` blocks of this thread: each gets every file located inside it
_recorders = threading.local()


@contextlib.contextmanager
def recording():
    """Record the data files :func:`locate` finds inside the block: ``{absolute path: sha256}``
    (what a run's identity covers, so that a replaced file makes its runs stale).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = f.write_text("a\\n1\\n")
    >>> with recording() as seen:
    ...     _ = locate(str(f))
    >>> list(seen.values()) == [sha256_of(f)]
    True
    """
    stack = _recorders.__dict__.setdefault("stack", [])
    seen: dict[str, str] = {}
    stack.append(seen)
    try:
        yield seen
    finally:
        stack.remove(seen)


def _record(path: Path) -> Path:
    for seen in getattr(_recorders, "stack", ()):
        seen[str(path.resolve())] = sha256_of(path)
    return path


log = logging.getLogger(__name__)

ENV_VAR = "CLAD_DATA"

_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def default_cache_dir() -> Path:
    """The user cache folder for clad: ``platformdirs.user_cache_dir("clad")`` (on Linux
    ``$XDG_CACHE_HOME/clad``, or ``~/.cache/clad`` when that variable is not set)."""
    return Path(platformdirs.user_cache_dir("clad", appauthor=False))


def search_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The data directories searched, in order: ``$CLAD_DATA``, ``data_dir``, the default cache."""
    dirs: list[Path] = []
    env = os.environ.get(ENV_VAR)
    if env:
        dirs.append(Path(env).expanduser())
    if data_dir is not None:
        if not isinstance(data_dir, (str, os.PathLike)) or not str(data_dir):
            raise DataError(f"data_dir={data_dir!r}; expected a folder path (a string)")
        dirs.append(Path(data_dir).expanduser())
    dirs.append(default_cache_dir())
    out: list[Path] = []
    for d in dirs:
        if d.absolute() not in [o.absolute() for o in out]:
            out.append(d)
    return out


def outside_data_dirs(
    relpath: str | os.PathLike, data_dir: str | os.PathLike | None = None, also: tuple = ()
) -> str | None:
    """Why a data file a spec names lies outside every data directory (None when it does not): a
    relative path may not climb out of its data directory (``../``), and an absolute one must lie
    inside a data directory (:func:`search_dirs`), the current directory or a folder of ``also``
    (the spec file's). Links are followed.

    >>> outside_data_dirs("adbench-classical/32_shuttle.npz") is None
    True
    >>> outside_data_dirs("../../../etc/passwd")
    "'../../../etc/passwd' climbs out of its data directory ('..'); name a file inside a data directory"
    """
    if not isinstance(relpath, (str, os.PathLike)) or not str(relpath):
        return None  # the loader's own check names a bad value
    path = Path(os.path.expanduser(str(relpath)))
    if not path.is_absolute():
        if ".." in Path(os.path.normpath(path)).parts:
            return f"{str(relpath)!r} climbs out of its data directory ('..'); name a file inside a data directory"
        return None
    try:
        dirs = search_dirs(data_dir) + [Path.cwd()] + [Path(a) for a in also]
    except DataError:
        return None
    real = Path(os.path.realpath(path))
    for d in dirs:
        if real.is_relative_to(Path(os.path.realpath(d.expanduser()))):
            return None
    shown = ", ".join(str(d) for d in dirs)
    return (
        f"{str(relpath)!r} lies outside every data directory ({shown}); put the file in a data directory "
        f"and name it relative to it, or set data_dir (or ${ENV_VAR}) to the folder holding it"
    )


def _card_entry(relpath: str) -> tuple[str | None, str | None, int | None]:
    from .cards import find_file

    entry = find_file(relpath)
    if entry is None:
        return None, None, None
    return entry.get("sha256"), entry.get("url"), entry.get("size")


def locate(
    relpath: str,
    data_dir: str | os.PathLike | None = None,
    *,
    verify: bool = True,
    sha256: str | None = None,
) -> Path:
    """The path of data file ``relpath`` (see the module docstring for where it is looked for).

    An absolute ``relpath`` is used as it is; a file no card lists is also looked for relative to
    the current directory, last. With ``verify``, a file a dataset card lists is checked against the
    card's sha256 (or against ``sha256`` when given).
    """
    if not isinstance(relpath, (str, os.PathLike)) or not str(relpath):
        raise DataError(
            f"data file name {relpath!r}; expected a path such as 'adbench-classical/32_shuttle.npz'"
        )
    relpath = str(relpath)
    sha, url, _ = _card_entry(relpath)
    if sha256 is not None:
        sha = sha256
    if Path(relpath).is_absolute():
        candidates, bases = [Path(relpath)], [None]
    else:
        bases = list(search_dirs(data_dir))
        candidates = [d / relpath for d in bases]
        if sha is None:  # a user's own file may also be named relative to the current directory
            candidates.append(Path(relpath))
            bases.append(Path.cwd())
    for path, base in zip(candidates, bases):
        if path.is_file():
            real = Path(os.path.realpath(path))
            if base is not None and not real.is_relative_to(Path(os.path.realpath(base))):
                raise DataError(
                    f"data file {relpath!r} is a symbolic link leading out of its data directory "
                    f"{str(base)!r} (to {str(real)!r}); copy the file into the data directory or name it "
                    "by its own path"
                )
            if verify and sha:
                verify_sha256(path, sha, source=url)
            return _record(path)
        if os.path.lexists(path):
            what = (
                "a folder" if path.is_dir() else "not a regular file (a pipe, a device or a socket)"
            )
            raise DataError(
                f"data file {relpath!r} at {str(path)!r} is {what}; expected a data file"
            )
    looked = "\n".join(
        f"  {p}"
        + ("" if base is None or base.is_dir() else f"  (the folder {str(base)!r} does not exist)")
        for p, base in zip(candidates, bases)
    )
    hint = ""
    if data_dir is not None and not Path(data_dir).expanduser().is_dir():
        what = "is not a folder" if Path(data_dir).expanduser().exists() else "does not exist"
        hint += f"\ndata_dir {str(data_dir)!r} {what}"
    if sha or url:
        hint += f"\nexpected sha256 {sha}; public source: {url}"
    else:
        hint += "\n(no dataset card lists this file; check the name)"
    hint = _near_names(relpath, candidates) + hint
    raise DataError(
        f"data file {relpath!r} not found; looked in:\n{looked}{hint}\n"
        f"Put the file there, set {ENV_VAR} to the folder holding it, or pass data_dir."
    )


def _near_names(relpath: str, candidates) -> str:
    """``" (did you mean 'x'?)"`` for the closest file name beside where ``relpath`` was looked for."""
    import difflib

    names = set()
    for path in candidates:
        try:
            if path.parent.is_dir():
                names.update(p.name for p in list(path.parent.iterdir())[:10_000])
        except OSError:
            continue
    close = difflib.get_close_matches(Path(relpath).name, sorted(names), n=1, cutoff=0.6)
    return f"\n(did you mean {close[0]!r}?)" if close else ""


def sha256_of(path: str | os.PathLike) -> str:
    """The sha256 hex digest of a file, remembered per process by (path, size, mtime)."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _hash_lock:
        if key in _hash_cache:
            return _hash_cache[key]
    digest = pooch.file_hash(str(path), alg="sha256")
    with _hash_lock:
        _hash_cache[key] = digest
    return digest


def verify_sha256(path: str | os.PathLike, expected: str, source: str | None = None) -> None:
    """Raise a :class:`DataError` unless the file's sha256 is ``expected``."""
    actual = sha256_of(path)
    if actual.lower() != str(expected).lower():
        where = f"; the original is at {source}" if source else ""
        raise DataError(
            f"checksum mismatch for {str(path)!r}: sha256 is {actual}, expected {expected}. "
            f"The file is corrupted or is not the published version; replace it{where}"
        )


def download(
    relpath: str, data_dir: str | os.PathLike | None = None, timeout: float = 60.0
) -> Path:
    """Download a file a dataset card lists from its public address into a data directory.

    The file goes to ``data_dir`` (default: the default cache) under ``relpath``, through
    :func:`pooch.retrieve`: it is written to a temporary name, checked against the card's sha256
    and only then moved into place (a file already there with the right sha256 is kept). Needs
    network access; nothing else in clad downloads.
    """
    sha, url, _ = _card_entry(relpath)
    if not url:
        raise DataError(
            f"no dataset card lists {relpath!r}, so there is no address to download it from"
        )
    target = Path(data_dir).expanduser() if data_dir is not None else default_cache_dir()
    dest = target / relpath
    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{sha}" if sha else None,
            fname=dest.name,
            path=dest.parent,
            downloader=pooch.HTTPDownloader(timeout=timeout, progressbar=False),
        )
    except ValueError as exc:  # pooch: the downloaded file's hash is not the known one
        raise DataError(
            f"checksum mismatch downloading {url}: expected sha256 {sha} ({exc}); the file was not kept"
        ) from None
    except OSError as exc:  # network and file-system errors (requests' errors are OSErrors)
        raise DataError(f"could not download {url} ({exc})") from None
    log.info("downloaded %s to %s", url, dest)
    return dest
