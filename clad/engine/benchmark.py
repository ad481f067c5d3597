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

import dataclasses
import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .._version import __version__
from ..results.record import RunResult
from ..errors import CladTypeError, SpecError
from .config import RunConfig, canonical
from .folder import FolderInUse, FolderLock
from .settings import Execution
from .identity import changed_inputs, code_inputs, computation_keys
from .result_key import with_result_key
from .sharing import Sharing, release_caches
from ..core.steps import grid_work
from .spec import Spec, load_spec, parse_spec

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


def _as_spec(spec: Spec | str | os.PathLike | Mapping) -> Spec:
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, (str, os.PathLike)):
        return load_spec(spec)
    if isinstance(spec, Mapping):
        return parse_spec(dict(spec))
    raise CladTypeError(f"spec={spec!r}; expected a Spec, a path to a TOML spec file or a dict")


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
    from ..results.store import DEFAULT_NAME

    spec = _as_spec(spec)
    execution = execution if execution is not None else Execution.of(spec)
    sharing = sharing if sharing is not None else Sharing.of(spec)
    check_execution(execution.jobs, execution.threads, execution.timeout)
    from .preflight import (
        preflight_problems,
    )  # the data built once per dataset; devices where runs compute here

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
    _writable_folder(out, db)
    lock = FolderLock(out, spec.name).acquire()  # one process writes a folder
    try:
        if fresh:
            remove_database(db)
        return _run_locked(spec, out, db, execution, sharing, add, tell, on_event)
    finally:
        release_caches()  # the fitted states this process kept for the grid
        lock.release()


def _run_locked(
    spec, out, db, execution: Execution, sharing: Sharing, add, tell, on_event
) -> BenchmarkResult:
    from ..results.record import write_results
    from .tasks import RunEvent
    from .references import ReferencePlan, attach_references, compute_references, reference_plan
    from ..results.store import ResultStore, damage_of
    from .summary import write_summaries

    grid = list({c.run_id: c for c in spec.configs}.values())
    plan, share = spec.tuning, sharing.runs
    interrupted = False
    phases: list[_Phase] = []
    refs, refs_computed = ReferencePlan(), 0
    try:
        with ResultStore(db) as store:
            _check_owner(store, spec, out, add)
            store.set_meta("spec", spec.raw)
            store.set_meta("spec_text", spec.text)
            store.set_meta("clad_version", __version__)
            on_step = None
            if (
                on_event is not None and execution.dask is None
            ):  # worker runs' steps come back as events

                def on_step(cfg, step, index):
                    tell(RunEvent("step", cfg, step=step, index=index))

            run = _Phase.runner(store, execution, on_step, tell, sharing)
            try:
                configs = grid  # a tuned grid's evaluation runs are known once its tuning runs are
                if plan is None:
                    phases.append(_Phase(store, grid, share))
                else:  # [tuning]: the tuning runs first, then the evaluation runs with the chosen parameters
                    phases.append(_Phase(store, plan.tuning_configs(grid), share))
                    if not phases[0].todo:  # all finished before: the choice is known now
                        configs = _evaluation_phase(store, plan, grid, phases, share)
                waiting = len(grid) if len(phases) == 1 and plan is not None else 0
                total = sum(len(p.configs) for p in phases) + waiting
                elapsed_before = float(store.get_meta("elapsed_seconds", 0.0) or 0.0)
                session_start = time.monotonic()
                tell(
                    GridStarted(
                        spec.name,
                        total,
                        total - waiting - sum(p.pending for p in phases),
                        db,
                        elapsed_before=elapsed_before,
                        flagged_before=_flagged(store, grid),
                    )
                )
                for p in phases:
                    interrupted = interrupted or run(p)
                if waiting and not interrupted:
                    configs = _evaluation_phase(store, plan, grid, phases, share)
                    interrupted = run(phases[-1])
                if (
                    spec.references and not interrupted
                ):  # once per dataset x detector x seed of the runs
                    refs = reference_plan(configs, spec.references)
                    refs_computed, interrupted = compute_references(store, refs, execution)
            except KeyboardInterrupt:
                interrupted = True
            finally:
                if "session_start" in locals():  # the time this grid took, over every invocation
                    store.set_meta(
                        "elapsed_seconds", elapsed_before + time.monotonic() - session_start
                    )
                tell(GridFinished(interrupted))
            resumed = sum(p.resumed for p in phases)
            computed, shared = sum(p.computed for p in phases), sum(p.shared for p in phases)
            ids = [c.run_id for c in configs]
            tuning_ok = (
                len(store.finished_ids() & {c.run_id for c in phases[0].configs})
                if plan is not None and phases
                else 0
            )
            if (
                not interrupted
            ):  # the whole computation is known: what it no longer holds is retired
                tuning_ids = (
                    [c.run_id for c in phases[0].configs] if plan is not None and phases else []
                )
                retire_stale(
                    store,
                    spec,
                    set(ids) | set(tuning_ids),
                    {c.run_id for c in refs.configs},
                    with_references=bool(spec.references),
                )
            if not store.still_there():  # the folder was deleted or replaced under the run
                raise ResultsWriteError(out, db, FileNotFoundError(db), lost=True)
            attach_references(
                store, refs, ids
            )  # every finished run's metrics against its references
            results = store.load_results(ids)  # in the spec's order
            references = tuple(store.load_references())
            # results.json, the database and the report describe the same runs (other specs' after --add);
            # tuning runs stay in the database only
            everything = results + [
                r
                for r in store.load_results()
                if r.run_id not in set(ids) and not _tuning_record(r)
            ]
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
    return BenchmarkResult(
        name=spec.name,
        runs=tuple(results),
        n_total=len(configs),
        n_ok=n_ok,
        n_failed=len(results) - n_ok,
        n_resumed=resumed,
        n_computed=computed,
        n_shared=shared,
        out=out,
        database=db,
        results_json=out / "results.json",
        summary=table,
        interrupted=interrupted,
        n_tuning=len(phases[0].configs) if plan is not None and phases else 0,
        references=references,
        n_references_computed=refs_computed,
        n_tuning_ok=tuning_ok,
        work=grid_work(results),
    )


