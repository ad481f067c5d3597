"""Is a scenario worth drawing conclusions from? Four checks on its single-task matrix M.

M (see :mod:`clad.protocol.single_task`) holds, in cell ``[i, j]``, the score on concept ``j`` of a
detector trained on concept ``i`` alone. The checks (feasible, non-trivial, forgetting, no
redundancy), when each passes, the defaults of their thresholds (:class:`Thresholds`, the options of
``clad validate``) and their verdicts (``PASS``, ``FAIL``, ``n/a``; a verdict compares point values
with a threshold, it is not a significance test): ``docs/guides/protocol.md``.

>>> import numpy as np
>>> M = np.array([[0.95, 0.60], [0.55, 0.90]])
>>> [c.verdict for c in check_matrix(M, ("a", "b"), naive_bwt=-0.35)]
['PASS', 'PASS', 'PASS', 'PASS']
>>> [c.verdict for c in check_matrix(np.array([[0.95, 0.95], [0.945, 0.95]]), ("a", "b"), naive_bwt=-0.005)]
['PASS', 'PASS', 'FAIL', 'FAIL']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from ..errors import CladValueError
from .single_task import SingleTaskMatrix

__all__ = [
    "Thresholds",
    "Check",
    "ValidityReport",
    "check_matrix",
    "validate",
    "auc_interval",
    "on_scale",
]


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of the four checks (their meaning: ``docs/guides/protocol.md``)."""

    feasible_min: float = 0.7
    trivial_ceiling: float = 0.99
    forgetting_max: float = -0.01
    redundancy_tol: float = 0.01

    def __post_init__(self):
        # every base metric (ROC-AUC, F1, average precision) lies in [0, 1]: a threshold outside its
        # range would make a check pass or fail whatever the scores
        names = [f.name for f in fields(self)]
        for name in names:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise CladValueError(f"{name}={v!r}; expected a finite number")
        for name in names:
            v, low = getattr(self, name), -1.0 if name == "forgetting_max" else 0.0
            if not low <= v <= 1.0:
                raise CladValueError(
                    f"{name}={v!r}; expected a number from {low:g} to 1 (base metrics lie in [0, 1])"
                )


@dataclass(frozen=True)
class Check:
    """One check: its ``name``, ``verdict`` (``"PASS"``, ``"FAIL"``, ``"n/a"``), a one-line
    ``summary`` with its numbers, and the numbers themselves (``values``)."""

    name: str
    verdict: str
    summary: str
    values: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.verdict == "FAIL"


def auc_interval(
    auc: float, n_anomalous: int, n_normal: int, level: float = 0.95
) -> tuple[float, float]:
    """Hanley & McNeil (1982) interval of a ROC-AUC from ``n_anomalous`` and ``n_normal`` test rows.

    >>> lo, hi = auc_interval(0.9, 100, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.856, 0.944)
    """
    from scipy.stats import norm

    if not math.isfinite(auc) or n_anomalous < 1 or n_normal < 1:
        return (float("nan"), float("nan"))
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (
        auc * (1 - auc) + (n_anomalous - 1) * (q1 - auc * auc) + (n_normal - 1) * (q2 - auc * auc)
    ) / (n_anomalous * n_normal)
    half = float(norm.ppf(0.5 + level / 2)) * math.sqrt(max(var, 0.0))
    return (max(0.0, float(auc) - half), min(1.0, float(auc) + half))


def _fmt(v: float) -> str:
    return "nan" if not math.isfinite(v) else f"{v:.3f}"


#: the chance level the thresholds are written against: ROC-AUC's
_THRESHOLD_CHANCE = 0.5


def on_scale(threshold: float, chance) -> np.ndarray | float:
    """A threshold written on ROC-AUC's scale (chance 0.5, best 1) carried to a metric whose chance
    level is ``chance``: the same fraction of the way from chance to 1 (``chance`` 0.5 gives
    ``threshold`` itself; None, a metric with no known chance level, too).

    >>> float(on_scale(0.7, 0.5)), round(float(on_scale(0.7, 0.9)), 3)
    (0.7, 0.94)
    """
    if chance is None:
        return threshold
    c = np.asarray(chance, dtype=float)
    return np.where(
        np.isnan(c),
        threshold,
        c + (threshold - _THRESHOLD_CHANCE) / (1 - _THRESHOLD_CHANCE) * (1 - c),
    )


