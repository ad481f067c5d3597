"""``make_report``: every figure, table and test of a list of run results, written into one folder
and tied together by ``index.html``."""

from __future__ import annotations

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
from .aggregate import (
    chance_table,
    forgetting_table,
    leaderboard,
    learning_curves,
    merge_shared,
)
from ..metrics import get_metric, scalar_names
from .cost import cost_section
from .order_sensitivity import order_sensitivity
from .figures import FigureStore, curves_section, forgetting_section, heatmap_section
from .tuning_validity import tuning_section, validity_section
from .describe import CONFIG_KEYS, MIN_INTERVAL_N, plural
from .stats import DEFAULT_BLOCKS, Comparison, StatisticsWarning, compare
from .stats_html import comparison_html, statistics_frame, statistics_intro, statistics_rows
from .headline import deterministic_caveats, headline_lines
from .series import per_series_table, with_series_means
from .tables import (
    cost_html,
    leaderboard_compact_html,
    frame_html,
    leaderboard_html,
    latex_columns as latex_columns_of,
    leaderboard_latex,
    leaderboard_markdown,
)

__all__ = ["make_report", "Report"]

log = logging.getLogger(__name__)


@dataclass
class Report:
    """What :func:`make_report` wrote: the page, the figures (name -> path), the tables
    (format -> path), the statistical comparisons and the messages (problems and caveats)."""

    out_dir: Path
    index: Path
    figures: dict[str, Path] = field(default_factory=dict)
    tables: dict[str, Path] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


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
        out.append("<p class='legend'>Anytime evaluation: the test concepts scored several times while the stream "
                   "is learned; mean over all test concepts (left) and over the concepts learned so far (right), "
                   "mean over seeds ± std; dotted lines mark the concept boundaries.</p>")
        for (dataset, scenario, base), part in table.groupby(["dataset", "scenario", "base_metric"], sort=False):
            fig, axes = new_axes((11.0, 4.0), 1, 2)
            for ax, curve in zip(axes, ("all", "seen")):
                plot_stream(part[part["kind"] == curve], ax, ylabel=f"{base}, mean over {curve} concepts",
                            title=f"anytime: {curve} concepts", boundaries=part["boundaries"].iloc[0])
            fig.suptitle(f"{dataset} / {scenario} — {base}", fontsize=10)
            out.append(figs.add(fig, "anytime", f"anytime curves {dataset} / {scenario} / {base}", "anytime",
                                dataset, scenario, base))
    else:
        window = ", ".join(sorted({str(w) for w in table["window"]}))
        out.append("<p class='legend'>Prequential (test-then-train) evaluation: each batch of the stream scored "
                   f"before it is learned; cumulative over every row scored so far (solid) and over the last "
                   f"{H.html.escape(window)} batches (windowed), mean over seeds ± std.</p>")
        for (dataset, scenario), part in table.groupby(["dataset", "scenario"], sort=False):
            metrics = list(dict.fromkeys(part["metric"]))
            fig, axes = new_axes((4.5 * len(metrics), 4.0), 1, len(metrics))
            for ax, metric in zip(np.atleast_1d(axes), metrics):
                plot_stream(part[part["metric"] == metric], ax, ylabel=metric, title=f"prequential {metric}",
                            line="kind")
            fig.suptitle(f"{dataset} / {scenario}", fontsize=10)
            out.append(figs.add(fig, "prequential", f"prequential scores {dataset} / {scenario}", "prequential",
                                dataset, scenario))
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
            rows.append({"reference": kind, "dataset": r.dataset, "detector": r.detector, "seed": r.seed,
                         "base_metric": base, **dict(zip(r.test_concepts, scores.tolist()))})
    if not rows:
        return None
    return ("<p class='legend'>The reference scores each run is compared with (intransigence and forward transfer "
            "against a reference, in the leaderboard): per test concept, the joint model's score (one detector fitted "
            "on every training concept together) and the single-task expert's (a fresh detector fitted on that "
            "concept alone: the diagonal of the single-task matrix). Computed once per dataset, detector and "
            "seed.</p>" + frame_html(pd.DataFrame(rows)))


