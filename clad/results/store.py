"""The results database: every run of a benchmark in one embedded SQLite file.

``clad run SPEC --out DIR`` keeps its runs in ``DIR/results.sqlite``; ``results.json``, the
summaries and ``clad export`` are produced from it. Tables:

``runs``
    one row per run: a column per field of the run record (:class:`~clad.results.record.RunResult`,
    whose field declarations say which columns hold a value as it is and which hold JSON; ``order``
    is the column ``run_order``), except R and the metrics, which have tables of their own; plus the
    per-step ``curves`` (JSON) and ``started`` / ``finished`` (UTC, ISO 8601). ``status`` is also
    ``running`` while a run is computed.
``r_cells``
    R in long format: ``run_id, base_metric, step_index, step_concept, test_index, test_concept,
    value`` (``NULL`` for an undefined cell).
``metrics``
    ``run_id, base_metric, metric, value, left_out`` (cells a mean left out; ``NULL`` if not counted).
``reference_runs``
    ``run_id, status, record, started, finished``: the reference runs of a spec with ``references``
    (:mod:`clad.engine.references`), each record the strict-JSON record of a run
    (:meth:`RunResult.to_dict <clad.results.record.RunResult.to_dict>`).
``claims``
    ``run_id, host, pid, expires``: the process computing a run (claimed before it starts, so two
    ``clad run`` processes on one folder never compute the same run) and when its lease ends (Unix
    time; renewed while it runs). A claim whose process is gone (same host, no such pid) or whose
    lease has ended is taken over (:meth:`ResultStore.claim`).
``meta``
    key/value pairs: the spec that last wrote to the database, clad's version.

Rows are written from, and read back into, the strict-JSON record of a run
(:meth:`RunResult.to_dict <clad.results.record.RunResult.to_dict>` /
:meth:`~clad.results.record.RunResult.from_dict`), the same mapping ``results.json`` uses: the
database only lays that record out in tables. :func:`load_results` reads any results folder,
database or ``results.json``.

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
import json
import os
import socket
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .record import RECORD_FIELDS, RunResult, is_tuning_run, to_jsonable
from ..errors import DataError

__all__ = [
    "ResultStore",
    "load_results",
    "iter_results",
    "load_references",
    "results_source",
    "read_document",
    "read_store",
    "writable_destination",
    "DestinationError",
    "SCHEMA",
    "DEFAULT_NAME",
    "JSON_NAME",
    "utc_now",
]

#: file name of the database inside an output folder
DEFAULT_NAME = "results.sqlite"
#: seconds a claim on a run lasts unless renewed (the process computing it renews it while it runs)
LEASE_SECONDS = 120.0

#: file name of the strict-JSON results file beside it
JSON_NAME = "results.json"

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
CREATE TABLE IF NOT EXISTS claims (
    run_id  TEXT PRIMARY KEY,
    host    TEXT NOT NULL,
    pid     INTEGER NOT NULL,
    expires REAL NOT NULL
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


def _not_a_database(exc: BaseException) -> bool:
    """Whether SQLite says the file is not a database (rather than that it cannot read it now)."""
    return any(w in str(exc) for w in ("not a database", "malformed", "file is encrypted"))


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def damage_of(path: str | os.PathLike, exc: BaseException) -> "DataError | None":
    """The error to raise when ``exc`` (a SQLite error met while reading or writing the results
    database at ``path``) comes from a damaged file rather than from the disk or a lock: a
    :class:`~clad.errors.DataError` saying so (and that running again cannot resume from it), or
    None. SQLite's own integrity check decides where the error alone does not tell."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    damaged = _not_a_database(exc) or "Could not decode" in str(exc)
    if not damaged and Path(path).is_file():
        try:
            con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, timeout=5.0)
            try:
                damaged = con.execute("PRAGMA quick_check").fetchone()[0] != "ok"
            finally:
                con.close()
        except sqlite3.DatabaseError as again:
            damaged = _not_a_database(again)
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
            if _not_a_database(exc):
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def utc_now() -> str:
    """The current UTC time in ISO 8601 (what ``started`` / ``finished`` hold)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _json(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), sort_keys=True, allow_nan=False, default=str)


def _unjson(text: str | None, default: Any = None) -> Any:
    """JSON text decoded; ``default`` for NULL and for a damaged value (not text, not JSON), which
    :meth:`ResultStore.load_results` names when it reads the run."""
    if text is None:
        return default
    try:
        return json.loads(text) if isinstance(text, str) else default
    except ValueError:
        return default


def _real(v: Any) -> float | None:
    return None if v is None else float(v)


#: ``{column of runs: field of the run record}``, read from the record's declaration
#: (:data:`~clad.results.record.RECORD_FIELDS`): the columns that hold a field as it is, and those
#: that hold it as JSON
_FIELD_OF = {f.metadata["sql"] or f.name: f.name for f in RECORD_FIELDS if f.metadata["column"]}
_PLAIN = tuple(
    f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["column"] == "plain"
)
_JSON = tuple(f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["column"] == "json")
#: JSON columns that are NULL when the run has no such record (absent, not ``null`` text)
_OPTIONAL = tuple(f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["optional"])
#: columns added to ``runs`` after its first version, added to an older database when it is opened
#: (also to a new one: the CREATE TABLE above is the first version's columns and these)
#: the tables of SCHEMA
_OWN_ORDER = tuple(
    line.split()[5] for line in SCHEMA.splitlines() if line.startswith("CREATE TABLE")
)
_OWN_TABLES = frozenset(_OWN_ORDER)


@functools.lru_cache(maxsize=None)
def _own_columns(table: str) -> frozenset:
    """The columns clad's schema gives ``table``."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(SCHEMA)
        return frozenset(row[1] for row in con.execute(f"PRAGMA table_info({table})"))
    finally:
        con.close()


