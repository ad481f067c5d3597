"""The base of clad's PyTorch detectors (:class:`TorchDetector`): standardisation, the training
loop, the threshold and scoring; the networks are built by its subclasses (:mod:`clad.detectors.torch_ae`,
:mod:`clad.detectors.torch_seq`).

They score a row by its **reconstruction error** (mean squared error over the standardised
features; higher = more anomalous) and follow the clad detector interface: ``fit(X) -> self``,
``score(X) -> (n,)`` finite, ``threshold_`` = the ``1 - contamination`` quantile of the training
rows' errors after training.

* ``fit(X)`` trains from scratch: input standardisation statistics (mean and scale, a constant
  column gets scale 1) come from this ``X`` and are kept for every later call.
* ``partial_fit(X, extra_loss=None, epochs=None, grad_hook=None)`` continues training the same
  network (a fresh Adam optimiser per call) and recomputes ``threshold_`` on ``X``.
  ``extra_loss(module, xb)`` returns a scalar tensor added to the loss of every mini-batch ``xb``
  (standardised, on the device): the hook regularisation and replay strategies (EWC, LwF, DER)
  use. ``grad_hook(module)`` is called after every backward pass, before the optimiser step, and
  may change the gradients (A-GEM projects them).

Windows (3-D input, ``rows x window x features``) reach the dense networks flattened
(:func:`clad.detectors.tabular.as_table`); the sequence autoencoders of
:mod:`clad.detectors.torch_seq` read them as sequences. Standardisation statistics are per feature
(over rows, and over the steps of windows).

Randomness never touches torch's global generator: weights are initialised and batches shuffled
with a ``torch.Generator`` seeded from ``random_state`` (a different, derived seed for every
training call), so on CPU the same seed gives bit-identical scores. ``device`` is ``"cpu"``
(default) or e.g. ``"cuda"``; how a GPU is kept busy (the rows moved once within
:data:`DEVICE_DATA_BUDGET`, one read of the loss per call, CUDA graphs,
:meth:`~TorchDetector.gradient_pass`) is told in the strategies guide
(``docs/guides/strategies.md``, "On a GPU"). The CPU path computes exactly what it computed before
these device paths existed.

Runs of one grid that train the same network can be trained together as one stacked model
(:mod:`clad.detectors.torch_replicas`): :meth:`TorchDetector._train` then hands its call to the
run's replica group.

This module imports torch; clad imports it only when one of these detectors is used (the
registered names are lazy import paths).
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import CladValueError, DetectorError
from .tabular import as_table
from .torch_graph import GraphedStep, use_graph
from ..validation import COUNT, SEED, Interval, Device, ListOf, Real, Validated, check


try:
    import torch
except ImportError as exc:  # pragma: no cover - torch is an optional dependency
    raise ImportError(
        "clad's autoencoder detectors need PyTorch; install it with: pip install 'clad[torch]'"
    ) from exc
nn = torch.nn

__all__ = ["TorchDetector", "DEVICE_DATA_BUDGET", "REPLICA_THREAD", "to_device"]

#: Fraction of a CUDA device's free memory that the standardised training rows of one training
#: call may take to be moved there once; larger data stay in pinned host memory (mini-batches are
#: copied to the device without blocking).
DEVICE_DATA_BUDGET = 0.5

#: per thread: the replica group (``.group``, :class:`clad.detectors.torch_replicas.ReplicaGroup`)
#: whose runs' training calls are trained together, and this run's index in it (``.index``)
REPLICA_THREAD = threading.local()


def _init_(module: nn.Module, gen) -> None:
    """Materialise a module built on the meta device and initialise it like ``nn.Linear`` and the
    recurrent layers (``nn.LSTM``, ``nn.GRU``) do, drawing from ``gen`` only."""
    module.to_empty(device="cpu")
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, nn.Linear):
                bound = 1.0 / math.sqrt(layer.in_features)
                layer.weight.uniform_(-bound, bound, generator=gen)
                layer.bias.uniform_(-bound, bound, generator=gen)
            elif isinstance(layer, nn.RNNBase):
                bound = 1.0 / math.sqrt(layer.hidden_size)
                for p in layer.parameters(recurse=False):
                    p.uniform_(-bound, bound, generator=gen)


def to_device(tensor, device):
    """``tensor`` on ``device``: unchanged on the CPU; to a CUDA device through pinned memory with
    a non-blocking copy (the host does not wait for the GPU)."""
    if device.type == "cuda" and tensor.device.type == "cpu":
        return (tensor if tensor.is_pinned() else tensor.pin_memory()).to(device, non_blocking=True)
    return tensor.to(device)


class TorchDetector(Validated, BaseEstimator):
    """Base of clad's torch detectors (see the module docstring); subclasses build the network.

    Parameters
    ----------
    hidden_sizes, epochs, batch_size, learning_rate, weight_decay, contamination, device,
    score_batch_size, num_threads, random_state :
        As for :class:`~clad.detectors.torch_ae.AutoEncoder`.
    """

    _clad_detector = True
    _clad_torch = True
    _parameter_constraints = {
        "hidden_sizes": [ListOf(COUNT), COUNT],
        "epochs": [COUNT],
        "batch_size": [COUNT],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "contamination": [Interval(Real, 0, 0.5, closed="neither")],
        "device": [Device()],
        "score_batch_size": [COUNT],
        "num_threads": [None, COUNT],
        "random_state": [None, SEED],
    }

    def __init__(
        self,
        hidden_sizes=(32, 8),
        epochs: int = 20,
        batch_size: int = 64,
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        contamination: float = 0.1,
        device: str = "cpu",
        score_batch_size: int = 4096,
        num_threads: int | None = None,
        random_state: int | None = None,
    ):
        self.hidden_sizes = hidden_sizes
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.contamination = contamination
        self.device = device
        self.score_batch_size = score_batch_size
        self.num_threads = num_threads
        self.random_state = random_state

    # -- checks ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return type(self).__name__

    def _check_params(self) -> None:
        who = self.name
        self._validate_params()
        try:
            dev = torch.device(self.device)
        except (RuntimeError, TypeError):
            raise CladValueError(
                f"{who}: device={self.device!r}; expected 'cpu', 'cuda' or 'cuda:N'"
            ) from None
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise DetectorError(
                f"{who}: device={self.device!r} but torch.cuda.is_available() is False; use device='cpu'"
            )

    def _shape_input(self, X: np.ndarray) -> np.ndarray:
        """The array the network reads: a table (windows flattened); sequence models override it."""
        X = as_table(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise CladValueError(
                f"{self.name}: expected a non-empty 2-D array (rows x features), got shape {X.shape}"
            )
        return X

    def _check_X(self, X) -> np.ndarray:
        X = self._shape_input(np.asarray(X, dtype=np.float64))
        if hasattr(self, "n_features_in_") and X.shape[-1] != self.n_features_in_:
            raise CladValueError(
                f"{self.name}: X has {X.shape[-1]} features; the detector was fitted with {self.n_features_in_}"
            )
        return X

    def _require_fitted(self) -> None:
        if not hasattr(self, "module_"):
            raise DetectorError(f"detector {self.name}: used before fit()")

    @contextmanager
    def _threads(self):
        """torch's intra-op thread count set to ``num_threads`` for the duration (then restored)."""
        if self.num_threads is None:
            yield
            return
        before = torch.get_num_threads()
        torch.set_num_threads(int(self.num_threads))
        try:
            yield
        finally:
            torch.set_num_threads(before)

    # -- hooks used by strategies --------------------------------------------------------------
    @property
    def torch_device(self):
        return torch.device(self.device)

    def standardise(self, X) -> np.ndarray:
        """``X`` in the standardised float32 space the network works in (statistics of the first fit)."""
        self._require_fitted()
        return ((self._check_X(X) - self.mean_) / self.scale_).astype(np.float32)

    def iter_batches(self, X, batch_size: int | None = None):
        """Standardised mini-batches of ``X`` in order (``score_batch_size`` rows by default), each
        moved to the device on its own (on CUDA from pinned memory, without blocking)."""
        self._require_fitted()
        X = np.asarray(X)
        step = int(batch_size or self.score_batch_size)
        for start in range(0, X.shape[0], step):  # standardised chunk by chunk: no full copy
            yield to_device(
                torch.from_numpy(self.standardise(X[start : start + step])), self.torch_device
            )

    @contextmanager
    def gradient_pass(self, module=None):
        """Context for gradients taken outside training (a Fisher diagonal, a reference
        gradient): on a GPU, the recurrent layers of ``module`` (default: this detector's) are put
        in train mode for the duration, because cuDNN's recurrent kernels refuse a backward pass
        in eval mode; clad's recurrent layers have no dropout, so the computation is the same.
        On the CPU nothing changes."""
        module = module or self.module_
        switched = []
        if self.torch_device.type != "cpu":
            switched = [m for m in module.modules() if isinstance(m, nn.RNNBase) and not m.training]
        for m in switched:
            m.train()
        try:
            yield module
        finally:
            for m in switched:
                m.eval()

    def reconstruct(self, xb, module=None):
        """Deterministic reconstruction of a standardised batch by ``module`` (default: this detector's)."""
        return (module or self.module_).reconstruct(xb)

    def reconstruction_loss(self, xb, module=None):
        """Mean squared reconstruction error of a standardised batch (a scalar tensor with gradient)."""
        return torch.mean((self.reconstruct(xb, module) - xb) ** 2)

    def fisher_diagonal(self, X, max_rows: int | None = None) -> list:
        """Diagonal empirical Fisher information of the reconstruction loss on ``X``: for each
        parameter tensor (in ``module_.parameters()`` order), the mean over rows of the squared
        per-row gradient (computed in mini-batches by :meth:`_squared_grad_sums`). With
        ``max_rows``, at most that many evenly spaced rows are used."""
        self._require_fitted()
        X = np.asarray(X)
        if max_rows and X.shape[0] > max_rows:
            X = X[np.linspace(0, X.shape[0] - 1, int(max_rows)).astype(np.int64)]
        sums = [torch.zeros_like(p) for p in self.module_.parameters()]
        n = 0
        with self._threads(), self.gradient_pass():
            for xb in self.iter_batches(X, batch_size=self._fisher_batch_size()):
                for total, part in zip(sums, self._squared_grad_sums(xb)):
                    total += part
                n += xb.shape[0]
        return [total / max(n, 1) for total in sums]

    def _fisher_batch_size(self) -> int:
        """Rows per vectorised per-row gradient pass of :meth:`fisher_diagonal`: ``batch_size`` on
        the CPU (as always: the same sums), ``score_batch_size`` on a GPU."""
        return int(self.batch_size if self.torch_device.type == "cpu" else self.score_batch_size)

    def _squared_grad_sums(self, xb) -> list:
        """For each parameter, the sum over the rows of ``xb`` of its squared per-row gradient of the
        reconstruction loss, vectorised with ``torch.func``."""
        from torch.func import functional_call, grad, vmap

        module = self.module_
        params = {n: p.detach() for n, p in module.named_parameters()}

        def row_loss(prm, x):
            recon = functional_call(module, prm, (x.unsqueeze(0),))
            return torch.mean((recon - x.unsqueeze(0)) ** 2)

        grads = vmap(grad(row_loss), in_dims=(None, 0))(params, xb)
        return [(grads[k] ** 2).sum(dim=0) for k in params]

    # -- training ------------------------------------------------------------------------------
    def _build(self, n_features: int) -> nn.Module:  # pragma: no cover - abstract
        raise NotImplementedError

    def _hidden(self) -> tuple[int, ...]:
        """``hidden_sizes`` as a tuple of ints (one int is one layer)."""
        h = self.hidden_sizes
        return tuple(int(w) for w in ((h,) if isinstance(h, (int, np.integer)) else h))

    def _generators(self):
        """(CPU generator for init and shuffling, device generator for sampling noise) of this call."""
        if self.random_state is None:
            seq = np.random.SeedSequence()
        else:
            seq = np.random.SeedSequence([int(self.random_state), self.n_train_calls_])
        a, b = (int(s) for s in seq.generate_state(2, dtype=np.uint32))
        cpu = torch.Generator(device="cpu").manual_seed(a)
        dev = self.torch_device
        noise = cpu if dev.type == "cpu" else torch.Generator(device=dev).manual_seed(b)
        return cpu, noise

    def _training_rows(self, Xs: np.ndarray):
        """The standardised training rows as a tensor, and where they live: ``"device"`` (moved
        once; CUDA, within :data:`DEVICE_DATA_BUDGET`), ``"pinned"`` (CUDA, too large: pinned host
        memory, mini-batches copied without blocking) or ``"host"`` (the CPU, or another device)."""
        X = torch.from_numpy(Xs)
        dev = self.torch_device
        if dev.type != "cuda":
            return X, "host"
        free, _ = torch.cuda.mem_get_info(dev)
        if X.nbytes <= DEVICE_DATA_BUDGET * free:
            return X.pin_memory().to(dev, non_blocking=True), "device"
        return X.pin_memory(), "pinned"

    def _train(self, Xs: np.ndarray, epochs: int, extra_loss, grad_hook=None):
        """Train ``module_`` on the standardised rows ``Xs``; returns them as the tensor the
        loop read (on the device when they were moved there). In a run that belongs to a group
        of replicas (:mod:`clad.detectors.torch_replicas`), the call is trained with the group's."""
        group = getattr(REPLICA_THREAD, "group", None)
        if group is not None:
            return group.train(self, Xs, epochs, extra_loss, grad_hook)
        return self._train_alone(Xs, epochs, extra_loss, grad_hook)

    def _train_alone(self, Xs: np.ndarray, epochs: int, extra_loss, grad_hook=None):
        """:meth:`_train` of this detector on its own."""
        gen, noise = self._generators()
        self.n_train_calls_ += 1
        module = self.module_
        module.train()
        X, where = self._training_rows(Xs)
        n, bs, dev = X.shape[0], int(self.batch_size), self.torch_device
        graphed = use_graph(module, dev, where, extra_loss, grad_hook, epochs * (n // bs))
        lr, wd = float(self.learning_rate), float(self.weight_decay)
        # capturable: the step count on the device, for the graph
        opt = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=wd, capturable=graphed)
        graph = GraphedStep(module, opt, X, bs) if graphed else None
        on_cpu = dev.type == "cpu"
        last = 0.0
        for _ in range(epochs):
            # the CPU generator on every device: same batches
            perm = torch.randperm(n, generator=gen)
            if where == "device":
                perm = to_device(perm, dev)
            # the CPU adds Python floats (as it always did); a GPU sums on the device, read once
            total = 0.0 if on_cpu else torch.zeros((), dtype=torch.float64, device=dev)
            for start in range(0, n, bs):
                if graph is not None and start + bs <= n:  # a full mini-batch: one graph replay
                    graph.step(perm[start : start + bs])
                    continue
                xb = X[perm[start : start + bs]]
                if where != "device":
                    xb = to_device(xb, dev)
                loss = module.loss(xb, noise)
                if extra_loss is not None:
                    loss = loss + extra_loss(module, xb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if grad_hook is not None:
                    grad_hook(module)
                opt.step()
                if on_cpu:
                    total += float(loss.detach()) * xb.shape[0]
                else:
                    total.add_(loss.detach(), alpha=xb.shape[0])  # one kernel, summed in float64
            if graph is not None:
                total = total + graph.take_total()
            last = total / n
        module.eval()
        self.graph_replays_ = graph.replays if graph is not None else 0
        last = float(last)  # the only read of the loss: once per training call
        if not math.isfinite(last):
            raise DetectorError(
                f"detector {self.name}: training loss is not finite; lower learning_rate"
            )
        self.train_loss_ = last
        return X

    def _scores_of(self, batches) -> np.ndarray:
        """Per-row errors of standardised batches (tensors), gathered on the device and read back
        once; a :class:`~clad.errors.DetectorError` if any is not finite."""
        errors = []
        with torch.no_grad():
            for xb in batches:
                errors.append(torch.mean(((self.reconstruct(xb) - xb) ** 2).flatten(1), dim=1))
        out = torch.cat(errors).double().cpu().numpy()
        if not np.isfinite(out).all():
            raise DetectorError(
                f"detector {self.name}: score() produced non-finite values; lower learning_rate"
            )
        return out

    def _set_threshold(self, rows) -> None:
        """``threshold_`` from the scores of the standardised training rows ``rows`` (the tensor
        :meth:`_train` returned), in chunks of ``score_batch_size``."""
        step, dev = int(self.score_batch_size), self.torch_device
        scores = self._scores_of(
            to_device(rows[start : start + step], dev) for start in range(0, rows.shape[0], step)
        )
        self.threshold_ = float(np.quantile(scores, 1.0 - float(self.contamination)))

    def fit(self, X, y=None):
        """Train a new network from scratch on ``X`` (standardisation statistics from ``X``)."""
        self._check_params()
        for attr in ("n_features_in_", "module_"):
            self.__dict__.pop(attr, None)
        X = self._check_X(X)
        self.n_features_in_ = int(X.shape[-1])
        axes = tuple(range(X.ndim - 1))  # per feature: over rows (and the steps of windows)
        self.mean_ = X.mean(axis=axes)
        scale = X.std(axis=axes)
        self.scale_ = np.where(scale > 1e-12, scale, 1.0)
        self.n_train_calls_ = 0
        gen, _ = self._generators()
        module = self._build(self.n_features_in_)
        _init_(module, gen)
        self.module_ = module.to(self.torch_device)
        with self._threads():
            self._set_threshold(self._train(self.standardise(X), int(self.epochs), None))
        return self

    def partial_fit(self, X, y=None, extra_loss=None, epochs: int | None = None, grad_hook=None):
        """Continue training on ``X`` (``fit`` if never fitted); ``threshold_`` is recomputed on
        ``X``.

        Parameters
        ----------
        X : array
            The training rows.
        y : ignored
        extra_loss : callable, optional
            ``extra_loss(module, xb)``, added to every mini-batch loss.
        epochs : int, optional
            This call's epochs (default: ``epochs``).
        grad_hook : callable, optional
            ``grad_hook(module)`` sees the gradients before each optimiser step.
        """
        if not hasattr(self, "module_"):
            return self.fit(X)
        self._check_params()
        if epochs is not None:
            check(self.name, {"epochs": epochs}, {"epochs": [COUNT]})
        epochs = int(self.epochs if epochs is None else epochs)
        with self._threads():
            self._set_threshold(self._train(self.standardise(X), epochs, extra_loss, grad_hook))
        return self

    def score(self, X) -> np.ndarray:
        """Per-row mean squared reconstruction error (over a row's features, and a window's
        steps; higher = more anomalous), in batches."""
        self._require_fitted()
        with self._threads():
            return self._scores_of(self.iter_batches(X))
