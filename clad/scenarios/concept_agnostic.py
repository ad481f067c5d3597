"""Concept-agnostic scenario: one continuous stream of batches, no id and no boundary signal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from ..core.memmap import release
from ..errors import CladValueError
from ..validation import COUNT, Integral, Interval, StrOptions
from .base import Scenario

__all__ = ["ConceptAgnostic", "stream_batches"]


def stream_batches(
    arrays: Sequence[np.ndarray], batch_size: int
) -> Iterator[tuple[np.ndarray, list[int]]]:
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
    pieces, ended, filled = [], [], 0
    for k, arr in enumerate(arrays):
        start, n = 0, arr.shape[0]
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


def _interleave_mask(a: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """Which of the ``a + b`` rows of a window come from the head of the next concept: the chance
    that the next row does grows linearly over the window (``a`` tail rows, ``b`` head rows)."""
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
    return from_head


def _plan(lengths: Sequence[int], transition: int, rng: np.random.Generator | None):
    """The stream's segments as ``(k, start, stop, mask, head_stop)`` and the concept each ends.

    A *core* segment is rows ``start:stop`` of concept ``k`` (``mask`` None); a *window* merges
    rows ``start:`` of concept ``k`` with rows ``:head_stop`` of concept ``k + 1`` as ``mask`` says
    (True: from the head). The same plan cuts every per-row array (features, labels, owners) alike.
    """
    n = len(lengths)
    if not transition:
        return [(k, 0, lengths[k], None, 0) for k in range(n)], list(range(n))
    half = transition // 2
    head = [0] + [min(half, lengths[k] // 2) for k in range(1, n)]
    tail = [min(half, lengths[k] // 2) for k in range(n - 1)] + [0]
    plan, ends = [], []
    for k in range(n):
        mixed = None
        if k < n - 1 and tail[k] + head[k + 1] > 0:
            mask = _interleave_mask(tail[k], head[k + 1], rng)
            mixed = (k, lengths[k] - tail[k], lengths[k], mask, head[k + 1])
        # head and tail take at most half of a concept each, so a core is empty only when the
        # concept's tail goes into a window, which then ends the concept
        if lengths[k] - tail[k] - head[k] > 0:
            plan.append((k, head[k], lengths[k] - tail[k], None, 0))
            ends.append(k if mixed is None else None)
        if mixed is not None:
            plan.append(mixed)
            ends.append(k)
    return plan, ends


def _position(plan, k: int, nth: int) -> int:
    """The stream position just after the ``nth`` row (1-based) of concept ``k`` under ``plan``.

    >>> plan, _ = _plan([4, 4], 0, None)
    >>> [_position(plan, 0, i) for i in (1, 4)], _position(plan, 1, 4)
    ([1, 4], 8)
    """
    offset, before = 0, 0
    for seg_k, start, stop, mask, head_stop in plan:
        length = stop - start if mask is None else mask.size
        if mask is None:
            if seg_k == k:
                if before + length >= nth:
                    return offset + nth - before
                before += length
            offset += length
            continue
        mine = ~mask if seg_k == k else (mask if seg_k + 1 == k else None)
        if mine is not None:
            count = int(mine.sum())
            if before + count >= nth:
                return offset + int(np.flatnonzero(mine)[nth - before - 1]) + 1
            before += count
        offset += length
    raise CladValueError(f"concept {k} has fewer than {nth} rows in the stream")


def _materialize(plan, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The segments of ``plan`` cut from ``arrays`` (views for cores, copies for windows)."""
    out = []
    for k, start, stop, mask, head_stop in plan:
        if mask is None:
            out.append(arrays[k][start:stop])
            continue
        tail, head = arrays[k][start:stop], arrays[k + 1][:head_stop]
        seg = np.empty((mask.size,) + tail.shape[1:], dtype=np.result_type(tail, head))
        seg[~mask] = tail
        seg[mask] = head
        out.append(seg)
    return out


#: when R's row of a concept is evaluated if the batch holding its last row also holds later rows
EVALUATE = ("before_crossing_batch", "after_crossing_batch")

#: what an evaluation of the stream fills: the R row of a concept at its end, or an anytime row
END_OF_CONCEPT, ANYTIME = "end_of_concept", "anytime"


@dataclass(frozen=True)
class Evaluation:
    """An evaluation the stream schedules: after ``position`` rows of the stream, for training
    concept ``concept`` (its index), of ``kind`` :data:`END_OF_CONCEPT` or :data:`ANYTIME`."""

    position: int
    concept: int
    kind: str


