"""``make_report``: every figure, table and test of a list of run results, written into one folder
and tied together by ``index.html``."""

from __future__ import annotations

import dataclasses
import logging
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..defaults import DEFAULT_METRIC
from ..atomic import atomic_output
from ..results.record import RunResult
from ..errors import CladValueError
from . import html as H
from .aggregate import dataset_of, merge_shared
from .chance import chance_table
from .figure_data import forgetting_table, learning_curves
from .leaderboard import leaderboard
from ..metrics import get_metric, scalar_names
from ..metrics.base import base_metric_shown
from .cost import cost_section
from .order_sensitivity import order_key, order_sensitivity
from .figures import FigureStore, curves_section, forgetting_section, heatmap_section
from .tuning_validity import tuning_section, validity_section
from .identical import merge_identical
from .pages import (
    blocks_html,
    block_page_names,
    compute_rankings,
    headline_html,
    label_of,
    ranking_html,
    warnings_html,
    winners_html,
)
from .wording import result_text, warning_groups, warning_template
from .describe import CONFIG_KEYS, MIN_INTERVAL_N, plural
from .stats import DEFAULT_BLOCKS, Comparison, StatisticsWarning, compare
from .stats_html import comparison_html, statistics_frame, statistics_intro, statistics_rows
from .headline import ONE_VALUE_LEGEND, ONE_VALUE_MARK, deterministic_caveats, headline_lines
from .series import per_series_table, with_series_means
from .tables import cost_html, leaderboard_compact_html, frame_html, leaderboard_html
from .table_formats import (
    latex_columns as latex_columns_of,
    leaderboard_latex,
    leaderboard_markdown,
)

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


