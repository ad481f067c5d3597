"""The phases of a grid: runs resumed, shared and computed together into one store.

A grid's tuning runs and its evaluation runs are each a :class:`Phase`: the runs finished before
are resumed (:func:`fresh_finished`: unless an input changed), runs that are one computation
(:mod:`clad.engine.identity`) are grouped by their key and only the first of each group is
computed; the others are recorded as sharing its result (:func:`shared_copy`).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Callable, Mapping

from ..results.record import RunResult
from .config import RunConfig, group_by
from .identity import changed_inputs, code_inputs, computation_keys
from .result_key import with_result_key
from .settings import Execution

__all__ = [
    "Phase",
    "evaluation_phase",
    "tuning_record",
    "fresh_finished",
    "run_labels",
    "shared_copy",
    "write_shared",
    "fill_shared",
]

log = logging.getLogger(__name__)


class Phase:
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
        # configurations by computation key, in the spec's order (the first computes)
        self.groups = group_by(configs, lambda c: self.keys[c.run_id])
        finished = fresh_finished(store, configs)
        self.resumed = len(finished)
        self.shared = fill_shared(store, self.groups, finished, self.decorate)
        self.todo = computing_runs(self.groups, finished)
        #: the runs the uninterrupted grid computes (its replica units are cut from them)
        self.computing = computing_runs(self.groups, set())
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
        self.shared += write_shared(
            store,
            result,
            self.groups[self.keys[ev.config.run_id]],
            decorate=self.decorate,
            on_copy=lambda c, cfg: copies.append((c, cfg)),
        )
        return result, copies

    def compute(self, store, execution: Execution, sharing, on_step, tell) -> bool:
        """Compute the phase's runs into ``store``, telling each event: True when interrupted."""
        from .executors import execute_grid
        from .tasks import RunEvent

        if not self.todo:
            return False
        events = execute_grid(
            self.todo,
            execution,
            sharing=sharing,
            on_step=on_step,
            store=store,
            whole=self.computing,
        )
        try:
            for ev in events:
                if ev.kind == "started":
                    labels, config = run_labels(ev.config), ev.config.to_dict()
                    store.mark_started(ev.config.run_id, labels, config, ev.started)
                if ev.kind != "finished":  # started, or a worker's run evaluated a concept step
                    tell(ev)
                    continue
                result, copies = self.record(store, ev)
                tell(dataclasses.replace(ev, result=result))
                for copy, cfg in copies:  # logged, counted
                    tell(RunEvent("shared", cfg, result=copy))
        except KeyboardInterrupt:
            return True
        finally:
            events.close()  # stops the workers
        return False


def evaluation_phase(
    store, plan, grid: list[RunConfig], phases: list["Phase"], share: bool
) -> list[RunConfig]:
    """Append to ``phases`` (whose first is the tuning runs') the evaluation runs with their chosen
    parameters; return every evaluation configuration (those without a choice recorded as failed)."""
    configs, records, unscored = _evaluation_runs(store, plan, grid, phases[0].configs)
    phases.append(Phase(store, [c for c in configs if c.run_id not in unscored], share, records))
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


def tuning_record(result: RunResult) -> bool:
    """A tuning run's record, or an evaluation run that failed for want of a choice (the database
    keeps them; results.json lists the spec's evaluation runs)."""
    from ..results.record import is_tuning_run

    view = (result.config or {}).get("data_view") or {}
    no_choice = (
        not result.ok and ((result.extras or {}).get("tuning") or {}).get("chosen", 0) is None
    )
    return is_tuning_run(result.config) or (view.get("part") == "evaluate" and no_choice)


def fresh_finished(store, configs: list[RunConfig]) -> set[str]:
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


def run_labels(cfg) -> dict:
    return {
        "dataset": cfg.dataset.display,
        "scenario": cfg.scenario.display,
        "strategy": cfg.strategy.display,
        "detector": cfg.detector.display,
        "seed": cfg.seed,
    }


def computing_runs(groups: dict[str, list[RunConfig]], settled: set[str]) -> list[RunConfig]:
    """The computing run of every group none of whose runs is settled."""
    return [g[0] for g in groups.values() if not settled & {c.run_id for c in g}]


def shared_copy(result: RunResult, cfg: RunConfig) -> RunResult:
    """The record of configuration ``cfg`` that is the same computation as ``result``: its own
    labels, seed, configuration and run_id, the computed R, metrics and timings, and
    ``shared_from`` naming the run that computed them."""
    return dataclasses.replace(
        result,
        **{**run_labels(cfg), "seed": int(cfg.seed)},
        config=cfg.to_dict(),
        run_id=cfg.run_id,
        shared_from=result.shared_from or result.run_id,
        result_key=None
        if result.result_key is None
        else with_result_key(dataclasses.replace(result, config=cfg.to_dict())).result_key,
    )


def write_shared(
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


def fill_shared(
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
            n += write_shared(store, source, group, done=done, decorate=decorate)
            finished |= set(ids)
    return n
