"""Every configuration beside the best baseline: does it beat it by more than noise?

The baselines are detectors run like any method (:mod:`clad.detectors.baselines`: ``random_scores``
and the simple baselines of time series). :func:`baseline_verdicts` compares, per dataset, base
metric and scenario, each other configuration's mean (a continual metric over seeds) with the
best baseline's: it *beats* it when its 95 % interval lies wholly on the better side of the
baseline's interval, does *not* when the intervals overlap or it is worse, and cannot be told
without intervals (fewer than 3 seeds). :func:`baseline_section` is the page's section and
:func:`baseline_legend` the line under the leaderboard.
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import pandas as pd

from ..defaults import BASELINES, DEFAULT_METRIC
from ..metrics import get_metric
from ..results.record import RunResult

__all__ = ["baseline_detectors", "baseline_verdicts", "baseline_section", "baseline_legend"]

_GROUP = ["dataset", "base_metric", "scenario"]


def baseline_detectors(runs: Sequence[RunResult]) -> set[str]:
    """The detector labels of ``runs`` that are named baselines."""
    return {
        r.detector
        for r in runs
        if ((r.config or {}).get("detector") or {}).get("name") in BASELINES
    }


def baseline_verdicts(
    lb: pd.DataFrame, baselines: set[str], metric: str = DEFAULT_METRIC
) -> pd.DataFrame:
    """Per configuration that is not a baseline: its mean and interval of ``metric``, the best
    baseline (by mean) of its dataset, base metric and scenario with its mean and interval, and
    ``beats``: True, False, or None when either has no interval.

    >>> lb = pd.DataFrame({"dataset": ["d"] * 3, "base_metric": ["roc_auc"] * 3, "scenario": ["s"] * 3,
    ...                    "detector": ["random_scores", "iforest", "lof"], "strategy": ["naive"] * 3,
    ...                    "continual_average_mean": [0.5, 0.8, 0.52], "continual_average_ci_low": [0.45, 0.75, 0.47],
    ...                    "continual_average_ci_high": [0.55, 0.85, 0.57]})
    >>> baseline_verdicts(lb, {"random_scores"})[["detector", "beats"]].values.tolist()
    [['iforest', True], ['lof', False]]
    """
    cols = [f"{metric}_mean", f"{metric}_ci_low", f"{metric}_ci_high"]
    if lb.empty or not baselines or any(c not in lb for c in cols):
        return pd.DataFrame()
    higher = get_metric(metric).higher_is_better
    rows = []
    for key, part in lb.groupby(_GROUP, sort=False):
        base = part[part["detector"].isin(baselines) & part[cols[0]].notna()]
        if base.empty:
            continue
        best = base.loc[base[cols[0]].idxmax() if higher else base[cols[0]].idxmin()]
        for _, row in part[~part["detector"].isin(baselines)].iterrows():
            mean, low, high = (row[c] for c in cols)
            b_low, b_high = best[cols[1]], best[cols[2]]
            if not all(np.isfinite(v) for v in (low, high, b_low, b_high)):
                beats = None
            else:
                beats = bool(low > b_high) if higher else bool(high < b_low)
            rows.append(
                {
                    **dict(zip(_GROUP, key)),
                    "detector": row["detector"],
                    "strategy": row["strategy"],
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "best_baseline": best["detector"],
                    "baseline_mean": best[cols[0]],
                    "baseline_ci_low": b_low,
                    "baseline_ci_high": b_high,
                    "beats": beats,
                }
            )
    return pd.DataFrame(rows)


def _verdict(v) -> str:
    return (
        "yes"
        if v is True
        else ("no" if v is False else "cannot tell (no interval: fewer than 3 seeds)")
    )


def baseline_legend(verdicts: pd.DataFrame) -> str:
    """One line under the leaderboard: the configurations that do not beat the best baseline by more than noise."""
    if verdicts.empty:
        return ""
    no = verdicts[verdicts["beats"].eq(False)]
    unknown = int(verdicts["beats"].isna().sum())
    names = sorted({f"{r.detector} + {r.strategy}" for r in no.itertuples()})
    text = (
        f"{len(no)} of {len(verdicts)} configuration cells do not beat the best baseline by more than noise"
        + (f" ({', '.join(names)})" if names else "")
        + (f"; {unknown} cannot be told" if unknown else "")
        + " (see Baselines)."
    )
    return f"<p class='legend'>{html.escape(text)}</p>"


def baseline_section(verdicts: pd.DataFrame, metric: str = DEFAULT_METRIC) -> str | None:
    """The page's section: each configuration beside the best baseline (None without baselines)."""
    if verdicts.empty:
        return None
    from .tables import frame_html

    shown = verdicts.assign(beats=verdicts["beats"].map(_verdict))
    return (
        "<p class='legend'>Each configuration's "
        + html.escape(get_metric(metric).label)
        + " beside the best "
        "baseline of its dataset, base metric and scenario (mean over seeds with its 95 % interval): it beats "
        "the baseline when its interval lies wholly above the baseline's.</p>" + frame_html(shown)
    )
