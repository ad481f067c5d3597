"""The fixed cost of one stacked replica training call on CUDA: K = 128 dense autoencoders
(40 -> 32 -> 8 -> 32 -> 40, batch 64) trained together by
:func:`clad.detectors.torch_replicas.train_replicas` on 20, 200 and 1,562 mini-batches, each call
timed whole (replica-rows per second) with the time of its parts: the shuffles, the warm-up steps
and the CUDA-graph capture (each timed between two device synchronisations). The first call pays
the process's one-time costs (kernels loaded, cuBLAS set up).

    python benchmarks/replica_call_cost.py      # needs CUDA; seconds on an H100
"""

import os
import sys
import time

sys.path[:0] = [os.getcwd(), "benchmarks"]
import numpy as np  # noqa: E402
import torch  # noqa: E402

import clad.detectors.torch_replicas as tr  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder  # noqa: E402

if not torch.cuda.is_available():
    sys.exit(
        "replica_call_cost.py: needs CUDA (the fixed costs it measures are those of a CUDA graph)"
    )
K, B, D = 128, 64, 40
X = np.random.default_rng(0).standard_normal((1562 * B, D)).astype(np.float32)
dets = [
    AutoEncoder(hidden_sizes=(32, 8), epochs=1, batch_size=B, device="cuda", random_state=i).fit(
        X[:B]
    )
    for i in range(K)
]
Xs = dets[0].standardise(X)
T = {}


def timed(name, fn):
    def w(*a, **k):
        torch.cuda.synchronize()
        t = time.perf_counter()
        r = fn(*a, **k)
        torch.cuda.synchronize()
        T[name] = T.get(name, 0) + time.perf_counter() - t
        return r

    return w


tr._capture = timed("capture", tr._capture)
tr._warm_up = timed("warm_up", tr._warm_up)
tr._permutations = timed("perms", tr._permutations)
for steps in (20, 200, 200, 200, 1562, 1562):
    T.clear()
    torch.cuda.synchronize()
    t = time.perf_counter()
    tr.train_replicas(dets, [Xs[: steps * B]] * K, [1] * K)
    dt = time.perf_counter() - t
    print(
        f"{steps} steps: {dt * 1e3:.1f} ms, {K * steps * B / dt / 1e6:.2f} M rows/s; "
        + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in T.items()),
        flush=True,
    )