class _Phase:
    """Runs computed together into a store: resumed, shared and computed as one grid. ``records``
    (``{run_id: dict}``) go into the matching results' ``extras["tuning"]`` when they are written."""

    def __init__(
        self,
        store,
        configs: list[RunConfig],
        share: bool,
        records: Mapping[str, dict] | None = None,
    ):
        self.configs, self.records = configs, dict(records or {})
        self.keys = computation_keys(configs, share)
        self.groups = _groups(configs, self.keys)
        finished = _fresh_finished(store, configs)
        self.resumed = len(finished)
        self.shared = _fill_shared(store, self.groups, finished, self.decorate)
        self.todo = _todo(self.groups, finished)
        #: the runs the uninterrupted grid computes (its replica units are cut from them)
        self.computing = _todo(self.groups, set())
        todo_ids = {c.run_id for c in self.todo}
        #: runs still to record: each run to compute and the runs that will share its result
        self.pending = sum(
            len([c for c in g if c.run_id not in finished])
            for g in self.groups.values()
            if any(c.run_id in todo_ids for c in g)
        )
        self.computed = 0
        if finished:
            log.info(
                "resuming: %d of %d runs already finished in %s; %d to run",
                len(finished),
                len(configs),
                store.path,
                len(self.todo),
            )

    def decorate(self, result: RunResult) -> RunResult:
        rec = self.records.get(result.run_id)
        if rec is None:
            return result
        return dataclasses.replace(result, extras={**(result.extras or {}), "tuning": rec})

    def record(self, store, ev) -> list:
        """Write a finished run's result (stamped with its result key, its code inputs and its
        tuning record) and the records of the runs that share it: the result written and
        ``[(copy, config)]``."""
        result = dataclasses.replace(
            ev.result, inputs={**ev.result.inputs, **code_inputs(ev.config)}
        )
        result = self.decorate(with_result_key(result))
        store.write(result, ev.started, ev.finished)
        self.computed += 1
        copies: list = []
        self.shared += _write_shared(
            store,
            result,
            self.groups[self.keys[ev.config.run_id]],
            decorate=self.decorate,
            on_copy=lambda c, cfg: copies.append((c, cfg)),
        )
        return result, copies

    @staticmethod
    def runner(
        store, execution: Execution, on_step, tell, sharing=None
    ) -> Callable[["_Phase"], bool]:
        """A function computing a phase's runs (True when interrupted)."""
        from .executors import execute_grid
        from .tasks import RunEvent

        def run(phase: _Phase) -> bool:
            if not phase.todo:
                return False
            events = execute_grid(
                phase.todo,
                execution,
                sharing=sharing,
                on_step=on_step,
                store=store,
                whole=phase.computing,
            )
            try:
                for ev in events:
                    if ev.kind == "step":  # a worker's run evaluated a concept step
                        tell(ev)
                        continue
                    if ev.kind == "started":
                        labels, config = _labels(ev.config), ev.config.to_dict()
                        store.mark_started(ev.config.run_id, labels, config, ev.started)
                        tell(ev)
                        continue
                    result, copies = phase.record(store, ev)
                    tell(dataclasses.replace(ev, result=result))
                    for copy, cfg in copies:  # logged, counted
                        tell(RunEvent("shared", cfg, result=copy))
            except KeyboardInterrupt:
                return True
            finally:
                events.close()  # stops the workers
            return False

        return run


