"""Sliding windows over time series: a transform any dataset's concepts can go through.

How a series of ``T`` steps becomes ``(T - window) // stride + 1`` windows of shape ``(window, f)``
(so a windowed concept's ``X`` is 3-D), how a window is labelled (``label``: ``"any"`` or
``"last"``), why no window spans two segments or the train/test split, what windows cost in memory
(one segment's windows are a read-only strided view, no copy) and how a point's score comes from
its windows (``score_rule``, :mod:`clad.core.time_axis`) are in the time-series guide
(``docs/guides/time-series.md``). Training concepts without labels stay without labels; a segment
shorter than ``window`` gives no window.

>>> import numpy as np
>>> X = np.arange(10.0).reshape(10, 1); y = np.zeros(10, dtype=int); y[6] = 1
>>> W = sliding_windows(X, 4, stride=2)
>>> W.shape, W[1, :, 0].tolist(), np.shares_memory(W, X)
((4, 4, 1), [2.0, 3.0, 4.0, 5.0], True)
>>> window_labels(y, 4, 2, "any").tolist(), window_labels(y, 4, 2, "last").tolist()
([0, 0, 1, 1], [0, 0, 0, 0])
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..core.concepts import Concept, ConceptDataset
from ..core.time_axis import POINT_RULES, TimeAxis
from ..errors import DataError
from . import _checks

__all__ = [
    "LABELS",
    "SCORE_RULES",
    "n_windows",
    "sliding_windows",
    "window_labels",
    "window_concept",
    "window_dataset",
    "check_window_params",
]

log = logging.getLogger(__name__)

#: how a window's label comes from its steps' labels
LABELS = ("any", "last")
#: how a point's score comes from the windows covering it
SCORE_RULES = POINT_RULES


def check_window_params(who: str, window, stride, label, score_rule="max") -> tuple[int, int, str]:
    """``window`` and ``stride`` as integers >= 1, ``label`` one of :data:`LABELS` and ``score_rule``
    one of :data:`SCORE_RULES`, or a clear error."""
    _checks.choice(who, "score_rule", score_rule, SCORE_RULES)
    return (
        _checks.integer(who, "window", window),
        _checks.integer(who, "stride", stride),
        _checks.choice(who, "label", label, LABELS),
    )


def n_windows(n_steps: int, window: int, stride: int) -> int:
    """How many windows a series of ``n_steps`` steps gives.

    >>> n_windows(10, 4, 2), n_windows(3, 4, 1)
    (4, 0)
    """
    return 0 if n_steps < window else (n_steps - window) // stride + 1


def sliding_windows(X: np.ndarray, window: int, stride: int = 1) -> np.ndarray:
    """The windows of one series ``X`` (steps x features) as a read-only view ``(n, window, features)``."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataError(f"windows: a series must be 2-D (steps x features), got shape {X.shape}")
    if X.shape[0] < window:
        return np.empty((0, window, X.shape[1]), dtype=X.dtype)
    # (T - window + 1, features, window): every start; keep every stride-th, steps before features
    return sliding_window_view(X, window, axis=0)[::stride].transpose(0, 2, 1)


def window_labels(y: np.ndarray, window: int, stride: int = 1, label: str = "any") -> np.ndarray:
    """One label per window of a series with step labels ``y``: 1 when any of its steps is
    anomalous (``"any"``) or when its last step is (``"last"``)."""
    y = np.asarray(y)
    n = n_windows(y.shape[0], window, stride)
    if label == "last":
        return y[window - 1 :: stride][:n].astype(np.int8)
    starts = np.arange(n) * stride
    counts = np.concatenate(([0], np.cumsum(y != 0)))
    return (counts[starts + window] - counts[starts] > 0).astype(np.int8)


