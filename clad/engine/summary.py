"""End-of-benchmark summaries: a view of the leaderboard (:func:`clad.report.leaderboard.leaderboard`).

:func:`summary_table` is the leaderboard, one row per dataset, scenario, base metric, detector and
strategy, with its columns named by the metrics' declared labels: for every scalar metric ``M``
(``CA``, ``BWT``, ``FWT``, ...) ``M_mean``, ``M_std`` (sample, ``ddof=1``), ``M_n`` (values, NaN
left out: a count of values, not of runs), ``M_ci_low``/``M_ci_high`` (95 % Student-t
interval of the mean, cut to the metric's range; NaN with fewer than 3 values), ``M_values``, ``runs``
and ``computations`` (distinct computations among the runs: the values each metric counts). :func:`write_summaries` writes it as ``summary.csv`` (every
metric) and ``summary.md`` (the headline metrics, one Markdown table per scenario), atomically;
:func:`format_summary` is the text printed at the end of ``clad run``.

>>> from clad.results.record import RunResult
>>> runs = [RunResult("d", "s", "naive", "if", seed, metrics={"roc_auc": {
...     "continual_average": ca, "backward_transfer": bwt, "forward_transfer": 0.5}})
...     for seed, ca, bwt in [(0, 0.8, -0.1), (1, 0.6, None), (2, 0.7, None)]]
>>> t = summary_table(runs)
>>> t[["CA_mean", "CA_std", "CA_n", "BWT_mean", "BWT_n", "runs"]].round(4).values.tolist()
[[0.7, 0.1, 3.0, -0.1, 1.0, 3.0]]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from ..results.record import RunResult, atomic_write_text
from ..metrics import get_metric, scalar_names

__all__ = [
    "summary_table",
    "format_summary",
    "display_table",
    "markdown_table",
    "write_summaries",
    "KEYS",
]

#: the grouping columns of the summary
KEYS = ("dataset", "scenario", "base_metric", "detector", "strategy")


def summary_table(results: Iterable[RunResult]):
    """The leaderboard of ``results`` (failed runs left out; a configuration that is the same
    computation as another shown once, labelled with both, see
    :func:`clad.report.aggregate.merge_shared`) with columns named by metric labels."""
    from ..report.aggregate import merge_shared
    from ..report.leaderboard import leaderboard
    from ..report.describe import STATS

    lb = leaderboard(merge_shared(results))
    names = scalar_names()
    renamed = {f"{m}_{s}": f"{get_metric(m).label}_{s}" for m in names for s in (*STATS, "values")}
    return lb.rename(columns=renamed)[[*KEYS, "runs", "computations", *renamed.values()]]


def display_table(table):
    import pandas as pd

    from ..report.tables import stats_text

    from ..metrics.base import base_metric_shown

    shown = pd.DataFrame(
        {k: table[k] for k in ("dataset", "base_metric", "strategy", "detector", "runs")}
    )
    shown["base_metric"] = shown["base_metric"].map(base_metric_shown)
    for m in scalar_names(headline=True):
        lab = get_metric(m).label
        shown[lab] = [
            t
            + (f" [{lo:.3f}, {hi:.3f}]" if lo == lo and hi == hi else "")
            + (f" n={int(n)}" if n == n else "")
            for t, lo, hi, n in zip(
                stats_text(table, lab),
                table[f"{lab}_ci_low"],
                table[f"{lab}_ci_high"],
                table[f"{lab}_n"],
            )
        ]
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

    lines = [
        "| " + " | ".join(cell(c) for c in df.columns) + " |",
        "|" + "|".join("---" for _ in df.columns) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


#: the width the end-of-run summary fits in
SUMMARY_COLUMNS = 100


def format_summary(table, width: int = SUMMARY_COLUMNS) -> str:
    """The summary as text that fits ``width`` columns: per dataset and base metric, one line per
    scenario, strategy and detector with the headline metrics as ``mean ± std`` (the full tables,
    every metric with its interval, are in ``summary.md`` and ``summary.csv``)."""
    if len(table) == 0:
        return "no finished runs"
    heads = [get_metric(m).label for m in scalar_names(headline=True)]
    lines = []
    for (dataset, base), sub in table.groupby(["dataset", "base_metric"], sort=False):
        from ..metrics.base import base_metric_shown

        lines.append(f"{dataset} — {base_metric_shown(base)} (mean ± std over seeds)")
        cells = [
            [f"{st} + {de}"] + [_cell(row, h) for h in heads]
            for st, de, row in zip(sub["strategy"], sub["detector"], (r for _, r in sub.iterrows()))
        ]
        widths = [max(len(c[k]) for c in cells + [["", *heads]]) for k in range(len(heads) + 1)]
        room = width - 4 - sum(widths[1:]) - 2 * len(heads)
        widths[0] = max(12, min(widths[0], room))
        lines.append(
            "    " + " " * widths[0] + "".join(f"  {h:>{w}}" for h, w in zip(heads, widths[1:]))
        )
        for scenario, group in sub.groupby("scenario", sort=False):
            lines.append(f"  {_shorten(str(scenario), width - 2)}")
            for idx in group.index:
                k = list(sub.index).index(idx)
                row = cells[k]
                lines.append(
                    "    "
                    + f"{_shorten(row[0], widths[0]):<{widths[0]}}"
                    + "".join(f"  {c:>{w}}" for c, w in zip(row[1:], widths[1:]))
                )
        lines.append("")
    return "\n".join(lines).rstrip()


def _cell(row, lab: str) -> str:
    from ..report.tables import cell_text

    return cell_text(row.get(f"{lab}_mean"), row.get(f"{lab}_std"))


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _order_section(folder: Path, results) -> list[str]:
    """When configurations ran over several concept orders: ``order_sensitivity.csv`` and the
    Markdown lines of its table (:func:`clad.report.order_sensitivity.order_sensitivity`)."""
    from ..report.order_sensitivity import order_sensitivity

    table = order_sensitivity(results)
    if table.empty:
        return []
    atomic_write_text(folder / "order_sensitivity.csv", table.to_csv(index=False))
    return [
        "## Order sensitivity",
        "",
        "Each metric averaged over the seeds of one concept order, then described "
        "over the orders (count, min, max, range, std); also in order_sensitivity.csv.",
        "",
        markdown_table(table.round(4)),
        "",
    ]


def write_summaries(
    folder: str | os.PathLike, results: Iterable[RunResult], title: str = "benchmark"
):
    """Write ``summary.csv`` and ``summary.md`` into ``folder``; returns the table."""
    from ..report.tables import LEGEND

    folder = Path(folder)
    results = list(results)
    table = summary_table(results)
    atomic_write_text(folder / "summary.csv", table.to_csv(index=False))
    md = [
        f"# {title}: summary",
        "",
        f"{LEGEND[0].upper()}{LEGEND[1:]}; every metric is in summary.csv.",
        "",
    ]
    if len(table) == 0:
        md.append("No finished runs.")
    for scenario, sub in table.groupby("scenario", sort=False):
        md += [f"## {scenario}", "", markdown_table(display_table(sub)), ""]
    md += _order_section(folder, results)
    atomic_write_text(folder / "summary.md", "\n".join(md).rstrip() + "\n")
    return table
