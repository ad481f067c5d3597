"""A block's page (one per dataset label: :data:`BLOCK_SECTIONS`) and the leaderboard page: the
leaderboard, R heatmaps, learning curves, per-concept forgetting and cost of the block's runs, and
the tables written beside the pages (``leaderboard.{csv,md,tex}``, ``chance.csv``)."""

from __future__ import annotations

from . import html as H
from .figure_data import forgetting_table, learning_curves
from ..metrics import get_metric, scalar_names
from ..metrics.base import base_metric_shown
from .cost import cost_section
from .figures import blocks_section, heatmap_section
from .pages import label_of
from .tables import cost_html, leaderboard_compact_html, leaderboard_html
from .table_formats import leaderboard_latex, leaderboard_markdown
from .sections import FIRST_PAGE_ROWS, Page, scrolled


def write_tables(p: Page) -> None:
    p.write("leaderboard.csv", p.lb, "csv")
    p.write("leaderboard.md", leaderboard_markdown(p.lb, p.chance), "md")
    p.write("leaderboard.tex", leaderboard_latex(p.lb, p.chance, p.latex_columns), "tex")
    # each continual metric of the chance matrices, per dataset, base metric and scenario
    if not p.chance.empty:
        p.write("chance.csv", p.chance)


def leaderboard_section(p: Page):
    """The compact leaderboard (every base metric side by side, chance rows), the whole of it
    when it fits the first page, else on the block pages."""
    if p.lb.empty:
        return [("leaderboard", "Leaderboard", H.message("no finished run: nothing to rank"))]
    from .baselines import baseline_legend, baseline_verdicts, baseline_detectors
    from .thresholds import threshold_legend

    main = (
        threshold_legend(p.shown)
        + baseline_legend(baseline_verdicts(p.lb, baseline_detectors(p.shown)))
        + scrolled(
            leaderboard_compact_html(p.lb, p.chance, metrics=scalar_names(headline=True)),
            p.lb.groupby(["dataset", "base_metric"]).size().max(),
        )
    )
    return [
        (
            "leaderboard",
            "Leaderboard",
            main + "<p class='legend'>Every metric of every configuration: "
            f"<a href='{p.prefix}leaderboard.html'>the leaderboard page</a> (sortable, filterable) and "
            f"<a href='{p.prefix}leaderboard.csv'>leaderboard.csv</a> (also .md and .tex).</p>",
        )
    ]


def leaderboard_page(p: Page):
    """The leaderboard page: one sortable, filterable table of every configuration, block and base
    metric (the headline metrics and the cost), and every metric's tables when they are few."""
    if p.lb.empty:
        return [("leaderboard", "Leaderboard", H.message("no finished run: nothing to rank"))]
    metrics = [m for m in scalar_names(headline=True) if f"{m}_mean" in p.lb]
    keys = ["dataset", "base_metric", "scenario", "strategy", "detector"]
    head = (
        "".join(f"<th>{H.html.escape(k.replace('_', ' '))}</th>" for k in keys)
        + "".join(
            f"<th data-sort-method='number'>{H.html.escape(get_metric(m).label)}</th>"
            for m in metrics
        )
        + (
            "<th data-sort-method='number'>fit + score s per step</th><th data-sort-method='number'>runs</th>"
        )
    )
    rows = []
    # the columns read, as lists of plain values: one look-up per column, not one per row
    read = [
        *keys,
        *(f"{m}_{s}" for m in metrics for s in ("mean", "std")),
        "fit_seconds_mean",
        "score_seconds_mean",
        "runs",
    ]
    columns = {c: p.lb[c].tolist() for c in dict.fromkeys(read) if c in p.lb.columns}
    for i in range(len(p.lb)):
        d = {c: v[i] for c, v in columns.items()}
        cells = [
            f"<td>{H.html.escape(base_metric_shown(d[k]) if k == 'base_metric' else str(d[k]))}</td>"
            for k in keys
        ]
        for m in metrics:
            mean, std = d[f"{m}_mean"], d[f"{m}_std"]
            text = (
                "n/a" if mean != mean else f"{mean:.3f}" + ("" if std != std else f" ± {std:.3f}")
            )
            cells.append(f"<td data-sort='{-1e9 if mean != mean else mean:.6f}'>{text}</td>")
        sec = d.get("fit_seconds_mean", float("nan")) + d.get("score_seconds_mean", float("nan"))
        cells.append(
            f"<td data-sort='{-1 if sec != sec else sec:.6f}'>{'n/a' if sec != sec else f'{sec:.3g}'}</td>"
        )
        cells.append(f"<td>{d['runs']}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    table = (
        f"<table id='leaderboard-all' class='table rows sortable'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    legend = (
        "<p class='legend'>One row per block (dataset), base metric, scenario, strategy and detector: mean ± std "
        "over seeds. Click a column to sort, type to filter. Every metric, with intervals and counts, is in "
        "<a href='leaderboard.csv'>leaderboard.csv</a> (also <a href='leaderboard.md'>.md</a> and "
        "<a href='leaderboard.tex'>.tex</a>).</p>"
    )
    out = legend + H.table_tools("leaderboard-all", len(rows), table)
    if len(p.lb) <= FIRST_PAGE_ROWS * 3:
        out += H.details(
            "Every metric, one table per block and base metric", leaderboard_html(p.lb, p.chance)
        )
    return [("leaderboard", "Leaderboard", out)]