def _evaluation_phase(
    store, plan, grid: list[RunConfig], phases: list["_Phase"], share: bool
) -> list[RunConfig]:
    """Append to ``phases`` (whose first is the tuning runs') the evaluation runs with their chosen
    parameters; return every evaluation configuration (those without a choice recorded as failed)."""
    configs, records, unscored = _evaluation_runs(store, plan, grid, phases[0].configs)
    phases.append(_Phase(store, [c for c in configs if c.run_id not in unscored], share, records))
    return configs


def _evaluation_runs(
    store, plan, grid: list[RunConfig], tuning: list[RunConfig]
) -> tuple[list[RunConfig], dict[str, dict], set[str]]:
    """The evaluation runs of a tuned grid with their parameters chosen from the tuning runs in
    ``store``, ``{run_id: tuning record}`` and the ids of those without a choice: an evaluation
    run none of whose candidates has a score is recorded as failed, naming why, and not run."""
    from .run import failed_result

    results = {r.run_id: r for r in store.load_results([c.run_id for c in tuning])}
    configs, records, unscored = [], {}, set()
    for cfg in grid:
        chosen, rec = plan.choose(cfg, results)
        if chosen is None:
            causes = sorted(
                {
                    r.cause
                    for r in results.values()
                    if r.run_id in {c["run_id"] for c in rec["candidates"]} and r.cause
                }
                or {"no candidate gave a defined objective"}
            )
            msg = (
                f"TuningError: no tuning run of {cfg.describe()} gave a score for {plan.objective} on "
                f"{plan.base_metric}; " + "; ".join(c.splitlines()[-1] for c in causes)
            )
            failed = dataclasses.replace(failed_result(cfg, msg), extras={"tuning": rec})
            store.write(failed)
            chosen = cfg
            unscored.add(cfg.run_id)
        configs.append(chosen)
        records[chosen.run_id] = rec
    return list({c.run_id: c for c in configs}.values()), records, unscored


def _tuning_record(result: RunResult) -> bool:
    """A tuning run's record, or an evaluation run that failed for want of a choice (the database
    keeps them; results.json lists the spec's evaluation runs)."""
    from ..results.record import is_tuning_run

    view = (result.config or {}).get("data_view") or {}
    no_choice = (
        not result.ok and ((result.extras or {}).get("tuning") or {}).get("chosen", 0) is None
    )
    return is_tuning_run(result.config) or (view.get("part") == "evaluate" and no_choice)


#: the ``meta`` key prefix of a spec's computation (the run ids it holds), one key per spec of the folder
COMPUTATION_KEY = "computation:"


def retire_stale(
    store, spec: Spec, runs: set[str], references: set[str], with_references: bool = True
) -> list[str]:
    """Retire the records of ``store`` that the computation of ``spec`` no longer holds (``runs``:
    its tuning and evaluation run ids; ``references``: its reference run ids): an evaluation run
    whose tuning now chooses other parameters after an input changed, the reference of a replaced
    run, a run of an earlier computation. In a folder of one spec every other record is retired; in
    a folder shared with ``--add`` only the records this spec's earlier computation held and no
    other spec's does. Each is said on the console (what, and what replaced it); returns the
    messages."""
    import hashlib

    key = COMPUTATION_KEY + hashlib.sha256(canonical(spec.raw).encode()).hexdigest()[:16]
    recorded = store.meta_like(COMPUTATION_KEY)
    if store.get_meta("specs_added"):
        before = recorded.get(key) or {}
        others = [v for k, v in recorded.items() if k != key]
        kept_by_others = {
            r for v in others for r in (v.get("runs") or []) + (v.get("references") or [])
        }
        old_runs = set(before.get("runs") or []) - runs - kept_by_others
        old_refs = set(before.get("references") or []) - references - kept_by_others
    else:
        old_runs = set(store.status()) - runs
        old_refs = (
            {r.run_id for r in store.load_references()} - references if with_references else set()
        )
    messages = []
    if old_runs or old_refs:
        now = {_position(r): r for r in store.load_results(sorted(runs))}
        for r in store.load_results(sorted(old_runs), include_unfinished=True):
            new = now.get(_position(r))
            messages.append(_retired_message(r, new))
        now_refs = {
            (r.strategy, r.dataset, r.seed): r
            for r in store.load_references()
            if r.run_id in references
        }
        for r in store.load_references():
            if r.run_id in old_refs:
                new = now_refs.get((r.strategy, r.dataset, r.seed))
                messages.append(
                    f"{r.strategy} reference {r.dataset} / {r.detector} / seed {r.seed} (run {r.run_id}) "
                    + (
                        f"replaced by run {new.run_id}: the runs it serves changed"
                        if new is not None
                        else "retired: no run of the spec needs it any more"
                    )
                )
        store.retire(old_runs, old_refs)
        for msg in messages:
            log.warning("%s", msg)
    store.set_meta(key, {"runs": sorted(runs), "references": sorted(references)})
    return messages


