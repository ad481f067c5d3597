"""Bounded memories of training rows used by replay and sliding-window strategies:
:class:`ReservoirBuffer` (a uniform sample of every row seen; needs no concept boundaries),
:class:`ConceptBalancedBuffer` (an equal share of the capacity per concept, told the concept of
each batch) and :class:`RingBuffer` (the last ``capacity`` rows, a sliding window).

All three keep their rows in one array that grows with the rows it holds (doubling, never beyond
``capacity``, so ``capacity = 10**9`` with 300 rows of data holds 300 rows, not 10**9): adding never
re-concatenates the history, a buffer never holds more than ``capacity`` rows, and once a non-empty
batch was added it is never empty. Randomness comes only from the ``numpy.random.Generator`` passed in.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> b = ReservoirBuffer(5)
>>> for _ in range(4):
...     b.add(np.arange(6.0).reshape(3, 2), rng)
>>> len(b), b.n_seen, b.view().shape
(5, 12, (5, 2))
"""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError
from ..validation import Integral, Interval, check

__all__ = ["ReservoirBuffer", "ConceptBalancedBuffer", "RingBuffer", "check_capacity"]


def check_capacity(value, who: str, what: str = "buffer_size", minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``, or a CladValueError naming ``who`` and ``what``."""
    check(who, {what: value}, {what: [Interval(Integral, minimum, None, closed="left")]})
    return int(value)


def _as_rows(X) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim not in (2, 3):
        raise CladValueError(
            f"buffer: expected a 2-D array (rows x features) or 3-D windows, got shape {X.shape}"
        )
    return X


def _room(data: np.ndarray | None, X: np.ndarray, rows: int, capacity: int) -> np.ndarray:
    """Storage for at least ``rows`` rows (at most ``capacity``): it grows with the data it holds,
    doubling, so that a large ``capacity`` never preallocates memory the data does not fill."""
    if data is not None and X.shape[1:] != data.shape[1:]:
        raise CladValueError(
            f"buffer: batch has rows of shape {X.shape[1:]}, buffer has {data.shape[1:]}"
        )
    have = 0 if data is None else data.shape[0]
    if rows <= have:
        return data
    size = min(capacity, max(rows, 2 * have))
    grown = np.empty((size, *X.shape[1:]), dtype=X.dtype if data is None else data.dtype)
    if have:
        grown[:have] = data
    return grown


class ReservoirBuffer:
    """A uniform random sample of at most ``capacity`` of all rows ever added (algorithm R).

    Row ``t`` of the stream (0-based) is stored if ``t < capacity``; otherwise a slot ``j`` is
    drawn uniformly in ``[0, t]`` and the row replaces slot ``j`` when ``j < capacity``. A batch is
    processed with one vectorised draw; when two rows of a batch pick the same slot the later one
    wins, exactly as the sequential algorithm would.
    """

    def __init__(self, capacity: int):
        # 0 is allowed: a share of a ConceptBalancedBuffer may have no slot
        self.capacity = check_capacity(capacity, "ReservoirBuffer", "capacity", minimum=0)
        self._data: np.ndarray | None = None
        self._n = 0
        self.n_seen = 0

    def __len__(self) -> int:
        return self._n

    def add(self, X, rng: np.random.Generator) -> None:
        """Offer the rows of ``X`` to the reservoir."""
        X = _as_rows(X)
        m = X.shape[0]
        if m == 0:
            return
        # rows that fill the free slots (the storage grows with them)
        free = min(self.capacity - self._n, m)
        self._data = _room(self._data, X, self._n + free, self.capacity)
        if free > 0:
            self._data[self._n : self._n + free] = X[:free]
            self._n += free
        rest = X[free:]
        if rest.shape[0]:
            t = self.n_seen + free + np.arange(rest.shape[0])  # 0-based stream positions
            j = rng.integers(0, t + 1)  # one uniform draw in [0, t] per row
            keep = np.flatnonzero(j < self.capacity)
            if keep.size:
                slots = j[keep]
                # the last row drawing a slot wins (sequential semantics)
                rev_slots, rev_first = np.unique(slots[::-1], return_index=True)
                rows = keep[::-1][rev_first]
                self._data[rev_slots] = rest[rows]
        self.n_seen += m

    def shrink(self, capacity: int, rng: np.random.Generator) -> None:
        """Keep a uniform random subset of ``capacity`` rows (still a uniform sample of the stream);
        ``capacity=0`` empties it (later rows are then only counted)."""
        capacity = check_capacity(capacity, "ReservoirBuffer", "capacity", minimum=0)
        if self._n > capacity:
            keep = np.sort(rng.choice(self._n, size=capacity, replace=False))
            self._data[:capacity] = self._data[keep]
            self._n = capacity
        if self._data is not None and capacity < self._data.shape[0]:
            self._data = self._data[:capacity].copy()
        self.capacity = capacity

    def grow(self, capacity: int) -> None:
        """Allow up to ``capacity`` rows from now on (rows already dropped stay dropped)."""
        capacity = check_capacity(capacity, "ReservoirBuffer", "capacity", minimum=0)
        self.capacity = max(capacity, self.capacity)

    def view(self) -> np.ndarray:
        """The stored rows (a view; do not keep it across :meth:`add`)."""
        if self._data is None:
            raise CladValueError("buffer is empty: nothing was added yet")
        return self._data[: self._n]


class ConceptBalancedBuffer:
    """At most ``capacity`` rows split equally between the concepts seen so far.

    With ``k`` concepts, each gets ``capacity // k`` slots and the ``capacity % k`` newest concepts
    one more; so when ``capacity < k`` the oldest concepts have no row left, and the buffer still
    holds exactly ``capacity`` rows (never more, never none). Each share is a
    :class:`ReservoirBuffer` of its concept's rows: a recurring concept adds to its own share, and
    a share that must shrink keeps a uniform random subset.
    """

    def __init__(self, capacity: int):
        self.capacity = check_capacity(capacity, "ConceptBalancedBuffer", "capacity")
        self._shares: dict[str, ReservoirBuffer] = {}
        self._order: list[str] = []  # concepts by first appearance

    def __len__(self) -> int:
        return sum(len(s) for s in self._shares.values())

    @property
    def concepts(self) -> tuple[str, ...]:
        return tuple(self._order)

    def quotas(self, order: list[str] | None = None) -> dict[str, int]:
        """Slots per concept for the given (or current) concepts."""
        order = self._order if order is None else order
        k = len(order)
        base, extra = divmod(self.capacity, k)
        return {c: base + (1 if i >= k - extra else 0) for i, c in enumerate(order)}

    def add(self, X, concept: str, rng: np.random.Generator) -> None:
        """Add the rows of one concept, re-balancing the shares."""
        X = _as_rows(X)
        if X.shape[0] == 0:
            return
        concept = str(concept)
        order = self._order if concept in self._shares else self._order + [concept]
        quotas = self.quotas(order)
        # shrink first (frees memory), then add into the concept's share
        for c, share in self._shares.items():
            if quotas[c] < share.capacity:
                share.shrink(quotas[c], rng)
        if concept not in self._shares:
            self._order.append(concept)
            self._shares[concept] = ReservoirBuffer(quotas[concept])
        share = self._shares[concept]
        if quotas[concept] > share.capacity:
            share.grow(quotas[concept])
        share.add(X, rng)

    def view(self) -> np.ndarray:
        """All stored rows, concept after concept (a new array)."""
        parts = [s.view() for s in self._shares.values() if len(s)]
        if not parts:
            raise CladValueError("buffer is empty: nothing was added yet")
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def rows_per_concept(self) -> dict[str, int]:
        return {c: len(self._shares[c]) for c in self._order}


class RingBuffer:
    """The last ``capacity`` rows added, stored in a circular array (a sliding window)."""

    def __init__(self, capacity: int):
        self.capacity = check_capacity(capacity, "RingBuffer", "capacity")
        self._data: np.ndarray | None = None
        self._n = 0
        self._head = 0  # next slot to write
        self.n_seen = 0

    def __len__(self) -> int:
        return self._n

    def add(self, X) -> None:
        X = _as_rows(X)
        m = X.shape[0]
        if m == 0:
            return
        # until the window is full, the head is at the end of the rows held: grow to fit the batch
        self._data = _room(self._data, X, min(self.capacity, self._n + m), self.capacity)
        self.n_seen += m
        if m >= self.capacity:  # only the last `capacity` rows survive
            self._data[:] = X[m - self.capacity :]
            self._head, self._n = 0, self.capacity
            return
        first = min(m, self.capacity - self._head)
        self._data[self._head : self._head + first] = X[:first]
        if m > first:
            self._data[: m - first] = X[first:]
        self._head = (self._head + m) % self.capacity
        self._n = min(self.capacity, self._n + m)

    def view(self) -> np.ndarray:
        """The window's rows, oldest first (a view when they do not wrap around, else one copy)."""
        if self._data is None:
            raise CladValueError("buffer is empty: nothing was added yet")
        if self._n < self.capacity or self._head == 0:
            return self._data[: self._n]
        return np.concatenate([self._data[self._head :], self._data[: self._head]])
