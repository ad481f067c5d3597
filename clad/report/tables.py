"""Leaderboard tables as text: CSV (numbers), HTML (``mean ± std`` per cell), and the cells of the
Markdown and LaTeX tables (:mod:`clad.report.table_formats`).

Input is :func:`clad.report.leaderboard.leaderboard`; one table per dataset and base metric, rows in
the spec's order, the best mean marked as :func:`clad.report.leaderboard.best_status` decides, the
interval in the CSV and each HTML cell's tooltip (what a cell says: ``docs/guides/statistics.md``).
Headers are the metrics' declared labels; the cost columns (:data:`clad.report.cost.COST`) are a
table of their own. A metric undefined for every row (e.g. ``unlearned_average`` when every test
concept is learned) is left out of the text tables.
"""

from __future__ import annotations

import html
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ..metrics.base import base_metric_shown
from ..metrics import get_metric, scalar_names
from .leaderboard import BEST, NO_NOISE_ESTIMATE, WITHIN_NOISE, best_status
from .describe import MIN_INTERVAL_N
from .cost import COST

__all__ = [
    "label",
    "cell_text",
    "interval_text",
    "stats_text",
    "stats_tips",
    "leaderboard_sections",
    "cost_sections",
    "cost_html",
    "leaderboard_compact_html",
    "leaderboard_html",
    "frame_html",
    "LEGEND",
    "ROW_KEYS",
]

#: the columns that name a leaderboard row, in the order rows are sorted
ROW_KEYS = ["scenario", "strategy", "detector"]
#: what a cell of a leaderboard or summary shows
LEGEND = (
    f"mean ± std over seeds; the 95 % interval of the mean (Student-t interval over seeds, cut to the "
    f"metric's range; none with fewer than {MIN_INTERVAL_N} seeds) is in the CSV and, on the page, in each "
    f"cell's tooltip"
)


def label(name: str) -> str:
    """The declared short label of a scalar metric (e.g. ``CA``)."""
    return get_metric(name).label


def _bad(x) -> bool:
    # NaN alone differs from itself
    return x is None or (isinstance(x, (float, np.floating)) and x != x)


def cell_text(
    mean: float,
    std: float,
    n: int | None = None,
    ci_low: float | None = None,
    ci_high: float | None = None,
    digits: int = 3,
) -> str:
    """``mean ± std`` (``n/a`` when the mean is undefined, the mean alone when the std is); the
    count and the interval go to :func:`interval_text` (a tooltip, the CSV).

    Parameters
    ----------
    mean, std : float
        The mean over seeds and its sample standard deviation (NaN: undefined).
    n, ci_low, ci_high : optional
        The count and the interval, not shown here (the signature of a leaderboard row's columns).
    digits : int, default 3
        Digits after the point.

    Examples
    --------
    >>> cell_text(0.81234, 0.0123, 3, 0.78, 0.84)
    '0.812 ± 0.012'
    >>> cell_text(0.5, float("nan"), 1), cell_text(float("nan"), 0.1, 0)
    ('0.500', 'n/a')
    """
    if _bad(mean):
        return "n/a"
    out = f"{mean:.{digits}f}"
    if out.startswith("-") and float(out) == 0:  # no "-0.000"
        out = out[1:]
    if not _bad(std):
        out += f" ± {std:.{digits}f}"
    return out


