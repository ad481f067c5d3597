"""Tidy exports of a results database (``clad export DIR [--format csv|parquet]``).

Three tables, one row per observation, written atomically next to the database (or into
``dest``):

* ``r_cells.<ext>`` — every cell of R: run labels, seed, base metric, step and test concept,
  value (empty / null when undefined);
* ``metrics.<ext>`` — every scalar continual metric of every run, with the cells it left out;
* ``runs.<ext>`` — one row per run: status, labels, seed, configuration (JSON), error, times.

``json`` writes ``results.json`` instead (the strict-JSON results file, every stored run), e.g. to
bring it up to date after a run was killed.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..atomic import atomic_output
from ..errors import CladValueError, DataError
from ..results.store import DEFAULT_NAME, DestinationError, read_store, writable_destination

__all__ = ["export", "FORMATS"]

FORMATS = ("csv", "parquet", "json")


def _atomic(path: Path, write) -> None:
    with atomic_output(path) as tmp:
        write(tmp)


def export(folder: str | os.PathLike, fmt: str = "csv", dest: str | os.PathLike | None = None) -> list[Path]:
    """Export the database ``folder/results.sqlite`` (or a database file given directly) as tidy
    tables; returns the paths written."""
    if fmt not in FORMATS:
        raise CladValueError(f"export format {fmt!r} is not supported; allowed: {', '.join(FORMATS)}")
    folder = Path(folder)
    db = folder if folder.is_file() else folder / DEFAULT_NAME
    if not db.is_file():
        raise DataError(f"no results database at {str(db)!r}; run 'clad run SPEC --out {folder}' first")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CladValueError("Parquet export needs pyarrow: pip install 'clad[parquet]'") from None
    dest = writable_destination(dest if dest is not None else db.parent, "folder", "--dest")
    if fmt == "json":
        from ..results.record import is_tuning_run, write_results

        runs, spec, refs = read_store(db, lambda store: (store.load_results(), store.get_meta("spec"),
                                                         store.load_references()))
        runs = [r for r in runs if not is_tuning_run(r.config)]
        _write(dest / "results.json", lambda p: write_results(p, runs, spec=spec, references=refs))
        return [dest / "results.json"]
    written = []
    def read(store) -> dict:
        store.load_results(include_unfinished=True)  # every run checked against its shape and types
        return {"r_cells": store.tidy(), "metrics": store.metrics_table(), "runs": store.runs_table()}

    tables = read_store(db, read)
    for name, df in tables.items():
        path = dest / f"{name}.{fmt}"
        if fmt == "csv":
            _write(path, lambda p, df=df: _atomic(p, lambda t: df.to_csv(t, index=False)))
        else:
            _write(path, lambda p, df=df: _atomic(p, lambda t: df.to_parquet(t, index=False)))
        written.append(path)
    return written


def _write(path: Path, write) -> None:
    """``write(path)``, a failure of the disk a :class:`DestinationError` naming the path and why."""
    try:
        write(path)
    except OSError as exc:
        raise DestinationError(path, exc.strerror or str(exc), "free space or give another folder with --dest") from None
