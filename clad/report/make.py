"""``make_report``: every figure, table and test of a list of run results, written into one folder
and tied together by ``index.html``."""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence


from ..defaults import DEFAULT_METRIC
from ..results.record import RunResult
from ..errors import CladValueError
from . import html as H
from .aggregate import dataset_of, merge_shared
from .chance import chance_table
from .leaderboard import leaderboard
from ..metrics import get_metric, scalar_names
from .figures import FigureStore
from .identical import merge_identical
from .pages import block_page_names, compute_rankings, headline_html, label_of
from .describe import CONFIG_KEYS
from .stats import DEFAULT_BLOCKS, Comparison
from .series import with_series_means
from .table_formats import latex_columns as latex_columns_of
from .block_page import BLOCK_SECTIONS, leaderboard_page, write_tables
from .details_page import DETAILS_SECTIONS, figures_section
from .first_page import caveat_box, caveats_of, findings_html, first_sections, what_was_run
from .sections import Page, atomic_write
from .statistics_page import STATISTICS_SECTIONS, verdict_text


__all__ = ["make_report", "Report"]


log = logging.getLogger(__name__)


@dataclass
class Report:
    """What :func:`make_report` wrote: the first page, every page (path relative to the folder
    -> path), the figures (name -> path; ``drawn`` of them drawn now, ``reused`` kept from the last
    report), the tables (format -> path), the statistical comparisons and the messages."""

    out_dir: Path
    index: Path
    figures: dict[str, Path] = field(default_factory=dict)
    tables: dict[str, Path] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    pages: dict[str, Path] = field(default_factory=dict)
    drawn: int = 0  # figures drawn by this report (the others were kept from the last one)
    reused: int = 0

    def all_text(self) -> str:
        """The HTML of every page, the first page first: what a reader reaches from it."""
        paths = [self.index, *(p for p in self.pages.values() if p != self.index)]
        return "\n".join(p.read_text(encoding="utf-8") for p in paths if p.is_file())


def _links(prefix: str) -> list[tuple[str, str]]:
    return [
        (f"{prefix}index.html", "First page"),
        (f"{prefix}leaderboard.html", "Leaderboard page (every row)"),
        (f"{prefix}statistics.html", "Statistics page"),
        (f"{prefix}details.html", "Details page"),
    ]


