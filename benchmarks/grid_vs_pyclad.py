"""A comparison grid as a lab would run it: clad (``clad run --jobs 2``) against pyCLAD 0.3.0 (a
Python loop over the grid in one process, in its own virtual environment, as
``benchmarks/vs_pyclad.py`` sets up).

Grid: the pyCLAD NSL-KDD concept file and an ADBench set (``38_thyroid``) with the
``cluster_random`` recipe (k = 5); concept_aware and concept_incremental; naive and cumulative;
PyOD IForest (random_state from the run seed), LOF(novelty=True), OCSVM and ECOD; 3 seeds.
pyCLAD gets exactly clad's concepts (clad's seeded ADBench dataset of each seed is written as a
pyCLAD concept file) and IForest's seed as clad derives it, so both compute the same R; clad
computes the runs that are one computation once (an unseeded detector on fixed data: one run for
every seed; naive and cumulative in concept_aware = concept_incremental). Both wall times include
loading the data. Prints the agreement of every R both compute (target: equal to 1e-9) and, last,
``grid: clad / pyCLAD = X (target <= 0.12)``; before it, the quickstart's wall time with sharing
over without (target <= 0.6).

clad and pyCLAD alternate ``--repeat`` times (default 3; pyCLAD in a fresh driver process each time,
its imports inside its timing) and the ratio is that of the two medians.

    python benchmarks/grid_vs_pyclad.py [--pyclad-python PATH] [--seeds 3] [--skip-quickstart] [--repeat 3]
                                        [--datasets nsl-kdd thyroid]

``--datasets nsl-kdd`` is the 48-run NSL part (2 scenarios x naive, cumulative x 4 detectors x 3 seeds).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, ROOT]
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from _machine import describe, load_now  # noqa: E402
from vs_pyclad import PyCLAD, pyclad_python  # noqa: E402

DATA = os.environ.get("CLAD_DATA", os.path.join(ROOT, "..", "shared", "datasets"))
NSL = "pyclad-nsl-kdd/nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy"
ADBENCH = "38_thyroid.npz"
DETECTORS = {
    "IsolationForest": {"name": "pyod.models.iforest:IForest", "label": "IsolationForest"},
    "LOF": {"name": "pyod.models.lof:LOF", "novelty": True, "label": "LOF"},
    "OCSVM": {"name": "pyod.models.ocsvm:OCSVM", "label": "OCSVM"},
    "ECOD": {"name": "pyod.models.ecod:ECOD", "label": "ECOD"},
}


def spec(seeds: int, datasets=("nsl-kdd", "thyroid")) -> dict:
    raw = {
        "name": "grid-vs-pyclad",
        "seeds": seeds,
        "base_metrics": ["roc_auc"],
        "strategies": ["naive", "cumulative"],
        "scenarios": ["concept_aware", "concept_incremental"],
        "detectors": list(DETECTORS.values()),
        "datasets": [
            {
                "name": "pyclad",
                "label": "nsl-kdd",
                "file": NSL,
                "allow_pickle": True,
                "data_dir": DATA,
            },
            {
                "name": "adbench",
                "label": "thyroid",
                "file": ADBENCH,
                "recipe": "cluster_random",
                "n_concepts": 5,
                "data_dir": DATA,
            },
        ],
    }
    raw["datasets"] = [d for d in raw["datasets"] if d["label"] in datasets]
    return raw


def concept_file(cfg, folder: str) -> str:
    """clad's dataset of ``cfg`` (seeded as in the run) as a pyCLAD concept file."""
    from clad.engine.run import build_run

    dataset, _, _ = build_run(cfg)
    rows = [
        {
            "name": tr.name,
            "train_data": np.asarray(tr.X),
            "test_data": np.asarray(te.X),
            "test_labels": np.asarray(te.y),
        }
        for tr, te in zip(dataset.train, dataset.test)
    ]
    path = os.path.join(folder, f"{cfg.dataset.display}-{cfg.seed}.npy")
    if not os.path.exists(path):
        arr = np.empty(len(rows), dtype=object)
        arr[:] = rows
        np.save(path, arr, allow_pickle=True)
    return path


def timed_clad(spec_path: str, out: str, *extra: str, repeat: int = 1) -> float:
    """The median wall time of ``repeat`` fresh ``clad run``s (each into an empty folder; the last
    one's folder is kept): this machine's speed drifts by 10-15 % from one run to the next."""
    import shutil
    import statistics

    times, parts = [], []
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        t0, wall0 = time.perf_counter(), time.time()
        subprocess.run(
            [sys.executable, "-m", "clad.cli", "run", spec_path, "--out", out, "--quiet", *extra],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - t0)
        parts.append(phases(out, wall0, wall0 + times[-1]))
    if repeat > 1:
        print(
            f"  {' '.join(extra) or 'clad run'}: {', '.join(f'{t:.1f}' for t in times)} s; median",
            flush=True,
        )
    print(f"  where the time went (each run): {'; '.join(parts)}", flush=True)
    return statistics.median(times)