def interval_text(
    mean: float,
    n: int | None,
    ci_low: float | None = None,
    ci_high: float | None = None,
    values: str | None = None,
    digits: int = 3,
) -> str:
    """What a cell's tooltip says: the interval of the mean over ``n`` values (one per distinct
    computation over the seeds), or, with too few values for one, the values themselves.

    Parameters
    ----------
    mean : float
        The mean over seeds.
    n : int or None
        The number of values it is the mean of.
    ci_low, ci_high : float, optional
        The 95 % t-interval of the mean (NaN or None: none).
    values : str, optional
        The values, shown when there is no interval.
    digits : int, default 3
        Digits after the point.

    Examples
    --------
    >>> interval_text(0.8, 4, 0.75, 0.85)
    'mean 0.800, 95 % t-interval [0.750, 0.850], n = 4 values'
    >>> interval_text(0.8, 2, values="0.700 0.900")
    'n = 2 values: too few for an interval (values 0.700 0.900)'
    """
    if _bad(mean) or not n:
        return "no value"
    k = int(n)
    if not (_bad(ci_low) or _bad(ci_high)):
        return (
            f"mean {mean:.{digits}f}, 95 % t-interval [{ci_low:.{digits}f}, {ci_high:.{digits}f}], "
            f"n = {k} value{'s' if k > 1 else ''}"
        )
    shown = f" (values {values})" if values else ""
    return f"n = {k} value{'s' if k > 1 else ''}: too few for an interval{shown}"


def _column(table: pd.DataFrame, name: str) -> list:
    return table[name].tolist() if name in table.columns else [None] * len(table)


def stats_text(table: pd.DataFrame, prefix: str) -> list[str]:
    """:func:`cell_text` of every row of ``table`` from its columns ``<prefix>_mean`` and ``_std``."""
    return [
        cell_text(m, s)
        for m, s in zip(_column(table, f"{prefix}_mean"), _column(table, f"{prefix}_std"))
    ]


def stats_tips(table: pd.DataFrame, prefix: str) -> list[str]:
    """:func:`interval_text` of every row of ``table`` from its columns ``<prefix>_mean``, ``_n``,
    ``_ci_low``, ``_ci_high`` and ``_values``."""
    cols = [_column(table, f"{prefix}_{k}") for k in ("mean", "n", "ci_low", "ci_high", "values")]
    return [interval_text(*vals) for vals in zip(*cols)]


def row_tuples(frame: pd.DataFrame, labels: Sequence[str] | None = None) -> list[tuple]:
    """The rows of ``frame`` (of its columns ``labels``, default every column) as tuples of plain
    values, read column by column (a tenth of the time of ``itertuples`` on text columns)."""
    columns = (
        [s.tolist() for _, s in frame.items()]
        if labels is None
        else [frame[c].tolist() for c in labels]
    )
    return list(zip(*columns)) if columns else [()] * len(frame)


def metric_columns(table: pd.DataFrame) -> list[str]:
    """The scalar metrics with a column in ``table`` and a value in some row."""
    return [
        m
        for m in scalar_names()
        if f"{m}_mean" in table.columns and table[f"{m}_mean"].notna().any()
    ]


