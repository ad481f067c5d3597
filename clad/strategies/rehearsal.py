"""Rehearsal for clad's PyTorch detectors: A-GEM and DER (``docs/guides/time-series.md``).

Both keep **one** network, trained further (``partial_fit``) on every new concept or batch, and a
reservoir (:class:`~clad.strategies.memory.ReservoirBuffer`) of at most ``buffer_size`` past rows,
standardised, offered each ``learn`` call's rows after the call (so a call trains against the
memory of the calls before it); it needs neither ids nor boundaries, so both run in every scenario.

* :class:`AGEM` (averaged gradient episodic memory, Chaudhry et al., ICLR 2019): at every optimiser
  step the gradient ``g`` of the new mini-batch is compared with the gradient ``g_ref`` of the
  reconstruction loss on a random mini-batch of the memory; if ``g . g_ref < 0`` (the step would
  increase the loss on the past), ``g`` is projected to ``g - (g . g_ref / g_ref . g_ref) g_ref``
  (through the detector's ``grad_hook``).
* :class:`DER` (dark experience replay, Buzzega et al., NeurIPS 2020): the memory keeps each row
  with the network's output for it (for an autoencoder, its reconstruction) and every mini-batch
  adds ``alpha * mean((f(x_m) - z_m)^2)`` on a random memory mini-batch ``(x_m, z_m)``; with
  ``beta > 0`` (DER++) also ``beta *`` the reconstruction loss of another memory mini-batch
  (through the detector's ``extra_loss``). A row's output is recorded after the ``learn`` call
  that saw it (the original records it at the optimiser step that saw it).

Randomness: the reservoir draws from ``numpy.random.default_rng(random_state)``; memory
mini-batches come from a ``torch.Generator`` seeded from ``(random_state, learn call)``. The same
seeds give bit-identical results on the CPU.
"""

from __future__ import annotations

import numpy as np

from ..validation import COUNT, Interval, Real
from .memory import ReservoirBuffer
from .regularization import Regularized

__all__ = ["AGEM", "DER", "agem_project"]


def agem_project(g, g_ref):
    """A-GEM's projection without a branch: ``(g', projected)`` where ``g' = g - (g . g_ref /
    g_ref . g_ref) g_ref`` if ``g . g_ref < 0`` and ``g`` otherwise (the weight of ``g_ref`` is then
    0), and ``projected`` is that condition as a 0-d bool tensor. Nothing is read back from the
    device, so a GPU never waits; the result equals the branching form bit for bit."""
    from ..detectors.torch_base import torch

    dot = torch.dot(g, g_ref)
    negative = dot < 0
    weight = torch.where(negative, dot / torch.dot(g_ref, g_ref).clamp_min(1e-12), 0.0)
    return g - weight * g_ref, negative


class _Rehearsal(Regularized):
    """A torch detector fine-tuned with a reservoir memory of standardised past rows."""

    _parameter_constraints = {"buffer_size": [COUNT], "memory_batch_size": [None, COUNT]}

    def __init__(
        self,
        detector=None,
        buffer_size: int = 1000,
        memory_batch_size: int | None = None,
        random_state: int | None = None,
    ):
        self.detector = detector
        self.buffer_size = buffer_size
        self.memory_batch_size = memory_batch_size
        self.random_state = random_state

    def _row_targets(self, Xs):
        """What the memory keeps for each standardised row besides the row itself (None: nothing)."""
        return None

    def _remember(self, X) -> None:
        det = self.detector_
        for start in range(0, len(X), 4096):
            Xs = det.standardise(X[start : start + 4096])
            self.row_shape_ = Xs.shape[1:]
            rows = Xs.reshape(len(Xs), -1)
            extra = self._row_targets(Xs)
            if extra is not None:
                rows = np.concatenate([rows, extra.reshape(len(Xs), -1)], axis=1)
            self.buffer_.add(rows, self.rng_)

    def _generator(self):
        from ..detectors.torch_base import torch

        rs = self.random_state
        entropy = None if rs is None else [int(rs), int(self.n_learn_calls_)]
        seed = np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0]
        return torch.Generator(device="cpu").manual_seed(int(seed))

    def _sampler(self):
        """``sample()`` -> a random memory mini-batch (a float32 tensor on the device, rows of
        the memory's width), drawn with this call's generator."""
        from ..detectors.torch_base import to_device, torch

        memory = torch.from_numpy(np.ascontiguousarray(self.buffer_.view()))
        gen = self._generator()
        k = int(self.memory_batch_size or self.detector_.batch_size)
        device = self.detector_.torch_device
        if device.type == "cpu":

            def sample():
                idx = torch.randint(memory.shape[0], (min(k, memory.shape[0]),), generator=gen)
                return memory[idx]

            return sample
        # on a GPU the memory moves once per call; the indices are drawn `chunk` mini-batches at a
        # time (the same numbers as one draw per mini-batch: the CPU generator draws element by
        # element) and copied without blocking
        memory = to_device(memory, device)
        chunk, drawn = 64, []

        def sample():
            if not drawn:
                idx = torch.randint(
                    memory.shape[0], (chunk, min(k, memory.shape[0])), generator=gen
                )
                drawn.extend(reversed(to_device(idx, device).unbind(0)))
            return memory[drawn.pop()]

        return sample

    def _rows(self, flat):
        """Standardised rows (with their row shape) from the first part of memory rows."""
        width = int(np.prod(self.row_shape_))
        return flat[:, :width].reshape(flat.shape[0], *self.row_shape_)

    #: the first step is a fresh fit on its rows (shared); every later one is its own
    step_inputs = ("rows",)

    def learn(self, X, concept_id=None):
        X = np.asarray(X)
        if not hasattr(self, "buffer_"):
            self.buffer_ = ReservoirBuffer(int(self.buffer_size))
            self.rng_ = np.random.default_rng(self.random_state)
        if hasattr(self, "detector_") and len(self.buffer_):
            self._continue(X)
        else:
            self._first_or_continue(X)
        self._remember(X)
        return self


