"""Checking a bundle by recomputation: ``clad verify-bundle SOURCE --sample K --seed S``.

A stratified random sample of the bundle's runs (:func:`stratified_sample`: the same share of every
dataset and detector, drawn with ``numpy.random.default_rng(S)``) is computed here again and every
value of R compared with the bundle's: bit for bit by default (clad's runs are deterministic given
their seed and libraries), or within an absolute ``tolerance``. The bundle is rejected when one
sampled run disagrees. A sampled run whose result key here is not the bundle's (other data bytes,
libraries...) cannot be checked here and is reported with its reasons.

How much a sample of K proves: if ``m`` of the bundle's ``N`` runs were altered, a simple random
sample of K misses all of them with probability ``C(N - m, K) / C(N, K)`` (hypergeometric);
:func:`catch_probability` gives one minus that for 1 % and 5 % of the runs altered (at least one run).
A stratified sample with proportional shares catches at least as often for alterations spread
over the strata.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..engine.config import RunConfig
from ..errors import CladValueError
from ..engine.result_key import differences, key_of, local_parts, canonical_config
from .format import Bundle, said

__all__ = [
    "stratified_sample",
    "catch_probability",
    "recompute",
    "compare_row",
    "Verdict",
    "verify",
    "format_verdict",
]


def stratified_sample(rows: Sequence[Mapping], k: int, seed: int) -> list[int]:
    """Indices of ``k`` rows drawn without replacement, each (dataset, detector) stratum getting
    its share of ``k`` by largest remainder (every stratum one at least while ``k`` allows), the
    rows of a stratum drawn at random with ``default_rng(seed)``; all rows when ``k >= len(rows)``.

    >>> rows = [{"record": {"dataset": d, "detector": "x"}} for d in "aaab"]
    >>> sorted(stratified_sample(rows, 2, 0))[1], len(stratified_sample(rows, 9, 0))
    (3, 4)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise CladValueError(f"sample size {k!r}; expected an integer >= 1")
    n = len(rows)
    if k >= n:
        return list(range(n))
    strata: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        strata.setdefault((row["record"]["dataset"], row["record"]["detector"]), []).append(i)
    names = sorted(strata)
    exact = {s: k * len(strata[s]) / n for s in names}
    share = {
        s: min(len(strata[s]), max(1 if k >= len(names) else 0, math.floor(exact[s])))
        for s in names
    }
    for s in sorted(
        names, key=lambda s: (-(exact[s] - math.floor(exact[s])), s)
    ):  # largest remainders
        if sum(share.values()) >= k:
            break
        if share[s] < len(strata[s]):
            share[s] += 1
    while (
        sum(share.values()) > k
    ):  # the minimum of one per stratum may overshoot: take from the largest
        s = max(names, key=lambda s: (share[s], s))
        share[s] -= 1
    rng = np.random.default_rng(seed)
    out = []
    for s in names:
        out += [strata[s][j] for j in rng.permutation(len(strata[s]))[: share[s]]]
    return sorted(out)


def catch_probability(n: int, k: int, share: float) -> float:
    """The probability that a simple random sample of ``k`` of ``n`` runs holds at least one of the
    ``max(1, ceil(share * n))`` altered runs.

    >>> round(catch_probability(200, 100, 0.05), 4), catch_probability(10, 10, 0.01)
    (0.9992, 1.0)
    """
    m = max(1, math.ceil(share * n - 1e-9))
    k = min(k, n)
    if k > n - m:
        return 1.0
    return 1.0 - math.exp(
        math.lgamma(n - m + 1)
        - math.lgamma(n - m - k + 1)
        - math.lgamma(n + 1)
        + math.lgamma(n - k + 1)
    )


def recompute(row: Mapping) -> tuple[dict[str, np.ndarray] | None, str | None]:
    """``(R, None)`` of a bundle row computed here again, or ``(None, why it cannot be checked)``."""
    from ..engine.run import run_safely

    try:
        parts = local_parts(row["config"])
    except Exception as exc:  # noqa: BLE001 - reported as a run this machine cannot recompute
        return None, f"cannot be recomputed here ({type(exc).__name__}: {exc})"
    if key_of(parts) != row["key"]:
        theirs = {**row["parts"], "config": canonical_config(row["config"])}
        return None, "not the same computation here: " + "; ".join(differences(theirs, parts))
    result = run_safely(RunConfig.from_dict(row["config"]))
    if not result.ok:
        return None, f"failed here: {result.cause}"
    return dict(result.R), None


