"""``clad report`` at the size of a paper's grid: 1,440 and 20,000 runs.

    nice -n 10 python benchmarks/report_scale.py [--sizes 1440 20000] [--keep DIR] [--reuse]
                                                [--real-grid] [--baseline CHECKOUT] [--no-browser]

**What the results folders hold.** Runs are *not* computed: a real slice of the grid (one synthetic
dataset, two scenarios, the strategies and detectors below, two seeds: a few seconds) is run with
``clad run`` first, and its runs are the templates. Every run of the big folder copies the template (a
run of the second seed: the first pays the imports) of its scenario, strategy and detector (its timings, peak memory, chance levels, versions) with its
own labels and seed, and its R drawn at random around the template's R (a configuration effect, a
dataset effect and noise per seed); its continual metrics are computed from that R by
:func:`clad.metrics.summarize`, as ``clad run`` does. Every run is written through clad's own
store (:class:`clad.results.store.ResultStore.write`, the one writer), so the report reads exactly
what it reads after ``clad run``. As in the grid that motivated this benchmark, ``cumulative``,
``replay`` and ``window`` hold the same R in every run (a buffer and a window that keep every row);
a few runs record the warning of a test concept with constant scores (differing only in the constant),
and one configuration fails on one block.

The grids (blocks = dataset x order, as ``orders`` labels them):

* 1,440 runs: 3 datasets x 2 orders x 2 scenarios x 4 strategies x 3 detectors x 10 seeds (the
  grid the report was first tried on);
* 20,000 runs: 5 datasets x 5 orders x 2 scenarios x 8 strategies x 10 detectors x 5 seeds.

For each size: ``clad report`` cold (an empty report folder) and again after 10 runs were added (ten
more seeds of one configuration on one block and scenario, seeds the folder does not hold yet: ten
runs new to it), each in a fresh process; wall and CPU seconds (of the whole process tree: the
report process and any process it starts, reaped here), seconds per 1,000 runs, the peak
resident memory of the report process (its VmHWM), of the process tree (the sum over the process
and its workers sampled every 0.05 s beside it; it counts the libraries they share once per
process) and the sum of each process's own peak, the number of figures drawn, the share of the
grid's own compute seconds (``%grid``: report CPU seconds over the sum of the runs' recorded
seconds, which for these folders are the template runs' seconds, copied), and, in headless
Chromium at 1,400 px wide, the first page's height and size (the HTML and the files it loads before
any image) and the tallest drill-down page. ``--baseline CHECKOUT`` times another checkout's clad on
the same folders (for a before/after table); its report is one page, so the drill-down column
stays empty. A drill-down page is measured with every figure drawn (the browser draws them when
they scroll into view).

Every measured process (``clad run`` and ``clad report`` alike) keeps Python's bytecode cache, as
Python does by default, after one warm-up import: an environment that sets
``PYTHONDONTWRITEBYTECODE`` would have each of them compile clad's modules again (about 0.15 s of a
report). ``--no-bytecode`` measures as the environment says.

``--real-grid`` also runs the 1,440-run grid for real (:data:`REAL_SPEC`, ``clad run --jobs 2``,
measured as a report is) and times the report of its folder: ``%run`` is the report's CPU seconds
over ``clad run``'s (every process of both trees), the cost a user compares; ``%grid`` there is over
the runs' recorded seconds (wall seconds inside each run, which a loaded machine stretches). Its ten
added runs are written as the other folders' are (random R around a template run, through the store).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from benchmarks._machine import describe, load_now  # noqa: E402

SLICE_STRATEGIES = ("naive", "cumulative", "replay", "window")
SLICE_DETECTORS = ("hbos", "ecod", "copod")
SCENARIOS = ("concept_incremental", "concept_agnostic")

#: what the slice and the real grid share: the scenarios (their batch size) and the detectors
GRID_TAIL = """\
[[scenarios]]
name = "concept_incremental"

[[scenarios]]
name = "concept_agnostic"
batch_size = 100

{detectors}
"""

SLICE_SPEC = (
    """\
name = "report-scale-slice"
base_metrics = ["roc_auc", "f1", "average_precision"]
seeds = 2
strategies = [{strategies}]

