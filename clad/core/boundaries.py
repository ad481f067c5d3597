"""Scoring detected changes against the true concept boundaries of a training stream.

Rows of the training stream are numbered from 0 in learning order (concept after concept; a
row of a windowed concept is a window). A *boundary* is the row at which a new training concept
starts; :func:`stream_boundaries` lists them. With a gradual transition
(``concept_agnostic(transition=w)``) the rows of two concepts are interleaved around it and the
boundary is the middle of the transition.

:func:`score_detections` matches detections (rows at which a change detector fired) to boundaries:

* boundary ``b_k`` is **detected** by the first detection ``d`` with ``b_k <= d < b_{k+1}`` (the
  next boundary, or the end of the stream), provided ``d - b_k <= max_delay`` when a
  ``max_delay`` is given; its **delay** is ``d - b_k`` rows;
* a boundary with no such detection is **missed**;
* every other detection is a **false alarm**: before the first boundary, a second or later
  detection between two boundaries, or one later than ``max_delay``.

>>> r = score_detections([40, 130, 140, 300], boundaries=[100, 250], n_rows=400)
>>> r["delays"], r["detected"], r["missed"], r["false_alarms"], r["mean_delay"]
([30, 50], 2, 0, 2, 40.0)
>>> score_detections([40, 130, 140, 300], [100, 250], 400, max_delay=40)["delays"]
[30, None]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import CladValueError

__all__ = ["score_detections", "stream_boundaries"]


def stream_boundaries(dataset) -> tuple[int, ...]:
    """The row at which each training concept after the first starts, in the training stream of
    ``dataset`` (a :class:`~clad.core.concepts.ConceptDataset`).

    >>> import numpy as np
    >>> from clad import Concept, ConceptDataset
    >>> t = Concept("A", np.zeros((4, 1)), np.r_[0, 0, 1, 1])
    >>> stream_boundaries(ConceptDataset([Concept("A", np.zeros((5, 1))), Concept("B", np.zeros((3, 1))),
    ...                                   Concept("A", np.zeros((2, 1)))], [t]))
    (5, 8)
    """
    return tuple(int(b) for b in np.cumsum([c.n_rows for c in dataset.train])[:-1])


def score_detections(
    detections: Sequence[int], boundaries: Sequence[int], n_rows: int, max_delay: int | None = None
) -> dict:
    """Delays, missed boundaries and false alarms of ``detections`` (see the module docstring).

    Returns a JSON-ready dict: ``boundaries``, ``detections`` (sorted), ``delays`` (one per
    boundary, None when missed), ``detected``, ``missed``, ``false_alarms``, ``mean_delay`` (None
    when nothing was detected), ``n_rows`` and ``max_delay``.
    """
    bounds = [int(b) for b in boundaries]
    dets = sorted(int(d) for d in detections)
    if any(b2 <= b1 for b1, b2 in zip(bounds, bounds[1:])) or any(
        not 0 < b < n_rows for b in bounds
    ):
        raise CladValueError(
            f"boundaries={bounds}; expected increasing rows inside the stream (0, {n_rows})"
        )
    if any(not 0 <= d < n_rows for d in dets):
        raise CladValueError(f"detections={dets}; expected rows of the stream [0, {n_rows})")
    if max_delay is not None and (
        isinstance(max_delay, bool) or not isinstance(max_delay, (int, np.integer)) or max_delay < 0
    ):
        raise CladValueError(f"max_delay={max_delay!r}; expected None or an integer >= 0 (rows)")
    ends = bounds[1:] + [int(n_rows)]
    delays: list[int | None] = []
    used = set()
    for b, end in zip(bounds, ends):
        first = next((d for d in dets if b <= d < end), None)
        if first is not None and (max_delay is None or first - b <= max_delay):
            delays.append(first - b)
            used.add(first)
        else:
            delays.append(None)
    found = [d for d in delays if d is not None]
    return {
        "boundaries": bounds,
        "detections": dets,
        "delays": delays,
        "detected": len(found),
        "missed": len(bounds) - len(found),
        "false_alarms": len(dets) - len(used),
        "mean_delay": float(np.mean(found)) if found else None,
        "n_rows": int(n_rows),
        "max_delay": None if max_delay is None else int(max_delay),
    }
