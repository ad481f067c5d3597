"""Reading a results folder: ``DIR/results.sqlite`` when the results store is available, else
``DIR/results.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..core.results import RunResult, read_results
from ..errors import DataError

__all__ = ["load_results", "load_spec_record", "load_spec_text"]

try:  # the SQLite results store is optional
    from ..engine import store as _store
except ImportError:  # pragma: no cover - depends on the installed version of clad
    _store = None


def _with_store(path: Path, read):
    store = _store.ResultStore(path)
    try:
        return read(store)
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


def _from_sqlite(path: Path) -> list[RunResult]:
    return list(_with_store(path, lambda s: s.load_results()))


def _spec_from_sqlite(path: Path) -> dict | None:
    def read(store):
        for getter, args in (("get_meta", ("spec",)), ("load_spec", ())):
            fn = getattr(store, getter, None)
            if callable(fn):
                return fn(*args)
        return None

    spec = _with_store(path, read)
    return dict(spec) if isinstance(spec, dict) and spec else None


def load_results(directory: str | os.PathLike) -> list[RunResult]:
    """Every run recorded in a results folder (failed runs included, see ``RunResult.ok``).

    ``directory`` is the folder given to ``clad run --out``. ``results.sqlite`` is preferred when
    ``clad.engine.store`` exists and the file is there; otherwise ``results.json`` is read. A path to one
    of these files is accepted too.

    >>> import tempfile, clad
    >>> d = tempfile.mkdtemp()
    >>> clad.write_results(f"{d}/results.json", [clad.RunResult("toy", "aware", "naive", "iforest", 0)])
    >>> [r.dataset for r in load_results(d)]
    ['toy']
    """
    path = Path(directory)
    if path.is_file():
        if path.suffix == ".sqlite" and _store is not None:
            return _from_sqlite(path)
        return read_results(path)
    if not path.is_dir():
        raise DataError(f"results folder {str(path)!r} does not exist; give the folder passed to `clad run --out`")
    sqlite = path / "results.sqlite"
    if _store is not None and sqlite.is_file():
        return _from_sqlite(sqlite)
    js = path / "results.json"
    if js.is_file():
        return read_results(js)
    raise DataError(f"results folder {str(path)!r} holds neither results.sqlite nor results.json")


def load_spec_record(directory: str | os.PathLike) -> dict | None:
    """The spec recorded with the results (from the same file :func:`load_results` reads), or None."""
    path = Path(directory)
    if path.is_file():
        if path.suffix == ".sqlite" and _store is not None:
            return _spec_from_sqlite(path)
        js = path
    else:
        if _store is not None and (path / "results.sqlite").is_file():
            return _spec_from_sqlite(path / "results.sqlite")
        js = path / "results.json"
    if not js.is_file():
        return None
    try:
        doc = json.loads(js.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    spec = doc.get("spec") if isinstance(doc, dict) else None
    return spec if isinstance(spec, dict) and spec else None


def load_spec_text(directory: str | os.PathLike) -> str | None:
    """The spec file's text as the user wrote it (stored by ``clad run`` in the database's meta
    table as ``spec_text``), or None when it was not stored (older results, a JSON file only)."""
    path = Path(directory)
    db = path if path.is_file() and path.suffix == ".sqlite" else path / "results.sqlite"
    if _store is None or not db.is_file():
        return None

    def read(store):
        fn = getattr(store, "get_meta", None)
        return fn("spec_text") if callable(fn) else None

    text = _with_store(db, read)
    return text if isinstance(text, str) and text.strip() else None