[[datasets]]
name = "synthetic"
n_concepts = 5
n_train = 200
n_test = 150

"""
    + GRID_TAIL
)

GRIDS = {
    1440: dict(
        datasets=3,
        orders=("given", "random"),
        strategies=SLICE_STRATEGIES,
        detectors=SLICE_DETECTORS,
        seeds=10,
    ),
    20000: dict(
        datasets=5,
        orders=("given", "random", "random2", "random3", "random4"),
        strategies=(*SLICE_STRATEGIES, "experts_like", "ewc_like", "lwf_like", "der_like"),
        detectors=(
            *SLICE_DETECTORS,
            "iforest_like",
            "lof_like",
            "knn_like",
            "ocsvm_like",
            "pca_like",
            "loda_like",
            "inne_like",
        ),
        seeds=5,
    ),
}


def _run_slice(work: Path) -> list:
    """The real slice's runs (the templates)."""
    from clad.results import load_results

    spec = work / "slice.toml"
    spec.write_text(
        SLICE_SPEC.format(
            strategies=", ".join(f'"{s}"' for s in SLICE_STRATEGIES),
            detectors="\n".join(f'[[detectors]]\nname = "{d}"\n' for d in SLICE_DETECTORS),
        )
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "clad.cli",
            "run",
            str(spec),
            "--out",
            str(work / "slice"),
            "--quiet",
        ],
        env={**os.environ, "PYTHONPATH": str(HERE)},
        check=True,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return [
        r for r in load_results(work / "slice") if r.ok and r.seed == 1
    ]  # seed 0 pays the imports


#: the grid the report was first tried on, run for real (``--real-grid``): 1,440 runs
REAL_SPEC = (
    """\
name = "report-scale-real-1440"
base_metrics = ["roc_auc", "f1", "average_precision"]
seeds = 10
orders = ["given", "random"]
strategies = [{strategies}]

{datasets}
"""
    + GRID_TAIL
)


def run_real_grid(work: Path, jobs: int) -> tuple[Path, dict]:
    """The 1,440-run grid of :data:`REAL_SPEC` run by ``clad run --jobs JOBS`` (in a fresh process,
    measured as a report is: wall, CPU seconds of the process tree, peak memory); its folder."""
    spec = work / "real.toml"
    datasets = "".join(
        f'[[datasets]]\nname = "synthetic"\nlabel = "synth{k}"\nn_concepts = 5\nn_train = 200\n'
        f"n_test = 150\nrandom_state = {k}\n\n"
        for k in range(3)
    )
    spec.write_text(
        REAL_SPEC.format(
            strategies=", ".join(f'"{s}"' for s in SLICE_STRATEGIES),
            datasets=datasets,
            detectors="\n".join(f'[[detectors]]\nname = "{d}"\n' for d in SLICE_DETECTORS),
        )
    )
    folder = work / "runs-1440-real"
    shutil.rmtree(folder, ignore_errors=True)
    m = measure(
        [
            sys.executable,
            "-m",
            "clad.cli",
            "run",
            str(spec),
            "--out",
            str(folder),
            "--quiet",
            "--jobs",
            str(jobs),
        ],
        HERE,
        work,
    )
    return folder, m


def _spec_text(size: int, grid: dict) -> str:
    datasets = "\n".join(
        f'[[datasets]]\nname = "synthetic"\nlabel = "synth{k}"\nn_concepts = 5\n'
        for k in range(grid["datasets"])
    )
    return (
        f"# {size} runs written by benchmarks/report_scale.py (random R around a real slice)\n"
        f'name = "report-scale-{size}"\nbase_metrics = ["roc_auc", "f1", "average_precision"]\n'
        f"seeds = {grid['seeds']}\norders = [{', '.join(repr(o) for o in grid['orders'])}]\n"
        f"strategies = [{', '.join(repr(s) for s in grid['strategies'])}]\n\n{datasets}"
    )


