"""What the top of a report says: the best configuration of each scenario and what may be said of
it, and which configurations are one computation over their seeds.

Claims here follow the evidence the leaderboard counts (:func:`clad.report.leaderboard.leaderboard`:
distinct computations, not records): a configuration whose seeds are one computation has one
independent value, so no interval and no "within noise" is said of it; a scenario that several
configurations share (``concept_aware = concept_incremental``) is one scenario
(:func:`clad.report.leaderboard.scenario_groups`); a configuration whose runs failed is named beside
the ranking it is missing from.
"""

from __future__ import annotations

import html
from typing import Iterable, Sequence

import pandas as pd

from ..metrics import get_metric
from ..results.record import RunResult
from .leaderboard import (
    BEST,
    NO_NOISE_ESTIMATE,
    SHARED_LABEL,
    WITHIN_NOISE,
    best_status,
    scenario_groups,
)
from .describe import computation_id, group_runs

__all__ = [
    "headline_lines",
    "deterministic_configurations",
    "deterministic_caveats",
    "ONE_VALUE_MARK",
    "ONE_VALUE_LEGEND",
]

#: how many configurations a caveat names before it says how many more there are
NAMED = 6
#: the mark of a best or runner-up resting on one independent value, and its legend (said once)
ONE_VALUE_MARK = "†"
ONE_VALUE_LEGEND = (
    "† n = 1: the best or the runner-up rests on one independent value (one seed, or a deterministic "
    "configuration whose seeds are one computation): no noise can be estimated, so neither "
    '"intervals clear" nor "within noise" is said.'
)


def _config_text(row) -> str:
    return f"{html.escape(str(row['strategy']))} + {html.escape(str(row['detector']))}"


def _failed_here(results: Iterable[RunResult], dataset: str, scenario: str) -> list[str]:
    """'strategy + detector (k of n seeds)' for each configuration of ``dataset`` / ``scenario``
    with a failed run."""
    runs: dict[tuple, list[RunResult]] = {}
    for r in results:
        if r.dataset == dataset and scenario in str(r.scenario).split(SHARED_LABEL):
            runs.setdefault((r.strategy, r.detector), []).append(r)
    out = []
    for (strategy, detector), rs in runs.items():
        failed = sum(1 for r in rs if not r.ok)
        if failed:
            out.append(
                f"{strategy} + {detector} ({failed} of {len(rs)} run{'s' if len(rs) > 1 else ''} failed)"
            )
    return out


def headline_lines(
    table: pd.DataFrame,
    metric: str,
    chance: pd.DataFrame | None = None,
    results: Sequence[RunResult] = (),
    suffix=None,
) -> list[str]:
    """One HTML line per dataset and scenario of ``table`` (leaderboard rows of one base metric):
    the best configuration by ``metric``, its margin over the next and what the evidence allows:
    "intervals clear", "within noise", or, where either rests on one independent value, ``n = 1``
    and :data:`ONE_VALUE_MARK` (its legend, :data:`ONE_VALUE_LEGEND`, is said once under the lines);
    the chance level; the configurations whose runs failed (not ranked, or
    ranked on fewer values); ``suffix(dataset, scenario)``, when given, adds its text to each line."""
    if table.empty:
        return []
    higher = get_metric(metric).higher_is_better
    datasets = len(set(table["dataset"]))
    base = table["base_metric"].iloc[0]
    lines = []
    for (dataset, scenario), idx in scenario_groups(table, ["dataset", "scenario"]):
        sub = table.loc[idx]
        ranked = sub.dropna(subset=[f"{metric}_mean"]).sort_values(
            f"{metric}_mean", ascending=not higher, kind="stable"
        )
        if ranked.empty:
            continue
        top = ranked.iloc[0]
        where = f"{dataset} / {scenario}" if datasets > 1 else str(scenario)
        text = f"<b>{html.escape(where)}</b>: {_config_text(top)} {top[f'{metric}_mean']:.3f}"
        if len(ranked) > 1:
            nxt = ranked.iloc[1]
            mark = best_status(ranked, [metric], within=()).at[ranked.index[0], metric]
            gap = abs(top[f"{metric}_mean"] - nxt[f"{metric}_mean"])
            why = {BEST: "intervals clear", WITHIN_NOISE: "within noise"}.get(mark, "tied")
            if mark == NO_NOISE_ESTIMATE:  # said once, in ONE_VALUE_LEGEND, not on every line
                ones = [r for r in (top, nxt) if r.get(f"{metric}_n", 2) < 2]
                how = "one seed" if all(r.get("runs", 1) <= 1 for r in ones) else "deterministic"
                why = f"n = 1, {how} {ONE_VALUE_MARK}"
            text += f", {gap:.3f} ahead of {_config_text(nxt)} ({why})"
        if chance is not None and not chance.empty:
            ref = chance[
                (chance["dataset"] == dataset)
                & (chance["base_metric"] == base)
                & chance["scenario"].astype(str).map(lambda s: scenario in s.split(SHARED_LABEL))
            ]
            level = ref.iloc[0].get(f"{metric}_mean") if len(ref) else None
            if level is not None and level == level:
                text += f"; chance {level:.3f}"
        failed = _failed_here(results, dataset, scenario)
        if failed:
            text += "; failed runs, not in this ranking or on fewer values: " + html.escape(
                ", ".join(failed)
            )
        if suffix is not None:
            text += suffix(dataset, scenario)
        lines.append(text)
    return lines


