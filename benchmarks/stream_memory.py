"""Streaming memory: a concept-agnostic stream far larger than the memory it is run in.

A stream of ``--rows`` x 20 float32 rows (default 10,000,000: 800 MB) is written in chunks to a
memory-mapped ``.npy`` file in a temporary folder, cut into 10 concepts, and run through the
``concept_agnostic`` scenario in batches of 100,000 rows with a replay strategy (a 10,000-row
reservoir; Naive when replay is not available) and an IsolationForest, evaluated at each of the
10 concept ends on test sets of 20,000 rows. The resident set size (RSS) is sampled in a thread;
printed after 10 %, 50 % and 100 % of the stream, with the peak. Target: peak RSS <= 400 MB.

    python benchmarks/stream_memory.py            # the full 800 MB stream
    python benchmarks/stream_memory.py --rows 1000000   # a quick check
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np
import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's clad, even when another is installed
# one BLAS / OpenMP thread (before numpy loads), in this process and in any child it starts: both
# sides of a comparison then use the cores the same way, and idle BLAS threads do not spin on a
# loaded machine; clad's own parallelism (n_jobs) is what is measured
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from _machine import describe, load_now  # noqa: E402

from sklearn.ensemble import IsolationForest  # noqa: E402

from clad.core.concepts import Concept, ConceptDataset  # noqa: E402
from clad.core.evaluation import Evaluator  # noqa: E402
from clad.scenarios import ConceptAgnostic  # noqa: E402

MB = 1_000_000  # decimal megabytes, as in the target
N_FEATURES = 20
N_CONCEPTS = 10


class RssSampler(threading.Thread):
    """Samples this process's RSS every ``interval`` seconds and keeps the peak."""

    def __init__(self, interval: float = 0.02):
        super().__init__(daemon=True)
        self.proc = psutil.Process()
        self.interval = interval
        self.peak = self.proc.memory_info().rss
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(self.interval)

    def stop(self):
        self._halt.set()
        self.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def write_stream(path: str, n_rows: int, chunk: int = 250_000) -> np.memmap:
    """Write the stream in chunks (concept k is a Gaussian around k); never all of it in memory."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n_rows, N_FEATURES))
    rng = np.random.default_rng(0)
    per = n_rows // N_CONCEPTS
    for start in range(0, n_rows, chunk):
        stop = min(start + chunk, n_rows)
        centre = np.minimum(np.arange(start, stop) // per, N_CONCEPTS - 1).astype(np.float32)[
            :, None
        ]
        out[start:stop] = rng.standard_normal((stop - start, N_FEATURES), dtype=np.float32) + centre
        out.flush()
    del out
    return np.load(path, mmap_mode="r")


def test_concepts(n_test: int) -> list[Concept]:
    rng = np.random.default_rng(1)
    tests = []
    for k in range(N_CONCEPTS):
        n_anom = n_test // 10
        X = rng.standard_normal((n_test, N_FEATURES), dtype=np.float32) + k
        X[:n_anom] += rng.choice([-6.0, 6.0], size=(n_anom, N_FEATURES)).astype(np.float32)
        y = np.zeros(n_test, dtype=np.int8)
        y[:n_anom] = 1
        tests.append(Concept(f"C{k}", X, y))
    return tests


def make_strategy(detector):
    try:
        from clad.strategies import STRATEGIES

        cls = STRATEGIES.resolve("replay")
        return cls(
            detector=detector, buffer_size=10_000, random_state=0
        ), "replay (reservoir of 10,000 rows)"
    except Exception:  # noqa: BLE001 - replay not available in this version
        from clad.strategies import Naive

        return Naive(detector), "naive (replay not available)"


def progress_observer(sampler, per_concept):
    """An evaluator observer printing the RSS when the stream passes 10 %, 50 % and 100 %."""

    def observe(event):
        done = event.index + 1
        rss = psutil.Process().memory_info().rss / MB
        if done in (1, 5, 10):
            print(
                f"  after {done / N_CONCEPTS:4.0%} of the stream ({done * per_concept:,} rows): "
                f"RSS {rss:7.1f} MB (peak so far {sampler.peak / MB:7.1f} MB), load {load_now()}",
                flush=True,
            )

    return observe


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--test-rows", type=int, default=20_000)
    ap.add_argument("--target-mb", type=float, default=400.0)
    ap.add_argument(
        "--keep-pages",
        action="store_true",
        help="for comparison: do not give memory-mapped pages back (clad.core.memmap.release disabled)",
    )
    args = ap.parse_args(argv)
    print(describe())
    if args.keep_pages:
        import clad.core.concepts
        import clad.scenarios.concept_agnostic

        def keep(arr):
            return False

        clad.core.concepts.release = clad.scenarios.concept_agnostic.release = keep
        print("pages of the memory-mapped stream are NOT given back (--keep-pages)")
    tmp = tempfile.mkdtemp(prefix="clad-stream-")
    try:
        path = os.path.join(tmp, "stream.npy")
        t0 = time.perf_counter()
        stream = write_stream(path, args.rows)
        size_mb = os.path.getsize(path) / MB
        print(
            f"stream: {args.rows:,} x {N_FEATURES} float32 = {size_mb:.0f} MB on disk, written in "
            f"{time.perf_counter() - t0:.1f} s; batches of {args.batch:,} rows; "
            f"{N_CONCEPTS} concepts; test sets of {args.test_rows:,} rows"
        )
        per = args.rows // N_CONCEPTS
        proc = psutil.Process()
        print(f"RSS before the dataset is built: {proc.memory_info().rss / MB:.1f} MB")
        sampler = RssSampler()  # from here on: building (and validating) the concepts counts too
        sampler.start()
        train = [Concept(f"C{k}", stream[k * per : (k + 1) * per]) for k in range(N_CONCEPTS)]
        assert all(isinstance(c.X, np.memmap) for c in train), (
            "a concept copied its memory-mapped rows"
        )
        ds = ConceptDataset(train, test_concepts(args.test_rows), name="stream")
        strategy, label = make_strategy(IsolationForest(n_estimators=100, random_state=0))
        print(f"strategy: {label}; detector: IsolationForest(n_estimators=100)")
        print(
            f"RSS before the run (dataset built and validated): {proc.memory_info().rss / MB:.1f} MB"
        )
        t0 = time.perf_counter()
        ev = Evaluator(ds.test, observers=[progress_observer(sampler, per)])
        result = ConceptAgnostic(batch_size=args.batch).run(ds, strategy, ev)
        wall = time.perf_counter() - t0
        sampler.stop()
        R = result.R["roc_auc"]
        print(
            f"run: {wall:.1f} s; R is {R.shape[0]} x {R.shape[1]}; final-row mean ROC-AUC {np.nanmean(R[-1]):.3f}"
        )
        peak = sampler.peak / MB
        verdict = "meets" if peak <= args.target_mb else "MISSES"
        print(
            f"peak RSS {peak:.1f} MB for a {size_mb:.0f} MB stream (target <= {args.target_mb:.0f} MB): {verdict}"
        )
        print(f"load average at the end: {load_now()}")
        del ds, train, stream
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
