"""Tidy exports of a results database (``clad export DIR [--format csv|parquet|json]
[--per-series]``): the tables ``r_cells``, ``metrics``, ``runs`` and ``per_series``, or
``results.json``, written atomically next to the database (or into ``dest``); each is described in
docs/guides/reports.md ("Exports"). A row of ``r_cells`` also holds the base metric's label,
whether it is optimistic, and for a thresholded one the false-positive rate reached.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..atomic import atomic_output
from ..errors import CladValueError, DataError
from ..results.reading import DEFAULT_NAME, load_results, read_store
from ..results.store import DestinationError, writable_destination

__all__ = ["export", "per_series_table", "FORMATS"]

FORMATS = ("csv", "parquet", "json")


def database_of(folder: str | os.PathLike) -> Path:
    """The results database an export reads: ``folder/results.sqlite``, or a database file given
    directly; a :class:`~clad.errors.DataError` when there is none."""
    folder = Path(folder)
    db = folder if folder.is_file() else folder / DEFAULT_NAME
    if not db.is_file():
        raise DataError(
            f"no results database at {str(db)!r}; run 'clad run SPEC --out {folder}' first"
        )
    return db


def _atomic(path: Path, write) -> None:
    with atomic_output(path) as tmp:
        write(tmp)


_SERIES_KEYS = (
    "run_id",
    "dataset",
    "scenario",
    "strategy",
    "detector",
    "seed",
    "step",
    "step_concept",
    "test_concept",
    "series",
)


def per_series_table(runs):
    """The per-series values of ``runs`` (:class:`~clad.results.record.RunResult`) as a table: one row
    per run, step, test concept and series, one column per base metric computed on that series alone
    (empty where the series holds a single class)."""
    import pandas as pd

    rows, metrics = [], []
    for r in runs:
        data = ((r.extras or {}).get("time_series") or {}).get("per_series")
        if not r.ok or not data:
            continue
        for m in data["values"]:
            if m not in metrics:
                metrics.append(m)
        for concept, names in data["series"].items():
            for i, step in enumerate(r.concepts):
                for k, series in enumerate(names):
                    config = (r.run_id, r.dataset, r.scenario, r.strategy, r.detector, r.seed)
                    row = dict(zip(_SERIES_KEYS, (*config, i, step, concept, series)))
                    for m, values in data["values"].items():
                        v = values[concept][i][k]
                        row[m] = float("nan") if v is None else v
                    rows.append(row)
    return pd.DataFrame(rows, columns=[*_SERIES_KEYS, *metrics])


def with_declarations(cells, runs):
    """The cells of R with what their base metric's declaration says (``base_metric_label``,
    ``optimistic``) and, for a thresholded metric (``input="labels"``), the false-positive rate its
    threshold reached on the test concept's normal rows (``realised_fpr``; NaN otherwise)."""
    import numpy as np

    from ..metrics.base import find_base_metric

    decls = {m: find_base_metric(m) for m in cells["base_metric"].unique()}
    cells = cells.assign(
        base_metric_label=cells["base_metric"].map(lambda m: decls[m].label if decls[m] else m),
        optimistic=cells["base_metric"].map(lambda m: bool(decls[m] and decls[m].optimistic)),
    )
    fpr = {r.run_id: r.threshold.get("realised_fpr") for r in runs if r.threshold}
    thresholded = {m for m, d in decls.items() if d is not None and d.input == "labels"}

    def realised(row) -> float:
        F = fpr.get(row.run_id)
        if row.base_metric not in thresholded or not F or row.step_index >= len(F):
            return np.nan
        return float(F[row.step_index][row.test_index])

    return cells.assign(realised_fpr=[realised(row) for row in cells.itertuples()])


def export(
    folder: str | os.PathLike,
    fmt: str = "csv",
    dest: str | os.PathLike | None = None,
    per_series: bool = False,
) -> list[Path]:
    """Export the database ``folder/results.sqlite`` (or a database file given directly) as tidy
    tables (with ``per_series``, the per-series table too); returns the paths written."""
    if fmt not in FORMATS:
        raise CladValueError(
            f"export format {fmt!r} is not supported; allowed: {', '.join(FORMATS)}"
        )
    if per_series and fmt == "json":
        raise CladValueError(
            "--per-series writes a table (csv or parquet); results.json holds the per-series "
            "values already (extras.time_series of each run)"
        )
    db = database_of(folder)
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CladValueError(
                "Parquet export needs pyarrow: pip install 'clad[parquet]'"
            ) from None
    dest = writable_destination(dest if dest is not None else db.parent, "folder", "--dest")
    if fmt == "json":
        from ..results.record import is_tuning_run, write_results

        runs, spec, refs = read_store(
            db,
            lambda store: (store.load_results(), store.get_meta("spec"), store.load_references()),
        )
        runs = [r for r in runs if not is_tuning_run(r.config)]
        _write(dest / "results.json", lambda p: write_results(p, runs, spec=spec, references=refs))
        return [dest / "results.json"]
    written = []

    def read(store) -> dict:
        # every run checked against its shape and types
        runs = store.load_results(include_unfinished=True)
        return {
            "r_cells": with_declarations(store.tidy(), runs),
            "metrics": store.metrics_table(),
            "runs": store.runs_table(),
        }

    tables = read_store(db, read)
    if per_series:
        table = per_series_table(load_results(db))
        if table.empty:
            raise DataError(
                f"no run in {str(db)!r} has per-series values: they are kept for test concepts with a "
                "time axis (the telemanom loader, windowed or not)"
            )
        tables["per_series"] = table
    for name, df in tables.items():
        path = dest / f"{name}.{fmt}"
        to_file = getattr(df, "to_csv" if fmt == "csv" else "to_parquet")
        _write(path, lambda p, to_file=to_file: _atomic(p, lambda t: to_file(t, index=False)))
        written.append(path)
    return written


def _write(path: Path, write) -> None:
    """``write(path)``, a failure of the disk a :class:`DestinationError` naming the path and why."""
    try:
        write(path)
    except OSError as exc:
        raise DestinationError(
            path, exc.strerror or str(exc), "free space or give another folder with --dest"
        ) from None
