"""How a run record is laid out in the rows of the results database, and read back, checked.

The columns of ``runs`` are read from the record's declaration
(:data:`~clad.results.record.RECORD_FIELDS`): the fields held as they are (:data:`PLAIN`), and those
held as JSON text (:data:`JSON`). R is one row per cell in ``r_cells``, the continual metrics one
row per value in ``metrics``, their per-step curves JSON in ``runs.curves``.
:func:`checked_run` turns the rows of one run back into a :class:`~clad.results.record.RunResult`,
checking each value's type and R's shape, so a damaged run is named with its table and column.

>>> split_metrics({"roc_auc": {"avg": 0.5, "curve": [0.4, 0.6], "left_out": {"avg": 1}}})
([('roc_auc', 'avg', 0.5, 1)], {'roc_auc': {'curve': [0.4, 0.6]}})
>>> from_json("[1, 2]"), from_json("not JSON", default={})
([1, 2], {})
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from .record import RECORD_FIELDS, RunResult, to_jsonable
from ..errors import DataError

__all__ = [
    "FIELD_OF",
    "PLAIN",
    "JSON",
    "OPTIONAL",
    "json_text",
    "from_json",
    "real",
    "split_metrics",
    "cells_by_run",
    "metrics_by_run",
    "checked_run",
]

#: ``{column of runs: field of the run record}``: the columns that hold a field as it is, and those
#: that hold it as JSON
FIELD_OF = {f.metadata["sql"] or f.name: f.name for f in RECORD_FIELDS if f.metadata["column"]}
PLAIN = tuple(f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["column"] == "plain")
JSON = tuple(f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["column"] == "json")
#: JSON columns that are NULL when the run has no such record (absent, not ``null`` text)
OPTIONAL = tuple(f.metadata["sql"] or f.name for f in RECORD_FIELDS if f.metadata["optional"])


def json_text(obj: Any) -> str:
    """``obj`` as the strict JSON text a column holds (keys sorted, NaN as ``null``)."""
    return json.dumps(to_jsonable(obj), sort_keys=True, allow_nan=False, default=str)


def from_json(text: str | None, default: Any = None) -> Any:
    """JSON text decoded; ``default`` for NULL and for a damaged value (not text, not JSON), which
    :func:`checked_run` names when it reads the run."""
    if text is None:
        return default
    try:
        return json.loads(text) if isinstance(text, str) else default
    except ValueError:
        return default


def real(v: Any) -> float | None:
    """A stored number: a float, or None for NULL."""
    return None if v is None else float(v)


def split_metrics(metrics: Mapping) -> tuple[list[tuple], dict]:
    """A record's ``metrics`` as rows ``(base_metric, metric, value, left_out)`` and the per-step
    curves (``{base_metric: {name: list}}``)."""
    rows, curves = [], {}
    for m, values in metrics.items():
        left = values.get("left_out") or {}
        for k, v in values.items():
            if isinstance(v, list):
                curves.setdefault(m, {})[k] = v
            elif k != "left_out":
                rows.append((m, k, real(v), left.get(k)))
    return rows, curves


def cells_by_run(rows: Iterable[tuple]) -> dict[str, dict[str, list]]:
    """Rows ``(run_id, base_metric, step_index, test_index, value)`` of ``r_cells`` as
    ``{run_id: {base_metric: [(i, j, value), ...]}}``."""
    cells: dict[str, dict[str, list]] = {}
    for rid, m, i, j, v in rows:
        cells.setdefault(rid, {}).setdefault(m, []).append((i, j, v))
    return cells


def metrics_by_run(rows: Iterable[tuple]) -> dict[str, dict[str, dict]]:
    """Rows ``(run_id, base_metric, metric, value, left_out)`` of ``metrics`` as
    ``{run_id: {base_metric: {metric: value, "left_out": {metric: count}}}}``."""
    mets: dict[str, dict[str, dict]] = {}
    for rid, m, k, v, lo in rows:
        d = mets.setdefault(rid, {}).setdefault(m, {})
        d[k] = v
        if lo is not None:
            d.setdefault("left_out", {})[k] = int(lo)
    return mets


def _is_number(v: Any) -> bool:
    return v is None or (not isinstance(v, bool) and isinstance(v, (int, float)))


class _Damaged:
    """The error naming a damaged value of one run of the database at ``path``."""

    def __init__(self, path: Path, rid: str):
        self.where = f"run {rid!r} of {str(path)!r}"

    def __call__(self, table: str, column: str, what: str) -> DataError:
        return DataError(
            f"{self.where} is damaged: table {table}, column {column}: {what}; delete the folder's "
            "database, or run `clad run --fresh`, to compute it again"
        )


def _check_columns(rec: dict, damaged: _Damaged) -> None:
    """The plain columns checked for their type, the JSON ones decoded in place."""
    for c in PLAIN:
        v = rec.get(c)
        ok = (v is None and c in ("error", "shared_from", "origin")) or (
            isinstance(v, int) and not isinstance(v, bool) if c == "seed" else isinstance(v, str)
        )
        if not ok:
            raise damaged(
                "runs",
                c,
                f"{type(v).__name__} {str(v)[:40]!r} where {'an integer' if c == 'seed' else 'text'} "
                "belongs",
            )
    for c in (*JSON, "curves"):
        v = rec.get(c)
        if v is None:
            continue
        if not isinstance(v, str):
            raise damaged("runs", c, f"{type(v).__name__} where JSON text belongs")
        try:
            rec[c] = json.loads(v)
        except ValueError as exc:
            raise damaged("runs", c, f"not JSON ({exc})") from None


def _matrices(rec: dict, cells: dict, damaged: _Damaged) -> dict[str, list]:
    """R of the run from its cells, each cell checked to lie inside R and hold a number, and every
    cell of a finished run present."""
    concepts, tests = rec.get("concepts") or [], rec.get("test_concepts") or []
    if not isinstance(concepts, list) or not isinstance(tests, list):
        column = "concepts" if not isinstance(concepts, list) else "test_concepts"
        raise damaged("runs", column, "not a list")
    shape = (len(concepts), len(tests))
    out = {}
    for m, triples in cells.items():
        matrix = [[None] * shape[1] for _ in range(shape[0])]
        for i, j, v in triples:
            inside = isinstance(i, int) and isinstance(j, int)
            if not (inside and 0 <= i < shape[0] and 0 <= j < shape[1]):
                raise damaged(
                    "r_cells",
                    "step_index/test_index",
                    f"cell ({i!r}, {j!r}) outside R's {shape[0]} x {shape[1]}",
                )
            if not _is_number(v):
                raise damaged(
                    "r_cells",
                    "value",
                    f"{type(v).__name__} {str(v)[:40]!r} where a number belongs "
                    f"(base metric {m!r}, cell {i}, {j})",
                )
            matrix[i][j] = v
        out[m] = matrix
    if rec["status"] == "ok":
        config = rec.get("config")
        expected = list(config.get("base_metrics") or []) if isinstance(config, dict) else []
        for m in expected or cells:
            n = len(cells.get(m, ()))
            if n != shape[0] * shape[1]:
                raise damaged(
                    "r_cells",
                    "value",
                    f"base metric {m!r} has {n} of its {shape[0] * shape[1]} R cells",
                )
    return out


def _metrics(rec: dict, mets: dict, damaged: _Damaged) -> dict:
    """The continual metrics of the run, each value checked to be a number, with its curves."""
    for m, named in mets.items():
        for k, v in named.items():
            if k != "left_out" and not _is_number(v):
                raise damaged(
                    "metrics", "value", f"{type(v).__name__} where a number belongs ({m} {k})"
                )
    curves = rec.pop("curves", None) or {}
    if not isinstance(curves, dict):
        raise damaged("runs", "curves", "not a table of curves")
    for m, named in curves.items():
        mets.setdefault(m, {}).update(named if isinstance(named, dict) else {})
    return mets


def checked_run(path: Path, rec: dict, cells: dict, mets: dict) -> RunResult:
    """One run of the database at ``path`` (``rec``: its ``runs`` columns; ``cells`` and ``mets``:
    its rows of :func:`cells_by_run` and :func:`metrics_by_run`), checked against its shape and types
    as it is read: a :class:`~clad.errors.DataError` names the run, the table and the column that
    are damaged (a value of the wrong type, text that is not JSON, R cells missing from a finished
    run)."""
    damaged = _Damaged(path, rec["run_id"])
    _check_columns(rec, damaged)
    rec.update({FIELD_OF[c]: rec.pop(c) for c in JSON if FIELD_OF[c] != c})
    rec["R"] = _matrices(rec, cells, damaged)
    rec["metrics"] = _metrics(rec, mets, damaged)
    try:
        return RunResult.from_dict({k: v for k, v in rec.items() if v is not None})
    except (TypeError, ValueError, KeyError) as exc:
        raise DataError(f"{damaged.where} is damaged: {type(exc).__name__}: {exc}") from None
