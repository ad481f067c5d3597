"""NAB, the Numenta Anomaly Benchmark: 58 univariate series in 7 families, with label windows.

Each series is a ``timestamp,value`` CSV under ``data/<family>/``; ``labels/combined_windows.json``
gives its anomaly windows (inclusive start and end timestamps). A row's label is 1 inside a window:
NAB scores detections by windows, not by rows (:mod:`clad.metrics.nab`).

NAB's protocol has no separate training data: a detector reads the whole series and learns as it
goes; its first ``min(floor(0.15 n), 750)`` rows are a *probationary period* whose detections are
not scored. Here each file is one concept (named ``family/file``, families and files in name
order): the training concept is the probationary prefix and the test concept the whole series
(:func:`clad.datasets.ordered.ordered_split` with ``test="all"``), so a detector that learns while
it scores (``windowed_gaussian``) replays NAB's run on every test concept. ``dataset.metadata``
records the split and each file's windows as row ranges.

The data (MIT) is looked for under ``<data dir>/nab/`` (see :mod:`clad.datasets.files`).
"""

from __future__ import annotations

import json

import numpy as np

from ..core.concepts import ConceptDataset
from ..errors import DataError
from ..metrics.nab import probation_length
from .files import locate
from .ordered import ordered_split

__all__ = ["load_nab", "read_nab", "NAB_FAMILIES"]

NAB_FAMILIES = (
    "artificialNoAnomaly",
    "artificialWithAnomaly",
    "realAWSCloudwatch",
    "realAdExchange",
    "realKnownCause",
    "realTraffic",
    "realTweets",
)


def _windows(path: str, data_dir) -> dict:
    with open(locate(f"{path}/labels/combined_windows.json", data_dir), encoding="utf-8") as fh:
        return json.load(fh)


def read_nab(
    file: str, windows: list, path: str = "nab", data_dir=None
) -> tuple[np.ndarray, np.ndarray, list]:
    """The values (rows x 1), the window labels and the windows as inclusive row ranges of one series."""
    import pandas as pd

    df = pd.read_csv(locate(f"{path}/data/{file}", data_dir))
    stamps = pd.to_datetime(df["timestamp"])
    y = np.zeros(len(df), dtype=np.int8)
    ranges = []
    for start, end in windows:
        lo = int(np.searchsorted(stamps.values, pd.Timestamp(start).to_datetime64(), side="left"))
        hi = (
            int(np.searchsorted(stamps.values, pd.Timestamp(end).to_datetime64(), side="right")) - 1
        )
        if hi < lo:
            raise DataError(f"nab: window {start} .. {end} of {file!r} holds no row")
        y[lo : hi + 1] = 1
        ranges.append([lo, hi])
    return df[["value"]].to_numpy(dtype=np.float64), y, ranges


def load_nab(path: str = "nab", families=NAB_FAMILIES, data_dir=None) -> ConceptDataset:
    """NAB's series as concepts: train on the probationary prefix, test on the whole series (module docstring)."""
    families = [families] if isinstance(families, str) else list(families)
    unknown = [f for f in families if f not in NAB_FAMILIES]
    if unknown or not families:
        raise DataError(f"nab: families={families!r}; expected some of {', '.join(NAB_FAMILIES)}")
    labels = _windows(path, data_dir)
    train, test, windows, splits = [], [], {}, {}
    for file in sorted(k for k in labels if k.split("/")[0] in families):
        X, y, ranges = read_nab(file, labels[file], path, data_dir)
        name = file.removesuffix(".csv")
        tr, te, rec = ordered_split(
            name, X, y, train_rows=int(probation_length(len(y))), test="all", loader="nab"
        )
        train.append(tr)
        test.append(te)
        windows[name], splits[name] = ranges, rec
    split = {"kind": "ordered", "train": "probationary period", "test": "all", "files": splits}
    meta = {"split": split, "windows": windows, "order": "given"}
    return ConceptDataset(train, test, name="nab", metadata=meta)


load_nab._parameter_constraints = {
    "path": [str],
    "families": [str, list, tuple],
    "data_dir": [None, str],
}
load_nab._data_files = lambda a: [(f"{a.get('path', 'nab')}/labels/combined_windows.json", None)]
