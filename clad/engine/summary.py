"""End-of-benchmark summaries: mean ± std over seeds of CA, BWT and FWT.

:func:`summary_table` groups the finished runs by dataset, scenario, base metric, detector and
strategy and gives, for each of continual average (CA), backward transfer (BWT) and forward
transfer (FWT), the mean and the sample standard deviation (``ddof=1``; NaN with one seed) over
seeds, NaN values left out. :func:`write_summaries` writes it as ``summary.csv`` (numbers) and
``summary.md`` (one Markdown table per scenario), atomically; :func:`format_summary` is the text
printed at the end of ``clad run``.

>>> from clad.core.results import RunResult
>>> runs = [RunResult("d", "s", "naive", "if", seed, metrics={"roc_auc": {
...     "continual_average": ca, "backward_transfer": -0.1, "forward_transfer": 0.5}})
...     for seed, ca in [(0, 0.8), (1, 0.6)]]
>>> t = summary_table(runs)
>>> t[["CA_mean", "CA_std", "n_seeds"]].round(4).values.tolist()
[[0.7, 0.1414, 2.0]]
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterable

from ..core.results import RunResult, atomic_write_text

__all__ = ["summary_table", "format_summary", "markdown_table", "write_summaries", "KEYS", "METRICS"]

#: the grouping columns of the summary
KEYS = ("dataset", "scenario", "base_metric", "detector", "strategy")
#: short name -> metric key in RunResult.metrics
METRICS = {"CA": "continual_average", "BWT": "backward_transfer", "FWT": "forward_transfer"}


def summary_table(results: Iterable[RunResult]):
    """A pandas DataFrame: one row per group in :data:`KEYS`, columns ``n_seeds`` and
    ``<M>_mean`` / ``<M>_std`` for M in CA, BWT, FWT (failed runs are left out)."""
    import pandas as pd

    rows = []
    for r in results:
        if not r.ok:
            continue
        for m, vals in r.metrics.items():
            row = {"dataset": r.dataset, "scenario": r.scenario, "base_metric": m, "detector": r.detector,
                   "strategy": r.strategy, "seed": r.seed}
            for short, key in METRICS.items():
                v = vals.get(key)
                row[short] = float("nan") if v is None else float(v)
            rows.append(row)
    columns = list(KEYS) + ["n_seeds"] + [f"{s}_{a}" for s in METRICS for a in ("mean", "std")]
    if not rows:
        return pd.DataFrame(columns=columns)
    df = pd.DataFrame(rows)
    g = df.groupby(list(KEYS), sort=False)
    out = g[list(METRICS)].agg(["mean", "std"])
    out.columns = [f"{m}_{a}" for m, a in out.columns]
    out.insert(0, "n_seeds", g["seed"].nunique())
    return out.reset_index()[columns]


def _pm(mean: float, std: float) -> str:
    if mean is None or math.isnan(mean):
        return "n/a"
    if std is None or math.isnan(std):
        return f"{mean:.3f}"
    return f"{mean:.3f} ± {std:.3f}"


def _display(table):
    import pandas as pd

    shown = pd.DataFrame({k: table[k] for k in ("dataset", "base_metric", "detector", "strategy", "n_seeds")})
    for m in METRICS:
        shown[m] = [_pm(a, b) for a, b in zip(table[f"{m}_mean"], table[f"{m}_std"])]
    return shown


def markdown_table(df) -> str:
    """A GitHub-flavoured Markdown table of a DataFrame (``|`` in cells escaped).

    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"a": [1], "b": ["x|y"]})))
    | a | b |
    |---|---|
    | 1 | x\\|y |
    """
    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in df.columns) + " |",
             "|" + "|".join("---" for _ in df.columns) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def format_summary(table) -> str:
    """The summary as text: one table per scenario, CA / BWT / FWT as ``mean ± std``."""
    if len(table) == 0:
        return "no finished runs"
    parts = []
    for scenario, sub in table.groupby("scenario", sort=False):
        parts.append(f"scenario {scenario}  (mean ± std over seeds)")
        parts.append(_display(sub).to_string(index=False))
        parts.append("")
    return "\n".join(parts).rstrip()


def write_summaries(folder: str | os.PathLike, results: Iterable[RunResult], title: str = "benchmark"):
    """Write ``summary.csv`` and ``summary.md`` into ``folder``; returns the table."""
    folder = Path(folder)
    table = summary_table(results)
    atomic_write_text(folder / "summary.csv", table.to_csv(index=False))
    md = [f"# {title}: summary", "", "Mean ± standard deviation over seeds (NaN values left out).", ""]
    if len(table) == 0:
        md.append("No finished runs.")
    for scenario, sub in table.groupby("scenario", sort=False):
        md += [f"## {scenario}", "", markdown_table(_display(sub)), ""]
    atomic_write_text(folder / "summary.md", "\n".join(md).rstrip() + "\n")
    return table