def _first_seen_order(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``table`` sorted by ``keys``, each in the order its values first appear (the spec's order)."""
    if table.empty:
        return table
    return table.iloc[
        _first_seen_positions({k: table[k].tolist() for k in keys}, keys, range(len(table)))
    ]


def _first_seen_positions(
    columns: dict[str, list], keys: Sequence[str], rows: Sequence[int]
) -> list[int]:
    """The positions ``rows`` sorted by ``keys`` (``columns`` holds each key's values, one per
    position), each key in the order its values first appear among ``rows``; a stable sort."""
    rank = {
        k: {v: n for n, v in enumerate(dict.fromkeys(columns[k][i] for i in rows))} for k in keys
    }
    return sorted(rows, key=lambda i: tuple(rank[k][columns[k][i]] for k in keys))


def _chance_rows(chance: pd.DataFrame | None) -> dict[tuple, dict]:
    """The first chance row of each dataset, base metric and scenario, as a dict of its columns."""
    if chance is None or chance.empty:
        return {}
    out: dict[tuple, dict] = {}
    for row in chance.to_dict("records"):
        out.setdefault((row["dataset"], row["base_metric"], row["scenario"]), row)
    return out


#: the strategy and detector labels of a chance row
CHANCE_ROW = ("chance", "no scores")


def leaderboard_sections(
    table: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    chance: pd.DataFrame | None = None,
    tips: bool = True,
) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame, pd.DataFrame]]:
    """Per dataset and base metric: a title, the text cells (rows: scenario, strategy, detector,
    each in first-seen order; a scenario's chance row first when ``chance`` gives one, see
    :func:`clad.report.chance.chance_table`), the marks of the same shape (``"best"``,
    ``"within noise"``, ``"chance"`` for a chance row, ``""``) and the tooltips (empty strings
    without ``tips``: for a table that shows none)."""
    want_tips = tips
    metrics = list(metrics) if metrics is not None else metric_columns(table)
    if table.empty:
        return
    status = best_status(table, metrics)
    chances = _chance_rows(chance)
    # the columns read, as lists of plain values: one look-up per column, not one per row or cell
    names = [
        *ROW_KEYS,
        *(c for c in ("runs", "computations") if c in table.columns),
        *(
            f"{m}_{k}"
            for m in metrics
            for k in ("mean", "std", "n", "ci_low", "ci_high", "values")
            if f"{m}_{k}" in table.columns
        ),
    ]
    columns = {c: table[c].tolist() for c in names}
    marked = {m: status[m].tolist() for m in metrics}
    valued = {m: table[f"{m}_mean"].notna().to_numpy() for m in metrics}
    groups = table.groupby(["dataset", "base_metric"], sort=False).indices
    # first seen first
    for (dataset, base), positions in sorted(groups.items(), key=lambda group: group[1][0]):
        used = [m for m in metrics if valued[m][positions].any()]
        scenarios: dict = {}  # the positions of each scenario, in first-seen order
        for pos in _first_seen_positions(columns, ROW_KEYS, positions.tolist()):
            scenarios.setdefault(columns["scenario"][pos], []).append(pos)
        # the columns of the metrics shown, in order
        means_of = [columns[f"{m}_mean"] for m in used]
        stds_of = [columns[f"{m}_std"] for m in used]
        statuses_of = [marked[m] for m in used]
        intervals_of = (
            [
                (
                    columns[f"{m}_n"],
                    columns[f"{m}_ci_low"],
                    columns[f"{m}_ci_high"],
                    columns.get(f"{m}_values"),
                )
                for m in used
            ]
            if want_tips
            else []
        )
        rows, marks, tips = [], [], []
        for scenario, members in scenarios.items():
            c = chances.get((dataset, base, scenario))
            if c is not None:
                for out, cells in zip((rows, marks, tips), _chance_row(scenario, c, used)):
                    out.append(cells)
            for pos in members:
                means = [mean[pos] for mean in means_of]
                st = [status[pos] for status in statuses_of]
                rows.append(
                    [str(columns[k][pos]) for k in ROW_KEYS]
                    + [cell_text(v, std[pos]) for v, std in zip(means, stds_of)]
                )
                marks.append([""] * len(ROW_KEYS) + st)
                if not want_tips:
                    tips.append([""] * (len(ROW_KEYS) + len(used)))
                    continue
                tips.append(_row_tips(columns, pos, c, used, means, st, intervals_of))
        cols = [*ROW_KEYS, *(label(m) for m in used)]
        yield (
            f"{dataset} — {base_metric_shown(base)}",
            pd.DataFrame(rows, columns=cols),
            pd.DataFrame(marks, columns=cols),
            pd.DataFrame(tips, columns=cols),
        )


def _chance_row(scenario: str, c: dict, used: Sequence[str]) -> tuple[list, list, list]:
    """A scenario's chance row of a leaderboard section: its text cells, marks and tooltips."""
    return (
        [scenario, *CHANCE_ROW] + [cell_text(c.get(f"{m}_mean"), float("nan")) for m in used],
        ["chance"] * (len(ROW_KEYS) + len(used)),
        [""] * len(ROW_KEYS)
        + [
            "chance: what a detector without information gets here (ROC-AUC 0.5, AP the anomaly rate, F1 of "
            "flagging every row), through the same metric"
        ]
        * len(used),
    )


