"""Reading a results folder: ``DIR/results.sqlite`` when the results store is available, else
``DIR/results.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import DataError
from ..results import RunResult, read_results

__all__ = ["load_results", "load_spec_record"]

try:  # the SQLite results store is optional
    from .. import store as _store
except ImportError:  # pragma: no cover - depends on the installed version of clad
    _store = None


def _from_sqlite(path: Path) -> list[RunResult]:
    return list(_store.ResultStore(path).load_results())


def load_results(directory: str | os.PathLike) -> list[RunResult]:
    """Every run recorded in a results folder (failed runs included, see ``RunResult.ok``).

    ``directory`` is the folder given to ``clad run --out``. ``results.sqlite`` is preferred when
    ``clad.store`` exists and the file is there; otherwise ``results.json`` is read. A path to one
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
    """The spec recorded with the results (the ``"spec"`` entry of ``results.json``), or None."""
    path = Path(directory)
    js = path if path.is_file() and path.suffix == ".json" else path / "results.json"
    if js.is_file():
        try:
            doc = json.loads(js.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        spec = doc.get("spec") if isinstance(doc, dict) else None
        return spec if isinstance(spec, dict) and spec else None
    if _store is not None and (path / "results.sqlite").is_file():
        getter = getattr(_store.ResultStore(path / "results.sqlite"), "load_spec", None)
        if callable(getter):
            spec = getter()
            return dict(spec) if spec else None
    return None
