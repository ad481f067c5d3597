"""The parts of a report's first page that hold at any grid size, and the pages one click away.

The first page answers what was run, who is best where and what the statistics support in a
fixed size whatever the grid: the headline across blocks (:mod:`clad.report.ranking`: the top
group of each scenario with rank intervals and P(first)), the per-block winners in one compact
table, the ranking table (sortable, filterable, in a scrolling box), the cost–quality figure,
the warnings grouped by cause and the list of drill-down pages (one per block, see
:func:`block_page_name`). Everything else is on the pages it links.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Mapping, Sequence

import pandas as pd

from ..metrics.base import base_metric_shown
from ..metrics import get_metric
from .ranking import MIN_BLOCKS_P_FIRST, Ranking, block_scores, block_winners, rank_stability
from .wording import WarningGroup

__all__ = [
    "block_page_name",
    "block_page_names",
    "headline_html",
    "ranking_html",
    "winners_html",
    "warnings_html",
    "blocks_html",
    "headline_lines",
]


def block_page_name(block: str) -> str:
    """The drill-down page of a block, relative to the report folder.

    >>> block_page_name("synthetic[order=random]")
    'blocks/synthetic-order-random.html'
    """
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", str(block)).strip("-.") or "block"
    return f"blocks/{slug[:120]}.html"


def block_page_names(blocks: Sequence[str]) -> dict[str, str]:
    """Every block's page, one per block: :func:`block_page_name`, and where labels share it (letter
    case aside: some file systems ignore it) the name ends with a hash of the whole label.

    >>> block_page_names(["set a", "set-a", "synthetic"])
    {'set a': 'blocks/set-a--9cb0dea6.html', 'set-a': 'blocks/set-a--956d8ea7.html', 'synthetic': 'blocks/synthetic.html'}
    """
    blocks = list(dict.fromkeys(str(b) for b in blocks))
    plain = {b: block_page_name(b) for b in blocks}
    count: dict[str, int] = {}
    for name in plain.values():
        count[name.lower()] = count.get(name.lower(), 0) + 1
    out = {b: name if count[name.lower()] == 1 else _hashed(name, b) for b, name in plain.items()}
    taken = [n.lower() for n in out.values()]
    if len(set(taken)) < len(taken):  # a hashed name equal to another label's plain name
        out = {b: _hashed(name, b) for b, name in plain.items()}
    return out


def _hashed(name: str, block: str) -> str:
    digest = hashlib.sha256(block.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: -len('.html')]}--{digest}.html"


def _page_of(block: str, pages: Mapping[str, str] | None) -> str:
    return (pages or {}).get(block) or block_page_name(block)


def _e(text) -> str:
    return html.escape(str(text))


def _rank_text(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}–{high}"


def headline_lines(rankings: Sequence[Ranking], label: str) -> list[str]:
    """One sentence per scenario: its top group with rank intervals and P(first), the blocks it
    stands on, and the configurations left out (named, with the blocks they miss)."""
    out = []
    for r in rankings:
        t = r.table
        n = len(r.blocks)
        where = f"{r.scenario} ({n} block{'s' if n != 1 else ''}: {', '.join(r.blocks[:3])}{' …' if n > 3 else ''})"
        if t.empty:
            out.append(f"{where}: no configuration has a value in every block, so none is ranked")
        else:
            top = t[t["configuration"].isin(r.top)]
            columns = ("configuration", "mean", "rank_low", "rank_high", "p_first")
            names = "; ".join(
                f"{c} {m:.3f} (rank {_rank_text(lo, hi)}"
                + (f", P(first) {p:.2f})" if p == p else ")")
                for c, m, lo, hi, p in zip(*(top[k] for k in columns))
            )
            if n == 1:
                best = top.iloc[0]
                out.append(
                    f"{where}: best by {label}: {best['configuration']} {best['mean']:.3f}"
                    + (
                        f", {abs(best['mean'] - t.iloc[1]['mean']):.3f} ahead of {t.iloc[1]['configuration']}"
                        if len(t) > 1
                        else ""
                    )
                )
            else:
                size = len(top)
                out.append(
                    f"{where}: top group by {label}, {size} of {len(t)} configuration{'s' if len(t) != 1 else ''} "
                    f"whose rank interval reaches first place: {names}"
                )
        if r.missing:
            items = sorted(r.missing.items())
            listed = "; ".join(
                f"{c} (no value on {', '.join(b[:2])}{' …' if len(b) > 2 else ''})"
                for c, b in items[:4]
            )
            more = f" and {len(items) - 4} more" if len(items) > 4 else ""
            out.append(
                f"{r.scenario}: left out of the ranking, never averaged over the blocks they have: "
                f"{listed}{more}"
            )
    return out


def headline_html(
    rankings: Sequence[Ranking], label: str, verdicts: Sequence[str], method: str
) -> str:
    """The box at the top of the first page: the headline across blocks (only where there are
    several blocks: with one, the best per scenario is the headline) and the statistics' verdicts."""
    verdict_items = "".join(f"<li>{_e(v)}</li>" for v in verdicts)
    verdict_html = (
        f"<p><b>Do the statistics support a difference?</b></p><ul>{verdict_items}</ul>"
        if verdicts
        else ""
    )
    if not any(len(r.blocks) > 1 for r in rankings):
        return f"<div class='findings headline'>{verdict_html}</div>" if verdicts else ""
    items = "".join(f"<li>{_e(line)}</li>" for line in headline_lines(rankings, label))
    few = all(len(r.blocks) < MIN_BLOCKS_P_FIRST for r in rankings)
    how = f"mean over seeds per block; rank interval from {method}" + (
        f"; no P(first) below {MIN_BLOCKS_P_FIRST} blocks"
        if few
        else f" (P(first) from {MIN_BLOCKS_P_FIRST} blocks on)"
    )
    return (
        "<div class='findings headline'><p><b>Best across blocks</b> by "
        + _e(label)
        + f" ({_e(how)}):</p>"
        f"<ul>{items}</ul>" + verdict_html + "</div>"
    )


