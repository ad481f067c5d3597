"""The leaderboard as Markdown (``leaderboard.md``: one pipe table per dataset and base metric) and
as LaTeX tables a journal takes (``leaderboard.tex``: booktabs rules, one ``table`` per dataset,
base metric and metric family, chosen columns: :func:`latex_columns`)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..metrics import get_metric, scalar_names
from .leaderboard import BEST, WITHIN_NOISE
from .tables import (
    ROW_KEYS,
    cost_sections,
    leaderboard_sections,
    legend_text,
    metric_columns,
    row_tuples,
)

__all__ = [
    "leaderboard_markdown",
    "tex_escape",
    "LATEX_FAMILIES",
    "latex_columns",
    "leaderboard_latex",
]


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped (``±`` as ``$\pm$``, ``≈`` as ``$\approx$``).

    >>> print(tex_escape("concept_aware & 50% ± 1"))
    concept\_aware \& 50\% $\pm$ 1
    """
    out = "".join(_TEX_SPECIAL.get(c, c) for c in str(text))
    return (
        out.replace("±", r"$\pm$").replace("≈", r"$\approx$").replace("−", "-").replace("—", "---")
    )


def _tex_label(*parts: str) -> str:
    r"""A ``\label`` key: lower-case letters, digits and hyphens."""
    import re

    return "tab:clad-" + "-".join(
        re.sub(r"[^a-z0-9]+", "-", str(p).lower()).strip("-") for p in parts if p
    )


#: the families the LaTeX tables split every metric into (by each metric's declared scale)
LATEX_FAMILIES = {
    "value": "performance",
    "difference": "transfer and forgetting",
    "variance": "stability",
    "unbounded": "other",
}


def latex_columns(spec: str | Sequence[str] | None) -> list[str] | None:
    """The scalar metrics a ``--latex-columns`` value names (by name or label, comma-separated),
    None for the default (the headline metrics, one table), ``["all"]`` for every metric (one table
    per family). An unknown name is a clear error.

    >>> latex_columns("CA,backward_transfer"), latex_columns(None), latex_columns("all")
    (['continual_average', 'backward_transfer'], None, ['all'])
    """
    from ..errors import CladValueError

    if spec is None:
        return None
    items = [
        str(x).strip()
        for x in (spec.split(",") if isinstance(spec, str) else spec)
        if str(x).strip()
    ]
    allowed = f"'all' or names/labels such as {', '.join(get_metric(m).label for m in scalar_names(headline=True))}"
    if not items:
        raise CladValueError(
            f"latex columns {spec!r} name no column; allowed: {allowed} (comma-separated)"
        )
    if items == ["all"]:
        return ["all"]
    by_label = {get_metric(m).label.lower(): m for m in scalar_names()}
    out = []
    for item in items:
        name = item if item in scalar_names() else by_label.get(item.lower())
        if name is None:
            raise CladValueError(
                f"latex column {item!r} is not a scalar metric; allowed: {allowed}"
            )
        if name in out:
            raise CladValueError(
                f"latex column {item!r} names {name} a second time in {spec!r}; name each column once"
            )
        out.append(name)
    return out


def _latex_groups(
    table: pd.DataFrame, columns: Sequence[str] | None
) -> list[tuple[str, list[str]]]:
    """(family name, metrics) per LaTeX table of one dataset and base metric."""
    available = metric_columns(table)
    if columns is None:
        return [("headline", [m for m in scalar_names(headline=True) if m in available])]
    if list(columns) == ["all"]:
        groups: dict[str, list[str]] = {}
        for m in available:
            groups.setdefault(LATEX_FAMILIES.get(get_metric(m).scale, "other"), []).append(m)
        return list(groups.items())
    return [("chosen", [m for m in columns if m in available] or list(columns))]


