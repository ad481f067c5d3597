"""Concept-agnostic scenario: one continuous stream of batches, no id and no boundary signal."""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ..errors import CladValueError
from ..memmap import release
from .base import Scenario

__all__ = ["ConceptAgnostic", "stream_batches"]


def stream_batches(arrays: Sequence[np.ndarray], batch_size: int) -> Iterator[tuple[np.ndarray, list[int]]]:
    """Cut the concatenation of ``arrays`` into batches of ``batch_size`` rows, lazily.

    Yields ``(batch, ended)`` where ``ended`` lists the indexes of the arrays whose last row is in
    this batch. A batch may span two (or more) arrays; only the very last batch of the stream may be
    shorter. A batch inside one array is a view of it (no copy, so memory-mapped data stay on
    disk); a batch that spans arrays is a copy of ``batch_size`` rows only. Once the consumer asks
    for the next batch, the pages of a memory-mapped source read for the previous one are given
    back (:func:`clad.memmap.release`), so reading a long stream does not grow the process.

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


class ConceptAgnostic(Scenario):
    """The training concepts, in order, form one stream cut into batches of ``batch_size`` rows.

    The strategy gets ``learn(batch)`` calls only: no id, and no boundary signal (a batch may
    span two concepts, and batches are never cut short at a boundary). The evaluator knows the
    boundaries: R gets a row at the end of every training concept (after the batch holding the
    concept's last row). With ``anytime_every=k`` the test concepts are also scored every ``k``
    batches into the *anytime* matrix, whose rows are labelled by the number of rows seen.

    Parameters
    ----------
    batch_size : int, default 256
    anytime_every : int or None, default None
    n_jobs : int or None, default None
        Threads scoring the test concepts (see :class:`~clad.scenarios.Scenario`).
    """

    name = "concept_agnostic"
    gives_concept_id = False
    gives_boundaries = False

    def __init__(self, batch_size: int = 256, anytime_every: int | None = None, n_jobs: int | None = None):
        self.batch_size = batch_size
        self.anytime_every = anytime_every
        self.n_jobs = n_jobs

    def _validate(self):
        super()._validate()
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, (int, np.integer)) or self.batch_size < 1:
            raise CladValueError(f"concept_agnostic: batch_size={self.batch_size!r}; expected an integer >= 1")
        k = self.anytime_every
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise CladValueError(f"concept_agnostic: anytime_every={k!r}; expected None or an integer >= 1")

    def run(self, dataset, strategy, evaluator):
        self.prepare(strategy, evaluator)
        names = dataset.train_names
        rows_seen = 0
        batches = stream_batches([c.X for c in dataset.train], int(self.batch_size))
        for b, (batch, ended) in enumerate(batches, start=1):
            with evaluator.learning():
                strategy.learn(batch)
            rows_seen += batch.shape[0]
            anytime = self.anytime_every is not None and b % self.anytime_every == 0
            for k in ended:
                evaluator.evaluate(strategy, step=names[k], with_ids=False,
                                   anytime_rows_seen=rows_seen if anytime else None)
                anytime = False  # recorded once
            if anytime:
                evaluator.evaluate(strategy, step="", with_ids=False, concept_end=False,
                                   anytime_rows_seen=rows_seen)
        return evaluator.result()
