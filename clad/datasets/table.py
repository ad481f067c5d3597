"""Generic tables: a CSV or Parquet file, or a pandas DataFrame, with a concept column, a label
column and feature columns.

Each distinct value of the concept column is a concept (in order of first appearance); each
concept's rows are split into training and test rows as in :mod:`clad.datasets.build`. Labels must be
0 (normal) / 1 (anomaly) or booleans. Features must be numbers: encode symbolic columns first, or
leave them out with ``feature_columns``.

In a spec file::

    [[datasets]]
    name = "table"
    file = "my-data/machines.parquet"
    concept_column = "machine"
    label_column = "is_fault"
    ordered = { train_rows = 400 }   # optional: each concept's first 400 rows (in the file's order)
                                     # train, the rest test (clad.datasets.ordered), instead of a
                                     # random split of its normal rows

>>> import pandas as pd
>>> df = pd.DataFrame({"c": ["a"] * 4 + ["b"] * 4, "y": [0, 0, 0, 1] * 2, "x1": range(8), "x2": range(8)})
>>> load_table(frame=df, concept_column="c", label_column="y").train_names
('a', 'b')
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..core.concepts import ConceptDataset
from ..errors import CladTypeError, DataError
from ..registry import did_you_mean
from ..validation import declare
from .build import SPLIT_CONSTRAINTS, ConceptRows, make_dataset, order_concepts
from .files import locate
from .flat import check_flat
from .ordered import PREFIX_ANOMALIES, TEST_PARTS, ordered_split

__all__ = ["load_table", "read_table"]

_CSV = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz")
_PARQUET = (".parquet", ".pq")


def read_table(file: str, sha256: str | None = None, data_dir: str | None = None) -> pd.DataFrame:
    """Read a ``.csv`` (optionally compressed) or ``.parquet`` file into a DataFrame."""
    path = locate(file, data_dir, sha256=sha256)
    name = path.name.lower()
    try:
        if name.endswith(_CSV):
            df = pd.read_csv(path)
        elif name.endswith(_PARQUET):
            df = pd.read_parquet(path)
        else:
            df = None
        if df is not None:
            df.attrs["path"] = str(path)  # where errors point to (see _where)
            return df
    except ImportError as exc:
        raise DataError(
            f"table: reading {str(path)!r} needs pyarrow ({exc}); pip install 'clad[parquet]'"
        ) from None
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        # the parser's whole message (it names the line), on one line of its own
        raise DataError(
            f"table: {str(path)!r} could not be read: {' '.join(str(exc).split())}"
        ) from None
    raise DataError(
        f"table: {str(path)!r} has an unknown file type; expected one of "
        f"{', '.join(_CSV + _PARQUET)}"
    )


def _csv_line(path: str, row: int) -> int | None:
    """The line of a plain ``.csv`` file where data row ``row`` (0-based, the header not counted)
    starts, as pandas reads it (blank lines skipped, quoted fields may span lines); None if the
    file is compressed or has fewer rows."""
    import csv

    if not path.lower().endswith(".csv"):
        return None
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        reader = csv.reader(fh)
        seen, start = -1, 1  # -1: the header comes first
        for record in reader:
            if record:
                if seen == row:
                    return start
                seen += 1
            start = reader.line_num + 1
    return None


def _plain(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _where(df: pd.DataFrame, row: int, file: str | None) -> str:
    """Where row ``row`` (position) of a table is for its author: the file's line and data row, or the
    frame's index label."""
    if file is None:
        return f"row {_plain(df.index[row])!r} of the frame (position {row})"
    path = df.attrs.get("path", str(file))
    line = _csv_line(path, row)
    return f"{'line ' + str(line) + ', ' if line else ''}data row {row + 1} of {str(path)!r}"


