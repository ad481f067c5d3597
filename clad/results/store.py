"""The results database: every run of a benchmark in one embedded SQLite file.

``clad run SPEC --out DIR`` keeps its runs in ``DIR/results.sqlite``; ``results.json``, the
summaries and ``clad export`` are produced from it. Its tables are :data:`SCHEMA` (their columns:
``docs/guides/running.md``): ``runs`` has a column per field of the run record
(:class:`~clad.results.record.RunResult`, whose field declarations say which hold JSON; ``order`` is
``run_order``) but R and the metrics, which have the long tables ``r_cells`` and ``metrics``; its
``status`` is also ``running`` while a run is computed. ``reference_runs`` holds the strict-JSON
record of each reference run (:mod:`clad.engine.references`), ``meta`` the spec that last wrote to
the database and clad's version. A ``claims`` table, which folders written by earlier versions of
clad hold, is left alone.

Rows are written from, and read back into, the strict-JSON record of a run
(:meth:`RunResult.to_dict <clad.results.record.RunResult.to_dict>` /
:meth:`~clad.results.record.RunResult.from_dict`), the same mapping ``results.json`` uses: the
database only lays that record out in tables. :func:`~clad.results.reading.load_results` reads any
results folder, database or ``results.json``.

A run is written in one transaction when it finishes, so a crash leaves either the whole run or
nothing. Only one process writes (the one that runs ``clad run``); the database is in WAL mode
with a busy timeout so readers never block it.

>>> import tempfile, os
>>> from clad.results.record import RunResult
>>> import numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "results.sqlite")
>>> r = RunResult("synthetic", "concept_aware", "naive", "iforest", 0, concepts=("A", "B"),
...               test_concepts=("A", "B"), R={"roc_auc": np.array([[0.9, np.nan], [0.6, 0.8]])},
...               run_id="abc")
>>> with ResultStore(path) as store:
...     store.write(r)
...     back = store.load_results()
>>> back[0].R["roc_auc"].tolist()
[[0.9, nan], [0.6, 0.8]]
"""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .reading import StoreReader, damage_of, database_path
from .record import RunResult
from .rows import FIELD_OF, JSON, OPTIONAL, PLAIN, json_text, real, split_metrics
from ..errors import DataError

__all__ = ["ResultStore", "writable_destination", "DestinationError", "SCHEMA", "utc_now"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    run_id        TEXT PRIMARY KEY,
    status        TEXT NOT NULL,
    dataset       TEXT NOT NULL,
    scenario      TEXT NOT NULL,
    strategy      TEXT NOT NULL,
    detector      TEXT NOT NULL,
    seed          INTEGER NOT NULL,
    config        TEXT NOT NULL,
    concepts      TEXT,
    test_concepts TEXT,
    timings       TEXT,
    versions      TEXT,
    memory_rows   TEXT,
    anytime       TEXT,
    learned_rows  TEXT,
    prequential   TEXT,
    run_order     TEXT,
    curves        TEXT,
    extras        TEXT,
    error         TEXT,
    warnings      TEXT,
    started       TEXT,
    finished      TEXT,
    shared_from   TEXT,
    inputs        TEXT
);
CREATE TABLE IF NOT EXISTS reference_runs (
    run_id   TEXT PRIMARY KEY,
    status   TEXT NOT NULL,
    record   TEXT NOT NULL,
    started  TEXT,
    finished TEXT
);
CREATE TABLE IF NOT EXISTS r_cells (
    run_id       TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    base_metric  TEXT NOT NULL,
    step_index   INTEGER NOT NULL,
    step_concept TEXT NOT NULL,
    test_index   INTEGER NOT NULL,
    test_concept TEXT NOT NULL,
    value        REAL,
    PRIMARY KEY (run_id, base_metric, step_index, test_index)
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    base_metric TEXT NOT NULL,
    metric      TEXT NOT NULL,
    value       REAL,
    left_out    INTEGER,
    PRIMARY KEY (run_id, base_metric, metric)
);
"""


#: the ``meta`` key clad sets in every database it creates
MARKER = "clad_results_database"


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def utc_now() -> str:
    """The current UTC time in ISO 8601 (what ``started`` / ``finished`` hold)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


