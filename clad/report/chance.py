"""Chance levels in the report: what a scoreless detector gets, as a matrix like R
(:func:`chance_matrix`), through a scalar metric (:func:`chance_value`), as the chance row of a
leaderboard (:func:`chance_table`) and as the heatmap cells that cannot be told from it
(:func:`chance_cells`)."""

from __future__ import annotations

import warnings
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..metrics import REGISTRY, get_metric, learned_at, scalar_names
from ..results.record import RunResult
from .describe import MIN_INTERVAL_N, intervals

__all__ = ["chance_table"]


def chance_matrix(r: RunResult, base_metric: str) -> np.ndarray | None:
    """R of a scoreless detector on run ``r``'s test concepts: every row holds each test
    concept's chance level (``r.chance``), NaN where ``r``'s own cell is undefined; None when the
    run recorded no chance level for ``base_metric``."""
    levels = (r.chance or {}).get(base_metric)
    if levels is None or base_metric not in r.R:
        return None
    R = np.asarray(r.R[base_metric], dtype=np.float64)
    C = np.tile(np.asarray(levels, dtype=np.float64), (R.shape[0], 1))
    return np.where(np.isnan(R), np.nan, C)


def chance_value(r: RunResult, base_metric: str, name: str) -> float:
    """Scalar metric ``name`` of run ``r``'s :func:`chance_matrix`: what a scoreless detector gets
    through the same metric (0 for a difference such as BWT; NaN for a metric that needs a
    reference, or without recorded chance levels)."""
    C = chance_matrix(r, base_metric)
    if C is None or name not in REGISTRY or get_metric(name).needs:
        return float("nan")
    at = learned_at(r.concepts, r.test_concepts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(get_metric(name).function(C, learned_at=at))


def chance_table(
    results: Iterable[RunResult], metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """Per dataset, base metric and scenario: every scalar metric of the chance matrices
    (:func:`chance_value`), mean over the finished runs (``m_mean``); the chance row of a leaderboard.

    >>> from clad.results.record import RunResult
    >>> r = RunResult("d", "s", "naive", "if", 0, ("A", "B"), ("A", "B"), R={"f1": np.array([[0.9, 0.2], [0.7, 0.8]])},
    ...               chance={"f1": [2 * 0.1 / 1.1, 0.5]})
    >>> t = chance_table([r], ["continual_average", "backward_transfer"])
    >>> round(float(t.at[0, "continual_average_mean"]), 4), float(t.at[0, "backward_transfer_mean"])
    (0.2879, 0.0)
    """
    metrics = scalar_names() if metrics is None else list(metrics)
    rows: dict[tuple, list[RunResult]] = {}
    for r in results:
        if r.ok and r.chance:
            for bm in r.chance:
                rows.setdefault((r.dataset, bm, r.scenario), []).append(r)
    out = []
    # runs on one test set share their chance matrix: each computed once
    memo: dict[tuple, float] = {}

    def test_set(r: RunResult, bm: str) -> tuple:
        """What a run's chance matrix of ``bm`` is computed from."""
        R = r.R.get(bm)
        return (
            tuple(r.concepts),
            tuple(r.test_concepts),
            repr(r.chance.get(bm)),
            None if R is None else np.isnan(np.asarray(R, dtype=np.float64)).tobytes(),
        )

    def value(r: RunResult, bm: str, name: str, of: tuple) -> float:
        key = (bm, name, *of)
        if key not in memo:
            memo[key] = chance_value(r, bm, name)
        return memo[key]

    for (dataset, bm, scenario), runs in rows.items():
        row = {"dataset": dataset, "base_metric": bm, "scenario": scenario}
        sets = [test_set(r, bm) for r in runs]  # once per run, not once per run and metric
        for name in metrics:
            values = [value(r, bm, name, of) for r, of in zip(runs, sets)]
            values = [v for v in values if v == v]
            row[f"{name}_mean"] = float(np.mean(values)) if values else float("nan")
        out.append(row)
    return pd.DataFrame(
        out, columns=["dataset", "base_metric", "scenario", *(f"{m}_mean" for m in metrics)]
    )


#: how close to its chance level a value must come to be "at chance" with too few seeds for an interval
CHANCE_TOLERANCE = 0.005


def chance_cells(runs: Sequence[RunResult], base_metric: str, cols, stack: np.ndarray):
    """Per test concept the mean chance level over ``runs``, and the cells of R (``stack``: seeds x
    steps x concepts) that cannot be told from it: the chance level lies in the cell's interval over
    seeds (:func:`interval`), or, with too few seeds for one, between its smallest and largest
    value widened by :data:`CHANCE_TOLERANCE`. (None, None) when a run recorded no chance level."""
    levels = []
    for r in runs:
        c = (r.chance or {}).get(base_metric)
        if c is None:
            return None, None
        c = np.asarray(c, dtype=np.float64)
        if cols is not None and tuple(cols) != tuple(r.test_concepts):
            c = c[[list(r.test_concepts).index(name) for name in cols]]
        levels.append(c)
    chance = np.nanmean(np.stack(levels), axis=0) if levels else None
    if chance is None:
        return None, None
    n_rows, n_cols = stack.shape[1:]
    cells = stack.reshape(stack.shape[0], -1)  # seeds x cells, each cell's values a column
    low, high = np.full(cells.shape[1], np.nan), np.full(cells.shape[1], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a cell without values
        smallest, largest = np.nanmin(cells, axis=0), np.nanmax(cells, axis=0)
    level = np.tile(chance, n_rows)
    # an interval lies within its values: only where the chance level is within them (widened by the
    # tolerance) can the interval decide, so only there is it computed (every cell's answer unchanged)
    near = np.flatnonzero(
        (smallest - CHANCE_TOLERANCE <= level) & (level <= largest + CHANCE_TOLERANCE)
    )
    if near.size:
        low[near], high[near] = intervals(
            cells[:, near], np.full(near.size, -np.inf), np.full(near.size, np.inf)
        )
    at = np.zeros(stack.shape[1:], dtype=bool)
    for i in range(n_rows):
        for j in range(n_cols):
            v = stack[:, i, j]
            v = v[~np.isnan(v)]
            if not v.size or np.isnan(chance[j]):
                continue
            lo, hi = (
                (float(low[i * n_cols + j]), float(high[i * n_cols + j]))
                if v.size >= MIN_INTERVAL_N
                else (float(v.min()), float(v.max()))
            )
            at[i, j] = lo - CHANCE_TOLERANCE <= chance[j] <= hi + CHANCE_TOLERANCE
    return chance, at
