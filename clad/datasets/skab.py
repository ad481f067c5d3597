"""SKAB, the Skoltech Anomaly Benchmark: a water-circulation testbed, eight sensor channels at 1 Hz.

34 experiment files with faults in three groups (``valve1`` 16, ``valve2`` 4, ``other`` 14), each a
``;``-separated CSV (``datetime``, the eight channels, ``anomaly``, ``changepoint``), and one
fault-free run (not used here). By default each experiment is cut as SKAB's outlier-detection
protocol does (the first 400 rows train, the rest test, the prefix's few anomalous rows kept in
training: :mod:`clad.datasets.ordered`; the protocol and its pooled counts are in
``docs/guides/published.md``).

Concepts: ``"files"`` (each experiment is one concept, named ``group/number``, in group order
``valve1``, ``valve2``, ``other`` and file number order) or ``"groups"`` (each group's files, each
split on its own, concatenated in file order). ``dataset.metadata["split"]`` records the split of
every file. The data (GPL-3.0) is looked for under ``<data dir>/skab/`` (see
:mod:`clad.datasets.files`).
"""

from __future__ import annotations

import numpy as np

from ..core.concepts import Concept, ConceptDataset
from ..errors import DataError
from ..validation import StrOptions
from .files import locate
from .ordered import ORDERED_CONSTRAINTS, ordered_split

__all__ = ["load_skab", "read_skab", "SKAB_GROUPS", "SKAB_FILES", "SKAB_COLUMNS"]

#: the fault groups and their experiment files, in the loader's order
SKAB_GROUPS = ("valve1", "valve2", "other")
SKAB_FILES = {"valve1": tuple(range(16)), "valve2": tuple(range(4)), "other": tuple(range(1, 15))}
#: the eight sensor channels
SKAB_COLUMNS = (
    "Accelerometer1RMS",
    "Accelerometer2RMS",
    "Current",
    "Pressure",
    "Temperature",
    "Thermocouple",
    "Voltage",
    "Volume Flow RateRMS",
)
CONCEPTS = ("files", "groups")


def read_skab(file: str, path: str = "skab", data_dir=None) -> tuple[np.ndarray, np.ndarray]:
    """The channels (rows in time order x 8) and the ``anomaly`` labels of one experiment file
    (``"valve1/0.csv"``)."""
    import pandas as pd

    where = locate(f"{path}/{file}", data_dir)
    df = pd.read_csv(where, sep=";")
    missing = [c for c in (*SKAB_COLUMNS, "anomaly") if c not in df.columns]
    if missing:
        raise DataError(
            f"skab: {str(where)!r} lacks the column(s) {', '.join(missing)}; expected SKAB's layout "
            f"(datetime; {'; '.join(SKAB_COLUMNS)}; anomaly; changepoint)"
        )
    return df[list(SKAB_COLUMNS)].to_numpy(dtype=np.float64), df["anomaly"].to_numpy().astype(
        np.int8
    )


def load_skab(
    path: str = "skab",
    concepts: str = "files",
    train_rows: int | None = 400,
    train_share: float | None = None,
    prefix_anomalies: str = "keep",
    test: str = "rest",
    groups=SKAB_GROUPS,
    data_dir=None,
) -> ConceptDataset:
    """SKAB's experiments as concepts, each cut in time order (module docstring; by default SKAB's
    own split: the first 400 rows train, the rest test, the prefix's anomalies kept).

    ``train_share`` instead of ``train_rows`` (set ``train_rows`` to None) trains on a share of
    each file; ``groups`` keeps some of the three fault groups."""
    if concepts not in CONCEPTS:
        raise DataError(f"skab: concepts={concepts!r}; expected one of {', '.join(CONCEPTS)}")
    groups = [groups] if isinstance(groups, str) else list(groups)
    unknown = [g for g in groups if g not in SKAB_GROUPS]
    if unknown or not groups:
        raise DataError(f"skab: groups={groups!r}; expected some of {', '.join(SKAB_GROUPS)}")
    split = {
        "train_rows": train_rows,
        "train_share": train_share,
        "prefix_anomalies": prefix_anomalies,
        "test": test,
    }
    pairs, records = [], {}
    for g in groups:
        parts = []
        for k in SKAB_FILES[g]:
            X, y = read_skab(f"{g}/{k}.csv", path, data_dir)
            tr, te, records[f"{g}/{k}"] = ordered_split(f"{g}/{k}", X, y, **split, loader="skab")
            parts.append((tr, te))
        if concepts == "files":
            pairs.extend(parts)
        else:
            # the group's training parts joined, and its test parts
            pairs.append(
                tuple(
                    Concept(g, np.concatenate([c.X for c in cs]), np.concatenate([c.y for c in cs]))
                    for cs in zip(*parts)
                )
            )
    meta = {
        "split": {"kind": "ordered", **split, "files": records},
        "order": "given",
        "concepts": concepts,
    }
    return ConceptDataset([p[0] for p in pairs], [p[1] for p in pairs], name="skab", metadata=meta)


load_skab._parameter_constraints = {
    "path": [str],
    "concepts": [StrOptions(set(CONCEPTS))],
    **ORDERED_CONSTRAINTS,
    "groups": [str, list, tuple],
    "data_dir": [None, str],
}
load_skab._data_files = lambda a: [(f"{a.get('path', 'skab')}/valve1/0.csv", None)]
