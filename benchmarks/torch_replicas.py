"""Replicas: K runs of one torch network trained as one stacked model, against one at a time.

Two measurements (``--parts``):

``steps``: seconds per model-step (one optimiser step of one model) for K = 1, 8, 32 replicas
trained together by :func:`clad.detectors.torch_replicas.train_replicas`, beside the same
detector's own training loop (``alone``: one model at a time, as clad trains without replicas):

=========  ==========================================  ==========
name       data                                        batch size
=========  ==========================================  ==========
dense64    20,000 rows x 40 features, AutoEncoder      64
dense1024  20,000 rows x 40 features, AutoEncoder      1,024
lstm64     2,000 windows of 50 steps x 25 features     64
=========  ==========================================  ==========

(the networks of ``benchmarks/torch_device.py``: ``AutoEncoder(hidden_sizes=(32, 8))``,
``LSTMAutoEncoder(hidden_sizes=(32,))``). Each replica has its own seed and learning rate. Target:
at K = 32, batch 64 (dense), a model-step at least 4x cheaper than alone.

``grid``: the wall time of a torch grid — 5 seeds x 4 learning rates x 2 strategies (``fine_tune``,
``replay``), the dense autoencoder, the synthetic tabular dataset (4 concepts), the concept-aware
scenario — computed by ``clad``'s sequential executor with replicas off (``replicas = 1``, as
before) and on (the default), and whether R agrees (within the tolerance of
``tests/detectors/test_torch_replicas.py``). Target: replicas on at most 0.35x the wall time of replicas off.

    python benchmarks/torch_replicas.py                      # both parts, on the CPU
    python benchmarks/torch_replicas.py --device cuda --parts steps --ks 1,8,32,128
    python benchmarks/torch_replicas.py --quick --out replicas.json

``--out FILE`` writes every figure (JSON, or CSV when FILE ends in .csv).
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

from _machine import describe, load_now  # noqa: E402
from _torch_data import make_data, write_rows  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder  # noqa: E402
from clad.detectors.torch_replicas import train_replicas  # noqa: E402
from clad.detectors.torch_seq import LSTMAutoEncoder  # noqa: E402

CONFIGS = {  # name: (model, rows, batch size)
    "dense64": ("dense", 20_000, 64),
    "dense1024": ("dense", 20_000, 1024),
    "lstm64": ("lstm", 2_000, 64),
}


def detectors(model: str, k: int, batch: int, device: str, X) -> list:
    """K initialised detectors (seeds 0..K-1, learning rates 1e-3 .. 3e-3), fitted on a few rows
    for one epoch so that each has its network and standardisation."""
    cls, hidden = (AutoEncoder, (32, 8)) if model == "dense" else (LSTMAutoEncoder, (32,))
    out = []
    for i in range(k):
        det = cls(
            hidden_sizes=hidden,
            epochs=1,
            batch_size=batch,
            device=device,
            random_state=i,
            learning_rate=1e-3 * (1 + 2 * i / max(k - 1, 1)),
        )
        out.append(det.fit(X[: min(len(X), batch)]))
    return out


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_steps(
    model: str, X, batch: int, k: int, device: str, epochs: int, reps: int
) -> tuple[float, float]:
    """(seconds per model-step stacked, seconds per model-step alone (K = 1 only; else nan))."""
    steps = epochs * -(-len(X) // batch)
    stacked, alone = [], []
    for _ in range(reps):
        dets = detectors(model, k, batch, device, X)
        Xs = dets[0].standardise(X)
        train_replicas(dets[:1], [Xs[: 4 * batch]], [1])  # warm-up (allocator, kernels)
        _sync(device)
        t0 = time.perf_counter()
        train_replicas(dets, [Xs] * k, [epochs] * k)
        _sync(device)
        stacked.append((time.perf_counter() - t0) / (steps * k))
        if k == 1:
            det = dets[0]
            det._train_alone(Xs[: 4 * batch], 1, None)
            _sync(device)
            t0 = time.perf_counter()
            det._train_alone(Xs, epochs, None)
            _sync(device)
            alone.append((time.perf_counter() - t0) / steps)
    return statistics.median(stacked), statistics.median(alone) if alone else float("nan")


def part_steps(args, rows_out: list) -> None:
    print("\nseconds per model-step (median of --reps):")
    ks = [int(k) for k in args.ks.split(",")]
    for name in args.configs.split(","):
        model, rows, batch = CONFIGS[name]
        rows = max(batch, int(rows * args.scale))
        X = make_data(model, rows)
        alone = None
        for k in ks:
            if k == 1 or alone is None:
                _, alone = time_steps(model, X, batch, 1, args.device, args.epochs, args.reps)
            per, _ = time_steps(model, X, batch, k, args.device, args.epochs, args.reps)
            gain = alone / per
            rows_out.append(
                {
                    "part": "steps",
                    "config": name,
                    "device": args.device,
                    "K": k,
                    "batch": batch,
                    "rows": rows,
                    "seconds_per_model_step": per,
                    "alone_seconds_per_step": alone,
                    "cheaper_than_alone": gain,
                    "replica_rows_per_second": batch / per,
                }
            )
            print(
                f"{name:<10} {args.device:<5} K {k:>4}: {per * 1e3:8.4f} ms per model-step   alone "
                f"{alone * 1e3:8.4f} ms   {gain:6.2f}x cheaper   {batch / per:12,.0f} replica-rows/s   "
                f"(load {load_now()})",
                flush=True,
            )


def grid_spec(replicas: int, quick: bool, device: str) -> dict:
    n_train = 600 if quick else 2000
    return {
        "name": "replicas-grid",
        "seeds": 2 if quick else 5,
        "replicas": replicas,
        "base_metrics": ["roc_auc"],
        "strategies": [{"name": "fine_tune"}, {"name": "replay", "buffer_size": 500}],
        "scenarios": ["concept_aware"],
        "datasets": [
            {
                "name": "synthetic",
                "n_concepts": 4,
                "n_features": 16,
                "n_train": n_train,
                "n_test": 500,
            }
        ],
        "detectors": [
            {
                "name": "autoencoder",
                "hidden_sizes": [32, 8],
                "epochs": 5,
                "batch_size": 64,
                "learning_rate": lr,
                "device": device,
                "num_threads": 1,
            }
            for lr in ((1e-3, 3e-3) if quick else (5e-4, 1e-3, 2e-3, 4e-3))
        ],
    }


def part_grid(args, rows_out: list) -> None:
    import tempfile

    from clad.engine.benchmark import run_spec

    walls, Rs = {}, {}
    with (
        tempfile.TemporaryDirectory() as out
    ):  # warm-up: imports, kernels, the dataset's first build
        warm = grid_spec(2, True, args.device)
        warm["seeds"], warm["detectors"] = 2, warm["detectors"][:1]
        run_spec(warm, out)
    for replicas in (1, 0):  # 0: the default (replicas on)
        spec = grid_spec(replicas, args.quick, args.device)
        if replicas == 0:
            spec.pop("replicas")
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            results = run_spec(spec, out)
            walls[replicas] = time.perf_counter() - t0
        Rs[replicas] = {r.run_id: r.R["roc_auc"] for r in results.runs}
        print(
            f"grid, replicas {'off' if replicas == 1 else 'on '}: {len(results.runs)} runs ({results.n_ok} ok), "
            f"{walls[replicas]:7.2f} s wall   (load {load_now()})",
            flush=True,
        )
    diff = max(float(np.nanmax(np.abs(Rs[0][k] - Rs[1][k]))) for k in Rs[1])
    ratio = walls[0] / walls[1]
    print(
        f"grid: replicas on / off = {ratio:.3f} (target <= 0.35); largest |R on - R off| = {diff:.2e}"
    )
    rows_out.append(
        {
            "part": "grid",
            "device": args.device,
            "runs": len(Rs[1]),
            "wall_replicas_off": walls[1],
            "wall_replicas_on": walls[0],
            "on_over_off": ratio,
            "max_abs_R_difference": diff,
        }
    )


def write(rows: list, path: str) -> None:
    write_rows(rows, path, {"benchmark": "torch_replicas", "torch": torch.__version__})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="steps,grid", help="comma-separated: steps, grid")
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS)
    )
    parser.add_argument("--ks", default="1,8,32", help="replica counts (comma-separated)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the rows")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--reps", type=int, default=1, help="timed runs per figure (the median is shown)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch's intra-op threads (default 1)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tenth of the rows and a smaller grid (about a minute)",
    )
    parser.add_argument(
        "--out", default=None, help="write the figures to this file (.json or .csv)"
    )
    parser.add_argument(
        "--no-graphs",
        action="store_true",
        help="on CUDA, train replicas step by step (no CUDA graph of the stacked step)",
    )
    args = parser.parse_args()
    if args.quick:
        args.scale = min(args.scale, 0.1)
    torch.set_num_threads(args.threads)
    print(describe())
    print(
        f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}, device {args.device}"
    )
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("CUDA: not available")
        return
    if args.no_graphs:
        import clad.detectors.torch_replicas as replicas

        replicas.CUDA_GRAPHS = False
    rows: list = []
    parts = args.parts.split(",")
    if "steps" in parts:
        part_steps(args, rows)
    if "grid" in parts:
        part_grid(args, rows)
    if args.out:
        write(rows, args.out)


if __name__ == "__main__":
    main()
