"""The figures of a report, under readable, unique file names beside the pages, listed in its index
of figures.

Every page's figures are drawn by the browser (:mod:`clad.report.charts`: a Vega-Lite specification
per figure in a small script file, rewritten only when what it shows changed): one figure per
dataset x scenario x base metric holds the R heatmaps of every strategy + detector (small multiples
on one colour scale), one the learning curves; one per dataset x scenario holds the per-concept
forgetting of every base metric; each statistical comparison with a post-hoc test has its
critical-difference diagram. The PNGs left (a time-series run's traces, the anytime and prequential
curves) are drawn with matplotlib, the traces as planned drawings (:mod:`clad.report.drawing`).
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

__all__ = [
    "FigureStore",
    "figure_name",
    "heatmap_section",
    "curves_section",
    "forgetting_section",
    "cd_html",
]

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
    return (
        "__".join(p[:each] for p in pieces)[: MAX_NAME - 4 - len(digest) - 2]
        + "--"
        + digest
        + ".png"
    )


@dataclass(frozen=True)
class _Entry:
    stem: str
    section: str
    description: str
    page: str


#: what a figure leaves in a page's text until the page is written (:meth:`FigureStore.render`)
_TOKEN = re.compile(r"<!--clad-figure:([^>]*?)-->")


class FigureStore:
    """The figures of a report in ``folder``, kept by what they show: browser-drawn figures and PNGs
    at ``dpi``.

    :meth:`chart` keeps a figure the browser draws, :meth:`plan` records a PNG drawing (a function
    and its data) and :meth:`add` a PNG drawn already; each returns a mark for the page, which :meth:`render` turns into the ``<figure>`` (an image
    file loaded lazily, with its size, caption and link) once :meth:`finish` has drawn what needed
    drawing (:func:`clad.report.drawing.draw_planned`: a figure whose content did not change since
    the last report is reused). ``page`` is the page the figures planned now appear on.
    """

    def __init__(self, folder: Path, dpi: int):
        self.folder, self.dpi = Path(folder), dpi
        self.paths: dict[str, Path] = {}
        self.entries: list[_Entry] = []
        self.files: dict[str, list[str]] = {}
        self.planned: list = []
        self.page = "index.html"
        self.drawn = self.reused = 0
        self._stems: set[str] = set()
        self._description: dict[str, str] = {}
        self.heights: dict[str, int] = {}

    def _stem(self, kind: str, *parts: str) -> str:
        stem = figure_name(kind, *parts)[:-4]
        base, k = stem, 2
        while stem.lower() in self._stems:  # letter case aside: some file systems ignore it
            stem, k = f"{base}-{k}", k + 1
        self._stems.add(stem.lower())
        return stem

    def _entry(self, stem: str, section: str, description: str) -> str:
        self.entries.append(_Entry(stem, section, description, self.page))
        self._description[stem] = description
        return f"<!--clad-figure:{stem}-->"

    def add(self, fig, section: str, description: str, kind: str, *parts: str) -> str:
        """Save ``fig`` (drawn here and now); return its mark for the page."""
        from .canvas import figure_png

        stem = self._stem(kind, *parts)
        png = figure_png(fig, dpi=self.dpi)
        name = f"{stem}.png"
        with atomic_output(self.folder / name) as tmp:
            tmp.write_bytes(png)
        self.files[stem] = [name]
        self.paths[name] = self.folder / name
        self.drawn += 1
        return self._entry(stem, section, description)

    def chart(
        self, spec: dict, height: int, section: str, description: str, kind: str, *parts: str
    ) -> str:
        """Keep the Vega-Lite figure ``spec`` (:mod:`clad.report.charts`), which the browser draws, as
        ``<stem>.js`` beside the PNGs, rewritten only when its content changed; ``height`` (px) is
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
        self.files[stem] = [name]
        self.paths[name] = target
        self.heights[stem] = int(height)
        return self._entry(stem, section, description)

    def plan(self, draw, args: tuple, figures: list[tuple[str, str, str, tuple]]) -> list[str]:
        """Plan ``draw(*args)``, which returns one list of figures per item of ``figures``
        (``(section, description, kind, parts)``); return their marks for the page."""
        from .drawing import Planned

        stems = [self._stem(kind, *parts) for _, _, kind, parts in figures]
        self.planned.append(Planned(tuple(stems), draw, tuple(args)))
        return [
            self._entry(stem, section, description)
            for stem, (section, description, _, _) in zip(stems, figures)
        ]

    def finish(self, jobs: int = 1) -> None:
        """Draw the planned figures that need drawing (in ``jobs`` processes), and remove the PNGs
        of an earlier report that this one does not show."""
        from .drawing import draw_planned, prune

        drawn, reused, files = draw_planned(self.folder, self.dpi, self.planned, jobs)
        self.drawn += drawn
        self.reused += reused
        self.files.update(files)
        self.paths.update({n: self.folder / n for names in self.files.values() for n in names})
        prune(self.folder, set(self.paths))

    def figure_html(self, stem: str, prefix: str = "") -> str:
        """The ``<figure>`` elements of ``stem``'s files (one per part), for a page at ``prefix``
        (``""`` beside the figures' folder, ``"../"`` one folder down)."""
        from .drawing import png_size

        names = self.files.get(stem, [])
        description = self._description.get(stem, stem)
        if stem in self.heights:  # a figure the browser draws
            return H.chart_file(
                f"{prefix}{self.folder.name}/{names[0]}",
                stem,
                description,
                self.heights[stem],
                anchor="fig-" + stem,
            )
        out = []
        for k, name in enumerate(names, 1):
            caption = description + (f" (part {k} of {len(names)})" if len(names) > 1 else "")
            out.append(
                H.img_file(
                    f"{prefix}{self.folder.name}/{name}",
                    caption,
                    caption,
                    size=png_size(self.folder / name),
                    anchor="fig-" + name[:-4],
                )
            )
        return "\n".join(out)

    def render(self, text: str, prefix: str = "") -> str:
        """``text`` with every figure mark replaced by its ``<figure>`` elements."""
        return _TOKEN.sub(lambda m: self.figure_html(m.group(1), prefix), text)

    def index_html(self, prefix: str = "") -> str:
        """The index of figures: what each shows, the page it is on, and its file."""
        if not self.entries:
            return H.message("no figures: no finished run has a value to draw")
        rows = []
        k = 0
        for e in self.entries:
            for name in self.files.get(e.stem, []):
                k += 1
                rows.append(
                    f'<tr><td>{k}</td><td><a href="{H.html.escape(prefix + e.page)}#fig-{H.html.escape(name.rsplit(".", 1)[0])}">'
                    f"{H.html.escape(e.description)}</a></td><td>{H.html.escape(e.section)}</td>"
                    f'<td><a href="{H.html.escape(prefix + self.folder.name)}/{H.html.escape(name)}">'
                    f"{H.html.escape(name)}</a></td></tr>"
                )
        return (
            "<table class='table index'><thead><tr><th>#</th><th>figure</th><th>section</th><th>file</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
        )