def compute_rankings(results, metric: str, base_metric: str) -> tuple[list[Ranking], dict]:
    """The rank stability of every scenario and the block x configuration tables it came from."""
    higher = get_metric(metric).higher_is_better
    tables = block_scores(results, metric, base_metric)
    rankings = [
        rank_stability(t, higher, scenario=s, metric=metric, base_metric=base_metric)
        for s, (t, _) in tables.items()
    ]
    return rankings, tables


def ranking_html(rankings: Sequence[Ranking], tables: dict, label: str) -> str:
    """The ranking table: one row per scenario and configuration (sortable and filterable)."""
    rows = []
    for r in rankings:
        for _, row in r.table.iterrows():
            c, ranks = (
                row["configuration"],
                [int(row[k]) for k in ("rank", "rank_low", "rank_high")],
            )
            rows.append((r, c, row["mean"], *ranks, row["p_first"], len(r.blocks), c in r.top))
        rows += [
            (r, c, float("nan"), None, None, None, float("nan"), len(r.blocks) - len(m), False)
            for c, m in r.missing.items()
        ]
    head = (
        "<thead><tr><th>scenario</th><th>configuration</th><th data-sort-method='number'>"
        + _e(label)
        + " (mean over blocks)</th><th data-sort-method='number'>rank</th><th data-sort-method='number'>"
        "rank interval</th><th data-sort-method='number'>P(first)</th><th data-sort-method='number'>blocks</th>"
        "<th data-sort-method='number'>failed runs</th></tr></thead>"
    )
    body = []
    for r, c, mean, rank, lo, hi, p, blocks, top in rows:
        ranked = rank is not None
        fails = tables[r.scenario][1]
        failed = int(fails[c].sum()) if c in fails else 0
        cells = [
            f"<td>{_e(r.scenario)}</td>",
            f"<td>{'<strong>' + _e(c) + '</strong>' if top else _e(c)}</td>",
            f"<td data-sort='{mean:.6f}'>{mean:.3f}</td>"
            if ranked
            else "<td data-sort='-1'>not ranked</td>",
            f"<td data-sort='{rank}'>{rank}</td>" if ranked else "<td data-sort='99999'></td>",
            f"<td data-sort='{lo + hi / 1e4:.4f}'>{_rank_text(lo, hi)}</td>"
            if ranked
            else "<td data-sort='99999'>missing a block</td>",
            (f"<td data-sort='{p:.4f}'>{p:.2f}</td>" if p == p else "<td data-sort='-1'>—</td>")
            if ranked
            else "<td data-sort='-1'></td>",
            f"<td>{blocks}</td>",
            f"<td>{failed}</td>",
        ]
        body.append(f"<tr>{''.join(cells)}</tr>")
    from .html import table_tools

    table = f"<table id='ranking-table' class='table ranking sortable'>{head}<tbody>{''.join(body)}</tbody></table>"
    legend = (
        "<p class='legend'>Each configuration (strategy + detector within a scenario) scored on every block "
        "(its mean over seeds), then ranked by its mean over the blocks (rank 1 = best). The rank interval "
        "holds 95 % of its ranks when the blocks are resampled with replacement, the same blocks for every "
        "configuration; P(first) is the share of those resamples where it ranks first (ties share the better "
        "rank, so the shares can add up to more than 1; — with fewer than "
        + str(MIN_BLOCKS_P_FIRST)
        + " blocks, where a few "
        "multisets of a few datasets are no probability). <b>Bold</b>: the top group, whose rank interval "
        "reaches first place. A configuration without a value in some block is not ranked: it is listed with "
        "the blocks it has. Click a column to sort; type to filter.</p>"
    )
    return legend + table_tools("ranking-table", len(rows), table)


