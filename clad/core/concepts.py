"""Concepts and concept datasets.

A *concept* is a regime of normal behaviour with its own anomalies: a name, a 2-D float feature
array ``X`` and, for test concepts, binary labels ``y`` (0 normal, 1 anomaly).

``X`` may also be 3-D, ``(rows, window, features)``: each row is then a window of a time series
(see :mod:`clad.datasets.windows`), one label per window. Everything that handles rows (scenarios,
buffers, strategies) treats a window as one row; sequence models read the 3-D array as it is, and
tabular detectors get each window flattened to ``window * features`` columns by their adapter
(:func:`clad.detectors.tabular.as_table`). ``n_features`` is that flattened width and
``row_shape`` the shape of one row, which every concept of a dataset shares.

A :class:`ConceptDataset` holds the ordered *training* concepts (the learning order; a name may
recur, e.g. A, B, A) and the *test* concepts (which may include concepts never trained). It is
validated when it is built; every failure is a :class:`~clad.errors.DataError` naming the concept,
the problem and what is expected.

A concept owns its arrays read-only: a float array is kept as a read-only *view* of what was given
(no copy, so a memory-mapped ``.npy`` file stays on disk and memory-mapped), other arrays are
converted once and frozen. Detectors and strategies get these arrays, so no run can change the
data of another run, nor the caller's dataset; the caller's own array stays writeable (code that
keeps changing it should pass a copy).

>>> import numpy as np
>>> a = Concept("A", np.zeros((3, 2)))
>>> t = Concept("A", np.zeros((4, 2)), np.array([0, 0, 1, 1]))
>>> ds = ConceptDataset([a], [t])
>>> ds.n_features, ds.train_names, ds.test_names
(2, ('A',), ('A',))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import DataError
from .memmap import is_memmap, release
from .time_axis import TimeAxis

__all__ = ["Concept", "ConceptDataset", "readonly", "owned"]

# rows checked at a time for NaN/inf, so that a memory-mapped array is never read whole into memory
_CHECK_CHUNK = 1 << 18


def readonly(X) -> np.ndarray:
    """``X`` as an array nobody can write through: itself when it already is read-only, else a
    read-only view of it (never a copy; a memory-mapped array stays memory-mapped).

    >>> a = np.zeros(3)
    >>> v = readonly(a)
    >>> v.flags.writeable, a.flags.writeable, np.shares_memory(a, v)
    (False, True, True)
    """
    X = np.asanyarray(X)
    if not X.flags.writeable:
        return X
    view = X.view()
    view.flags.writeable = False
    return view


def _writable_somewhere(X: np.ndarray) -> bool:
    """Whether ``X`` or an array it is a view of can be written (by whoever holds it)."""
    a = X
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return True
        a = a.base
    return False


def owned(X: np.ndarray, fresh: bool = False) -> np.ndarray:
    """``X`` as an array nobody else can change: itself, made read-only, when it is ``fresh``
    (made here, held by no one else); itself when neither it nor an array it views can be written
    (a read-only memory map, a part of another concept's data); else a read-only copy, except for a
    writable memory map (``r+``, ``w+``), which may not fit in memory: a read-only view of it (the
    file stays the caller's; open it with ``mmap_mode="r"`` to hand it over).

    >>> a = np.zeros(3)
    >>> b = owned(a)
    >>> np.shares_memory(a, b), b.flags.writeable, owned(b) is b
    (False, False, True)
    """
    if fresh:
        X.flags.writeable = False
        return X
    if not _writable_somewhere(X):
        return X
    # a file mapping may not fit in memory: never copied (open it with mmap_mode="r")
    if is_memmap(X):
        return readonly(X)
    copy = np.array(X, copy=True)
    copy.flags.writeable = False
    return copy


def _as_float_rows(X, what: str) -> np.ndarray:
    if isinstance(X, np.ndarray) and X.dtype.kind == "f":
        arr = X
    else:
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise DataError(f"{what}: features could not be read as an array ({exc})") from None
        if arr.dtype.kind not in "fiub":
            raise DataError(
                f"{what}: features have dtype {arr.dtype}; expected numbers (float, int or bool)"
            )
        arr = arr.astype(np.float64)
    if arr.ndim not in (2, 3):
        raise DataError(
            f"{what}: features must be a 2-D array (rows x features) or 3-D windows "
            f"(rows x steps x features), got shape {arr.shape}"
        )
    return arr


def _check_finite(X: np.ndarray, what: str) -> None:
    for start in range(0, X.shape[0], _CHECK_CHUNK):
        block = X[start : start + _CHECK_CHUNK]
        finite = bool(np.isfinite(block).all())
        release(block)  # a memory-mapped file read for the check goes back to disk
        if not finite:
            bad = np.argwhere(~np.isfinite(block))[0]
            step = f", step {bad[1]}" if X.ndim == 3 else ""
            raise DataError(
                f"{what}: features contain NaN or infinity (first at row {start + bad[0]}{step}, "
                f"column {bad[-1]}); expected finite numbers"
            )


@dataclass(frozen=True, eq=False)
class Concept:
    """One concept: ``name``, features ``X`` (n_rows x n_features, or n_rows x window x features)
    and optional labels ``y`` (one per row).

    Labels are required for test concepts and optional for training concepts (training data are
    usually normal-only). ``X`` is validated (2-D, finite, non-empty) when the concept is made; the
    concept owns ``X`` and ``y`` from then on (:func:`owned`: read-only, copied when the caller
    could still change them through an array of theirs).

    >>> X = np.zeros((2, 2))
    >>> c = Concept("A", X)
    >>> c.X[0, 0] = 1.0
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    >>> X[0, 0] = 5.0  # the caller's array is not the concept's
    >>> float(c.X[0, 0])
    0.0
    """

    name: str
    X: np.ndarray
    y: np.ndarray | None = None
    validate: bool = field(default=True, repr=False)
    #: the time points behind the rows of a time-series test concept (series, point labels, windows;
    #: :class:`~clad.core.time_axis.TimeAxis`), where the range metrics are computed; None otherwise
    time: TimeAxis | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise DataError(f"concept name must be a non-empty string, got {self.name!r}")
        what = f"concept {self.name!r}"
        X = _as_float_rows(self.X, what)
        if X.shape[0] == 0:
            raise DataError(f"{what}: has no rows; expected at least one row")
        if X.shape[-1] == 0:
            raise DataError(f"{what}: has no feature columns; expected at least one")
        if X.ndim == 3 and X.shape[1] == 0:
            raise DataError(f"{what}: windows of length 0; expected at least one step per window")
        if self.validate:
            _check_finite(X, what)
        object.__setattr__(self, "X", owned(X, fresh=X is not self.X))
        if self.y is not None:
            y = np.asarray(self.y)
            if y.ndim != 1:
                raise DataError(f"{what}: labels must be 1-D, got shape {y.shape}")
            if y.shape[0] != X.shape[0]:
                raise DataError(
                    f"{what}: {y.shape[0]} labels for {X.shape[0]} rows; expected one label per row"
                )
            if y.dtype.kind == "f" and not np.isfinite(y).all():
                raise DataError(
                    f"{what}: labels contain NaN or infinity; expected 0 (normal) or 1 (anomaly)"
                )
            if y.dtype.kind not in "fiub":
                raise DataError(
                    f"{what}: labels have dtype {y.dtype}; expected 0 (normal) or 1 (anomaly)"
                )
            values = np.unique(y)
            if not np.isin(values, (0, 1)).all():
                shown = ", ".join(repr(v.item()) for v in values[:6])
                raise DataError(
                    f"{what}: labels must be binary, 0 (normal) or 1 (anomaly); found {shown}"
                )
            y8 = y.astype(np.int8, copy=False)
            object.__setattr__(self, "y", owned(y8, fresh=y8 is not self.y and y8 is not y))
        if self.time is not None:
            if not isinstance(self.time, TimeAxis):
                raise DataError(
                    f"{what}: time={type(self.time).__name__}; expected a clad.core.time_axis.TimeAxis"
                )
            if self.time.n_rows != X.shape[0]:
                raise DataError(
                    f"{what}: its time axis gives {self.time.n_rows} rows, the concept has {X.shape[0]}"
                )

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Values per row: the feature count, or ``window * features`` for windows."""
        return int(np.prod(self.X.shape[1:]))

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one row: ``(features,)`` or ``(window, features)``."""
        return tuple(int(k) for k in self.X.shape[1:])

    @property
    def window(self) -> int | None:
        """Steps per window for 3-D concepts, else None."""
        return int(self.X.shape[1]) if self.X.ndim == 3 else None

    @property
    def n_anomalies(self) -> int | None:
        return None if self.y is None else int(self.y.sum())

    def __repr__(self) -> str:
        labels = "" if self.y is None else f", anomalies={self.n_anomalies}"
        shape = (
            f"window={self.window}, features={self.X.shape[2]}"
            if self.window is not None
            else f"features={self.n_features}"
        )
        return f"Concept({self.name!r}, rows={self.n_rows}, {shape}{labels})"


class ConceptDataset:
    """Ordered training concepts and a list of test concepts, validated together.

    Parameters
    ----------
    train : sequence of Concept
        The learning order. A name may recur (the concept is learned again).
    test : sequence of Concept
        Concepts to evaluate on after every training step. Names must be unique and every one
        must have labels. A test concept never trained is allowed ("future-only" concept).
    name : str
        A label for results and reports.
    """

    def __init__(
        self,
        train: Sequence[Concept],
        test: Sequence[Concept],
        name: str = "dataset",
        metadata: dict | None = None,
    ):
        train, test = list(train), list(test)
        if not train:
            raise DataError(f"dataset {name!r}: no training concepts; expected at least one")
        if not test:
            raise DataError(f"dataset {name!r}: no test concepts; expected at least one")
        for c in train + test:
            if not isinstance(c, Concept):
                raise DataError(
                    f"dataset {name!r}: expected Concept objects, got {type(c).__name__}"
                )
        shape = train[0].row_shape
        for role, concepts in (("training", train), ("test", test)):
            for c in concepts:
                if c.row_shape != shape:
                    if len(c.row_shape) == len(shape) == 1:
                        raise DataError(
                            f"dataset {name!r}: {role} concept {c.name!r} has {c.n_features} features, "
                            f"but {train[0].name!r} has {shape[0]}; all concepts must have the same number"
                        )
                    raise DataError(
                        f"dataset {name!r}: {role} concept {c.name!r} has rows of shape {c.row_shape}, "
                        f"but {train[0].name!r} has {shape}; all concepts must have the same row shape"
                    )
        seen: set[str] = set()
        for c in test:
            if c.y is None:
                raise DataError(
                    f"dataset {name!r}: test concept {c.name!r} has no labels; test concepts need "
                    "labels (0 normal, 1 anomaly)"
                )
            if c.name in seen:
                raise DataError(
                    f"dataset {name!r}: test concept name {c.name!r} is used twice; names must be unique"
                )
            seen.add(c.name)
        self.train = tuple(train)
        self.test = tuple(test)
        self.name = name
        self.metadata = dict(metadata or {})

    @property
    def n_features(self) -> int:
        return self.train[0].n_features

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one row of every concept (see :attr:`Concept.row_shape`)."""
        return self.train[0].row_shape

    @property
    def train_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.train)

    @property
    def test_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.test)

    def __repr__(self) -> str:
        shape = self.row_shape
        rows = (
            f"window={shape[0]}, features={shape[1]}"
            if len(shape) == 2
            else f"features={self.n_features}"
        )
        return (
            f"ConceptDataset({self.name!r}, train={list(self.train_names)}, "
            f"test={list(self.test_names)}, {rows})"
        )
