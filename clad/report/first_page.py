"""The first page of a report: what was run in one line, the best configuration per scenario, one
box of caveats and the sections that fit whatever the grid (:func:`first_sections`)."""

from __future__ import annotations

from typing import Sequence


from ..defaults import DEFAULT_METRIC
from . import html as H
from .aggregate import dataset_of
from ..metrics import get_metric, scalar_names
from .order_sensitivity import order_key
from .pages import blocks_html, ranking_html, warnings_html, winners_html
from .wording import warning_groups
from .describe import CONFIG_KEYS, MIN_INTERVAL_N, plural
from .headline import ONE_VALUE_LEGEND, ONE_VALUE_MARK, deterministic_caveats, headline_lines
from .block_page import cost_quality_section, leaderboard_section
from .sections import FIRST_PAGE_ROWS, Page, scrolled


def what_was_run(p: Page, n_failed: int) -> str:
    """One line: the grid and its runs (the concept orders of a dataset counted within it: one block)."""

    def count(n: int, name: str) -> str:
        return f"{n} {plural(name) if n != 1 else name}"

    parts = [count(len({getattr(r, k) for r in p.ok}), k) for k in CONFIG_KEYS]
    orders: dict[str, set] = {}
    for r in p.ok:
        orders.setdefault(dataset_of(r), set()).add(order_key(r))
    most = max((len(v) for v in orders.values()), default=0)
    if most > 1:  # the orders of a dataset are that dataset: one block each, its orders within it
        parts[0] = (
            f"{count(len(orders), 'dataset')} (one block each, over up to {most} concept orders)"
            if len(orders) > 1
            else f"1 dataset (one block, over {most} concept orders)"
        )
    counts = " × ".join(parts)
    seeds = sorted({r.seed for r in p.ok})
    shared = sum(1 for r in p.ok if r.shared_from)
    return (
        f"{len(p.results):,} runs: {counts} × {len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
        + (
            f"; {shared} shared (the same computation as another configuration's, computed once)"
            if shared
            else ""
        )
        + (f"; {n_failed} failed" if n_failed else "")
        + "."
    )


def findings_html(p: Page) -> str:
    """The best configuration of each dataset and scenario by the first headline metric of the
    headline base metric (the leaderboard's first), its margin over the next, and what the evidence
    allows (:func:`clad.report.headline.headline_lines`); in a scrolling box when there are many."""
    if p.lb.empty:
        return ""
    metric = next(iter(scalar_names(headline=True)), "continual_average")
    base = p.lb["base_metric"].iloc[0]
    part = p.lb[p.lb["base_metric"] == base]

    def against_baselines(dataset, scenario):
        return _against_baselines(p, dataset, base, scenario, metric)

    lines = headline_lines(part, metric, p.chance, p.results, suffix=against_baselines)
    items = [f"<li>{text}</li>" for text in lines]
    if not items:
        return ""
    from ..metrics.base import base_metric_shown

    label = f"{get_metric(metric).label} ({base_metric_shown(base)})"
    legend = (
        f"<p class='legend'>{H.html.escape(ONE_VALUE_LEGEND)}</p>"
        if any(ONE_VALUE_MARK in item for item in items)
        else ""
    )
    return (
        f"<div class='findings'><p><b>Best per scenario</b> by {H.html.escape(label)} (mean over seeds):</p>"
        + scrolled(f"<ul>{''.join(items)}</ul>", len(items))
        + legend
        + "</div>"
    )


def _against_baselines(p: Page, dataset, base, scenario, metric) -> str:
    """``; N of M beat the best baseline (NAME) by more than noise`` for one scenario of the headline
    (empty without baseline runs)."""
    from .baselines import baseline_detectors, baseline_verdicts

    v = baseline_verdicts(p.lb, baseline_detectors(p.shown), metric)
    if v.empty:
        return ""
    v = v[(v["dataset"] == dataset) & (v["base_metric"] == base) & (v["scenario"] == scenario)]
    if v.empty:
        return ""
    told = v["beats"].notna()
    if not told.any():
        return f"; beside the best baseline ({H.html.escape(str(v['best_baseline'].iloc[0]))}): no interval to tell"
    return (
        f"; {int(v['beats'].eq(True).sum())} of {int(told.sum())} configurations beat the best baseline "
        f"({H.html.escape(str(v['best_baseline'].iloc[0]))}) by more than noise"
    )


#: most caveats the first page's box lists (the others are on the details page)
MAX_CAVEATS = 8


def caveat_box(messages: Sequence[str]) -> str:
    """Every caveat in one box (repeated ones once; beyond :data:`MAX_CAVEATS`, a link to the rest)."""
    unique = list(dict.fromkeys(messages))
    if not unique:
        return ""
    more = len(unique) - MAX_CAVEATS
    return (
        "<div class='message'><b>Read with care</b><ul>"
        + "".join(f"<li>{H.html.escape(m)}</li>" for m in unique[:MAX_CAVEATS])
        + (f"<li><a href='details.html#caveats'>{more} more</a></li>" if more > 0 else "")
        + "</ul></div>"
    )


def caveats_of(p: Page) -> list[str]:
    """The report's messages, the statistics' messages said once, and what the data says."""
    out = [
        m
        for m in p.report.messages
        if ": " not in m or not any(m.startswith(c.title) for c in p.report.comparisons)
    ]
    said = []
    for c in p.report.comparisons:
        if not c.message:
            continue
        if c.paired is not None:
            block = ", ".join(map(str, c.scores.index))
            text = (
                f"Statistics: one independent block ({block}), so no test across datasets is possible; the methods "
                "are compared paired over its seeds, evidence about this data only"
            )
        else:
            text = "Statistics: " + c.message
        said.append(text)
    out.extend(dict.fromkeys(said))
    out.extend(deterministic_caveats(p.shown))
    seeds = len({r.seed for r in p.ok})
    if 0 < seeds < MIN_INTERVAL_N:
        out.append(
            f"{seeds} seed{'s' if seeds > 1 else ''}: too few for intervals, so no value is marked best; "
            f"the tooltips give the values (run {MIN_INTERVAL_N} seeds or more for intervals)"
        )
    return out


def first_sections(
    p: Page, rankings, tables, label: str, blocks: list[tuple[str, int]], names: dict[str, str]
):
    """The first page's sections: the ranking across blocks, the per-block winners, the compact
    leaderboard when it fits, the cost–quality figure, the block pages and the warnings."""
    out = []
    if len(blocks) > 1 and any(not r.table.empty or r.missing for r in rankings):
        out.append(("ranking", "Ranking across blocks", ranking_html(rankings, tables, label)))
        base = p.lb["base_metric"].iloc[0] if not p.lb.empty else DEFAULT_METRIC
        block_of = {r.dataset: dataset_of(r) for r in p.ok}
        winners = winners_html(
            rankings, tables, p.chance, p.headline_metric, base, label, names, block_of
        )
        out.append(("winners", "Best per block", winners))
    if len(p.lb) <= FIRST_PAGE_ROWS:  # a small grid: the whole compact leaderboard fits
        out.extend(leaderboard_section(p))
    out.extend(cost_quality_section(p))
    out.append(("blocks", "Blocks", blocks_html(blocks, names)))
    n_runs = sum(1 for r in p.results if r.warnings)
    out.append(("warnings", "Warnings", warnings_html(warning_groups(p.results), n_runs, most=5)))
    return out
