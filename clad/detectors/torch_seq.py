"""Sequence autoencoders (LSTM, GRU) for windows of a time series.

A row is a window ``(steps, features)`` (see :mod:`clad.datasets.windows`); a 2-D table is read as
windows of one step. The encoder, a stack of recurrent layers of widths ``hidden_sizes``, reads
the window; its last layer's final hidden state is the code. The decoder gets the code at every
step, runs the recurrent widths in reverse and maps each step back to the features with a linear
layer (the sequence-to-sequence autoencoder of Malhotra et al. 2016, as in pyCLAD's LSTM
autoencoder). A window's score is its mean squared reconstruction error over steps and features
(standardised per feature); higher = more anomalous.

Everything else (``device``, seeds, ``partial_fit`` and its hooks, so every torch strategy works
unchanged) is :class:`~clad.detectors.torch_base.TorchDetector`'s. Registered as
``lstm_autoencoder`` and ``gru_autoencoder``.

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
from .torch_base import TorchDetector, nn, torch
from .torch_stacked import cell_step

__all__ = [
    "SequenceAutoEncoder",
    "LSTMAutoEncoder",
    "GRUAutoEncoder",
    "per_row_squared_grad_sums",
    "unrolled_squared_grad_sums",
]

_CELLS = {"lstm": nn.LSTM, "gru": nn.GRU}


class _SeqAE(nn.Module):
    graph_safe = True  # its loss draws no random numbers: a training step can be a CUDA graph
    stacked_form = "sequence"  # how clad.detectors.torch_replicas stacks replicas of it

    def __init__(self, n_features: int, hidden: tuple[int, ...], cell: str):
        super().__init__()
        Cell = _CELLS[cell]
        widths = [n_features, *hidden]
        self.encoder = nn.ModuleList(
            Cell(a, b, batch_first=True, device="meta") for a, b in zip(widths, widths[1:])
        )
        back = [hidden[-1], *hidden[::-1]]
        self.decoder = nn.ModuleList(
            Cell(a, b, batch_first=True, device="meta") for a, b in zip(back, back[1:])
        )
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

    def __init__(
        self,
        hidden_sizes=(32,),
        epochs: int = 20,
        batch_size: int = 64,
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        contamination: float = 0.1,
        device: str = "cpu",
        score_batch_size: int = 1024,
        num_threads: int | None = None,
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

    def _shape_input(self, X: np.ndarray) -> np.ndarray:
        if X.ndim == 2:
            X = X[:, None, :]  # a table: windows of one step
        if X.ndim != 3 or X.shape[0] == 0 or X.shape[1] == 0:
            raise CladValueError(
                f"{self.name}: expected non-empty windows (rows x steps x features) or a 2-D "
                f"table, got shape {X.shape}"
            )
        return X

    def _build(self, n_features: int) -> nn.Module:
        return _SeqAE(n_features, self._hidden(), self._cell)

    def _fisher_batch_size(self) -> int:
        # rows per batched pass: score_batch_size on a GPU; on the CPU at most 256 (GRU) or 128
        # (LSTM), whose step-by-step tensors stay in cache and whose memory the allocator keeps
        # from one pass to the next (larger batches are slower there: 0.3 s instead of 0.21 s
        # for an LSTM's 2,000 windows of 50 x 25 at 256 rows)
        step = int(self.score_batch_size)
        if self.torch_device.type != "cpu":
            return step
        return min(step, 128 if self._cell == "lstm" else 256)

    def _squared_grad_sums(self, xb) -> list:
        """As :meth:`TorchDetector._squared_grad_sums`, in one batched pass: ``torch.func.vmap``
        has no batching rule for the fused recurrent kernels, so each row's gradient is assembled
        from the gradients of the layers' pre-activations, which are per row because rows do not
        interact (:func:`per_row_squared_grad_sums`: LSTM layers differentiated by hand, GRU
        layers unrolled step by step under autograd)."""
        return per_row_squared_grad_sums(self.module_, xb)


def _unrolled_layer(layer, x, taps):
    """One recurrent layer (``nn.LSTM`` or ``nn.GRU``, one layer, batch first, with biases) on
    ``x`` (rows, steps, in), unrolled with the equations of PyTorch's documentation. Appends to
    ``taps`` what the per-row gradients need: (layer, input, input pre-activations, previous
    hidden states, recurrent pre-activations per step). Returns (outputs, last hidden state)."""
    # the weights' own gradients are not needed (only the pre-activations'): detached
    w_ih, w_hh, b_ih, b_hh = (
        p.detach()
        for p in (layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0, layer.bias_hh_l0)
    )
    rows = x.shape[0]
    gi = nn.functional.linear(x, w_ih, b_ih)  # (rows, steps, gates * hidden)
    if not gi.requires_grad:  # the first layer: the graph starts here
        gi.requires_grad_(True)
    hidden = layer.hidden_size
    h = x.new_zeros(rows, hidden)
    c = x.new_zeros(rows, hidden)
    lstm = isinstance(layer, nn.LSTM)
    prev, ghs, outs = [], [], []
    for gi_t in gi.unbind(dim=1):  # unbind: one backward stack, not a full-size gradient per step
        gh = nn.functional.linear(h, w_hh, b_hh)
        if not gh.requires_grad:  # the first step (h = 0): its bias still has a gradient
            gh.requires_grad_(True)
        prev.append(h)
        ghs.append(gh)
        h, c = cell_step(lstm, gi_t, gh, h, c)
        outs.append(h)
    taps.append((layer, x, gi, torch.stack(prev, dim=1), ghs))
    return torch.stack(outs, dim=1), h


def _lstm_states(layer, x):
    """Forward pass of one LSTM layer (one layer, with biases) on step-major ``x`` (steps, rows,
    in) with PyTorch's own kernel, and what the hand-written backward pass
    (:func:`_lstm_gate_grads`) needs, step-major: the input, the previous hidden states, the forget
    gates, and the factors that turn the gradients of a step's hidden and cell states into the
    gradients of its gate pre-activations. Returns (outputs, saved)."""
    w_ih, w_hh = layer.weight_ih_l0, layer.weight_hh_l0
    b_ih, b_hh = layer.bias_ih_l0, layer.bias_hh_l0
    hidden = layer.hidden_size
    out = layer(x.transpose(0, 1))[0].transpose(0, 1)  # the layer is batch first
    prev = torch.cat((out.new_zeros(1, *out.shape[1:]), out[:-1]))
    gates = nn.functional.linear(prev, w_hh, b_hh)
    if x.stride(0) == 0:  # the same input at every step (the decoder's code): projected once
        gates += nn.functional.linear(x[0], w_ih, b_ih)
    else:
        gates += nn.functional.linear(x, w_ih, b_ih)
    # tanh(z) = 2 sigmoid(2 z) - 1: one sigmoid over all gates (PyTorch's CPU tanh is several
    # times slower than its sigmoid)
    gates[..., 2 * hidden : 3 * hidden] *= 2
    steps, rows = gates.shape[:2]
    # gate by gate, each contiguous (element-wise work on strided slices is several times slower)
    i, f, g, o = (
        gates.sigmoid_().view(steps, rows, 4, hidden).permute(2, 0, 1, 3).contiguous().unbind(0)
    )
    g = g.mul_(2).sub_(1)
    ig = i * g
    c = torch.empty_like(ig)  # c_t = f_t c_{t-1} + i_t g_t: the only recurrence left
    c[0] = ig[0]
    for t in range(1, steps):
        torch.addcmul(ig[t], f[t], c[t - 1], out=c[t])
    tc = c.mul(2).sigmoid_().mul_(2).sub_(1)  # tanh(c)
    c_prev = torch.cat((c.new_zeros(1, rows, hidden), c[:-1]))
    # d pre-activation = (d c_t or d h_t) * factor, gate by gate (i, f, g, o); s'(z) = s - s^2
    factors = torch.stack(
        (
            torch.addcmul(i, i, i, value=-1).mul_(g),
            torch.addcmul(f, f, f, value=-1).mul_(c_prev),
            torch.addcmul(i, i, g * g, value=-1),
            torch.addcmul(o, o, o, value=-1).mul_(tc),
        ),
        dim=2,
    )
    factors = factors.view(steps, rows, 4 * hidden)
    dc_dh = torch.addcmul(o, o, tc * tc, value=-1)  # o (1 - tanh(c)^2)
    saved = {"layer": layer, "x": x, "prev": prev, "f": f, "dc_dh": dc_dh, "factors": factors}
    return out, saved


def _lstm_gate_grads(saved, dh_out):
    """Backpropagation through time of one LSTM layer, by hand: ``dh_out`` (steps, rows, hidden)
    is the loss's gradient with respect to the layer's output at each step (not through the
    recurrence); returns the gradient with respect to the gate pre-activations (steps, rows,
    4 * hidden). Rows do not interact, so each row's slice is that row's own gradient."""
    w_hh = saved["layer"].weight_hh_l0
    f, dc_dh, factors = saved["f"], saved["dc_dh"], saved["factors"]
    steps = dh_out.shape[0]
    d_gates = torch.empty_like(factors)
    dc = None
    for t in range(steps - 1, -1, -1):
        dh = dh_out[t] if t == steps - 1 else torch.addmm(dh_out[t], d_gates[t + 1], w_hh)
        dc = dh * dc_dh[t] if dc is None else torch.addcmul(dc * f[t + 1], dh, dc_dh[t])
        # i, f, g from d c_t, o from d h_t (a concatenation then one product: faster than
        # products into strided slices)
        torch.cat((dc, dc, dc, dh), dim=1, out=d_gates[t]).mul_(factors[t])
    return d_gates


def _lstm_squared_grad_sums(module: _SeqAE, xb) -> list:
    """:func:`per_row_squared_grad_sums` of an autoencoder whose layers are all LSTMs: PyTorch's
    forward kernel, then a hand-written backward pass over all rows at once (a few operations per
    step, no autograd graph), the per-row weight gradients formed by batched matrix products."""
    with torch.no_grad():
        x = xb.transpose(0, 1).contiguous()  # step-major from here on
        encoder, decoder = [], []
        h = x
        for layer in module.encoder:
            h, saved = _lstm_states(layer, h)
            encoder.append(saved)
        code = h[-1]
        h = code.unsqueeze(0).expand(x.shape[0], -1, -1)
        for layer in module.decoder:
            h, saved = _lstm_states(layer, h)
            decoder.append(saved)
        w_out, b_out = module.output.weight, module.output.bias
        d_out = nn.functional.linear(h, w_out, b_out).sub_(x).mul_(2.0 / (x.shape[0] * x.shape[2]))
        result = {}

        def weight(d, inp):  # sum over rows of (sum_t d_t outer inp_t)^2
            return torch.bmm(d.permute(1, 2, 0), inp.transpose(0, 1)).square_().sum(dim=0)

        def bias(d_sum):
            return d_sum.square().sum(dim=0)

        result[id(w_out)] = weight(d_out, h)
        result[id(b_out)] = bias(d_out.sum(dim=0))
        dh = d_out @ w_out
        for saved in reversed(encoder + decoder):
            d_gates = _lstm_gate_grads(saved, dh)
            layer = saved["layer"]
            d_sum = d_gates.sum(dim=0)
            result[id(layer.weight_hh_l0)] = weight(d_gates, saved["prev"])
            result[id(layer.bias_ih_l0)] = result[id(layer.bias_hh_l0)] = bias(d_sum)
            if saved is decoder[0]:  # the same code at every step: one outer product per row
                # a row's gradient is outer(d_sum, code), whose square is outer(d_sum^2, code^2)
                result[id(layer.weight_ih_l0)] = d_sum.square().T @ code.square()
                dh = code.new_zeros(x.shape[0], *code.shape)
                dh[-1] = d_sum @ layer.weight_ih_l0
            else:
                result[id(layer.weight_ih_l0)] = weight(d_gates, saved["x"])
                if saved is not encoder[0]:
                    dh = d_gates @ layer.weight_ih_l0
        return [result[id(p)] for p in module.parameters()]


def per_row_squared_grad_sums(module: _SeqAE, xb) -> list:
    """For each parameter of a sequence autoencoder (in ``module.parameters()`` order), the sum
    over the rows of ``xb`` of the squared gradient of that row's reconstruction loss.

    One forward and one backward pass for the whole batch: the summed loss is differentiated with
    respect to every pre-activation, and since a row's pre-activations depend on that row only,
    the gradient of row ``i`` is ``sum_t d_it outer(input_it)`` for each weight and ``sum_t d_it``
    for each bias. Equal to one backward pass per row up to float rounding. Networks of LSTM layers
    are differentiated by hand (:func:`_lstm_squared_grad_sums`), others through autograd on
    unrolled layers (:func:`unrolled_squared_grad_sums`)."""
    if all(isinstance(layer, nn.LSTM) for layer in (*module.encoder, *module.decoder)):
        return _lstm_squared_grad_sums(module, xb)
    return unrolled_squared_grad_sums(module, xb)


def unrolled_squared_grad_sums(module: _SeqAE, xb) -> list:
    """:func:`per_row_squared_grad_sums` through autograd on layers unrolled step by step
    (:func:`_unrolled_layer`; LSTM or GRU)."""
    taps = []
    h = xb
    for layer in module.encoder:
        h, last = _unrolled_layer(layer, h, taps)
    h = last.unsqueeze(1).expand(-1, xb.shape[1], -1)
    for layer in module.decoder:
        h, _ = _unrolled_layer(layer, h, taps)
    out = nn.functional.linear(h, module.output.weight.detach(), module.output.bias.detach())
    loss = ((out - xb) ** 2).flatten(1).mean(dim=1).sum()
    wrt = [out]
    for _, _, gi, _, ghs in taps:
        wrt += [gi, *ghs]
    grads = iter(torch.autograd.grad(loss, wrt))

    def weight(d, inp):  # sum over rows of (sum_t d_t outer inp_t)^2
        # the same input at every step (the decoder's code): one outer product
        if inp.stride(1) == 0:
            per_row = d.sum(dim=1).unsqueeze(2) * inp[:, 0].unsqueeze(1)
        else:
            per_row = torch.bmm(d.transpose(1, 2), inp)
        return per_row.square_().sum(dim=0)

    def bias(d):
        return d.sum(dim=1).square_().sum(dim=0)

    result = {}
    d_out = next(grads)
    result[id(module.output.weight)] = weight(d_out, h)
    result[id(module.output.bias)] = bias(d_out)
    for layer, inp, _, prev, ghs in taps:
        d_gi = next(grads)
        d_gh = torch.stack([next(grads) for _ in ghs], dim=1)
        result[id(layer.weight_ih_l0)] = weight(d_gi, inp)
        result[id(layer.bias_ih_l0)] = bias(d_gi)
        result[id(layer.weight_hh_l0)] = weight(d_gh, prev)
        result[id(layer.bias_hh_l0)] = bias(d_gh)
    return [result[id(p)].detach() for p in module.parameters()]


class LSTMAutoEncoder(SequenceAutoEncoder):
    """:class:`SequenceAutoEncoder` with LSTM layers (registered as ``lstm_autoencoder``)."""

    _cell = "lstm"


class GRUAutoEncoder(SequenceAutoEncoder):
    """:class:`SequenceAutoEncoder` with GRU layers (registered as ``gru_autoencoder``)."""

    _cell = "gru"
