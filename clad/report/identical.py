"""Equal configurations said once: strategies whose runs hold the same R everywhere.

Two strategies of one scenario and detector are *equal* when, on every dataset and seed, their
runs hold identical R (every base metric) over the same concepts: a shared computation, or a
coincidence such as ``replay`` whose buffer holds every row, which then computes what
``cumulative`` computes. :func:`merge_identical` keeps the runs of the first and relabels them with
every name (``cumulative = replay = window``), as :func:`clad.report.aggregate.merge_shared` does
for scenario settings that are one computation; a strategy equal on some datasets only stays apart.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from ..results.record import RunResult
from .blocks import run_fingerprint

__all__ = ["merge_identical", "identical_groups"]


def identical_groups(results: Iterable[RunResult]) -> dict[tuple[str, str], list[list[str]]]:
    """Per (scenario, detector), the groups of two or more strategies whose runs are identical on
    every dataset and seed (first-seen order); runs without R are never equal to anything.

    >>> import numpy as np
    >>> R = {"roc_auc": np.array([[0.7]])}
    >>> rs = [RunResult("d", "s", st, "if", 0, ("A",), ("A",), R=R) for st in ("cumulative", "replay", "naive")]
    >>> rs[2] = dataclasses.replace(rs[2], R={"roc_auc": np.array([[0.6]])})
    >>> identical_groups(rs)
    {('s', 'if'): [['cumulative', 'replay']]}
    """
    signatures: dict[tuple[str, str], dict[str, set | None]] = {}
    for r in results:
        if not r.ok:
            continue
        per = signatures.setdefault((r.scenario, r.detector), {})
        fp = run_fingerprint(r)
        if r.strategy in per and per[r.strategy] is None:
            continue
        per[r.strategy] = (
            None if fp is None else (per.get(r.strategy) or set()) | {(r.dataset, r.seed, fp)}
        )
    out = {}
    for key, per in signatures.items():
        found: dict[frozenset, list[str]] = {}
        for strategy, sig in per.items():
            if sig is not None:
                found.setdefault(frozenset(sig), []).append(strategy)
        groups = [g for g in found.values() if len(g) > 1]
        if groups:
            out[key] = groups
    return out


def merge_identical(results: Iterable[RunResult]) -> tuple[list[RunResult], list[str]]:
    """``results`` with every group of equal strategies (:func:`identical_groups`) shown once: the
    first strategy's runs relabelled ``a = b = c``, the others' finished runs dropped; and one
    sentence per group saying so. Failed runs are kept as they are."""
    results = list(results)
    groups = identical_groups(results)
    if not groups:
        return results, []
    label: dict[tuple[str, str, str], str] = {}
    dropped: set[tuple[str, str, str]] = set()
    where: dict[str, tuple[dict, dict]] = {}
    for (scenario, detector), gs in groups.items():
        for g in gs:
            name = " = ".join(g)
            label[(scenario, detector, g[0])] = name
            dropped.update((scenario, detector, s) for s in g[1:])
            scenarios, detectors = where.setdefault(name, ({}, {}))
            scenarios[scenario] = detectors[detector] = None
    notes = [
        f"{name} hold identical R on every dataset and seed (detector {', '.join(d)}; scenario "
        f"{', '.join(s)}): one row, labelled with every name"
        for name, (s, d) in where.items()
    ]
    out = []
    for r in results:
        key = (r.scenario, r.detector, r.strategy)
        if r.ok and key in dropped:
            continue
        out.append(dataclasses.replace(r, strategy=label[key]) if r.ok and key in label else r)
    return out, notes