def _atomic_write(path: Path, data: bytes | str) -> None:
    """Write through a temporary file and a rename (readable by all, like a page meant to be shared)."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def _stream_section(results, figs: FigureStore, kind: str) -> str | None:
    """The anytime or prequential curves of the runs that record them (None when none does)."""
    from .plots import new_axes, plot_stream
    from .stream import anytime_table, prequential_table

    table = anytime_table(results) if kind == "anytime" else prequential_table(results)
    if table.empty:
        return None
    out = []
    if kind == "anytime":
        out.append(
            "<p class='legend'>Anytime evaluation: the test concepts scored several times while the stream "
            "is learned; mean over all test concepts (left) and over the concepts learned so far (right), "
            "mean over seeds ± std; dotted lines mark the concept boundaries.</p>"
        )
        for (dataset, scenario, base), part in table.groupby(
            ["dataset", "scenario", "base_metric"], sort=False
        ):
            fig, axes = new_axes((11.0, 4.0), 1, 2)
            for ax, curve in zip(axes, ("all", "seen")):
                plot_stream(
                    part[part["kind"] == curve],
                    ax,
                    ylabel=f"{base}, mean over {curve} concepts",
                    title=f"anytime: {curve} concepts",
                    boundaries=part["boundaries"].iloc[0],
                )
            fig.suptitle(f"{dataset} / {scenario} — {base}", fontsize=10)
            out.append(
                figs.add(
                    fig,
                    "anytime",
                    f"anytime curves {dataset} / {scenario} / {base}",
                    "anytime",
                    dataset,
                    scenario,
                    base,
                )
            )
    else:
        window = ", ".join(sorted({str(w) for w in table["window"]}))
        out.append(
            "<p class='legend'>Prequential (test-then-train) evaluation: each batch of the stream scored "
            f"before it is learned; cumulative over every row scored so far (solid) and over the last "
            f"{H.html.escape(window)} batches (windowed), mean over seeds ± std.</p>"
        )
        for (dataset, scenario), part in table.groupby(["dataset", "scenario"], sort=False):
            metrics = list(dict.fromkeys(part["metric"]))
            fig, axes = new_axes((4.5 * len(metrics), 4.0), 1, len(metrics))
            for ax, metric in zip(np.atleast_1d(axes), metrics):
                plot_stream(
                    part[part["metric"] == metric],
                    ax,
                    ylabel=metric,
                    title=f"prequential {metric}",
                    line="kind",
                )
            fig.suptitle(f"{dataset} / {scenario}", fontsize=10)
            out.append(
                figs.add(
                    fig,
                    "prequential",
                    f"prequential scores {dataset} / {scenario}",
                    "prequential",
                    dataset,
                    scenario,
                )
            )
    return out[0] + H.figure_grid(out[1:])


def _references_html(references: Sequence[RunResult]) -> str | None:
    """The reference runs' score on each test concept (joint model; single-task expert: M's
    diagonal), one row per reference kind, dataset, detector, seed and base metric (None without)."""
    from ..protocol.reference_models import reference_scores

    rows = []
    for r in references:
        kind = r.config.get("reference")
        if not r.ok or kind is None:
            continue
        for base, R in r.R.items():
            scores = reference_scores(kind, r.concepts, r.test_concepts, R, r.test_concepts)
            rows.append(
                {
                    "reference": kind,
                    "dataset": r.dataset,
                    "detector": r.detector,
                    "seed": r.seed,
                    "base_metric": base,
                    **dict(zip(r.test_concepts, scores.tolist())),
                }
            )
    if not rows:
        return None
    return (
        "<p class='legend'>The reference scores each run is compared with (intransigence and forward transfer "
        "against a reference, in the leaderboard): per test concept, the joint model's score (one detector fitted "
        "on every training concept together) and the single-task expert's (a fresh detector fitted on that "
        "concept alone: the diagonal of the single-task matrix). Computed once per dataset, detector and "
        "seed.</p>" + frame_html(pd.DataFrame(rows))
    )


def _orders_html(table: pd.DataFrame) -> str:
    legend = (
        "<p class='legend'>Configurations run over several concept orders: each metric averaged over the "
        "seeds of one order, then described over the orders (how many orders have a value, min, max, range "
        "= max − min, std over orders). The spread over seeds is in the leaderboard. The heatmaps below are "
        "drawn per order, with the test concepts in one canonical order (sorted names); learning curves "
        "are averaged step by step, forgetting concept by concept, over every order and seed.</p>"
    )
    shown = table.copy()
    for c in shown.columns:
        if shown[c].dtype.kind == "f" and not c.endswith("_orders"):
            shown[c] = [f"{v:.3f}" if v == v else "n/a" for v in shown[c]]
    return legend + frame_html(shown)


def _spec_html(spec: Mapping | None, spec_text: str | None) -> str:
    if spec_text:
        return H.pre(spec_text)
    if spec:
        return (
            H.pre(H.toml_text(spec))
            + "<p class='legend'>The spec as recorded with the results (the file's "
            "text was not stored: comments and layout are not shown).</p>"
        )
    return H.message("no spec recorded with the results")


#: most runs listed on the page itself (beyond, runs.csv holds them)
MAX_RUN_ROWS = 500


def _provenance(results: Sequence[RunResult], runs_csv: Path | None = None) -> str:
    out = []
    versions: dict[str, set] = {}
    for r in results:
        for k, v in r.versions.items():
            versions.setdefault(k, set()).add(str(v))
    if versions:
        vt = pd.DataFrame(
            {
                "package": list(versions),
                "version": [", ".join(sorted(v)) for v in versions.values()],
            }
        )
        out.append(
            H.details(
                "Versions: "
                + ", ".join(f"{k} {', '.join(sorted(v))}" for k, v in list(versions.items())[:4])
                + (" …" if len(versions) > 4 else ""),
                frame_html(vt),
            )
        )
    seeds = sorted({r.seed for r in results})
    out.append(f"<p>Seeds: {H.html.escape(', '.join(map(str, seeds)) or 'none')}</p>")
    if any(
        isinstance((r.timings or {}).get("work"), dict) for r in results
    ):  # training steps shared by key
        from ..core.steps import format_work, grid_work

        out.append(
            f"<p>Computation: {H.html.escape(format_work(grid_work(results)))} (training steps and "
            "scoring passes with the same inputs are computed once; clad.core.steps)</p>"
        )
    datasets: dict[str, dict] = {}
    for r in results:
        info = {
            k: v
            for k, v in r.config.items()
            if "dataset" in k or k in ("metadata", "checksums", "sha256")
        }
        datasets.setdefault(r.dataset, info)
    if datasets:
        out.append(
            H.details(
                f"Datasets: {', '.join(datasets)}",
                "<p class='legend'>As recorded in the run "
                "configurations (parameters, and metadata and checksums when the loader records "
                "them).</p>" + H.pre(datasets),
            )
        )
    number = {r.run_id: k for k, r in enumerate(results, 1) if r.run_id}
    runs = pd.DataFrame(
        [
            {
                "run": k,
                "run id": r.run_id or "",
                **{c: getattr(r, c) for c in CONFIG_KEYS},
                "seed": r.seed,
                "status": r.status,
                # a shared run computed nothing: its seconds are the run it shares
                "seconds": (
                    f"shared with run {number.get(r.shared_from, r.shared_from)}"
                    if r.shared_from
                    else f"{r.timings.get('total', float('nan')):.2f}"
                ),
            }
            for k, r in enumerate(results, 1)
        ]
    )
    imported = [r for r in results if r.origin]
    if imported:  # runs imported from a bundle (clad pull, clad run --from) say so, run by run
        runs["origin"] = [
            r.origin[: len("bundle sha256:") + 12] if r.origin else "computed here" for r in results
        ]
        bundles = sorted({r.origin for r in imported})
        out.append(
            f"<p>Origin: {len(results) - len(imported)} runs computed here, {len(imported)} imported from "
            f"{H.html.escape(', '.join(b[: len('bundle sha256:') + 12] + '…' for b in bundles))} (each "
            "the same computation here by its result key: clad pull, clad run --from).</p>"
        )
    n_shared = sum(1 for r in results if r.shared_from)
    legend = (
        f"<p class='legend'>{len(results)} runs; {n_shared} of them the same computation as an earlier run "
        "(computed once, recorded for each configuration; no seconds of their own).</p>"
        if n_shared
        else ""
    )
    if runs_csv is not None:
        _atomic_write(runs_csv, runs.to_csv(index=False))
    if len(runs) <= MAX_RUN_ROWS:
        out.append(H.details(f"Runs ({len(results)})", legend + frame_html(runs)))
    else:
        out.append(
            f"<p>Runs: {len(results):,}, listed in <a href='runs.csv'>runs.csv</a>.</p>" + legend
        )
    failed = [r for r in results if not r.ok]
    causes: dict[str, list] = {}
    for r in failed:
        causes.setdefault(warning_template(r.cause or "unknown cause"), []).append(r)
    for cause, members in causes.items():
        r = members[0]
        more = f" and {len(members) - 1} more runs failing the same way" if len(members) > 1 else ""
        out.append(
            H.message(
                f"failed: {r.run_id} {r.dataset} / {r.scenario} / {r.strategy} / {r.detector} / seed "
                f"{r.seed}: {r.cause}{more}"
            )
        )
    return "\n".join(out)


@dataclass
class _Page:
    """What the section builders of :func:`make_report` share: the runs, the options, the figures,
    the report being written and the caveats gathered for the banner at the top."""

    results: list
    ok: list
    shown: list  # the finished runs, a shared configuration once (merge_shared)
    lb: pd.DataFrame
    chance: pd.DataFrame
    figs: FigureStore
    report: "Report"
    out: Path
    by: Sequence[str]
    stat_metrics: Sequence[str]
    blocks: Sequence[str]
    alpha: float
    spec: Mapping | None
    spec_text: str | None
    references: Sequence[RunResult]
    caveats: list = field(default_factory=list)
    latex_columns: Sequence[str] | None = None
    prefix: str = ""  # from the page being built to the report folder
    headline_metric: str = DEFAULT_METRIC


#: most leaderboard rows the first page holds as the compact leaderboard (beyond, the block pages hold it)
FIRST_PAGE_ROWS = 120


def _write_tables(p: _Page) -> None:
    numbers = p.lb.to_csv(index=False)
    for fmt, text in (
        ("csv", numbers),
        ("md", leaderboard_markdown(p.lb, p.chance)),
        ("tex", leaderboard_latex(p.lb, p.chance, p.latex_columns)),
    ):
        path = p.out / f"leaderboard.{fmt}"
        _atomic_write(path, text)
        p.report.tables[fmt] = path
    if (
        not p.chance.empty
    ):  # each continual metric of the chance matrices, per dataset, base metric and scenario
        _atomic_write(p.out / "chance.csv", p.chance.to_csv(index=False))
        p.report.tables["chance"] = p.out / "chance.csv"


def _leaderboard_section(p: _Page):
    """The compact leaderboard (every base metric side by side, chance rows), the whole of it
    when it fits the first page, else on the block pages."""
    if p.lb.empty:
        return [("leaderboard", "Leaderboard", H.message("no finished run: nothing to rank"))]
    from .baselines import baseline_legend, baseline_verdicts, baseline_detectors
    from .thresholds import threshold_legend

    main = (
        threshold_legend(p.shown)
        + baseline_legend(baseline_verdicts(p.lb, baseline_detectors(p.shown)))
        + _scrolled(
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


#: most rows a table shows at its full height (beyond, it scrolls in a box: the page keeps its height)
SCROLL_ROWS = 40


def _scrolled(html_text: str, rows: int) -> str:
    """``html_text`` in a scrolling box when its tables hold more than :data:`SCROLL_ROWS` rows."""
    return f"<div class='scroll'>{html_text}</div>" if rows > SCROLL_ROWS else html_text


def _leaderboard_page(p: _Page):
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


def _baselines_section(p: _Page):
    from .baselines import baseline_detectors, baseline_section, baseline_verdicts

    verdicts = baseline_verdicts(p.lb, baseline_detectors(p.shown))
    if verdicts.empty:
        return []
    _atomic_write(p.out / "baselines.csv", verdicts.to_csv(index=False))
    p.report.tables["baselines"] = p.out / "baselines.csv"
    return [("baselines", "Baselines", baseline_section(verdicts))]


def _thresholds_section(p: _Page):
    from .thresholds import threshold_section, threshold_table

    table = threshold_table(p.shown)
    if table.empty:
        return []
    import json

    # the drift after each step as a JSON list (null: no past concept yet), not a Python repr
    csv = table.assign(drift_per_step=table["drift_per_step"].map(json.dumps))
    _atomic_write(p.out / "thresholds.csv", csv.to_csv(index=False))
    p.report.tables["thresholds"] = p.out / "thresholds.csv"
    return [
        ("thresholds", "Thresholds and false-positive rates", threshold_section(p.shown, table))
    ]


def _cost_section(p: _Page):
    first = p.lb[p.lb["base_metric"] == p.lb["base_metric"].iloc[0]] if not p.lb.empty else p.lb
    table = cost_html(first) if not p.lb.empty else None
    if table is not None:
        table = _scrolled(table, len(first))
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


def _cost_quality_section(p: _Page):
    """One figure: quality against fit + score seconds per configuration, the Pareto front marked."""
    from .charts import cost_quality_chart
    from .costquality import cost_quality_table

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


def _statistics_section(p: _Page):
    stat_rows, stat_html, start = [], [], len(p.report.comparisons)
    base_metrics = list(dict.fromkeys(p.lb["base_metric"])) if not p.lb.empty else []
    for field_name in p.by:
        for base in base_metrics:
            for metric in p.stat_metrics:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = compare(
                        p.ok,
                        by=field_name,
                        metric=metric,
                        base_metric=base,
                        blocks=p.blocks,
                        alpha=p.alpha,
                    )
                p.report.comparisons.append(c)
                if c.message and c.statistic is None and c.wilcoxon_holm is None:
                    p.report.messages.append(f"{c.title}: {c.message}")
                    warnings.warn(f"{c.title}: {c.message}", StatisticsWarning, stacklevel=3)
                stat_rows.extend(statistics_rows(c))
                stat_rows.extend(_paired_rows(c))
                stat_html.append(
                    H.details(f"{c.title}: {_verdict_text(c)}", comparison_html(c, p.figs))
                )
    _atomic_write(p.out / "statistics.csv", statistics_frame(stat_rows).to_csv(index=False))
    p.report.tables["statistics"] = p.out / "statistics.csv"
    paper = _paper_tables(p, p.report.comparisons[start:])
    intro = statistics_intro(p.blocks, p.alpha, tuple(p.blocks) == DEFAULT_BLOCKS)
    return [
        (
            "statistics",
            "Statistical comparison",
            intro + paper + "<p class='legend'>Open a comparison for its "
            "tables and figures.</p>" + "\n".join(stat_html),
        )
    ]


def _paper_tables(p: _Page, comparisons) -> str:
    """``blocks.csv`` (each block's score per method: the tests' input) and the main tables of a
    paper (``main_table.tex``, ``main_table.md``: methods x datasets with a mean-rank column and the
    test), and the line that links them."""
    from .paper import blocks_frame, main_table_latex, main_table_markdown

    _atomic_write(p.out / "blocks.csv", blocks_frame(comparisons).to_csv(index=False))
    _atomic_write(p.out / "main_table.tex", main_table_latex(comparisons))
    _atomic_write(p.out / "main_table.md", main_table_markdown(comparisons))
    for name in ("blocks.csv", "main_table.tex", "main_table.md"):
        p.report.tables[name.replace(".", "_")] = p.out / name
    return (
        "<p class='legend'>For a paper: <a href='main_table.tex'>main_table.tex</a> (booktabs) and "
        "<a href='main_table.md'>main_table.md</a>, each comparison's methods × datasets with the mean "
        "rank and the test; <a href='blocks.csv'>blocks.csv</a>, every block's score per method, from "
        "which Friedman's test can be recomputed (the block score is defined in the statistics guide).</p>"
    )


def _paired_rows(c: Comparison) -> list[dict]:
    """Rows of ``statistics.csv`` (``level`` = "paired over seeds") for a one-block comparison: per
    pair the mean difference over seeds, its std, count, interval and in how many seeds ``a`` was better."""
    if c.paired is None or c.paired.empty:
        return []
    key = {
        "level": "paired over seeds",
        "by": c.by,
        "metric": c.metric,
        "base_metric": c.base_metric,
    }
    return [
        {
            **key,
            "a": row["a"],
            "b": row["b"],
            **{
                f"difference_{k}": row[f"difference_{k}"]
                for k in ("mean", "std", "n", "ci_low", "ci_high")
            },
            "a_better": int(row["a_better"]),
        }
        for _, row in c.paired.iterrows()
    ]


def _verdict_text(c: Comparison) -> str:
    """One line from the comparison's verdict (:func:`clad.report.stats.comparison_verdict`): its
    status, why when nothing was tested, and the best method by average rank (a description)."""
    v = c.verdict
    out = f"verdict: {v.status}"
    if v.status == "not tested" and v.reason:
        reason = str(v.reason)
        reason = (
            reason.split("): ")[0] + ")" if "): " in reason else reason.split(";")[0].split(". ")[0]
        )
        out += f": {reason.strip()}"
    elif v.test:
        out += f" ({result_text(v.test)})"
    if v.best:
        best = v.best if isinstance(v.best, str) else ", ".join(map(str, v.best))
        out += f"; best by average rank: {best} (a description, not a test)"
    return out


def _curves_section(p: _Page):
    # the figures draw mean ± std: no interval is computed for them
    return [
        (
            "curves",
            "Learning curves",
            curves_section(learning_curves(p.shown, with_intervals=False), p.figs),
        )
    ]


def _forgetting_section(p: _Page):
    html_part = forgetting_section(forgetting_table(p.shown, with_intervals=False), p.figs)
    return [("forgetting", "Per-concept forgetting", H.details("Forgetting figures", html_part))]


def _heatmaps_section(p: _Page):
    return [("heatmaps", "R heatmaps", heatmap_section(p.shown, p.figs, p.report.messages))]


def _timeseries_section(p: _Page):
    from .timeseries import trace_section

    trace_html = trace_section(p.ok, p.figs)
    channels = per_series_table(p.ok)
    if not channels.empty:
        _atomic_write(p.out / "per_series.csv", channels.to_csv(index=False))
        p.report.tables["per_series"] = p.out / "per_series.csv"
        shown = channels.copy()
        for c in ("value", "chance"):
            shown[c] = [f"{v:.3f}" if v == v else "n/a" for v in shown[c]]
        table = (
            "<p class='legend'>Every series (channel) of the time-series test concepts after the last training "
            "step, mean over seeds, beside its own chance level (also in per_series.csv). R holds each test "
            "concept's series concatenated; the base metrics named *_per_series_mean are the mean over its "
            "series, the scale TSB-AD and Orion report.</p>" + frame_html(shown)
        )
        trace_html = (trace_html or "") + H.details(
            f"Per-series values ({len(channels)} rows)", table
        )
    return (
        [] if trace_html is None else [("time-series", "Time series: scores per step", trace_html)]
    )


def _references_section(p: _Page):
    refs_html = _references_html(p.references)
    return [] if refs_html is None else [("references", "Reference runs", refs_html)]


def _orders_section(p: _Page):
    orders_table = order_sensitivity(p.ok)
    if orders_table.empty:
        return []
    path = p.out / "order_sensitivity.csv"
    _atomic_write(path, orders_table.to_csv(index=False))
    p.report.tables["order_sensitivity"] = path
    return [("orders", "Order sensitivity", _orders_html(orders_table))]


def _warnings_part(p: _Page):
    n_runs = sum(1 for r in p.results if r.warnings)
    return [("warnings", "Warnings", warnings_html(warning_groups(p.results), n_runs))]


def _streams_section(p: _Page):
    out = []
    for kind, heading in (("anytime", "Anytime curves"), ("prequential", "Prequential evaluation")):
        html_part = _stream_section(p.shown, p.figs, kind)
        if html_part is not None:
            out.append((kind, heading, html_part))
    return out


def _protocol_section(p: _Page):
    out = []
    tuning = tuning_section(p.ok)
    if tuning is not None:
        out.append(("tuning", "Tuning", tuning))
    validity = validity_section(
        [r for r in p.references if r.ok and r.config.get("reference") == "single_task"]
    )
    if (
        validity is not None
    ):  # from the single-task references: is each scenario worth concluding from
        out.append(("validity", "Scenario validity", validity))
    return out


def _spec_section(p: _Page):
    return [("spec", "Spec", H.details("The spec file", _spec_html(p.spec, p.spec_text)))]


def _provenance_section(p: _Page):
    return [("provenance", "Provenance", _provenance(p.results, p.out / "runs.csv"))]


def _figures_section(p: _Page):
    return [
        (
            "figures",
            "Index of figures",
            H.details(f"{len(p.figs.entries)} figures", p.figs.index_html()),
        )
    ]


#: the sections of a block's page (one per dataset label), in order
BLOCK_SECTIONS = (
    _leaderboard_section,
    _heatmaps_section,
    _curves_section,
    _forgetting_section,
    _cost_section,
)
#: the sections of the statistics page
STATISTICS_SECTIONS = (_statistics_section, _orders_section)
#: the sections of the details page
DETAILS_SECTIONS = (
    _baselines_section,
    _thresholds_section,
    _timeseries_section,
    _references_section,
    _streams_section,
    _protocol_section,
    _warnings_part,
    _spec_section,
    _provenance_section,
)
#: every section builder, in the order of the pages (first page's own sections: :func:`_first_sections`)
SECTIONS = (*BLOCK_SECTIONS, *STATISTICS_SECTIONS, *DETAILS_SECTIONS, _figures_section)


def _what_was_run(p: _Page, n_failed: int) -> str:
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


def _findings(p: _Page) -> str:
    """The best configuration of each dataset and scenario by the first headline metric of the
    headline base metric (the leaderboard's first), its margin over the next, and what the evidence
    allows (:func:`clad.report.headline.headline_lines`); in a scrolling box when there are many."""
    if p.lb.empty:
        return ""
    metric = next(iter(scalar_names(headline=True)), "continual_average")
    base = p.lb["base_metric"].iloc[0]
    part = p.lb[p.lb["base_metric"] == base]
    items = [
        f"<li>{text}</li>"
        for text in headline_lines(
            part,
            metric,
            p.chance,
            p.results,
            suffix=lambda dataset, scenario: _against_baselines(p, dataset, base, scenario, metric),
        )
    ]
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
        + _scrolled(f"<ul>{''.join(items)}</ul>", len(items))
        + legend
        + "</div>"
    )


def _against_baselines(p: _Page, dataset, base, scenario, metric) -> str:
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


def _banner(messages: Sequence[str], more_href: str = "details.html") -> str:
    """Every caveat in one box (repeated ones once; beyond :data:`MAX_CAVEATS`, a link to the rest)."""
    unique = list(dict.fromkeys(messages))
    if not unique:
        return ""
    more = len(unique) - MAX_CAVEATS
    return (
        "<div class='message'><b>Read with care</b><ul>"
        + "".join(f"<li>{H.html.escape(m)}</li>" for m in unique[:MAX_CAVEATS])
        + (f"<li><a href='{more_href}#caveats'>{more} more</a></li>" if more > 0 else "")
        + "</ul></div>"
    )


def _caveats(p: _Page) -> list[str]:
    """The report's messages, the statistics' messages said once, and what the data says."""
    out = [
        m
        for m in p.report.messages
        if ": " not in m or not any(m.startswith(c.title) for c in p.report.comparisons)
    ]
    said = set()
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
        if text not in said:
            said.add(text)
            out.append(text)
    out.extend(deterministic_caveats(p.shown))
    seeds = len({r.seed for r in p.ok})
    if 0 < seeds < MIN_INTERVAL_N:
        out.append(
            f"{seeds} seed{'s' if seeds > 1 else ''}: too few for intervals, so no value is marked best; "
            f"the tooltips give the values (run {MIN_INTERVAL_N} seeds or more for intervals)"
        )
    return out


def _first_sections(
    p: _Page, rankings, tables, label: str, blocks: list[tuple[str, int]], names: dict[str, str]
):
    """The first page's sections: the ranking across blocks, the per-block winners, the compact
    leaderboard when it fits, the cost–quality figure, the block pages and the warnings."""
    out = []
    if len(blocks) > 1 and any(not r.table.empty or r.missing for r in rankings):
        out.append(("ranking", "Ranking across blocks", ranking_html(rankings, tables, label)))
        base = p.lb["base_metric"].iloc[0] if not p.lb.empty else DEFAULT_METRIC
        out.append(
            (
                "winners",
                "Best per block",
                winners_html(
                    rankings,
                    tables,
                    p.chance,
                    p.headline_metric,
                    base,
                    label,
                    names,
                    {r.dataset: dataset_of(r) for r in p.ok},
                ),
            )
        )
    if len(p.lb) <= FIRST_PAGE_ROWS:  # a small grid: the whole compact leaderboard fits
        out.extend(_leaderboard_section(p))
    out.extend(_cost_quality_section(p))
    out.append(("blocks", "Blocks", blocks_html(blocks, names)))
    n_runs = sum(1 for r in p.results if r.warnings)
    out.append(("warnings", "Warnings", warnings_html(warning_groups(p.results), n_runs, most=5)))
    return out


def _links(prefix: str, blocks: Sequence[str] = ()) -> list[tuple[str, str]]:
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
    dpi: int = 90,
    title: str | None = None,
    spec_text: str | None = None,
    references: Sequence[RunResult] = (),
    headline: str | None = None,
    latex_columns: str | Sequence[str] | None = None,
    jobs: int = 1,
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
    figures are PNG files in ``out_dir/figures`` loaded lazily; a figure whose content did not
    change since the last report in ``out_dir`` is kept, the others are drawn in ``jobs`` worker
    processes (:mod:`clad.report.drawing`), and PNGs no page shows any more are removed. Also
    ``leaderboard.{csv,md,tex}`` and ``statistics.csv``. Failed runs are listed, not used. A
    configuration shared by several scenarios (the same computation,
    :func:`clad.report.aggregate.merge_shared`) or strategies with identical R everywhere
    (:func:`clad.report.identical.merge_identical`) are shown once, labelled with each name.

    The headline base metric (``headline``, else the first of the spec's ``base_metrics``) leads
    the headline, the tables and the statistics; the others follow in the spec's order.
    ``latex_columns`` picks the columns of ``leaderboard.tex`` (:func:`clad.report.tables.latex_columns`:
    the headline metrics by default, ``"all"`` for one table per metric family, or names/labels).
    """
    results = list(results)
    for m in stat_metrics:
        get_metric(m)  # an unknown metric is a clear error before anything is written
    for b in by:
        if b not in CONFIG_KEYS:
            raise CladValueError(
                f"by={b!r} is not a configuration field; allowed: {', '.join(CONFIG_KEYS)}"
            )
    latex = latex_columns_of(latex_columns)  # a bad option is an error before anything is written
    if headline is not None:
        recorded = {m for r in results if r.ok for m in (*r.R, *r.metrics)}
        if recorded and headline not in recorded:
            raise CladValueError(
                f"headline={headline!r} is not a base metric of these results; allowed: "
                f"{', '.join(sorted(recorded))}"
            )
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    H.write_assets(out / "assets")
    report = Report(out_dir=out, index=out / "index.html")
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
    headline_metric = next(iter(scalar_names(headline=True)), DEFAULT_METRIC)
    page = _Page(
        results=results,
        ok=ok,
        shown=shown,
        lb=leaderboard(shown, headline=headline),
        chance=chance_table(shown),
        figs=FigureStore(out / "figures", dpi),
        report=report,
        out=out,
        by=by,
        stat_metrics=stat_metrics,
        blocks=blocks,
        alpha=alpha,
        spec=spec,
        spec_text=spec_text,
        references=references,
        latex_columns=latex,
        headline_metric=headline_metric,
    )
    _write_tables(page)
    pages: dict[str, tuple[str, list, str]] = {}  # path -> (title, sections, intro)
    name = title or (f"clad report: {spec['name']}" if spec and spec.get("name") else "clad report")

    page.figs.page = "statistics.html"
    pages["statistics.html"] = (
        f"{name}: statistics",
        [part for build in STATISTICS_SECTIONS for part in build(page)],
        "",
    )
    page.figs.page = "leaderboard.html"
    pages["leaderboard.html"] = (f"{name}: leaderboard", _leaderboard_page(page), "")
    block_list = list(
        dict.fromkeys(dataset_of(r) for r in shown)
    )  # a dataset's page holds all its orders
    runs_of = {b: sum(1 for r in results if dataset_of(r) == b) for b in block_list}
    names = block_page_names(block_list)
    for block in block_list:
        path = names[block]
        page.figs.page = path
        sub = [r for r in shown if dataset_of(r) == block]
        labels = {r.dataset for r in sub}
        part = dataclasses.replace(
            page,
            shown=sub,
            ok=[r for r in ok if dataset_of(r) == block],
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
        pages[path] = (
            f"{name}: {block}",
            [p for build in BLOCK_SECTIONS for p in build(part)],
            intro,
        )
    page.figs.page = "details.html"
    details = [part for build in DETAILS_SECTIONS for part in build(page)]

    page.figs.page = "index.html"
    base = page.lb["base_metric"].iloc[0] if not page.lb.empty else DEFAULT_METRIC
    label = label_of(headline_metric, base)
    rankings, tables = compute_rankings(
        shown + [r for r in results if not r.ok], headline_metric, base
    )
    first = _first_sections(
        page, rankings, tables, label, [(b, runs_of[b]) for b in block_list], names
    )
    verdicts = [
        f"{c.title}: {_verdict_text(c)}"
        for c in report.comparisons
        if c.metric == headline_metric and c.base_metric == base and _verdict_text(c)
    ]
    method = next((r.method for r in rankings if r.method), "the blocks")
    caveats = _caveats(page)
    intro = (
        f"<p class='run'>{H.html.escape(_what_was_run(page, n_failed))}</p>"
        + (
            headline_html(rankings, label, verdicts, method) + _findings(page)
            if len(block_list) > 1
            else _findings(page) + headline_html(rankings, label, verdicts, method)
        )  # one block: its scenarios first
        + _banner(caveats)
    )
    pages["index.html"] = (name, first, intro)

    page.figs.finish(jobs)
    details.append(
        (
            "caveats",
            "Caveats",
            "<ul>"
            + "".join(f"<li>{H.html.escape(m)}</li>" for m in dict.fromkeys(caveats))
            + "</ul>",
        )
    )
    page.figs.page = "details.html"
    details.extend(_figures_section(page))
    pages["details.html"] = (f"{name}: details", details, "")
    for path, (page_title, sections, intro) in pages.items():
        prefix = "../" * path.count("/")
        if path != "index.html" and not intro:
            intro = f"<p class='back'><a href='{prefix}index.html'>← first page</a></p>"
        sections = [(a, h, page.figs.render(b, prefix)) for a, h, b in sections]
        text = H.page(
            page_title,
            sections,
            page.figs.render(intro, prefix),
            prefix=prefix,
            links=_links(prefix),
        )
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(target, text)
    for old in (out / "blocks").glob("*.html") if (out / "blocks").is_dir() else ():
        if f"blocks/{old.name}" not in pages:  # the page of a block no longer in the results
            old.unlink()
    report.figures = dict(page.figs.paths)
    report.pages = {p: out / p for p in pages}
    report.drawn, report.reused = page.figs.drawn, page.figs.reused
    log.debug(
        "report written to %s (%d figures, %d drawn)",
        report.index,
        len(report.figures),
        report.drawn,
    )
    return report