def deterministic_configurations(results: Iterable[RunResult]) -> pd.DataFrame:
    """One row per configuration with more finished runs (seeds) than distinct computations:
    ``runs``, ``computations``, ``shared`` (every repeat recorded as sharing a result, ``shared_from``)
    and ``reach`` (for repeats found identical after the fact: the parts the seed reaches, as the run
    recorded them (:attr:`~clad.results.record.RunResult.seed_reach`), which then did not change R;
    "" when unknown).

    >>> import numpy as np
    >>> rs = [RunResult("d", "s", "naive", "knn", s, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])})
    ...       for s in range(3)]
    >>> deterministic_configurations(rs)[["detector", "runs", "computations", "shared"]].values.tolist()
    [['knn', 3, 1, False]]
    """
    rows = []
    for key, runs in group_runs(results).items():
        ids = [computation_id(r) for r in runs]
        distinct = len(set(ids))
        if distinct == len(runs):
            continue
        first = {}
        repeats = [r for r, i in zip(runs, ids) if first.setdefault(i, r) is not r]
        shared = all(r.shared_from for r in repeats)
        reach = "" if shared else ", ".join(runs[0].seed_reach or ())
        rows.append((*key[:4], len(runs), distinct, shared, reach))
    columns = "dataset scenario strategy detector runs computations shared reach".split()
    return pd.DataFrame(rows, columns=columns)


def _names(part: pd.DataFrame) -> str:
    names = [
        " / ".join(str(row[k]) for k in ("dataset", "scenario", "strategy", "detector"))
        for _, row in part.iterrows()
    ]
    return ", ".join(names[:NAMED]) + (
        f" and {len(names) - NAMED} more" if len(names) > NAMED else ""
    )


def deterministic_caveats(results: Iterable[RunResult]) -> list[str]:
    """The caveats of :func:`deterministic_configurations`, one per kind (recorded as shared; found
    identical after the fact, with the parts the seed reaches; partly repeated)."""
    table = deterministic_configurations(results)
    if table.empty:
        return []
    out = []
    one = table[table["computations"] == 1]
    shared, found = one[one["shared"]], one[~one["shared"]]
    if len(shared):
        out.append(
            f"{len(shared)} configuration{'s are' if len(shared) > 1 else ' is'} deterministic over seeds "
            f"(no part consumes the seed: every seed recorded as the same computation, computed once), so "
            f"each counts as one value: n = 1, no interval, no noise estimate: {_names(shared)}"
        )
    if len(found):
        reach = sorted({p for r in found["reach"] for p in str(r).split(", ") if p})
        why = (
            f"the seed reaches the {' and '.join(reach)}, which did not change R: "
            f"{'it does' if len(reach) == 1 else 'they do'} not use it"
            if reach
            else "which part ignores the seed could not be found"
        )
        out.append(
            f"{len(found)} configuration{'s give' if len(found) > 1 else ' gives'} byte-identical R for every "
            f"seed, found after the run ({why}), so each counts as one value: n = 1, no interval, no noise "
            f"estimate: {_names(found)}"
        )
    partly = table[table["computations"] > 1]
    if len(partly):
        out.append(
            f"{len(partly)} configuration{'s have' if len(partly) > 1 else ' has'} seeds with identical R "
            f"(counted once each): {_names(partly)}"
        )
    return out