def _row_tips(columns, pos: int, c, used, means, st, intervals_of) -> list[str]:
    """The tooltips of the leaderboard row at ``pos``: each cell's interval, the row's computations
    (the same for each of its cells), the value relative to chance (``c``, the scenario's chance
    row or None) and the mark."""
    computations = _computations_tip(
        {k: columns[k][pos] for k in ("runs", "computations") if k in columns}
    )
    return [""] * len(ROW_KEYS) + [
        interval_text(v, n[pos], low[pos], high[pos], None if values is None else values[pos])
        + computations
        + _relative_tip(v, None if c is None else c.get(f"{m}_mean"))
        + STATUS_TIPS.get(mark, "")
        for m, v, mark, (n, low, high, values) in zip(used, means, st, intervals_of)
    ]


def _computations_tip(row) -> str:
    """Where a configuration's seeds are fewer distinct computations: how many (its values count once each)."""
    runs, distinct = row.get("runs"), row.get("computations")
    if _bad(runs) or _bad(distinct) or int(distinct) >= int(runs):
        return ""
    return (
        f" ({int(runs)} seeds, {int(distinct)} distinct computation{'s' if int(distinct) != 1 else ''}: "
        "identical seeds count once)"
    )


def _relative_tip(mean, chance) -> str:
    """The value relative to its chance level (where one is defined)."""
    if _bad(mean) or _bad(chance):
        return ""
    return f"; {float(mean) - float(chance):+.3f} relative to chance ({float(chance):.3f})"


#: what a cell's tooltip says of its mark
STATUS_TIPS = {
    BEST: "; best in its scenario, its interval clear of the next best's",
    WITHIN_NOISE: "; the best mean in its scenario, but within noise of the next best (intervals overlap or too few seeds)",
    NO_NOISE_ESTIMATE: "; the best mean in its scenario, but it or the next best is one computation over its seeds "
    "(fewer than two independent values): no noise can be estimated, so nothing is claimed",
}


def cost_sections(table: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """Per dataset: the cost columns (:data:`clad.report.cost.COST`) of each configuration (rows:
    scenario, strategy, detector; one row per configuration, whatever the base metric), with tooltips."""
    if table.empty:
        return
    costs = [n for n in COST if f"{n}_mean" in table.columns and table[f"{n}_mean"].notna().any()]
    if not costs:
        return
    for dataset, part in table.groupby("dataset", sort=False):
        part = _first_seen_order(part.drop_duplicates(subset=ROW_KEYS), ROW_KEYS)
        # column by column, as lists of plain values
        text = {k: [str(v) for v in part[k].tolist()] for k in ROW_KEYS}
        tips = {k: [""] * len(part) for k in ROW_KEYS}
        for n in costs:
            mean, std, count, low, high = (
                part[f"{n}_{k}"].tolist() for k in ("mean", "std", "n", "ci_low", "ci_high")
            )
            values = (
                part[f"{n}_values"].tolist()
                if f"{n}_values" in part.columns
                else [None] * len(part)
            )
            text[COST[n].label] = [
                cell_text(m, s, digits=3 if n != "memory_rows" else 0) for m, s in zip(mean, std)
            ]
            tips[COST[n].label] = [
                f"{COST[n].description}: " + interval_text(m, k, lo, hi, v)
                for m, k, lo, hi, v in zip(mean, count, low, high, values)
            ]
        yield str(dataset), pd.DataFrame(text), pd.DataFrame(tips)


def legend_text(metrics: Sequence[str]) -> str:
    lower = [label(m) for m in metrics if not get_metric(m).higher_is_better]
    return (
        f"{LEGEND}; bold: the best mean of its column within its scenario, its interval clear of the next best's; "
        "≈: the best mean, but within noise of the next best (overlapping intervals, or too few seeds to tell); "
        "no mark where the best or the next rests on one independent value (deterministic over seeds); "
        "higher is better"
        + (f" except {', '.join(lower)} (lower is better)" if lower else "")
        + "; the chance row gives what a detector without information gets through the same metric"
    )


def _html_cell(v) -> str:
    if isinstance(v, str):
        return html.escape(v)
    if v is None or (isinstance(v, (float, np.floating)) and np.isnan(v)):
        return "n/a"
    return html.escape(f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v))


