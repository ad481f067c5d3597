"""Adding one detector to a bundled grid: the cost with and without ``clad run --from``.

    python benchmarks/bundle_reuse.py [--seeds 5] [--jobs 1]

The grid: 3 synthetic data sets (random_state 0, 1, 2; 4 concepts, 8 features, 300 training and
200 test rows per concept) x ``concept_incremental``, ``concept_agnostic`` x ``naive``,
``cumulative``, ``replay`` x ``hbos``, ``ecod``, ``iforest`` (50 trees) x ``--seeds`` seeds; the new
detector is ``copod``. It prints, each measured once in this process (wall and this process's CPU
seconds): computing the grid, ``clad export --bundle`` (and the bundle's size), the grid plus the new
detector computed from nothing, the same with ``--from`` the bundle (the import, with every row's
key recomputed here, and the runs computed), and ``verify-bundle --sample 50``. It checks that the
imported runs' R are bit-identical to the ones computed from nothing. The machine and its load are
printed first and last.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import describe  # noqa: E402


def _spec(seeds: int, detectors: list[dict]) -> dict:
    data = [
        {
            "name": "synthetic",
            "n_concepts": 4,
            "n_features": 8,
            "n_train": 300,
            "n_test": 200,
            "random_state": s,
            "label": f"synthetic-{s}",
        }
        for s in range(3)
    ]
    return {
        "name": "bundle-reuse",
        "seeds": seeds,
        "strategies": ["naive", "cumulative", "replay"],
        "base_metrics": ["roc_auc", "average_precision"],
        "datasets": data,
        "scenarios": [
            {"name": "concept_incremental"},
            {"name": "concept_agnostic", "batch_size": 200},
        ],
        "detectors": detectors,
    }


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    print(describe())
    from clad.bundle.format import export_bundle, read_bundle
    from clad.bundle.pull import pull
    from clad.bundle.verify import verify
    from clad.engine.benchmark import run_spec
    from clad.engine.settings import Execution
    from clad.engine.spec import parse_spec
    from clad.results.reading import load_results

    base = [{"name": "hbos"}, {"name": "ecod"}, {"name": "iforest", "n_estimators": 50}]
    grid, bigger = _spec(args.seeds, base), _spec(args.seeds, [*base, {"name": "copod"}])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        done, w, c = _timed(
            lambda: run_spec(grid, tmp / "grid", execution=Execution.of(grid, jobs=args.jobs))
        )
        print(
            f"grid: {done.n_total} runs, {done.n_computed} computed: {w:.1f} s wall, {c:.1f} s CPU"
        )
        exported, w, c = _timed(lambda: export_bundle(tmp / "grid", tmp / "bundle.tar"))
        size = os.path.getsize(tmp / "bundle.tar")
        print(
            f"export --bundle: {exported.runs} runs, {exported.shards} shards, {size / 1e6:.2f} MB: {w:.2f} s wall"
        )
        scratch, w0, c0 = _timed(
            lambda: run_spec(
                bigger, tmp / "scratch", execution=Execution.of(bigger, jobs=args.jobs)
            )
        )
        print(
            f"grid + copod from nothing: {scratch.n_computed} runs computed: {w0:.1f} s wall, {c0:.1f} s CPU"
        )
        spec = parse_spec(bigger)
        pulled, w1, c1 = _timed(
            lambda: pull(str(tmp / "bundle.tar"), tmp / "from", configs=spec.configs)
        )
        print(
            f"--from, import: {len(pulled.imported)} runs imported, {len(pulled.refused)} refused: "
            f"{w1:.2f} s wall, {c1:.2f} s CPU"
        )
        rest, w2, c2 = _timed(
            lambda: run_spec(bigger, tmp / "from", execution=Execution.of(bigger, jobs=args.jobs))
        )
        print(f"--from, compute: {rest.n_computed} runs computed: {w2:.1f} s wall, {c2:.1f} s CPU")
        print(
            f"adding copod: {w0:.1f} s wall without --from, {w1 + w2:.1f} s with it "
            f"({(w1 + w2) / w0:.2f} of it); CPU {c0:.1f} s -> {c1 + c2:.1f} s"
        )
        mine = {r.result_key["key"]: r for r in load_results(tmp / "scratch")}
        imported = [r for r in load_results(tmp / "from") if r.origin]
        same = all(
            r.R[m].tobytes() == mine[r.result_key["key"]].R[m].tobytes()
            for r in imported
            for m in r.R
        )
        print(
            f"imported runs bit-identical to the runs computed from nothing: {same} ({len(imported)} runs)"
        )
        bundle = read_bundle(tmp / "bundle.tar")
        verdict, w, c = _timed(lambda: verify(bundle, 50, 0))
        print(
            f"verify-bundle --sample 50: {verdict.agreed} agree, {len(verdict.disagreed)} disagree: {w:.1f} s wall; "
            f"catches 1 % / 5 % altered with probability {verdict.catch[0.01]:.3f} / {verdict.catch[0.05]:.3f}"
        )
    print(describe())
    return 0 if same and verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
