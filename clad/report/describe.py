"""Runs grouped by configuration and described over seeds: the statistics every report table shares.

A *configuration* is dataset x scenario x strategy x detector; its runs differ only by seed.
:func:`describe` gives, over axis 0, the mean (NaN left out), the sample standard deviation
(``ddof=1``), ``n`` (the values that entered the mean) and the 95 % Student-t interval of the mean,
cut to the value's range and none below :data:`MIN_INTERVAL_N` values: why this interval and not a
bootstrap, ``docs/guides/statistics.md``. :mod:`clad.report.aggregate`, :mod:`clad.report.cost` and
:mod:`clad.report.stats` build on it.
"""

from __future__ import annotations

import hashlib
import warnings
import weakref
from typing import Iterable, Sequence

import numpy as np

from ..results.record import RunResult

__all__ = [
    "CONFIG_KEYS",
    "group_runs",
    "mean_std",
    "describe",
    "describe_each",
    "intervals",
    "computation_id",
    "run_digest",
    "distinct_runs",
]

#: the fields that identify a configuration (its runs differ only by seed)
CONFIG_KEYS = ("dataset", "scenario", "strategy", "detector")
#: the confidence level of every interval
CONFIDENCE = 0.95
#: fewest values for which an interval is given
MIN_INTERVAL_N = 3
#: the range of a value nothing is declared about
UNBOUNDED = (-np.inf, np.inf)


def group_runs(
    results: Iterable[RunResult], distinct: bool = False
) -> dict[tuple[str, str, str, str], list[RunResult]]:
    """Finished runs grouped by configuration (first-seen order), each group sorted by seed; with
    ``distinct``, each group holds one run per distinct computation (:func:`distinct_runs`).

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
    out = {k: sorted(v, key=lambda r: r.seed) for k, v in groups.items()}
    return {k: distinct_runs(v) for k, v in out.items()} if distinct else out


def run_digest(r: RunResult) -> str | None:
    """A digest of what a run computed (its concept names and every R, byte for byte), or None
    without R; computed once per run object (a run record is frozen: its R never changes).

    >>> a = RunResult("d", "aware", "naive", "if", 0, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])})
    >>> b = RunResult("d", "incremental", "naive", "if", 0, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])})
    >>> run_digest(a) == run_digest(b), run_digest(RunResult("d", "s", "n", "i", 0))
    (True, None)
    """
    if not r.R:
        return None
    try:
        return _DIGESTS[r]
    except (KeyError, TypeError):
        pass
    h = hashlib.sha256(repr((tuple(r.concepts), tuple(r.test_concepts))).encode())
    for name in sorted(r.R):
        R = np.asarray(r.R[name], dtype=np.float64)
        h.update(name.encode() + repr(R.shape).encode())
        h.update(np.where(np.isnan(R), np.nan, R).tobytes())  # one NaN bit pattern
    digest = h.hexdigest()
    try:
        _DIGESTS[r] = digest
    except TypeError:
        pass
    return digest


#: digests already computed, per run object
_DIGESTS: "weakref.WeakKeyDictionary[RunResult, str]" = weakref.WeakKeyDictionary()


def computation_id(r: RunResult) -> str:
    """What a run computed, as one string: two runs with the same id are one computation.

    A digest of its concept names and every R (byte for byte, :func:`run_digest`) when it has R:
    runs found identical after the fact (a seed no part used) get the same id as runs recorded
    as sharing a result (``shared_from``, which copies R). A run without R is its own computation
    unless it records ``shared_from`` (then it is the run it points at).

    >>> a = RunResult("d", "s", "n", "knn", 0, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])}, run_id="a")
    >>> b = RunResult("d", "s", "n", "knn", 1, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])}, run_id="b")
    >>> c = RunResult("d", "s", "n", "knn", 2, ("A",), ("A",), R={"roc_auc": np.array([[0.6]])}, run_id="c")
    >>> computation_id(a) == computation_id(b), computation_id(a) == computation_id(c)
    (True, False)
    """
    digest = run_digest(r)
    if digest is None:
        return "run:" + str(
            r.shared_from
            or r.run_id
            or f"{r.dataset}/{r.scenario}/{r.strategy}/{r.detector}/{r.seed}"
        )
    return "R:" + digest


def distinct_runs(runs: Sequence[RunResult]) -> list[RunResult]:
    """One run per distinct computation (:func:`computation_id`), the first of each in ``runs``'
    order: the independent values a mean, an interval or a test may count.

    >>> rs = [RunResult("d", "s", "n", "knn", s, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])}) for s in range(5)]
    >>> [r.seed for r in distinct_runs(rs)]
    [0]
    """
    seen: dict[str, RunResult] = {}
    for r in runs:
        seen.setdefault(computation_id(r), r)
    return list(seen.values())


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


def interval(values, bounds: tuple[float, float] = UNBOUNDED) -> tuple[float, float]:
    """The 95 % Student-t interval of the mean of ``values`` (NaN left out), inside ``bounds``;
    (NaN, NaN) with fewer than :data:`MIN_INTERVAL_N` values (see the module).

    >>> interval([0.7, 0.9]), [round(v, 4) for v in interval([0.98, 0.99, 1.0, 1.0], (0, 1))]
    ((nan, nan), [0.9773, 1.0])
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    low, high = intervals(v, [bounds[0]], [bounds[1]])
    return float(low[0]), float(high[0])


