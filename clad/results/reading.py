"""Reading a results folder: its ``results.json`` or its database, opened read-only and checked.

:func:`load_results` is the one reader of results (:func:`iter_results` the same one run at a time,
:func:`load_references` the reference runs); :func:`results_source` says which file of a folder it
reads. :class:`StoreReader` is the results database opened read-only (never written, and
SQLite's side files it made removed when closed); :func:`read_store` reads through it, turning a
database that cannot be read, or a damaged run, into a :class:`~clad.errors.DataError` naming the
path and why; :func:`damage_of` tells a damaged file from a disk or lock error.

>>> import tempfile
>>> from clad.results.record import RunResult, write_results
>>> d = tempfile.mkdtemp()
>>> write_results(f"{d}/results.json", [RunResult("toy", "aware", "naive", "iforest", 0)])
>>> results_source(d).name, [r.dataset for r in load_results(d)]
('results.json', ['toy'])
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator

from .record import RunResult, is_tuning_run
from .rows import JSON, PLAIN, cells_by_run, checked_run, from_json, metrics_by_run
from ..errors import DataError

__all__ = [
    "StoreReader",
    "load_results",
    "iter_results",
    "load_references",
    "results_source",
    "read_document",
    "read_store",
    "damage_of",
    "not_a_database",
    "database_path",
    "DEFAULT_NAME",
    "JSON_NAME",
]

#: file name of the database inside an output folder
DEFAULT_NAME = "results.sqlite"
#: file name of the strict-JSON results file beside it
JSON_NAME = "results.json"
#: the columns of ``runs`` a run is read from
_READ_COLUMNS = PLAIN + JSON + ("curves",)


def not_a_database(exc: BaseException) -> bool:
    """Whether SQLite says the file is not a database (rather than that it cannot read it now)."""
    return any(w in str(exc) for w in ("not a database", "malformed", "file is encrypted"))


def damage_of(path: str | os.PathLike, exc: BaseException) -> "DataError | None":
    """The error to raise when ``exc`` (a SQLite error met while reading or writing the results
    database at ``path``) comes from a damaged file rather than from the disk or a lock: a
    :class:`~clad.errors.DataError` saying so (and that running again cannot resume from it), or
    None. SQLite's own integrity check decides where the error alone does not tell."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    damaged = not_a_database(exc) or "Could not decode" in str(exc)
    if not damaged and Path(path).is_file():
        try:
            con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, timeout=5.0)
            try:
                damaged = con.execute("PRAGMA quick_check").fetchone()[0] != "ok"
            finally:
                con.close()
        except sqlite3.DatabaseError as again:
            damaged = not_a_database(again)
        except sqlite3.Error:
            damaged = False
    if not damaged:
        return None
    return DataError(
        f"{str(path)!r} is damaged: SQLite cannot read it as a whole any more ({exc}); running again "
        "cannot resume from it: move it away (its readable runs may still be exported) and run the "
        "spec again, or use --fresh to start over"
    )


def _connect_readonly(path: Path, timeout: float) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``; ``immutable=1`` when the folder cannot be written,
    where SQLite could not create its shared-memory file, or when the read-only open fails for
    another reason than the file's content, e.g. a file-size limit on the shared-memory file):
    reading never needs write access. A file SQLite does not recognise is "not a clad results
    database"; any other failure says it cannot be read, and why."""
    writable = os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)
    tries = ["?mode=ro", "?mode=ro&immutable=1"] if writable else ["?mode=ro&immutable=1"]
    for k, query in enumerate(tries):
        con = None
        try:
            con = sqlite3.connect(
                path.resolve().as_uri() + query, uri=True, timeout=timeout, isolation_level=None
            )
            tables = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            break
        except sqlite3.Error as exc:
            if con is not None:
                con.close()
            if not_a_database(exc):
                raise DataError(f"{str(path)!r} is not a clad results database ({exc})") from None
            if k == len(tries) - 1:
                raise DataError(
                    f"the results database {str(path)!r} cannot be read ({exc})"
                ) from None
    if "runs" not in tables:
        con.close()
        raise DataError(f"{str(path)!r} is not a clad results database (it has no runs table)")
    return con