def phases(out: str, start: float, end: float) -> str:
    """``clad run``'s wall time in three parts: before its first run started (interpreter, imports,
    spec, worker start), while runs computed, after the last finished (results written, exit)."""
    import datetime
    import sqlite3

    con = sqlite3.connect(os.path.join(out, "results.sqlite"))
    try:
        first, last = con.execute(
            "SELECT MIN(started), MAX(finished) FROM runs WHERE shared_from IS NULL"
        ).fetchone()
    finally:
        con.close()

    def at(stamp: str) -> float:
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()

    return f"{at(first) - start:.2f} + {at(last) - at(first):.2f} + {end - at(last):.2f} s"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyclad-python", default=None)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--skip-quickstart", action="store_true")
    ap.add_argument(
        "--repeat", type=int, default=3, help="clad timings: the median of this many runs"
    )
    ap.add_argument(
        "--datasets", nargs="+", default=["nsl-kdd", "thyroid"], choices=["nsl-kdd", "thyroid"]
    )
    args = ap.parse_args(argv)
    print(describe())
    from clad.core.seeding import derive_seeds
    from clad.engine.spec import parse_spec
    from clad.results.reading import load_results

    work = tempfile.mkdtemp(prefix="clad-grid-")
    raw = spec(args.seeds, args.datasets)
    spec_path = os.path.join(work, "grid.toml")
    import tomli_w

    with open(spec_path, "wb") as f:
        tomli_w.dump(raw, f)
    configs = parse_spec(raw).configs
    files = {
        (c.dataset.display, c.seed): concept_file(c, work) for c in configs
    }  # outside both timings

    def pyclad_loop() -> tuple[float, dict]:
        """pyCLAD's loop over the grid in a fresh driver process (its imports inside the timing)."""
        py = PyCLAD(pyclad_python(args.pyclad_python))
        t0 = time.perf_counter()
        answers = {}
        for c in configs:
            key = (
                c.dataset.display,
                c.scenario.display,
                c.strategy.display,
                c.detector.display,
                c.seed,
            )
            answers[key] = py.run(
                files[(c.dataset.display, c.seed)],
                c.scenario.name,
                c.strategy.name,
                c.detector.display,
                random_state=derive_seeds(c.seed)["detector"],
            )
        t = time.perf_counter() - t0
        py.close()
        return t, answers

    # clad and pyCLAD alternate, --repeat times each: this machine's speed drifts between minutes,
    # and the ratio of the medians is less exposed to that drift than one run of each
    print(
        f"\nclad: {len(configs)} runs, clad run --jobs 2; pyCLAD: the same runs in a Python loop in one process; "
        f"each {args.repeat} times, alternating; load {load_now()}",
        flush=True,
    )
    import statistics

    t_clads, t_pys = [], []
    for i in range(args.repeat):
        t_clads.append(timed_clad(spec_path, os.path.join(work, "clad"), "--jobs", "2"))
        t_py_i, answers = pyclad_loop()
        t_pys.append(t_py_i)
        print(
            f"  round {i + 1}: clad {t_clads[-1]:.1f} s, pyCLAD {t_py_i:.1f} s: {t_clads[-1] / t_py_i:.3f} "
            f"(load {load_now()})",
            flush=True,
        )
    t_clad, t_py = statistics.median(t_clads), statistics.median(t_pys)
    clad = {
        (r.dataset, r.scenario, r.strategy, r.detector, r.seed): r
        for r in load_results(os.path.join(work, "clad"))
    }
    n_shared = sum(r.shared_from is not None for r in clad.values())
    run_s = sum(float(r.timings.get("total", 0.0)) for r in clad.values() if r.shared_from is None)
    print(
        f"clad: median {t_clad:.1f} s ({len(clad) - n_shared} runs computed, {n_shared} shared; "
        f"{run_s:.1f} s inside the computed runs)",
        flush=True,
    )
    py_run_s = sum(a["seconds"] for a in answers.values())
    print(
        f"pyCLAD: median {t_py:.1f} s ({py_run_s:.1f} s inside scenario.run() in the last round)",
        flush=True,
    )
    # where the ratio comes from: work computed (runs and their cost) and how it is spread on 2 workers
    print(
        f"work: clad computes {len(clad) - n_shared}/{len(answers)} runs; seconds inside runs clad / pyCLAD = "
        f"{run_s / py_run_s:.3f}; on 2 workers at best {run_s / 2 / t_py:.3f} of pyCLAD's wall time; "
        f"clad's time outside runs {t_clad - run_s / 2:.1f} s",
        flush=True,
    )

    worst, compared = 0.0, 0
    for key, ans in answers.items():
        r = clad[key]
        assert list(ans["order"]) == list(r.concepts), key
        diff = float(np.nanmax(np.abs(np.array(ans["R"], dtype=float) - r.R["roc_auc"])))
        worst, compared = max(worst, diff), compared + 1
        if diff > 1e-9:
            print(f"  DISAGREE {key}: max |dR| = {diff:.2e}")
    print(
        f"R agreement: {compared} runs compared, max |R_pyCLAD - R_clad| = {worst:.2e} "
        f"({'every R agrees' if worst <= 1e-9 else 'NOT all agree'} to 1e-9)"
    )

    if not args.skip_quickstart:
        quick = os.path.join(ROOT, "scenarios", "quickstart.toml")
        t_share = timed_clad(quick, os.path.join(work, "q-share"), repeat=args.repeat)
        t_alone = timed_clad(quick, os.path.join(work, "q-alone"), "--no-share", repeat=args.repeat)
        print(
            f"quickstart: with sharing {t_share:.1f} s, without {t_alone:.1f} s: "
            f"sharing / not = {t_share / t_alone:.3f} (target <= 0.6)"
        )
    print(f"grid: clad / pyCLAD = {t_clad / t_py:.3f} (target <= 0.12)")


if __name__ == "__main__":
    main()