_ADDED_COLUMNS = (
    "learned_rows",
    "prequential",
    "run_order",
    "extras",
    "warnings",
    "shared_from",
    "inputs",
    "peak_memory",
    "chance",
    "threshold",
    "result_key",
    "origin",
)
_RUN_COLUMNS = _PLAIN + _JSON + ("curves", "started", "finished")


def _split_metrics(metrics: Mapping) -> tuple[list[tuple], dict]:
    """A record's ``metrics`` as rows ``(base_metric, metric, value, left_out)`` and the per-step
    curves (``{base_metric: {name: list}}``)."""
    rows, curves = [], {}
    for m, values in metrics.items():
        left = values.get("left_out") or {}
        for k, v in values.items():
            if isinstance(v, list):
                curves.setdefault(m, {})[k] = v
            elif k != "left_out":
                rows.append((m, k, _real(v), left.get(k)))
    return rows, curves


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


def read_store(path: str | os.PathLike, read: Any) -> Any:
    """``read(store)`` on the results database at ``path`` opened read-only: the one careful way
    report, export and validate read a folder; a database that cannot be read, or a run damaged in
    it (:meth:`ResultStore.load_results` checks each), is a :class:`~clad.errors.DataError` naming
    the path (and the run and column) and why."""
    with ResultStore(path, create=False) as store:
        try:
            return read(store)
        except sqlite3.DatabaseError as exc:
            raise _unreadable(store, exc) from None


def _unreadable(store: "ResultStore", exc: sqlite3.DatabaseError) -> DataError:
    if _not_a_database(exc):
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
        if tuning:
            return runs
        return [r for r in runs if not is_tuning_run(r.config)]
    return [RunResult.from_dict(r) for r in read_document(source)["runs"]]


def iter_results(
    path: str | os.PathLike, tuning: bool = False, batch: int = 500
) -> Iterator[RunResult]:
    """The runs :func:`load_results` returns, one at a time: from a database read ``batch`` runs at
    a time (:meth:`ResultStore.iter_results`), so a caller that keeps what it needs of each run
    never holds the whole folder; from ``results.json`` the file is read whole."""
    source = results_source(path)
    if source.suffix != ".sqlite":
        yield from (r for r in load_results(source, tuning=tuning))
        return
    with ResultStore(source, create=False) as store:
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