def _position(r: RunResult) -> tuple:
    """Where a run sits in its spec's grid (its labels and seed), whatever parameters its tuning chose."""
    view = ((r.config or {}).get("data_view") or {}).get("part")
    return (r.dataset, r.scenario, r.strategy, r.detector, r.seed, view)


def _retired_message(old: RunResult, new: RunResult | None) -> str:
    what = f"{old.dataset} / {old.scenario} / {old.strategy} / {old.detector} / seed {old.seed} (run {old.run_id})"
    if new is None:
        return f"{what} retired: it is no longer part of this spec's computation"

    def chosen(r: RunResult) -> str | None:
        params = ((r.extras or {}).get("tuning") or {}).get("chosen_params")
        if params is None:
            return None
        shown = [
            f"{k}={v!r}"
            for part in ("strategy", "detector")
            for k, v in sorted((params.get(part) or {}).items())
        ]
        return ", ".join(shown) or "the defaults"

    if chosen(old) is not None or chosen(new) is not None:
        return (
            f"{what} replaced by run {new.run_id}: after an input changed, the tuning chose "
            f"{chosen(new)} instead of {chosen(old)}"
        )
    return f"{what} replaced by run {new.run_id}: its configuration or inputs changed"


def _check_owner(store, spec: Spec, out: Path, add: bool) -> None:
    """Refuse to write ``spec``'s runs into a folder holding another spec's runs, unless ``add``."""
    recorded = store.get_meta("spec")
    known = [canonical(s) for s in [recorded, *store.get_meta("specs_added", [])] if s is not None]
    if recorded is None or not store.count() or canonical(spec.raw) in known:
        return
    if add:
        store.set_meta("specs_added", [*store.get_meta("specs_added", []), recorded])
        return
    name = recorded.get("name", "?") if isinstance(recorded, dict) else "?"
    differs = spec_differences(recorded, spec.raw)
    shown = "; ".join(differs[:5]) + (f"; and {len(differs) - 5} more" if len(differs) > 5 else "")
    raise FolderInUse(
        f"{str(out)!r} holds the results of another spec ({name!r}); this is spec {spec.name!r}"
        f"{f' ({spec.source})' if spec.source else ''}, which differs in: {shown}; use another "
        "--out folder, --fresh to replace those results, or --add to add this spec's runs to them"
    )


