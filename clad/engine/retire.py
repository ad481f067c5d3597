"""Retiring records: what a results folder holds that its spec's computation no longer does.

After a grid that was not interrupted, :func:`retire_stale` deletes from the store the records the
spec's computation no longer holds (an evaluation run whose tuning now chooses other parameters, the
reference of a replaced run, a run of an earlier computation) and says each on the console.
"""

from __future__ import annotations

import logging

from ..results.record import RunResult
from .config import canonical
from .spec import Spec

__all__ = ["retire_stale", "COMPUTATION_KEY"]

log = logging.getLogger(__name__)


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
