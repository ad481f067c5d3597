"""The results format: a run's record, the results file and the results database, and their one reader.

* :mod:`clad.results.record` — the frozen :class:`RunResult` (the record's fields), its strict-JSON
  form (``to_dict`` / ``from_dict``) and the writer of ``results.json`` (:func:`write_results`);
* :mod:`clad.results.rows` — how a record is laid out in the database's rows, and read back checked;
* :mod:`clad.results.store` — the SQLite results database (:class:`ResultStore`), which lays the same
  records out in tables: its schema and its one writer;
* :mod:`clad.results.reading` — :func:`load_results`, the one reader of a results folder, database
  or file, and the database opened read-only (:class:`~clad.results.reading.StoreReader`).

This package sits below the engine (which writes results) and the report (which reads them); it
imports neither.
"""

from .record import RunResult, write_results
from .reading import iter_results, load_references, load_results
from .store import ResultStore

__all__ = [
    "RunResult",
    "write_results",
    "load_results",
    "iter_results",
    "load_references",
    "ResultStore",
]