def _feasible(M, names, th, counts, chance=None) -> Check:
    diag = np.diag(M)
    if np.isnan(diag).any():
        missing = [n for n, d in zip(names, diag) if np.isnan(d)]
        return Check(
            "feasible",
            "n/a",
            f"undefined diagonal cells for {missing}",
            {"diagonal": diag.tolist()},
        )
    # each concept against its own chance level: the threshold carried to its scale
    if chance is not None:
        limits = np.broadcast_to(on_scale(th.feasible_min, chance), diag.shape)
        j = int(np.argmin(diag - limits))
        ok = bool(np.all(diag >= limits))
    else:
        j = int(np.argmin(diag))
        ok = bool(diag.min() >= th.feasible_min)
    values = {
        "diagonal": diag.tolist(),
        "min": float(diag[j]),
        "argmin": names[j],
        "threshold": th.feasible_min,
    }
    if chance is not None:
        text = (
            f"M[j, j] = {_fmt(diag[j])} ({names[j]}) {'>=' if ok else '<'} {_fmt(limits[j])}, its chance level "
            f"{_fmt(chance[j])} carried {th.feasible_min:g} of ROC-AUC's scale"
            + ("" if ok else f"; below in {int((diag < limits).sum())} of {diag.size} concepts")
        )
        values.update(thresholds=[float(v) for v in limits], chance=[float(c) for c in chance])
        return Check("feasible", "PASS" if ok else "FAIL", text, values)
    text = f"min M[j, j] = {_fmt(diag[j])} ({names[j]}) {'>=' if ok else '<'} {th.feasible_min:g}"
    if counts is not None:
        intervals = [auc_interval(d, a, n) for d, (n, a) in zip(diag, counts)]
        values["intervals_95"] = [list(iv) for iv in intervals]
        lo, hi = intervals[j]
        text += f" (95% interval {_fmt(lo)}-{_fmt(hi)}, {counts[j][1]} anomalous / {counts[j][0]} normal rows)"
        borderline = [
            names[i] for i, (lo_i, hi_i) in enumerate(intervals) if lo_i <= th.feasible_min <= hi_i
        ]
        if borderline:
            text += f"; borderline (interval contains the threshold): {', '.join(borderline)}"
        values["borderline"] = borderline
    return Check("feasible", "PASS" if ok else "FAIL", text, values)


def _non_trivial(M, names, th, chance=None) -> Check:
    defined = ~np.isnan(M)
    cells = M[defined]
    if cells.size == 0:
        return Check("non_trivial", "n/a", "no defined cell", {})
    ceiling = np.broadcast_to(on_scale(th.trivial_ceiling, chance), (M.shape[1],))[None, :]
    above = int((M >= ceiling)[defined].sum())
    ok = above < cells.size
    text = (
        f"{above} of {cells.size} cells >= {th.trivial_ceiling:g} (min cell {_fmt(cells.min())})"
        + ("" if ok else ": every cell is at the ceiling")
    )
    values = {"cells_at_ceiling": above, "cells": int(cells.size), "min": float(cells.min())}
    values["threshold"] = th.trivial_ceiling
    return Check("non_trivial", "PASS" if ok else "FAIL", text, values)


def _forgetting(naive_bwt: float, n: int, th) -> Check:
    cells = n * (n - 1) // 2
    if not math.isfinite(naive_bwt):
        return Check(
            "forgetting", "n/a", f"naive's backward transfer is undefined ({n} concept(s))", {}
        )
    ok = naive_bwt < th.forgetting_max
    text = f"naive BWT = {naive_bwt:.3f} over {cells} cells {'<' if ok else '>='} {th.forgetting_max:g}"
    if not ok:
        text += ": learning later concepts costs little on earlier ones"
    values = {"naive_bwt": naive_bwt, "cells": cells, "threshold": th.forgetting_max}
    return Check("forgetting", "PASS" if ok else "FAIL", text, values)


