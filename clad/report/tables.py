"""Leaderboard tables as text: CSV (numbers), Markdown, LaTeX and HTML (``mean ± std [95 % CI]
n=values``, best per column in bold).

Input is :func:`clad.report.aggregate.leaderboard`; one table is made per dataset and base metric
(rows: scenario x detector x strategy), and the best mean of each column is marked within each
scenario (see :func:`clad.report.aggregate.best_marks`). Column headers are the metrics' declared
labels (:data:`clad.metrics.REGISTRY`), followed by the cost columns (:data:`clad.report.cost.COST`). A metric undefined for every row (e.g.
``unlearned_average`` when every test concept is learned) is left out of the text tables.
"""

from __future__ import annotations

import html
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ..core.evaluation import base_metric_shown
from ..metrics import get_metric, scalar_names
from .aggregate import best_marks
from .cost import COST

__all__ = ["label", "cell_text", "stats_text", "leaderboard_sections", "leaderboard_markdown", "leaderboard_latex",
           "leaderboard_html", "frame_html", "LEGEND"]

_ROW_KEYS = ["scenario", "detector", "strategy"]
#: what a cell of a leaderboard or summary shows
LEGEND = "mean ± std over seeds [95 % t-based confidence interval of the mean] n = values used (NaN left out)"


def label(name: str) -> str:
    """The declared short label of a scalar metric (e.g. ``CA``)."""
    return get_metric(name).label


def _bad(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and np.isnan(x))


def cell_text(mean: float, std: float, n: int | None = None, ci_low: float | None = None,
              ci_high: float | None = None, digits: int = 3) -> str:
    """``mean ± std [ci_low, ci_high] n=k``; parts that are undefined are left out (``n/a`` when
    the mean is).

    >>> cell_text(0.81234, 0.0123, 3, 0.78, 0.84)
    '0.812 ± 0.012 [0.780, 0.840] n=3'
    >>> cell_text(0.5, float("nan"), 1), cell_text(float("nan"), 0.1, 0), cell_text(0.5, 0.1)
    ('0.500 n=1', 'n/a', '0.500 ± 0.100')
    """
    if _bad(mean):
        return "n/a"
    out = f"{mean:.{digits}f}"
    if not _bad(std):
        out += f" ± {std:.{digits}f}"
    if not (_bad(ci_low) or _bad(ci_high)):
        out += f" [{ci_low:.{digits}f}, {ci_high:.{digits}f}]"
    if n is not None and not _bad(n):
        out += f" n={int(n)}"
    return out


def stats_text(table: pd.DataFrame, prefix: str) -> list[str]:
    """:func:`cell_text` of every row of ``table`` from its columns ``<prefix>_mean``, ``_std``,
    ``_n``, ``_ci_low``, ``_ci_high`` (the last three when present)."""
    cols = [f"{prefix}_{k}" for k in ("mean", "std", "n", "ci_low", "ci_high")]
    parts = [table[c] if c in table.columns else [None] * len(table) for c in cols]
    return [cell_text(*vals) for vals in zip(*parts)]


def _metrics_of(table: pd.DataFrame) -> list[str]:
    """The scalar metrics with a column in ``table`` and a value in some row."""
    return [m for m in scalar_names() if f"{m}_mean" in table.columns and table[f"{m}_mean"].notna().any()]


def leaderboard_sections(table: pd.DataFrame, metrics: Sequence[str] | None = None
                         ) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """Per dataset and base metric: a title, the text cells (rows: scenario x detector x strategy)
    and the boolean "best" marks of the same shape (False in the row-key columns)."""
    metrics = list(metrics) if metrics is not None else _metrics_of(table)
    if table.empty:
        return
    marks = best_marks(table, metrics)
    for (dataset, base), part in table.groupby(["dataset", "base_metric"], sort=False):
        used = [m for m in metrics if part[f"{m}_mean"].notna().any()]
        text = part[_ROW_KEYS].astype(str).copy()
        mk = pd.DataFrame(False, index=part.index, columns=_ROW_KEYS)
        for m in used:
            text[label(m)] = stats_text(part, m)
            mk[label(m)] = marks.loc[part.index, m].to_numpy()
        for name, cost in COST.items():  # measured cost: shown, never marked best
            if f"{name}_mean" in part.columns and part[f"{name}_mean"].notna().any():
                text[cost.label] = stats_text(part, name)
                mk[cost.label] = False
        yield f"{dataset} — {base_metric_shown(base)}", text.reset_index(drop=True), mk.reset_index(drop=True)