def _flat(df: pd.DataFrame, feature_columns, label_column, file: str | None):
    """``X, y`` of the table; a missing or infinite feature or a label other than 0 / 1 is refused
    naming the row and column as they are in the table (before any split or shuffle)."""
    values = df[list(feature_columns)].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(
            f"table: feature column {str(feature_columns[c])!r} has {values[r, c]} at "
            f"{_where(df, r, file)}; features must be finite numbers ({int(bad.sum())} such "
            f"value(s) in {int(bad.any(axis=1).sum())} row(s)): fill or drop them first"
        )
    labels = df[label_column].to_numpy()
    with np.errstate(invalid="ignore"):
        wrong = ~((labels == 0) | (labels == 1))
    if wrong.any():
        r = int(np.flatnonzero(wrong)[0])
        shown = ", ".join(repr(_plain(v)) for v in pd.unique(labels)[:6])
        raise DataError(
            f"table: label column {str(label_column)!r} has {_plain(labels[r])!r} at "
            f"{_where(df, r, file)}; labels must be 0 (normal) or 1 (anomaly); found {shown} "
            f"({int(wrong.sum())} row(s) with another value)"
        )
    return check_flat(values, labels, f"table: {str(file)!r}" if file is not None else "table")


def _column(df: pd.DataFrame, key: str, column, what: str) -> str:
    if column not in df.columns:
        cols = [str(c) for c in df.columns]
        raise DataError(
            f"table: {what} column {column!r} (parameter {key}) is not in the table"
            f"{did_you_mean(str(column), cols)}; columns: {', '.join(cols)}"
        )
    return column


def _table_rules(args: dict) -> list[str]:
    """A file whose name says neither CSV nor Parquet is refused before it is read."""
    file = args.get("file")
    if isinstance(file, str) and file and not file.lower().endswith(_CSV + _PARQUET):
        return [
            f"file={file!r}: a table is read from a .csv (optionally .gz, .bz2, .zip, .xz) or a .parquet file; "
            "convert it to one of them (pickles are never read)"
        ]
    return []


#: the keys of ``ordered`` (see :func:`clad.datasets.ordered.ordered_split`)
ORDERED_KEYS = ("train_rows", "train_share", "prefix_anomalies", "test")


def _ordered_rules(args: dict) -> list[str]:
    """``ordered`` is a table of ``ordered_split``'s keys, checked before anything is read."""
    value = args.get("ordered")
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"ordered={value!r}; expected a table such as {{ train_rows = 400 }} (keys: {', '.join(ORDERED_KEYS)})"
        ]
    problems = [
        f"ordered.{k}: unknown key{did_you_mean(str(k), ORDERED_KEYS)}; allowed: {', '.join(ORDERED_KEYS)}"
        for k in value
        if k not in ORDERED_KEYS
    ]
    if ("train_rows" in value) == ("train_share" in value):
        problems.append(
            "ordered: give one of train_rows (a row count) or train_share (a share in (0, 1))"
        )
    if value.get("prefix_anomalies", "keep") not in PREFIX_ANOMALIES:
        problems.append(
            f"ordered.prefix_anomalies={value['prefix_anomalies']!r}; expected one of "
            f"{', '.join(PREFIX_ANOMALIES)}"
        )
    if value.get("test", "rest") not in TEST_PARTS:
        problems.append(f"ordered.test={value['test']!r}; expected one of {', '.join(TEST_PARTS)}")
    return problems


