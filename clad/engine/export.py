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
from ..results.store import DEFAULT_NAME, ResultStore, load_results

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
    dest = Path(dest) if dest is not None else db.parent
    dest.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CladValueError("Parquet export needs pyarrow: pip install 'clad[parquet]'") from None
    if fmt == "json":
        from ..results.record import write_results

        with ResultStore(db, create=False) as store:
            runs, spec = load_results(db), store.get_meta("spec")
        write_results(dest / "results.json", runs, spec=spec)
        return [dest / "results.json"]
    written = []
    with ResultStore(db, create=False) as store:
        tables = {"r_cells": store.tidy(), "metrics": store.metrics_table(), "runs": store.runs_table()}
    for name, df in tables.items():
        path = dest / f"{name}.{fmt}"
        if fmt == "csv":
            _atomic(path, lambda p, df=df: df.to_csv(p, index=False))
        else:
            _atomic(path, lambda p, df=df: df.to_parquet(p, index=False))
        written.append(path)
    return written