class _Maker:
    """Random runs around the templates, reproducible from their labels."""

    def __init__(self, templates: list):
        self.templates = {(r.scenario, r.strategy, r.detector): r for r in templates}

    def template(self, scenario: str, strategy: str, detector: str):
        strategies = sorted({k[1] for k in self.templates})
        detectors = sorted({k[2] for k in self.templates})
        s = (
            strategy
            if strategy in strategies
            else strategies[int(hashlib.md5(strategy.encode()).hexdigest(), 16) % len(strategies)]
        )
        d = (
            detector
            if detector in detectors
            else detectors[int(hashlib.md5(detector.encode()).hexdigest(), 16) % len(detectors)]
        )
        return self.templates[(scenario, s, d)]

    @staticmethod
    def _rng(*labels) -> np.random.Generator:
        return np.random.default_rng(
            int(hashlib.sha256(repr(labels).encode()).hexdigest()[:15], 16)
        )

    def run(
        self,
        dataset: str,
        order: str,
        scenario: str,
        strategy: str,
        detector: str,
        seed: int,
        same_as: str | None = None,
    ):
        from clad.metrics import learned_at, summarize

        t = self.template(scenario, strategy, detector)
        concepts = tuple(t.concepts)
        if order != "given":  # a fixed permutation per dataset and order
            perm = self._rng(dataset, order).permutation(len(concepts))
            concepts = tuple(concepts[i] for i in perm)
        label = f"{dataset}[order={order}]"
        effect = self._rng(dataset, scenario, same_as or strategy, detector).normal(0, 0.05)
        noise = self._rng(label, scenario, same_as or strategy, detector, seed)
        R, metrics = {}, {}
        for m, base in t.R.items():
            base = np.asarray(base, dtype=np.float64)
            values = np.clip(base + effect + noise.normal(0, 0.03, base.shape), 0.0, 1.0)
            R[m] = values
            s = summarize(values, learned_at(concepts, concepts))
            metrics[m] = s
        warnings = ()
        if noise.random() < 0.02:
            warnings = (
                f"test concept {concepts[-1]!r}: every score is the same ({noise.random():g}), so its "
                "ROC-AUC is 0.5 and its other metrics say nothing about the detector",
            )
        rid = hashlib.sha256(
            repr((label, scenario, strategy, detector, seed)).encode()
        ).hexdigest()[:16]
        return dataclasses.replace(
            t,
            run_id=rid,
            dataset=label,
            scenario=scenario,
            strategy=strategy,
            detector=detector,
            seed=seed,
            concepts=concepts,
            test_concepts=concepts,
            R=R,
            metrics=metrics,
            order=None if order == "given" else order,
            warnings=warnings,
            config={
                **t.config,
                "dataset": {"name": "synthetic", "label": dataset},
                "strategy": strategy,
                "detector": detector,
                "seed": seed,
            },
            shared_from=None,
        )


def _plan(size: int) -> dict:
    """Ten more seeds of one configuration (naive + the first detector) on one block and scenario: a
    rerun with more seeds. (More seeds of only some of the equal strategies would make them differ,
    and relabel their rows on every block.) The seeds are chosen when the runs are added
    (:func:`add_runs`): the ten after the highest the folder holds for that configuration."""
    grid = GRIDS[size]
    return {
        "dataset": "synth0",
        "order": grid["orders"][0],
        "scenario": SCENARIOS[0],
        "configs": [("naive", grid["detectors"][0])],
    }


def build(folder: Path, size: int, maker: _Maker) -> dict:
    """Write the results folder of ``size`` runs through the store; return what to add later."""
    from clad.results.store import ResultStore

    grid = GRIDS[size]
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    with ResultStore(folder) as store:
        store.set_meta("spec", {"name": f"report-scale-{size}", "seeds": grid["seeds"]})
        store.set_meta("spec_text", _spec_text(size, grid))
        for k in range(grid["datasets"]):
            for order in grid["orders"]:
                for scenario in SCENARIOS:
                    for strategy in grid["strategies"]:
                        for detector in grid["detectors"]:
                            for seed in range(grid["seeds"]):
                                same = "cumulative" if strategy in ("replay", "window") else None
                                r = maker.run(
                                    f"synth{k}", order, scenario, strategy, detector, seed, same
                                )
                                if (k, order, strategy, detector) == (
                                    grid["datasets"] - 1,
                                    grid["orders"][-1],
                                    "naive",
                                    grid["detectors"][-1],
                                ):
                                    r = dataclasses.replace(
                                        r,
                                        status="failed",
                                        R={},
                                        metrics={},
                                        error="Traceback (most recent call last):\n  File "
                                        '"x.py", line 1\nMemoryError: out of memory\n',
                                    )
                                store.write(r)
                                n += 1
    assert n == size, n
    return _plan(size)