def intervals(values, lows, highs) -> tuple[np.ndarray, np.ndarray]:
    """:func:`interval` of every column of the 2-D ``values`` at once, column ``k`` inside
    ``(lows[k], highs[k])``.

    >>> v = np.array([[0.7, 0.98, 1.0], [0.9, 0.99, np.nan], [0.8, 1.0, 2.0], [1.0, 1.0, 3.0]])
    >>> low, high = intervals(v, [0, 0, -np.inf], [1, 1, np.inf])
    >>> [(round(float(a), 4), round(float(b), 4)) for a, b in zip(low, high)]
    [(0.6446, 1.0), (0.9773, 1.0), (-0.4841, 4.4841)]
    """
    mean, std, n = _row_stats(np.asarray(values, dtype=np.float64).T)
    return _t_interval(mean, std, n, lows, highs)


def _row_stats(series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample std and count of each row of ``series``, each row reduced as one contiguous
    array (so a column described alone and among others gives the same bits)."""
    t = np.ascontiguousarray(series, dtype=np.float64)
    n = (~np.isnan(t)).sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(t, axis=1)
        std = np.nanstd(t, axis=1, ddof=1)
    return mean, np.where(n >= 2, std, np.nan), n


def _t_interval(mean, std, n, lows, highs) -> tuple[np.ndarray, np.ndarray]:
    """The interval of each mean from its standard deviation and count (see the module)."""
    from scipy.special import stdtrit

    mean, std, n = (
        np.asarray(mean, dtype=np.float64),
        np.asarray(std, dtype=np.float64),
        np.asarray(n),
    )
    ok = n >= MIN_INTERVAL_N
    t = np.full(mean.shape, np.nan)
    t[ok] = stdtrit(n[ok] - 1, 0.5 + CONFIDENCE / 2)
    with np.errstate(invalid="ignore"):
        half = t * std / np.sqrt(np.where(ok, n, 1))
    low = np.where(ok, np.maximum(mean - half, np.asarray(lows, dtype=np.float64)), np.nan)
    high = np.where(ok, np.minimum(mean + half, np.asarray(highs, dtype=np.float64)), np.nan)
    return low, high


def describe(values, bounds=UNBOUNDED) -> dict[str, np.ndarray]:
    """:func:`mean_std` plus the interval of the mean (:func:`interval`, inside ``bounds``), over
    axis 0. ``bounds`` is one ``(low, high)`` for every value, or a pair of arrays of the shape of
    one row of ``values`` (each column inside its own range).

    >>> d = describe([[0.7], [0.9], [np.nan]])
    >>> d["mean"].tolist(), d["n"].tolist(), d["ci_low"].tolist()
    ([0.8], [2], [nan])
    >>> d = describe([[0.7], [0.9], [0.8], [1.0]], bounds=(0, 1))
    >>> [round(float(d[k][0]), 3) for k in ("mean", "ci_low", "ci_high")]
    [0.85, 0.645, 1.0]
    """
    a = np.asarray(values, dtype=np.float64)
    mean, std, n = mean_std(a)
    flat = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)
    lows = np.broadcast_to(np.asarray(bounds[0], dtype=np.float64), mean.shape).reshape(-1)
    highs = np.broadcast_to(np.asarray(bounds[1], dtype=np.float64), mean.shape).reshape(-1)
    low, high = intervals(flat, lows, highs)
    return {
        "mean": mean,
        "std": std,
        "n": n,
        "ci_low": low.reshape(mean.shape),
        "ci_high": high.reshape(mean.shape),
    }


def describe_each(series, lows, highs) -> dict[str, np.ndarray]:
    """:func:`describe` of each row of the 2-D ``series`` (one quantity's values over seeds per row),
    row ``k`` inside ``(lows[k], highs[k])``: the numbers of ``describe(series[k][:, None],
    (lows[k], highs[k]))`` for every ``k``, bit for bit, in one pass.

    >>> s = np.array([[0.7, 0.9, 0.8, 1.0], [0.1, np.nan, 0.3, 0.2]])
    >>> d, e = describe_each(s, [0, 0], [1, 1]), describe(s[1][:, None], (0, 1))
    >>> all(np.array_equal(d[k][1:], e[k], equal_nan=True) for k in STATS)
    True
    """
    mean, std, n = _row_stats(series)  # a contiguous row per quantity, as describe's column
    low, high = _t_interval(mean, std, n, lows, highs)
    return {"mean": mean, "std": std, "n": n, "ci_low": low, "ci_high": high}


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
