"""The report's tuning and validity sections: what tuning chose, and on which data; whether each scenario is
worth drawing conclusions from.

A tuned evaluation run carries ``extras["tuning"]`` (see :mod:`clad.engine.tuning`): the mode,
the objective, every candidate with its tuning score, and the choice. :func:`tuning_table` lays
that out one row per evaluation run, with the margin between the chosen candidate and the
runner-up, so that a reader sees how close the choice was and that it was made on data the
evaluation never scored.

>>> from clad.results.record import RunResult
>>> rec = {"mode": "first_concepts", "k": 1, "objective": "continual_average", "base_metric": "roc_auc",
...        "higher_is_better": True, "candidates": [
...            {"strategy": {}, "detector": {"max_samples": 64}, "score": 0.8, "status": "ok"},
...            {"strategy": {}, "detector": {"max_samples": 256}, "score": 0.9, "status": "ok"}], "chosen": 1}
>>> r = RunResult("d", "concept_aware", "naive", "iforest", 0, extras={"tuning": rec})
>>> row = tuning_table([r]).iloc[0]
>>> row["chosen"], float(row["score"]), round(float(row["margin"]), 3), int(row["candidates"])
('max_samples=256', 0.9, 0.1, 2)
"""

from __future__ import annotations

import html
import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..defaults import DEFAULT_BASE_METRIC
from ..results.record import RunResult
from .describe import CONFIG_KEYS
from .tables import frame_html

__all__ = ["tuning_table", "tuning_section", "validity_table", "validity_section"]

_MODES = {
    "first_concepts": "tuned on the first {k} concept(s) as a scenario of their own; the evaluation trains and "
    "scores only the remaining concepts",
    "validation_split": "tuned on a validation share ({fraction:g}) of each concept's labelled test pool; the "
    "evaluation scores only the rest",
}


def _params(choice: dict) -> str:
    parts = [
        f"{k}={v}"
        for part in ("strategy", "detector")
        for k, v in sorted((choice.get(part) or {}).items())
    ]
    return ", ".join(parts) or "(defaults)"


def tuning_table(results: Sequence[RunResult]) -> pd.DataFrame:
    """One row per tuned run: its configuration, the mode, the objective, how many candidates had a
    score, the chosen parameters, their tuning score, and the margin over the runner-up (in the
    objective's better direction; NaN with a single scored candidate)."""
    rows = []
    for r in results:
        rec = (r.extras or {}).get("tuning")
        if not rec or rec.get("chosen") is None:
            continue
        cands = rec.get("candidates", [])
        scores = [c.get("score") for c in cands]
        defined = [i for i, s in enumerate(scores) if s is not None and not math.isnan(s)]
        best = cands[rec["chosen"]]
        sign = 1.0 if rec.get("higher_is_better", True) else -1.0  # margins in the better direction
        runner_up = max(
            (sign * cands[i]["score"] for i in defined if i != rec["chosen"]), default=None
        )
        margin = float("nan") if runner_up is None else sign * best["score"] - runner_up
        rows.append(
            {
                **{k: getattr(r, k) for k in CONFIG_KEYS},
                "seed": r.seed,
                "mode": rec.get("mode"),
                "objective": rec.get("objective"),
                "candidates": len(defined),
                "chosen": _params(best),
                "score": best["score"],
                "margin": margin,
            }
        )
    return pd.DataFrame(rows)


def tuning_section(results: Sequence[RunResult]) -> str | None:
    """The report's "Tuning" section, or None when no run was tuned."""
    table = tuning_table(results)
    if table.empty:
        return None
    recs = [(r.extras or {})["tuning"] for r in results if (r.extras or {}).get("tuning")]
    modes = {
        rec["mode"]: _MODES.get(rec["mode"], "{mode}").format(
            **{"k": "?", "fraction": float("nan"), **rec}
        )
        for rec in recs
    }
    legend = (
        "<p class='legend'>Parameters chosen per dataset × scenario × strategy × detector × seed by the "
        "objective of tuning runs that never score an evaluation test row: "
        + "; ".join(html.escape(v) for v in modes.values())
        + ". <em>margin</em>: how far the choice's tuning score lies ahead of the runner-up's; a small "
        "margin means the choice is close to arbitrary.</p>"
    )
    shown = table.copy()
    shown["score"] = shown["score"].map(lambda v: f"{v:.4f}")
    shown["margin"] = shown["margin"].map(lambda v: "–" if math.isnan(v) else f"{v:.4f}")
    return legend + frame_html(shown)


def validity_table(single_task: Sequence[RunResult], thresholds=None) -> pd.DataFrame:
    """The four validity checks (:mod:`clad.protocol.validity`) of each single-task reference run
    (its R is the single-task matrix M: rows the concept trained on, columns the concept scored, in
    the same order), one row per dataset × detector × seed: each check's verdict and numbers.

    >>> from clad.results.record import RunResult
    >>> import numpy as np
    >>> M = np.array([[0.95, 0.60], [0.55, 0.90]])
    >>> ref = RunResult("d", "concept_incremental", "naive", "iforest", 0, concepts=("a", "b"),
    ...                 test_concepts=("a", "b"), R={"roc_auc": M})
    >>> validity_table([ref])[["feasible", "forgetting"]].values.tolist()
    [['PASS', 'PASS']]
    """
    from ..metrics import backward_transfer
    from ..protocol.validity import check_matrix

    rows = []
    for ref in single_task:
        metric = DEFAULT_BASE_METRIC if DEFAULT_BASE_METRIC in ref.R else next(iter(ref.R), None)
        if metric is None or list(ref.concepts) != list(ref.test_concepts):
            continue
        M = np.asarray(ref.R[metric], dtype=np.float64)
        checks = check_matrix(M, ref.concepts, backward_transfer(M), thresholds)
        row = {"dataset": ref.dataset, "detector": ref.detector, "seed": ref.seed, "metric": metric}
        row.update({c.name: c.verdict for c in checks})
        row["details"] = (
            " · ".join(f"{c.name}: {c.summary}" for c in checks if c.verdict != "PASS") or "–"
        )
        rows.append(row)
    return pd.DataFrame(rows)


def validity_section(single_task: Sequence[RunResult]) -> str | None:
    """The report's "Scenario validity" section from the single-task references, or None."""
    table = validity_table(single_task)
    if table.empty:
        return None
    from ..protocol.validity import Thresholds

    th = Thresholds()
    legend = (
        "<p class='legend'>From each single-task matrix M (a fresh detector per concept, scored on every "
        f"concept; the <code>single_task</code> reference): <em>feasible</em> every M[j, j] &ge; "
        f"{th.feasible_min:g}; <em>non_trivial</em> not every cell &ge; {th.trivial_ceiling:g}; "
        f"<em>forgetting</em> naive's BWT &lt; {th.forgetting_max:g}; <em>no_redundancy</em> no two "
        f"concepts that a detector trained on either learns equally well (within {th.redundancy_tol:g}). "
        "Point values against thresholds, not significance tests; <code>clad validate SPEC</code> prints "
        "the matrices and takes other thresholds.</p>"
    )
    return legend + frame_html(table)