def _count_runs(folder: Path) -> int:
    import sqlite3

    con = sqlite3.connect(f"file:{folder / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        con.close()


def add_runs(folder: Path, maker: _Maker, plan: dict) -> list[int]:
    """Ten new runs (:func:`_plan`): seeds after the highest one the folder holds for the
    configuration, so each run is new to the folder (a folder reused with ``--reuse`` holds the
    runs added last time); checked by counting the folder's runs. Returns the seeds added."""
    import sqlite3

    from clad.results.store import ResultStore

    label = f"{plan['dataset']}[order={plan['order']}]"
    before = _count_runs(folder)
    added = []
    con = sqlite3.connect(f"file:{folder / 'results.sqlite'}?mode=ro", uri=True)
    try:
        highest = {
            c: con.execute(
                "SELECT MAX(seed) FROM runs WHERE dataset = ? AND scenario = ? AND strategy = ? AND "
                "detector = ?",
                (label, plan["scenario"], *c),
            ).fetchone()[0]
            for c in plan["configs"]
        }
    finally:
        con.close()
    with ResultStore(folder) as store:
        for strategy, detector in plan["configs"]:
            start = -1 if highest[(strategy, detector)] is None else highest[(strategy, detector)]
            for seed in range(start + 1, start + 11):
                same = "cumulative" if strategy in ("replay", "window") else None
                store.write(
                    maker.run(
                        plan["dataset"],
                        plan["order"],
                        plan["scenario"],
                        strategy,
                        detector,
                        seed,
                        same,
                    )
                )
                added.append(seed)
    after = _count_runs(folder)
    if after != before + len(added):
        raise SystemExit(
            f"adding {len(added)} runs took the folder from {before} to {after} runs: some existed already"
        )
    return added


def compute_seconds(folder: Path) -> float:
    """The sum of the runs' recorded seconds (read in a stream: this process stays small)."""
    from clad.results.reading import iter_results

    return sum(
        float(r.timings.get("total") or 0.0)
        for r in iter_results(folder)
        if r.ok and not r.shared_from
    )


def _hwm(pid: int) -> int:
    """The peak resident memory (bytes) of process ``pid`` since it started its program (the
    kernel's VmHWM: every spike counted, however short), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree(pid: int, cpu_seen: dict, hwm_seen: dict) -> int:
    """The resident memory of process ``pid`` and its descendants together now; each one's CPU
    seconds and peak resident memory (VmHWM) noted."""
    import psutil

    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
            t = q.cpu_times()
            cpu_seen[q.pid] = t.user + t.system
            hwm_seen[q.pid] = max(hwm_seen.get(q.pid, 0), _hwm(q.pid))
        except psutil.Error:
            pass
    return total


def _become_subreaper() -> bool:
    """Make this process the reaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a forkserver
    and its workers, orphaned when the process that started them ends, are reaped here, so that
    ``RUSAGE_CHILDREN`` counts the CPU seconds of the whole tree. False where it cannot."""
    import ctypes

    try:
        return (
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
        )  # 36: PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _measured_env() -> dict:
    """The environment of a measured process: this one's, with Python's default bytecode cache (an
    environment that sets ``PYTHONDONTWRITEBYTECODE`` recompiles clad's modules in every process;
    ``--no-bytecode`` keeps it as it is)."""
    env = dict(os.environ)
    if BYTECODE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


#: whether measured processes keep Python's bytecode cache (the default; ``--no-bytecode`` turns it off)
BYTECODE = True


def _warm_bytecode(checkout: Path) -> None:
    """Compile the modules a run and a report import once, so that no measured process pays it."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import clad.cli, clad.engine.benchmark, clad.report.make, clad.report.charts, "
            "clad.report.load",
        ],
        env={**_measured_env(), "PYTHONPATH": str(checkout)},
        check=True,
    )


