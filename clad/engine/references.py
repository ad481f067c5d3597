"""Reference runs of a grid: computed once per dataset (with its concept order) x detector x seed x
base metrics, shared by every strategy and scenario, and turned into metrics of every run.

A spec's ``references = ["joint", "single_task"]`` adds, for every distinct (dataset, detector,
seed, base metrics) of its grid, one :class:`ReferenceConfig` per kind: a naive,
concept-incremental run (scenario ``reference``, strategy ``<kind>``) on the dataset
:func:`clad.protocol.reference_models.reference_dataset` derives from the grid's, taken with its
``order`` parameter. :func:`compute_references` computes them with the grid's executor after the
runs, stores them and never computes them again on resume; :func:`attach_references` then adds to
every finished run its metrics against each reference (:mod:`clad.metrics.reference_metrics`).
What they mean and where they are stored: docs/guides/references.md.

>>> from clad.engine.config import Component, RunConfig
>>> cfg = RunConfig(Component("synthetic", {"order": "random"}), Component("concept_aware"), Component("naive"),
...                 Component("hbos"), seed=3)
>>> plan = reference_plan([cfg], ("joint",))
>>> ref = plan.configs[0]
>>> ref.reference, ref.dataset.params, ref.strategy.display, ref.seed, plan.of_run[cfg.run_id] == {"joint": ref.run_id}
('joint', {'order': 'random'}, 'joint', 3, True)
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..results.record import RunResult, to_jsonable
from ..metrics import learned_at, reference_input, summarize
from ..metrics.reference_metrics import declare_reference_metrics
from .config import Component, RunConfig
from .settings import Execution

__all__ = [
    "ReferenceConfig",
    "ReferencePlan",
    "reference_plan",
    "attach_references",
    "with_references",
    "references_to_compute",
    "record_reference",
    "compute_references",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReferenceConfig(RunConfig):
    """The configuration of one reference run: a :class:`RunConfig` (naive, concept-incremental)
    and the ``reference`` kind, which enters its identity (``run_id``)."""

    reference: str = "joint"

    def to_dict(self) -> dict:
        return {**super().to_dict(), "reference": self.reference}

    def describe(self) -> str:
        return f"{self.reference} reference: {self.dataset.display} / {self.detector.display} / seed {self.seed}"


@dataclass(frozen=True)
class ReferencePlan:
    """The reference configurations of a grid and, per run_id, ``{kind: reference run_id}``."""

    configs: tuple[ReferenceConfig, ...] = ()
    of_run: dict = dataclasses.field(default_factory=dict)


def reference_plan(configs: Iterable[RunConfig], kinds: Sequence[str]) -> ReferencePlan:
    """One :class:`ReferenceConfig` per kind and distinct (dataset with its concept order, detector,
    seed, base metrics, data view) of ``configs`` (the evaluation runs of a ``[tuning]`` grid see a
    part of the data, and so do their references)."""
    if not kinds:
        return ReferencePlan()
    refs: dict[str, ReferenceConfig] = {}
    of_run: dict[str, dict[str, str]] = {}
    for cfg in configs:
        mine = of_run.setdefault(cfg.run_id, {})
        for kind in kinds:
            ref = ReferenceConfig(
                cfg.dataset,
                Component("concept_incremental", label="reference"),
                Component("naive", label=kind),
                cfg.detector,
                cfg.seed,
                cfg.base_metrics,
                data_view=cfg.data_view,
                metric_params=cfg.metric_params,
                threshold=cfg.threshold,
                reference=kind,
            )
            refs.setdefault(ref.run_id, ref)
            mine[kind] = ref.run_id
    return ReferencePlan(tuple(refs.values()), of_run)


def references_to_compute(store, plan: ReferencePlan) -> list[ReferenceConfig]:
    """The reference configurations of ``plan`` not finished in ``store``, or finished from inputs
    (data files, plug-in code) that have changed since (the console says which)."""
    from .identity import changed_inputs

    recorded = {r.run_id: r for r in store.load_references() if r.ok}
    todo = []
    for cfg in plan.configs:
        done = recorded.get(cfg.run_id)
        changed = [] if done is None else changed_inputs(dict(done.inputs), cfg)
        if changed:
            log.warning("%s: computed again: input changed: %s", cfg.describe(), "; ".join(changed))
        if done is None or changed:
            todo.append(cfg)
    return todo


def record_reference(store, event) -> None:
    """Store the finished reference run of an executor's ``event`` (with the fingerprints of the
    plug-in code it ran), and say when it failed: the runs then have no metrics against it."""
    from .identity import code_inputs

    result = dataclasses.replace(
        event.result, inputs={**event.result.inputs, **code_inputs(event.config)}
    )
    store.write_reference(result, event.started, event.finished)
    if not result.ok:
        log.warning(
            "%s failed: %s; the runs have no metrics against it",
            event.config.describe(),
            result.cause,
        )


def compute_references(
    store, plan: ReferencePlan, execution: Execution = Execution()
) -> tuple[int, bool]:
    """Compute the references of ``plan`` not finished in ``store`` (:func:`references_to_compute`)
    with the grid's executor and its ``execution`` settings (:func:`~clad.engine.executors.execute_grid`:
    worker processes, Dask, time limits; never SLURM) and store each; returns how many were computed and whether a Ctrl-C stopped them."""
    from .executors import execute_grid

    todo = references_to_compute(store, plan)
    if not todo:
        return 0, False
    log.info("%d reference runs to compute", len(todo))
    here = dataclasses.replace(execution, slurm=None, replicas=1)  # in this process's executor
    events = execute_grid(todo, here)
    n = 0
    try:
        for ev in events:
            if ev.kind == "finished":
                record_reference(store, ev)
                n += 1
    except KeyboardInterrupt:
        return n, True
    finally:
        events.close()  # stops the workers
    return n, False


def with_references(run: RunResult, references: dict[str, RunResult]) -> RunResult:
    """``run`` with its metrics against each reference of ``references`` (``{kind: reference run}``,
    finished ones) added, per base metric, left-out counts included."""
    if not run.ok or not references:
        return run
    from ..protocol.reference_models import reference_scores

    t = learned_at(run.concepts, run.test_concepts)
    metrics = {m: dict(v) for m, v in run.metrics.items()}
    for base, R in run.R.items():
        inputs = {
            reference_input(kind): reference_scores(
                kind, ref.concepts, ref.test_concepts, ref.R[base], run.test_concepts
            )
            for kind, ref in references.items()
            if ref.ok and base in ref.R
        }
        if not inputs:
            continue
        s = summarize(R, t, **inputs)
        # also those of metrics declared after clad.metrics was imported
        names = declare_reference_metrics()
        mine = metrics.setdefault(base, {})
        mine.update({k: s[k] for k in names if k in s})
        mine["left_out"] = {
            **mine.get("left_out", {}),
            **{k: v for k, v in s["left_out"].items() if k in names},
        }
    return dataclasses.replace(run, metrics=metrics)


def attach_references(store, plan: ReferencePlan, run_ids: Iterable[str]) -> int:
    """Rewrite every finished run of ``run_ids`` in ``store`` whose metrics against its references
    are missing or differ; returns how many were rewritten."""
    if not plan.configs:
        return 0
    refs = {r.run_id: r for r in store.load_references()}
    n = 0
    for run in store.load_results(list(run_ids)):
        mine = {
            kind: refs[rid] for kind, rid in plan.of_run.get(run.run_id, {}).items() if rid in refs
        }
        new = with_references(run, mine)
        if to_jsonable(new.metrics) != to_jsonable(run.metrics):
            store.write_metrics(new)
            n += 1
    return n