def make_report(
    results: Iterable[RunResult],
    out_dir: str | os.PathLike,
    spec: Mapping | None = None,
    *,
    by: Sequence[str] = ("detector", "strategy"),
    stat_metrics: Sequence[str] = (DEFAULT_METRIC,),
    blocks: Sequence[str] = DEFAULT_BLOCKS,
    alpha: float = 0.05,
    title: str | None = None,
    spec_text: str | None = None,
    references: Sequence[RunResult] = (),
    headline: str | None = None,
    latex_columns: str | Sequence[str] | None = None,
) -> Report:
    """Write the report of ``results`` into ``out_dir`` and return what was written.

    ``out_dir/index.html``, the first page: what was run (one line), the headline across blocks
    (:mod:`clad.report.ranking`: each scenario's top group, the configurations whose rank interval
    over resampled blocks reaches first place, with P(first); a configuration missing a block is
    named and left out), what the statistics support, one box of caveats, the ranking table
    (sortable, filterable), the best configuration of each block, the compact leaderboard when it
    fits, a cost–quality figure, the links to the block pages and the warnings grouped by cause.
    One page per block (``blocks/*.html``: its leaderboard, R heatmaps, learning curves,
    per-concept forgetting, cost), ``leaderboard.html``, ``statistics.html`` (for every field in
    ``by``, base metric and metric in ``stat_metrics``, methods compared over ``blocks`` with
    :func:`clad.report.stats.compare`; a comparison that cannot be made is explained there and in
    ``Report.messages`` and issues a :class:`~clad.report.stats.StatisticsWarning`) and
    ``details.html`` (spec, provenance, warnings, references, streams, the index of figures). The
    figures are Vega-Lite specifications in ``out_dir/figures`` that the browser draws when they
    scroll into view (:mod:`clad.report.charts`); a figure whose content did not change since the
    last report in ``out_dir`` is not written again, and figures no page shows any more are removed. Also
    ``leaderboard.{csv,md,tex}`` and ``statistics.csv``. Failed runs are listed, not used. A
    configuration shared by several scenarios (the same computation,
    :func:`clad.report.aggregate.merge_shared`) or strategies with identical R everywhere
    (:func:`clad.report.identical.merge_identical`) are shown once, labelled with each name.

    The headline base metric (``headline``, else the first of the spec's ``base_metrics``) leads
    the headline, the tables and the statistics; the others follow in the spec's order.
    ``latex_columns`` picks the columns of ``leaderboard.tex`` (:func:`clad.report.table_formats.latex_columns`:
    the headline metrics by default, ``"all"`` for one table per metric family, or names/labels).
    """
    results = list(results)
    latex = _checked_options(results, by, stat_metrics, headline, latex_columns)
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    H.write_assets(out / "assets")
    report = Report(out_dir=out, index=out / "index.html")
    page = _page(
        results,
        out,
        report,
        headline=headline,
        latex_columns=latex,
        by=by,
        stat_metrics=stat_metrics,
        blocks=blocks,
        alpha=alpha,
        spec=spec,
        spec_text=spec_text,
        references=references,
    )
    write_tables(page)
    name = title or (f"clad report: {spec['name']}" if spec and spec.get("name") else "clad report")
    pages: dict[str, tuple[str, list, str]] = {}  # path -> (title, sections, intro)
    page.figs.page = "statistics.html"
    statistics = [part for build in STATISTICS_SECTIONS for part in build(page)]
    pages["statistics.html"] = (f"{name}: statistics", statistics, "")
    page.figs.page = "leaderboard.html"
    pages["leaderboard.html"] = (f"{name}: leaderboard", leaderboard_page(page), "")
    blocks_shown = _block_pages(page, name, pages)
    page.figs.page = "details.html"
    details = [part for build in DETAILS_SECTIONS for part in build(page)]
    page.figs.page = "index.html"
    first, intro, caveats = _first_page(page, blocks_shown)
    pages["index.html"] = (name, first, intro)
    page.figs.prune()
    items = "".join(f"<li>{H.html.escape(m)}</li>" for m in dict.fromkeys(caveats))
    details.append(("caveats", "Caveats", f"<ul>{items}</ul>"))
    page.figs.page = "details.html"
    details.extend(figures_section(page))
    pages["details.html"] = (f"{name}: details", details, "")
    _write_pages(out, pages, page.figs)
    report.figures = dict(page.figs.paths)
    report.pages = {p: out / p for p in pages}
    report.drawn, report.reused = page.figs.drawn, page.figs.reused
    n_figures = len(report.figures)
    log.debug("report written to %s (%d figures, %d drawn)", report.index, n_figures, report.drawn)
    return report


def _checked_options(results, by, stat_metrics, headline, latex_columns):
    """The LaTeX columns asked for; a bad option is a clear error before anything is written."""
    for m in stat_metrics:
        get_metric(m)
    for b in by:
        if b not in CONFIG_KEYS:
            raise CladValueError(
                f"by={b!r} is not a configuration field; allowed: {', '.join(CONFIG_KEYS)}"
            )
    latex = latex_columns_of(latex_columns)
    if headline is not None:
        recorded = {m for r in results if r.ok for m in (*r.R, *r.metrics)}
        if recorded and headline not in recorded:
            raise CladValueError(
                f"headline={headline!r} is not a base metric of these results; allowed: "
                f"{', '.join(sorted(recorded))}"
            )
    return latex