def winners_html(
    rankings: Sequence[Ranking],
    tables: dict,
    chance: pd.DataFrame,
    metric: str,
    base_metric: str,
    label: str,
    pages: Mapping[str, str] | None = None,
    block_of: dict | None = None,
) -> str:
    """Per block, per scenario: the best configuration, its margin over the runner-up and the
    block's chance level (the mean over its datasets' labels, ``block_of``: label -> block, e.g. a
    dataset's concept orders): one row per block, a column group per scenario. ``pages``: each
    block's page (:func:`block_page_names`)."""
    higher = get_metric(metric).higher_is_better
    scenarios = [r.scenario for r in rankings]
    per = {}
    for s in scenarios:
        ch = None
        if chance is not None and not chance.empty and f"{metric}_mean" in chance:
            part = chance[(chance["scenario"] == s) & (chance["base_metric"] == base_metric)]
            blocks_of = [str((block_of or {}).get(d, d)) for d in part["dataset"].astype(str)]
            ch = (
                pd.Series(part[f"{metric}_mean"].to_numpy(float), index=blocks_of)
                .groupby(level=0)
                .mean()
            )
        per[s] = block_winners(tables[s][0], higher, ch).set_index("block")
    blocks = list(dict.fromkeys(b for s in scenarios for b in per[s].index))
    head1 = (
        "<tr><th rowspan='2'>block</th>"
        + "".join(f"<th colspan='4' class='group'>{_e(s)}</th>" for s in scenarios)
        + "</tr>"
    )
    head2 = (
        "<tr>"
        + "<th>best</th><th>score</th><th>margin</th><th>chance</th>" * len(scenarios)
        + "</tr>"
    )
    body = []
    for b in blocks:
        cells = [f"<td><a href='{_e(_page_of(b, pages))}'>{_e(b)}</a></td>"]
        for s in scenarios:
            if b in per[s].index:
                w = per[s].loc[b]
                cells += [
                    f"<td>{_e(w['best'])}</td>",
                    f"<td>{w['score']:.3f}</td>",
                    f"<td>{'' if w['margin'] != w['margin'] else f'{w.margin:.3f}'}</td>",
                    f"<td>{'n/a' if w['chance'] != w['chance'] else f'{w.chance:.3f}'}</td>",
                ]
            else:
                cells += ["<td>no value</td>", "<td></td>", "<td></td>", "<td></td>"]
        body.append(f"<tr>{''.join(cells)}</tr>")
    legend = (
        f"<p class='legend'>The best configuration of each block and scenario by {_e(label)} (mean over "
        "seeds), its margin over the runner-up on that block, and the chance level (what a detector "
        "without information gets there). A block's name opens its page: R heatmaps, learning curves, "
        "forgetting and cost.</p>"
    )
    from .html import table_tools

    table = (
        f"<table id='winners-table' class='table compact winners sortable'><thead>{head1}{head2}</thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )
    return legend + table_tools("winners-table", len(body), table, scroll_from=12)


def warnings_html(groups: Sequence[WarningGroup], n_runs: int, most: int | None = None) -> str:
    """The warnings grouped by cause: one row each (cause, runs, where, an example)."""
    from . import html as H
    from .tables import frame_html

    if not groups:
        return H.message("no run recorded a warning")
    shown = list(groups if most is None else groups[:most])
    rows = [
        {
            "cause (numbers as #)": g.template,
            "runs": f"{g.runs:,}",
            "warnings": f"{g.count:,}",
            "where: dataset (runs); scenario (runs)": g.where(),
            "for example": g.example,
        }
        for g in shown
    ]
    total = sum(g.count for g in groups)
    legend = (
        f"<p class='legend'>{n_runs:,} run{'s' if n_runs != 1 else ''} recorded {total:,} warning"
        f"{'s' if total != 1 else ''} of {len(groups)} cause{'s' if len(groups) != 1 else ''}: warnings that "
        "differ only in their numbers are one cause. Every run's list is in results.json (field "
        "'warnings').</p>"
    )
    more = (
        f"<p class='legend'>{len(groups) - len(shown)} more causes on the details page.</p>"
        if len(shown) < len(groups)
        else ""
    )
    return legend + frame_html(pd.DataFrame(rows), classes="table index") + more


def blocks_html(blocks: Sequence[tuple[str, int]], pages: Mapping[str, str] | None = None) -> str:
    """The list of drill-down pages: one link per block with its number of runs (``pages``: each
    block's page, :func:`block_page_names`)."""
    items = "".join(
        f"<li><a href='{_e(_page_of(b, pages))}'>{_e(b)}</a> ({n:,} runs)</li>" for b, n in blocks
    )
    return (
        "<p class='legend'>One page per block (a dataset, with every concept order it ran in): its leaderboard, R heatmaps, "
        f"learning curves, per-concept forgetting and cost.</p><ul class='blocks'>{items}</ul>"
    )


def label_of(metric: str, base_metric: str) -> str:
    """``continual average (ROC-AUC)``: a metric's label with its base metric."""
    return f"{get_metric(metric).label} ({base_metric_shown(base_metric)})"
