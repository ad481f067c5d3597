"""Regularisation strategies for clad's PyTorch detectors: EWC and LwF.

Both keep **one** detector that is trained further (``partial_fit``) on every new concept, and
add a term to its training loss through the detector's ``extra_loss(module, xb)`` hook:

* :class:`EWC` (elastic weight consolidation): a quadratic penalty that keeps weights important
  for past concepts (diagonal Fisher information of the reconstruction loss) near their values
  after those concepts;
* :class:`LwF` (learning without forgetting): distillation, the current network's reconstruction
  of the new data is pulled towards the previous network's reconstruction of it.

They store no training rows (``memory_rows() == 0``). torch is imported only by the detector
module, which a user has already imported by building the detector.
"""

from __future__ import annotations

import copy

from ..detectors import detector_name
from ..errors import CladValueError
from ..validation import COUNT, Interval, Real, StrOptions
from ..core.steps import fit_owned, forget_key
from .base import Strategy

__all__ = ["EWC", "LwF", "EWC_MODES"]

EWC_MODES = ("separate", "online")


def _check_torch(strategy, det) -> None:
    if not getattr(det, "_clad_torch", False):
        raise CladValueError(
            f"{type(strategy).__name__} needs one of clad's PyTorch detectors ('autoencoder', 'vae', "
            "'lstm_autoencoder', 'gru_autoencoder'); "
            f"got detector {detector_name(det)}, which has no trainable network"
        )


class Regularized(Strategy):
    """One torch detector, fitted on the first concept and fine-tuned with an extra loss after."""

    replicas_problem = None

    def detector_problem(self, detector) -> str | None:
        from ..detectors import as_detector

        try:
            _check_torch(self, as_detector(detector))
        except CladValueError as exc:
            return str(exc)
        return None

    reads_concept_id = False
    uses_random_state = False

    def _first_or_continue(self, X, extra_loss_factory=None, grad_hook_factory=None) -> None:
        if not hasattr(self, "detector_"):
            det = self._new_detector()
            _check_torch(self, det)
            # the first fit has no penalty, teacher or memory yet: naive's first step, shared by key
            # (clad.core.steps) where the strategy declares it; the strategy trains its own copy further
            self.detector_ = fit_owned(self, det, X)
            return
        forget_key(self.detector_)  # trained further with what no key describes: never shared again
        self.detector_.partial_fit(
            X,
            extra_loss=None if extra_loss_factory is None else extra_loss_factory(),
            grad_hook=None if grad_hook_factory is None else grad_hook_factory(),
        )


class EWC(Regularized):
    """Elastic weight consolidation on a clad PyTorch detector.

    After training on a concept, the diagonal Fisher information ``F`` of the reconstruction
    loss is estimated on that concept's rows (mean of the squared per-row gradient, on at most
    ``fisher_rows`` rows; ``None`` = all) and kept with the weights ``theta*``. Training on later concepts
    adds ``ewc_lambda / 2 * sum_k sum_p F_k,p (theta_p - theta*_k,p)^2`` to every mini-batch loss.

    * ``mode="separate"``: one ``(F_k, theta*_k)`` per past concept (memory grows with concepts);
    * ``mode="online"``: one running penalty, ``F <- gamma * F + F_new`` and ``theta* <- theta``
      (online EWC; ``gamma`` in (0, 1] decays old concepts' importance).

    Works in every scenario (in the concept-agnostic stream each batch counts as a "concept";
    ``online`` mode keeps the cost constant there). Asking for it with a detector that is not a
    clad PyTorch detector is a :class:`~clad.errors.CladValueError` naming the detector.

    >>> import numpy as np
    >>> from clad.detectors.torch_ae import AutoEncoder
    >>> s = EWC(AutoEncoder(hidden_sizes=(4, 2), epochs=2, random_state=0), ewc_lambda=10.0)
    >>> s = s.learn(np.zeros((30, 3))).learn(np.ones((30, 3)))
    >>> len(s.penalties_), s.memory_rows()
    (2, 0)
    """

    _parameter_constraints = {
        "ewc_lambda": [Interval(Real, 0, None, closed="left")],
        "mode": [StrOptions(EWC_MODES)],
        "gamma": [Interval(Real, 0, 1, closed="right")],
        "fisher_rows": [None, COUNT],
    }

    def __init__(
        self,
        detector=None,
        ewc_lambda: float = 100.0,
        mode: str = "separate",
        gamma: float = 1.0,
        fisher_rows: int | None = 2000,
        random_state: int | None = None,
    ):
        self.detector = detector
        self.ewc_lambda = ewc_lambda
        self.mode = mode
        self.gamma = gamma
        self.fisher_rows = fisher_rows
        self.random_state = random_state

    def _penalty(self, module, xb):
        params = list(module.parameters())
        total = 0.0
        for fisher, anchor in self.penalties_:
            for p, f, a in zip(params, fisher, anchor):
                total = total + (f * (p - a) ** 2).sum()
        return 0.5 * float(self.ewc_lambda) * total

    #: the first step is a fresh fit on its rows (shared); every later one is its own
    step_inputs = ("rows",)

    def learn(self, X, concept_id=None):
        if not hasattr(self, "penalties_"):
            self.penalties_ = []
        self._first_or_continue(X, lambda: self._penalty)
        fisher = self.detector_.fisher_diagonal(X, max_rows=self.fisher_rows)
        anchor = [p.detach().clone() for p in self.detector_.module_.parameters()]
        if self.mode == "online" and self.penalties_:
            old, _ = self.penalties_[0]
            fisher = [float(self.gamma) * o + f for o, f in zip(old, fisher)]
            self.penalties_ = [(fisher, anchor)]
        else:
            self.penalties_.append((fisher, anchor))
        return self


class LwF(Regularized):
    """Learning without forgetting on a clad PyTorch detector.

    Before training on a new concept, the current network is copied and frozen. Every mini-batch
    ``xb`` of the new concept then adds ``alpha * mean((f(xb) - f_prev(xb))^2)`` to the loss: the
    previous network's reconstruction of the *current* data is the soft target (no past rows are
    kept). Works in every scenario; refused (a :class:`~clad.errors.CladValueError` naming the
    detector) for a detector that is not a clad PyTorch detector.

    >>> import numpy as np
    >>> from clad.detectors.torch_ae import AutoEncoder
    >>> s = LwF(AutoEncoder(hidden_sizes=(4, 2), epochs=2, random_state=0), alpha=1.0)
    >>> s = s.learn(np.zeros((30, 3))).learn(np.ones((30, 3)))
    >>> s.n_learn_calls_, s.memory_rows()
    (2, 0)
    """

    _parameter_constraints = {"alpha": [Interval(Real, 0, None, closed="left")]}

    def __init__(self, detector=None, alpha: float = 1.0, random_state: int | None = None):
        self.detector = detector
        self.alpha = alpha
        self.random_state = random_state

    def _distillation(self):
        from ..detectors.torch_base import torch

        previous = copy.deepcopy(self.detector_.module_)
        previous.eval()
        for p in previous.parameters():
            p.requires_grad_(False)
        alpha = float(self.alpha)

        def extra_loss(module, xb):
            with torch.no_grad():  # a fixed target: no graph through the frozen copy
                target = previous.reconstruct(xb)
            return alpha * ((module.reconstruct(xb) - target) ** 2).mean()

        return extra_loss

    #: the first step is a fresh fit on its rows (shared); every later one is its own
    step_inputs = ("rows",)

    def learn(self, X, concept_id=None):
        self._first_or_continue(X, self._distillation)
        return self
