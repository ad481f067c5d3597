"""A bundle's derived index: ``index.parquet`` beside its manifest (``clad export DIR --bundle OUT
--index``), one row per run, to query a bundle with pandas, DuckDB or Polars without reading its
shards.

Derived from the shards alone and never a source of truth: not in the manifest, so the bundle's
sha256 does not depend on it, and a reader ignores it. Its columns, and when it is stale:
docs/guides/bundles.md. Needs pyarrow (``pip install 'clad[parquet]'``).
"""

from __future__ import annotations

from pathlib import Path

from ..atomic import atomic_output
from ..errors import DataError
from .format import Bundle, read_bundle

__all__ = ["INDEX", "index_rows", "write_index"]

INDEX = "index.parquet"
_FIELDS = ("dataset", "scenario", "strategy", "detector", "seed")


def index_rows(bundle: Bundle) -> list[dict]:
    """One dict per run of ``bundle``, in its row order: the index's columns.

    >>> row = {"key": "k", "record": {"dataset": "d", "scenario": "s", "strategy": "naive",
    ...        "detector": "hbos", "seed": 0, "metrics": {"roc_auc": {"final_average": 0.5,
    ...        "per_step": [0.5], "left_out": {}}}}}
    >>> index_rows(Bundle({}, (row,), "ab"))[0]["roc_auc/final_average"]
    0.5
    """
    out = []
    for row in bundle.rows:
        record = row["record"]
        values = {
            f"{base}/{name}": value
            for base, metrics in sorted((record.get("metrics") or {}).items())
            for name, value in sorted(metrics.items())
            if value is None or isinstance(value, (int, float))
        }
        labels = {k: record[k] for k in _FIELDS}
        out.append({"key": row["key"], **labels, **values, "bundle_sha256": bundle.sha256})
    return out


def write_index(folder: str | Path) -> Path:
    """Write ``index.parquet`` into bundle folder ``folder`` (read and checked first)."""
    import pandas as pd

    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(
            f"{str(folder)!r} is not a bundle folder; an index is written beside a manifest"
        )
    frame = pd.DataFrame(index_rows(read_bundle(folder)))
    frame["seed"] = frame["seed"].astype("int64")
    path = folder / INDEX
    with atomic_output(path) as tmp:  # never a half-written index beside the bundle
        frame.to_parquet(tmp, index=False, engine="pyarrow")
    return path
