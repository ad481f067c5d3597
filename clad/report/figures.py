"""The figures of a report: built from aggregated results, saved as PNGs under readable, unique
file names, embedded in the page and listed in its index of figures.

One figure per dataset x scenario x base metric holds the R heatmaps of every strategy + detector
(small multiples on one colour scale); one figure per dataset x scenario holds the learning curves
and one the per-concept forgetting of every base metric; each statistical comparison with a
post-hoc test has its critical-difference diagram.
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
from .aggregate import heatmaps

__all__ = ["FigureStore", "figure_name", "heatmap_section", "curves_section", "forgetting_section", "cd_html"]

#: longest figure file name (characters, ``.png`` included): well under the 255 bytes file systems allow
MAX_NAME = 180


def _part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", str(text)).strip("-") or "x"


def figure_name(kind: str, *parts: str) -> str:
    """A readable file name from the figure's kind and what it shows: parts joined by ``__``,
    characters other than letters, digits and ``_`` turned into ``-``. A name longer than
    :data:`MAX_NAME` keeps the start of every part and ends with a hash of the whole name.

    >>> figure_name("heatmap", "synthetic", "concept_aware", "roc_auc")
    'heatmap__synthetic__concept_aware__roc_auc.png'
    >>> len(figure_name("cd", "x" * 300)) <= MAX_NAME
    True
    """
    pieces = [_part(kind)] + [_part(p) for p in parts]
    name = "__".join(pieces)
    if len(name) + 4 <= MAX_NAME:
        return name + ".png"
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:10]
    room = MAX_NAME - 4 - len(digest) - 2 - 2 * (len(pieces) - 1)
    each = max(3, room // len(pieces))
    return "__".join(p[:each] for p in pieces)[: MAX_NAME - 4 - len(digest) - 2] + "--" + digest + ".png"


@dataclass(frozen=True)
class _Entry:
    name: str
    anchor: str
    section: str
    description: str


class FigureStore:
    """Writes figures into ``folder`` (PNG at ``dpi``) and remembers them for the index."""

    def __init__(self, folder: Path, dpi: int):
        self.folder, self.dpi = Path(folder), dpi
        self.paths: dict[str, Path] = {}
        self.entries: list[_Entry] = []

    def add(self, fig, section: str, description: str, kind: str, *parts: str) -> str:
        """Save ``fig``; return its ``<figure>`` for the page (anchored, captioned, linked to the file)."""
        from .plots import figure_png

        png = figure_png(fig, dpi=self.dpi)
        name = figure_name(kind, *parts)
        stem, k = name[:-4], 2
        while name in self.paths:
            name, k = f"{stem}-{k}.png", k + 1
        path = self.folder / name
        with atomic_output(path) as tmp:
            tmp.write_bytes(png)
        self.paths[name] = path
        anchor = "fig-" + name[:-4]
        self.entries.append(_Entry(name, anchor, section, description))
        return H.img(png, description, description, anchor=anchor, href=f"{self.folder.name}/{name}")

    def index_html(self) -> str:
        """The index of figures: what each shows, where it is on the page, and its file."""
        if not self.entries:
            return H.message("no figures: no finished run has a value to draw")
        rows = "".join(f'<tr><td>{k}</td><td><a href="#{e.anchor}">{H.html.escape(e.description)}</a></td>'
                       f'<td>{H.html.escape(e.section)}</td>'
                       f'<td><a href="{H.html.escape(self.folder.name)}/{H.html.escape(e.name)}">'
                       f"{H.html.escape(e.name)}</a></td></tr>"
                       for k, e in enumerate(self.entries, 1))
        return ("<table class='table index'><thead><tr><th>#</th><th>figure</th><th>section</th><th>file</th></tr>"
                f"</thead><tbody>{rows}</tbody></table>")


def heatmap_section(results, figs: FigureStore, messages: list) -> str:
    """The R heatmaps, one figure (or more for very many panels) per dataset x scenario x base metric."""
    from .plots import HeatmapFigures

    data, problems = heatmaps(results)
    messages.extend(problems)
    out = [H.message(p) for p in problems]
    groups: dict[tuple, list] = {}
    for hm in data:
        groups.setdefault((hm.dataset, hm.scenario, hm.base_metric), []).append(hm)
    out.append("<p class='legend'>R averaged over seeds (annotation: mean ± std): rows are training steps, columns "
               "test concepts. A black border marks the step where each concept was first learned; hatched cells "
               "(//) are future cells, before the concept was learned; dotted cells (..) are test concepts never "
               "learned; grey 'n/a' cells are undefined (e.g. a single-class test concept); a small circle marks a "
               "cell that cannot be told from chance (what a detector without information gets on that test "
               "concept lies within the cell's interval over seeds, or between its values with fewer than 3 "
               "seeds). The first base metric is shown; the others are folded below.</p>")
    build = HeatmapFigures()  # the figures of one base metric are reused for the next
    bases = list(dict.fromkeys(key[2] for key in groups))
    folded: dict[str, list[str]] = {b: [] for b in bases}
    for (dataset, scenario, base), items in groups.items():
        part_html = [f"<h3>{H.html.escape(f'{dataset} / {scenario} — {base_metric_shown(base)}')}</h3>"]
        fig_list = build(items)
        for part, fig in enumerate(fig_list, 1):
            extra = [f"part{part}"] if len(fig_list) > 1 else []
            desc = (f"R heatmaps {dataset} / {scenario} / {base_metric_shown(base)}"
                    + (f" (part {part})" if extra else ""))
            part_html.append(figs.add(fig, "R heatmaps", desc, "heatmap", dataset, scenario, base, *extra))
        folded[base].extend(part_html)
    for k, base in enumerate(bases):
        out.append("\n".join(folded[base]) if k == 0 else
                   H.details(f"R heatmaps of {base_metric_shown(base)}", "\n".join(folded[base])))
    return "\n".join(out)


def _blocks_section(table: pd.DataFrame, figs: FigureStore, kind: str) -> str:
    from .plots import curves_figure, forgetting_figure

    if table.empty:
        return H.message("nothing to show: no finished run has a value here")
    out = []
    if kind == "curves":  # one figure per dataset, scenario and base metric: the first base metric shown
        bases = list(dict.fromkeys(table["base_metric"]))
        shown: dict[str, list[str]] = {b: [] for b in bases}
        for (dataset, scenario, base), part in table.groupby(["dataset", "scenario", "base_metric"], sort=False):
            desc = f"learning curves {dataset} / {scenario} / {base_metric_shown(base)}"
            fig = curves_figure(part, f"Learning curves of {dataset} / {scenario}: {base_metric_shown(base)} (mean "
                                      "over seeds, band ± std; dashed: chance)")
            shown[base].append(figs.add(fig, "Learning curves", desc, "curves", dataset, scenario, base))
        return "\n".join(H.figure_grid(shown[b]) if k == 0 else
                         H.details(f"Learning curves of {base_metric_shown(b)}", H.figure_grid(shown[b]))
                         for k, b in enumerate(bases))
    for (dataset, scenario), part in table.groupby(["dataset", "scenario"], sort=False):
        desc = f"per-concept forgetting {dataset} / {scenario}"
        fig = forgetting_figure(part, f"Forgetting of {dataset} / {scenario} (peak − final; mean over seeds, "
                                      f"error bars ± std)")
        out.append(figs.add(fig, "Per-concept forgetting", desc, "forgetting", dataset, scenario))
    return H.figure_grid(out)


def curves_section(table: pd.DataFrame, figs: FigureStore) -> str:
    """Learning curves, one figure per dataset x scenario (a row of panels per base metric)."""
    return _blocks_section(table, figs, "curves")


def forgetting_section(table: pd.DataFrame, figs: FigureStore) -> str:
    """Per-concept forgetting, one figure per dataset x scenario (a panel per base metric)."""
    return _blocks_section(table, figs, "forgetting")


def cd_html(c, figs: FigureStore) -> str:
    """The critical-difference diagram of a comparison, or nothing when no post-hoc test was run or
    only two methods were compared (the diagram would repeat the p-value and ranks shown above it)."""
    if (c.wilcoxon_holm is None and c.nemenyi is None) or c.n_methods < 3:
        return ""
    from .plots import cd_figure

    return figs.add(cd_figure(c), "Statistical comparison", f"critical difference diagram {c.title}",
                    "cd", c.by, c.metric, c.base_metric)
