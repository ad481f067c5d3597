"""Stacked forward passes: K replicas of one torch network computed at once, their parameters
stacked along a new first axis (name -> (K, ...)), for :mod:`clad.detectors.torch_replicas`.
Dense autoencoders, VAEs and recurrent (LSTM, GRU) sequence autoencoders have a stacked form
(the recurrent layers unrolled with the equations of PyTorch's documentation)."""

from __future__ import annotations

from ..errors import CladValueError
from .torch_base import nn, torch

__all__ = ["stacked_form", "stacked_reconstruct", "stacked_losses", "ReplicaView", "cell_step"]


# -- stacked forward passes -----------------------------------------------------------------------
def _linear(p, name, h):
    """``h`` (K, rows, in) through the K linear layers ``name`` of the stacked parameters ``p``."""
    return torch.baddbmm(p[name + ".bias"].unsqueeze(1), h, p[name + ".weight"].transpose(1, 2))


def _sequential(seq, prefix, p, h):
    """``h`` through the stacked layers of ``seq`` (a VAE's ``nn.Identity`` body: unchanged)."""
    for i, layer in enumerate(seq if isinstance(seq, nn.Sequential) else ()):
        if isinstance(layer, nn.Linear):
            h = _linear(p, f"{prefix}.{i}", h)
        elif isinstance(layer, nn.ReLU):
            h = torch.relu(h)
        elif not isinstance(layer, nn.Identity):  # pragma: no cover - clad's layers are these
            raise CladValueError(f"replicas: no stacked form of layer {type(layer).__name__}")
    return h


def _flat_linear(x, w, b):
    """(K, rows, steps, in) or (K, rows, in) through K linear maps (K, out, in), (K, out)."""
    shape = x.shape
    y = torch.baddbmm(b.unsqueeze(1), x.reshape(shape[0], -1, shape[-1]), w.transpose(1, 2))
    return y.reshape(*shape[:-1], w.shape[1])


def cell_step(lstm: bool, gi_t, gh, h, c):
    """One step of an LSTM (``lstm``) or GRU cell, PyTorch's documented equations, from the input
    and recurrent pre-activations ``gi_t`` and ``gh`` (gates on the last axis); returns (h, c)."""
    if lstm:
        # chunk: one backward concatenation (slices would each fill a full-size gradient)
        i, f, g, o = (gi_t + gh).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
    ir, iz, in_ = gi_t.chunk(3, dim=-1)
    hr, hz, hn = gh.chunk(3, dim=-1)
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
    return (1 - z) * torch.tanh(in_ + r * hn) + z * h, c


def _recurrent(layer, prefix, p, x, constant_input=False):
    """One recurrent layer (LSTM or GRU, one layer, batch first, with biases) for K replicas,
    unrolled with the equations of PyTorch's documentation. ``x`` is (K, rows, steps, in), or
    (K, rows, in) with ``constant_input`` (the same input at every step: the decoder's code).
    Returns (outputs (K, rows, steps, hidden), last hidden state (K, rows, hidden))."""
    w_ih, w_hh = p[prefix + ".weight_ih_l0"], p[prefix + ".weight_hh_l0"]
    b_ih, b_hh = p[prefix + ".bias_ih_l0"], p[prefix + ".bias_hh_l0"]
    gi = _flat_linear(x, w_ih, b_ih)
    k, rows = gi.shape[0], gi.shape[1]
    steps = constant_input if constant_input else gi.shape[2]
    hidden = layer.hidden_size
    h = gi.new_zeros(k, rows, hidden)
    c = gi.new_zeros(k, rows, hidden)
    lstm = isinstance(layer, nn.LSTM)
    w_hh_t = w_hh.transpose(1, 2)
    b_hh = b_hh.unsqueeze(1)
    outs = []
    # unbind: one backward stack (a slice per step would fill a full-size gradient per step)
    per_step = [gi] * steps if constant_input else gi.unbind(dim=2)
    for gi_t in per_step:
        h, c = cell_step(lstm, gi_t, torch.baddbmm(b_hh, h, w_hh_t), h, c)
        outs.append(h)
    return torch.stack(outs, dim=2), h


def stacked_form(template) -> str | None:
    """How a network is stacked (its ``stacked_form``: "dense", "vae", "sequence"; None: not at all)."""
    return getattr(template, "stacked_form", None)


def stacked_reconstruct(template: nn.Module, p: dict, x):
    """The deterministic reconstruction of ``x`` (K, rows, ...) by K replicas of the network
    ``template`` whose parameters are the stacked tensors ``p`` (name -> (K, ...))."""
    if stacked_form(template) == "dense":
        h = _sequential(template.encoder, "encoder", p, x)
        return _sequential(template.decoder, "decoder", p, h)
    if stacked_form(template) == "vae":
        h = _sequential(template.body, "body", p, x)
        return _sequential(template.decoder, "decoder", p, _linear(p, "mu", h))
    if stacked_form(template) == "sequence":
        h = x
        for i, layer in enumerate(template.encoder):
            h, last = _recurrent(layer, f"encoder.{i}", p, h)
        h = last
        for i, layer in enumerate(template.decoder):
            steps = x.shape[2] if i == 0 else False  # the first layer reads the code at every step
            h, _ = _recurrent(layer, f"decoder.{i}", p, h, constant_input=steps)
        return _flat_linear(h, p["output.weight"], p["output.bias"])
    raise CladValueError(f"replicas: no stacked form of network {type(template).__name__}")


def _row_errors(recon, x):
    """(K, rows): each row's mean squared error over its features (and steps)."""
    return ((recon - x) ** 2).flatten(2).mean(dim=2)


def stacked_losses(template, p, x, weights, eps):
    """(K,): each replica's training loss on its mini-batch.

    Parameters
    ----------
    template : nn.Module
        The network every replica is a copy of.
    p : dict of str to tensor
        The stacked parameters (name -> (K, ...)).
    x : tensor
        The mini-batches (K, rows, ...).
    weights : tensor
        The rows' weights (K, rows) (1 / rows: the mean).
    eps : tensor or None
        The VAE's noise (K, rows, latent).
    """
    if stacked_form(template) == "vae":
        h = _sequential(template.body, "body", p, x)
        mu, logvar = _linear(p, "mu", h), _linear(p, "logvar", h).clamp(-10.0, 10.0)
        recon = _sequential(template.decoder, "decoder", p, mu + torch.exp(0.5 * logvar) * eps)
        rec = (_row_errors(recon, x) * weights).sum(dim=1)
        kl_rows = torch.sum(1 + logvar - mu**2 - torch.exp(logvar), dim=2)
        kl = -0.5 * (kl_rows * weights).sum(dim=1) / x.shape[-1]
        return rec + template.beta * kl
    return (_row_errors(stacked_reconstruct(template, p, x), x) * weights).sum(dim=1)


class ReplicaView:
    """One replica of a stacked model, as the hooks of a strategy see a module: ``parameters()``
    (views into the stacked parameters, in the network's order; gradients flow to the stack) and
    ``reconstruct(xb)``."""

    def __init__(self, template, params: dict, index: int):
        self._template = template
        self._params = {n: t[index] for n, t in params.items()}

    def parameters(self):
        return iter(self._params.values())

    def named_parameters(self):
        return iter(self._params.items())

    def reconstruct(self, xb):
        one = {n: t.unsqueeze(0) for n, t in self._params.items()}
        return stacked_reconstruct(self._template, one, xb.unsqueeze(0))[0]

    forward = __call__ = reconstruct

    def modules(self):
        return self._template.modules()
