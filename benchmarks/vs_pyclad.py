"""clad side by side with pyCLAD 0.3.0: the same data, scenario, strategy and detector.

pyCLAD is installed from the package index into its own virtual environment (under a cache
folder; it is not a dependency of clad), with numpy, scikit-learn and PyOD pinned to the versions
this process uses so that both sides run the same detector code. Its scenarios run there through
``_pyclad_driver.py``, which times only ``scenario.run()``; clad's runs are timed around
``run_experiment`` in this process. Imports and data loading are excluded on both sides.

Data: the pyCLAD NSL-KDD concept file (5 concepts). Detectors: PyOD IForest(random_state=0),
LOF(novelty=True), OCSVM() -- pyCLAD's adapters; clad gets the same PyOD objects. Both R matrices
(ROC-AUC) are printed and must agree to 1e-9. The wall-time ratio clad / pyCLAD is given with clad
scoring in one thread (``n_jobs=1``, the same single core pyCLAD uses) and with ``n_jobs=2``.
Repetitions are interleaved after one warm-up, medians compared. Target: ratio <= 0.55.

    python benchmarks/vs_pyclad.py [--reps 3] [--pyclad-python PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's clad, even when another is installed
# one BLAS / OpenMP thread (before numpy loads), in this process and in any child it starts: both
# sides of a comparison then use the cores the same way, and idle BLAS threads do not spin on a
# loaded machine; clad's own parallelism (n_jobs) is what is measured
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from pyod.models.iforest import IForest  # noqa: E402
from pyod.models.lof import LOF  # noqa: E402
from pyod.models.ocsvm import OCSVM  # noqa: E402

import _nslkdd  # noqa: E402
from _machine import describe, load_now  # noqa: E402
from clad.core.experiment import run_experiment  # noqa: E402
from clad.scenarios import ConceptAware, ConceptIncremental  # noqa: E402
from clad.strategies import Cumulative, Naive  # noqa: E402

PYCLAD = "pyclad==0.3.0"
DETECTORS = {
    "IsolationForest": lambda: IForest(random_state=0),
    "LOF": lambda: LOF(novelty=True),
    "OCSVM": lambda: OCSVM(),
}
SCENARIOS = {"concept_aware": ConceptAware, "concept_incremental": ConceptIncremental}
STRATEGIES = {"naive": Naive, "cumulative": Cumulative}


def cache_dir() -> str:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "clad-benchmarks")


def pyclad_python(given: str | None) -> str:
    """An interpreter with pyCLAD 0.3.0: the one given, or a virtual environment made once in the cache."""
    if given:
        return given
    venv = os.path.join(cache_dir(), "pyclad-0.3.0")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"creating {venv} and installing {PYCLAD} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        pins = [
            f"numpy=={version('numpy')}",
            f"scikit-learn=={version('scikit-learn')}",
            f"pyod=={version('pyod')}",
        ]
        subprocess.run([python, "-m", "pip", "install", "--quiet", PYCLAD, *pins], check=True)
    return python


class PyCLAD:
    """The driver process: one request, one timed ``scenario.run()``."""

    def __init__(self, python: str):
        self.proc = subprocess.Popen(
            [python, os.path.join(HERE, "_pyclad_driver.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, data, scenario, strategy, detector, random_state: int = 0) -> dict:
        req = {
            "data": data,
            "scenario": scenario,
            "strategy": strategy,
            "detector": detector,
            "random_state": random_state,
        }
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the pyCLAD driver stopped; see its error above")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def clad_run(ds, scenario, strategy, detector, n_jobs):
    t0 = time.perf_counter()
    res = run_experiment(
        ds,
        SCENARIOS[scenario](),
        STRATEGIES[strategy](DETECTORS[detector]()),
        ("roc_auc",),
        n_jobs=n_jobs,
    )
    return time.perf_counter() - t0, res


def show(R) -> str:
    return "\n".join("      " + " ".join(f"{v:.6f}" for v in row) for row in np.asarray(R))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--pyclad-python", default=None, help="an interpreter that has pyclad 0.3.0 installed"
    )
    ap.add_argument("--data", default=None)
    ap.add_argument("--quick", action="store_true", help="concept_incremental only")
    args = ap.parse_args(argv)
    print(describe())
    data = _nslkdd.find(args.data)
    ds = _nslkdd.load(data)
    py = PyCLAD(pyclad_python(args.pyclad_python))
    scenarios = ["concept_incremental"] if args.quick else list(SCENARIOS)
    rows = []
    first = True
    for scenario in scenarios:
        for strategy in STRATEGIES:
            for detector in DETECTORS:
                warm = py.run(data, scenario, strategy, detector)  # warm-up (and R)
                if first:
                    print(
                        "pyCLAD side: " + ", ".join(f"{k} {v}" for k, v in warm["versions"].items())
                    )
                    print(
                        f"reps {args.reps} (interleaved, after one warm-up), medians; load now {load_now()}"
                    )
                    first = False
                clad_run(ds, scenario, strategy, detector, 1)
                tp, t1, t2, fits, scores = [], [], [], [], []
                for _ in range(args.reps):
                    tp.append(py.run(data, scenario, strategy, detector)["seconds"])
                    s, res1 = clad_run(ds, scenario, strategy, detector, 1)
                    t1.append(s)
                    fits.append(sum(res1.timings["fit"]))
                    scores.append(sum(res1.timings["score"]))
                    s, res2 = clad_run(ds, scenario, strategy, detector, 2)
                    t2.append(s)
                R_py = np.array(warm["R"], dtype=float)
                R_clad = res1.R["roc_auc"]
                assert list(warm["order"]) == list(res1.concepts) == list(ds.test_names)
                diff = float(np.max(np.abs(R_py - R_clad)))
                same_threads = res2.R["roc_auc"].tobytes() == R_clad.tobytes()
                mp, m1, m2 = statistics.median(tp), statistics.median(t1), statistics.median(t2)
                rows.append((scenario, strategy, detector, mp, m1, m2, diff))
                print(f"\n{scenario} / {strategy} / {detector}")
                print(f"  R pyCLAD (ROC-AUC):\n{show(R_py)}\n  R clad:\n{show(R_clad)}")
                print(
                    f"  max |R_pyCLAD - R_clad| = {diff:.2e} ({'agree' if diff <= 1e-9 else 'DISAGREE'} to 1e-9); "
                    f"clad n_jobs=2 R bit-identical to n_jobs=1: {same_threads}"
                )
                print(
                    f"  seconds: pyCLAD {mp:.3f}, clad {m1:.3f} (ratio {m1 / mp:.3f}), "
                    f"clad n_jobs=2 {m2:.3f} (ratio {m2 / mp:.3f}); load {load_now()}"
                )
                mf, ms = statistics.median(fits), statistics.median(scores)
                print(
                    f"  clad n_jobs=1: learning {mf:.3f} s, scoring + ROC-AUC {ms:.3f} s; pyCLAD makes the same fits "
                    f"and scores every test set twice, so clad's floor here is about "
                    f"{(mf + ms) / (mf + 2 * ms):.2f} of pyCLAD's own work",
                    flush=True,
                )
    py.close()
    print(
        f"\n{'scenario':20s} {'strategy':10s} {'detector':16s} {'pyCLAD s':>9s} {'clad s':>8s} {'ratio':>6s} "
        f"{'clad 2thr':>9s} {'ratio':>6s} {'max|dR|':>8s}"
    )
    for sc, st, det, mp, m1, m2, diff in rows:
        print(
            f"{sc:20s} {st:10s} {det:16s} {mp:9.3f} {m1:8.3f} {m1 / mp:6.3f} {m2:9.3f} {m2 / mp:6.3f} {diff:8.1e}"
        )
    for det in DETECTORS:
        sel = [r for r in rows if r[2] == det]
        p, c1, c2 = (sum(r[i] for r in sel) for i in (3, 4, 5))
        print(
            f"{det}: total ratio clad / pyCLAD = {c1 / p:.3f} (n_jobs=1), {c2 / p:.3f} (n_jobs=2)"
        )
    p, c1, c2 = (sum(r[i] for r in rows) for i in (3, 4, 5))
    ok = all(r[6] <= 1e-9 for r in rows)
    print(
        f"all runs: total ratio clad / pyCLAD = {c1 / p:.3f} (n_jobs=1), {c2 / p:.3f} (n_jobs=2); target <= 0.55: "
        f"{'meets' if min(c1, c2) / p <= 0.55 else 'MISSES'}; every R agrees to 1e-9: {ok}"
    )
    print(f"load average at the end: {load_now()}")


if __name__ == "__main__":
    main()
