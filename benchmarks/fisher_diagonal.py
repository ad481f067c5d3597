"""The Fisher diagonal (EWC) of clad's autoencoders: vectorised per-row gradients against one
backward pass per row.

``fisher_diagonal`` needs each row's own gradient of its reconstruction loss. The dense
autoencoder on a table gets their squares from one backward pass
(:func:`clad.detectors.torch_ae.dense_squared_grad_sums`), the VAE with ``torch.func`` (``vmap``
over ``grad``); the sequence autoencoders, whose fused
recurrent kernels ``vmap`` cannot batch, with one batched pass over the gates' gradients
(:func:`clad.detectors.torch_seq.per_row_squared_grad_sums`: a hand-written backward pass through
time for LSTM layers, autograd on unrolled layers for GRU layers). The reference is the plain loop: a
backward pass per row (under ``gradient_pass``, so it runs on CUDA too). Both are timed on the same
rows of the same fitted network and compared element by element (largest difference relative to
the largest entry of each parameter tensor). Target: vectorised at least 10x faster on 2,000 rows,
equal within 1e-6 relative.

    python benchmarks/fisher_diagonal.py [--rows 2000] [--device cpu] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's clad, even when another is installed

import numpy as np  # noqa: E402
import torch  # noqa: E402

from _machine import describe  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder  # noqa: E402
from clad.detectors.torch_seq import GRUAutoEncoder, LSTMAutoEncoder  # noqa: E402


def row_loop(det, X) -> list:
    """One backward pass per row; the squares summed in float64 (a reference free of float32
    accumulation error over thousands of rows)."""
    params = list(det.module_.parameters())
    sums = [torch.zeros_like(p, dtype=torch.float64) for p in params]
    with det.gradient_pass():
        for xb in det.iter_batches(X):
            for x in xb:
                for total, g in zip(
                    sums, torch.autograd.grad(det.reconstruction_loss(x[None]), params)
                ):
                    total += g.double() ** 2
    return [s / len(X) for s in sums]


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch's intra-op threads (default: torch's choice)",
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(describe())
    print(
        f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}, device {args.device}, rows {args.rows}"
    )
    rng = np.random.default_rng(0)
    t = np.arange(50)[None, :, None]
    windows = np.sin(
        2 * np.pi * t / 12.5 + rng.uniform(0, 6.3, size=(args.rows, 1, 25))
    ) + 0.05 * rng.normal(size=(args.rows, 50, 25))
    table = rng.normal(size=(args.rows, 8)) @ rng.normal(size=(8, 40)) + 0.1 * rng.normal(
        size=(args.rows, 40)
    )
    cases = [
        ("AutoEncoder (40 -> 32 -> 8)", AutoEncoder(hidden_sizes=(32, 8)), table),
        ("LSTMAutoEncoder (50 x 25, 32)", LSTMAutoEncoder(hidden_sizes=(32,)), windows),
        ("GRUAutoEncoder (50 x 25, 32)", GRUAutoEncoder(hidden_sizes=(32,)), windows),
    ]
    for name, det, X in cases:
        det.set_params(epochs=1, random_state=0, device=args.device).fit(X[:256])
        det.fisher_diagonal(X[:64])  # warm-up
        sync(args.device)
        t0 = time.perf_counter()
        fast = det.fisher_diagonal(X)
        sync(args.device)
        t1 = time.perf_counter()
        slow = row_loop(det, X)
        sync(args.device)
        t2 = time.perf_counter()
        rel = max(
            float((f.double() - s).abs().max() / s.abs().max().clamp_min(1e-30))
            for f, s in zip(fast, slow)
        )
        print(
            f"{name:<32} row loop {t2 - t1:8.3f} s   vectorised {t1 - t0:7.3f} s   "
            f"{(t2 - t1) / (t1 - t0):6.1f}x faster   largest relative difference {rel:.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
