"""Replicas: many training calls of one torch network trained at once, as one stacked model.

K detectors with the same network (class and ``hidden_sizes``), the same ``batch_size`` and the
same number of training rows (:func:`stack_key`) are trained together: their parameters are
stacked along a new first axis (``K x ...``) and one forward/backward pass computes all K losses.
What each replica keeps of its own run (parameters, Adam state, random streams, rows, epochs,
loss, its strategy's ``extra_loss`` called on a
:class:`~clad.detectors.torch_stacked.ReplicaView`), why a ``grad_hook`` is refused
(:func:`train_replicas`), how close a replica is to its run alone (float32 rounding, not bit for
bit) and when a stacked step is a CUDA graph (:data:`CUDA_GRAPHS`, :data:`GRAPH_MIN_STEPS`) are
told in the replicas guide (``docs/guides/replicas.md``).

:class:`ReplicaGroup` lets K runs, each in its own thread, meet at their training calls:
``TorchDetector`` hands a training call to the group of the thread it runs in
(``REPLICA_THREAD.group``), which trains all the calls pending once every live member is waiting.
Members are ordered by their index, so which calls are stacked together, and in which order,
depends on the members alone, never on thread timing.
"""

from __future__ import annotations

import logging
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..errors import CladValueError, DetectorError
from .torch_base import REPLICA_THREAD, TorchDetector, to_device, torch
from .torch_stacked import ReplicaView, stacked_form, stacked_losses

__all__ = ["train_replicas", "ReplicaGroup", "stack_key"]

_BETA1, _BETA2, _EPS = 0.9, 0.999, 1e-8  # torch.optim.Adam's defaults, which TorchDetector uses

#: on CUDA, capture a stacked training step as one CUDA graph and replay it (see _Stack)
CUDA_GRAPHS = True
#: ... when a stacked training call has at least this many full mini-batch steps (a capture costs
#: a few steps' time)
GRAPH_MIN_STEPS = 16

#: device types whose stacked steps are captured (tests add "cpu" with stand-ins for the capture)
GRAPH_DEVICES = ("cuda",)

log = logging.getLogger(__name__)