class Schedule:
    """The evaluations of one stream in stream order (at one position, a concept's R row before an
    anytime row), handed out batch by batch (:meth:`due`).

    >>> s = Schedule([Evaluation(10, 0, END_OF_CONCEPT), Evaluation(4, 0, ANYTIME)])
    >>> [e.position for e in s.due(0, 8, newest_concept=0, before_crossing=True)[1]]
    [4]
    >>> early, late = s.due(8, 16, newest_concept=1, before_crossing=True)
    >>> [e.kind for e in early], late
    (['end_of_concept'], [])
    """

    def __init__(self, evaluations: Sequence[Evaluation]):
        self.evaluations = sorted(evaluations, key=lambda e: (e.position, e.kind == ANYTIME))
        self._next = 0

    def due(
        self, start: int, stop: int, newest_concept: int, before_crossing: bool
    ) -> tuple[list[Evaluation], list[Evaluation]]:
        """The evaluations at stream positions up to ``stop`` not handed out yet, as those made
        before the batch of rows ``start:stop`` is learned and those made after it: one inside the
        batch, for concept k, comes before it when ``before_crossing`` and the batch holds a later
        concept's rows (``newest_concept > k``: no look-ahead), otherwise after it."""
        due = []
        while self._next < len(self.evaluations) and self.evaluations[self._next].position <= stop:
            due.append(self.evaluations[self._next])
            self._next += 1
        early = [
            ev
            for ev in due
            if before_crossing and start and ev.position < stop and newest_concept > ev.concept
        ]
        return early, [ev for ev in due if ev not in early]


@dataclass
class _Stream:
    """A dataset's training concepts as one stream: their names and sizes, the batches (rows, the
    concept each row comes from, their labels or None) and the evaluations the stream schedules."""

    names: tuple[str, ...]
    sizes: list[int]
    batches: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]
    schedule: Schedule


