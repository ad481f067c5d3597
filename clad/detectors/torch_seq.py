"""Sequence autoencoders (LSTM, GRU) for windows of a time series.

A row is a window ``(steps, features)`` (see :mod:`clad.datasets.windows`); a 2-D table is read as
windows of one step. The encoder, a stack of recurrent layers of widths ``hidden_sizes``, reads
the window; its last layer's final hidden state is the code. The decoder gets the code at every
step, runs the recurrent widths in reverse and maps each step back to the features with a linear
layer (the sequence-to-sequence autoencoder of Malhotra et al. 2016, as in pyCLAD's LSTM
autoencoder). A window's score is its mean squared reconstruction error over steps and features
(standardised per feature); higher = more anomalous.

Everything else is :class:`~clad.detectors.torch_ae.TorchDetector`'s: ``device``, seeds drawn from
``random_state`` only, ``epochs``, ``batch_size``, ``partial_fit`` with the ``extra_loss`` and
``grad_hook`` hooks (so ``fine_tune``, ``ewc``, ``lwf``, ``agem`` and ``der`` work unchanged),
``threshold_`` from ``contamination``. Registered as ``lstm_autoencoder`` and ``gru_autoencoder``.

>>> import numpy as np
>>> t = np.linspace(0, 12 * np.pi, 600)
>>> X = np.stack([np.sin(t), np.cos(t)], axis=1)
>>> from clad.datasets.windows import sliding_windows
>>> W = sliding_windows(X, 20, 5)
>>> ae = LSTMAutoEncoder(hidden_sizes=(8,), epochs=5, random_state=0, num_threads=1).fit(W)
>>> ae.score(W).shape, ae.n_features_in_
((117,), 2)
>>> bool((LSTMAutoEncoder(hidden_sizes=(8,), epochs=5, random_state=0, num_threads=1).fit(W).score(W) == ae.score(W)).all())
True
"""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError
from .torch_ae import TorchDetector, nn, torch

__all__ = ["SequenceAutoEncoder", "LSTMAutoEncoder", "GRUAutoEncoder"]

_CELLS = {"lstm": nn.LSTM, "gru": nn.GRU}


class _SeqAE(nn.Module):
    def __init__(self, n_features: int, hidden: tuple[int, ...], cell: str):
        super().__init__()
        Cell = _CELLS[cell]
        widths = [n_features, *hidden]
        self.encoder = nn.ModuleList(Cell(a, b, batch_first=True, device="meta") for a, b in zip(widths, widths[1:]))
        back = [hidden[-1], *hidden[::-1]]
        self.decoder = nn.ModuleList(Cell(a, b, batch_first=True, device="meta") for a, b in zip(back, back[1:]))
        self.output = nn.Linear(hidden[0], n_features, device="meta")

    def encode(self, x):
        h = x
        for layer in self.encoder:
            h, state = layer(h)
        last = state[0] if isinstance(state, tuple) else state  # LSTM: (h_n, c_n); GRU: h_n
        return last[-1]  # (batch, code)

    def reconstruct(self, x):
        code = self.encode(x)
        h = code.unsqueeze(1).expand(-1, x.shape[1], -1)
        for layer in self.decoder:
            h, _ = layer(h)
        return self.output(h)

    forward = reconstruct

    def loss(self, x, noise=None):
        return torch.mean((self.reconstruct(x) - x) ** 2)


class SequenceAutoEncoder(TorchDetector):
    """Recurrent sequence-to-sequence autoencoder over windows (see the module docstring); the
    subclasses choose the recurrent layer.

    Parameters
    ----------
    hidden_sizes : sequence of int, default (32,)
        Widths of the stacked recurrent encoder layers; the last is the code size. The decoder
        mirrors them.
    epochs, batch_size, learning_rate, weight_decay, contamination, device, score_batch_size,
    num_threads, random_state :
        As for :class:`~clad.detectors.torch_ae.AutoEncoder`.
    """

    _cell = "lstm"

    def __init__(self, hidden_sizes=(32,), epochs: int = 20, batch_size: int = 64, learning_rate: float = 1e-3,
                 weight_decay: float = 0.0, contamination: float = 0.1, device: str = "cpu",
                 score_batch_size: int = 1024, num_threads: int | None = None, random_state: int | None = None):
        super().__init__(hidden_sizes=hidden_sizes, epochs=epochs, batch_size=batch_size,
                         learning_rate=learning_rate, weight_decay=weight_decay, contamination=contamination,
                         device=device, score_batch_size=score_batch_size, num_threads=num_threads,
                         random_state=random_state)

    def _shape_input(self, X: np.ndarray) -> np.ndarray:
        if X.ndim == 2:
            X = X[:, None, :]  # a table: windows of one step
        if X.ndim != 3 or X.shape[0] == 0 or X.shape[1] == 0:
            raise CladValueError(f"{self.name}: expected non-empty windows (rows x steps x features) or a 2-D "
                                 f"table, got shape {X.shape}")
        return X

    def _build(self, n_features: int) -> nn.Module:
        hidden = (self.hidden_sizes,) if isinstance(self.hidden_sizes, (int, np.integer)) else self.hidden_sizes
        return _SeqAE(n_features, tuple(int(h) for h in hidden), self._cell)

    def _squared_grad_sums(self, xb) -> list:
        """As :meth:`TorchDetector._squared_grad_sums`, one row at a time: ``torch.func.vmap`` has
        no batching rule for the fused recurrent kernels (it loops anyway for LSTM, and fails for GRU)."""
        params = list(self.module_.parameters())
        sums = [torch.zeros_like(p) for p in params]
        for x in xb:
            for total, g in zip(sums, torch.autograd.grad(self.reconstruction_loss(x[None]), params)):
                total += g.detach() ** 2
        return sums


class LSTMAutoEncoder(SequenceAutoEncoder):
    """:class:`SequenceAutoEncoder` with LSTM layers (registered as ``lstm_autoencoder``)."""

    _cell = "lstm"


class GRUAutoEncoder(SequenceAutoEncoder):
    """:class:`SequenceAutoEncoder` with GRU layers (registered as ``gru_autoencoder``)."""

    _cell = "gru"
