"""PyTorch detectors: a dense autoencoder and a small variational autoencoder, each a network
built for :class:`~clad.detectors.torch_base.TorchDetector` (which standardises, trains, sets the
threshold and scores: see :mod:`clad.detectors.torch_base`).

This module imports torch; clad imports it only when one of these detectors is used (the
registered names ``autoencoder`` and ``vae`` are lazy import paths).
"""

from __future__ import annotations

from ..validation import Interval, Real
import torch
from torch import nn

from .torch_base import TorchDetector

__all__ = ["AutoEncoder", "VAE", "dense_squared_grad_sums"]


def _mlp(sizes: list[int], last_activation: bool) -> nn.Sequential:
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1], device="meta"))
        if i < len(sizes) - 2 or last_activation:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class _DenseAE(nn.Module):
    graph_safe = True  # its loss draws no random numbers: a training step can be a CUDA graph
    stacked_form = "dense"  # how clad.detectors.torch_replicas stacks replicas of it

    def __init__(self, n_features: int, hidden: tuple[int, ...]):
        super().__init__()
        self.encoder = _mlp([n_features, *hidden], last_activation=False)
        self.decoder = _mlp([*hidden[::-1], n_features], last_activation=False)

    def reconstruct(self, x):
        return self.decoder(self.encoder(x))

    forward = reconstruct

    def loss(self, x, noise=None):
        return torch.mean((self.reconstruct(x) - x) ** 2)


class _DenseVAE(nn.Module):
    stacked_form = "vae"

    def __init__(self, n_features: int, hidden: tuple[int, ...], beta: float):
        super().__init__()
        body, latent = list(hidden[:-1]), hidden[-1]
        self.body = _mlp([n_features, *body], last_activation=True) if body else nn.Identity()
        width = body[-1] if body else n_features
        self.mu = nn.Linear(width, latent, device="meta")
        self.logvar = nn.Linear(width, latent, device="meta")
        self.decoder = _mlp([latent, *body[::-1], n_features], last_activation=False)
        self.beta = float(beta)

    def reconstruct(self, x):  # deterministic: the decoded mean
        return self.decoder(self.mu(self.body(x)))

    forward = reconstruct

    def loss(self, x, noise=None):
        h = self.body(x)
        mu, logvar = self.mu(h), self.logvar(h).clamp(-10.0, 10.0)
        eps = torch.randn(mu.shape, generator=noise, device=mu.device, dtype=mu.dtype)
        recon = self.decoder(mu + torch.exp(0.5 * logvar) * eps)
        rec = torch.mean((recon - x) ** 2)
        kl = torch.mean(torch.sum(1 + logvar - mu**2 - torch.exp(logvar), dim=1))
        return rec + self.beta * (-0.5 * kl / x.shape[1])


class AutoEncoder(TorchDetector):
    """Dense autoencoder ``d -> hidden_sizes -> reversed(hidden_sizes) -> d`` (ReLU, linear
    bottleneck), trained with Adam on the mean squared reconstruction error.

    Parameters
    ----------
    hidden_sizes : sequence of int, default (32, 8)
        Encoder widths; the last one is the bottleneck. The decoder mirrors them.
    epochs, batch_size, learning_rate, weight_decay :
        Training (Adam) settings of every ``fit`` / ``partial_fit`` call.
    contamination : float in (0, 0.5)
        ``threshold_`` is the ``1 - contamination`` quantile of the training errors.
    device : str, default "cpu"
    score_batch_size : int
        Rows moved to the device at once when scoring (the training rows for ``threshold_`` too);
        the only limit on a scoring batch: raise it on a GPU with memory to spare.
    num_threads : int or None
        If set, torch's intra-op thread count while this detector trains or scores (restored
        afterwards); 1 is often fastest for networks this small on a busy CPU.
    random_state : int or None

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 4))
    >>> ae = AutoEncoder(hidden_sizes=(8, 2), epochs=5, random_state=0).fit(X)
    >>> s = ae.score(X)
    >>> s.shape, bool(np.isfinite(s).all()), bool((s > ae.threshold_).mean() <= 0.11)
    ((200,), True, True)
    >>> bool((AutoEncoder(hidden_sizes=(8, 2), epochs=5, random_state=0).fit(X).score(X) == s).all())
    True
    """

    def _build(self, n_features: int) -> nn.Module:
        return _DenseAE(n_features, self._hidden())

    def _squared_grad_sums(self, xb) -> list:
        """Rows of a table: :func:`dense_squared_grad_sums` (one backward pass, products of
        squares); windows (3-D rows) through ``torch.func`` as for any detector."""
        if xb.dim() != 2:
            return super()._squared_grad_sums(xb)
        return dense_squared_grad_sums(self.module_, xb)


def dense_squared_grad_sums(module: nn.Module, xb) -> list:
    """For each parameter of a dense autoencoder (linear layers and element-wise activations in
    ``module.encoder`` then ``module.decoder``; rows of a table), the sum over the rows of ``xb``
    of the squared gradient of that row's mean squared reconstruction error.

    One forward and one backward pass for the whole batch give each row's gradient ``d_i`` with
    respect to each linear layer's output (rows do not interact); that row's weight gradient is
    ``outer(d_i, a_i)`` with ``a_i`` the layer's input, whose square is ``outer(d_i^2, a_i^2)``,
    so the sum over rows is one matrix product ``(d^2)^T a^2`` (and ``sum_i d_i^2`` for the
    bias). Equal to one backward pass per row up to float rounding."""
    linears, inputs, outputs = [], [], []
    with torch.enable_grad():
        h = xb
        for layer in (*module.encoder, *module.decoder):
            if isinstance(layer, nn.Linear):
                linears.append(layer)
                inputs.append(h.detach())
                h = nn.functional.linear(h, layer.weight.detach(), layer.bias.detach())
                if not h.requires_grad:  # the first layer: the graph starts here
                    h.requires_grad_(True)
                outputs.append(h)
            else:
                h = layer(h)
        loss = ((h - xb) ** 2).mean(dim=1).sum()
        grads = torch.autograd.grad(loss, outputs)
    result = {}
    for layer, a, d in zip(linears, inputs, grads):
        d2 = d.square()
        result[id(layer.weight)] = d2.T @ a.square()
        result[id(layer.bias)] = d2.sum(dim=0)
    return [result[id(p)] for p in module.parameters()]


class VAE(TorchDetector):
    """Small variational autoencoder: encoder ``d -> hidden_sizes[:-1]`` then a Gaussian latent of
    size ``hidden_sizes[-1]``; loss = mean squared reconstruction error + ``beta`` x KL divergence
    (per feature). Scores are the reconstruction error of the decoded latent mean (deterministic).

    Parameters are those of :class:`AutoEncoder`, plus ``beta`` (weight of the KL term).

    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 4))
    >>> v = VAE(hidden_sizes=(8, 2), epochs=5, random_state=0).fit(X)
    >>> v.score(X).shape
    (200,)
    """

    _parameter_constraints = {"beta": [Interval(Real, 0, None, closed="left")]}

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
        beta: float = 1.0,
        random_state: int | None = None,
    ):
        super().__init__(
            hidden_sizes=hidden_sizes,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            contamination=contamination,
            device=device,
            score_batch_size=score_batch_size,
            num_threads=num_threads,
            random_state=random_state,
        )
        self.beta = beta

    def _build(self, n_features: int) -> nn.Module:
        return _DenseVAE(n_features, self._hidden(), float(self.beta))
