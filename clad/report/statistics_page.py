"""The statistics page (:data:`STATISTICS_SECTIONS`): every statistical comparison with its verdict,
the tables a paper prints, and the spread of results over concept orders."""

from __future__ import annotations

import warnings

import pandas as pd

from . import html as H
from .describe import STATS
from .order_sensitivity import order_sensitivity
from .wording import result_text
from .stats import DEFAULT_BLOCKS, Comparison, StatisticsWarning, compare
from .stats_html import comparison_html, statistics_frame, statistics_intro, statistics_rows
from .tables import frame_html
from .sections import Page


def _statistics_section(p: Page):
    stat_rows, stat_html, start = [], [], len(p.report.comparisons)
    base_metrics = list(dict.fromkeys(p.lb["base_metric"])) if not p.lb.empty else []
    for field_name in p.by:
        for base in base_metrics:
            for metric in p.stat_metrics:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = compare(
                        p.ok,
                        by=field_name,
                        metric=metric,
                        base_metric=base,
                        blocks=p.blocks,
                        alpha=p.alpha,
                    )
                p.report.comparisons.append(c)
                if c.message and c.statistic is None and c.wilcoxon_holm is None:
                    p.report.messages.append(f"{c.title}: {c.message}")
                    warnings.warn(f"{c.title}: {c.message}", StatisticsWarning, stacklevel=3)
                stat_rows.extend(statistics_rows(c))
                stat_rows.extend(_paired_rows(c))
                stat_html.append(
                    H.details(f"{c.title}: {verdict_text(c)}", comparison_html(c, p.figs))
                )
    p.write("statistics.csv", statistics_frame(stat_rows))
    paper = _paper_tables(p, p.report.comparisons[start:])
    intro = statistics_intro(p.blocks, p.alpha, tuple(p.blocks) == DEFAULT_BLOCKS)
    return [
        (
            "statistics",
            "Statistical comparison",
            intro + paper + "<p class='legend'>Open a comparison for its "
            "tables and figures.</p>" + "\n".join(stat_html),
        )
    ]


def _paper_tables(p: Page, comparisons) -> str:
    """``blocks.csv`` (each block's score per method: the tests' input) and the main tables of a
    paper (``main_table.tex``, ``main_table.md``: methods x datasets with a mean-rank column and the
    test), and the line that links them."""
    from .paper import blocks_frame, main_table_latex, main_table_markdown

    p.write("blocks.csv", blocks_frame(comparisons), "blocks_csv")
    p.write("main_table.tex", main_table_latex(comparisons), "main_table_tex")
    p.write("main_table.md", main_table_markdown(comparisons), "main_table_md")
    return (
        "<p class='legend'>For a paper: <a href='main_table.tex'>main_table.tex</a> (booktabs) and "
        "<a href='main_table.md'>main_table.md</a>, each comparison's methods × datasets with the mean "
        "rank and the test; <a href='blocks.csv'>blocks.csv</a>, every block's score per method, from "
        "which Friedman's test can be recomputed (the block score is defined in the statistics guide).</p>"
    )


def _paired_rows(c: Comparison) -> list[dict]:
    """Rows of ``statistics.csv`` (``level`` = "paired over seeds") for a one-block comparison: per
    pair the mean difference over seeds, its std, count, interval and in how many seeds ``a`` was better."""
    if c.paired is None or c.paired.empty:
        return []
    key = {
        "level": "paired over seeds",
        "by": c.by,
        "metric": c.metric,
        "base_metric": c.base_metric,
    }
    return [
        {
            **key,
            "a": row["a"],
            "b": row["b"],
            **{f"difference_{k}": row[f"difference_{k}"] for k in STATS},
            "a_better": int(row["a_better"]),
        }
        for _, row in c.paired.iterrows()
    ]


def verdict_text(c: Comparison) -> str:
    """One line from the comparison's verdict (:func:`clad.report.stats.comparison_verdict`): its
    status, why when nothing was tested, and the best method by average rank (a description)."""
    v = c.verdict
    out = f"verdict: {v.status}"
    if v.status == "not tested" and v.reason:
        reason = str(v.reason)
        reason = (
            reason.split("): ")[0] + ")" if "): " in reason else reason.split(";")[0].split(". ")[0]
        )
        out += f": {reason.strip()}"
    elif v.test:
        out += f" ({result_text(v.test)})"
    if v.best:
        best = v.best if isinstance(v.best, str) else ", ".join(map(str, v.best))
        out += f"; best by average rank: {best} (a description, not a test)"
    return out


def _orders_html(table: pd.DataFrame) -> str:
    legend = (
        "<p class='legend'>Configurations run over several concept orders: each metric averaged over the "
        "seeds of one order, then described over the orders (how many orders have a value, min, max, range "
        "= max − min, std over orders). The spread over seeds is in the leaderboard. The heatmaps below are "
        "drawn per order, with the test concepts in one canonical order (sorted names); learning curves "
        "are averaged step by step, forgetting concept by concept, over every order and seed.</p>"
    )
    shown = table.copy()
    for c in shown.columns:
        if shown[c].dtype.kind == "f" and not c.endswith("_orders"):
            shown[c] = [f"{v:.3f}" if v == v else "n/a" for v in shown[c]]
    return legend + frame_html(shown)


def _orders_section(p: Page):
    orders_table = order_sensitivity(p.ok)
    if orders_table.empty:
        return []
    p.write("order_sensitivity.csv", orders_table)
    return [("orders", "Order sensitivity", _orders_html(orders_table))]


#: the sections of the statistics page
STATISTICS_SECTIONS = (_statistics_section, _orders_section)
