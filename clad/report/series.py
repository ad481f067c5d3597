"""Time series on the literature's scale: the per-series (per-channel) mean of each base metric.

A time-series test concept made of several series (channels, e.g. a SMAP subsystem) is scored on
its series concatenated: that is R. TSB-AD and Orion report instead the mean over series of each
series' own value. A run keeps every series' value after every step
(``extras["time_series"]["per_series"]``, :class:`clad.core.evaluation.Evaluation`), so the report
derives, for every base metric ``m``, a base metric ``m_per_series_mean``: R[i, j] the mean over
the series of test concept j (series where the value is undefined left out) after step i, NaN for a
test concept without series (what the heatmap shows); its continual metrics computed
(:func:`clad.metrics.summarize`) with every series as a test column of its own, learned with its
concept, so that each series weighs the same (the mean over series TSB-AD reports: SMAP, naive
IForest, the diagonal's VUS-PR is 0.116 on subsystems concatenated and 0.209 as the mean over the
54 channels); its chance level per test concept the mean of its series' chance levels.
Nothing recorded changes: the derived R sits next to the concatenated one.

:func:`per_series_table` gives every series' value after the last step with its chance level: the
report's per-channel table.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Iterable

import numpy as np
import pandas as pd

from ..metrics import learned_at, summarize
from ..results.record import RunResult

__all__ = ["SERIES_MEAN", "with_series_means", "series_mean_name", "per_series_table"]

#: the suffix of a per-series mean's base metric name (``vus_pr`` -> ``vus_pr_per_series_mean``)
SERIES_MEAN = "_per_series_mean"


def series_mean_name(base_metric: str) -> str:
    """The name of ``base_metric``'s per-series mean.

    >>> series_mean_name("vus_pr")
    'vus_pr_per_series_mean'
    """
    return base_metric + SERIES_MEAN


def _nanmean(rows) -> float:
    values = np.array([np.nan if v is None else v for v in rows], dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(values)) if values.size else float("nan")


def _series_data(r: RunResult) -> dict | None:
    return ((r.extras or {}).get("time_series") or {}).get("per_series")


def with_series_means(results: Iterable[RunResult]) -> list[RunResult]:
    """``results`` with, in every finished run that kept per-series values, one more base metric
    per base metric: ``m_per_series_mean`` (R, continual metrics and chance levels; see the module).

    >>> r = RunResult("d", "s", "naive", "if", 0, ("A", "B"), ("A", "B"), R={"vus_pr": np.array([[0.2, 0.1], [0.3, 0.4]])},
    ...               extras={"time_series": {"per_series": {"series": {"A": ["A-1", "A-2"], "B": ["B-1"]},
    ...               "values": {"vus_pr": {"A": [[0.1, 0.5], [0.2, None]], "B": [[0.1], [0.4]]}},
    ...               "chance": {"vus_pr": {"A": [0.05, 0.15], "B": [0.1]}}}}})
    >>> out, = with_series_means([r])
    >>> out.R["vus_pr_per_series_mean"].tolist(), out.chance["vus_pr_per_series_mean"]
    ([[0.3, 0.1], [0.2, 0.4]], [0.1, 0.1])
    >>> out.metrics["vus_pr_per_series_mean"]["learning_average"]  # (0.1 + 0.5 + 0.4) / 3 series
    0.3333333333333333
    """
    out = []
    for r in results:
        data = _series_data(r)
        if not r.ok or not data or not data.get("values"):
            out.append(r)
            continue
        R, metrics, chance = dict(r.R), dict(r.metrics), dict(r.chance or {})
        steps, cols = len(r.concepts), list(r.test_concepts)
        for m, per_concept in data["values"].items():
            mat = np.full((steps, len(cols)), np.nan)
            # one column per series: each series weighs the same in the metrics
            every, owner = [], []
            for j, concept in enumerate(cols):
                rows = per_concept.get(concept)
                if rows is None:
                    continue
                for i in range(min(steps, len(rows))):
                    mat[i, j] = _nanmean(rows[i])
                width = max((len(row) for row in rows), default=0)
                for k in range(width):
                    every.append(
                        [
                            np.nan
                            if i >= len(rows) or k >= len(rows[i]) or rows[i][k] is None
                            else float(rows[i][k])
                            for i in range(steps)
                        ]
                    )
                    owner.append(concept)
            name = series_mean_name(m)
            R[name] = mat
            series_R = np.array(every, dtype=np.float64).T if every else mat
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                metrics[name] = summarize(
                    series_R, learned_at(r.concepts, owner if every else r.test_concepts)
                )
            levels = (data.get("chance") or {}).get(m)
            if levels is not None:
                chance[name] = [_nanmean(levels[c]) if c in levels else float("nan") for c in cols]
            # recorded before per-series chance levels were: unknown, but a chance row all the same
            elif m in chance:
                chance[name] = [float("nan")] * len(cols)
        out.append(dataclasses.replace(r, R=R, metrics=metrics, chance=chance or None))
    return out


def per_series_table(results: Iterable[RunResult]) -> pd.DataFrame:
    """One row per configuration, base metric, test concept and series: the series' value after
    the last training step, mean over seeds (``value``; distinct computations), its count (``n``) and the series' chance
    level (``chance``; NaN where not recorded): the per-channel view of a time-series benchmark."""
    from .describe import CONFIG_KEYS, group_runs

    acc: dict[tuple, list] = {}
    chance: dict[tuple, float] = {}
    for r in (r for runs in group_runs(results, distinct=True).values() for r in runs):
        data = _series_data(r)
        if not r.ok or not data:
            continue
        for m, per_concept in data["values"].items():
            levels = (data.get("chance") or {}).get(m) or {}
            for concept, rows in per_concept.items():
                names = data["series"].get(concept, [])
                last = rows[-1] if rows else []
                for k, series in enumerate(names):
                    key = (r.dataset, r.scenario, r.strategy, r.detector, m, concept, series)
                    v = last[k] if k < len(last) else None
                    acc.setdefault(key, []).append(np.nan if v is None else float(v))
                    if concept in levels and k < len(levels[concept]):
                        level = levels[concept][k]
                        chance[key] = float("nan") if level is None else float(level)
    rows = []
    for key, values in acc.items():
        v = np.asarray(values, dtype=np.float64)
        ok = v[~np.isnan(v)]
        mean = float(ok.mean()) if ok.size else float("nan")
        rows.append((*key, mean, int(ok.size), chance.get(key, float("nan"))))
    columns = [*CONFIG_KEYS, "base_metric", "test_concept", "series", "value", "n", "chance"]
    return pd.DataFrame(rows, columns=columns)