def _legend(metrics: Sequence[str]) -> str:
    lower = [label(m) for m in metrics if not get_metric(m).higher_is_better]
    return (f"{LEGEND}; best mean per column within each scenario in bold; higher is better"
            + (f" except {', '.join(lower)} (lower is better)" if lower else "")
            + f"; cost columns ({', '.join(c.label for c in COST.values())}: fit and score seconds per training "
              "step, the run's peak memory above its start, training rows kept) are measurements of this machine, "
              "not marked")


def leaderboard_markdown(table: pd.DataFrame) -> str:
    """GitHub-flavoured Markdown: one pipe table per dataset and base metric."""
    out = [f"_{_legend(_metrics_of(table))}._", ""]
    for title, text, marks in leaderboard_sections(table):
        out += [f"### {title}", ""]
        cols = list(text.columns)
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" if c in _ROW_KEYS else "---:" for c in cols) + "|")
        for i in range(len(text)):
            cells = []
            for c in cols:
                v = str(text.at[i, c]).replace("|", "\\|")
                cells.append(f"**{v}**" if marks.at[i, c] else v)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def leaderboard_latex(table: pd.DataFrame) -> str:
    """LaTeX (booktabs): one ``tabular`` per dataset and base metric, via
    :meth:`pandas.io.formats.style.Styler.to_latex` (needs jinja2), best cells in ``\\textbf``."""
    try:
        import jinja2  # noqa: F401  (pandas' Styler needs it)
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("LaTeX tables need jinja2: pip install 'clad[report]'") from None
    out = [f"% {_legend(_metrics_of(table))}"]
    for title, text, marks in leaderboard_sections(table):
        styler = text.style.format(escape="latex").hide(axis="index")
        styler = styler.apply(lambda _: np.where(marks.to_numpy(), "textbf:--rwrap;", ""), axis=None)
        body = styler.to_latex(hrules=True, column_format="lll" + "r" * (text.shape[1] - len(_ROW_KEYS)),
                               caption=title.replace("_", r"\_"))
        out.append(body.replace("±", r"$\pm$"))
    return "\n".join(out)


def _html_cell(v) -> str:
    if isinstance(v, str):
        return html.escape(v)
    if v is None or (isinstance(v, (float, np.floating)) and np.isnan(v)):
        return "n/a"
    return html.escape(f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v))


def frame_html(df: pd.DataFrame, marks: pd.DataFrame | None = None, index: bool = False) -> str:
    """A DataFrame as an HTML ``<table>`` with every cell escaped and marked cells in ``<strong>``.

    >>> frame_html(pd.DataFrame({"a<": [0.5, float("nan")]}), pd.DataFrame({"a<": [True, False]})).count("<td>")
    2
    """
    cells = [[_html_cell(df.iat[i, j]) for j in range(df.shape[1])] for i in range(df.shape[0])]
    if marks is not None:
        cells = [[f"<strong>{c}</strong>" if bool(marks.iat[i, j]) else c for j, c in enumerate(row)]
                 for i, row in enumerate(cells)]
    out = pd.DataFrame(cells, index=[html.escape(str(i)) for i in df.index],
                       columns=[html.escape(str(c)) for c in df.columns])
    return out.to_html(escape=False, index=index, border=0, classes="table")


def leaderboard_html(table: pd.DataFrame) -> str:
    """HTML: one titled table per dataset and base metric."""
    out = [f"<p class='legend'>{html.escape(_legend(_metrics_of(table)))}.</p>"]
    for title, text, marks in leaderboard_sections(table):
        out.append(f"<h3>{html.escape(title)}</h3>")
        out.append(frame_html(text, marks))
    return "\n".join(out)