class AGEM(_Rehearsal):
    """A-GEM on a clad PyTorch detector (see the module docstring).

    Parameters
    ----------
    detector : a clad PyTorch detector prototype (cloned, never fitted)
    buffer_size : int, default 1000
        Rows of the episodic memory (a reservoir over every row learned).
    memory_batch_size : int or None
        Memory rows per reference gradient (default: the detector's ``batch_size``).
    random_state : int or None

    Examples
    --------
    >>> import numpy as np
    >>> from clad.detectors.torch_ae import AutoEncoder
    >>> s = AGEM(AutoEncoder(hidden_sizes=(4, 2), epochs=2, random_state=0), buffer_size=20, random_state=0)
    >>> s = s.learn(np.zeros((30, 3))).learn(np.ones((30, 3)))
    >>> s.memory_rows(), s.n_steps_ > 0
    (20, True)
    """

    replicas_problem = (
        "its gradient hook rewrites each parameter's .grad between the backward pass and the "
        "optimiser step, and a stacked model has one gradient tensor for all replicas"
    )

    def _projection(self):
        from ..detectors.torch_base import torch

        sample = self._sampler()
        det = self.detector_

        def grad_hook(module):
            params = [p for p in module.parameters() if p.grad is not None]
            g = torch.cat([p.grad.reshape(-1) for p in params])
            ref_loss = det.reconstruction_loss(self._rows(sample()), module)
            # parameters the reconstruction does not use (a VAE's log-variance head) get zeros
            ref = torch.autograd.grad(ref_loss, params, allow_unused=True, materialize_grads=True)
            g_ref = torch.cat([r.reshape(-1) for r in ref])
            self.n_steps_ += 1
            if g.device.type == "cpu":
                dot = torch.dot(g, g_ref)
                if not dot < 0:
                    return
                self.n_projections_ += 1
                g = g - (dot / torch.dot(g_ref, g_ref).clamp_min(1e-12)) * g_ref
            else:  # on a GPU without reading anything back
                g, negative = agem_project(g, g_ref)
                self._pending_projections = self._pending_projections + negative
            for p, part in zip(params, g.split([p.grad.numel() for p in params])):
                p.grad.copy_(part.view_as(p.grad))

        return grad_hook

    def _continue(self, X) -> None:
        self.n_steps_ = getattr(self, "n_steps_", 0)
        self.n_projections_ = getattr(self, "n_projections_", 0)
        self._pending_projections = 0  # a GPU counts projections on the device; read once per call
        self._first_or_continue(X, grad_hook_factory=self._projection)
        self.n_projections_ += int(self._pending_projections)
        del self._pending_projections


class DER(_Rehearsal):
    """Dark experience replay (DER; DER++ with ``beta > 0``) on a clad PyTorch detector (see the
    module docstring).

    Parameters
    ----------
    detector : a clad PyTorch detector prototype (cloned, never fitted)
    buffer_size : int, default 1000
    alpha : float >= 0, default 1.0
        Weight of matching the recorded outputs of memory rows.
    beta : float >= 0, default 0.0
        Weight of the reconstruction loss on memory rows (DER++).
    memory_batch_size : int or None
        Memory rows per mini-batch (default: the detector's ``batch_size``).
    random_state : int or None

    Examples
    --------
    DER++ on two concepts of three features: the memory keeps each row (3 values) with the
    autoencoder's reconstruction of it (3 more).

    >>> import numpy as np
    >>> from clad.detectors.torch_ae import AutoEncoder
    >>> ae = AutoEncoder(hidden_sizes=(4, 2), epochs=2, random_state=0)
    >>> der_pp = DER(ae, buffer_size=20, beta=0.5, random_state=0)
    >>> concepts = np.random.default_rng(0).normal(size=(2, 30, 3)) + np.array([[[0.0]], [[3.0]]])
    >>> der_pp = der_pp.learn(concepts[0]).learn(concepts[1])
    >>> der_pp.memory_rows(), der_pp.buffer_.view().shape
    (20, (20, 6))
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        detector=None,
        buffer_size: int = 1000,
        alpha: float = 1.0,
        beta: float = 0.0,
        memory_batch_size: int | None = None,
        random_state: int | None = None,
    ):
        super().__init__(detector, buffer_size, memory_batch_size, random_state)
        self.alpha = alpha
        self.beta = beta

    def _row_targets(self, Xs):
        from ..detectors.torch_base import to_device, torch

        det = self.detector_
        with torch.no_grad():
            out = det.reconstruct(to_device(torch.from_numpy(Xs), det.torch_device))
        return out.float().cpu().numpy()

    def _replay_loss(self):
        sample = self._sampler()
        alpha, beta = float(self.alpha), float(self.beta)
        det = self.detector_
        width = int(np.prod(self.row_shape_))

        def extra_loss(module, xb):
            flat = sample()
            x_m, z_m = self._rows(flat), flat[:, width:].reshape(flat.shape[0], *self.row_shape_)
            loss = alpha * ((det.reconstruct(x_m, module) - z_m) ** 2).mean()
            if beta > 0:
                loss = loss + beta * det.reconstruction_loss(self._rows(sample()), module)
            return loss

        return extra_loss

    def _continue(self, X) -> None:
        self._first_or_continue(X, extra_loss_factory=self._replay_loss)