def frame_html(
    df: pd.DataFrame,
    marks: pd.DataFrame | None = None,
    index: bool = False,
    tips: pd.DataFrame | None = None,
    classes: str = "table",
) -> str:
    """A DataFrame as an HTML ``<table>`` with every cell escaped; ``marks`` (booleans, or the
    strings of :func:`leaderboard_sections`) put a cell in ``<strong>`` (``True``/``"best"``), mark it
    ``≈`` (``"within noise"``) or give its row the chance style; ``tips`` are the cells' tooltips.

    Parameters
    ----------
    df : DataFrame
        The cells.
    marks : DataFrame, optional
        Of the same shape: each cell's mark.
    index : bool, default False
        Show the index as a first column.
    tips : DataFrame, optional
        Of the same shape: each cell's tooltip.
    classes : str, default "table"
        The table's CSS classes.

    Examples
    --------
    >>> frame_html(pd.DataFrame({"a<": [0.5, float("nan")]}), pd.DataFrame({"a<": [True, False]})).count("<td")
    2
    """
    n_rows, n_cols = df.shape
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    if index:
        head = "<th></th>" + head
    body = []
    # the cells as one list per column: one look-up per column, not one per cell
    values = [s.tolist() for _, s in df.items()]
    mark_values = [s.tolist() for _, s in marks.items()] if marks is not None else None
    tip_values = [s.tolist() for _, s in tips.items()] if tips is not None else None
    for i in range(n_rows):
        cells = []
        row_mark = ""
        for j in range(n_cols):
            text = _html_cell(values[j][i])
            mark = mark_values[j][i] if mark_values is not None else ""
            if (isinstance(mark, (bool, np.bool_)) and bool(mark)) or (
                isinstance(mark, str) and mark == BEST
            ):
                text = f"<strong>{text}</strong>"
            elif isinstance(mark, str) and mark == WITHIN_NOISE:
                text = f"{text}<span class='noise'> ≈</span>"
            elif isinstance(mark, str) and mark == "chance":
                row_mark = " class='chance'"
            tip = tip_values[j][i] if tip_values is not None else ""
            title = f' title="{html.escape(str(tip), quote=True)}"' if tip else ""
            cells.append(f"<td{title}>{text}</td>")
        lead = f"<th>{html.escape(str(df.index[i]))}</th>" if index else ""
        body.append(f"<tr{row_mark}>{lead}{''.join(cells)}</tr>")
    return f'<table class="{classes}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def leaderboard_html(table: pd.DataFrame, chance: pd.DataFrame | None = None) -> str:
    """HTML: one titled table per dataset and base metric (``mean ± std`` cells, the interval in
    each cell's tooltip, a chance row per scenario when ``chance`` is given) of every metric with a
    value."""
    shown = metric_columns(table)
    out = [f"<p class='legend'>{html.escape(legend_text(shown))}.</p>"]
    for title, text, marks, tips in leaderboard_sections(table, shown, chance=chance):
        out.append(f"<h3>{html.escape(title)}</h3>")
        out.append(frame_html(text, marks, tips=tips, classes="table leaderboard"))
    return "\n".join(out)


def cost_html(table: pd.DataFrame) -> str | None:
    """HTML: the cost table of each dataset (None when no run recorded a cost)."""
    out = [
        f"<h3>{html.escape(dataset)}</h3>"
        + frame_html(text, tips=tips, classes="table leaderboard")
        for dataset, text, tips in cost_sections(table)
    ]
    return "\n".join(out) if out else None