def _remove_side_files(path: Path) -> None:
    """Remove the ``-wal`` and ``-shm`` files a read-only connection left beside ``path`` (SQLite
    lets only a connection that may write remove them): a connection that may write opens the
    database and closes it, and SQLite removes them if it is the last one. Only when the write-ahead
    log holds nothing (so nothing is written into the database) and the folder may be written;
    otherwise they stay, harmless."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    try:
        if not (wal.exists() or shm.exists()) or (wal.exists() and wal.stat().st_size > 0):
            return
        if not (os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)):
            return
        con = sqlite3.connect(str(path), timeout=0.1)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            con.close()
    except (OSError, sqlite3.Error):
        pass  # another process has the database open: the files are its to remove


def database_path(path: str | os.PathLike, must_exist: bool) -> Path:
    """The database file of ``path`` (a file, or a folder holding ``results.sqlite``); a
    :class:`~clad.errors.DataError` when it ``must_exist`` and is not there."""
    path = Path(path)
    path = path / DEFAULT_NAME if path.is_dir() else path
    if must_exist and not path.is_file():
        raise DataError(
            f"no results database at {str(path)!r}; 'clad run SPEC --out DIR' creates one"
        )
    return path


class StoreReader:
    """The results database at ``path`` (a file, or a folder holding ``results.sqlite``), opened
    read-only: what every reader of a folder asks of it. Use as a context manager, or call
    :meth:`close`. :class:`~clad.results.store.ResultStore` adds writing to it."""

    def __init__(self, path: str | os.PathLike, timeout: float = 30.0):
        self.path = database_path(path, must_exist=True)
        self.readonly = True
        # whether SQLite's side files were there before this read (else the read made them)
        self._side_files_before = any(os.path.lexists(f"{self.path}{x}") for x in ("-wal", "-shm"))
        self._con = _connect_readonly(self.path, timeout)

    def close(self) -> None:
        self._con.close()
        if self.readonly and not self._side_files_before:
            _remove_side_files(self.path)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    # -- reading ----------------------------------------------------------------------------
    def status(self) -> dict[str, str]:
        """``{run_id: status}`` for every recorded run."""
        return dict(self._con.execute("SELECT run_id, status FROM runs").fetchall())

    def flagged_ids(self) -> set[str]:
        """Run ids recorded with status ``ok`` and at least one warning."""
        return {
            rid
            for rid, w in self._con.execute("SELECT run_id, warnings FROM runs WHERE status = 'ok'")
            if from_json(w, None)
        }

    def finished_ids(self) -> set[str]:
        """Run ids recorded with status ``ok`` and every R cell present (what ``--resume`` skips;
        a run whose cells are missing is computed again)."""
        cells = dict(self._con.execute("SELECT run_id, COUNT(*) FROM r_cells GROUP BY run_id"))
        out = set()
        for rid, concepts, tests, config in self._con.execute(
            "SELECT run_id, concepts, test_concepts, config FROM runs WHERE status = 'ok'"
        ):
            metrics = (from_json(config, {}) or {}).get("base_metrics") or ()
            expected = (
                len(from_json(concepts, []) or []) * len(from_json(tests, []) or []) * len(metrics)
            )
            if not metrics or cells.get(rid, 0) == expected:
                out.add(rid)
        return out

    def meta_like(self, prefix: str) -> dict[str, Any]:
        """``{key: value}`` of every ``meta`` key starting with ``prefix``."""
        return {
            k: json.loads(v)
            for k, v in self._con.execute(
                "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
            )
        }

    def recorded_inputs(self, run_ids: Iterable[str]) -> dict[str, dict]:
        """``{run_id: inputs}`` (the fingerprints recorded with each run)."""
        want = set(run_ids)
        return {
            r: from_json(i, {}) or {}
            for r, i in self._con.execute("SELECT run_id, inputs FROM runs")
            if r in want
        }

    def count(self, status: str | None = None) -> int:
        """How many runs are recorded (with ``status``: how many have it, e.g. ``"ok"``)."""
        where, args = ("", ()) if status is None else (" WHERE status = ?", (status,))
        return int(self._con.execute("SELECT COUNT(*) FROM runs" + where, args).fetchone()[0])

    def load_results(
        self,
        run_ids: Iterable[str] | None = None,
        include_unfinished: bool = False,
        damaged: dict | None = None,
    ) -> list[RunResult]:
        """The stored runs as :class:`~clad.results.record.RunResult` objects (finished and failed ones;
        ``running`` ones too with ``include_unfinished``), in the order they were started, or in the
        order of ``run_ids`` (ids not in the database are skipped). Each is checked against its
        shape and types: a damaged one is a :class:`~clad.errors.DataError` naming it, its table
        and column, or, when a ``damaged`` dict is given, left out and recorded there
        (``{run_id: message}``)."""
        wanted = None if run_ids is None else set(run_ids := list(run_ids))
        cur = self._con.cursor()
        rows = cur.execute(f"SELECT {self._select()} FROM runs ORDER BY started, run_id").fetchall()
        cells, mets = self._cells_and_metrics()
        out = {}
        for values in rows:
            rec = dict(zip(_READ_COLUMNS, values))
            if rec["status"] == "running" and not include_unfinished:
                continue
            if run_ids is not None and rec["run_id"] not in wanted:
                continue
            rid = rec["run_id"]
            try:
                out[rid] = checked_run(self.path, rec, cells.get(rid, {}), mets.get(rid, {}))
            except DataError as exc:
                if damaged is None:
                    raise
                damaged[rid] = str(exc)
        if run_ids is None:
            return list(out.values())
        return [out[r] for r in run_ids if r in out]

    def _select(self) -> str:
        """The columns a run is read from (NULL for those an earlier clad's file lacks)."""
        have = {row[1] for row in self._con.execute("PRAGMA table_info(runs)")}
        return ", ".join(c if c in have else f"NULL AS {c}" for c in _READ_COLUMNS)

    def _cells_and_metrics(self, where: str = "", ids: list[str] = ()) -> tuple[dict, dict]:
        """The R cells and the metrics of the runs ``where`` selects (all without it), by run."""
        cells = cells_by_run(
            self._con.execute(
                "SELECT run_id, base_metric, step_index, test_index, value FROM r_cells "
                f"{where} ORDER BY run_id, base_metric",
                ids,
            )
        )
        query = f"SELECT run_id, base_metric, metric, value, left_out FROM metrics {where}"
        return cells, metrics_by_run(self._con.execute(query, ids))

    def iter_results(
        self, batch: int = 500, include_unfinished: bool = False
    ) -> Iterator[RunResult]:
        """The stored runs one at a time, in the order :meth:`load_results` gives them, read
        ``batch`` runs at a time (their R cells and metrics with them): memory for one batch, not
        for the whole database. Each run is checked as :meth:`load_results` checks it."""
        cur = self._con.cursor()
        select = self._select()
        ids = [
            rid
            for rid, status in cur.execute(
                "SELECT run_id, status FROM runs ORDER BY started, run_id"
            )
            if include_unfinished or status != "running"
        ]
        for start in range(0, len(ids), batch):
            part = ids[start : start + batch]
            marks = ", ".join("?" * len(part))
            rows = {
                r[0]: r
                for r in cur.execute(
                    f"SELECT run_id, {select} FROM runs WHERE run_id IN ({marks})", part
                )
            }
            cells, mets = self._cells_and_metrics(f"WHERE run_id IN ({marks})", part)
            for rid in part:
                if rid in rows:
                    rec = dict(zip(_READ_COLUMNS, rows[rid][1:]))
                    yield checked_run(self.path, rec, cells.get(rid, {}), mets.get(rid, {}))

    def load_references(self) -> list[RunResult]:
        """Every stored reference run (finished and failed), in the order they finished."""
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reference_runs'"
        if self._con.execute(query).fetchone() is None:  # an earlier clad's, opened read-only
            return []
        out = []
        for rid, rec in self._con.execute(
            "SELECT run_id, record FROM reference_runs ORDER BY finished, run_id"
        ):
            try:
                out.append(RunResult.from_dict(json.loads(rec)))
            except (TypeError, ValueError, KeyError) as exc:
                raise DataError(
                    f"reference run {rid!r} of {str(self.path)!r} is damaged: table reference_runs, "
                    f"column record: {type(exc).__name__}: {str(exc)[:200]}"
                ) from None
        return out

    def runs_table(self):
        """The ``runs`` table as a pandas DataFrame (JSON columns left as text)."""
        import pandas as pd

        return pd.read_sql_query("SELECT * FROM runs ORDER BY started, run_id", self._con)

    def tidy(self):
        """R of every stored run in long format, joined with the run's labels and seed: one row per
        cell (``value`` NaN for an undefined cell), ready for pandas, CSV or Parquet."""
        import pandas as pd

        return pd.read_sql_query(
            "SELECT c.run_id, r.dataset, r.scenario, r.strategy, r.detector, r.seed, c.base_metric, "
            "c.step_index, c.step_concept, c.test_index, c.test_concept, c.value "
            "FROM r_cells c JOIN runs r USING (run_id) ORDER BY r.started, c.run_id, c.base_metric, "
            "c.step_index, c.test_index",
            self._con,
        ).astype({"value": "float64"})

    def metrics_table(self):
        """The ``metrics`` table joined with the run's labels, as a pandas DataFrame."""
        import pandas as pd

        return pd.read_sql_query(
            "SELECT m.run_id, r.dataset, r.scenario, r.strategy, r.detector, r.seed, m.base_metric, m.metric, "
            "m.value, m.left_out FROM metrics m JOIN runs r USING (run_id) ORDER BY r.started, m.run_id",
            self._con,
        ).astype({"value": "float64", "left_out": "Int64"})


def read_store(path: str | os.PathLike, read: Any) -> Any:
    """``read(store)`` on the results database at ``path`` opened read-only: the one careful way
    report, export and validate read a folder; a database that cannot be read, or a run damaged in
    it (:meth:`StoreReader.load_results` checks each), is a :class:`~clad.errors.DataError` naming
    the path (and the run and column) and why."""
    with StoreReader(path) as store:
        try:
            return read(store)
        except sqlite3.DatabaseError as exc:
            raise _unreadable(store, exc) from None


def _unreadable(store: StoreReader, exc: sqlite3.DatabaseError) -> DataError:
    if not_a_database(exc):
        return DataError(
            f"{str(store.path)!r} is damaged: it is not a readable SQLite database any more ({exc})"
        )
    return DataError(f"the results database {str(store.path)!r} cannot be read ({exc})")


def results_source(path: str | os.PathLike) -> Path:
    """The file a results path is read from: a ``.sqlite`` or ``.json`` file as given; in a folder
    (the one given to ``clad run --out``) ``results.sqlite`` when it is there, else ``results.json``.
    A :class:`~clad.errors.DataError` says what is missing."""
    path = Path(path)
    if path.is_file():
        return path
    if path.suffix in (".json", ".sqlite"):
        raise DataError(f"results file {str(path)!r} does not exist")
    if not path.is_dir():
        raise DataError(
            f"results folder {str(path)!r} does not exist; give the folder passed to `clad run --out`"
        )
    for name in (DEFAULT_NAME, JSON_NAME):
        if (path / name).is_file():
            return path / name
    raise DataError(f"results folder {str(path)!r} holds neither {DEFAULT_NAME} nor {JSON_NAME}")


def read_document(source: Path) -> dict:
    """The JSON object of a ``results.json`` file, checked to hold a ``"runs"`` list."""
    try:
        doc = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"results file {str(source)!r} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"results file {str(source)!r} is not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
        raise DataError(f"results file {str(source)!r} has no 'runs' list")
    return doc


def load_results(path: str | os.PathLike, tuning: bool = False) -> list[RunResult]:
    """Every run recorded at ``path`` (finished and failed ones, see ``RunResult.ok``): a results
    folder, its database or its ``results.json`` (see :func:`results_source`). The one reader of
    results. The tuning runs of a spec's ``[tuning]`` section (kept in the database) are left out
    unless ``tuning``.

    >>> import tempfile
    >>> from clad.results.record import RunResult, write_results
    >>> d = tempfile.mkdtemp()
    >>> write_results(f"{d}/results.json", [RunResult("toy", "aware", "naive", "iforest", 0)])
    >>> [r.dataset for r in load_results(d)]
    ['toy']
    """
    source = results_source(path)
    if source.suffix == ".sqlite":
        runs = read_store(source, lambda store: store.load_results())  # read-only, checked
        return runs if tuning else [r for r in runs if not is_tuning_run(r.config)]
    return [RunResult.from_dict(r) for r in read_document(source)["runs"]]


def iter_results(
    path: str | os.PathLike, tuning: bool = False, batch: int = 500
) -> Iterator[RunResult]:
    """The runs :func:`load_results` returns, one at a time: from a database read ``batch`` runs at
    a time (:meth:`StoreReader.iter_results`), so a caller that keeps what it needs of each run
    never holds the whole folder; from ``results.json`` the file is read whole."""
    source = results_source(path)
    if source.suffix != ".sqlite":
        yield from load_results(source, tuning=tuning)
        return
    with StoreReader(source) as store:
        try:
            for r in store.iter_results(batch=batch):
                if tuning or not is_tuning_run(r.config):
                    yield r
        except sqlite3.DatabaseError as exc:
            raise _unreadable(store, exc) from None


def load_references(path: str | os.PathLike) -> list[RunResult]:
    """The reference runs recorded at ``path`` (a results folder, its database or its
    ``results.json``; see :mod:`clad.engine.references`), none for a benchmark without references."""
    source = results_source(path)
    if source.suffix == ".sqlite":
        return read_store(source, lambda store: store.load_references())
    refs = read_document(source).get("references") or []
    if not isinstance(refs, list):
        raise DataError(
            f"results file {str(source)!r}: 'references' is {type(refs).__name__}, not a list of runs"
        )
    return [RunResult.from_dict(r) for r in refs]
