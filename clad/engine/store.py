"""The results database: every run of a benchmark in one embedded SQLite file.

``clad run SPEC --out DIR`` keeps its runs in ``DIR/results.sqlite``; ``results.json``, the
summaries and ``clad export`` are produced from it. Tables:

``runs``
    one row per run: ``run_id`` (primary key, :attr:`clad.engine.run.RunConfig.run_id`), ``status``
    (``ok``, ``failed`` or ``running``), the display labels, ``seed``, ``config`` (JSON), row and
    column labels, ``timings``, ``versions``, ``memory_rows``, ``anytime``, per-step ``curves`` and
    the strategy's ``extras`` (JSON), ``error`` (the traceback of a failed run), ``started`` / ``finished`` (UTC, ISO 8601).
``r_cells``
    R in long format: ``run_id, base_metric, step_index, step_concept, test_index, test_concept,
    value`` (``NULL`` for an undefined cell).
``metrics``
    ``run_id, base_metric, metric, value, left_out`` (cells a mean left out; ``NULL`` if not counted).
``meta``
    key/value pairs: the spec that last wrote to the database, clad's version.

A run is written in one transaction when it finishes, so a crash leaves either the whole run or
nothing. Only one process writes (the one that runs ``clad run``); the database is in WAL mode
with a busy timeout so readers never block it.

>>> import tempfile, os
>>> from clad.core.results import RunResult
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

import json
import math
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ..core.results import RunResult, to_jsonable
from ..errors import DataError

__all__ = ["ResultStore", "load_results", "SCHEMA", "DEFAULT_NAME", "utc_now"]

#: file name of the database inside an output folder
DEFAULT_NAME = "results.sqlite"

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
    curves        TEXT,
    extras        TEXT,
    error         TEXT,
    started       TEXT,
    finished      TEXT
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


def utc_now() -> str:
    """The current UTC time in ISO 8601 (what ``started`` / ``finished`` hold)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _real(v: Any) -> float | None:
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _json(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), sort_keys=True, allow_nan=False, default=str)