class ResultStore:
    """Open the results database at ``path`` (a file, or a folder holding ``results.sqlite``),
    creating it unless ``create=False``.

    Use as a context manager, or call :meth:`close`. Methods: :meth:`write` (one run, one
    transaction), :meth:`mark_started`, :meth:`status` / :meth:`finished_ids`,
    :meth:`load_results`, :meth:`tidy` (a pandas long table of R) and :meth:`integrity_check`.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        timeout: float = 30.0,
        create: bool = True,
        readonly: bool | None = None,
    ):
        path = Path(path)
        self.path = path / DEFAULT_NAME if path.is_dir() else path
        self.readonly = (not create) if readonly is None else bool(readonly)
        if not create and not self.path.is_file():
            raise DataError(
                f"no results database at {str(self.path)!r}; 'clad run SPEC --out DIR' creates one"
            )
        if self.readonly:
            # whether SQLite's side files were there before this read (else the read made them)
            self._side_files_before = any(
                os.path.lexists(f"{self.path}{x}") for x in ("-wal", "-shm")
            )
            self._con = _connect_readonly(self.path, timeout)
            return
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
                    "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (MARKER, _json(True))
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
        self._con.execute("BEGIN IMMEDIATE")
        try:
            have = columns()  # another process may have added some since
            for column in _ADDED_COLUMNS:
                if column not in have:
                    self._con.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")
            self._con.execute("COMMIT")
        except BaseException:
            self._con.execute("ROLLBACK")
            raise

    # -- plumbing ---------------------------------------------------------------------------
    def still_there(self) -> bool:
        """Whether the file this store writes is still the one at its path (not deleted, moved or
        replaced since it was opened: SQLite would go on writing into a file no one can read)."""
        return getattr(self, "_file", None) is None or _file_identity(self.path) == self._file

    def close(self) -> None:
        self._con.close()
        if self.readonly and not self._side_files_before:
            _remove_side_files(self.path)

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _transaction(self):
        return _Transaction(self._con)

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key`` in the ``meta`` table."""
        with self._transaction() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, _json(value))
            )

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

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
                (
                    run_id,
                    labels["dataset"],
                    labels["scenario"],
                    labels["strategy"],
                    labels["detector"],
                    int(labels["seed"]),
                    _json(config),
                    started or utc_now(),
                ),
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
        metric_rows, curves = _split_metrics(rec["metrics"])
        row = [rec[_FIELD_OF[c]] for c in _PLAIN]
        row[_PLAIN.index("seed")] = int(rec["seed"])
        row += [
            None
            if c in _OPTIONAL and rec.get(_FIELD_OF[c]) is None
            else _json(rec.get(_FIELD_OF[c]))
            for c in _JSON
        ]
        cells = [
            (rid, m, i, rec["concepts"][i], j, rec["test_concepts"][j], _real(v))
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
                (*row, _json(curves), started or utc_now(), finished or utc_now()),
            )
            cur.executemany("INSERT INTO r_cells VALUES (?, ?, ?, ?, ?, ?, ?)", cells)
            cur.executemany(
                "INSERT INTO metrics VALUES (?, ?, ?, ?, ?)", [(rid, *r) for r in metric_rows]
            )

    def write_metrics(self, result: RunResult) -> None:
        """Replace the continual metrics of a stored run with ``result``'s (one transaction; its R,
        labels and times are left as they are)."""
        rid = result.run_id
        metric_rows, curves = _split_metrics(result.to_dict()["metrics"])
        with self._transaction() as cur:
            cur.execute("DELETE FROM metrics WHERE run_id = ?", (rid,))
            cur.executemany(
                "INSERT INTO metrics VALUES (?, ?, ?, ?, ?)", [(rid, *r) for r in metric_rows]
            )
            cur.execute("UPDATE runs SET curves = ? WHERE run_id = ?", (_json(curves), rid))

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
                    _json(result.to_dict()),
                    started or utc_now(),
                    finished or utc_now(),
                ),
            )

    def _has_table(self, name: str) -> bool:
        return (
            self._con.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            ).fetchone()
            is not None
        )

    def load_references(self) -> list[RunResult]:
        """Every stored reference run (finished and failed), in the order they finished."""
        if not self._has_table("reference_runs"):  # a database of an earlier clad, opened read-only
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

    # -- claims: which process computes which run ---------------------------------------------
    def claim(self, run_id: str, lease: float = LEASE_SECONDS) -> bool:
        """Claim ``run_id`` for this process for ``lease`` seconds: True unless the run is finished
        (status ``ok``) or claimed by another live process whose lease has not ended. A claim held
        by a process that is gone (on this host) or whose lease has ended is taken over."""
        host, pid, now = socket.gethostname(), os.getpid(), time.time()
        with self._transaction() as cur:
            if cur.execute(
                "SELECT 1 FROM runs WHERE run_id = ? AND status = 'ok'", (run_id,)
            ).fetchone():
                return False
            row = cur.execute(
                "SELECT host, pid, expires FROM claims WHERE run_id = ?", (run_id,)
            ).fetchone()
            if (
                row is not None
                and (row[0], row[1]) != (host, pid)
                and row[2] > now
                and not (row[0] == host and not _pid_alive(row[1]))
            ):
                return False
            cur.execute(
                "INSERT OR REPLACE INTO claims(run_id, host, pid, expires) VALUES (?, ?, ?, ?)",
                (run_id, host, pid, now + lease),
            )
            return True

    def renew_claims(self, lease: float = LEASE_SECONDS) -> None:
        """Extend the lease of every claim this process holds."""
        with self._transaction() as cur:
            cur.execute(
                "UPDATE claims SET expires = ? WHERE host = ? AND pid = ?",
                (time.time() + lease, socket.gethostname(), os.getpid()),
            )

    def release(self, run_ids: Iterable[str] | None = None) -> None:
        """Drop this process's claims on ``run_ids`` (all of them if None)."""
        me = (socket.gethostname(), os.getpid())
        with self._transaction() as cur:
            if run_ids is None:
                cur.execute("DELETE FROM claims WHERE host = ? AND pid = ?", me)
            else:
                cur.executemany(
                    "DELETE FROM claims WHERE run_id = ? AND host = ? AND pid = ?",
                    [(r, *me) for r in run_ids],
                )

    def claims(self) -> dict[str, tuple[str, int, float]]:
        """``{run_id: (host, pid, expires)}`` of every claim."""
        return {
            r: (h, p, e)
            for r, h, p, e in self._con.execute("SELECT run_id, host, pid, expires FROM claims")
        }

    # -- reading ----------------------------------------------------------------------------
    def settled_since(self, when: str) -> set[str]:
        """Run ids finished (status ``ok``), or failed at or after ``when`` (ISO 8601, UTC)."""
        return {
            r
            for (r,) in self._con.execute(
                "SELECT run_id FROM runs WHERE status = 'ok' OR (status = 'failed' AND finished >= ?)",
                (when,),
            )
        }

    def status(self) -> dict[str, str]:
        """``{run_id: status}`` for every recorded run."""
        return dict(self._con.execute("SELECT run_id, status FROM runs").fetchall())

    def flagged_ids(self) -> set[str]:
        """Run ids recorded with status ``ok`` and at least one warning."""
        return {
            rid
            for rid, w in self._con.execute("SELECT run_id, warnings FROM runs WHERE status = 'ok'")
            if _unjson(w, None)
        }

    def finished_ids(self) -> set[str]:
        """Run ids recorded with status ``ok`` and every R cell present (what ``--resume`` skips;
        a run whose cells are missing is computed again)."""
        cells = dict(self._con.execute("SELECT run_id, COUNT(*) FROM r_cells GROUP BY run_id"))
        out = set()
        for rid, concepts, tests, config in self._con.execute(
            "SELECT run_id, concepts, test_concepts, config FROM runs WHERE status = 'ok'"
        ):
            metrics = (_unjson(config, {}) or {}).get("base_metrics") or ()
            expected = (
                len(_unjson(concepts, []) or []) * len(_unjson(tests, []) or []) * len(metrics)
            )
            if not metrics or cells.get(rid, 0) == expected:
                out.add(rid)
        return out

    def retire(self, run_ids: Iterable[str] = (), reference_ids: Iterable[str] = ()) -> None:
        """Delete runs (with their R cells, metrics and claims) and reference runs that are no
        longer part of the computation of the folder's spec (one transaction)."""
        runs, refs = [(r,) for r in run_ids], [(r,) for r in reference_ids]
        with self._transaction() as cur:
            for table in ("r_cells", "metrics", "claims", "runs"):
                cur.executemany(f"DELETE FROM {table} WHERE run_id = ?", runs)
            cur.executemany("DELETE FROM reference_runs WHERE run_id = ?", refs)

    def meta_like(self, prefix: str) -> dict[str, Any]:
        """``{key: value}`` of every ``meta`` key starting with ``prefix``."""
        return {
            k: json.loads(v)
            for k, v in self._con.execute(
                "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
            )
        }

    def invalidate(self, run_ids: Iterable[str]) -> None:
        """Mark finished runs ``stale`` (to be computed again: an input changed, or cells are missing)."""
        with self._transaction() as cur:
            cur.executemany(
                "UPDATE runs SET status = 'stale' WHERE run_id = ?", [(r,) for r in run_ids]
            )

    def recorded_inputs(self, run_ids: Iterable[str]) -> dict[str, dict]:
        """``{run_id: inputs}`` (the fingerprints recorded with each run)."""
        want = set(run_ids)
        return {
            r: _unjson(i, {}) or {}
            for r, i in self._con.execute("SELECT run_id, inputs FROM runs")
            if r in want
        }

    def count(self, status: str | None = None) -> int:
        if status is None:
            return int(self._con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        return int(
            self._con.execute("SELECT COUNT(*) FROM runs WHERE status = ?", (status,)).fetchone()[0]
        )

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
        cur = self._con.cursor()
        wanted = None if run_ids is None else set(run_ids := list(run_ids))
        columns = _PLAIN + _JSON + ("curves",)
        have = {
            row[1] for row in cur.execute("PRAGMA table_info(runs)")
        }  # an earlier clad's file lacks some
        select = ", ".join(c if c in have else f"NULL AS {c}" for c in columns)
        rows = cur.execute(f"SELECT {select} FROM runs ORDER BY started, run_id").fetchall()
        cells: dict[str, dict[str, list]] = {}
        for rid, m, i, j, v in cur.execute(
            "SELECT run_id, base_metric, step_index, test_index, value FROM r_cells ORDER BY run_id, base_metric"
        ):
            cells.setdefault(rid, {}).setdefault(m, []).append((i, j, v))
        mets: dict[str, dict[str, dict]] = {}
        for rid, m, k, v, lo in cur.execute(
            "SELECT run_id, base_metric, metric, value, left_out FROM metrics"
        ):
            d = mets.setdefault(rid, {}).setdefault(m, {})
            d[k] = v
            if lo is not None:
                d.setdefault("left_out", {})[k] = int(lo)
        out = {}
        for values in rows:
            rec = dict(zip(columns, values))
            if rec["status"] == "running" and not include_unfinished:
                continue
            if run_ids is not None and rec["run_id"] not in wanted:
                continue
            rid = rec["run_id"]
            try:
                out[rid] = self._checked_run(rec, cells.get(rid, {}), mets.get(rid, {}))
            except DataError as exc:
                if damaged is None:
                    raise
                damaged[rid] = str(exc)
        if run_ids is None:
            return list(out.values())
        return [out[r] for r in run_ids if r in out]

    def iter_results(
        self, batch: int = 500, include_unfinished: bool = False
    ) -> Iterator[RunResult]:
        """The stored runs one at a time, in the order :meth:`load_results` gives them, read
        ``batch`` runs at a time (their R cells and metrics with them): memory for one batch, not
        for the whole database. Each run is checked as :meth:`load_results` checks it."""
        cur = self._con.cursor()
        columns = _PLAIN + _JSON + ("curves",)
        have = {row[1] for row in cur.execute("PRAGMA table_info(runs)")}
        select = ", ".join(c if c in have else f"NULL AS {c}" for c in columns)
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
            cells: dict[str, dict[str, list]] = {}
            for rid, m, i, j, v in cur.execute(
                f"SELECT run_id, base_metric, step_index, test_index, value FROM r_cells WHERE run_id IN ({marks}) "
                "ORDER BY run_id, base_metric",
                part,
            ):
                cells.setdefault(rid, {}).setdefault(m, []).append((i, j, v))
            mets: dict[str, dict[str, dict]] = {}
            for rid, m, k, v, lo in cur.execute(
                f"SELECT run_id, base_metric, metric, value, left_out FROM metrics WHERE run_id IN ({marks})",
                part,
            ):
                d = mets.setdefault(rid, {}).setdefault(m, {})
                d[k] = v
                if lo is not None:
                    d.setdefault("left_out", {})[k] = int(lo)
            for rid in part:
                if rid in rows:
                    yield self._checked_run(
                        dict(zip(columns, rows[rid][1:])), cells.get(rid, {}), mets.get(rid, {})
                    )

    def _checked_run(self, rec: dict, cells: dict, mets: dict) -> RunResult:
        """One stored run, checked against its shape and types as it is read: a
        :class:`~clad.errors.DataError` names the run, the table and the column that are damaged
        (a value of the wrong type, text that is not JSON, R cells missing from a finished run)."""
        rid = rec["run_id"]
        where = f"run {rid!r} of {str(self.path)!r}"

        def damaged(table: str, column: str, what: str) -> DataError:
            return DataError(
                f"{where} is damaged: table {table}, column {column}: {what}; delete the folder's "
                "database, or run `clad run --fresh`, to compute it again"
            )

        for c in _PLAIN:
            v = rec.get(c)
            ok = (v is None and c in ("error", "shared_from", "origin")) or (
                isinstance(v, int) and not isinstance(v, bool)
                if c == "seed"
                else isinstance(v, str)
            )
            if not ok:
                raise damaged(
                    "runs",
                    c,
                    f"{type(v).__name__} {str(v)[:40]!r} where {'an integer' if c == 'seed' else 'text'} "
                    "belongs",
                )
        for c in (*_JSON, "curves"):
            v = rec.get(c)
            if v is None:
                continue
            if not isinstance(v, str):
                raise damaged("runs", c, f"{type(v).__name__} where JSON text belongs")
            try:
                rec[c] = json.loads(v)
            except ValueError as exc:
                raise damaged("runs", c, f"not JSON ({exc})") from None
        rec.update({_FIELD_OF[c]: rec.pop(c) for c in _JSON if _FIELD_OF[c] != c})
        concepts, tests = rec.get("concepts") or [], rec.get("test_concepts") or []
        if not isinstance(concepts, list) or not isinstance(tests, list):
            raise damaged(
                "runs",
                "concepts" if not isinstance(concepts, list) else "test_concepts",
                "not a list",
            )
        shape = (len(concepts), len(tests))
        rec["R"] = {}
        for m, triples in cells.items():
            matrix = [[None] * shape[1] for _ in range(shape[0])]
            for i, j, v in triples:
                if not (
                    isinstance(i, int)
                    and isinstance(j, int)
                    and 0 <= i < shape[0]
                    and 0 <= j < shape[1]
                ):
                    raise damaged(
                        "r_cells",
                        "step_index/test_index",
                        f"cell ({i!r}, {j!r}) outside R's {shape[0]} x {shape[1]}",
                    )
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                    raise damaged(
                        "r_cells",
                        "value",
                        f"{type(v).__name__} {str(v)[:40]!r} where a number belongs "
                        f"(base metric {m!r}, cell {i}, {j})",
                    )
                matrix[i][j] = v
            rec["R"][m] = matrix
        if rec["status"] == "ok":
            expected = (
                list((rec.get("config") or {}).get("base_metrics") or [])
                if isinstance(rec.get("config"), dict)
                else []
            )
            for m in expected or cells:
                n = len(cells.get(m, ()))
                if n != shape[0] * shape[1]:
                    raise damaged(
                        "r_cells",
                        "value",
                        f"base metric {m!r} has {n} of its {shape[0] * shape[1]} R cells",
                    )
        for m, named in mets.items():
            for k, v in named.items():
                if (
                    k != "left_out"
                    and v is not None
                    and (isinstance(v, bool) or not isinstance(v, (int, float)))
                ):
                    raise damaged(
                        "metrics", "value", f"{type(v).__name__} where a number belongs ({m} {k})"
                    )
        rec["metrics"] = mets
        curves = rec.pop("curves", None) or {}
        if not isinstance(curves, dict):
            raise damaged("runs", "curves", "not a table of curves")
        for m, named in curves.items():
            rec["metrics"].setdefault(m, {}).update(named if isinstance(named, dict) else {})
        try:
            return RunResult.from_dict({k: v for k, v in rec.items() if v is not None})
        except (TypeError, ValueError, KeyError) as exc:
            raise DataError(f"{where} is damaged: {type(exc).__name__}: {exc}") from None

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

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` ("ok" for a sound file)."""
        return ";".join(r[0] for r in self._con.execute("PRAGMA integrity_check").fetchall())


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con

    def __enter__(self) -> sqlite3.Cursor:
        self.cur = self.con.cursor()
        self.cur.execute("BEGIN IMMEDIATE")
        return self.cur

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.cur.execute("COMMIT")
        else:
            self.cur.execute("ROLLBACK")