def _reap_all(timeout: float = 30.0) -> None:
    """Wait for every child process of this one (its own and those it reaps) to end, up to ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.05)
        except ChildProcessError:
            break


def time_report(checkout: Path, folder: Path, out: Path) -> dict:
    """One ``clad report`` in a fresh process (:func:`measure`)."""
    cmd = [sys.executable, "-m", "clad.cli", "report", str(folder), "--out", str(out)]
    return measure(cmd, checkout, folder.parent)


def measure(cmd: list[str], checkout: Path, cwd: Path) -> dict:
    """Run ``cmd`` (clad from ``checkout``) in a fresh process: wall, CPU seconds of the process
    tree (every process reaped here, :func:`_become_subreaper`), peak resident memory of the process (its VmHWM, read every 0.05 s: a peak, however short,
    stays in it), and of the process tree (the sum over the process and its workers, sampled; and the
    sum of each one's own peak, an upper bound). Not the ``ru_maxrss`` of ``wait4``: a child started by
    ``vfork``, as :mod:`subprocess` starts it, records the peak of this (benchmark) process as its own."""
    import resource

    env = {**_measured_env(), "PYTHONPATH": str(checkout)}
    subreaper = _become_subreaper()
    if subreaper:  # processes orphaned earlier (Chromium's, after a page was measured) reaped first: not counted here
        _reap_all()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out_file, err_file = (
        tempfile.TemporaryFile(),
        tempfile.TemporaryFile(),
    )  # a pipe could fill and block it
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out_file, stderr=err_file)
    peak_tree = [0]
    cpu_seen: dict[int, float] = {}  # per process of the tree, its CPU seconds when last seen
    hwm_seen: dict[
        int, int
    ] = {}  # per process of the tree, its peak resident memory when last seen

    ended = (
        threading.Event()
    )  # set once wait4 has reaped the process (poll() here could reap it first)

    def sample():
        while not ended.is_set():
            peak_tree[0] = max(peak_tree[0], _tree(proc.pid, cpu_seen, hwm_seen))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    ended.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out_file.seek(0)
    err_file.seek(0)
    stdout, stderr = out_file.read().decode(), err_file.read().decode()
    out_file.close()
    err_file.close()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd[2:4])} failed ({proc.returncode}):\n{stderr[-3000:]}")
    if (
        subreaper
    ):  # every process of the tree comes back to this one when its parent ends: reap them all
        _reap_all()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    else:  # the workers of a forkserver are not the process's children: their seconds summed from the samples
        cpu = max(usage.ru_utime + usage.ru_stime, sum(cpu_seen.values()))
    return {
        "wall": wall,
        "cpu": cpu,
        "peak_mb": hwm_seen.get(proc.pid, 0) / 2**20,
        "peak_tree_mb": peak_tree[0] / 2**20,
        "peak_each_mb": sum(hwm_seen.values()) / 2**20,
        "stdout": stdout,
        "stderr": stderr,
    }


def figures_drawn(out: Path, stdout: str) -> int | None:
    """The figures this report drew (its console line says so; None when it does not)."""
    import re

    m = re.search(r"(\d[\d,]*) drawn", stdout)
    return int(m.group(1).replace(",", "")) if m else None


def _draw_every_figure(driver, timeout: float = 60.0) -> int:
    """Have the page draw every figure it draws in the browser now (not when scrolled to), wait for
    them, and return how many could not be drawn: a drill-down page is measured at its full height."""
    driver.execute_script("if (window.cladDrawAllCharts) { window.cladDrawAllCharts(); }")
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = driver.execute_script(
            "const c = Array.from(document.querySelectorAll('div.chart[data-chart]'));"
            "return [c.length, c.filter(e => e.classList.contains('drawn')).length,"
            "c.filter(e => e.classList.contains('failed')).length];"
        )
        if state[1] + state[2] == state[0]:
            return state[2]
        time.sleep(0.1)
    return state[0] - state[1]


def browser_measure(out: Path) -> dict:
    """First page's height and size, and the tallest drill-down page, in headless Chromium at 1,400 px."""
    from selenium import webdriver

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="clad-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        options=options,
        service=webdriver.ChromeService(executable_path=shutil.which("chromedriver")),
    )
    try:
        driver.set_window_size(1400, 1000)
        index = out / "index.html"
        driver.get(index.resolve().as_uri())
        height = driver.execute_script("return document.documentElement.scrollHeight")
        eager = driver.execute_script(  # its scripts and style sheets (a file:// page has no resource timings)
            "return Array.from(document.querySelectorAll('script[src], link[rel=stylesheet][href]'))"
            ".map(e => decodeURIComponent(new URL(e.src || e.href).pathname))"
        )
        size = index.stat().st_size + sum(
            Path(p).stat().st_size for p in eager if Path(p).is_file()
        )
        tallest = (0, None)
        failed = 0
        for page in sorted((out / "blocks").glob("*.html")) if (out / "blocks").is_dir() else ():
            driver.get(page.resolve().as_uri())
            failed += _draw_every_figure(driver)
            h = driver.execute_script("return document.documentElement.scrollHeight")
            tallest = max(tallest, (h, page.name))
        return {
            "height": height,
            "bytes": size,
            "drill_height": tallest[0],
            "drill_page": tallest[1],
            "figures_failed": failed,
        }
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1440, 20000], choices=sorted(GRIDS))
    p.add_argument("--baseline", help="another checkout of clad to time on the same folders")
    p.add_argument("--baseline-only", action="store_true", help="time only the baseline")
    p.add_argument(
        "--keep", help="build the folders here and keep them (default: a temporary folder, removed)"
    )
    p.add_argument("--no-browser", action="store_true", help="skip the Chromium measurements")
    p.add_argument(
        "--no-bytecode",
        action="store_true",
        help="measure with this environment's PYTHONDONTWRITEBYTECODE (default: Python's bytecode cache)",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="with --keep: use a folder this script built there before",
    )
    p.add_argument(
        "--real-grid",
        action="store_true",
        help="also the 1,440-run grid run for real (clad run --jobs 2, a few minutes; kept with --keep and "
        "reused with --reuse), its report compared with what clad run cost",
    )
    args = p.parse_args()
    global BYTECODE
    BYTECODE = not args.no_bytecode
    print(describe())
    print(
        "bytecode: "
        + (
            "cached, as Python keeps it by default (PYTHONDONTWRITEBYTECODE unset for the measured "
            "processes: clad run and clad report alike)"
            if BYTECODE
            else "as this environment says (PYTHONDONTWRITEBYTECODE="
            f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})"
        )
    )
    work = Path(args.keep or tempfile.mkdtemp(prefix="clad-report-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    sides = {} if args.baseline_only else {"this": HERE}
    if args.baseline:
        sides["baseline"] = Path(args.baseline).resolve()
    try:
        t0 = time.perf_counter()
        maker = _Maker(_run_slice(work))
        print(
            f"real slice run in {time.perf_counter() - t0:.1f} s: {len(maker.templates)} template runs"
        )
        rows = []
        # (size, side, real): the folders of random R, then (--real-grid) the grid run for real
        cases = [(size, side, False) for size in args.sizes for side in sides]
        if args.real_grid:
            cases += [(1440, side, True) for side in sides]
        if BYTECODE:
            for checkout in sides.values():
                _warm_bytecode(checkout)
        for size, side, for_real in cases:
            checkout = sides[side]
            folder = work / f"runs-{size}-{side}"
            t0 = time.perf_counter()
            real = None  # what clad run cost, for a grid run for real
            if for_real:
                folder = work / "runs-1440-real"
                record = work / "runs-1440-real.json"
                if args.reuse and record.is_file() and (folder / "results.sqlite").is_file():
                    real = json.loads(record.read_text())
                    shutil.rmtree(folder / "report", ignore_errors=True)
                else:
                    folder, m = run_real_grid(work, 2)
                    real = {k: m[k] for k in ("wall", "cpu", "peak_mb", "peak_tree_mb")}
                    record.write_text(json.dumps(real))
                plan = _plan(size)
            elif (
                args.reuse and (folder / "results.sqlite").is_file()
            ):  # built earlier by this script
                plan = _plan(size)
                shutil.rmtree(folder / "report", ignore_errors=True)
            else:
                shutil.rmtree(folder, ignore_errors=True)
                plan = build(folder, size, maker)
            built = time.perf_counter() - t0
            grid_seconds = compute_seconds(folder)
            if real:
                print(
                    f"\n{size} runs ({side}: {checkout}): the real grid, clad run --jobs 2: wall {real['wall']:.0f} s, "
                    f"CPU {real['cpu']:.0f} s (its processes together); the runs' own recorded seconds: "
                    f"{grid_seconds:.0f} s; {_count_runs(folder):,} runs"
                )
            else:
                print(
                    f"\n{size} runs ({side}: {checkout}): folder written through the store in {built:.0f} s; "
                    f"the runs' own compute: {grid_seconds:.0f} s"
                )
            out = folder / "report"
            for when in ("cold", "after +10 runs"):
                if when != "cold":
                    seeds = add_runs(folder, maker, plan)
                    print(
                        f"  {'':15s} added {len(seeds)} new runs ({plan['dataset']}[order={plan['order']}] / "
                        f"{plan['scenario']} / {' / '.join(plan['configs'][0])}, seeds {seeds[0]}-{seeds[-1]}): "
                        f"{_count_runs(folder):,} runs now"
                    )
                m = time_report(checkout, folder, out)
                drawn = figures_drawn(out, m["stdout"])
                if drawn is None:
                    drawn = len(list((out / "figures").glob("*.png")))
                b = {} if args.no_browser else browser_measure(out)
                row = {
                    "size": size,
                    "side": side + ("/real" if real else ""),
                    "when": when,
                    **m,
                    "drawn": drawn,
                    **b,
                    "share": m["cpu"] / grid_seconds,
                }
                rows.append(row)
                print(
                    f"  {when:15s} wall {m['wall']:7.1f} s, cpu {m['cpu']:7.1f} s "
                    f"({1000 * m['wall'] / size:.1f} s wall per 1,000 runs; {100 * row['share']:.1f} % of the "
                    f"grid's compute), peak {m['peak_mb']:.0f} MB (process tree {m['peak_tree_mb']:.0f} MB; its "
                    f"processes' own peaks summed {m['peak_each_mb']:.0f} MB), "
                    f"{drawn} figures drawn (load {load_now()})"
                )
                if real:
                    row["share_real"] = m["cpu"] / real["cpu"]
                    print(
                        f"  {'':15s} report CPU / clad run CPU: {100 * row['share_real']:.1f} % "
                        f"(report wall / clad run wall: {100 * m['wall'] / real['wall']:.1f} %)"
                    )
                if b:
                    print(
                        f"  {'':15s} first page {b['height']:,} px, {b['bytes'] / 1e6:.2f} MB; tallest "
                        f"drill-down {b['drill_height']:,} px ({b['drill_page']}, every figure drawn by the browser; "
                        f"{b['figures_failed']} could not be)"
                    )
                last = m["stdout"].strip().splitlines()[-1:] or [""]
                print(f"  {'':15s} console: {last[0][:200]}")
                if when != "cold":
                    print(f"  {'':15s} figures drawn on the second report: {drawn}")
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
        print(
            "\n%grid: report CPU seconds / the runs' own recorded seconds; %run: report CPU seconds / CPU seconds of "
            "clad run (--real-grid only)"
        )
        print(
            "size    side        when             wall s  s/1,000 runs  cpu s  %grid   %run  peak MB  tree MB  drawn  "
            "page px  page MB  drill px"
        )
        for r in rows:
            run = f"{100 * r['share_real']:5.1f}" if "share_real" in r else "    -"
            print(
                f"{r['size']:6d}  {r['side']:10s}  {r['when']:15s} {r['wall']:7.1f}  {1000 * r['wall'] / r['size']:12.1f}  "
                f"{r['cpu']:5.1f}  {100 * r['share']:5.1f}  {run}  {r['peak_mb']:7.0f}  {r['peak_tree_mb']:7.0f}  "
                f"{r['drawn']:5d}  {r.get('height', 0):7,}  {r.get('bytes', 0) / 1e6:7.2f}  "
                f"{r.get('drill_height', 0):8,}"
            )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