def _unjson(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


def load_results(path: str | os.PathLike) -> list[RunResult]:
    """The finished and failed runs stored in an existing database (a file, or a ``clad run``
    output folder holding ``results.sqlite``)."""
    with ResultStore(path, create=False) as store:
        return store.load_results()


class ResultStore:
    """Open the results database at ``path`` (a file, or a folder holding ``results.sqlite``),
    creating it unless ``create=False``.

    Use as a context manager, or call :meth:`close`. Methods: :meth:`write` (one run, one
    transaction), :meth:`mark_started`, :meth:`status` / :meth:`finished_ids`,
    :meth:`load_results`, :meth:`tidy` (a pandas long table of R) and :meth:`integrity_check`.
    """

    def __init__(self, path: str | os.PathLike, timeout: float = 30.0, create: bool = True):
        path = Path(path)
        self.path = path / DEFAULT_NAME if path.is_dir() else path
        if not create and not self.path.is_file():
            raise DataError(f"no results database at {str(self.path)!r}; 'clad run SPEC --out DIR' creates one")
        try:
            self._con = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise DataError(f"results database {str(self.path)!r} cannot be opened ({exc})") from None
        try:
            self._con.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._con.execute("PRAGMA journal_mode = WAL")
            self._con.execute("PRAGMA synchronous = NORMAL")
            self._con.execute("PRAGMA foreign_keys = ON")
            self._con.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._con.close()
            raise DataError(f"{str(self.path)!r} is not a clad results database ({exc})") from None
        self._extras = self._ensure_column("extras")

    def _ensure_column(self, name: str) -> bool:
        """Add a column that a database written by an older clad lacks; False if it cannot (read-only)."""
        if name in {row[1] for row in self._con.execute("PRAGMA table_info(runs)")}:
            return True
        try:
            self._con.execute(f"ALTER TABLE runs ADD COLUMN {name} TEXT")
        except sqlite3.OperationalError:
            return False
        return True

    # -- plumbing ---------------------------------------------------------------------------
    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _transaction(self):
        return _Transaction(self._con)

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key`` in the ``meta`` table."""
        with self._transaction() as cur:
            cur.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, _json(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    # -- writing ----------------------------------------------------------------------------
    def mark_started(self, run_id: str, labels: Mapping[str, Any], config: Mapping, started: str | None = None) -> None:
        """Record that a run has started (status ``running``) unless it is already recorded
        as finished; a run left ``running`` by a crash is rerun by the next ``clad run``."""
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO runs(run_id, status, dataset, scenario, strategy, detector, seed, config, started) "
                "VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(run_id) DO UPDATE SET status = 'running', started = excluded.started "
                "WHERE runs.status != 'ok'",
                (run_id, labels["dataset"], labels["scenario"], labels["strategy"], labels["detector"],
                 int(labels["seed"]), _json(config), started or utc_now()),
            )

    def write(self, result: RunResult, started: str | None = None, finished: str | None = None) -> None:
        """Write one finished (or failed) run, replacing any earlier record of the same run_id,
        in a single transaction."""
        if not result.run_id:
            raise DataError("a run needs a run_id to be stored; build it from a RunConfig")
        rid = result.run_id
        metrics = {}
        curves = {}
        for m, values in result.metrics.items():
            left = values.get("left_out", {}) if isinstance(values, Mapping) else {}
            for k, v in values.items():
                if k == "left_out":
                    continue
                if isinstance(v, (list, tuple, np.ndarray)):
                    curves.setdefault(m, {})[k] = v
                else:
                    metrics[(m, k)] = (_real(v), left.get(k))
        with self._transaction() as cur:
            row = cur.execute("SELECT started FROM runs WHERE run_id = ?", (rid,)).fetchone()
            if started is None and row is not None:
                started = row[0]
            cur.execute("DELETE FROM r_cells WHERE run_id = ?", (rid,))
            cur.execute("DELETE FROM metrics WHERE run_id = ?", (rid,))
            cur.execute("DELETE FROM runs WHERE run_id = ?", (rid,))
            cur.execute(
                "INSERT INTO runs(run_id, status, dataset, scenario, strategy, detector, seed, config, concepts, "
                "test_concepts, timings, versions, memory_rows, anytime, curves, extras, error, started, finished) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rid, result.status, result.dataset, result.scenario, result.strategy, result.detector,
                 int(result.seed), _json(result.config), _json(list(result.concepts)),
                 _json(list(result.test_concepts)), _json(result.timings), _json(result.versions),
                 _json(list(result.memory_rows)), None if result.anytime is None else _json(result.anytime),
                 _json(curves), None if result.extras is None else _json(result.extras), result.error,
                 started or utc_now(), finished or utc_now()),
            )
            cells = []
            for m, R in result.R.items():
                R = np.asarray(R, dtype=np.float64)
                for i in range(R.shape[0]):
                    for j in range(R.shape[1]):
                        cells.append((rid, m, i, result.concepts[i], j, result.test_concepts[j], _real(R[i, j])))
            cur.executemany("INSERT INTO r_cells VALUES (?, ?, ?, ?, ?, ?, ?)", cells)
            cur.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?)",
                            [(rid, m, k, v, lo) for (m, k), (v, lo) in metrics.items()])

    # -- reading ----------------------------------------------------------------------------
    def status(self) -> dict[str, str]:
        """``{run_id: status}`` for every recorded run."""
        return dict(self._con.execute("SELECT run_id, status FROM runs").fetchall())

    def finished_ids(self) -> set[str]:
        """Run ids recorded with status ``ok`` (what ``--resume`` skips)."""
        return {r for r, s in self.status().items() if s == "ok"}

    def count(self, status: str | None = None) -> int:
        if status is None:
            return int(self._con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        return int(self._con.execute("SELECT COUNT(*) FROM runs WHERE status = ?", (status,)).fetchone()[0])

    def load_results(self, run_ids: Iterable[str] | None = None, include_unfinished: bool = False) -> list[RunResult]:
        """The stored runs as :class:`~clad.core.results.RunResult` objects (finished and failed ones;
        ``running`` ones too with ``include_unfinished``), in the order they were started, or in the
        order of ``run_ids`` (ids not in the database are skipped)."""
        cur = self._con.cursor()
        rows = cur.execute(
            "SELECT run_id, status, dataset, scenario, strategy, detector, seed, config, concepts, test_concepts, "
            f"timings, versions, memory_rows, anytime, curves, {'extras' if self._extras else 'NULL'}, error "
            "FROM runs ORDER BY started, run_id"
        ).fetchall()
        cells: dict[str, dict[str, list]] = {}
        for rid, m, i, j, v in cur.execute(
            "SELECT run_id, base_metric, step_index, test_index, value FROM r_cells ORDER BY run_id, base_metric"
        ):
            cells.setdefault(rid, {}).setdefault(m, []).append((i, j, v))
        mets: dict[str, dict[str, dict]] = {}
        for rid, m, k, v, lo in cur.execute("SELECT run_id, base_metric, metric, value, left_out FROM metrics"):
            d = mets.setdefault(rid, {}).setdefault(m, {})
            d[k] = float("nan") if v is None else v
            if lo is not None:
                d.setdefault("left_out", {})[k] = int(lo)
        out = {}
        for (rid, status, ds, sc, st, det, seed, config, concepts, tests, timings, vers, memory, anytime, curves,
             extras, error) in rows:
            if status == "running" and not include_unfinished:
                continue
            concepts = tuple(_unjson(concepts, []))
            tests = tuple(_unjson(tests, []))
            R = {}
            for m, triples in cells.get(rid, {}).items():
                mat = np.full((len(concepts), len(tests)), np.nan)
                for i, j, v in triples:
                    if v is not None:
                        mat[i, j] = v
                R[m] = mat
            metrics = mets.get(rid, {})
            for m, cdict in _unjson(curves, {}).items():
                for k, vals in cdict.items():
                    metrics.setdefault(m, {})[k] = [float("nan") if x is None else x for x in vals]
            any_ = _unjson(anytime)
            if any_:
                any_ = {"rows_seen": list(any_["rows_seen"]),
                        "R": {m: np.array([[np.nan if x is None else x for x in row] for row in rows_],
                                          dtype=np.float64) for m, rows_ in any_["R"].items()}}
            out[rid] = RunResult(
                dataset=ds, scenario=sc, strategy=st, detector=det, seed=int(seed), concepts=concepts,
                test_concepts=tests, R=R, metrics=metrics, timings=_unjson(timings, {}),
                versions=_unjson(vers, {}), config=_unjson(config, {}), memory_rows=tuple(_unjson(memory, [])),
                anytime=any_ or None, extras=_unjson(extras), status=status, error=error, run_id=rid,
            )
        if run_ids is None:
            return list(out.values())
        return [out[r] for r in run_ids if r in out]

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
