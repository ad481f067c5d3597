"""Training steps shared by their inputs: fits, scoring passes and wall time before and after.

    python benchmarks/shared_steps.py [--seeds 10] [--jobs 1 2] [--repeat 1] [--quick]
    python benchmarks/shared_steps.py --tuning [--jobs 1]
    python benchmarks/shared_steps.py --specs scenarios/quickstart.toml scenarios/suite/*.toml

The grid a new user tries: 3 synthetic data sets (random_state 0, 1, 2; 5 concepts, 200 normal
training rows and 150 test rows per concept) x orders ``given``, ``random`` x ``concept_incremental``,
``concept_agnostic`` x ``naive``, ``cumulative``, ``replay``, ``window`` x ``hbos``, ``ecod``,
``copod`` x 10 seeds: 1,440 runs. "Before" is clad with run-level sharing only (runs that are one
computation by configuration, :mod:`clad.engine.identity`): ``run_spec(..., sharing=Sharing.of(..., steps=False))``;
"after" also shares training steps and scoring passes by key (:mod:`clad.engine.sharing`). For
each ``--jobs`` it prints training steps fitted, scoring passes computed, wall time (median of
``--repeat``) and the ratios after / before (targets: fits <= 0.45, wall <= 0.55), the largest
step cache held, and checks that R, the metrics and every results.json field but the timings are
identical. ``--quick``: 2 seeds (288 runs). The machine and its load are printed first and last:
on a shared machine the wall times move with the load.

``--tuning``: a tuned grid in ``validation_split`` mode (3 synthetic data sets x naive, cumulative,
replay, window x IsolationForest with 4 candidate ``n_estimators`` x 2 seeds): the seconds spent
fitting (every computed tuning and evaluation run), before and after (target <= 0.80), the same
choices and the same R.

``--specs SPEC...``: each spec (``grid``: the grid above) computed three ways -- every step computed
(``Sharing.of(spec, steps=False)``; runs that are one computation by configuration are still computed once, as
before), steps shared, and shared with ``--verify-sharing`` -- and results.json compared (all but
timings and peak memory).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from _machine import describe, load_now  # noqa: E402

from clad.engine.settings import Execution
from clad.engine.sharing import Sharing
from clad.engine.benchmark import run_spec  # noqa: E402


def spec(seeds: int) -> dict:
    return {
        "name": "shared-steps",
        "seeds": seeds,
        "base_metrics": ["roc_auc", "f1", "average_precision"],
        "strategies": ["naive", "cumulative", "replay", "window"],
        "scenarios": ["concept_incremental", "concept_agnostic"],
        "detectors": ["hbos", "ecod", "copod"],
        "datasets": [
            {
                "name": "synthetic",
                "label": f"synthetic-{rs}-{order}",
                "n_concepts": 5,
                "n_train": 200,
                "n_test": 150,
                "random_state": rs,
                "order": order,
            }
            for rs in (0, 1, 2)
            for order in ("given", "random")
        ],
    }


def comparable(results_json: Path) -> str:
    """results.json without what differs between two computations of the same runs (timings, peak
    memory, the spec's source): the text two ways of computing must agree on."""
    doc = json.loads(results_json.read_text())
    for run in doc["runs"]:
        for k in ("timings", "peak_memory"):
            run.pop(k, None)
    return json.dumps(doc["runs"], sort_keys=True)


def once(grid: dict, jobs: int, steps: bool) -> tuple[float, dict, str]:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        done = run_spec(
            grid,
            out,
            execution=Execution.of(grid, jobs=jobs),
            sharing=Sharing.of(grid, steps=steps),
        )
        wall = time.perf_counter() - t0
        assert done.n_failed == 0, [r.error for r in done.runs if not r.ok][:1]
        return wall, dict(done.work), comparable(Path(out) / "results.json")


def tuning_spec(seeds: int) -> dict:
    return {
        "name": "shared-steps-tuning",
        "seeds": seeds,
        "base_metrics": ["roc_auc"],
        "strategies": ["naive", "cumulative", "replay", "window"],
        "scenarios": ["concept_incremental"],
        "detectors": ["iforest"],
        "datasets": [
            {
                "name": "synthetic",
                "label": f"synthetic-{rs}",
                "n_concepts": 5,
                "n_train": 200,
                "n_test": 150,
                "random_state": rs,
            }
            for rs in (0, 1, 2)
        ],
        "tuning": {
            "mode": "validation_split",
            "fraction": 0.3,
            "detectors": {"iforest": {"n_estimators": [25, 50, 100, 200]}},
        },
    }


def tuning(jobs: int, seeds: int) -> None:
    from clad.results.store import ResultStore

    grid = tuning_spec(seeds)
    seen = {}
    for steps in (False, True):
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            done = run_spec(
                grid,
                out,
                execution=Execution.of(grid, jobs=jobs),
                sharing=Sharing.of(grid, steps=steps),
            )
            wall = time.perf_counter() - t0
            assert done.n_failed == 0
            with ResultStore(done.database) as store:
                every = [r for r in store.load_results() if r.ok and not r.shared_from]
            fit = sum(sum(r.timings["fit"]) for r in every)
            choices = [
                (r.run_id, json.dumps(r.extras["tuning"]["chosen_params"], sort_keys=True))
                for r in done.runs
            ]
            seen[steps] = (
                fit,
                wall,
                choices,
                comparable(Path(out) / "results.json"),
                done.work,
                done.n_tuning,
            )
        label = "after (steps shared)" if steps else "before (runs shared)"
        print(
            f"tuning --jobs {jobs} {label:22s} fit seconds {fit:7.2f}, wall {wall:6.1f} s (load {load_now()}); "
            f"{seen[steps][5]} tuning runs; evaluation runs: {done.work['steps']} training steps, "
            f"{done.work['fitted']} fitted",
            flush=True,
        )
    (fb, wb, cb, tb, _, _), (fa, wa, ca, ta, _, _) = seen[False], seen[True]
    print(
        f"tuning --jobs {jobs}: fit seconds after / before = {fa / fb:.3f} (target <= 0.80); wall after / before "
        f"= {wa / wb:.3f}; same choices: {ca == cb}; same results.json (but timings): {ta == tb}",
        flush=True,
    )


def compare_specs(paths: list[str], jobs: int, seeds: int, modes=("off", "on", "verify")) -> None:
    for path in paths:
        texts, works = {}, {}
        if path == "grid":  # the 1,440-run grid above
            path = spec(seeds)
        for mode in modes:
            with tempfile.TemporaryDirectory() as out:
                t0 = time.perf_counter()
                done = run_spec(
                    path,
                    out,
                    execution=Execution.of(path, jobs=jobs),
                    sharing=Sharing.of(path, steps=mode != "off", verify=mode == "verify"),
                )
                wall = time.perf_counter() - t0
                failed = [r.error.strip().splitlines()[-1] for r in done.runs if not r.ok]
                texts[mode] = comparable(Path(out) / "results.json")
                works[mode] = (done.work, wall, failed)
        name = path["name"] if isinstance(path, dict) else path
        base = modes[0]
        same = ", ".join(f"{m} = {base}: {texts[m] == texts[base]}" for m in modes[1:])
        failed = ", ".join(f"{m} {len(works[m][2])}" for m in modes)
        print(
            f"{name}: {works[base][0]['runs']} runs; results.json (all but timings) identical: {same}; failed runs: "
            f"{failed} {[w[2][:1] for w in works.values() if w[2]][:1]}",
            flush=True,
        )
        for mode in modes:
            w = works[mode][0]
            print(
                f"  {mode:6s} {w['runs']:,} runs: {w['steps']:,} training steps, {w['fitted']:,} fitted; "
                f"{w['passes']:,} scoring passes, {w['scored']:,} computed; wall {works[mode][1]:.1f} s",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="2 seeds (288 runs)")
    ap.add_argument("--tuning", action="store_true", help="the tuned validation_split grid instead")
    ap.add_argument(
        "--specs", nargs="+", default=None, help="compare these specs computed three ways instead"
    )
    ap.add_argument(
        "--modes",
        nargs="+",
        default=["off", "on", "verify"],
        choices=["off", "on", "verify"],
        help="with --specs: the ways to compute them (off: every step computed, on: shared, verify)",
    )
    args = ap.parse_args()
    seeds = 2 if args.quick else args.seeds
    grid = spec(seeds)
    print(describe())
    if args.tuning:
        for jobs in args.jobs:
            tuning(jobs, 2)
        return
    if args.specs:
        compare_specs(args.specs, args.jobs[0], seeds, tuple(args.modes))
        return
    print(
        f"grid: 6 datasets (3 x 2 orders) x 2 scenarios x 4 strategies x 3 detectors x {seeds} seeds "
        f"= {6 * 2 * 4 * 3 * seeds} runs"
    )
    texts = {}
    for jobs in args.jobs:
        rows = {}
        for steps in (False, True):
            walls, work = [], None
            for _ in range(args.repeat):
                wall, work, text = once(grid, jobs, steps)
                walls.append(wall)
                texts.setdefault(text, []).append((jobs, steps))
            rows[steps] = (statistics.median(walls), work)
            label = "after (steps shared)" if steps else "before (runs shared)"
            print(
                f"--jobs {jobs} {label:22s} wall {statistics.median(walls):7.1f} s (load {load_now()}); "
                f"{work['runs']:,} runs: {work['steps']:,} training steps, {work['fitted']:,} fitted; "
                f"{work['passes']:,} scoring passes, {work['scored']:,} computed; largest step cache "
                f"{work['cache_bytes'] / 2**20:.1f} MiB",
                flush=True,
            )
        (wb, before), (wa, after) = rows[False], rows[True]
        print(
            f"--jobs {jobs}: fits after / before = {after['fitted'] / before['fitted']:.3f} (target <= 0.45); "
            f"scoring passes after / before = {after['scored'] / before['scored']:.3f}; "
            f"wall after / before = {wa / wb:.3f} (target <= 0.55)",
            flush=True,
        )
    import resource

    print(
        f"results.json (all but timings and peak memory) identical across every computation: {len(texts) == 1}"
    )
    print(
        f"peak resident memory of this process (the sequential runs, cache included): "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )
    print(f"load average at the end: {load_now()}")


if __name__ == "__main__":
    main()