def heatmap_section(results, figs: FigureStore, messages: list) -> str:
    """The R heatmaps, one figure per dataset x scenario x base metric (drawn by the browser:
    :func:`clad.report.charts.heatmap_chart`)."""
    from .charts import heatmap_chart

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


def _blocks_section(table: pd.DataFrame, figs: FigureStore, kind: str) -> str:
    from .charts import curves_chart, forgetting_chart

    if table.empty:
        return H.message("nothing to show: no finished run has a value here")
    out = []
    if (
        kind == "curves"
    ):  # one figure per dataset, scenario and base metric: the first base metric shown
        bases = list(dict.fromkeys(table["base_metric"]))
        shown: dict[str, list[str]] = {b: [] for b in bases}
        panel_h = (
            220 if len(bases) <= 4 else 160
        )  # many base metrics: lower panels, the page keeps its budget
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


def curves_section(table: pd.DataFrame, figs: FigureStore) -> str:
    """Learning curves, one figure per dataset x scenario x base metric."""
    return _blocks_section(table, figs, "curves")


def forgetting_section(table: pd.DataFrame, figs: FigureStore) -> str:
    """Per-concept forgetting, one figure per dataset x scenario (a panel per base metric)."""
    return _blocks_section(table, figs, "forgetting")


def cd_html(c, figs: FigureStore) -> str:
    """The critical-difference diagram of a comparison, or nothing when no post-hoc test was run or
    only two methods were compared (the diagram would repeat the p-value and ranks shown above it)."""
    if (c.wilcoxon_holm is None and c.nemenyi is None) or c.n_methods < 3:
        return ""
    from .charts import cd_chart
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
