"""The baselines every continual comparison needs: Naive (and its fine-tuning form) and Cumulative."""

from __future__ import annotations


from ..core.buffers import RowBuffer
from ..detectors import detector_name
from ..errors import CladValueError
from ..core.steps import fit_fresh, fit_further, fit_owned
from .base import Strategy

__all__ = ["Naive", "FineTune", "Cumulative"]


class Naive(Strategy):
    """Train on the newest data only.

    With ``warm_start=False`` (default) each ``learn`` call fits a fresh clone of the prototype:
    the lower bound of continual learning, whatever was learned before is forgotten. With
    ``warm_start=True`` the first call fits a clone and every later call *continues training the
    same detector* with its ``partial_fit(X)`` (fine-tuning; the registered name ``fine_tune``,
    for detectors that have ``partial_fit`` such as clad's PyTorch detectors). Works in every
    scenario.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = Naive(IsolationForest(n_estimators=10, random_state=0))
    >>> s = s.learn(np.zeros((50, 2))).learn(np.ones((50, 2)))
    >>> s.n_learn_calls_, s.memory_rows()
    (2, 0)
    """

    replicas_problem = None

    reads_concept_id = False
    uses_random_state = False
    #: a fresh fit on the newest rows; fine-tuning: the first fit, then the state it starts from and
    #: the rows it is trained further on (a shared state is handed out as a copy)
    step_inputs = ("rows", "state")

    def __init__(self, detector=None, warm_start: bool = False, random_state: int | None = None):
        self.detector = detector
        self.warm_start = warm_start
        self.random_state = random_state

    def detector_problem(self, detector) -> str | None:
        from ..detectors import as_detector

        det = as_detector(detector)
        if self.warm_start and not callable(getattr(det, "partial_fit", None)):
            return (
                f"{type(self).__name__}(warm_start=True) continues training with partial_fit(X), which "
                f"detector {detector_name(det)} does not have; use a PyTorch detector "
                "('autoencoder', 'vae') or warm_start=False"
            )
        return None

    def learn(self, X, concept_id=None):
        if self.warm_start and hasattr(self, "detector_"):
            self.detector_ = fit_further(self, self.detector_, X)
        else:
            det = self._new_detector()
            problem = self.detector_problem(det)
            if problem:
                raise CladValueError(problem)
            # a fresh fit is computed once per key; fine-tuning goes on training its own copy of it
            self.detector_ = fit_owned(self, det, X) if self.warm_start else fit_fresh(self, det, X)
        return self


class FineTune(Naive):
    """Fine-tuning: :class:`Naive` with ``warm_start=True`` — one detector, trained further with
    ``partial_fit`` on each new concept or batch (forgets what the new data overwrite).

    >>> import numpy as np
    >>> from clad.detectors.torch_ae import AutoEncoder
    >>> s = FineTune(AutoEncoder(hidden_sizes=(4, 2), epochs=2, random_state=0))
    >>> s = s.learn(np.zeros((30, 3))).learn(np.ones((30, 3)))
    >>> s.detector_.n_train_calls_
    2
    """

    def __init__(self, detector=None, warm_start: bool = True, random_state: int | None = None):
        super().__init__(detector=detector, warm_start=warm_start, random_state=random_state)


class Cumulative(Strategy):
    """Keep every training row seen so far and refit a fresh detector on all of them.

    The joint-training upper bound (it breaks the memory budget a continual learner has).
    Rows are kept in a growable buffer, not re-concatenated at every step.

    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> s = Cumulative(IsolationForest(n_estimators=10, random_state=0))
    >>> s = s.learn(np.zeros((50, 2))).learn(np.ones((30, 2)))
    >>> s.memory_rows()
    80
    """

    replicas_problem = None

    reads_concept_id = False
    uses_random_state = False
    step_inputs = ("rows",)

    def learn(self, X, concept_id=None):
        if not hasattr(self, "buffer_"):
            self.buffer_ = RowBuffer(initial_capacity=max(1024, len(X)))
        self.buffer_.append(X)
        self.detector_ = self._fit_new(self.buffer_.view())
        return self