def compare_row(row: Mapping, R: Mapping[str, np.ndarray], tolerance: float = 0.0) -> list[str]:
    """The cells where the bundle's R and ``R`` disagree (beyond ``tolerance``; undefined must stay
    undefined), each as ``"metric[step, test]: BUNDLE != HERE"``."""
    out = []
    theirs = row["record"]["R"]
    for metric in sorted(set(theirs) | set(R)):
        if metric not in theirs or metric not in R:
            out.append(
                f"{metric}: only in {'the bundle' if metric in theirs else 'the recomputation'}"
            )
            continue
        a = np.array(
            [[np.nan if v is None else v for v in line] for line in theirs[metric]],
            dtype=np.float64,
        )
        b = np.asarray(R[metric], dtype=np.float64)
        if a.shape != b.shape:
            out.append(f"{metric}: shape {a.shape} != {b.shape}")
            continue
        same = (np.isnan(a) & np.isnan(b)) | (
            (a == b) if tolerance == 0 else (np.abs(a - b) <= tolerance)
        )
        for i, j in zip(*np.nonzero(~same)):
            out.append(f"{metric}[{i}, {j}]: {float(a[i, j])!r} != {float(b[i, j])!r}")
    return out


@dataclass(frozen=True)
class Verdict:
    """What a verification found: the sample, the runs that disagree and those not checked here."""

    n_runs: int
    sampled: int
    agreed: int
    disagreed: tuple[str, ...]
    unchecked: tuple[str, ...]
    tolerance: float
    catch: Mapping[float, float]

    @property
    def rejected(self) -> bool:
        return bool(self.disagreed)

    @property
    def ok(self) -> bool:
        return not self.disagreed and self.agreed > 0


def verify(
    bundle: Bundle,
    k: int,
    seed: int,
    tolerance: float = 0.0,
    recomputed: Callable[[Mapping], tuple] = recompute,
) -> Verdict:
    """Recompute a stratified sample of ``k`` of ``bundle``'s runs (``recomputed(row)`` gives
    ``(R, None)`` or ``(None, why not)``) and compare each with the bundle."""
    if not (isinstance(tolerance, (int, float)) and 0 <= tolerance <= 0.01):
        raise CladValueError(f"tolerance {tolerance!r}; expected a number in [0, 0.01]")
    rows = bundle.rows
    picked = stratified_sample(rows, k, seed)
    agreed, disagreed, unchecked = 0, [], []
    for i in picked:
        row = rows[i]
        what = said(row["record"])
        R, why = recomputed(row)
        if R is None:
            unchecked.append(f"{what}: {why}")
            continue
        diffs = compare_row(row, R, tolerance)
        if diffs:
            disagreed.append(
                f"{what}: {'; '.join(diffs[:3])}"
                + (f"; and {len(diffs) - 3} more" if len(diffs) > 3 else "")
            )
        else:
            agreed += 1
    n = len(rows)
    return Verdict(
        n,
        len(picked),
        agreed,
        tuple(disagreed),
        tuple(unchecked),
        float(tolerance),
        {p: catch_probability(n, len(picked), p) for p in (0.01, 0.05)} if n else {},
    )


def format_verdict(v: Verdict) -> str:
    """The verdict as ``clad verify-bundle`` prints it."""
    lines = [f"disagrees: {d}" for d in v.disagreed] + [f"not checked: {u}" for u in v.unchecked]
    how = "bit for bit" if v.tolerance == 0 else f"within {v.tolerance:g}"
    catch = ", ".join(
        f"{p:.0%} of the runs altered: caught with probability {q:.4f}" for p, q in v.catch.items()
    )
    word = (
        "REJECTED"
        if v.rejected
        else "verified"
        if v.ok
        else "not verified (no sampled run could be recomputed here)"
    )
    lines += [
        f"{v.sampled} of {v.n_runs} runs recomputed ({how}): {v.agreed} agree, {len(v.disagreed)} disagree, "
        f"{len(v.unchecked)} not checked here",
        f"a sample of {v.sampled}: {catch}",
        f"bundle {word}",
    ]
    return "\n".join(lines)