#: the tables of SCHEMA
_OWN_ORDER = tuple(
    line.split()[5] for line in SCHEMA.splitlines() if line.startswith("CREATE TABLE")
)


@functools.lru_cache(maxsize=None)
def _own_columns(table: str) -> frozenset:
    """The columns clad's schema gives ``table``."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(SCHEMA)
        return frozenset(row[1] for row in con.execute(f"PRAGMA table_info({table})"))
    finally:
        con.close()


#: columns added to ``runs`` after its first version, added to an older database when it is opened
_ADDED_COLUMNS = tuple(
    "learned_rows prequential run_order extras warnings shared_from inputs peak_memory chance "
    "threshold result_key origin seed_reach".split()
)
_RUN_COLUMNS = PLAIN + JSON + ("curves", "started", "finished")


class DestinationError(OSError):
    """A destination of clad's output (a results folder, an export's ``--dest``, a ``--json``
    file) cannot be written; the message names the path and why. ``clad`` exits with 111."""

    def __init__(self, path: str | os.PathLike, reason: str, hint: str = ""):
        self.path, self.reason = Path(path), reason
        super().__init__(f"cannot write {str(path)!r}: {reason}" + (f"; {hint}" if hint else ""))


def writable_destination(
    path: str | os.PathLike, kind: str = "folder", option: str = "--dest"
) -> Path:
    """``path`` made ready to be written as a ``kind`` (``"folder"``, created with its parents, or
    ``"file"``, whose folder must exist or be created), or a :class:`DestinationError` naming it and
    why (a file where a folder is wanted or the reverse, a read-only folder, a full or read-only
    file system); ``option`` names the command-line option that chooses another one.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = f.write_text("x")
    >>> try:
    ...     writable_destination(f, "folder")
    ... except DestinationError as exc:
    ...     print(exc.reason)
    it names a file, not a folder
    """
    path = Path(path)
    hint = f"give a writable {kind} with {option}"
    folder = path if kind == "folder" else path.parent
    if kind == "folder" and path.exists() and not path.is_dir():
        raise DestinationError(path, "it names a file, not a folder", hint)
    if kind == "file" and path.is_dir():
        raise DestinationError(path, "it names a folder, not a file", hint)
    up = folder
    while not up.exists() and up != up.parent:
        up = up.parent
    if up.exists() and not up.is_dir():
        raise DestinationError(path, f"{str(up)!r} is a file, not a folder", hint)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DestinationError(folder, exc.strerror or str(exc), hint) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DestinationError(folder, "the folder is read-only", hint)
    if kind == "file" and path.exists() and not os.access(path, os.W_OK):
        raise DestinationError(path, "the file is read-only", hint)
    return path


class ResultStore(StoreReader):
    """Open the results database at ``path`` (a file, or a folder holding ``results.sqlite``),
    creating it unless ``create=False``; read-only (a :class:`~clad.results.reading.StoreReader`)
    when ``readonly``, which is the default when not ``create``.

    Use as a context manager, or call :meth:`close`. Methods: :meth:`write` (one run, one
    transaction), :meth:`mark_started`, and those of the reader: :meth:`status` /
    :meth:`finished_ids`, :meth:`load_results` and :meth:`tidy` (a pandas long table of R).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        timeout: float = 30.0,
        create: bool = True,
        readonly: bool | None = None,
    ):
        if (not create) if readonly is None else readonly:
            super().__init__(path, timeout)
            return
        self.path, self.readonly = database_path(path, must_exist=not create), False
        existed = self.path.is_file() and self.path.stat().st_size > 0
        try:
            self._con = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        except sqlite3.OperationalError:
            raise  # the folder cannot be written (read-only, full): the caller says where and why
        except sqlite3.Error as exc:
            raise DataError(
                f"results database {str(self.path)!r} cannot be opened ({exc})"
            ) from None
        self._file = _file_identity(self.path)
        try:
            self._con.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._initialise(time.monotonic() + timeout, check=existed)
        except sqlite3.DatabaseError as exc:
            self._con.close()
            if "malformed" in str(exc):  # clad's file, damaged since it was written
                raise damage_of(self.path, exc) from None
            if isinstance(exc, sqlite3.OperationalError) and "not a database" not in str(exc):
                raise
            raise DataError(f"{str(self.path)!r} is not a clad results database ({exc})") from None

    def _check_ours(self) -> None:
        """Refuse a SQLite file clad did not create (no marker, and not a results database of an
        earlier clad): clad never writes into someone else's database. The tables and the meta keys
        are read in one snapshot, so a database another process is creating at this moment (clad's
        tables so far, no row yet) is told apart from a foreign one."""
        self._con.execute("BEGIN")  # one read snapshot for both queries
        try:
            tables = {
                r[0]
                for r in self._con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            keys = (
                {r[0] for r in self._con.execute("SELECT key FROM meta")}
                if "meta" in tables
                else set()
            )
        finally:
            self._con.execute("COMMIT")
        if (
            not tables
            or keys & {MARKER, "clad_version"}
            or (not keys and self._being_created(tables))
        ):
            return
        self._con.close()
        raise DataError(
            f"{str(self.path)!r} is a SQLite database that clad did not create (tables: "
            f"{', '.join(sorted(tables))}); clad does not write into it: choose another --out folder"
        )

    def _being_created(self, tables: set[str]) -> bool:
        """Whether ``tables`` are what clad's schema has created so far: the first tables in the
        schema's order (``meta`` first), each with exactly the columns clad gives it. A database
        someone else made (a table named ``runs`` of their own) is not."""
        if tables != set(_OWN_ORDER[: len(tables)]):
            return False
        return all(
            {row[1] for row in self._con.execute(f"PRAGMA table_info({name})")}
            in (_own_columns(name), _own_columns(name) | set(_ADDED_COLUMNS))
            for name in tables
        )

    def _initialise(self, deadline: float, check: bool = False) -> None:
        """WAL mode, the schema, the added columns and the marker. Every step is idempotent, so when
        processes open a new database at the same moment (two ``clad run`` of one spec sharing a
        folder), the one that finds the file busy (SQLite does not wait for a journal-mode change)
        or a column just added by the other tries again, until ``deadline``."""
        while True:
            try:
                if check:  # a file that was there before: clad's own, or being created by clad
                    self._check_ours()
                self._con.execute("PRAGMA journal_mode = WAL")
                self._con.execute("PRAGMA synchronous = NORMAL")
                self._con.execute("PRAGMA foreign_keys = ON")
                self._con.executescript(SCHEMA)
                self._migrate()
                self._con.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                    (MARKER, json_text(True)),
                )
                return
            except sqlite3.OperationalError as exc:
                if self._con.in_transaction:
                    self._con.execute("ROLLBACK")
                text = str(exc)
                if (
                    not ("locked" in text or "duplicate column name" in text)
                    or time.monotonic() > deadline
                ):
                    raise
                time.sleep(0.02)

    def _migrate(self) -> None:
        """Add the columns a database written by an earlier clad lacks (in one write transaction, so
        that two processes opening the database at once add each column once)."""
        columns = lambda: {row[1] for row in self._con.execute("PRAGMA table_info(runs)")}  # noqa: E731
        if set(_ADDED_COLUMNS) <= columns():
            return
        with self._transaction() as cur:
            have = columns()  # another process may have added some since
            for column in _ADDED_COLUMNS:
                if column not in have:
                    cur.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")

    # -- plumbing ---------------------------------------------------------------------------
    def still_there(self) -> bool:
        """Whether the file this store writes is still the one at its path (not deleted, moved or
        replaced since it was opened: SQLite would go on writing into a file no one can read)."""
        return getattr(self, "_file", None) is None or _file_identity(self.path) == self._file

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on the autocommit connection."""
        cur = self._con.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key`` in the ``meta`` table."""
        with self._transaction() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, json_text(value))
            )

    # -- writing ----------------------------------------------------------------------------
    def mark_started(
        self, run_id: str, labels: Mapping[str, Any], config: Mapping, started: str | None = None
    ) -> None:
        """Record that a run has started (status ``running``) unless it is already recorded
        as finished; a run left ``running`` by a crash is rerun by the next ``clad run``."""
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO runs(run_id, status, dataset, scenario, strategy, detector, seed, config, started) "
                "VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(run_id) DO UPDATE SET status = 'running', started = excluded.started "
                "WHERE runs.status != 'ok'",
                (run_id, *(labels[k] for k in ("dataset", "scenario", "strategy", "detector")))
                + (int(labels["seed"]), json_text(config), started or utc_now()),
            )

    def write(
        self, result: RunResult, started: str | None = None, finished: str | None = None
    ) -> None:
        """Write one finished (or failed) run, replacing any earlier record of the same run_id,
        in a single transaction."""
        if not result.run_id:
            raise DataError("a run needs a run_id to be stored; build it from a RunConfig")
        rec = result.to_dict()
        rid = rec["run_id"]
        metric_rows, curves = split_metrics(rec["metrics"])
        row = [rec[FIELD_OF[c]] for c in PLAIN]
        row[PLAIN.index("seed")] = int(rec["seed"])
        row += [
            None
            if c in OPTIONAL and rec.get(FIELD_OF[c]) is None
            else json_text(rec.get(FIELD_OF[c]))
            for c in JSON
        ]
        cells = [
            (rid, m, i, rec["concepts"][i], j, rec["test_concepts"][j], real(v))
            for m, R in rec["R"].items()
            for i, values in enumerate(R)
            for j, v in enumerate(values)
        ]
        with self._transaction() as cur:
            old = cur.execute("SELECT started FROM runs WHERE run_id = ?", (rid,)).fetchone()
            if started is None and old is not None:
                started = old[0]
            cur.execute("DELETE FROM r_cells WHERE run_id = ?", (rid,))
            cur.execute("DELETE FROM metrics WHERE run_id = ?", (rid,))
            cur.execute("DELETE FROM runs WHERE run_id = ?", (rid,))
            cur.execute(
                f"INSERT INTO runs({', '.join(_RUN_COLUMNS)}) VALUES ({', '.join('?' * len(_RUN_COLUMNS))})",
                (*row, json_text(curves), started or utc_now(), finished or utc_now()),
            )
            cur.executemany("INSERT INTO r_cells VALUES (?, ?, ?, ?, ?, ?, ?)", cells)
            cur.executemany(
                "INSERT INTO metrics VALUES (?, ?, ?, ?, ?)", [(rid, *r) for r in metric_rows]
            )

    def write_metrics(self, result: RunResult) -> None:
        """Replace the continual metrics of a stored run with ``result``'s (one transaction; its R,
        labels and times are left as they are)."""
        rid = result.run_id
        metric_rows, curves = split_metrics(result.to_dict()["metrics"])
        with self._transaction() as cur:
            cur.execute("DELETE FROM metrics WHERE run_id = ?", (rid,))
            cur.executemany(
                "INSERT INTO metrics VALUES (?, ?, ?, ?, ?)", [(rid, *r) for r in metric_rows]
            )
            cur.execute("UPDATE runs SET curves = ? WHERE run_id = ?", (json_text(curves), rid))

    def retire(self, run_ids: Iterable[str] = (), reference_ids: Iterable[str] = ()) -> None:
        """Delete runs (with their R cells and metrics) and reference runs that are no
        longer part of the computation of the folder's spec (one transaction)."""
        runs, refs = [(r,) for r in run_ids], [(r,) for r in reference_ids]
        with self._transaction() as cur:
            for table in ("r_cells", "metrics", "runs"):
                cur.executemany(f"DELETE FROM {table} WHERE run_id = ?", runs)
            cur.executemany("DELETE FROM reference_runs WHERE run_id = ?", refs)

    def invalidate(self, run_ids: Iterable[str]) -> None:
        """Mark finished runs ``stale`` (to be computed again: an input changed, or cells are missing)."""
        with self._transaction() as cur:
            cur.executemany(
                "UPDATE runs SET status = 'stale' WHERE run_id = ?", [(r,) for r in run_ids]
            )

    # -- reference runs (clad.engine.references) ----------------------------------------------
    def write_reference(
        self, result: RunResult, started: str | None = None, finished: str | None = None
    ) -> None:
        """Write one reference run (finished or failed), replacing an earlier record of it."""
        with self._transaction() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO reference_runs(run_id, status, record, started, finished) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    result.run_id,
                    result.status,
                    json_text(result.to_dict()),
                    started or utc_now(),
                    finished or utc_now(),
                ),
            )