@declare(
    {**SPLIT_CONSTRAINTS, "ordered": [None, dict]},
    files=lambda a: [(a["file"], a["sha256"])] if a["file"] is not None else [],
    rules=lambda a: _table_rules(a) + _ordered_rules(a),
)
def load_table(
    file: str | None = None,
    frame: pd.DataFrame | None = None,
    concept_column: str = "concept",
    label_column: str = "label",
    feature_columns: list[str] | None = None,
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    sha256: str | None = None,
    data_dir: str | None = None,
    random_state: int = 0,
    ordered: dict | None = None,
) -> ConceptDataset:
    """A continual scenario from a table (give ``file`` or, from Python, ``frame``).

    ``feature_columns`` defaults to every column except the concept and label columns.
    ``test_size``, ``contamination``, ``order`` and ``difficulty`` are those of :mod:`clad.datasets.build`.
    ``ordered`` (e.g. ``{"train_rows": 400}``) splits each concept's rows in the table's order
    instead (:func:`clad.datasets.ordered.ordered_split`; ``test_size`` and ``contamination`` are
    then unused), and records the split in ``dataset.metadata["split"]``.
    """
    df = _frame(file, frame, sha256, data_dir)
    concept_column = _column(df, "concept_column", concept_column, "concept")
    label_column = _column(df, "label_column", label_column, "label")
    feature_columns = _feature_columns(df, feature_columns, concept_column, label_column)
    X, y = _flat(df, feature_columns, label_column, file)
    if df[concept_column].isna().any():
        raise DataError(
            f"table: concept column {concept_column!r} has missing values; every row needs a concept"
        )
    codes, uniques = pd.factorize(df[concept_column], sort=False)
    rows_of = [np.flatnonzero(codes == i) for i in range(len(uniques))]
    name = os.path.splitext(os.path.basename(str(file)))[0] if file is not None else "table"
    meta = {
        "file": None if file is None else str(file),
        "features": [str(c) for c in feature_columns],
    }
    if ordered is None:
        groups = [ConceptRows(str(v), r[y[r] == 0], r[y[r] == 1]) for v, r in zip(uniques, rows_of)]
        return make_dataset(
            X,
            y,
            groups,
            name=name,
            test_size=test_size,
            contamination=contamination,
            order=order,
            difficulty=difficulty,
            random_state=random_state,
            loader="table",
            metadata=meta,
        )
    # each concept's rows, in the table's order, cut by ordered_split; then the concept order
    pairs, records = [], {}
    for value, rows in zip(uniques, rows_of):
        tr, te, rec = ordered_split(str(value), X[rows], y[rows], loader="table", **ordered)
        pairs.append((tr, te))
        records[str(value)] = rec
    meta["split"] = {"kind": "ordered", **ordered, "concepts": records}
    return order_concepts(
        pairs,
        order=order,
        difficulty=difficulty,
        random_state=np.random.SeedSequence(int(random_state)).spawn(2)[1],
        name=name,
        metadata=meta,
        loader="table",
    )


def _frame(file, frame, sha256, data_dir) -> pd.DataFrame:
    """The table: ``file`` read (and checked against ``sha256``) or ``frame``, exactly one given;
    a :class:`~clad.errors.DataError` when it has no rows."""
    if (file is None) == (frame is None):
        raise CladTypeError(
            "table: give exactly one of file (a .csv or .parquet path) and frame (a DataFrame)"
        )
    if frame is not None and not isinstance(frame, pd.DataFrame):
        raise CladTypeError(f"table: frame must be a pandas DataFrame, got {type(frame).__name__}")
    df = read_table(file, sha256, data_dir) if file is not None else frame
    if len(df) == 0:  # before any column's dtype is looked at: an empty column has no numbers
        where = f"{df.attrs['path']!r}" if "path" in df.attrs else "the frame"
        raise DataError(
            f"table: {where} has no rows (only a header, columns {list(map(str, df.columns))}); "
            "expected at least one row per concept"
        )
    return df


def _feature_columns(df, feature_columns, concept_column, label_column) -> list:
    """The feature columns (by default every column but the concept and label columns), each
    present and of numbers; then the label column's dtype (numbers or booleans) is checked."""
    if feature_columns is None:
        feature_columns = [c for c in df.columns if c not in (concept_column, label_column)]
    if not isinstance(feature_columns, (list, tuple)) or not feature_columns:
        raise DataError(
            f"table: feature_columns={feature_columns!r}; expected a non-empty list of column names"
        )
    for c in feature_columns:
        _column(df, "feature_columns", c, "feature")
        dtype = df[c].dtype
        if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
            sample = df[c].dropna().astype(str).head(3).tolist()
            raise DataError(
                f"table: feature column {c!r} has dtype {dtype} (values like {sample}); features "
                "must be numbers: encode the column first or leave it out with feature_columns"
            )
    dtype = df[label_column].dtype
    if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
        raise DataError(
            f"table: label column {label_column!r} has dtype {dtype}; expected 0 (normal) "
            "/ 1 (anomaly) or booleans"
        )
    return feature_columns
