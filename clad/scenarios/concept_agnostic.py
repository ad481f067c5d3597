"""Concept-agnostic scenario: one continuous stream of batches, no id and no boundary signal."""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ..core.memmap import release
from ..validation import COUNT, Integral, Interval
from .base import Scenario

__all__ = ["ConceptAgnostic", "stream_batches", "transition_segments"]


def stream_batches(arrays: Sequence[np.ndarray], batch_size: int) -> Iterator[tuple[np.ndarray, list[int]]]:
    """Cut the concatenation of ``arrays`` into batches of ``batch_size`` rows, lazily.

    Yields ``(batch, ended)`` where ``ended`` lists the indexes of the arrays whose last row is in
    this batch. A batch may span two (or more) arrays; only the very last batch of the stream may be
    shorter. A batch inside one array is a view of it (no copy, so memory-mapped data stay on
    disk); a batch that spans arrays is a copy of ``batch_size`` rows only. Once the consumer asks
    for the next batch, the pages of a memory-mapped source read for the previous one are given
    back (:func:`clad.core.memmap.release`), so reading a long stream does not grow the process.

    >>> import numpy as np
    >>> a, b = np.zeros((5, 1)), np.ones((3, 1))
    >>> [(len(x), ended) for x, ended in stream_batches([a, b], 3)]
    [(3, []), (3, [0]), (2, [1])]
    """
    pieces: list[np.ndarray] = []
    ended: list[int] = []
    filled = 0
    for k, arr in enumerate(arrays):
        start = 0
        n = arr.shape[0]
        while start < n:
            take = min(batch_size - filled, n - start)
            pieces.append(arr[start : start + take])
            filled += take
            start += take
            if start == n:
                ended.append(k)
            if filled == batch_size:
                yield (pieces[0] if len(pieces) == 1 else np.concatenate(pieces)), ended
                for piece in pieces:
                    release(piece)
                pieces, ended, filled = [], [], 0
    if filled:
        yield (pieces[0] if len(pieces) == 1 else np.concatenate(pieces)), ended
        for piece in pieces:
            release(piece)


def _interleave(tail: np.ndarray, head: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Merge ``tail`` (the end of one concept) and ``head`` (the start of the next), each in its
    own order; the chance that the next row comes from ``head`` grows linearly over the window."""
    a, b = len(tail), len(head)
    w = a + b
    from_head = np.empty(w, dtype=bool)
    left_a, left_b = a, b
    draws = rng.random(w)
    for t in range(w):
        if left_a == 0:
            take_head = True
        elif left_b == 0:
            take_head = False
        else:
            take_head = draws[t] < (t + 0.5) / w
        from_head[t] = take_head
        left_b -= take_head
        left_a -= not take_head
    out = np.empty((w, tail.shape[1]), dtype=np.result_type(tail, head))
    out[~from_head] = tail
    out[from_head] = head
    return out


def transition_segments(arrays: Sequence[np.ndarray], transition: int, rng: np.random.Generator):
    """The stream's pieces when each change of concept is spread over ``transition`` rows.

    Returns ``(segments, ends)``: the arrays to stream in order, and for each the index of the
    concept that ends with it (or None). Around each boundary the last ``transition // 2`` rows
    of one concept and the first ``transition // 2`` rows of the next (at most half of either
    concept) are interleaved by :func:`_interleave`; a concept ends after its transition to the
    next is over. The other rows are views of the original arrays; only the windows are copies.

    >>> import numpy as np
    >>> segs, ends = transition_segments([np.zeros((6, 1)), np.ones((6, 1))], 4, np.random.default_rng(0))
    >>> [len(s) for s in segs], ends
    ([4, 4, 4], [None, 0, 1])
    """
    n = len(arrays)
    half = transition // 2
    head = [0] + [min(half, arrays[k].shape[0] // 2) for k in range(1, n)]
    tail = [min(half, arrays[k].shape[0] // 2) for k in range(n - 1)] + [0]
    segments, ends = [], []
    for k, arr in enumerate(arrays):
        core = arr[head[k] : arr.shape[0] - tail[k]]
        mixed = None
        if k < n - 1 and tail[k] + head[k + 1] > 0:
            mixed = _interleave(arr[arr.shape[0] - tail[k]:], arrays[k + 1][: head[k + 1]], rng)
        # head and tail take at most half of a concept each, so a core is empty only when the
        # concept's tail goes into a window, which then ends the concept
        if len(core):
            segments.append(core)
            ends.append(k if mixed is None else None)
        if mixed is not None:
            segments.append(mixed)
            ends.append(k)
    return segments, ends


class ConceptAgnostic(Scenario):
    """The training concepts, in order, form one stream cut into batches of ``batch_size`` rows.

    The strategy gets ``learn(batch)`` calls only: no id, and no boundary signal (a batch may
    span two concepts, and batches are never cut short at a boundary). The evaluator knows the
    boundaries: R gets a row at the end of every training concept (after the batch holding the
    concept's last row). With ``anytime_every=k`` the test concepts are also scored every ``k``
    batches into the *anytime* matrix, whose rows are labelled by the number of rows seen.

    With ``transition=w`` a change of concept is gradual rather than abrupt: over ``w`` rows around
    each boundary the rows of the two concepts are interleaved, the share of the new one growing
    linearly (seeded by ``random_state``); every row is still streamed exactly once, each concept
    in its own order, and R's row for a concept comes after its transition to the next is over.

    Parameters
    ----------
    batch_size : int, default 256
    anytime_every : int or None, default None
    transition : int, default 0
        Rows over which each change of concept is spread (0: abrupt).
    random_state : int or None
        Seed of the interleaving (a run gives it one derived from its seed).
    n_jobs : int or None, default None
        Threads scoring the test concepts (see :class:`~clad.scenarios.Scenario`).
    """

    name = "concept_agnostic"
    gives_concept_id = False
    gives_boundaries = False

    _parameter_constraints = {"batch_size": [COUNT], "anytime_every": [None, COUNT],
                              "transition": [Interval(Integral, 0, None, closed="left")]}

    def __init__(self, batch_size: int = 256, anytime_every: int | None = None, transition: int = 0,
                 random_state: int | None = None, n_jobs: int | None = None):
        self.batch_size = batch_size
        self.anytime_every = anytime_every
        self.transition = transition
        self.random_state = random_state
        self.n_jobs = n_jobs

    def run(self, dataset, strategy, evaluator):
        self.prepare(strategy, evaluator)
        names = dataset.train_names
        rows_seen = 0
        arrays = [c.X for c in dataset.train]
        ends = list(range(len(arrays)))
        if self.transition:
            arrays, ends = transition_segments(arrays, int(self.transition),
                                               np.random.default_rng(self.random_state))
        batches = stream_batches(arrays, int(self.batch_size))
        for b, (batch, ended_segments) in enumerate(batches, start=1):
            ended = [ends[i] for i in ended_segments if ends[i] is not None]
            with evaluator.learning():
                strategy.learn(batch)
            rows_seen += batch.shape[0]
            for k in ended:
                evaluator.end_of_concept(strategy, names[k], with_ids=False)
            if self.anytime_every is not None and b % self.anytime_every == 0:
                evaluator.anytime(strategy, rows_seen)
        return evaluator.result()