def _base_label(name: str) -> str:
    """A base metric's label (``ROC-AUC``), an oracle-threshold one marked optimistic."""
    from ..metrics.base import find_base_metric

    decl = find_base_metric(name)
    if decl is None:
        return name
    return (
        decl.label
        if not decl.optimistic or "optimistic" in decl.label
        else f"{decl.label} (optimistic)"
    )


def leaderboard_compact_html(
    table: pd.DataFrame, chance: pd.DataFrame | None = None, metrics: Sequence[str] | None = None
) -> str:
    """HTML: one table per dataset, every base metric side by side (its ``metrics`` columns under
    its name), a heading row per scenario followed by its chance row and its configurations
    (strategy, detector); cells ``mean ± std`` with the interval in the tooltip, marked as in
    :func:`leaderboard_sections`."""
    shown = [
        m
        for m in (metrics if metrics is not None else metric_columns(table))
        if m in metric_columns(table)
    ]
    out = [f"<p class='legend'>{html.escape(legend_text(shown))}.</p>"]
    if table.empty or not shown:
        return "\n".join(out)
    sections = {}
    bases = iter([key for key, _ in table.groupby(["dataset", "base_metric"], sort=False)])
    for (_, text, marks, tips), (dataset, base) in zip(
        leaderboard_sections(table, shown, chance=chance), bases
    ):
        sections.setdefault(dataset, []).append((base, text, marks, tips))
    for dataset, parts in sections.items():
        # every metric with a value under some base metric (a base metric undefined everywhere has none)
        labels = list(
            dict.fromkeys(c for part in parts for c in part[1].columns if c not in ROW_KEYS)
        )
        head1 = (
            "<tr><th rowspan='2'>strategy</th><th rowspan='2'>detector</th>"
            + "".join(
                f"<th colspan='{len(labels)}' class='group'>{html.escape(_base_label(b))}</th>"
                for b, *_ in parts
            )
            + "</tr>"
        )
        head2 = (
            "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for _ in parts for c in labels) + "</tr>"
        )
        body = []
        first = parts[0][1]
        scenarios, strategies, detectors = (first[c].tolist() for c in ROW_KEYS)
        chances = [mark == "chance" for mark in parts[0][2]["strategy"].tolist()]
        # each base metric's cells, marks and tooltips as one row tuple per position
        rows = [
            [
                row_tuples(frame.reindex(columns=labels, fill_value=fill), labels)
                for frame, fill in ((text, "n/a"), (marks, ""), (tips, ""))
            ]
            for _, text, marks, tips in parts
        ]
        for i, scenario in enumerate(scenarios):
            if i == 0 or scenarios[i - 1] != scenario:
                body.append(
                    f"<tr class='scenario'><th colspan='{2 + len(labels) * len(parts)}'>"
                    f"{html.escape(str(scenario))}</th></tr>"
                )
            is_chance = chances[i]
            cells = [
                f"<td>{html.escape(str(strategies[i]))}</td>",
                f"<td>{html.escape(str(detectors[i]))}</td>",
            ]
            for texts, marks, tips in rows:
                for v, mark, tip in zip(texts[i], marks[i], tips[i]):
                    v = html.escape(str(v))
                    v = (
                        f"<strong>{v}</strong>"
                        if mark == BEST
                        else f"{v}<span class='noise'> ≈</span>"
                        if mark == WITHIN_NOISE
                        else v
                    )
                    title = f' title="{html.escape(str(tip), quote=True)}"' if tip else ""
                    cells.append(f"<td{title}>{v}</td>")
            body.append(f"<tr{' class=chance' if is_chance else ''}>{''.join(cells)}</tr>")
        out.append(
            f"<h3>{html.escape(dataset)}</h3><table class='table leaderboard compact'><thead>{head1}{head2}"
            f"</thead><tbody>{''.join(body)}</tbody></table>"
        )
    return "\n".join(out)