def _latex_table(
    title: str, key: tuple, text: pd.DataFrame, marks: pd.DataFrame, caption_tail: str
) -> str:
    """One ``table`` environment: strategy and detector columns, the scenario as a group row."""
    metric_cols = [c for c in text.columns if c not in ROW_KEYS]
    width = 2 + len(metric_cols)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        rf"\caption{{{tex_escape(title)}: {caption_tail}}}",
        rf"\label{{{_tex_label(*key)}}}",
        rf"\begin{{tabular}}{{ll{'r' * len(metric_cols)}}}",
        r"\toprule",
        " & ".join(["Strategy", "Detector", *(tex_escape(c) for c in metric_cols)]) + r" \\",
        r"\midrule",
    ]
    previous = None
    shown = ["strategy", "detector", *metric_cols]
    for scenario, values, row_marks in zip(
        text["scenario"].tolist(), row_tuples(text, shown), row_tuples(marks, shown)
    ):
        if scenario != previous:
            if previous is not None:
                lines.append(r"\addlinespace")
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{\textit{{{tex_escape(scenario)}}}}} \\")
            previous = scenario
        chance = row_marks[0] == "chance"  # the strategy column's mark
        cells = []
        for v, mark in zip(values, row_marks):
            v = tex_escape(v)
            if mark == BEST:
                v = rf"\textbf{{{v}}}"
            elif mark == WITHIN_NOISE:
                v = rf"{v}\,$\approx$"
            elif chance:
                v = rf"\textit{{{v}}}"
            cells.append(v)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def leaderboard_latex(
    table: pd.DataFrame, chance: pd.DataFrame | None = None, columns: Sequence[str] | None = None
) -> str:
    r"""LaTeX tables a journal takes: one ``table`` (booktabs rules, ``\caption`` and ``\label``)
    per dataset, base metric and metric family; rows strategy and detector, each scenario a group
    row (never repeated on every row), its chance row first in italics; best cells in
    ``\textbf``, within-noise ones marked ``$\approx$``. ``columns`` (:func:`latex_columns`): None
    for the headline metrics in one table, ``["all"]`` for every metric split by family (its
    declared scale: performance, transfer and forgetting, stability), or the metrics to show.
    Needs ``\usepackage{booktabs}`` (said in the first lines).

    >>> t = pd.DataFrame({"dataset": ["d"], "base_metric": ["roc_auc"], "scenario": ["s_1"], "strategy": ["naive"],
    ...                   "detector": ["knn"], "continual_average_mean": [0.9], "continual_average_std": [0.01],
    ...                   "continual_average_n": [3], "continual_average_ci_low": [0.89],
    ...                   "continual_average_ci_high": [0.91]})
    >>> tex = leaderboard_latex(t)
    >>> r"\label{tab:clad-d-roc-auc-headline}" in tex, r"\multicolumn{3}{l}{\textit{s\_1}}" in tex
    (True, True)
    """
    groups = _latex_groups(table, columns)
    shown = [m for _, ms in groups for m in ms]
    out = [
        r"% clad leaderboard tables; they need \usepackage{booktabs} in the preamble",
        f"% {tex_escape(legend_text(shown))}",
        "",
    ]
    if table.empty:
        return "\n".join(out)
    for family, metrics in groups:
        bases = [key for key, _ in table.groupby(["dataset", "base_metric"], sort=False)]
        for (title, text, marks, _), (dataset, base) in zip(
            leaderboard_sections(table, metrics, chance=chance, tips=False), bases
        ):
            text, marks = text.reset_index(drop=True), marks.reset_index(drop=True)
            name = title + ("" if family in ("headline", "chosen") else f" ({family})")
            out.append(_latex_table(name, (dataset, base, family), text, marks, _LATEX_CAPTION))
    return "\n".join(out)


#: the end of every LaTeX table's caption
_LATEX_CAPTION = (
    r"mean $\pm$ std over seeds; bold: best in its scenario, its interval clear of the next best's; "
    r"$\approx$: best but within noise"
)
#: how a Markdown cell shows its mark
_MARKDOWN_MARKS = {BEST: "**{}**", WITHIN_NOISE: "{} ≈", "chance": "_{}_"}


def _marked(v: str, mark: str) -> str:
    return _MARKDOWN_MARKS.get(mark, "{}").format(v)


def leaderboard_markdown(table: pd.DataFrame, chance: pd.DataFrame | None = None) -> str:
    """GitHub-flavoured Markdown: one pipe table per dataset and base metric, then the cost table."""
    out = [f"_{legend_text(metric_columns(table))}._", ""]
    for title, text, marks, _ in leaderboard_sections(table, chance=chance, tips=False):
        out += [f"### {title}", ""]
        cols = list(text.columns)
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" if c in ROW_KEYS else "---:" for c in cols) + "|")
        for values, row_marks in zip(row_tuples(text), row_tuples(marks)):
            cells = [
                _marked(str(v).replace("|", "\\|"), mark) for v, mark in zip(values, row_marks)
            ]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    for dataset, text, _ in cost_sections(table):
        out += [f"### {dataset} — cost (measured on this machine)", ""]
        cols = list(text.columns)
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" if c in ROW_KEYS else "---:" for c in cols) + "|")
        out += ["| " + " | ".join(str(v) for v in values) + " |" for values in row_tuples(text)]
        out.append("")
    return "\n".join(out)