def spec_differences(old: Any, new: Any, where: str = "") -> list[str]:
    """Where spec ``new`` differs from ``old`` (both as parsed TOML), as ``key: old -> new`` lines.

    >>> spec_differences({"seeds": 2, "detectors": [{"name": "iforest", "n_estimators": 10}]},
    ...                  {"seeds": 2, "detectors": [{"name": "iforest", "n_estimators": 20}]})
    ['detectors[0].n_estimators: 10 -> 20']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            key = f"{where}.{k}" if where else str(k)
            if k not in new:
                out.append(f"{key}: {_short(old[k])} -> (removed)")
            elif k not in old:
                out.append(f"{key}: (absent) -> {_short(new[k])}")
            else:
                out += spec_differences(old[k], new[k], key)
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            d
            for i, (a, b) in enumerate(zip(old, new))
            for d in spec_differences(a, b, f"{where}[{i}]")
        ]
    return (
        []
        if canonical(old) == canonical(new)
        else [f"{where or 'the spec'}: {_short(old)} -> {_short(new)}"]
    )


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _fresh_finished(store, configs: list[RunConfig]) -> set[str]:
    """The runs of ``configs`` finished in ``store`` whose R cells are all there and whose inputs
    (data files, plug-in code) are unchanged; the others are marked stale, and the console says
    why."""
    by_id = {c.run_id: c for c in configs}
    ok, status = store.finished_ids(), store.status()
    recorded = store.recorded_inputs(by_id)
    stale = []
    damaged: dict[str, str] = {}
    store.load_results([r for r in by_id if r in ok], damaged=damaged)
    for rid, why in damaged.items():  # computed again; its new record replaces the damaged one
        log.warning(
            "%s: computed again: its stored record is damaged (%s)",
            by_id[rid].describe(),
            why.split(" is damaged: ", 1)[-1].split("; delete the folder", 1)[0],
        )
        stale.append(rid)
    ok -= set(damaged)
    for rid, cfg in by_id.items():
        if rid not in ok:
            if status.get(rid) == "ok" and rid not in damaged:
                log.warning(
                    "%s: computed again: R cells are missing from the database", cfg.describe()
                )
                stale.append(rid)
            continue
        changed = changed_inputs(recorded.get(rid, {}), cfg)
        if changed:
            log.warning("%s: computed again: input changed: %s", cfg.describe(), "; ".join(changed))
            stale.append(rid)
    if stale:
        store.invalidate(stale)
    return (ok & set(by_id)) - set(stale)


def _writable_folder(out: Path, db: Path) -> None:
    """Create ``out``; a :class:`ResultsWriteError` naming the path and why when it cannot be
    written (a file of that name, a read-only or full file system)."""
    from ..results.store import DestinationError, writable_destination

    try:
        writable_destination(out, "folder", "--out")
    except DestinationError as exc:
        raise ResultsWriteError(out, db, exc) from exc


def _labels(cfg) -> dict:
    return {
        "dataset": cfg.dataset.display,
        "scenario": cfg.scenario.display,
        "strategy": cfg.strategy.display,
        "detector": cfg.detector.display,
        "seed": cfg.seed,
    }


def _todo(groups: dict[str, list[RunConfig]], settled: set[str]) -> list[RunConfig]:
    """The computing run of every group none of whose runs is settled."""
    return [g[0] for g in groups.values() if not settled & {c.run_id for c in g}]


def _flagged(store, configs) -> int:
    """How many of ``configs``' runs finished before with warnings (a resumed grid's count)."""
    return len(store.flagged_ids() & {c.run_id for c in configs})


def _groups(configs: list[RunConfig], keys: dict[str, str]) -> dict[str, list[RunConfig]]:
    """Configurations by computation key, in the spec's order (the first computes)."""
    groups: dict[str, list[RunConfig]] = {}
    for c in configs:
        groups.setdefault(keys[c.run_id], []).append(c)
    return groups


def shared_copy(result: RunResult, cfg: RunConfig) -> RunResult:
    """The record of configuration ``cfg`` that is the same computation as ``result``: its own
    labels, seed, configuration and run_id, the computed R, metrics and timings, and
    ``shared_from`` naming the run that computed them."""
    labels = _labels(cfg)
    return dataclasses.replace(
        result,
        dataset=labels["dataset"],
        scenario=labels["scenario"],
        strategy=labels["strategy"],
        detector=labels["detector"],
        seed=int(cfg.seed),
        config=cfg.to_dict(),
        run_id=cfg.run_id,
        shared_from=result.shared_from or result.run_id,
        result_key=None
        if result.result_key is None
        else with_result_key(dataclasses.replace(result, config=cfg.to_dict())).result_key,
    )


def _write_shared(
    store,
    result: RunResult,
    group: list[RunConfig],
    done: set | None = None,
    decorate: Callable[[RunResult], RunResult] | None = None,
    on_copy: Callable[[RunResult, RunConfig], None] | None = None,
) -> int:
    """Record every other configuration of ``group`` as sharing ``result`` (stamped when written,
    after the run that computed it), each passed through ``decorate`` when given and then to
    ``on_copy`` (with its configuration)."""
    n = 0
    for cfg in group:
        if cfg.run_id != result.run_id and cfg.run_id not in (done or ()):
            copy = shared_copy(result, cfg)
            copy = decorate(copy) if decorate else copy
            store.write(copy)
            if on_copy is not None:
                on_copy(copy, cfg)
            n += 1
    return n


def _fill_shared(
    store,
    groups: dict[str, list[RunConfig]],
    finished: set[str],
    decorate: Callable[[RunResult], RunResult] | None = None,
) -> int:
    """Record, from a finished run of its group, every configuration not finished yet (a resumed
    grid whose computing run finished before); ``finished`` is updated."""
    n = 0
    for group in groups.values():
        ids = [c.run_id for c in group]
        done = finished & set(ids)
        if done and len(done) < len(ids):
            source = store.load_results([next(i for i in ids if i in done)])[0]
            n += _write_shared(store, source, group, done=done, decorate=decorate)
            finished |= set(ids)
    return n