def _orders_html(table: pd.DataFrame) -> str:
    legend = ("<p class='legend'>Configurations run over several concept orders: each metric averaged over the "
              "seeds of one order, then described over the orders (how many orders have a value, min, max, range "
              "= max − min, std over orders). The spread over seeds is in the leaderboard. The heatmaps below are "
              "drawn per order, with the test concepts in one canonical order (sorted names); learning curves "
              "are averaged step by step, forgetting concept by concept, over every order and seed.</p>")
    shown = table.copy()
    for c in shown.columns:
        if shown[c].dtype.kind == "f" and not c.endswith("_orders"):
            shown[c] = [f"{v:.3f}" if v == v else "n/a" for v in shown[c]]
    return legend + frame_html(shown)


def _spec_html(spec: Mapping | None, spec_text: str | None) -> str:
    if spec_text:
        return H.pre(spec_text)
    if spec:
        return (H.pre(H.toml_text(spec)) + "<p class='legend'>The spec as recorded with the results (the file's "
                "text was not stored: comments and layout are not shown).</p>")
    return H.message("no spec recorded with the results")


def _provenance(results: Sequence[RunResult]) -> str:
    out = []
    versions: dict[str, set] = {}
    for r in results:
        for k, v in r.versions.items():
            versions.setdefault(k, set()).add(str(v))
    if versions:
        vt = pd.DataFrame({"package": list(versions), "version": [", ".join(sorted(v)) for v in versions.values()]})
        out.append(H.details("Versions: " + ", ".join(f"{k} {', '.join(sorted(v))}" for k, v in list(versions.items())[:4])
                             + (" …" if len(versions) > 4 else ""), frame_html(vt)))
    seeds = sorted({r.seed for r in results})
    out.append(f"<p>Seeds: {H.html.escape(', '.join(map(str, seeds)) or 'none')}</p>")
    if any(isinstance((r.timings or {}).get("work"), dict) for r in results):  # training steps shared by key
        from ..core.steps import format_work, grid_work

        out.append(f"<p>Computation: {H.html.escape(format_work(grid_work(results)))} (training steps and "
                   "scoring passes with the same inputs are computed once; clad.core.steps)</p>")
    datasets: dict[str, dict] = {}
    for r in results:
        info = {k: v for k, v in r.config.items() if "dataset" in k or k in ("metadata", "checksums", "sha256")}
        datasets.setdefault(r.dataset, info)
    if datasets:
        out.append(H.details(f"Datasets: {', '.join(datasets)}", "<p class='legend'>As recorded in the run "
                             "configurations (parameters, and metadata and checksums when the loader records "
                             "them).</p>" + H.pre(datasets)))
    number = {r.run_id: k for k, r in enumerate(results, 1) if r.run_id}
    runs = pd.DataFrame([{"run": k, "run id": r.run_id or "", **{c: getattr(r, c) for c in CONFIG_KEYS},
                          "seed": r.seed, "status": r.status,
                          # a shared run computed nothing: its seconds are the run it shares
                          "seconds": (f"shared with run {number.get(r.shared_from, r.shared_from)}" if r.shared_from
                                      else f"{r.timings.get('total', float('nan')):.2f}")}
                         for k, r in enumerate(results, 1)])
    n_shared = sum(1 for r in results if r.shared_from)
    legend = (f"<p class='legend'>{len(results)} runs; {n_shared} of them the same computation as an earlier run "
              "(computed once, recorded for each configuration; no seconds of their own).</p>" if n_shared else "")
    out.append(H.details(f"Runs ({len(results)})", legend + frame_html(runs)))
    failed = [r for r in results if not r.ok]
    for r in failed:
        out.append(H.message(f"failed: {r.run_id} {r.dataset} / {r.scenario} / {r.strategy} / {r.detector} / seed "
                             f"{r.seed}: {r.cause}"))
    return "\n".join(out)


#: the start of a warning that describes the data, not a run (the same for every run on a dataset)
_DATA_PROPERTIES = ("training concept ",)