def _page(results: list, out: Path, report: Report, *, headline, **options) -> Page:
    """What every section builder reads: the finished runs (per-series means beside R), each
    shared or identical configuration once, the leaderboard, the chance rows and the figures."""
    ok = with_series_means(r for r in results if r.ok)  # time series: per-series means beside R
    n_failed = len(results) - len(ok)
    if n_failed:
        report.messages.append(
            f"{n_failed} of {len(results)} runs failed and are left out (listed under Provenance); "
            "a comparison of methods leaves out, for every method of a dataset, the configurations "
            "some method did not complete (each comparison's notes name them)"
        )
    shown, same = merge_identical(merge_shared(ok))
    report.messages.extend(same)
    return Page(
        results=results,
        ok=ok,
        shown=shown,
        lb=leaderboard(shown, headline=headline),
        chance=chance_table(shown),
        figs=FigureStore(out / "figures"),
        report=report,
        out=out,
        headline_metric=next(iter(scalar_names(headline=True)), DEFAULT_METRIC),
        **options,
    )


def _block_pages(page: Page, name: str, pages: dict) -> list[tuple[str, int, str]]:
    """Add one page per block (a dataset's page holds all its orders) to ``pages``; return each
    block, its number of runs and its page."""
    block_list = list(dict.fromkeys(dataset_of(r) for r in page.shown))
    runs_of = {b: sum(1 for r in page.results if dataset_of(r) == b) for b in block_list}
    names = block_page_names(block_list)
    for block in block_list:
        path = names[block]
        page.figs.page = path
        sub = [r for r in page.shown if dataset_of(r) == block]
        labels = {r.dataset for r in sub}
        part = dataclasses.replace(
            page,
            shown=sub,
            ok=[r for r in page.ok if dataset_of(r) == block],
            lb=page.lb[page.lb["dataset"].isin(labels)],
            chance=page.chance[page.chance["dataset"].isin(labels)]
            if not page.chance.empty
            else page.chance,
            prefix="../",
        )
        intro = (
            f"<p class='back'><a href='../index.html'>← first page</a> · block {H.html.escape(block)}: "
            f"{runs_of[block]:,} runs</p>"
        )
        sections = [p for build in BLOCK_SECTIONS for p in build(part)]
        pages[path] = (f"{name}: {block}", sections, intro)
    return [(b, runs_of[b], names[b]) for b in block_list]


def _first_page(page: Page, blocks: list[tuple[str, int, str]]) -> tuple[list, str, list[str]]:
    """The first page's sections and its top (what was run, the headline, the findings, the
    caveats' box), and every caveat."""
    base = page.lb["base_metric"].iloc[0] if not page.lb.empty else DEFAULT_METRIC
    metric = page.headline_metric
    label = label_of(metric, base)
    rankings, tables = compute_rankings(
        page.shown + [r for r in page.results if not r.ok], metric, base
    )
    names = {b: path for b, _, path in blocks}
    first = first_sections(page, rankings, tables, label, [(b, n) for b, n, _ in blocks], names)
    verdicts = [
        f"{c.title}: {verdict_text(c)}"
        for c in page.report.comparisons
        if c.metric == metric and c.base_metric == base and verdict_text(c)
    ]
    method = next((r.method for r in rankings if r.method), "the blocks")
    caveats = caveats_of(page)
    headline = headline_html(rankings, label, verdicts, method)
    # one block: its scenarios first
    intro = (
        f"<p class='run'>{H.html.escape(what_was_run(page, len(page.results) - len(page.ok)))}</p>"
        + (headline + findings_html(page) if len(blocks) > 1 else findings_html(page) + headline)
        + caveat_box(caveats)
    )
    return first, intro, caveats


def _write_pages(out: Path, pages: dict, figs: FigureStore) -> None:
    """Write every page (its figures' marks rendered) and remove the page of a block no longer in
    the results."""
    for path, (page_title, sections, intro) in pages.items():
        prefix = "../" * path.count("/")
        if path != "index.html" and not intro:
            intro = f"<p class='back'><a href='{prefix}index.html'>← first page</a></p>"
        sections = [(a, h, figs.render(b, prefix)) for a, h, b in sections]
        text = H.page(
            page_title, sections, figs.render(intro, prefix), prefix=prefix, links=_links(prefix)
        )
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text)
    for old in (out / "blocks").glob("*.html") if (out / "blocks").is_dir() else ():
        if f"blocks/{old.name}" not in pages:
            old.unlink()
