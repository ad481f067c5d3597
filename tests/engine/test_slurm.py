"""Grids on SLURM: the ``[slurm]`` configuration, and runs through a real one-node SLURM cluster
started by the tests themselves (munged, slurmctld, slurmd; :mod:`clad.engine.slurm_local`) —
the same R as ``--jobs 1``, nothing submitted twice, one writer, and the faults of a cluster."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clad.engine.settings import Execution
from clad.engine.sharing import Sharing
from clad.engine.benchmark import run_spec
from clad.engine.slurm import JOBS_META, SUBMITTED_META
from clad.engine.slurm_jobs import failure_kind
from clad.engine.slurm_config import (
    SlurmConfig,
    load_slurm,
    parse_slurm,
    runs_per_job,
    time_limit_minutes,
)
from clad.engine.spec import parse_spec
from clad.errors import CladValueError
from clad.results.store import ResultStore

from tests.runner_helpers import run_main, same_results, write_spec

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _grid(seeds=25, detectors=None, n_concepts=2, strategies=("naive",), **extra) -> dict:
    return {
        "seeds": seeds,
        "strategies": list(strategies),
        "scenarios": ["concept_incremental"],
        "detectors": detectors or [{"name": "iforest", "grid": {"n_estimators": [10, 20]}}],
        "datasets": [
            {
                "name": "synthetic",
                "n_concepts": n_concepts,
                "n_features": 2,
                "n_train": 40,
                "n_test": 30,
            }
        ],
        **extra,
    }


# -- the configuration (no cluster needed) ----------------------------------------------------------
def test_slurm_section_is_validated_with_the_key_and_what_is_allowed():
    with pytest.raises(
        CladValueError, match=r"\[slurm\] mem_gb: -1; expected a number > 0 and at most"
    ):
        parse_slurm({"mem_gb": -1})
    with pytest.raises(CladValueError, match=r"\[slurm.detectors.autoencoder\] gpus: unknown key"):
        parse_slurm({"detectors": {"autoencoder": {"gpus": 1}}})
    with pytest.raises(
        Exception, match=r"\[slurm\] retries: 'two'; expected an integer in \[0, 100\]"
    ):
        parse_spec(_grid(slurm={"retries": "two"}))
    spec = parse_spec(_grid(seeds=1, slurm={"partition": "cpu", "max_jobs": 4}))
    assert spec.slurm == SlurmConfig(partition="cpu", max_jobs=4)


@pytest.mark.parametrize(
    "table,words",
    [
        (
            {"poll_seconds": 1e9},
            r"\[slurm\] poll_seconds: 1000000000.0; expected a number > 0 and at most 3,600",
        ),
        (
            {"poll_seconds": float("inf")},
            r"poll_seconds: inf; expected a number > 0 and at most 3,600",
        ),
        ({"poll_seconds": float("nan")}, r"poll_seconds: nan; expected a number > 0"),
        (
            {"mem_gb": float("inf")},
            r"\[slurm\] mem_gb: inf; expected a number > 0 and at most 65,536",
        ),
        ({"mem_gb": 1e12}, r"mem_gb: 1000000000000.0; expected a number > 0 and at most 65,536"),
        ({"detectors": {"x": {"mem_gb": float("nan")}}}, r"\[slurm.detectors.x\] mem_gb: nan"),
        (
            {"time_minutes": 10**12},
            r"time_minutes: 1000000000000; expected an integer in \[1, 527,040\]",
        ),
        ({"max_jobs": 10**9}, r"max_jobs: 1000000000; expected an integer in \[1, 100,000\]"),
        ({"retries": 10**6}, r"retries: 1000000; expected an integer in \[0, 100\]"),
        (
            {"partition": "cpu\n#SBATCH --mem=1"},
            r"\[slurm\] partition: 'cpu\\n#SBATCH --mem=1' holds the control",
        ),
        ({"account": "a\x00b"}, r"account: 'a\\x00b' holds the control character"),
        (
            {"datasets": {"d": {"qos": "q\u2028"}}},
            r"\[slurm.datasets.d\] qos: 'q\\u2028' holds the control",
        ),
        (
            {"sbatch": {"mail-user": "a@b\nrm"}},
            r"sbatch.mail-user: 'a@b\\nrm' holds the control character",
        ),
        ({"sbatch": {"x y": "1"}}, r"sbatch: option 'x y'; expected an sbatch option name"),
        (
            {"sbatch": {"nice": float("inf")}},
            r"sbatch.nice: inf; expected a string or a finite number",
        ),
    ],
)
def test_slurm_numbers_are_bounded_and_names_printable_at_spec_time(table, words):
    with pytest.raises(CladValueError, match=words):
        parse_slurm(table)
    with pytest.raises(CladValueError, match=words):
        parse_spec(
            _grid(seeds=1, slurm=table)
        )  # so --dry-run refuses it too, before any job is submitted


def test_a_slurm_configuration_built_in_code_is_checked_alike():
    with pytest.raises(
        CladValueError,
        match=r"SlurmConfig poll_seconds: inf; expected a number > 0 and at most 3,600",
    ):
        SlurmConfig(poll_seconds=float("inf"))
    with pytest.raises(
        CladValueError, match=r"SlurmConfig partition: 'a\\nb' holds the control character"
    ):
        SlurmConfig(partition="a\nb")
    assert SlurmConfig(mem_gb=1, poll_seconds=1).mem_gb == 1.0


def test_slurm_bounds_keep_every_sensible_value():
    top = parse_slurm(
        {
            "poll_seconds": 3600,
            "mem_gb": 65_536,
            "time_minutes": 527_040,
            "retries": 0,
            "partition": "gpu-a100",
            "sbatch": {"mail-type": "END", "nice": 10},
        }
    )
    assert (top.poll_seconds, top.mem_gb, top.time_minutes, top.retries) == (
        3600.0,
        65_536.0,
        527_040,
        0,
    )


def test_per_component_resources_apply_to_that_component_only():
    spec = parse_spec(
        _grid(
            seeds=1,
            detectors=["hbos", "iforest"],
            slurm={
                "partition": "cpu",
                "mem_gb": 2,
                "detectors": {"iforest": {"partition": "gpu", "gres": "gpu:1"}},
            },
        )
    )
    by_detector = {c.detector.name: spec.slurm.resources(c) for c in spec.configs}
    assert (
        by_detector["hbos"]["partition"],
        by_detector["hbos"]["gres"],
        by_detector["hbos"]["mem_gb"],
    ) == ("cpu", None, 2.0)
    assert (
        by_detector["iforest"]["partition"],
        by_detector["iforest"]["gres"],
        by_detector["iforest"]["mem_gb"],
    ) == ("gpu", "gpu:1", 2.0)


def test_runs_per_job_and_time_limit_defaults():
    # 20,000 runs of 5 s: 60 a job (5 minutes); 200 runs of 0.3 s over 64 jobs: 4 a job
    assert runs_per_job(20000, 100, 5.0) == 60
    assert runs_per_job(200, 64, 0.3) == 4
    # a time limit of 10 minutes holds at most 5 minutes of 30-s runs
    assert runs_per_job(20000, 10, 30.0, time_minutes=10) == 10
    # the spec's timeout: 10 runs of at most 60 s, plus 5 minutes of start-up
    assert time_limit_minutes({}, 10, 60.0) == 15
    assert time_limit_minutes({}, 10, None) == 60


def test_slurm_config_file_wins_over_the_spec_section(tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_text('[slurm]\npartition = "long"\nretries = 0\n')
    cfg = load_slurm(path, SlurmConfig(partition="short", mem_gb=3.0))
    assert (cfg.partition, cfg.retries, cfg.mem_gb) == ("long", 0, 3.0)


def test_dry_run_says_slurm_and_jobs_wins_over_the_section(tmp_path, capsys, caplog):
    spec = write_spec(
        tmp_path,
        """
        seeds = 1
        strategies = ["naive"]
        scenarios = ["concept_incremental"]
        detectors = ["hbos"]
        [[datasets]]
        name = "synthetic"
        n_concepts = 2
        [slurm]
        partition = "cpu"
        max_jobs = 8
        """,
    )
    rc, out, _ = run_main(capsys, caplog, "run", spec, "--dry-run")
    assert rc == 0 and "SLURM (partition cpu, at most 8 jobs at once)" in out
    rc, out, _ = run_main(capsys, caplog, "run", spec, "--dry-run", "--jobs", "2")
    assert rc == 0 and "2 processes" in out and "SLURM" not in out


def test_failure_kind_tells_method_from_infrastructure():
    from clad.results.record import RunResult

    method = RunResult(
        "d", "s", "st", "det", 0, status="failed", error="Traceback ...\nRuntimeError: x"
    )
    infra = RunResult(
        "d",
        "s",
        "st",
        "det",
        0,
        status="failed",
        error="out of memory: ...",
        extras={"failure": "infrastructure"},
    )
    assert [failure_kind(r) for r in (method, infra, RunResult("d", "s", "st", "det", 0))] == [
        "method",
        "infrastructure",
        None,
    ]


def test_without_sbatch_the_error_says_where_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch, squeue, scancel here
    with pytest.raises(CladValueError, match="needs the sbatch command, which is not on the PATH"):
        run_spec(
            _grid(seeds=1),
            tmp_path / "out",
            execution=Execution.of(_grid(seeds=1), slurm=SlurmConfig()),
        )


# -- a real one-node cluster ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():
    from clad.engine.slurm_local import LocalSlurm, unavailable

    why = unavailable()
    if why:
        pytest.skip(f"no one-node SLURM cluster here: {why}")
    try:
        local = LocalSlurm().start()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"the one-node SLURM cluster did not start: {exc}")
    yield local
    local.stop()


def _submitted(out) -> dict:
    with ResultStore(out, create=False, readonly=True) as store:
        return store.get_meta(SUBMITTED_META, {}) or {}


def _submitted_yet(out) -> bool:
    """Whether a ``clad run`` computing into ``out`` has submitted its jobs (False while it is
    still creating the database)."""
    from clad.errors import DataError

    try:
        return bool(_submitted(out))
    except DataError:
        return False


def _stored_once(out, n: int) -> list:
    with ResultStore(out, create=False) as store:
        table = store.runs_table()
        runs = store.load_results()
    assert len(table) == n and table["run_id"].is_unique
    return runs


@pytest.mark.slow
def test_grid_on_slurm_same_R_as_jobs_1_and_nothing_submitted_twice(cluster, tmp_path):
    slurm = SlurmConfig(max_jobs=5, poll_seconds=1)
    grid = _grid(seeds=25)  # 2 detectors x 25 seeds: 50 runs, each its own computation
    on_slurm = run_spec(grid, tmp_path / "slurm", execution=Execution.of(grid, slurm=slurm))
    assert on_slurm.n_total == 50 and on_slurm.n_ok == 50 and on_slurm.n_computed == 50
    first = _submitted(tmp_path / "slurm")
    assert (
        first["runs"] == 50 and first["jobs"] == 5
    )  # 10 runs per job: 50 runs over at most 5 jobs
    local = run_spec(grid, tmp_path / "local", execution=Execution.of(grid, jobs=1))
    same_results(list(local.runs), list(on_slurm.runs))

    again = run_spec(
        grid, tmp_path / "slurm", execution=Execution.of(grid, slurm=slurm)
    )  # resubmitted: nothing left to submit
    assert again.n_computed == 0 and _submitted(tmp_path / "slurm") == first

    more = run_spec(
        _grid(seeds=30),
        tmp_path / "slurm",
        add=True,
        execution=Execution.of(_grid(seeds=30), slurm=slurm),
    )  # 10 runs added
    assert more.n_ok == 60 and more.n_computed == 10
    assert _submitted(tmp_path / "slurm")["runs"] == 60  # only those 10 were submitted
    runs = _stored_once(tmp_path / "slurm", 60)
    same_results(
        list(
            run_spec(
                _grid(seeds=30),
                tmp_path / "local",
                add=True,
                execution=Execution.of(_grid(seeds=30), jobs=1),
            ).runs
        ),
        runs,
    )
    with ResultStore(tmp_path / "slurm", create=False, readonly=True) as store:
        assert store.get_meta(JOBS_META) == {}  # every job settled
    assert not list((tmp_path / "slurm" / "slurm" / "results").glob("*.pkl"))  # every result folded


#: a torch grid whose runs train together as replicas: 3 seeds x 2 learning rates of one network with
#: fine_tune (one unit of 6, cut in two by replicas = 4) and with A-GEM (a gradient hook: one at a time)
TORCH_GRID = {
    "seeds": 3,
    "base_metrics": ["roc_auc"],
    "replicas": 4,
    "strategies": [{"name": "fine_tune"}, {"name": "agem", "buffer_size": 40}],
    "scenarios": ["concept_incremental"],
    "datasets": [
        {"name": "synthetic", "n_concepts": 2, "n_features": 4, "n_train": 120, "n_test": 80}
    ],
    "detectors": [
        {
            "name": "autoencoder",
            "hidden_sizes": [8, 3],
            "epochs": 2,
            "batch_size": 16,
            "learning_rate": lr,
        }
        for lr in (3e-3, 1e-2)
    ],
}


@pytest.mark.slow
def test_torch_replicas_on_slurm_same_R_and_units_as_jobs_1(cluster, tmp_path):
    """Replica units are the spec's on SLURM too: a job holds whole units and trains each unit's
    runs together, so R is bit-identical to --jobs 1 (replicas change float rounding: a job that
    trained them alone would give other R) and every run records the same unit."""
    pytest.importorskip("torch")
    slurm = SlurmConfig(
        max_jobs=3, runs_per_job=5, poll_seconds=1
    )  # 5 runs a job: units of 4 are not cut
    on_slurm = run_spec(
        TORCH_GRID, tmp_path / "slurm", execution=Execution.of(TORCH_GRID, slurm=slurm)
    )
    assert on_slurm.n_total == 12 and on_slurm.n_ok == 12
    local = run_spec(TORCH_GRID, tmp_path / "local", execution=Execution.of(TORCH_GRID, jobs=1))
    same_results(list(local.runs), list(on_slurm.runs))

    def units(results):
        return {r.run_id: (r.extras or {}).get("replicas") for r in results.runs}

    assert units(on_slurm) == units(local)
    sizes = sorted(u["size"] for u in units(on_slurm).values() if u)
    assert sizes == [
        2,
        2,
        4,
        4,
        4,
        4,
    ]  # fine_tune's 6 runs: a unit of 4 and one of 2; A-GEM's alone
    _stored_once(tmp_path / "slurm", 12)


def _computations(log: Path) -> collections.Counter:
    """How many complete computations each run (random_state) had: fits logged per job / concepts."""
    per_job = collections.Counter(tuple(line.split()) for line in log.read_text().splitlines())
    done = collections.Counter()
    for (state, _job), fits in per_job.items():
        done[state] += fits // 2  # two concepts: a complete computation fits twice in one job
    return done


@pytest.mark.slow
def test_detector_raising_is_a_method_failure_and_scancel_an_infrastructure_failure_retried(
    cluster, tmp_path, caplog
):
    import logging

    log = tmp_path / "fits.log"
    # a SeedLog run lasts 8 s: a job cancelled as its first fit starts cannot end its chunk in the 5 s
    # SLURM gives it before killing it (KillWait)
    grid = _grid(
        seeds=4,
        detectors=[
            {"name": "slurm_plugins:SeedLog", "log": str(log), "delay": 4.0},
            "plugins:FailingDetector",
        ],
    )
    slurm = SlurmConfig(runs_per_job=2, poll_seconds=1, retries=2)
    out = tmp_path / "out"
    results = {}

    def submit():
        results["first"] = run_spec(grid, out, execution=Execution.of(grid, slurm=slurm))

    with caplog.at_level(logging.INFO, logger="clad.engine.slurm"):
        thread = threading.Thread(target=submit, daemon=True)
        thread.start()
        started = out / "slurm" / "results"
        deadline = time.monotonic() + 240
        victim = None
        while victim is None and time.monotonic() < deadline:  # a job computing a SeedLog run
            for marker in started.glob("*.started") if started.is_dir() else ():
                job = marker.read_text().split()[0]
                if log.is_file() and any(
                    line.split()[1] == job for line in log.read_text().splitlines()
                ):
                    victim = job
                    break
            time.sleep(0.2)
        assert victim is not None, "no job started within 240 s"
        subprocess.run(["scancel", victim], check=True)
        thread.join(timeout=600)
    first = results["first"]
    assert (
        f"SLURM job {victim} was cancelled" in caplog.text and "submitting it again" in caplog.text
    )
    by_detector = collections.defaultdict(list)
    for r in first.runs:
        by_detector[r.detector].append(r)
    seedlog = next(v for k, v in by_detector.items() if "SeedLog" in k)
    failing = next(v for k, v in by_detector.items() if "Failing" in k)
    assert all(r.ok for r in seedlog) and len(seedlog) == 4
    assert all(
        failure_kind(r) == "method" and "this detector always fails" in r.error for r in failing
    )

    second = run_spec(
        grid, out, execution=Execution.of(grid, slurm=slurm)
    )  # one more run: the method failures are tried again, no other
    assert second.n_computed == sum(1 for r in failing if not r.shared_from)
    runs = _stored_once(out, 8)
    assert sum(r.ok for r in runs) == 4
    done = _computations(log)
    # every SeedLog run computed; at most the one the scancel cut short computed a second time
    assert len(done) == 4 and all(n >= 1 for n in done.values()) and sum(done.values()) <= 5


def _start_requeued_now(deadline: float, until) -> None:
    """A requeued job waits two minutes (a begin time); here it need not: start each such job now,
    until ``until()``."""
    while not until() and time.monotonic() < deadline:
        listed = subprocess.run(
            ["squeue", "-h", "-r", "-o", "%i|%T|%r"], capture_output=True, text=True
        ).stdout
        for line in listed.splitlines():
            job, state, reason = line.split("|")
            if (state, reason) == ("PENDING", "BeginTime"):
                subprocess.run(
                    ["scontrol", "update", f"JobId={job}", "StartTime=now"], capture_output=True
                )
        time.sleep(0.2)


@pytest.mark.slow
def test_a_requeued_job_starts_its_chunk_again_and_skips_the_runs_it_wrote(
    cluster, tmp_path, caplog
):
    import logging

    log = tmp_path / "fits.log"
    grid = _grid(
        seeds=3, detectors=[{"name": "slurm_plugins:SeedLog", "log": str(log), "delay": 2.0}]
    )
    out = tmp_path / "out"
    results = {}
    with caplog.at_level(logging.INFO, logger="clad.engine.slurm"):
        thread = threading.Thread(
            target=lambda: results.update(
                done=run_spec(
                    grid,
                    out,
                    execution=Execution.of(grid, slurm=SlurmConfig(runs_per_job=3, poll_seconds=1)),
                )
            ),
            daemon=True,
        )  # one job of three 4-s runs
        thread.start()
        deadline = time.monotonic() + 240
        while not (
            log.is_file() and len(log.read_text().splitlines()) >= 3
        ):  # the second run has begun
            assert time.monotonic() < deadline and thread.is_alive(), "no second run within 240 s"
            time.sleep(0.2)
        job = log.read_text().split()[1]
        subprocess.run(
            ["scontrol", "requeue", job], check=True
        )  # what a preemption with requeue does
        _start_requeued_now(time.monotonic() + 300, lambda: not thread.is_alive())
        thread.join(timeout=600)
    assert results["done"].n_ok == 3 and "submitting it again" not in caplog.text  # not a failure
    _stored_once(out, 3)
    lines = [line.split() for line in log.read_text().splitlines()]
    first = lines[0][0]
    assert len({state for state, _ in lines}) == 3
    assert (
        sum(state == first for state, _ in lines) == 2
    )  # the run written before the requeue: computed once
    assert {j for _, j in lines} == {job}  # the same job, started again


@pytest.mark.slow
def test_a_killed_submitter_is_reattached_to_its_jobs(cluster, tmp_path):
    log = tmp_path / "fits.log"
    spec = write_spec(
        tmp_path,
        f'''
        seeds = 6
        strategies = ["naive"]
        scenarios = ["concept_incremental"]
        [[detectors]]
        name = "slurm_plugins:SeedLog"
        log = "{log}"
        delay = 1.0
        [[datasets]]
        name = "synthetic"
        n_concepts = 2
        n_features = 2
        n_train = 40
        n_test = 30
        ''',
    )
    config = tmp_path / "cluster.toml"
    config.write_text("[slurm]\nruns_per_job = 2\npoll_seconds = 1\n")
    out = tmp_path / "out"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clad.cli",
            "run",
            str(spec),
            "--out",
            str(out),
            "--slurm",
            str(config),
            "--quiet",
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # jobs submitted and one run computing
            if log.is_file() and log.read_text().strip():
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
        else:
            pytest.fail("no run started within 240 s")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    submitted = _submitted(out)
    assert submitted["runs"] == 6 and submitted["jobs"] == 3

    again = run_spec(
        spec, out, execution=Execution.of(spec, slurm=parse_slurm({"poll_seconds": 1}))
    )
    assert again.n_ok == 6
    assert _submitted(out) == submitted  # reattached: not one job submitted again
    _stored_once(out, 6)
    done = _computations(log)
    assert len(done) == 6 and set(done.values()) == {1}  # each run computed once


@pytest.mark.slow
def test_a_job_over_its_memory_limit_is_recorded_with_the_reason(cluster, tmp_path):
    grid = _grid(seeds=1, detectors=[{"name": "slurm_plugins:MemoryHog", "mb": 1500, "hold": 4.0}])
    done = run_spec(
        grid,
        tmp_path / "out",
        execution=Execution.of(grid, slurm=SlurmConfig(mem_gb=0.75, poll_seconds=1)),
    )
    (run,) = done.runs
    assert failure_kind(run) == "infrastructure"
    assert run.extras["slurm"]["cause"] == "memory"
    assert run.error.startswith("out of memory: SLURM job") and "memory limit" in run.error
    assert "mem_gb" in run.error  # what to change
    assert (
        _submitted(tmp_path / "out")["jobs"] == 1
    )  # the same memory ends the same way: not retried


@pytest.mark.slow
@pytest.mark.parametrize("cancel", [True, False], ids=["cancel-on-exit", "left-to-reattach"])
def test_ctrl_c_cancels_the_jobs_or_says_how_to_reattach(cluster, tmp_path, cancel):
    spec = write_spec(
        tmp_path,
        """
        seeds = 4
        strategies = ["naive"]
        scenarios = ["concept_incremental"]
        [[detectors]]
        name = "slurm_plugins:SeedLog"
        delay = 5.0
        [[datasets]]
        name = "synthetic"
        n_concepts = 2
        """,
    )
    out = tmp_path / "out"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clad.cli",
            "run",
            str(spec),
            "--out",
            str(out),
            "--slurm",
            "--quiet",
            *(["--cancel-on-exit"] if cancel else []),
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not _submitted_yet(out):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.2)
    with ResultStore(out, create=False, readonly=True) as store:
        jobs = sorted({j.split("_")[0] for j in store.get_meta(JOBS_META)})
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    listed = subprocess.run(
        ["squeue", "-h", "-r", "-o", "%i|%T", "-j", ",".join(jobs)], capture_output=True, text=True
    ).stdout
    if cancel:
        assert (
            f"cancelled 4 SLURM jobs ({jobs[0]})" in err
        )  # one run a job: 4 runs over at most 64 jobs
        assert "PENDING" not in listed and "RUNNING" not in listed
    else:
        assert (
            "run the same clad run command again to reattach" in err and f"scancel {jobs[0]}" in err
        )
        assert "PENDING" in listed or "RUNNING" in listed
        subprocess.run(["scancel", *jobs], check=True)


# -- one compute path: the step cache and replica units on SLURM -------------------------------------
#: runs that share training steps: three strategies on one detector per seed (two sharing groups)
SHARED_GRID = _grid(
    seeds=2,
    detectors=[{"name": "iforest", "n_estimators": 10}],
    n_concepts=3,
    strategies=["naive", "cumulative", "window"],
)


@pytest.mark.slow
def test_a_slurm_grid_fits_the_steps_of_jobs_2_and_verifies_its_sharing(cluster, tmp_path):
    """SLURM jobs compute sharing groups through the step cache like every other back end: the same
    steps fitted as --jobs 2 (the console's end line), --verify-sharing passes, R as --jobs 1."""
    from clad.core.steps import format_work

    slurm = SlurmConfig(max_jobs=2, runs_per_job=3, poll_seconds=1)
    on_slurm = run_spec(
        SHARED_GRID, tmp_path / "s", execution=Execution.of(SHARED_GRID, slurm=slurm)
    )
    two = run_spec(SHARED_GRID, tmp_path / "two", execution=Execution.of(SHARED_GRID, jobs=2))
    one = run_spec(SHARED_GRID, tmp_path / "one", execution=Execution.of(SHARED_GRID, jobs=1))
    assert on_slurm.ok and on_slurm.n_total == 6
    assert on_slurm.work["fitted"] < on_slurm.work["steps"]  # steps were shared
    assert format_work(on_slurm.work) == format_work(two.work)
    same_results(list(one.runs), list(on_slurm.runs))
    verified = run_spec(
        SHARED_GRID,
        tmp_path / "v",
        execution=Execution.of(SHARED_GRID, slurm=slurm),
        sharing=Sharing.of(SHARED_GRID, verify=True),
    )
    assert verified.ok
    same_results(list(one.runs), list(verified.runs))


def test_a_job_started_again_computes_a_replica_unit_whole_and_keeps_the_missing_runs(tmp_path):
    """A job killed while writing its replica unit's results and started again trains the unit
    again with all its runs, writing only the missing results: R bit-identical."""
    pytest.importorskip("torch")
    import pickle

    from clad.engine.slurm_worker import result_path, run_chunk
    from clad.engine.tasks import plan_tasks

    configs = parse_spec(TORCH_GRID).configs
    tasks = [t for t in plan_tasks(configs, None, 1, 4) if t.together and len(t.runs) == 4]
    first = run_chunk(tasks, str(tmp_path), None, 1)
    assert first == {"computed": 4, "skipped": 0}
    before = {
        c.run_id: pickle.loads(result_path(tmp_path, c.run_id).read_bytes())[0]
        for c in tasks[0].runs
    }
    for cfg in tasks[0].runs[1:3]:  # two results were not written when the job was killed
        result_path(tmp_path, cfg.run_id).unlink()
    again = run_chunk(tasks, str(tmp_path), None, 1)
    assert again == {"computed": 2, "skipped": 2}
    after = [pickle.loads(result_path(tmp_path, c.run_id).read_bytes())[0] for c in tasks[0].runs]
    same_results(list(before.values()), after)
    assert [r.extras["replicas"]["size"] for r in after] == [4, 4, 4, 4]


@pytest.mark.slow
def test_a_replica_unit_killed_on_slurm_and_resumed_gives_the_uninterrupted_R(cluster, tmp_path):
    """A job cancelled while it trains a replica unit is submitted again and trains the whole unit;
    runs of a unit computed again later (two of its four, marked stale) are trained with all four
    again: R bit-identical to an uninterrupted --jobs 1 grid, every unit the same."""
    pytest.importorskip("torch")
    slurm = SlurmConfig(max_jobs=3, runs_per_job=5, poll_seconds=1, retries=2)
    ex = Execution.of(TORCH_GRID, slurm=slurm)
    out = tmp_path / "slurm"
    results = {}
    thread = threading.Thread(
        target=lambda: results.update(first=run_spec(TORCH_GRID, out, execution=ex)), daemon=True
    )
    thread.start()
    started, deadline, victim = out / "slurm" / "results", time.monotonic() + 240, None
    while victim is None and time.monotonic() < deadline:  # a job training a unit of 4
        jobs = collections.Counter(
            m.read_text().split()[0]
            for m in (started.glob("*.started") if started.is_dir() else ())
        )
        victim = next((j for j, n in jobs.items() if n >= 4), None)
        time.sleep(0.1)
    assert victim is not None, "no unit started within 240 s"
    subprocess.run(["scancel", victim], check=True)
    thread.join(timeout=600)
    local = run_spec(TORCH_GRID, tmp_path / "local", execution=Execution.of(TORCH_GRID, jobs=1))
    same_results(list(local.runs), list(results["first"].runs))
    unit = [
        r.run_id for r in local.runs if ((r.extras or {}).get("replicas") or {}).get("size") == 4
    ]
    with ResultStore(out, create=False, readonly=False) as store:
        store.invalidate(unit[1:3])
    resumed = run_spec(TORCH_GRID, out, execution=ex)
    assert resumed.n_computed == 2
    same_results(list(local.runs), list(resumed.runs))

    def units(done):
        return {r.run_id: (r.extras or {}).get("replicas") for r in done.runs}

    assert units(resumed) == units(local)
