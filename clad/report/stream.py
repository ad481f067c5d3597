"""Aggregation over seeds of what a stream records besides R: the anytime curves (derived by
:mod:`clad.metrics.anytime`) and the prequential scores (:class:`clad.core.prequential.Prequential`).

Runs of one configuration are averaged position by position when they were evaluated at the same
rows (the same stream); a run evaluated elsewhere is left out of the mean and counted in
``left_out``. Statistics as in :func:`clad.report.describe.describe`.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..metrics.base import base_metric_bounds as base_bounds
from ..results.record import RunResult
from .describe import CONFIG_KEYS, STATS, describe, group_runs, stats_at

__all__ = ["anytime_table", "prequential_table", "ANYTIME_CURVES"]

#: the anytime curves drawn: metric name -> what it averages over
ANYTIME_CURVES = {"anytime_accuracy_all": "all", "anytime_accuracy_seen": "seen"}


def _same_stream(runs: list[RunResult], positions) -> tuple[list[RunResult], list, int]:
    """The runs evaluated at the same rows as the first one that has a record, those rows, and the
    number of runs left out."""
    kept, first = [], None
    for r in runs:
        pos = positions(r)
        if pos is None:
            continue
        if first is None:
            first = list(pos)
        if list(pos) == first:
            kept.append(r)
    return kept, first or [], len(runs) - len(kept)


def anytime_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, base metric, curve (``kind`` ``"all"`` or ``"seen"``) and anytime
    evaluation: :func:`describe` over seeds, with the rows seen, the task index and the concept
    boundaries (rows seen at each training concept's end, a list) for plotting."""
    rows = []
    for key, runs in group_runs(r for r in results if r.ok).items():
        kept, seen, left = _same_stream(runs, lambda r: (r.anytime or {}).get("rows_seen"))
        if not kept:
            continue
        anytime = kept[0].anytime
        for base in kept[0].metrics:
            for name, kind in ANYTIME_CURVES.items():
                values = [r.metrics.get(base, {}).get(name) for r in kept]
                if any(v is None for v in values):
                    continue
                d = describe(np.array(values, dtype=float), base_bounds(base))
                for e, rows_seen in enumerate(seen):
                    rows.append(
                        {
                            **dict(zip(CONFIG_KEYS, key)),
                            "base_metric": base,
                            "kind": kind,
                            "evaluation": e,
                            "rows_seen": rows_seen,
                            "task": anytime.get("task", [None] * len(seen))[e],
                            "boundaries": list(anytime.get("boundaries") or []),
                            "left_out": left,
                            **stats_at(d, e),
                        }
                    )
    return pd.DataFrame(
        rows,
        columns=[
            *CONFIG_KEYS,
            "base_metric",
            "kind",
            "evaluation",
            "rows_seen",
            "task",
            "boundaries",
            "left_out",
            *STATS,
        ],
    )


def prequential_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """Per configuration, prequential metric (``roc_auc``, ``average_precision``, ``f1``), kind
    (``"cumulative"`` or ``"windowed"``) and scored batch: :func:`describe` over seeds, with the
    rows seen before the batch and the window (in batches)."""
    rows = []
    for key, runs in group_runs(r for r in results if r.ok).items():
        kept, seen, left = _same_stream(runs, lambda r: (r.prequential or {}).get("rows_seen"))
        if not kept:
            continue
        window = kept[0].prequential.get("window")
        for kind in ("cumulative", "windowed"):
            for metric in kept[0].prequential[kind]:
                d = describe(
                    np.array([r.prequential[kind][metric] for r in kept], dtype=float),
                    base_bounds(metric),
                )
                for b, rows_seen in enumerate(seen):
                    rows.append(
                        {
                            **dict(zip(CONFIG_KEYS, key)),
                            "metric": metric,
                            "kind": kind,
                            "batch": b,
                            "rows_seen": rows_seen,
                            "window": window,
                            "left_out": left,
                            **stats_at(d, b),
                        }
                    )
    return pd.DataFrame(
        rows,
        columns=[
            *CONFIG_KEYS,
            "metric",
            "kind",
            "batch",
            "rows_seen",
            "window",
            "left_out",
            *STATS,
        ],
    )
