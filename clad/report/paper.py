r"""The tables a paper prints, from the statistics' own evidence.

* :func:`blocks_frame` — ``blocks.csv``: one row per comparison, block and method with the block
  score the tests rank (:mod:`clad.report.blocks`), its number of seeds and its rank in the block,
  so that Friedman's test can be recomputed from one file.
* :func:`main_table` — the main table of a paper: methods (rows, best average rank first) x
  datasets (columns), each cell the block score with the half-width of its 95 % Student-t interval
  over seeds (none below 3 seeds), a mean-rank column, and under it the test: Friedman's chi-square
  and p-value, and Nemenyi's critical difference of average ranks when there are at least 3
  blocks. :func:`main_table_latex` writes it with booktabs rules, :func:`main_table_markdown` as a
  Markdown table; the best cell of each column is bold unless it ties the next as printed.

**The block score**, exactly: for a method ``m`` and a block ``b`` (a dataset, over every concept
order it ran in), take each finished run of ``m`` on ``b`` and its value of the metric; for each
seed, average the runs of each scenario setting (over the other fields: the strategies when
comparing detectors, the concept orders), then average those over the block's scenario settings
(settings with identical R for every method and seed counted once); the block score is the mean of
those per-seed values over the seeds. ``docs/guides/statistics.md`` works an example through.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .aggregate import value_bounds
from .leaderboard import PRINTED_DIGITS
from .describe import MIN_INTERVAL_N, interval, plural
from .posthoc import critical_difference
from .stats import Comparison

__all__ = ["blocks_frame", "main_table", "main_table_latex", "main_table_markdown"]


def blocks_frame(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """``blocks.csv``: per comparison (``by``, ``metric``, ``base_metric``), block and method, the
    block ``score`` (what the tests rank), ``seeds`` (values over seeds it is the mean of) and
    ``rank`` (1 = best in the block; ties share their mean rank, as Friedman ranks them)."""
    rows = []
    for c in comparisons:
        if c.scores.empty:
            continue
        seeds, key = _seed_counts(c), (c.by, c.metric, c.base_metric)
        for block, row in c.scores.iterrows():
            for method, score in row.items():
                rank = (
                    c.ranks.at[block, method]
                    if block in c.ranks.index and method in c.ranks.columns
                    else np.nan
                )
                n = seeds.get((block, method), 0)
                rows.append([*key, str(block), str(method), float(score), n, float(rank)])
    return pd.DataFrame(
        rows, columns=["by", "metric", "base_metric", "block", "method", "score", "seeds", "rank"]
    )


def _seed_counts(c: Comparison) -> dict:
    if c.per_seed is None or c.per_seed.empty:
        return {}
    counts = c.per_seed.notna().groupby(level=0, sort=False).sum()
    return {(b, m): int(counts.at[b, m]) for b in counts.index for m in counts.columns}


def _cell(c: Comparison, block, method, bounds) -> tuple[float, float]:
    """A block score and the half-width of its interval over seeds (NaN below 3 seeds)."""
    score = float(c.scores.at[block, method])
    if c.per_seed is None or block not in c.per_seed.index.get_level_values(0):
        return score, float("nan")
    values = c.per_seed.xs(block, level=0)[method].dropna().to_numpy()
    if values.size < MIN_INTERVAL_N:
        return score, float("nan")
    low, high = interval(values, bounds)
    return score, float(max(score - low, high - score))


def main_table(c: Comparison) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(text table: methods x blocks plus ``mean rank``; marks: True on each column's best cell;
    the caption's test line) of comparison ``c`` (see the module)."""
    if c.scores.empty:
        return pd.DataFrame(), pd.DataFrame(), "no block has every method"
    bounds = value_bounds(c.metric, c.base_metric)
    methods = [str(m) for m in c.average_ranks.index]
    blocks = [str(b) for b in c.scores.index]
    text = pd.DataFrame(index=methods, columns=[*blocks, "mean rank"], dtype=object)
    marks = pd.DataFrame(False, index=methods, columns=text.columns)
    for block in c.scores.index:
        cells = {m: _cell(c, block, m, bounds) for m in c.scores.columns}
        for m, (score, half) in cells.items():
            text.at[str(m), str(block)] = f"{score:.{PRINTED_DIGITS}f}" + (
                f" ± {half:.{PRINTED_DIGITS}f}" if half == half else ""
            )
        marks.loc[:, str(block)] = _best(
            pd.Series({str(m): v for m, (v, _) in cells.items()}), c.higher_is_better
        )
    for m, r in c.average_ranks.items():
        text.at[str(m), "mean rank"] = f"{r:.2f}"
    marks.loc[:, "mean rank"] = _best(c.average_ranks.rename(index=str).astype(float), False)
    return text, marks, _test_line(c)


