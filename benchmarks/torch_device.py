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

Rows are rounded down to a multiple of the batch size, so that every step has the same shape.

**The floor** (``graph``): on CUDA, the bare loop again, with its whole training step — the
mini-batch gather from the rows on the device, forward, backward, Adam (``capturable=True``) and
the running loss sum — captured once as one CUDA graph (``torch.cuda.CUDAGraph``) and replayed
with the step's indices copied into the graph's index buffer: one launch per step and no host
reads until the end. Three warm-up steps on a side stream precede the capture (PyTorch's recipe;
they are part of the timed work). On the CPU there is no CUDA graph: the floor is skipped and the
output says so. Target: clad / floor <= 1.5 for a single run.

**Replicas** (``--ks``, default 1, 8, 32, 128): K replicas of the configuration's network (own
seeds) trained together by :func:`clad.detectors.torch_replicas.train_replicas`: on CUDA the single
run's training (all the configuration's rows, for its epochs), on the CPU one epoch of 200
mini-batches (5 for the LSTM), or one epoch of ``--replica-steps`` mini-batches where given. A
warm-up call at each K that captures its graph comes first. The figure is replica-rows per second
(K x rows x epochs / time: shuffles, graph capture, training, the one read of the losses), on CUDA
both with clad's stacked step captured as a CUDA graph and step by step (``--graphs``).
Target: >= 20 million replica-rows per second for the dense autoencoder at batch 64 on an
H100-class GPU.

``--out FILE`` writes every figure (JSON, or CSV for a name ending in .csv); ``--quick`` is a
short run (a tenth of the rows, one epoch, dense64 and lstm64; about a minute on a GPU).
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
from _torch_data import make_data, write_rows  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder  # noqa: E402
from clad.detectors.torch_replicas import train_replicas  # noqa: E402
from clad.detectors.torch_seq import LSTMAutoEncoder  # noqa: E402

CONFIGS = {  # name: (model, rows, batch size, epochs)
    "dense64": ("dense", 100_000, 64, 3),
    "dense1024": ("dense", 100_000, 1024, 10),
    "lstm64": ("lstm", 20_000, 64, 2),
    "lstm512": ("lstm", 20_000, 512, 2),
}


def clad_fit(model: str, X, batch: int, epochs: int, device: str) -> float:
    cls, hidden = (AutoEncoder, (32, 8)) if model == "dense" else (LSTMAutoEncoder, (32,))
    det = cls(hidden_sizes=hidden, epochs=epochs, batch_size=batch, device=device, random_state=0)
    t0 = time.perf_counter()
    det.fit(X)
    return time.perf_counter() - t0


class BareDense(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(40, 32),
            nn.ReLU(),
            nn.Linear(32, 8),
            nn.Linear(8, 32),
            nn.ReLU(),
            nn.Linear(32, 40),
        )

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
    _score_training_rows(net, data, total)
    return time.perf_counter() - t0


def _score_training_rows(net, data, total) -> None:
    """The bare loop's last part: the loss read, every training row scored under ``no_grad`` in
    chunks of 4,096, and the threshold quantile."""
    net.eval()
    with torch.no_grad():
        errors = torch.cat(
            [torch.mean(((net(xb) - xb) ** 2).flatten(1), dim=1) for xb in data.split(4096)]
        )
    float(total)
    np.quantile(errors.cpu().numpy(), 0.9)


def _standardised(X):
    axes = tuple(range(X.ndim - 1))
    scale = X.std(axis=axes)
    return ((X - X.mean(axis=axes)) / np.where(scale > 1e-12, scale, 1.0)).astype(np.float32)