def _warm_up(step, dev) -> None:
    """Run ``step`` once on a side stream (PyTorch's recipe before a capture)."""
    side = torch.cuda.Stream(device=dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream(dev).wait_stream(side)


def _capture(step, dev):
    """``step`` captured as a CUDA graph (not run: ``replay()`` runs it), on a side stream that
    waits for the work queued before it. (``torch.cuda.graph`` would also synchronise the device
    and empty both memory caches, freeing the pinned host buffers: tens of milliseconds per
    stacked call, which a graph of one small network does not need.)"""
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream(device=dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        graph.capture_begin()
        try:
            step()
        finally:
            graph.capture_end()
    torch.cuda.current_stream(dev).wait_stream(side)
    return graph


def _permutations(gens, active, n: int):
    """Each replica's shuffle of ``n`` rows for one epoch, as a (K, n) tensor: drawn from its own
    generator (as it would be alone) while its training lasts, the identity after. The K draws run
    in threads (each generator is used by one thread only; ``randperm`` releases the GIL), so
    that drawing 128 shuffles does not take longer than the GPU's epoch."""
    k = len(gens)
    out = torch.empty((k, n), dtype=torch.long)

    def draw(i):
        if active[i]:
            torch.randperm(n, generator=gens[i][0], out=out[i])
        else:
            out[i] = torch.arange(n)

    # the run's thread limit (limited_threads) holds here too
    workers = min(k, torch.get_num_threads(), 16)
    if workers > 1 and k * n >= 1 << 16:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(draw, range(k)))
    else:
        for i in range(k):
            draw(i)
    return out


# -- the stacked trainer ---------------------------------------------------------------------------
def stack_key(det: TorchDetector, n_rows: int) -> tuple:
    """What replicas trained together must share: the network (its class and shape), the
    mini-batch size, the device and the number of training rows."""
    shapes = tuple((n, tuple(p.shape)) for n, p in det.module_.named_parameters())
    return (
        type(det.module_).__name__,
        shapes,
        int(det.batch_size),
        str(det.torch_device),
        int(n_rows),
        float(getattr(det.module_, "beta", 0.0)),
    )


@dataclass
class _Call:
    det: TorchDetector
    Xs: np.ndarray
    epochs: int
    extra_loss: object = None
    grad_hook: object = None
    rows: object = None
    error: BaseException | None = None
    done: bool = False
    order: int = 0


def train_replicas(detectors, arrays, epochs, extra_losses=None, grad_hooks=None) -> list:
    """Train fitted-or-initialised detectors together, each as its own ``_train`` call would
    (see the module docstring). Detectors that cannot be stacked with the others
    (:func:`stack_key`) are trained in separate stacks. Returns each detector's training rows as
    the tensor its loop read. A replica whose loss is not finite raises
    :class:`~clad.errors.DetectorError` (after all are trained).

    Parameters
    ----------
    detectors : list of TorchDetector
        Fitted or initialised detectors (their networks exist).
    arrays : list of array
        Their standardised training rows.
    epochs : list of int
        Their epoch counts.
    extra_losses : list of callable or None, optional
        Their ``extra_loss(module, xb)`` hooks (None: none).
    grad_hooks : list of None, optional
        A ``grad_hook`` cannot run per replica of a stacked model: any one given is refused.
    """
    k = len(detectors)
    extra_losses = list(extra_losses or [None] * k)
    grad_hooks = list(grad_hooks or [None] * k)
    if any(h is not None for h in grad_hooks):
        raise CladValueError(
            "replicas: a grad_hook (a rewrite of .grad between backward and step) cannot run "
            "per replica of a stacked model; train that strategy one model at a time"
        )
    calls = [_Call(d, x, int(e), l) for d, x, e, l in zip(detectors, arrays, epochs, extra_losses)]
    _train_calls(calls)
    for c in calls:
        if c.error is not None:
            raise c.error
    return [c.rows for c in calls]


def _train_calls(calls: list) -> None:
    """Train ``calls`` (each a :class:`_Call`), stacked by :func:`stack_key` in their order; set
    each call's ``rows`` or ``error``."""
    groups: dict = {}
    for c in calls:
        groups.setdefault(stack_key(c.det, c.Xs.shape[0]), []).append(c)
    for group in groups.values():
        try:
            # all parameters of all replicas in one (K, P) tensor: Adam is a handful of operations
            stack = _Stack(group)
            for e in range(int(stack.epochs.max())):
                stack.epoch(e)
            stack.finish()
        except Exception as exc:  # noqa: BLE001 - each member's call raises it
            for c in group:
                c.error = exc


def _shared_rows(arrays) -> bool:
    first = arrays[0]
    return all(a is first or np.array_equal(a, first) for a in arrays[1:])


def _adam_schedule(lr, epochs, nb: int, epoch: int, dev):
    """Adam's per-replica step sizes (``lr / (1 - beta1^t)``) and ``sqrt(1 - beta2^t)`` for the
    ``nb`` steps of one epoch, as (nb, K, 1) float32 tensors on ``dev`` (one copy per epoch); a
    replica past its last epoch keeps its last values (its steps are masked anyway)."""
    t = np.minimum(
        epoch * nb + np.arange(1, nb + 1)[:, None], np.maximum(epochs * nb, 1)[None, :]
    ).astype(np.float64)
    step_size = (lr[None, :] / (1 - _BETA1**t)).astype(np.float32)
    bc2_sqrt = np.sqrt(1 - _BETA2**t).astype(np.float32)
    both = to_device(torch.from_numpy(np.stack([step_size, bc2_sqrt])[..., None]), dev)
    return both[0], both[1]


class _Stack:
    """One stacked training call: the replicas' flat (K, P) parameters and Adam moments, their
    rows, generators, epochs and loss sums, and on CUDA the buffers of the captured step."""

    def __init__(self, calls: list):
        self.calls = calls
        self.dets = dets = [c.det for c in calls]
        self.k = k = len(dets)
        lead = dets[0]
        self.dev = dev = lead.torch_device
        self.template = template = lead.module_
        self.gens = []
        for d in dets:
            self.gens.append(d._generators())
            d.n_train_calls_ += 1
        self.epochs = np.array([c.epochs for c in calls])
        self.n = n = calls[0].Xs.shape[0]
        # the first epoch's shuffles are drawn in the background while the stack is set up
        background = ThreadPoolExecutor(1)
        self.first_perm = background.submit(_permutations, self.gens, self.epochs > 0, n)
        background.shutdown(wait=False)
        self.named = named = [(nm, p.shape, p.numel()) for nm, p in template.named_parameters()]
        self.sizes = [numel for _, _, numel in named]
        dtype = next(template.parameters()).dtype
        self.flat = flat = torch.empty((k, sum(self.sizes)), dtype=dtype, device=dev)
        torch.cat(
            [p.detach().reshape(-1) for d in dets for p in d.module_.parameters()],
            out=flat.view(-1),
        )
        flat.requires_grad_(True)
        self.exp_avg = torch.zeros_like(flat, requires_grad=False)
        self.exp_avg_sq = torch.zeros_like(self.exp_avg)
        self.lr = np.array([float(d.learning_rate) for d in dets])
        wd = np.array([float(d.weight_decay) for d in dets])
        self.wd_t = (
            to_device(torch.from_numpy(wd.astype(np.float32)).unsqueeze(1), dev)
            if (wd != 0).any()
            else None
        )
        self.shared = _shared_rows([c.Xs for c in calls])
        if self.shared:  # one copy of the rows for every replica
            self.data, self.where = lead._training_rows(calls[0].Xs)
            self.rows_per_call = [self.data] * k
        else:  # stacked on the host, then moved once (the device's budget applies to all of them)
            self.data, self.where = lead._training_rows(np.stack([c.Xs for c in calls]))
            self.rows_per_call = list(self.data.unbind(0))
        self.bs = int(lead.batch_size)
        self.nb = -(-n // self.bs)
        self.vae = stacked_form(template) == "vae"
        self.latent = template.mu.out_features if self.vae else 0
        self.ks = torch.arange(k, device=self.data.device).unsqueeze(1)
        self.total = torch.zeros(k, dtype=torch.float64, device=dev)
        self.views_needed = any(c.extra_loss is not None for c in calls)
        self.weights = {}
        self.graph, self.warm, self.kept = None, 0, None
        self.use_graph = self._graphed()
        if self.use_graph:
            self._graph_buffers()

    def views(self) -> dict:
        """Views into the flat parameters, taken anew at every step (flat changes in place); their
        gradients reach flat.grad through one concatenation (a split's backward; slices would each
        fill a full-size gradient)."""
        chunks = torch.split(self.flat, self.sizes, dim=1)
        return {
            name: chunk.view(self.k, *shape) for (name, shape, _), chunk in zip(self.named, chunks)
        }

    def adam(self, losses, b, step_size, bc2, mask, counted, all_active) -> None:
        """Adam (torch.optim.Adam's formulas), each replica its own, in place; and the loss sums."""
        flat, exp_avg, exp_avg_sq = self.flat, self.exp_avg, self.exp_avg_sq
        g = flat.grad
        if self.wd_t is not None:
            g = g + self.wd_t * flat
        if all_active:  # the same values as below, fewer operations
            exp_avg.lerp_(g, 1 - _BETA1)
            exp_avg_sq.mul_(_BETA2).addcmul_(g, g, value=1 - _BETA2)
            denom = (exp_avg_sq.sqrt() / bc2).add_(_EPS)
            flat.sub_(exp_avg.div(denom).mul_(step_size))
        else:  # a replica past its last epoch keeps its parameters and moments
            m = exp_avg.lerp(g, 1 - _BETA1)
            v = exp_avg_sq.mul(_BETA2).addcmul_(g, g, value=1 - _BETA2)
            denom = (v.sqrt() / bc2).add_(_EPS)
            new = flat - m.div(denom).mul_(step_size)
            exp_avg.copy_(torch.where(mask, m, exp_avg))
            exp_avg_sq.copy_(torch.where(mask, v, exp_avg_sq))
            flat.copy_(torch.where(mask, new, flat))
        self.total.add_(losses.detach().double() * counted * b)

    def _graphed(self) -> bool:
        """Whether a whole full-batch step (gather, forward, backward, Adam) is captured once as a
        CUDA graph and replayed: one launch per step instead of dozens (on CUDA; not with
        per-replica hooks or the VAE's per-replica noise, which run Python per replica at every
        step)."""
        full_steps = int(self.epochs.max()) * (self.n // self.bs)
        return (
            CUDA_GRAPHS
            and self.dev.type in GRAPH_DEVICES
            and self.where != "pinned"
            and not self.views_needed
            and not self.vae
            and full_steps >= GRAPH_MIN_STEPS
        )

    def _graph_buffers(self) -> None:
        """The graph's inputs, filled once per epoch: the shuffles, the Adam schedule, the mask; the
        step reads its own slice by a step counter on the device, so a replay is the only call the
        host makes per step."""
        k, dev = self.k, self.dev
        self.g_perm = torch.zeros((k, self.n), dtype=torch.long, device=dev)
        self.g_sched = torch.ones((2, self.nb, k, 1), dtype=self.flat.dtype, device=dev)
        self.g_j = torch.zeros(1, dtype=torch.long, device=dev)
        self.g_cols = torch.arange(self.bs, device=dev)
        self.g_mask = torch.ones((k, 1), dtype=torch.bool, device=dev)
        self.g_counted = torch.zeros(k, dtype=torch.float64, device=dev)
        self.weights[self.bs] = torch.full(
            (k, self.bs), 1.0 / self.bs, device=dev, dtype=self.data.dtype
        )

    def graph_step(self) -> None:
        """The captured step: every input read from the graph's buffers."""
        # at capture: the backward pass writes a new gradient buffer, the graph's own
        self.flat.grad = None
        idx = self.g_perm.index_select(1, self.g_cols + self.g_j * self.bs)
        step_size = self.g_sched[0].index_select(0, self.g_j).squeeze(0)
        bc2 = self.g_sched[1].index_select(0, self.g_j).squeeze(0)
        self.g_j.add_(1)
        xb = self.data[idx] if self.shared else self.data[self.ks, idx]
        losses = stacked_losses(self.template, self.views(), xb, self.weights[self.bs], None)
        losses.sum().backward()
        with torch.no_grad():
            self.adam(losses, self.bs, step_size, bc2, self.g_mask, self.g_counted, False)

    def epoch(self, e: int) -> None:
        """Epoch ``e`` of every replica still training (the others' steps are masked)."""
        active = self.epochs > e
        all_active = bool(active.all())
        # every replica draws its own shuffle while its training lasts (as it would alone); one
        # plain copy to the device (pinning a (K, n) buffer costs more than it saves)
        perm = self.first_perm.result() if e == 0 else _permutations(self.gens, active, self.n)
        if self.use_graph:
            perm = self.g_perm.copy_(perm)
        elif self.where == "device":
            perm = perm.to(self.dev)
        mask = to_device(torch.from_numpy(active).unsqueeze(1), self.dev)  # (K, 1)
        counted = mask.squeeze(1).double()
        self.total.mul_(1 - counted)  # each replica's sum restarts with its epoch
        step_sizes, bc2s = _adam_schedule(self.lr, self.epochs, self.nb, e, self.dev)
        if self.use_graph:
            self.g_mask.copy_(mask)
            self.g_counted.copy_(counted)
            self.g_sched[0].copy_(step_sizes)
            self.g_sched[1].copy_(bc2s)
            self.g_j.zero_()
        for j, start in enumerate(range(0, self.n, self.bs)):
            idx = perm[:, start : start + self.bs]
            b = idx.shape[1]
            if self.use_graph and b == self.bs and self._replayed():
                continue
            self._step(idx, b, active, (step_sizes[j], bc2s[j]), mask, counted, all_active)

    def _replayed(self) -> bool:
        """A full step on the captured path: a warm-up step, or the capture and a replay, or a
        replay; False when the capture failed (the step then runs step by step, as every later
        one)."""
        if self.graph is None and self.warm < 2:  # warm-up steps before the capture
            self.flat.grad = None
            _warm_up(self.graph_step, self.dev)
            self.warm += 1
            return True
        if self.graph is None:
            try:
                self.flat.grad = None
                self.graph = _capture(self.graph_step, self.dev)
                self.kept = self.flat.grad  # the graph's gradient buffer
            except Exception as exc:  # noqa: BLE001 - train on without a graph
                log.warning(
                    "replicas: CUDA graph capture failed (%s: %s); training without one",
                    type(exc).__name__,
                    exc,
                )
                self.graph, self.use_graph = None, False
                self.flat.grad = None
        if self.graph is not None:
            self.graph.replay()
            return True
        return False

    def _step(self, idx, b: int, active, schedule, mask, counted, all_active) -> None:
        """One mini-batch step of ``b`` rows (``idx``: each replica's rows) on the step-by-step
        path: the VAE's noise and the strategies' extra losses per replica."""
        xb = self.data[idx] if self.shared else self.data[self.ks, idx]
        if self.where != "device":
            xb = to_device(xb, self.dev)
        if b not in self.weights:
            self.weights[b] = torch.full((self.k, b), 1.0 / b, device=self.dev, dtype=xb.dtype)
        eps = None
        if self.vae:
            eps = torch.stack(
                [
                    torch.randn((b, self.latent), generator=noise, device=self.dev, dtype=xb.dtype)
                    if active[i]
                    else torch.zeros((b, self.latent), device=self.dev, dtype=xb.dtype)
                    for i, (_, noise) in enumerate(self.gens)
                ]
            )
        params = self.views()
        losses = stacked_losses(self.template, params, xb, self.weights[b], eps)
        if self.views_needed:
            extra = []
            for i, c in enumerate(self.calls):
                if c.extra_loss is None or not active[i]:
                    extra.append(losses.new_zeros(()))
                else:
                    view = ReplicaView(self.template, params, i)
                    extra.append(c.extra_loss(view, xb[i]).reshape(()))
            losses = losses + torch.stack(extra)
        self.flat.grad = None
        losses.sum().backward()
        with torch.no_grad():
            self.adam(losses, b, *schedule, mask, counted, all_active)

    def finish(self) -> None:
        """Every replica's parameters back into its network, its loss and rows into its call (or
        an error where its loss is not finite)."""
        self.kept = self.graph = None
        # the only read of the losses: once per stacked call
        last = (self.total / self.n).cpu().numpy()
        params = self.views()
        with torch.no_grad():  # every replica's parameters back into its network, in one call
            targets = [p for d in self.dets for p in d.module_.parameters()]
            sources = [params[name][i] for i in range(self.k) for name, _, _ in self.named]
            if hasattr(torch, "_foreach_copy_"):  # torch >= 2.1: one multi-tensor kernel
                torch._foreach_copy_(targets, sources)
            else:
                for p, src in zip(targets, sources):
                    p.copy_(src)
            for i, (c, d) in enumerate(zip(self.calls, self.dets)):
                d.module_.eval()
                loss = float(last[i])
                if not math.isfinite(loss):
                    c.error = DetectorError(
                        f"detector {d.name}: training loss is not finite; lower learning_rate"
                    )
                    continue
                d.train_loss_ = loss
                c.rows = self.rows_per_call[i]


# -- runs meeting at their training calls ---------------------------------------------------------
@dataclass
class _GroupStats:
    stacked_calls: int = 0
    sizes: list = field(default_factory=list)


class ReplicaGroup:
    """K runs, each in its own thread, whose torch training calls are trained together (see the
    module docstring). Each thread runs its run inside ``with group.member(index):``."""

    def __init__(self, members: int):
        self._cond = threading.Condition()
        self._alive = int(members)
        self._pending: list = []
        self.stats = _GroupStats()

    @contextmanager
    def member(self, index: int):
        REPLICA_THREAD.group, REPLICA_THREAD.index = self, int(index)
        try:
            yield self
        finally:
            REPLICA_THREAD.group = None
            with self._cond:
                self._alive -= 1
                self._run_if_all_waiting()

    def train(self, det, Xs, epochs, extra_loss=None, grad_hook=None):
        """Hand a training call over; returns the rows tensor as ``_train`` does (or raises).

        Parameters
        ----------
        det : TorchDetector
            The detector the call trains.
        Xs : array
            Its standardised training rows.
        epochs : int
            The call's epochs.
        extra_loss : callable, optional
            Its ``extra_loss(module, xb)`` hook.
        grad_hook : callable, optional
            Its ``grad_hook(module)``: such a call is trained alone, not stacked.
        """
        order = int(getattr(REPLICA_THREAD, "index", 0))
        call = _Call(det, Xs, int(epochs), extra_loss, grad_hook, order=order)
        with self._cond:
            self._pending.append(call)
            self._run_if_all_waiting()
            while not call.done:
                self._cond.wait()
        if call.error is not None:
            raise call.error
        return call.rows

    def _run_if_all_waiting(self) -> None:
        if not self._pending or len(self._pending) < self._alive:
            return
        calls = sorted(self._pending, key=lambda c: c.order)
        self._pending = []
        alone = [c for c in calls if c.grad_hook is not None]
        stacked = [c for c in calls if c.grad_hook is None]
        try:
            if stacked:
                _train_calls(stacked)
                self.stats.stacked_calls += 1
                self.stats.sizes.append(len(stacked))
            for c in alone:
                try:
                    c.rows = c.det._train_alone(c.Xs, c.epochs, c.extra_loss, c.grad_hook)
                except Exception as exc:  # noqa: BLE001 - raised in the member's thread
                    c.error = exc
        finally:
            for c in calls:
                c.done = True
            self._cond.notify_all()
