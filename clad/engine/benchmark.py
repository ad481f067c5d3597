"""A whole benchmark as a library call: a spec in, a results folder out.

:func:`run_spec` is what ``clad run SPEC --out DIR`` does, without the command line: it validates
the spec, opens (or creates) ``DIR/results.sqlite``, skips the runs already finished there
(resume), computes the others with the chosen executor, then writes ``DIR/results.json`` and the
summaries (``summary.csv``, ``summary.md``). It prints nothing: what happens is told to
``on_event`` (a :class:`GridStarted`, then a :class:`~clad.engine.tasks.RunEvent` for each run
started, each evaluated step of a sequential run and each run finished, then a
:class:`GridFinished`), which is where a progress display plugs in
(:class:`clad.engine.progress.ProgressEvents`).

>>> import tempfile
>>> from clad.engine.spec import parse_spec
>>> spec = parse_spec({"seeds": 1, "strategies": ["naive"], "scenarios": ["concept_incremental"],
...                    "detectors": ["hbos"], "datasets": [{"name": "synthetic", "n_concepts": 2,
...                    "n_features": 2, "n_train": 40, "n_test": 30}]})
>>> out = tempfile.mkdtemp()
>>> first = run_spec(spec, out)
>>> first.n_ok, first.n_failed, first.n_computed, first.results_json.name
(1, 0, 1, 'results.json')
>>> run_spec(spec, out).n_computed  # resumed: nothing left to compute
0
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .._version import __version__
from ..results.record import RunResult
from ..errors import SpecError
from .folder import FolderLock, check_owner
from .phases import Phase, evaluation_phase, tuning_record
from .retire import retire_stale
from .settings import Execution, spec_of
from .sharing import Sharing, release_caches
from ..core.steps import grid_work
from .spec import Spec

__all__ = [
    "run_spec",
    "BenchmarkResult",
    "GridStarted",
    "GridFinished",
    "ResultsWriteError",
    "remove_database",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GridStarted:
    """Told to ``on_event`` once the store is open: ``total`` runs in the spec, of which
    ``finished_before`` were already finished in ``database`` (resumed)."""

    name: str
    total: int
    finished_before: int
    database: Path
    kind: str = "grid_started"
    #: seconds earlier invocations spent on this grid, and how many of its finished runs recorded
    #: warnings (a resumed grid's progress continues from them)
    elapsed_before: float = 0.0
    flagged_before: int = 0


@dataclass(frozen=True)
class GridFinished:
    """Told to ``on_event`` when no run is computing any more (all done, interrupted or failed)."""

    interrupted: bool
    kind: str = "grid_finished"


@dataclass(frozen=True)
class BenchmarkResult:
    """What :func:`run_spec` did: every run of the spec found in the database (this call's and
    earlier ones'), counts, the files written and the end-of-grid summary table."""

    name: str
    runs: tuple[RunResult, ...]
    n_total: int
    n_ok: int
    n_failed: int
    n_resumed: int
    n_computed: int
    out: Path
    database: Path
    results_json: Path
    summary: Any
    interrupted: bool = False
    n_shared: int = 0
    #: the tuning runs of a spec's ``[tuning]`` section (counted in ``n_computed``, ``n_resumed``
    #: and ``n_shared`` too; not in ``runs`` nor ``n_total``, which are the evaluation runs)
    n_tuning: int = 0
    #: the reference runs of the spec's ``references`` found in the database, and how many this call computed
    references: tuple[RunResult, ...] = ()
    n_references_computed: int = 0
    #: the tuning runs finished in the database (kept, and reused by the next run of the spec)
    n_tuning_ok: int = 0
    #: what the evaluation runs contain and what was computed (:func:`clad.core.steps.grid_work`):
    #: ``runs``, ``steps``, ``fitted``, ``passes``, ``scored``, ``cache_bytes``
    work: Mapping[str, int] | None = None

    @property
    def n_kept(self) -> int:
        """Every finished run of the spec in the database: evaluation, tuning and reference runs."""
        return self.n_ok + self.n_tuning_ok + sum(r.ok for r in self.references)

    @property
    def ok(self) -> bool:
        """Every run of the spec finished without error and nothing was interrupted."""
        return not self.interrupted and self.n_failed == 0 and self.n_ok == self.n_total


class ResultsWriteError(OSError):
    """Writing the results failed (disk full, database unwritable): runs committed before are
    kept in ``database``; run the same benchmark again to resume."""

    def __init__(self, out: Path, database: Path, cause: BaseException, lost: bool = False):
        self.out, self.database, self.cause = Path(out), Path(database), cause
        if lost:  # ``lost``: the database was deleted or replaced while the grid ran
            super().__init__(
                f"the results database {database} was deleted, moved or replaced while the grid ran "
                f"(its folder {out} removed?): the runs of this invocation went into a file no one can "
                "read and are lost; nothing more is written there; run the same command again to "
                "compute them"
            )
            return
        super().__init__(
            f"writing the results in {out} failed ({type(cause).__name__}: {cause}); runs finished "
            f"before this are kept in {database}; fix the cause and run the same command again to "
            "resume"
        )


def remove_database(db: Path) -> None:
    """Delete a results database and its SQLite side files (``--fresh``)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = db.with_name(db.name + suffix)
        if p.exists():
            p.unlink()


def run_spec(
    spec: Spec | str | os.PathLike | Mapping,
    out: str | os.PathLike,
    *,
    execution: Execution | None = None,
    sharing: Sharing | None = None,
    fresh: bool = False,
    add: bool = False,
    on_event: Callable[[Any], None] | None = None,
) -> BenchmarkResult:
    """Run every configuration of ``spec`` into the results folder ``out``, resuming.

    Parameters
    ----------
    spec
        A :class:`~clad.engine.spec.Spec`, a path to a TOML spec file or a dict (the parsed TOML).
    out
        The results folder.
    execution
        Where the runs are computed (:class:`~clad.engine.settings.Execution`: worker processes,
        Dask, SLURM, threads per run, the time limit, replicas); default: the spec's keys
        (``Execution.of(spec)``).
    sharing
        What is shared (:class:`~clad.engine.sharing.Sharing`): runs that are one computation
        (:mod:`clad.engine.identity`) are computed once and the others recorded with
        ``shared_from`` naming the run that computed them, and training steps whose keys coincide
        are fitted and scored once (:mod:`clad.engine.sharing`; mode ``"verify"`` computes every
        step and compares it with the shared result, a difference failing the run); default: the
        spec's ``share`` key (``Sharing.of(spec)``).
    fresh
        Delete the folder's database first.
    add
        Add this spec's runs to a folder holding another spec's (results.json then holds every
        run of the database); without it (or ``fresh``) another spec's folder is refused
        (:class:`~clad.engine.folder.FolderInUse`).
    on_event
        Receives the events described in the module docstring; it must only observe.

    Runs recorded as finished in ``out/results.sqlite`` are not computed again; failed runs are
    tried again. A Ctrl-C (:class:`KeyboardInterrupt`) while runs compute stops the workers and
    returns with ``interrupted=True``; what finished is kept and written. A failure to write the
    results raises :class:`ResultsWriteError`. ``BenchmarkResult.work`` says how many training
    steps and scoring passes the runs contain and how many were computed.
    """
    from .executors import check_execution
    from .forkserver import prestart_workers
    from ..results.reading import DEFAULT_NAME
    from ..results.store import DestinationError, writable_destination

    spec = spec_of(spec)
    execution = execution if execution is not None else Execution.of(spec)
    sharing = sharing if sharing is not None else Sharing.of(spec)
    check_execution(execution.jobs, execution.threads, execution.timeout)
    # the data built once per dataset; devices where runs compute here
    from .preflight import preflight_problems

    found = preflight_problems(
        spec.configs, here=execution.dask is None and execution.slurm is None
    )
    if found:
        raise SpecError(found, source=spec.name)
    if execution.parallel:  # its imports overlap with opening the folder and planning the grid
        prestart_workers(sorted({c.detector.name for c in spec.configs}))
    tell = on_event or (lambda event: None)
    for msg in spec.skipped:
        log.info("skipped: %s", msg)
    if len({c.run_id for c in spec.configs}) != len(spec.configs):
        log.warning("the spec lists the same run more than once; each is run once")
    out = Path(out)
    db = out / DEFAULT_NAME
    # out created, or a ResultsWriteError naming the path and why (a file of that name, a
    # read-only or full file system)
    try:
        writable_destination(out, "folder", "--out")
    except DestinationError as exc:
        raise ResultsWriteError(out, db, exc) from exc
    lock = FolderLock(out, spec.name).acquire()  # one process writes a folder
    try:
        if fresh:
            remove_database(db)
        return _run_locked(spec, out, db, execution, sharing, add, tell, on_event)
    finally:
        release_caches()  # the fitted states this process kept for the grid
        lock.release()


@dataclass
class _Computed:
    """What the computing part of a grid did: its phases, its evaluation configurations, its
    references and whether it was interrupted."""

    phases: list
    configs: list
    refs: Any
    refs_computed: int = 0
    interrupted: bool = False

    def tuning_ids(self, tuned: bool) -> set[str]:
        return {c.run_id for c in self.phases[0].configs} if tuned and self.phases else set()


def _run_locked(
    spec, out, db, execution: Execution, sharing: Sharing, add, tell, on_event
) -> BenchmarkResult:
    from ..results.record import write_results
    from ..results.store import ResultStore, damage_of
    from .summary import write_summaries

    try:
        with ResultStore(db) as store:
            check_owner(store, spec, out, add)
            store.set_meta("spec", spec.raw)
            store.set_meta("spec_text", spec.text)
            store.set_meta("clad_version", __version__)
            done = _compute(store, spec, db, execution, sharing, tell, on_event)
            results, references, everything = _settle(store, spec, out, db, done)
            tuning_ok = len(store.finished_ids() & done.tuning_ids(spec.tuning is not None))
        write_results(out / "results.json", everything, spec=spec.raw, references=references)
        table = write_summaries(out, everything, title=spec.name)
    except ResultsWriteError:
        raise
    except (sqlite3.Error, OSError) as exc:
        damage = damage_of(db, exc)
        if damage is not None:  # the file is damaged: running again would fail the same way
            raise damage from None
        # the disk (or the database file) failed: what was committed before is kept, nothing is half-written
        raise ResultsWriteError(out, db, exc) from exc
    n_ok = sum(r.ok for r in results)
    phases = done.phases
    return BenchmarkResult(
        name=spec.name,
        runs=tuple(results),
        n_total=len(done.configs),
        n_ok=n_ok,
        n_failed=len(results) - n_ok,
        n_resumed=sum(p.resumed for p in phases),
        n_computed=sum(p.computed for p in phases),
        n_shared=sum(p.shared for p in phases),
        out=out,
        database=db,
        results_json=out / "results.json",
        summary=table,
        interrupted=done.interrupted,
        n_tuning=len(phases[0].configs) if spec.tuning is not None and phases else 0,
        references=references,
        n_references_computed=done.refs_computed,
        n_tuning_ok=tuning_ok,
        work=grid_work(results),
    )


def _compute(store, spec, db, execution: Execution, sharing: Sharing, tell, on_event) -> _Computed:
    """The grid's phases (tuning runs, then evaluation runs) and references computed into
    ``store``, the events told."""
    from .references import ReferencePlan, compute_references, reference_plan
    from .tasks import RunEvent

    grid = list({c.run_id: c for c in spec.configs}.values())
    plan, share = spec.tuning, sharing.runs
    done = _Computed([], grid, ReferencePlan())
    phases = done.phases
    on_step = None
    if on_event is not None and execution.dask is None:  # worker runs' steps come back as events

        def on_step(cfg, step, index):
            tell(RunEvent("step", cfg, step=step, index=index))

    def run(phase: Phase) -> bool:
        return phase.compute(store, execution, sharing, on_step, tell)

    try:
        if plan is None:
            phases.append(Phase(store, grid, share))
        else:  # [tuning]: the tuning runs first, then the evaluation runs with the chosen parameters
            phases.append(Phase(store, plan.tuning_configs(grid), share))
            if not phases[0].todo:  # all finished before: the choice is known now
                done.configs = evaluation_phase(store, plan, grid, phases, share)
        waiting = len(grid) if len(phases) == 1 and plan is not None else 0
        total = sum(len(p.configs) for p in phases) + waiting
        elapsed_before = float(store.get_meta("elapsed_seconds", 0.0) or 0.0)
        session_start = time.monotonic()
        before = total - waiting - sum(p.pending for p in phases)
        flagged = len(store.flagged_ids() & {c.run_id for c in grid})  # warned before
        tell(
            GridStarted(
                spec.name, total, before, db, elapsed_before=elapsed_before, flagged_before=flagged
            )
        )
        for p in phases:
            done.interrupted = done.interrupted or run(p)
        if waiting and not done.interrupted:
            done.configs = evaluation_phase(store, plan, grid, phases, share)
            done.interrupted = run(phases[-1])
        if spec.references and not done.interrupted:  # once per dataset x detector x seed
            done.refs = reference_plan(done.configs, spec.references)
            done.refs_computed, done.interrupted = compute_references(store, done.refs, execution)
    except KeyboardInterrupt:
        done.interrupted = True
    finally:
        if "session_start" in locals():  # the time this grid took, over every invocation
            store.set_meta("elapsed_seconds", elapsed_before + time.monotonic() - session_start)
        tell(GridFinished(done.interrupted))
    return done


def _settle(store, spec, out, db, done: _Computed):
    """Retire what the computation no longer holds (unless interrupted), attach the references:
    the spec's results in its order, the references, and every run results.json lists."""
    from .references import attach_references

    ids = [c.run_id for c in done.configs]
    if not done.interrupted:  # the whole computation is known: what it no longer holds is retired
        runs = set(ids) | done.tuning_ids(spec.tuning is not None)
        refs = {c.run_id for c in done.refs.configs}
        retire_stale(store, spec, runs, refs, with_references=bool(spec.references))
    if not store.still_there():  # the folder was deleted or replaced under the run
        raise ResultsWriteError(out, db, FileNotFoundError(db), lost=True)
    attach_references(store, done.refs, ids)  # every finished run's metrics against its references
    results = store.load_results(ids)  # in the spec's order
    references = tuple(store.load_references())
    # results.json, the database and the report describe the same runs (other specs' after --add);
    # tuning runs stay in the database only
    everything = results + [
        r for r in store.load_results() if r.run_id not in set(ids) and not tuning_record(r)
    ]
    return results, references, everything
