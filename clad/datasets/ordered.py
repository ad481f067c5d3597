"""Time-ordered splits: train on the first rows of a concept, test on the rest (or on all of it).

Time-series benchmarks (SKAB, NAB) do not shuffle: a model learns the start of each recording and is
tested on what follows. :func:`ordered_split` cuts one concept's rows, kept in their order, at a
prefix of ``train_rows`` rows (or ``train_share`` of them, rounded down, at least one):

* ``test = "rest"``: the test concept is the rows after the prefix; ``"all"``: every row.
* ``prefix_anomalies`` says what happens to anomalous rows inside the prefix: ``"keep"`` trains on
  them as they are (SKAB's protocol: its prefix is said to be normal, a few rows are labelled
  anomalous); ``"drop"`` leaves them out of training; ``"mask"`` leaves them out of training and out
  of the test concept too (``test = "all"``: they are evaluated nowhere).

:func:`ordered_split` also returns what it did (:func:`split_record`), which a loader keeps in
``dataset.metadata["split"]`` and a run records.

>>> import numpy as np
>>> X = np.arange(12.0).reshape(6, 2); y = np.array([0, 1, 0, 0, 1, 0])
>>> tr, te, rec = ordered_split("a", X, y, train_rows=3)
>>> tr.X[:, 0].tolist(), te.X[:, 0].tolist(), te.y.tolist()
([0.0, 2.0, 4.0], [6.0, 8.0, 10.0], [0, 1, 0])
>>> tr, te, rec = ordered_split("a", X, y, train_rows=3, prefix_anomalies="mask", test="all")
>>> tr.X[:, 0].tolist(), te.y.tolist(), rec["prefix_anomalies_found"]
([0.0, 4.0], [0, 0, 0, 1, 0], 1)
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..core.concepts import Concept
from ..errors import DataError
from ..validation import Interval, StrOptions

__all__ = ["ordered_split", "split_record", "PREFIX_ANOMALIES", "TEST_PARTS", "ORDERED_CONSTRAINTS"]

PREFIX_ANOMALIES = ("keep", "drop", "mask")
TEST_PARTS = ("rest", "all")

#: the parameters of an ordered split, for a loader's ``_parameter_constraints``
ORDERED_CONSTRAINTS = {
    "train_rows": [None, Interval(Integral, 1, None, closed="left")],
    "train_share": [None, Interval(Real, 0.0, 1.0, closed="neither")],
    "prefix_anomalies": [StrOptions(set(PREFIX_ANOMALIES))],
    "test": [StrOptions(set(TEST_PARTS))],
}


def _prefix(n: int, train_rows, train_share, where: str) -> int:
    if (train_rows is None) == (train_share is None):
        raise DataError(
            f"{where}: give one of train_rows (a row count) or train_share (a share in (0, 1)); "
            f"got train_rows={train_rows!r}, train_share={train_share!r}"
        )
    if train_rows is not None:
        if isinstance(train_rows, bool) or not isinstance(train_rows, Integral) or train_rows < 1:
            raise DataError(f"{where}: train_rows={train_rows!r}; expected an integer >= 1")
        k = int(train_rows)
    else:
        if (
            isinstance(train_share, bool)
            or not isinstance(train_share, (int, float))
            or not 0 < train_share < 1
        ):
            raise DataError(f"{where}: train_share={train_share!r}; expected a number in (0, 1)")
        k = max(1, int(np.floor(train_share * n)))
    if k >= n:
        raise DataError(
            f"{where}: a prefix of {k} rows leaves nothing to test on its {n} rows; "
            "expected fewer training rows than the concept has"
        )
    return k


def split_record(n_rows: int, prefix: int, found: int, prefix_anomalies: str, test: str) -> dict:
    """What an ordered split did to one concept (kept in ``dataset.metadata["split"]``)."""
    return {
        "kind": "ordered",
        "rows": int(n_rows),
        "train_rows": int(prefix),
        "test": test,
        "prefix_anomalies": prefix_anomalies,
        "prefix_anomalies_found": int(found),
    }


def ordered_split(
    name: str,
    X,
    y,
    *,
    train_rows: int | None = None,
    train_share: float | None = None,
    prefix_anomalies: str = "keep",
    test: str = "rest",
    loader: str = "dataset",
):
    """The ``(train, test, record)`` of one concept's rows cut in time order (module docstring)."""
    where = f"{loader}: concept {name!r}"
    if prefix_anomalies not in PREFIX_ANOMALIES:
        raise DataError(
            f"{where}: prefix_anomalies={prefix_anomalies!r}; expected one of {', '.join(PREFIX_ANOMALIES)}"
        )
    if test not in TEST_PARTS:
        raise DataError(f"{where}: test={test!r}; expected one of {', '.join(TEST_PARTS)}")
    X = np.asarray(X)
    y = np.asarray(y).astype(np.int8)
    n = len(y)
    k = _prefix(n, train_rows, train_share, where)
    in_prefix = np.zeros(n, dtype=bool)
    in_prefix[:k] = True
    anomalous = y == 1
    found = int(anomalous[:k].sum())
    train_keep = in_prefix & ~anomalous if prefix_anomalies in ("drop", "mask") else in_prefix
    if not train_keep.any():
        raise DataError(
            f"{where}: every row of its {k}-row prefix is an anomaly, nothing is left to train on"
        )
    test_keep = ~in_prefix if test == "rest" else np.ones(n, dtype=bool)
    if prefix_anomalies == "mask":
        test_keep &= ~(in_prefix & anomalous)
    train = Concept(name, X[train_keep], y[train_keep])
    test_concept = Concept(name, X[test_keep], y[test_keep])
    return train, test_concept, split_record(n, k, found, prefix_anomalies, test)