def _warnings_section(results: Sequence[RunResult]) -> str:
    """The warnings runs recorded, grouped by warning as on the console (most frequent first): each
    once, with how many runs recorded it; a warning about the data (constant features of a recipe)
    once per dataset, since every run on it records the same."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        for w in dict.fromkeys(r.warnings):
            data = w.startswith(_DATA_PROPERTIES) and " constant or near-constant" in w
            groups.setdefault(("data" if data else "run", r.dataset if data else "", w), []).append(r)
    if not groups:
        return H.message("no run recorded a warning")
    n_runs = len({id(r) for members in groups.values() for r in members})
    rows = []
    for (kind, dataset, text), members in sorted(groups.items(), key=lambda kv: (kv[0][0] != "data", -len(kv[1]))):
        who = (f"data of {dataset} ({len(members)} runs)" if kind == "data"
               else f"{len(members)} run{'s' if len(members) > 1 else ''}")
        example = "" if kind == "data" else ", ".join(f"{r.scenario} / {r.strategy} / {r.detector} / seed {r.seed}"
                                                      for r in members[:3]) + (" …" if len(members) > 3 else "")
        rows.append({"where": who, "warning": text, "for example": example})
    n_warnings = sum(len(r.warnings) for r in results)
    return (f"<p class='legend'>{n_runs} run{'s' if n_runs > 1 else ''} recorded {n_warnings} warning"
            f"{'s' if n_warnings > 1 else ''} ({len(groups)} distinct), grouped by warning (as on the console); a property of the data "
            "(constant features) once per dataset. Every run's list is in results.json (field 'warnings').</p>"
            + frame_html(pd.DataFrame(rows), classes="table index"))


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


def _leaderboard_section(p: _Page):
    numbers = p.lb.to_csv(index=False)
    for fmt, text in (("csv", numbers), ("md", leaderboard_markdown(p.lb, p.chance)),
                      ("tex", leaderboard_latex(p.lb, p.chance, p.latex_columns))):
        path = p.out / f"leaderboard.{fmt}"
        _atomic_write(path, text)
        p.report.tables[fmt] = path
    if not p.chance.empty:  # each continual metric of the chance matrices, per dataset, base metric and scenario
        _atomic_write(p.out / "chance.csv", p.chance.to_csv(index=False))
        p.report.tables["chance"] = p.out / "chance.csv"
    if p.lb.empty:
        return [("leaderboard", "Leaderboard", H.message("no finished run: nothing to rank"))]
    from .baselines import baseline_legend, baseline_verdicts, baseline_detectors
    from .thresholds import threshold_legend

    main = (threshold_legend(p.shown) + baseline_legend(baseline_verdicts(p.lb, baseline_detectors(p.shown)))
            + leaderboard_compact_html(p.lb, p.chance, metrics=scalar_names(headline=True)))
    full = leaderboard_html(p.lb, p.chance)
    return [("leaderboard", "Leaderboard", main + H.details("Every metric, one table per base metric (also in "
                                                            "leaderboard.csv, .md and .tex)", full))]


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
    _atomic_write(p.out / "thresholds.csv", table.to_csv(index=False))
    p.report.tables["thresholds"] = p.out / "thresholds.csv"
    return [("thresholds", "Thresholds and false-positive rates", threshold_section(p.shown, table))]


def _cost_section(p: _Page):
    table = cost_html(p.lb[p.lb["base_metric"] == p.lb["base_metric"].iloc[0]]) if not p.lb.empty else None
    figures = cost_section(p.shown, p.figs)
    if table is None and figures is None:
        return []
    legend = ("<p class='legend'>Seconds per training step spent learning (fit) and scoring the test concepts "
              "(score), peak memory (the rise of the process's resident set size above the run's start) and "
              "training rows kept; mean ± std over seeds, measured on this machine at this time: compare within "
              "this report. A configuration shared by several scenarios was computed once and appears once.</p>")
    return [("cost", "Cost", legend + (table or "") + (H.details("Cost figures", figures) if figures else ""))]


def _statistics_section(p: _Page):
    stat_rows, stat_html = [], []
    base_metrics = list(dict.fromkeys(p.lb["base_metric"])) if not p.lb.empty else []
    for field_name in p.by:
        for base in base_metrics:
            for metric in p.stat_metrics:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = compare(p.ok, by=field_name, metric=metric, base_metric=base, blocks=p.blocks, alpha=p.alpha)
                p.report.comparisons.append(c)
                if c.message and c.statistic is None and c.wilcoxon_holm is None:
                    p.report.messages.append(f"{c.title}: {c.message}")
                    warnings.warn(f"{c.title}: {c.message}", StatisticsWarning, stacklevel=3)
                stat_rows.extend(statistics_rows(c))
                stat_rows.extend(_paired_rows(c))
                stat_html.append(H.details(f"{c.title}: {_verdict_text(c)}", comparison_html(c, p.figs)))
    _atomic_write(p.out / "statistics.csv", statistics_frame(stat_rows).to_csv(index=False))
    p.report.tables["statistics"] = p.out / "statistics.csv"
    intro = statistics_intro(p.blocks, p.alpha, tuple(p.blocks) == DEFAULT_BLOCKS)
    return [("statistics", "Statistical comparison", intro + "<p class='legend'>Open a comparison for its "
             "tables and figures.</p>" + "\n".join(stat_html))]


def _paired_rows(c: Comparison) -> list[dict]:
    """Rows of ``statistics.csv`` (``level`` = "paired over seeds") for a one-block comparison: per
    pair the mean difference over seeds, its std, count, interval and in how many seeds ``a`` was better."""
    if c.paired is None or c.paired.empty:
        return []
    key = {"level": "paired over seeds", "by": c.by, "metric": c.metric, "base_metric": c.base_metric}
    return [{**key, "a": row["a"], "b": row["b"],
             **{f"difference_{k}": row[f"difference_{k}"] for k in ("mean", "std", "n", "ci_low", "ci_high")},
             "a_better": int(row["a_better"])} for _, row in c.paired.iterrows()]


def _verdict_text(c: Comparison) -> str:
    """One line from the comparison's verdict (:func:`clad.report.stats.comparison_verdict`): its
    status, why when nothing was tested, and the best method by average rank (a description)."""
    v = c.verdict
    out = f"verdict: {v.status}"
    if v.status == "not tested" and v.reason:
        reason = str(v.reason)
        reason = reason.split("): ")[0] + ")" if "): " in reason else reason.split(";")[0].split(". ")[0]
        out += f": {reason.strip()}"
    elif v.test:
        out += f" ({v.test})"
    if v.best:
        best = v.best if isinstance(v.best, str) else ", ".join(map(str, v.best))
        out += f"; best by average rank: {best} (a description, not a test)"
    return out


def _curves_section(p: _Page):
    return [("curves", "Learning curves", curves_section(learning_curves(p.shown), p.figs))]


def _forgetting_section(p: _Page):
    html_part = forgetting_section(forgetting_table(p.shown), p.figs)
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
        table = ("<p class='legend'>Every series (channel) of the time-series test concepts after the last training "
                 "step, mean over seeds, beside its own chance level (also in per_series.csv). R holds each test "
                 "concept's series concatenated; the base metrics named *_per_series_mean are the mean over its "
                 "series, the scale TSB-AD and Orion report.</p>" + frame_html(shown))
        trace_html = (trace_html or "") + H.details(f"Per-series values ({len(channels)} rows)", table)
    return [] if trace_html is None else [("time-series", "Time series: scores per step", trace_html)]


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
    return [("warnings", "Warnings", _warnings_section(p.results))]


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
    validity = validity_section([r for r in p.references if r.ok and r.config.get("reference") == "single_task"])
    if validity is not None:  # from the single-task references: is each scenario worth concluding from
        out.append(("validity", "Scenario validity", validity))
    return out


def _spec_section(p: _Page):
    return [("spec", "Spec", H.details("The spec file", _spec_html(p.spec, p.spec_text)))]


def _provenance_section(p: _Page):
    return [("provenance", "Provenance", _provenance(p.results))]


def _figures_section(p: _Page):
    return [("figures", "Index of figures", H.details(f"{len(p.figs.entries)} figures", p.figs.index_html()))]


#: the page, section by section, in order: each builder returns its (anchor, heading, html) parts
SECTIONS = (_leaderboard_section, _baselines_section, _thresholds_section, _cost_section, _statistics_section, _heatmaps_section, _curves_section,
            _forgetting_section, _timeseries_section, _references_section, _orders_section, _streams_section, _protocol_section,
            _warnings_part, _spec_section, _provenance_section, _figures_section)


def _what_was_run(p: _Page, n_failed: int) -> str:
    """One line: the grid and its runs."""
    counts = " × ".join(f"{len({getattr(r, k) for r in p.ok})} {plural(k) if len({getattr(r, k) for r in p.ok}) != 1 else k}"
                        for k in CONFIG_KEYS)
    seeds = sorted({r.seed for r in p.ok})
    shared = sum(1 for r in p.ok if r.shared_from)
    return (f"{len(p.results)} runs: {counts} × {len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
            + (f"; {shared} shared (the same computation as another configuration's, computed once)" if shared else "")
            + (f"; {n_failed} failed" if n_failed else "") + ".")


def _findings(p: _Page) -> str:
    """The best configuration of each scenario by the first headline metric of the headline base
    metric (the leaderboard's first), its margin over the next, and what may be said of it."""
    if p.lb.empty:
        return ""
    metric = next(iter(scalar_names(headline=True)), "continual_average")
    base = p.lb["base_metric"].iloc[0]
    part = p.lb[p.lb["base_metric"] == base]
    items = [f"<li>{text}</li>" for text in headline_lines(
        part, metric, p.chance, p.results,
        suffix=lambda dataset, scenario: _against_baselines(p, dataset, base, scenario, metric))]
    from ..metrics.base import base_metric_shown

    label = f"{get_metric(metric).label} ({base_metric_shown(base)})"
    verdicts = [f"<li>{H.html.escape(c.title)}: {H.html.escape(_verdict_text(c))}</li>"
                for c in p.report.comparisons if c.metric == metric and c.base_metric == base and _verdict_text(c)]
    return (f"<div class='findings'><p><b>Best per scenario</b> by {H.html.escape(label)} (mean over seeds):</p>"
            f"<ul>{''.join(items)}</ul>"
            + (f"<p><b>Do the statistics support a difference?</b></p><ul>{''.join(verdicts)}</ul>" if verdicts else "")
            + "</div>")


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
    return (f"; {int(v['beats'].eq(True).sum())} of {int(told.sum())} configurations beat the best baseline "
            f"({H.html.escape(str(v['best_baseline'].iloc[0]))}) by more than noise")


def _banner(messages: Sequence[str]) -> str:
    """Every caveat in one box (repeated ones once)."""
    unique = list(dict.fromkeys(messages))
    if not unique:
        return ""
    return ("<div class='message'><b>Read with care</b><ul>"
            + "".join(f"<li>{H.html.escape(m)}</li>" for m in unique) + "</ul></div>")


def _caveats(p: _Page) -> list[str]:
    """The report's messages, the statistics' messages said once, and what the data says."""
    out = [m for m in p.report.messages if ": " not in m or not any(m.startswith(c.title) for c in p.report.comparisons)]
    said = set()
    for c in p.report.comparisons:
        if not c.message:
            continue
        if c.paired is not None:
            block = ", ".join(map(str, c.scores.index))
            text = (f"Statistics: one independent block ({block}), so no test across datasets is possible; the methods "
                    "are compared paired over its seeds, evidence about this data only")
        else:
            text = "Statistics: " + c.message
        if text not in said:
            said.add(text)
            out.append(text)
    out.extend(deterministic_caveats(p.shown))
    seeds = len({r.seed for r in p.ok})
    if 0 < seeds < MIN_INTERVAL_N:
        out.append(f"{seeds} seed{'s' if seeds > 1 else ''}: too few for intervals, so no value is marked best; "
                   f"the tooltips give the values (run {MIN_INTERVAL_N} seeds or more for intervals)")
    return out


def make_report(results: Iterable[RunResult], out_dir: str | os.PathLike, spec: Mapping | None = None, *,
                by: Sequence[str] = ("detector", "strategy"), stat_metrics: Sequence[str] = (DEFAULT_METRIC,),
                blocks: Sequence[str] = DEFAULT_BLOCKS, alpha: float = 0.05, dpi: int = 90,
                title: str | None = None, spec_text: str | None = None,
                references: Sequence[RunResult] = (), headline: str | None = None,
                latex_columns: str | Sequence[str] | None = None) -> Report:
    """Write the report of ``results`` into ``out_dir`` and return what was written.

    ``out_dir/index.html`` (self-contained), ``out_dir/figures/*.png`` (R heatmaps per
    configuration and base metric, learning curves, per-concept forgetting, critical-difference
    diagrams), ``out_dir/leaderboard.{csv,md,tex}`` and ``out_dir/statistics.csv``. For every field in
    ``by`` (detectors, strategies), base metric and metric in ``stat_metrics``, methods are compared
    over ``blocks`` with :func:`clad.report.stats.compare` (``stat_metrics``: any declared scalar
    metric; ``blocks``: by default datasets, the independent units; runs that are the same
    computation are merged and the page says so); a comparison that cannot be made (too few
    blocks or methods) is explained on the page and in ``Report.messages`` and issues a
    :class:`~clad.report.stats.StatisticsWarning`. Failed runs are listed, not used. PNGs left in
    ``out_dir/figures`` by an earlier report are removed first (they would be stale). The page shows
    the spec as the TOML the user wrote (``spec_text``) when given, else ``spec`` rendered as TOML,
    the scores of the benchmark's reference runs (``references``, :func:`clad.results.load_references`)
    and the validity checks of its single-task matrices when given, and ends with an index of its figures and their files.

    The headline base metric (``headline``, else the first of the spec's ``base_metrics``) leads
    the headline, the tables and the statistics; the others follow in the spec's order.
    ``latex_columns`` picks the columns of ``leaderboard.tex`` (:func:`clad.report.tables.latex_columns`:
    the headline metrics by default, ``"all"`` for one table per metric family, or names/labels).

    The page opens with what was run (one line), what it found (the best configuration of each
    scenario, its margin, and what the statistics support) and one box of caveats; then one
    section per builder of :data:`SECTIONS`. A configuration shared by several scenarios (the same
    computation, :func:`clad.report.aggregate.merge_shared`) is shown once, labelled with each.
    """
    results = list(results)
    for m in stat_metrics:
        get_metric(m)  # an unknown metric is a clear error before anything is written
    for b in by:
        if b not in CONFIG_KEYS:
            raise CladValueError(f"by={b!r} is not a configuration field; allowed: {', '.join(CONFIG_KEYS)}")
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for old in (out / "figures").glob("*.png"):  # figures of an earlier report would be stale
        old.unlink()
    report = Report(out_dir=out, index=out / "index.html")
    ok = with_series_means(r for r in results if r.ok)  # time series: per-series means beside R
    n_failed = len(results) - len(ok)
    if n_failed:
        report.messages.append(f"{n_failed} of {len(results)} runs failed and are left out (listed under Provenance); "
                               "a comparison of methods leaves out, for every method of a dataset, the configurations "
                               "some method did not complete (each comparison's notes name them)")
    latex = latex_columns_of(latex_columns)
    if headline is not None:
        recorded = {m for r in ok for m in (*r.R, *r.metrics)}
        if recorded and headline not in recorded:
            raise CladValueError(f"headline={headline!r} is not a base metric of these results; allowed: "
                                 f"{', '.join(sorted(recorded))}")
    shown = merge_shared(ok)
    page = _Page(results=results, ok=ok, shown=shown, lb=leaderboard(shown, headline=headline), chance=chance_table(shown),
                 figs=FigureStore(out / "figures", dpi), report=report, out=out, by=by, stat_metrics=stat_metrics,
                 blocks=blocks, alpha=alpha, spec=spec, spec_text=spec_text, references=references,
                 latex_columns=latex)
    sections = [part for build in SECTIONS for part in build(page)]
    name = title or (f"clad report: {spec['name']}" if spec and spec.get("name") else "clad report")
    intro = (f"<p class='run'>{H.html.escape(_what_was_run(page, n_failed))}</p>" + _findings(page)
             + _banner(_caveats(page)))
    _atomic_write(report.index, H.page(name, sections, intro))
    report.figures = dict(page.figs.paths)
    log.debug("report written to %s (%d figures)", report.index, len(report.figures))
    return report
