"""The figures of a report, under readable, unique file names beside the pages, listed in its index
of figures.

Every page's figures are drawn by the browser (:mod:`clad.report.charts`: a Vega-Lite specification
per figure in a small script file, rewritten only when what it shows changed): one figure per
dataset x scenario x base metric holds the R heatmaps of every strategy + detector (small multiples
on one colour scale), one the learning curves; one per dataset x scenario holds the per-concept
forgetting of every base metric; each statistical comparison with a post-hoc test has its
critical-difference diagram; the cost, cost–quality, time-series traces and stream curves too
(:mod:`clad.report.cost`, :mod:`clad.report.costquality`, :mod:`clad.report.timeseries`,
:mod:`clad.report.stream`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..atomic import atomic_output
from ..metrics.base import base_metric_shown
from . import html as H
from .figure_data import heatmaps

__all__ = ["FigureStore", "figure_name", "heatmap_section", "blocks_section", "cd_html"]

#: longest figure file stem (characters; with the 4 of an extension as ``.png`` or ``.js`` room to
#: spare): well under the 255 bytes file systems allow
MAX_NAME = 176


def _part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", str(text)).strip("-") or "x"


def figure_name(kind: str, *parts: str) -> str:
    """A readable file stem from the figure's kind and what it shows: parts joined by ``__``,
    characters other than letters, digits and ``_`` turned into ``-``. A stem longer than
    :data:`MAX_NAME` keeps the start of every part and ends with a hash of the whole stem.

    >>> figure_name("heatmap", "synthetic", "concept_aware", "roc_auc")
    'heatmap__synthetic__concept_aware__roc_auc'
    >>> len(figure_name("cd", "x" * 300)) <= MAX_NAME
    True
    """
    pieces = [_part(kind)] + [_part(p) for p in parts]
    name = "__".join(pieces)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:10]
    each = max(3, (MAX_NAME - len(digest) - 2 - 2 * (len(pieces) - 1)) // len(pieces))
    return "__".join(p[:each] for p in pieces)[: MAX_NAME - len(digest) - 2] + "--" + digest


@dataclass(frozen=True)
class _Entry:
    stem: str
    section: str
    description: str
    page: str
    height: int  # px reserved on the page until the browser has drawn it


#: what a figure leaves in a page's text until the page is written (:meth:`FigureStore.render`)
_TOKEN = re.compile(r"<!--clad-figure:([^>]*?)-->")


class FigureStore:
    """The figures of a report in ``folder``, each a Vega-Lite specification the browser draws, kept
    by what it shows.

    :meth:`chart` keeps a figure and returns a mark for the page, which :meth:`render` turns into
    the ``<figure>`` (drawn when it scrolls into view, its height reserved, with its caption and
    link); :meth:`prune` removes an earlier report's figures this one does not show. ``page`` is
    the page the figures kept now appear on.
    """

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.paths: dict[str, Path] = {}
        self.entries: list[_Entry] = []
        self.page = "index.html"
        self.drawn = self.reused = 0
        self._stems: set[str] = set()
        self._by_stem: dict[str, _Entry] = {}

    def _stem(self, kind: str, *parts: str) -> str:
        stem = figure_name(kind, *parts)
        base, k = stem, 2
        while stem.lower() in self._stems:  # letter case aside: some file systems ignore it
            stem, k = f"{base}-{k}", k + 1
        self._stems.add(stem.lower())
        return stem

    def chart(
        self, spec: dict, height: int, section: str, description: str, kind: str, *parts: str
    ) -> str:
        """Keep the Vega-Lite figure ``spec`` (:mod:`clad.report.charts`), which the browser draws, as
        ``<stem>.js``, rewritten only when its content changed; ``height`` (px) is
        reserved on the page until it is drawn. Return its mark for the page."""
        stem = self._stem(kind, *parts)
        name = f"{stem}.js"
        text = f"cladChart({H.script_json(stem)}, {H.script_json(spec)});\n"
        data = text.encode("utf-8")
        target = self.folder / name
        try:
            same = target.stat().st_size == len(data) and target.read_bytes() == data
        except OSError:
            same = False
        if same:
            self.reused += 1
        else:
            with atomic_output(target) as tmp:
                tmp.write_bytes(data)
            self.drawn += 1
        self.paths[name] = target
        entry = _Entry(stem, section, description, self.page, int(height))
        self.entries.append(entry)
        self._by_stem[stem] = entry
        return f"<!--clad-figure:{stem}-->"

    def prune(self) -> None:
        """Remove the figure files of ``folder`` (an earlier report's) that this report does not show."""
        for p in [*self.folder.glob("*.png"), *self.folder.glob("*.js")]:
            if p.name not in self.paths:
                p.unlink(missing_ok=True)

    def figure_html(self, stem: str, prefix: str = "") -> str:
        """The ``<figure>`` of ``stem``, for a page at ``prefix`` (``""`` beside the figures' folder,
        ``"../"`` one folder down)."""
        e = self._by_stem[stem]
        src = f"{prefix}{self.folder.name}/{stem}.js"
        return H.chart_file(src, stem, e.description, e.height, anchor="fig-" + stem)

    def render(self, text: str, prefix: str = "") -> str:
        """``text`` with every figure mark replaced by its ``<figure>`` elements."""
        return _TOKEN.sub(lambda m: self.figure_html(m.group(1), prefix), text)

    def index_html(self) -> str:
        """The index of figures: what each shows, the page it is on, and its file."""
        if not self.entries:
            return H.message("no figures: no finished run has a value to draw")
        rows = []
        for k, e in enumerate(self.entries, 1):
            name = f"{e.stem}.js"
            rows.append(
                f'<tr><td>{k}</td><td><a href="{H.html.escape(e.page)}#fig-{H.html.escape(e.stem)}">'
                f"{H.html.escape(e.description)}</a></td><td>{H.html.escape(e.section)}</td>"
                f'<td><a href="{H.html.escape(self.folder.name)}/{H.html.escape(name)}">'
                f"{H.html.escape(name)}</a></td></tr>"
            )
        return (
            "<table class='table index'><thead><tr><th>#</th><th>figure</th><th>section</th><th>file</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
        )


def heatmap_section(results, figs: FigureStore, messages: list) -> str:
    """The R heatmaps, one figure per dataset x scenario x base metric (drawn by the browser:
    :func:`clad.report.charts.heatmap_chart`)."""
    from .charts_heatmap import heatmap_chart

    data, problems = heatmaps(results)
    messages.extend(problems)
    out = [H.message(p) for p in problems]
    groups: dict[tuple, list] = {}
    for hm in data:
        groups.setdefault((hm.dataset, hm.scenario, hm.base_metric), []).append(hm)
    out.append(
        "<p class='legend'>R averaged over seeds (annotation: mean ± std): rows are training steps, columns "
        "test concepts. A black border marks the step where each concept was first learned; faded cells are "
        "future cells, before the concept was learned; a dashed border marks test concepts never learned; grey "
        "'n/a' cells are undefined (e.g. a single-class test concept); a small circle marks a cell that cannot "
        "be told from chance (what a detector without information gets on that test concept lies within the "
        "cell's interval over seeds, or between its values with fewer than 3 seeds). Hover a cell for its "
        "values. The first base metric is shown; the others are folded below.</p>"
    )
    bases = list(dict.fromkeys(key[2] for key in groups))
    folded: dict[str, list[str]] = {b: [] for b in bases}
    for k, items in groups.items():
        dataset, scenario, base = k
        spec, height = heatmap_chart(items)
        mark = figs.chart(
            spec,
            height,
            "R heatmaps",
            f"R heatmaps {dataset} / {scenario} / {base_metric_shown(base)}",
            "heatmap",
            *k,
        )
        title = f"<h3>{H.html.escape(f'{dataset} / {scenario} — {base_metric_shown(base)}')}</h3>"
        folded[base].append(title + mark)
    for k, base in enumerate(bases):
        out.append(
            "\n".join(folded[base])
            if k == 0
            else H.details(f"R heatmaps of {base_metric_shown(base)}", "\n".join(folded[base]))
        )
    return "\n".join(out)


def blocks_section(table: pd.DataFrame, figs: FigureStore, kind: str) -> str:
    """``kind="curves"``: learning curves, one figure per dataset x scenario x base metric;
    ``"forgetting"``: per-concept forgetting, one per dataset x scenario (a panel per base metric)."""
    from .charts import curves_chart, forgetting_chart

    if table.empty:
        return H.message("nothing to show: no finished run has a value here")
    out = []
    # one figure per dataset, scenario and base metric: the first base metric shown
    if kind == "curves":
        bases = list(dict.fromkeys(table["base_metric"]))
        shown: dict[str, list[str]] = {b: [] for b in bases}
        # many base metrics: lower panels, the page keeps its budget
        panel_h = 220 if len(bases) <= 4 else 160
        for (dataset, scenario, base), part in table.groupby(
            ["dataset", "scenario", "base_metric"], sort=False
        ):
            spec, height = curves_chart(
                part,
                f"Learning curves of {dataset} / {scenario}: {base_metric_shown(base)} "
                "(mean over seeds, band ± std; dashed: chance)",
                panel_h,
            )
            shown[base].append(
                figs.chart(
                    spec,
                    height,
                    "Learning curves",
                    f"learning curves {dataset} / {scenario} / {base_metric_shown(base)}",
                    "curves",
                    dataset,
                    scenario,
                    base,
                )
            )
        return "\n".join(
            H.figure_grid(shown[b])
            if k == 0
            else H.details(f"Learning curves of {base_metric_shown(b)}", H.figure_grid(shown[b]))
            for k, b in enumerate(bases)
        )
    for (dataset, scenario), part in table.groupby(["dataset", "scenario"], sort=False):
        spec, height = forgetting_chart(
            part,
            f"Forgetting of {dataset} / {scenario} (peak − final; mean over seeds, "
            "error bars ± std)",
        )
        out.append(
            figs.chart(
                spec,
                height,
                "Per-concept forgetting",
                f"per-concept forgetting {dataset} / {scenario}",
                "forgetting",
                dataset,
                scenario,
            )
        )
    return H.figure_grid(out)


def cd_html(c, figs: FigureStore) -> str:
    """The critical-difference diagram of a comparison, or nothing when no post-hoc test was run or
    only two methods were compared (the diagram would repeat the p-value and ranks shown above it)."""
    if (c.wilcoxon_holm is None and c.nemenyi is None) or c.n_methods < 3:
        return ""
    from .cd_diagram import cd_chart
    from .posthoc import critical_difference

    spec, height = cd_chart(c, cd=critical_difference(c.n_blocks, c.n_methods, c.alpha))
    return figs.chart(
        spec,
        height,
        "Statistical comparison",
        f"critical difference diagram {c.title}",
        "cd",
        c.by,
        c.metric,
        c.base_metric,
    )