def _no_redundancy(M, names, th) -> Check:
    n = len(names)
    diag = np.diag(M)
    pairs, closest = [], None
    for i in range(n):
        for j in range(i + 1, n):
            # how far each cross score stays below its diagonal
            gaps = (diag[j] - M[i, j], diag[i] - M[j, i])
            if any(np.isnan(gaps)):
                continue
            worst = max(gaps)
            if closest is None or worst < closest[0]:
                closest = (worst, names[i], names[j], gaps)
            if worst <= th.redundancy_tol:
                pairs.append({"pair": [names[i], names[j]], "gaps": [float(g) for g in gaps]})
    if closest is None:
        return Check("no_redundancy", "n/a", "fewer than two concepts with defined cells", {})
    values = {
        "redundant_pairs": pairs,
        "threshold": th.redundancy_tol,
        "closest_pair": [closest[1], closest[2]],
        "closest_gaps": [float(g) for g in closest[3]],
    }
    if pairs:
        shown = "; ".join(
            f"{p['pair'][0]} & {p['pair'][1]} (gaps {p['gaps'][0]:.3f}, {p['gaps'][1]:.3f})"
            for p in pairs
        )
        return Check(
            "no_redundancy",
            "FAIL",
            f"{len(pairs)} redundant pair(s), cross scores within "
            f"{th.redundancy_tol:g} of both diagonals: {shown}",
            values,
        )
    g = closest[3]
    return Check(
        "no_redundancy",
        "PASS",
        f"no pair within {th.redundancy_tol:g}; closest: {closest[1]} & "
        f"{closest[2]} (gaps {g[0]:.3f}, {g[1]:.3f})",
        values,
    )


def check_matrix(
    M,
    names,
    naive_bwt: float,
    thresholds: Thresholds | None = None,
    counts: list[tuple[int, int]] | None = None,
    chance=None,
) -> list[Check]:
    """The four checks on a square ``M`` with concept ``names`` and naive's backward transfer.
    ``counts`` (``(n_normal, n_anomalous)`` per concept), when given, adds ROC-AUC intervals.
    ``chance`` (each concept's chance level for M's metric), when given for a metric other than
    ROC-AUC, judges each concept against its own chance level: the feasibility and triviality
    thresholds, written on ROC-AUC's scale, are carried to it (:func:`on_scale`)."""
    th = thresholds or Thresholds()
    M = np.asarray(M, dtype=np.float64)
    names = tuple(names)
    if M.ndim != 2 or M.shape != (len(names), len(names)):
        raise CladValueError(
            f"M has shape {M.shape}; expected a square matrix with one row per name ({len(names)})"
        )
    if chance is not None and len(chance) != len(names):
        chance = None
    return [
        _feasible(M, names, th, counts, chance),
        _non_trivial(M, names, th, chance),
        _forgetting(naive_bwt, len(names), th),
        _no_redundancy(M, names, th),
    ]


@dataclass(frozen=True, eq=False)
class ValidityReport:
    """The checks of one single-task matrix, with what it was computed from (``labels``)."""

    labels: dict
    matrix: SingleTaskMatrix
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return not any(c.failed for c in self.checks)

    def format(self) -> str:
        st = self.matrix
        head = ", ".join(f"{k} {v}" for k, v in self.labels.items())
        width = max(len(n) for n in st.names) + len(str(len(st.names))) + 2
        lines = [head, f"  single-task matrix M ({st.metric}; row: trained on, column: scored on)"]
        lines.append(
            "  " + " " * width + "  " + "  ".join(f"{j:>6d}" for j in range(len(st.names)))
        )
        for i, (name, row) in enumerate(zip(st.names, st.M)):
            lines.append(
                f"  {f'{i}: {name}':<{width}s}  " + "  ".join(f"{_fmt(v):>6s}" for v in row)
            )
        for c in self.checks:
            lines.append(f"  {c.name:14s} {c.verdict:5s} {c.summary}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        from ..results.record import to_jsonable

        return to_jsonable(
            {
                "labels": self.labels,
                "ok": self.ok,
                "matrix": self.matrix.to_dict(),
                "checks": [
                    {"name": c.name, "verdict": c.verdict, "summary": c.summary, "values": c.values}
                    for c in self.checks
                ],
            }
        )


def validate(
    matrix: SingleTaskMatrix, thresholds: Thresholds | None = None, labels: dict | None = None
) -> ValidityReport:
    """The :class:`ValidityReport` of a single-task matrix."""
    counts = list(zip(matrix.n_normal, matrix.n_anomalous)) if matrix.metric == "roc_auc" else None
    # ROC-AUC's chance is the thresholds' own
    chance = matrix.chance if matrix.metric != "roc_auc" else None
    checks = check_matrix(matrix.M, matrix.names, matrix.naive_bwt, thresholds, counts, chance)
    return ValidityReport(dict(labels or {}), matrix, tuple(checks))
