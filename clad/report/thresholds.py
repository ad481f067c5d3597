"""The threshold policy on the page: which threshold made each thresholded metric's labels, and how
the false-positive rate it reached drifts on past concepts.

Every run records its threshold policy (:mod:`clad.core.thresholds`) and, per cell of R, the
false-positive rate its threshold reached on the test concept's normal rows. :func:`threshold_table`
gives, per configuration (mean ± std over seeds): the rate on the concept just learned (the cells
``i = t(j)``), on past concepts (``i > t(j)``) and its drift there (past minus just learned, per
concept), with the drift after each step; :func:`threshold_section` is the page's section.
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import pandas as pd

from ..core.thresholds import policy_text
from ..metrics import learned_at
from ..metrics.base import find_base_metric
from ..results.record import RunResult

__all__ = [
    "threshold_table",
    "threshold_section",
    "threshold_legend",
    "thresholded_metrics",
    "policies",
]

_KEYS = ("dataset", "scenario", "strategy", "detector")


def thresholded_metrics(runs: Sequence[RunResult]) -> list[str]:
    """The base metrics of ``runs`` that read labels made by a threshold (declared ``input="labels"``)."""
    names = dict.fromkeys(m for r in runs for m in r.R)
    return [m for m in names if (d := find_base_metric(m)) is not None and d.input == "labels"]


def policies(runs: Sequence[RunResult]) -> list[str]:
    """The threshold policies of ``runs`` as the page names them (one, unless runs of several specs are mixed)."""
    return list(dict.fromkeys(policy_text((r.threshold or {}).get("policy", "own")) for r in runs))


def _nanmean(values) -> float:
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return float(np.mean(finite)) if finite.size else float("nan")


def _drifts(r: RunResult) -> tuple[float, float, float, list[float]] | None:
    """A run's realised false-positive rate on the concept just learned and on past concepts, its
    drift there (mean of ``F[i, j] - F[t(j), j]`` over ``i > t(j)``) and the drift after each step."""
    fpr = (r.threshold or {}).get("realised_fpr")
    if fpr is None or len(fpr) == 0:  # a list as recorded, or an array as a report holds it
        return None
    F = np.asarray(fpr, dtype=np.float64)
    t = learned_at(r.concepts, r.test_concepts)
    just, past, drift, per_step = [], [], [], []
    for i in range(F.shape[0]):
        step = [F[i, j] - F[t[j], j] for j in range(F.shape[1]) if 0 <= t[j] < i]
        just += [F[i, j] for j in range(F.shape[1]) if t[j] == i]
        past += [F[i, j] for j in range(F.shape[1]) if 0 <= t[j] < i]
        drift += step
        per_step.append(_nanmean(step) if step else float("nan"))
    return _nanmean(just), _nanmean(past), _nanmean(drift), per_step


def threshold_table(runs: Sequence[RunResult]) -> pd.DataFrame:
    """Per configuration: the policy, the realised false-positive rate on the concept just learned
    and on past concepts, and its drift on past concepts (mean over seeds, with the std), and the
    mean drift after each step (``drift_per_step``).

    >>> from clad.results.record import RunResult
    >>> r = RunResult("d", "s", "naive", "iforest", 0, concepts=("A", "B"), test_concepts=("A", "B"),
    ...               threshold={"policy": {"fpr": 0.05, "calibration": 0.2},
    ...                          "realised_fpr": [[0.05, 0.5], [0.15, 0.04]]})
    >>> row = threshold_table([r]).iloc[0]
    >>> float(row["fpr_just_learned"]), float(row["fpr_past"]), round(float(row["drift_past"]), 4), row["drift_per_step"]
    (0.045, 0.15, 0.1, [None, 0.1])
    """
    groups: dict[tuple, list] = {}
    for r in runs:
        d = _drifts(r)
        if d is not None:
            groups.setdefault(tuple(getattr(r, k) for k in _KEYS), []).append((r, d))
    rows = []
    for key, items in groups.items():
        just, past, drift = (np.array([d[k] for _, d in items]) for k in range(3))
        steps = np.array([d[3] for _, d in items], dtype=np.float64)
        per_step = [_nanmean(steps[:, i]) for i in range(steps.shape[1])] if steps.ndim == 2 else []
        rows.append(
            {
                **dict(zip(_KEYS, key)),
                "policy": policy_text((items[0][0].threshold or {}).get("policy", "own")),
                "seeds": len(items),
                "fpr_just_learned": _nanmean(just),
                "fpr_just_learned_std": float(np.nanstd(just))
                if np.isfinite(just).any()
                else float("nan"),
                "fpr_past": _nanmean(past),
                "drift_past": _nanmean(drift),
                "drift_past_std": float(np.nanstd(drift))
                if np.isfinite(drift).any()
                else float("nan"),
                "drift_per_step": [None if not np.isfinite(v) else round(v, 4) for v in per_step],
            }
        )
    return pd.DataFrame(rows)


def threshold_section(runs: Sequence[RunResult], table: pd.DataFrame | None = None) -> str | None:
    """The page's section: the policy beside every thresholded metric, and the realised
    false-positive rates (None when no run recorded them)."""
    metrics = thresholded_metrics(runs)
    table = threshold_table(runs) if table is None else table
    if table.empty:
        return None
    named = ", ".join(policies(runs))
    out = [
        "<p class='legend'>Labels for the thresholded metrics come from <strong>"
        + html.escape(named)
        + "</strong>: "
        + (
            ", ".join(f"{html.escape(m)} ({html.escape(named)})" for m in metrics)
            or "no thresholded base metric in these runs"
        )
        + ". The false-positive rate each threshold "
        "reached on the normal rows of the concept just learned, on past concepts after later steps, and its "
        "drift there (past minus just learned: a forgetting of calibration), mean over seeds; "
        "<code>thresholds.csv</code> has the drift after each step.</p>"
    ]
    shown = table[[*_KEYS, "seeds", "fpr_just_learned", "fpr_past", "drift_past"]].copy()
    from .tables import frame_html

    out.append(frame_html(shown))
    return "\n".join(out)


def threshold_legend(runs: Sequence[RunResult]) -> str:
    """One line naming the threshold policy beside each thresholded metric of ``runs`` (empty when none)."""
    metrics = thresholded_metrics(runs)
    if not metrics:
        return ""
    named = ", ".join(policies(runs))
    return (
        "<p class='legend'>Thresholded metrics: "
        + ", ".join(f"{html.escape(m)} ({html.escape(named)})" for m in metrics)
        + ".</p>"
    )