def _cost_section(p: Page):
    first = p.lb[p.lb["base_metric"] == p.lb["base_metric"].iloc[0]] if not p.lb.empty else p.lb
    table = cost_html(first) if not p.lb.empty else None
    if table is not None:
        table = scrolled(table, len(first))
    figures = cost_section(p.shown, p.figs)
    if table is None and figures is None:
        return []
    legend = (
        "<p class='legend'>Seconds per training step spent learning (fit) and scoring the test concepts "
        "(score), peak memory (the rise of the process's resident set size above the run's start) and "
        "training rows kept; mean ± std over seeds, measured on this machine at this time: compare within "
        "this report. A configuration shared by several scenarios was computed once and appears once.</p>"
    )
    return [
        (
            "cost",
            "Cost",
            legend + (table or "") + (H.details("Cost figures", figures) if figures else ""),
        )
    ]


def cost_quality_section(p: Page):
    """One figure: quality against fit + score seconds per configuration, the Pareto front marked."""
    from .costquality import cost_quality_chart, cost_quality_table

    if p.lb.empty:
        return []
    metric = p.headline_metric
    base = p.lb["base_metric"].iloc[0]
    higher = get_metric(metric).higher_is_better
    table = cost_quality_table(p.lb, metric, base, higher)
    if table.empty or table["seconds"].isna().all():
        return []
    label = label_of(metric, base)
    spec, height = cost_quality_chart(table, label)
    mark = p.figs.chart(
        spec,
        height,
        "Cost and quality",
        f"quality against compute: {label}",
        "cost_quality",
        metric,
        base,
    )
    front = table[table["pareto"]]
    legend = (
        "<p class='legend'>Who wins at equal compute: each configuration's mean over blocks against its fit + "
        f"score seconds per training step; {len(front)} of {len(table)} configurations are on the Pareto front "
        "(no other both cheaper and better). Measured on this machine at this time.</p>"
    )
    return [("cost-quality", "Cost and quality", legend + mark)]


def _curves_section(p: Page):
    # the figures draw mean ± std: no interval is computed for them
    return [
        (
            "curves",
            "Learning curves",
            blocks_section(learning_curves(p.shown, with_intervals=False), p.figs, "curves"),
        )
    ]


def _forgetting_section(p: Page):
    table = forgetting_table(p.shown, with_intervals=False)
    html_part = blocks_section(table, p.figs, "forgetting")
    return [("forgetting", "Per-concept forgetting", H.details("Forgetting figures", html_part))]


def _heatmaps_section(p: Page):
    return [("heatmaps", "R heatmaps", heatmap_section(p.shown, p.figs, p.report.messages))]


#: the sections of a block's page (one per dataset label), in order
BLOCK_SECTIONS = (
    leaderboard_section,
    _heatmaps_section,
    _curves_section,
    _forgetting_section,
    _cost_section,
)
