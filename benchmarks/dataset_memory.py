"""Peak memory of building a continual scenario from ADBench's largest file (16_http, 567,498 rows).

For each recipe, loads ``adbench-classical/16_http.npz`` and builds 5 concepts with
``clad.datasets.load_adbench``, and prints the peak memory allocated while doing it (tracemalloc,
which sees numpy's allocations) as a ratio of the size of the feature array X. Target: < 4x
(the file's X, y and the concepts, which hold every row once, are ~2.4x by themselves).
The process's peak resident set size (RSS) over the whole script is printed too, for reference.

    python benchmarks/dataset_memory.py [--data-dir DIR] [--recipe cluster_random ...]

The data directory defaults to $CLAD_DATA, else <repo root>/../shared/datasets.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clad.datasets import load_adbench  # noqa: E402
from clad.datasets.recipes import RECIPES  # noqa: E402

FILE = "16_http.npz"


def rss_mb() -> float:
    # ru_maxrss is in kB on Linux, bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--data-dir",
        default=os.environ.get("CLAD_DATA") or str(ROOT.parent / "shared" / "datasets"),
    )
    p.add_argument("--recipe", nargs="*", default=[r for r in RECIPES if r.startswith("cluster")])
    p.add_argument("--n-concepts", type=int, default=5)
    args = p.parse_args()
    path = Path(args.data_dir) / "adbench-classical" / FILE
    if not path.is_file():
        print(f"{path} not found: pass --data-dir or set CLAD_DATA", file=sys.stderr)
        return 2
    with np.load(path) as z:
        x_bytes, n_rows = z["X"].nbytes, len(z["y"])
    print(f"{FILE}: {n_rows:,} rows, X is {x_bytes / 2**20:.1f} MiB; {args.n_concepts} concepts")
    load_adbench(
        "42_WBC.npz", n_concepts=2, data_dir=args.data_dir
    )  # warm-up: imports are not the data's memory
    print(f"RSS before: {rss_mb():.0f} MiB")
    worst = 0.0
    for recipe in args.recipe:
        gc.collect()
        tracemalloc.start()
        t0 = time.perf_counter()
        ds = load_adbench(
            FILE, recipe=recipe, n_concepts=args.n_concepts, data_dir=args.data_dir, random_state=0
        )
        seconds = time.perf_counter() - t0
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        held = sum(c.X.nbytes for c in ds.train + ds.test)
        ratio = peak / x_bytes
        worst = max(worst, ratio)
        print(
            f"  {recipe:18s} peak {peak / 2**20:6.1f} MiB = {ratio:.2f}x X   (concepts hold {held / x_bytes:.2f}x X, "
            f"still allocated {current / x_bytes:.2f}x)  {seconds:.1f}s"
        )
        del ds
    print(f"worst peak / X: {worst:.2f}x (target < 4x); process peak RSS {rss_mb():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
