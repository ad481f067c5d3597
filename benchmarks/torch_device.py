"""clad's PyTorch detectors against a bare PyTorch loop of the same model, on the CPU and on CUDA.

Configurations (the defaults; ``--scale`` and ``--epochs`` shrink them):

==========  ==========================================  ==========  ======
name        data                                        batch size  epochs
==========  ==========================================  ==========  ======
dense64     100,000 rows x 40 features, AutoEncoder     64          3
dense1024   100,000 rows x 40 features, AutoEncoder     1,024       10
lstm64      20,000 windows of 50 steps x 25 features    64          2
lstm512     20,000 windows of 50 steps x 25 features    512         2
==========  ==========================================  ==========  ======

The dense model is clad's ``AutoEncoder(hidden_sizes=(32, 8))`` (40 -> 32 -> 8 -> 32 -> 40, ReLU),
the recurrent one ``LSTMAutoEncoder(hidden_sizes=(32,))`` (an LSTM encoder 25 -> 32, an LSTM decoder
32 -> 32, a linear output 32 -> 25); both trained with Adam at learning rate 1e-3.

clad's time is ``detector.fit(X)``: standardisation, training, and the scoring pass over the
training rows that sets ``threshold_``. The bare loop does the same work written plainly in
PyTorch with the same layers: standardise, move the rows to the device once, shuffle each epoch
with ``randperm``, Adam on the mean squared error of each mini-batch, sum the loss (as Python
floats on the CPU, on the device on a GPU: each device's cheapest way),
then score every training row under ``no_grad`` in chunks of 4,096 and take the quantile. Both run
in this process on the same arrays, interleaved, after a warm-up; each figure is the median of
``--reps`` runs. Targets: clad / bare <= 1.05 on every device; on a GPU, CUDA faster than the CPU
in every configuration, and at least 3x at batch 1,024 (dense) and 512 (LSTM).

    python benchmarks/torch_device.py                       # the full configuration
    python benchmarks/torch_device.py --scale 0.1 --epochs 1 --reps 3 --threads 1  # minutes on 2 cores

Without CUDA the script prints "CUDA: not available" and measures the CPU only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's clad, even when another is installed

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from _machine import describe, load_now  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder  # noqa: E402
from clad.detectors.torch_seq import LSTMAutoEncoder  # noqa: E402

CONFIGS = {  # name: (model, rows, batch size, epochs)
    "dense64": ("dense", 100_000, 64, 3),
    "dense1024": ("dense", 100_000, 1024, 10),
    "lstm64": ("lstm", 20_000, 64, 2),
    "lstm512": ("lstm", 20_000, 512, 2),
}


def make_data(model: str, rows: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    if model == "dense":
        latent = rng.normal(size=(rows, 8))
        return latent @ rng.normal(size=(8, 40)) + 0.1 * rng.normal(size=(rows, 40))
    t = np.arange(50)[None, :, None]
    phase = rng.uniform(0, 2 * np.pi, size=(rows, 1, 25))
    return np.sin(2 * np.pi * t / 12.5 + phase) + 0.05 * rng.normal(size=(rows, 50, 25))


def clad_fit(model: str, X, batch: int, epochs: int, device: str) -> float:
    cls, hidden = (AutoEncoder, (32, 8)) if model == "dense" else (LSTMAutoEncoder, (32,))
    det = cls(hidden_sizes=hidden, epochs=epochs, batch_size=batch, device=device, random_state=0)
    t0 = time.perf_counter()
    det.fit(X)
    return time.perf_counter() - t0


class BareDense(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(40, 32), nn.ReLU(), nn.Linear(32, 8),
                                 nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 40))

    def forward(self, x):
        return self.net(x)


class BareLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.LSTM(25, 32, batch_first=True)
        self.dec = nn.LSTM(32, 32, batch_first=True)
        self.out = nn.Linear(32, 25)

    def forward(self, x):
        _, (h, _) = self.enc(x)
        y, _ = self.dec(h[-1].unsqueeze(1).expand(-1, x.shape[1], -1))
        return self.out(y)


def bare_fit(model: str, X, batch: int, epochs: int, device: str) -> float:
    dev = torch.device(device)
    t0 = time.perf_counter()
    axes = tuple(range(X.ndim - 1))
    scale = X.std(axis=axes)
    Xs = ((X - X.mean(axis=axes)) / np.where(scale > 1e-12, scale, 1.0)).astype(np.float32)
    net = (BareDense() if model == "dense" else BareLSTM()).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    data = torch.from_numpy(Xs).to(dev)
    gen = torch.Generator(device=dev).manual_seed(0)
    n, on_cpu = data.shape[0], dev.type == "cpu"
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen, device=dev)
        total = 0.0 if on_cpu else torch.zeros((), device=dev)  # each device's cheapest running sum
        for start in range(0, n, batch):
            xb = data[perm[start : start + batch]]
            loss = torch.mean((net(xb) - xb) ** 2)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if on_cpu:
                total += loss.item() * xb.shape[0]
            else:
                total += loss.detach() * xb.shape[0]
    net.eval()
    with torch.no_grad():
        errors = torch.cat([torch.mean(((net(xb) - xb) ** 2).flatten(1), dim=1) for xb in data.split(4096)])
    float(total)
    np.quantile(errors.cpu().numpy(), 0.9)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the rows (default 1: the full sizes)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs of every configuration (default: the table's)")
    parser.add_argument("--reps", type=int, default=1, help="timed runs per figure (the median is shown)")
    parser.add_argument("--devices", default="cpu,cuda", help="comma-separated devices to measure")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch's intra-op threads for both sides (default: torch's own choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    print(describe())
    print(f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}")
    devices = [d for d in args.devices.split(",") if d]
    if "cuda" in devices and not torch.cuda.is_available():
        print("CUDA: not available")
        devices.remove("cuda")
    elif "cuda" in devices:
        print(f"CUDA: {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")

    rows_out = []
    for name in args.configs.split(","):
        model, rows, batch, epochs = CONFIGS[name]
        rows = max(batch, int(rows * args.scale))
        epochs = args.epochs or epochs
        X = make_data(model, rows)
        for device in devices:
            small = X[: min(len(X), 4 * batch)]
            clad_fit(model, small, batch, 1, device)  # warm-up: allocator, kernels, cuDNN plans
            bare_fit(model, small, batch, 1, device)
            clad_t, bare_t = [], []
            for _ in range(args.reps):
                clad_t.append(clad_fit(model, X, batch, epochs, device))
                bare_t.append(bare_fit(model, X, batch, epochs, device))
            c, b = statistics.median(clad_t), statistics.median(bare_t)
            rows_out.append((name, device, c, b))
            shape = "x".join(str(s) for s in X.shape)
            print(f"{name:<10} {device:<5} rows {shape:<12} batch {batch:>5} epochs {epochs:>2}: "
                  f"clad {c:8.2f} s   bare loop {b:8.2f} s   clad / bare {c / b:5.2f}   (load {load_now()})",
                  flush=True)
    if "cuda" in devices and "cpu" in devices:
        print("\nCUDA against the CPU (clad's fit):")
        by = {(n, d): c for n, d, c, _ in rows_out}
        for name in args.configs.split(","):
            if (name, "cpu") in by and (name, "cuda") in by:
                print(f"{name:<10} CPU {by[name, 'cpu']:8.2f} s   CUDA {by[name, 'cuda']:8.2f} s   "
                      f"CUDA is {by[name, 'cpu'] / by[name, 'cuda']:5.2f}x faster")


if __name__ == "__main__":
    main()