class ConceptAgnostic(Scenario):
    """The training concepts, in order, form one stream cut into batches of ``batch_size`` rows.

    The strategy gets ``learn(batch)`` calls only: no id, and no boundary signal (a batch may
    span two concepts, and batches are never cut short at a boundary: every batch but the last
    has ``batch_size`` rows). The evaluator knows the boundaries: R gets a row per training concept.
    When R's row of a concept is evaluated (``evaluate``; by default with no look-ahead), what
    ``learned_rows`` records, anytime evaluation (``anytime_every``, ``anytime_per_concept``) and
    prequential evaluation (``prequential``): ``docs/guides/streams.md``.

    With ``transition=w`` a change of concept is gradual rather than abrupt: over ``w`` rows around
    each boundary the rows of the two concepts are interleaved, the share of the new one growing
    linearly (seeded by ``random_state``); every row is still streamed exactly once, each concept
    in its own order, and a concept ends after its transition to the next is over (so its R row
    has seen rows of the next concept: ``learned_rows`` says how many).

    Parameters
    ----------
    batch_size : int, default 256
    evaluate : {"before_crossing_batch", "after_crossing_batch"}, default "before_crossing_batch"
    anytime_every : int or None, default None
    anytime_per_concept : int or None, default None
    prequential : bool, default False
    prequential_window : int, default 10
        Batches in the prequential window.
    transition : int, default 0
        Rows over which each change of concept is spread (0: abrupt).
    random_state : int or None
        Seed of the interleaving (a run gives it one derived from its seed).
    n_jobs : int or None, default None
        Threads scoring the test concepts (see :class:`~clad.scenarios.Scenario`).

    Examples
    --------
    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.core.evaluation import Evaluator
    >>> from clad.datasets import make_synthetic
    >>> from clad.strategies import Naive
    >>> ds = make_synthetic(n_concepts=3, random_state=0)
    >>> ev = ConceptAgnostic(batch_size=70).run(ds, Naive(IsolationForest(n_estimators=5, random_state=0)),
    ...                                         Evaluator(ds.test))
    >>> [row["later"] for row in ev.learned_rows]
    [0, 0, 0]
    """

    name = "concept_agnostic"
    gives_concept_id = False
    gives_boundaries = False

    _parameter_constraints = {
        "batch_size": [COUNT],
        "anytime_every": [None, COUNT],
        "anytime_per_concept": [None, COUNT],
        "transition": [Interval(Integral, 0, None, closed="left")],
        "evaluate": [StrOptions(EVALUATE)],
        "prequential": ["boolean"],
        "prequential_window": [COUNT],
    }

    def __init__(
        self,
        batch_size: int = 256,
        anytime_every: int | None = None,
        transition: int = 0,
        random_state: int | None = None,
        n_jobs: int | None = None,
        evaluate: str = "before_crossing_batch",
        anytime_per_concept: int | None = None,
        prequential: bool = False,
        prequential_window: int = 10,
    ):
        self.batch_size = batch_size
        self.anytime_every = anytime_every
        self.transition = transition
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.evaluate = evaluate
        self.anytime_per_concept = anytime_per_concept
        self.prequential = prequential
        self.prequential_window = prequential_window

    def _validate(self):
        super()._validate()
        if self.anytime_every is not None and self.anytime_per_concept is not None:
            raise CladValueError(
                "concept_agnostic: set anytime_every or anytime_per_concept, not both "
                f"(got {self.anytime_every!r} and {self.anytime_per_concept!r})"
            )

    def _labels(self, dataset) -> list[np.ndarray] | None:
        if not self.prequential:
            return None
        ys = [c.y for c in dataset.train]
        if any(y is None for y in ys) or not any(np.any(np.asarray(y) == 1) for y in ys):
            raise CladValueError(
                f"concept_agnostic: prequential=true needs training concepts with labelled anomalies; dataset "
                f"{dataset.name!r} has none (use a recipe with contamination > 0)"
            )
        return [np.asarray(y) for y in ys]

    def _anytime_points(self, plan, sizes) -> list[tuple[int, int]]:
        """``(stream position, concept)`` of each per-concept anytime evaluation, in stream order:
        the position just after the ``ceil(h * n / H)``-th row of the concept, h = 1..H."""
        H = int(self.anytime_per_concept)
        points = []
        for k, n in enumerate(sizes):
            if H > n:  # more evaluations than rows: the same model evaluated again and again
                raise CladValueError(
                    f"concept_agnostic: anytime_per_concept={H} is more than the {n} rows of "
                    f"training concept {k}; allowed: at most one evaluation per row "
                    f"(anytime_per_concept <= {min(sizes)})"
                )
            for h in range(1, H + 1):
                points.append((_position(plan, k, max(1, -(-h * n // H))), k))
        return sorted(points)

    def run(self, dataset, strategy, evaluator):
        self.prepare(strategy, evaluator)
        stream = self._stream(dataset)
        learned = np.zeros(len(stream.sizes), dtype=np.int64)  # rows learned of each concept
        rows_seen = 0
        for b, (batch, owner, y) in enumerate(stream.batches, start=1):
            stop = rows_seen + batch.shape[0]
            early, late = stream.schedule.due(
                rows_seen,
                stop,
                int(owner.max()),
                before_crossing=self.evaluate == "before_crossing_batch",
            )
            self._evaluate(early, strategy, evaluator, stream, learned, rows_seen)
            if y is not None and rows_seen:
                evaluator.prequential(strategy, batch, y, rows_seen, int(self.prequential_window))
            with evaluator.learning(f"batch {b} (stream rows {rows_seen} to {stop - 1})"):
                strategy.learn(batch)
            rows_seen = stop
            learned += np.bincount(owner, minlength=len(stream.sizes))
            self._evaluate(late, strategy, evaluator, stream, learned, rows_seen)
            if self.anytime_every is not None and b % self.anytime_every == 0:
                evaluator.anytime(strategy, rows_seen, task=int(owner[-1]))
        return evaluator.result()

    def _stream(self, dataset) -> _Stream:
        """The training concepts of ``dataset`` as one stream (each in its own order, gradual
        transitions interleaved by ``random_state``), cut into batches, with its evaluations."""
        arrays = [c.X for c in dataset.train]
        sizes = [a.shape[0] for a in arrays]
        labels = self._labels(dataset)
        rng = np.random.default_rng(self.random_state) if self.transition else None
        plan, ends = _plan(sizes, int(self.transition), rng)
        # which concept each row comes from, without a copy (a broadcast scalar per concept)
        owners = _materialize(
            plan, [np.broadcast_to(np.int32(k), (n,)) for k, n in enumerate(sizes)]
        )
        seg_end = np.cumsum([len(o) for o in owners])
        evaluations = [
            Evaluation(int(seg_end[i]), k, END_OF_CONCEPT)
            for i, k in enumerate(ends)
            if k is not None
        ]
        if self.anytime_per_concept is not None:
            evaluations += [Evaluation(p, k, ANYTIME) for p, k in self._anytime_points(plan, sizes)]
        batch_size = int(self.batch_size)
        parts = [
            stream_batches(_materialize(plan, arrays), batch_size),
            stream_batches(owners, batch_size),
        ]
        if labels is not None:
            parts.append(stream_batches(_materialize(plan, labels), batch_size))
        batches = ((p[0][0], p[1][0], p[2][0] if len(p) > 2 else None) for p in zip(*parts))
        return _Stream(dataset.train_names, sizes, batches, Schedule(evaluations))

    @staticmethod
    def _evaluate(
        evaluations, strategy, evaluator, stream: _Stream, learned: np.ndarray, rows_seen: int
    ) -> None:
        for ev in evaluations:
            k = ev.concept
            if ev.kind == END_OF_CONCEPT:
                evaluator.end_of_concept(
                    strategy,
                    stream.names[k],
                    with_ids=False,
                    learned_rows={
                        "concept": int(learned[k]),
                        "later": int(learned[k + 1 :].sum()),
                        "size": int(stream.sizes[k]),
                    },
                )
            else:
                evaluator.anytime(strategy, rows_seen, task=k)