def window_concept(
    name: str,
    segments: Sequence[tuple[np.ndarray, np.ndarray | None]],
    window: int,
    stride: int = 1,
    label: str = "any",
    series: Sequence[str] | None = None,
    score_rule: str = "max",
) -> Concept:
    """A concept of the windows of each ``(X, y)`` segment (``y`` None for unlabelled training data).
    A labelled concept gets a time axis of the segments that give windows (named ``series``, by
    default ``name:0``, ``name:1``, ...; windows mapped back to points by ``score_rule``).

    >>> import numpy as np
    >>> a, b = np.zeros((5, 2)), np.ones((3, 2))
    >>> c = window_concept("c", [(a, None), (b, None)], window=3)
    >>> c.X.shape, [float(w.mean()) for w in c.X]
    ((4, 3, 2), [0.0, 0.0, 0.0, 1.0])
    """
    window, stride, label = check_window_params("windows", window, stride, label, score_rule)
    series = (
        [f"{name}:{k}" for k in range(len(segments))]
        if series is None
        else [str(s) for s in series]
    )
    if len(series) != len(segments):
        raise DataError(
            f"windows: concept {name!r} has {len(segments)} segments and {len(series)} series names"
        )
    labelled = [seg[1] is not None for seg in segments]
    if any(labelled) and not all(labelled):
        raise DataError(
            f"windows: concept {name!r} has segments with and without labels; give labels to all or none"
        )
    parts, labels, kept = [], [], []
    for (X, y), title in zip(segments, series):
        W = sliding_windows(X, window, stride)
        if W.shape[0] == 0:
            log.warning(
                "windows: a segment of concept %r has %d steps, fewer than window=%d; it gives no window",
                name,
                np.shape(X)[0],
                window,
            )
            continue
        parts.append(W)
        if y is not None:
            if np.shape(y)[0] != np.shape(X)[0]:
                raise DataError(
                    f"windows: concept {name!r} has a segment of {np.shape(X)[0]} steps with "
                    f"{np.shape(y)[0]} labels; expected one label per step"
                )
            labels.append(window_labels(y, window, stride, label))
            kept.append((title, np.asarray(y)))
    if not parts:
        raise DataError(
            f"windows: concept {name!r} has no segment of at least window={window} steps; "
            "use a smaller window"
        )
    X = parts[0] if len(parts) == 1 else np.concatenate(parts)
    y = None if not labels else (labels[0] if len(labels) == 1 else np.concatenate(labels))
    time = None
    if kept:
        time = TimeAxis(
            tuple(t for t, _ in kept),
            tuple(len(p) for _, p in kept),
            np.concatenate([p for _, p in kept]),
            window=window,
            stride=stride,
            rule=score_rule,
        )
    return Concept(name, X, y, time=time)


def _segments(concept: Concept, lengths) -> list[tuple[np.ndarray, np.ndarray | None]]:
    if concept.X.ndim != 2:
        raise DataError(
            f"windows: concept {concept.name!r} is already windowed (shape {concept.X.shape})"
        )
    lengths = [concept.n_rows] if lengths is None else [int(k) for k in lengths]
    if sum(lengths) != concept.n_rows or min(lengths) < 0:
        raise DataError(
            f"windows: concept {concept.name!r} has {concept.n_rows} rows but its segment lengths "
            f"{lengths} add up to {sum(lengths)}"
        )
    cuts = np.cumsum([0] + lengths)
    return [
        (concept.X[a:b], None if concept.y is None else concept.y[a:b])
        for a, b in zip(cuts[:-1], cuts[1:])
    ]


def window_dataset(
    dataset: ConceptDataset,
    window: int,
    stride: int = 1,
    label: str = "any",
    score_rule: str = "max",
) -> ConceptDataset:
    """Every concept of ``dataset`` (rows in time order) turned into windows.

    A concept is one series unless ``dataset.metadata["segments"]`` gives, for ``"train"`` and
    ``"test"``, one list of segment lengths per concept (in order), as the ``telemanom`` loader
    does for the channels of a subsystem; windows never cross a segment boundary. The result's
    ``metadata["segments"]`` gives the windows each segment made. A test concept with a time axis
    (:attr:`Concept.time <clad.core.concepts.Concept.time>`) keeps its series names; ``score_rule``
    maps window scores back to points (see :mod:`clad.core.time_axis`).

    >>> import numpy as np
    >>> from clad import Concept, ConceptDataset
    >>> ds = ConceptDataset([Concept("A", np.zeros((20, 2)))], [Concept("A", np.zeros((12, 2)), np.r_[np.zeros(11), 1])])
    >>> w = window_dataset(ds, window=4, stride=4)
    >>> w.train[0].X.shape, w.test[0].y.tolist()
    ((5, 4, 2), [0, 0, 1])
    """
    window, stride, label = check_window_params("windows", window, stride, label, score_rule)
    segments = dataset.metadata.get("segments") or {}
    out, rows = {}, {}
    for role, concepts in (("train", dataset.train), ("test", dataset.test)):
        lengths = segments.get(role) or [None] * len(concepts)
        if len(lengths) != len(concepts):
            raise DataError(
                f"windows: metadata['segments'][{role!r}] has {len(lengths)} entries for "
                f"{len(concepts)} {role} concepts"
            )
        parts = [_segments(c, k) for c, k in zip(concepts, lengths)]
        names = [
            c.time.series if c.time is not None and len(c.time.series) == len(p) else None
            for c, p in zip(concepts, parts)
        ]
        out[role] = [
            window_concept(c.name, p, window, stride, label, series=t, score_rule=score_rule)
            for c, p, t in zip(concepts, parts, names)
        ]
        rows[role] = [[n_windows(len(X), window, stride) for X, _ in p] for p in parts]
    meta = dict(dataset.metadata)
    meta["windows"] = {"window": window, "stride": stride, "label": label}
    meta["segments"] = rows  # now in windows: the rows each segment gives
    return ConceptDataset(out["train"], out["test"], name=dataset.name, metadata=meta)
