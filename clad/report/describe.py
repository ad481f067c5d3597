"""Runs grouped by configuration and described over seeds: the statistics every report table shares.

A *configuration* is dataset x scenario x strategy x detector; its runs differ only by seed.
:func:`describe` gives, over axis 0, the mean (NaN left out), the sample standard deviation
(``ddof=1``), ``n`` (the number of values that entered the mean) and a 95 % t-based confidence
interval of the mean, ``mean ± t(0.975, n-1) · std / sqrt(n)``; with fewer than two values std and
the interval are NaN. :mod:`clad.report.aggregate`, :mod:`clad.report.cost` and
:mod:`clad.report.stats` build on it.
"""

from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
from scipy import stats

from ..results.record import RunResult

__all__ = ["CONFIG_KEYS", "CONFIDENCE", "STATS", "group_runs", "mean_std", "describe", "stats_at", "plural"]

#: the fields that identify a configuration (its runs differ only by seed)
CONFIG_KEYS = ("dataset", "scenario", "strategy", "detector")
#: the confidence level of every interval
CONFIDENCE = 0.95


def group_runs(results: Iterable[RunResult]) -> dict[tuple[str, str, str, str], list[RunResult]]:
    """Finished runs grouped by configuration (first-seen order), each group sorted by seed.

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "s", "naive", "iforest", 1), RunResult("d", "s", "naive", "iforest", 0),
    ...       RunResult("d", "s", "naive", "lof", 0, status="failed")]
    >>> {k: [r.seed for r in v] for k, v in group_runs(rs).items()}
    {('d', 's', 'naive', 'iforest'): [0, 1]}
    """
    groups: dict[tuple[str, str, str, str], list[RunResult]] = {}
    for r in results:
        if r.ok:
            groups.setdefault((r.dataset, r.scenario, r.strategy, r.detector), []).append(r)
    return {k: sorted(v, key=lambda r: r.seed) for k, v in groups.items()}


def mean_std(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample std and count over axis 0, NaN left out.

    >>> m, s, n = mean_std([[1.0, np.nan], [3.0, np.nan], [2.0, 5.0]])
    >>> m.tolist(), s.tolist(), n.tolist()
    ([2.0, 5.0], [1.0, nan], [3, 1])
    """
    a = np.asarray(values, dtype=np.float64)
    n = (~np.isnan(a)).sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(a, axis=0)
        std = np.nanstd(a, axis=0, ddof=1)
    std = np.where(n >= 2, std, np.nan)
    return np.asarray(mean), np.asarray(std), np.asarray(n)


def describe(values) -> dict[str, np.ndarray]:
    """:func:`mean_std` plus the 95 % t-based confidence interval of the mean, over axis 0.

    >>> d = describe([[0.7], [0.9], [np.nan]])
    >>> d["mean"].tolist(), d["n"].tolist(), [round(float(d[k][0]), 4) for k in ("ci_low", "ci_high")]
    ([0.8], [2], [-0.4706, 2.0706])
    """
    mean, std, n = mean_std(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stats.t.ppf(0.5 + CONFIDENCE / 2, np.maximum(n - 1, 1)) * std / np.sqrt(np.maximum(n, 1))
    half = np.where(n >= 2, half, np.nan)
    return {"mean": mean, "std": std, "n": n, "ci_low": mean - half, "ci_high": mean + half}


#: the statistics of :func:`describe`, in the order the tables show them
STATS = ("mean", "std", "n", "ci_low", "ci_high")


def stats_at(d: dict, k) -> dict:
    """The statistics of :func:`describe` at index ``k`` as plain numbers."""
    return {key: (int(d[key][k]) if key == "n" else float(d[key][k])) for key in STATS}


def plural(word: str) -> str:
    """English plural of a field name.

    >>> plural("strategy"), plural("detector")
    ('strategies', 'detectors')
    """
    return word[:-1] + "ies" if word.endswith("y") else word + "s"