def _best(values: pd.Series, higher: bool) -> pd.Series:
    """True on the best value of ``values`` unless the next one prints the same (a tie)."""
    ok = values.dropna()
    out = pd.Series(False, index=values.index)
    if len(ok) < 2:
        return out
    order = ok.sort_values(ascending=not higher, kind="stable")
    first, second = order.iloc[0], order.iloc[1]
    if f"{first:.{PRINTED_DIGITS}f}" != f"{second:.{PRINTED_DIGITS}f}":
        out[order.index[0]] = True
    return out


def _test_line(c: Comparison) -> str:
    """What the test across blocks says, for the caption."""
    n, k = c.n_blocks, c.n_methods
    head = f"{n} block{'s (datasets)' if n != 1 else ' (a dataset)'}, {k} {plural(c.by)}"
    # two methods: the Wilcoxon signed-rank test over blocks
    if c.test is not None and c.statistic is None:
        return f"{head}; {c.test.name} = {c.test.statistic:.3g}, p = {c.test.pvalue:.3g} ({c.test.method})"
    if c.statistic is None or c.test is None or n < 3:
        return f"{head}; no test across blocks ({c.message or 'too few blocks'})"
    line = f"{head}; Friedman chi2 = {c.statistic:.3f}, p = {c.pvalue:.3g} ({c.test.method})"
    return (
        line
        + f"; Nemenyi critical difference of mean ranks CD = {critical_difference(n, k, c.alpha):.3f} "
        f"(alpha = {c.alpha:g})"
    )


def _caption(c: Comparison) -> str:
    return (
        f"{plural(c.by)} by {c.metric} ({c.base_metric}): block score (mean over seeds) ± half-width of its 95 % "
        f"Student-t interval over seeds (none below {MIN_INTERVAL_N} seeds); bold: best of its column"
    )


def main_table_markdown(comparisons: Sequence[Comparison]) -> str:
    """Every comparison's :func:`main_table` as a Markdown table with its caption and test line."""
    out = ["# Main tables", ""]
    for c in comparisons:
        text, marks, test = main_table(c)
        out += [f"## {plural(c.by)} by {c.metric} ({c.base_metric})", "", _caption(c) + ".", ""]
        if text.empty:
            out += [test, ""]
            continue
        cols = [c.by, *text.columns]
        out.append("| " + " | ".join(_md(x) for x in cols) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * len(text.columns)) + "|")
        for method, row in text.iterrows():
            cells = [f"**{v}**" if marks.at[method, col] else str(v) for col, v in row.items()]
            out.append("| " + " | ".join(_md(x) for x in (method, *cells)) + " |")
        out += ["", test + ".", ""]
    return "\n".join(out)


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def main_table_latex(comparisons: Sequence[Comparison]) -> str:
    r"""Every comparison's :func:`main_table` as a LaTeX ``table`` (booktabs rules, caption, label;
    the test line as the table's note).

    Needs ``\usepackage{booktabs}``."""
    from .table_formats import tex_escape

    out = [r"% clad main tables; they need \usepackage{booktabs} in the preamble", ""]
    for c in comparisons:
        text, marks, test = main_table(c)
        if text.empty:
            continue
        label = f"tab:clad-main-{c.by}-{c.metric}-{c.base_metric}".replace("_", "-")
        head = " & ".join(
            [tex_escape(c.by.capitalize()), *(tex_escape(str(x)) for x in text.columns)]
        )
        rows = []
        for method, row in text.iterrows():
            cells = [
                (r"\textbf{" + tex_escape(str(v)) + "}")
                if marks.at[method, col]
                else tex_escape(str(v))
                for col, v in row.items()
            ]
            rows.append(" & ".join([tex_escape(method), *cells]) + r" \\")
        out += [
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            r"\caption{" + tex_escape(_caption(c)) + "}",
            r"\label{" + label + "}",
            r"\begin{tabular}{l" + "r" * len(text.columns) + "}",
            r"\toprule",
            head + r" \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\par\smallskip\footnotesize " + tex_escape(test) + ".",
            r"\end{table}",
            "",
        ]
    return "\n".join(out)
