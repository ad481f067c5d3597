"""The results format: a run's record, the results file and the results database, and their one reader.

* :mod:`clad.results.record` — the frozen :class:`RunResult` (the record's fields), its strict-JSON
  form (``to_dict`` / ``from_dict``) and the writer of ``results.json`` (:func:`write_results`);
* :mod:`clad.results.store` — the SQLite results database (:class:`ResultStore`), which lays the same
  records out in tables, and :func:`load_results`, the one reader of a results folder, database or file.

This package sits below the engine (which writes results) and the report (which reads them); it
imports neither.
"""

from .record import (
    RunResult,
    atomic_write_text,
    error_cause,
    is_tuning_run,
    to_jsonable,
    versions,
    write_results,
)
from .store import (
    DEFAULT_NAME,
    JSON_NAME,
    ResultStore,
    iter_results,
    load_references,
    load_results,
    results_source,
)

__all__ = [
    "RunResult",
    "write_results",
    "load_results",
    "iter_results",
    "load_references",
    "ResultStore",
    "results_source",
    "to_jsonable",
    "atomic_write_text",
    "error_cause",
    "is_tuning_run",
    "versions",
    "DEFAULT_NAME",
    "JSON_NAME",
]