def graph_fit(model: str, X, batch: int, epochs: int, device: str) -> float:
    """The floor: the bare loop with its whole step captured as one CUDA graph (see the module
    docstring); ``len(X)`` must be a multiple of ``batch``."""
    dev = torch.device(device)
    t0 = time.perf_counter()
    Xs = _standardised(X)
    net = (BareDense() if model == "dense" else BareLSTM()).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, capturable=True)
    data = torch.from_numpy(Xs).to(dev)
    n = data.shape[0]
    gen = torch.Generator(device=dev).manual_seed(0)
    idx = torch.arange(batch, device=dev)  # the graph's index buffer
    total = torch.zeros((), device=dev)

    def step():
        xb = data[idx]
        loss = torch.mean((net(xb) - xb) ** 2)
        loss.backward()
        opt.step()
        total.add_(loss.detach(), alpha=batch)

    side = torch.cuda.Stream(device=dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up before capture (PyTorch's recipe)
            opt.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream(dev).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        step()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen, device=dev)
        total.zero_()
        for start in range(0, n, batch):
            idx.copy_(perm[start : start + batch])
            graph.replay()
    _score_training_rows(net, data, total)
    return time.perf_counter() - t0


def replica_throughput(
    model: str,
    X,
    batch: int,
    k: int,
    device: str,
    max_steps: int | None,
    graphs: bool = True,
    epochs: int = 1,
) -> float:
    """Replica-rows per second of K replicas trained together for ``epochs`` epochs on ``X`` (its
    first ``max_steps`` mini-batches; None: all of it), on CUDA with or without the stacked step
    captured as a CUDA graph. A warm-up call at this K, long enough to capture its graph, comes
    first: the figure is a warm process's, as the single-run figures are."""
    import clad.detectors.torch_replicas as replicas

    replicas.CUDA_GRAPHS = graphs
    cls, hidden = (AutoEncoder, (32, 8)) if model == "dense" else (LSTMAutoEncoder, (32,))
    if max_steps is not None:
        X = X[: min(len(X), max_steps * batch)]
    dets = [
        cls(hidden_sizes=hidden, epochs=1, batch_size=batch, device=device, random_state=i).fit(
            X[:batch]
        )
        for i in range(k)
    ]
    Xs = dets[0].standardise(X)
    warm = min(len(Xs), (replicas.GRAPH_MIN_STEPS + 4) * batch)
    train_replicas(
        dets, [Xs[:warm]] * k, [1] * k
    )  # warm-up at this K (kernels loaded, a graph captured)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    train_replicas(dets, [Xs] * k, [epochs] * k)  # reads the losses back once: the GPU is done
    return k * len(Xs) * epochs / (time.perf_counter() - t0)


def _safely(what: str, fn, *args):
    """``fn(*args)``, or None after printing why it failed (one figure's failure is not the run's)."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - reported and recorded, the other figures go on
        print(f"  {what} failed: {type(exc).__name__}: {exc}", flush=True)
        return None


def write(rows: list, path: str) -> None:
    write_rows(
        rows,
        path,
        {
            "benchmark": "torch_device",
            "torch": torch.__version__,
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS)
    )
    parser.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the rows (default 1: the full sizes)"
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="epochs of every configuration (default: the table's)",
    )
    parser.add_argument(
        "--reps", type=int, default=1, help="timed runs per figure (the median is shown)"
    )
    parser.add_argument("--devices", default="cpu,cuda", help="comma-separated devices to measure")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch's intra-op threads for both sides (default: torch's own choice)",
    )
    parser.add_argument(
        "--ks", default="1,8,32,128", help="replica counts for the throughput (empty: none)"
    )
    parser.add_argument(
        "--replica-steps",
        type=int,
        default=None,
        help="replicas train on this many mini-batches per epoch (default: all the configuration's rows, "
        "for its epochs: the single run's training)",
    )
    parser.add_argument(
        "--graphs",
        default="on,off",
        help="on CUDA, replicas with the stacked step as a CUDA graph (on), step by step (off) or both",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tenth of the rows, one epoch, dense64 and lstm64 (about a minute on a GPU)",
    )
    parser.add_argument(
        "--out", default=None, help="write every figure to this file (.json or .csv)"
    )
    args = parser.parse_args()
    if args.quick:
        args.scale = min(args.scale, 0.1)
        args.epochs = args.epochs or 1
        if args.configs == ",".join(CONFIGS):
            args.configs = "dense64,lstm64"
        args.replica_steps = min(args.replica_steps or 100, 100)
    if args.threads:
        torch.set_num_threads(args.threads)

    print(describe())
    print(f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}")
    devices = [d for d in args.devices.split(",") if d]
    if "cuda" in devices and not torch.cuda.is_available():
        print("CUDA: not available")
        devices.remove("cuda")
    elif "cuda" in devices:
        print(
            f"CUDA: {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}"
        )
    ks = [int(k) for k in args.ks.split(",") if k]

    rows_out, figures = [], []
    for name in args.configs.split(","):
        model, rows, batch, epochs = CONFIGS[name]
        rows = max(batch, int(rows * args.scale)) // batch * batch  # every step the same shape
        epochs = args.epochs or epochs
        X = make_data(model, rows)
        shape = "x".join(str(s) for s in X.shape)
        for device in devices:
            small = X[: min(len(X), 4 * batch)]
            clad_fit(model, small, batch, 1, device)  # warm-up: allocator, kernels, cuDNN plans
            bare_fit(model, small, batch, 1, device)
            cuda = device.startswith("cuda")
            if cuda:
                _safely("CUDA graph warm-up", graph_fit, model, small, batch, 1, device)
            clad_t, bare_t, graph_t = [], [], []
            for _ in range(args.reps):
                clad_t.append(clad_fit(model, X, batch, epochs, device))
                bare_t.append(bare_fit(model, X, batch, epochs, device))
                if cuda:
                    graph_t.append(
                        _safely(f"{name} CUDA graph", graph_fit, model, X, batch, epochs, device)
                    )
            c, b = statistics.median(clad_t), statistics.median(bare_t)
            g = statistics.median(graph_t) if graph_t and None not in graph_t else None
            rows_out.append((name, device, c, b))
            floor = (
                f"CUDA-graph floor {g:8.2f} s   clad / floor {c / g:5.2f}"
                if g is not None
                else "CUDA-graph floor: skipped (no CUDA graphs on the CPU)"
                if not cuda
                else "CUDA-graph floor: failed"
            )
            print(
                f"{name:<10} {device:<5} rows {shape:<12} batch {batch:>5} epochs {epochs:>2}: "
                f"clad {c:8.2f} s   bare loop {b:8.2f} s   clad / bare {c / b:5.2f}   {floor}   (load {load_now()})",
                flush=True,
            )
            figures.append(
                {
                    "kind": "fit",
                    "config": name,
                    "device": device,
                    "rows": shape,
                    "batch": batch,
                    "epochs": epochs,
                    "clad_s": c,
                    "bare_s": b,
                    "clad_over_bare": c / b,
                    "graph_s": g,
                    "clad_over_graph": None if g is None else c / g,
                    "graph_note": None if cuda else "skipped: CUDA graphs need a CUDA device",
                }
            )
            # the CPU's stacked recurrent layers are slow (unrolled): a few steps are enough there
            # on CUDA by default the single run's training (all rows, its epochs); on the CPU the
            # stacked recurrent layers are slow (unrolled): a few steps are enough there
            steps, r_epochs = args.replica_steps, 1
            if steps is None:
                steps, r_epochs = (None, epochs) if cuda else (200 if model == "dense" else 5, 1)
            elif not cuda and model != "dense":
                steps = min(steps, 5)
            modes = [g == "on" for g in args.graphs.split(",")] if cuda else [False]
            for k in ks:
                for graphs in modes:
                    r = _safely(
                        f"{name} K={k} replicas",
                        replica_throughput,
                        model,
                        X,
                        batch,
                        k,
                        device,
                        steps,
                        graphs,
                        r_epochs,
                    )
                    if r is None:
                        continue
                    how = "CUDA graph" if graphs else "step by step"
                    print(
                        f"{'':<10} {device:<5} replicas K {k:>4} ({how:<12}): {r:14,.0f} replica-rows/s   "
                        f"({min(steps or len(X), len(X) // batch)} steps x {r_epochs} epochs)",
                        flush=True,
                    )
                    figures.append(
                        {
                            "kind": "replicas",
                            "config": name,
                            "device": device,
                            "batch": batch,
                            "K": k,
                            "cuda_graph": graphs,
                            "steps_per_epoch": steps or len(X) // batch,
                            "epochs": r_epochs,
                            "replica_rows_per_second": r,
                        }
                    )
    if "cuda" in devices and "cpu" in devices:
        print("\nCUDA against the CPU (clad's fit):")
        by = {(n, d): c for n, d, c, _ in rows_out}
        for name in args.configs.split(","):
            if (name, "cpu") in by and (name, "cuda") in by:
                print(
                    f"{name:<10} CPU {by[name, 'cpu']:8.2f} s   CUDA {by[name, 'cuda']:8.2f} s   "
                    f"CUDA is {by[name, 'cpu'] / by[name, 'cuda']:5.2f}x faster"
                )
                figures.append(
                    {
                        "kind": "cuda_vs_cpu",
                        "config": name,
                        "cpu_s": by[name, "cpu"],
                        "cuda_s": by[name, "cuda"],
                        "cuda_speedup": by[name, "cpu"] / by[name, "cuda"],
                    }
                )
    if args.out:
        write(figures, args.out)


if __name__ == "__main__":
    main()
