"""Replay and sliding-window strategies: a fresh detector trained on a bounded memory of rows."""

from __future__ import annotations

import numpy as np

from ..validation import COUNT, StrOptions
from .base import Strategy
from .memory import ConceptBalancedBuffer, ReservoirBuffer, RingBuffer

__all__ = ["Replay", "BalancedReplay", "Window", "REPLAY_MODES"]

#: ``mode`` values of the replay strategies
REPLAY_MODES = ("with_new", "buffer_only")


class Replay(Strategy):
    """Replay from a reservoir: a uniform sample of at most ``buffer_size`` of all rows seen.

    At every ``learn(X)`` a fresh clone of the detector is fitted on

    * ``mode="with_new"`` (default): the buffer as it was **before** this call plus all of ``X``;
    * ``mode="buffer_only"``: the buffer **after** ``X`` was offered to it (at most
      ``buffer_size`` rows),

    and then (for ``with_new``) ``X`` is offered to the buffer. The buffer is a
    :class:`~clad.strategies.memory.ReservoirBuffer` (Vitter's algorithm R): it needs neither ids
    nor boundaries, so Replay runs in every scenario, including the concept-agnostic stream.
    Sampling uses ``numpy.random.default_rng(random_state)``, created at the first ``learn``.

    Parameters
    ----------
    detector : detector prototype (cloned, never fitted)
    buffer_size : int >= 1, default 1000
    mode : {"with_new", "buffer_only"}
    random_state : int or None

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = Replay(IsolationForest(n_estimators=10, random_state=0), buffer_size=60, random_state=0)
    >>> s = s.learn(np.zeros((50, 2))).learn(np.ones((50, 2)))
    >>> s.memory_rows(), s.n_trained_rows_
    (60, 100)
    """

    replicas_problem = None

    reads_concept_id = False
    step_inputs = ("rows",)
    _parameter_constraints = {"buffer_size": [COUNT], "mode": [StrOptions(REPLAY_MODES)]}

    def __init__(
        self,
        detector=None,
        buffer_size: int = 1000,
        mode: str = "with_new",
        random_state: int | None = None,
    ):
        self.detector = detector
        self.buffer_size = buffer_size
        self.mode = mode
        self.random_state = random_state

    def _make_buffer(self):
        return ReservoirBuffer(self.buffer_size)

    def _offer(self, X, concept_id) -> None:
        self.buffer_.add(X, self.rng_)

    def learn(self, X, concept_id=None):
        if not hasattr(self, "buffer_"):
            self.buffer_ = self._make_buffer()
            self.rng_ = np.random.default_rng(self.random_state)
        if self.mode == "buffer_only":
            self._offer(X, concept_id)
            train = self.buffer_.view()
        else:
            train = X if len(self.buffer_) == 0 else np.concatenate([self.buffer_.view(), X])
        self.detector_ = self._fit_new(train)
        self.n_trained_rows_ = int(train.shape[0])
        if self.mode == "with_new":
            self._offer(X, concept_id)
        return self


class BalancedReplay(Replay):
    """Replay from a concept-balanced buffer: ``buffer_size`` rows shared equally by the concepts.

    Each ``learn`` call is one concept (its ``concept_id`` when the scenario gives one, else a new
    concept per call), so it needs boundaries (``requires_boundaries = True``: refused in the
    concept-agnostic stream). With ``k`` concepts each keeps ``buffer_size // k`` rows and the
    ``buffer_size % k`` newest one more (see
    :class:`~clad.strategies.memory.ConceptBalancedBuffer`); a recurring id adds to its own share.
    ``mode`` works as in :class:`Replay`.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = BalancedReplay(IsolationForest(n_estimators=10, random_state=0), buffer_size=30, random_state=0)
    >>> for k in range(3):
    ...     s = s.learn(np.full((50, 2), float(k)))
    >>> s.buffer_.rows_per_concept()
    {'0': 10, '1': 10, '2': 10}
    """

    requires_boundaries = True
    reads_concept_id = True

    def _make_buffer(self):
        return ConceptBalancedBuffer(self.buffer_size)

    def _offer(self, X, concept_id) -> None:
        key = concept_id if concept_id is not None else str(self.n_learn_calls_)
        self.buffer_.add(X, key, self.rng_)


class Window(Strategy):
    """Sliding window: a fresh detector fitted on the last ``window_size`` rows seen.

    The natural baseline of the concept-agnostic stream (it needs neither ids nor boundaries).
    Rows are kept in a :class:`~clad.strategies.memory.RingBuffer` written in place, so a step costs
    the batch plus at most one copy of the window, never a re-concatenation of the history.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = Window(IsolationForest(n_estimators=10, random_state=0), window_size=70)
    >>> s = s.learn(np.zeros((50, 2))).learn(np.ones((50, 2)))
    >>> s.memory_rows(), float(s.buffer_.view()[:20].mean()), float(s.buffer_.view()[20:].mean())
    (70, 0.0, 1.0)
    """

    replicas_problem = None

    reads_concept_id = False
    uses_random_state = False
    step_inputs = ("rows",)
    _parameter_constraints = {"window_size": [COUNT]}

    def __init__(self, detector=None, window_size: int = 1000, random_state: int | None = None):
        self.detector = detector
        self.window_size = window_size
        self.random_state = random_state

    def learn(self, X, concept_id=None):
        if not hasattr(self, "buffer_"):
            self.buffer_ = RingBuffer(self.window_size)
        self.buffer_.add(X)
        self.detector_ = self._fit_new(self.buffer_.view())
        return self
