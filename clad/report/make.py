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
    forgetting_table,
    leaderboard,
    learning_curves,
)
from ..metrics import get_metric
from .cost import cost_section
from .orders import order_sensitivity
from .figures import FigureStore, curves_section, forgetting_section, heatmap_section
from .protocol import tuning_section, validity_section
from .describe import CONFIG_KEYS, plural
from .stats import DEFAULT_BLOCKS, Comparison, StatisticsWarning, compare
from .stats_html import comparison_html, statistics_frame, statistics_intro, statistics_rows
from .tables import (
    frame_html,
    leaderboard_html,
    leaderboard_latex,
    leaderboard_markdown,
)

__all__ = ["Report", "make_report"]

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
        out.append("<h3>Versions</h3>" + frame_html(vt))
    seeds = sorted({r.seed for r in results})
    out.append(f"<h3>Seeds</h3><p>{H.html.escape(', '.join(map(str, seeds)) or 'none')}</p>")
    datasets: dict[str, dict] = {}
    for r in results:
        info = {k: v for k, v in r.config.items() if "dataset" in k or k in ("metadata", "checksums", "sha256")}
        datasets.setdefault(r.dataset, info)
    if datasets:
        out.append("<h3>Datasets</h3><p class='legend'>As recorded in the run configurations (parameters, and "
                   "metadata and checksums when the loader records them).</p>")
        out.append(H.pre(datasets))
    runs = pd.DataFrame([{"run id": r.run_id or "", **{k: getattr(r, k) for k in CONFIG_KEYS}, "seed": r.seed,
                          "status": r.status, "seconds": r.timings.get("total", float("nan"))} for r in results])
    out.append("<h3>Runs</h3>" + frame_html(runs))
    failed = [r for r in results if not r.ok]
    for r in failed:
        out.append(H.message(f"failed: {r.run_id} {r.dataset} / {r.scenario} / {r.strategy} / {r.detector} / seed "
                             f"{r.seed}: {r.cause}"))
    return "\n".join(out)


def _warnings_section(results: Sequence[RunResult]) -> str:
    """Every warning a run recorded (degenerate data or scores, a library's warnings), one row each."""
    rows = [{"run id": r.run_id or "", **{k: getattr(r, k) for k in CONFIG_KEYS}, "seed": r.seed, "warning": w}
            for r in results for w in r.warnings]
    if not rows:
        return H.message("no run recorded a warning")
    n_runs = len({(row["run id"], *(row[k] for k in CONFIG_KEYS), row["seed"]) for row in rows})
    return (f"<p class='legend'>{n_runs} run{'s' if n_runs > 1 else ''} recorded {len(rows)} warning"
            f"{'s' if len(rows) > 1 else ''}: their numbers may mean little (constant scores, constant features, "
            "too few rows, reversed scores, values lost in a cast) or a library warned while they ran.</p>"
            + frame_html(pd.DataFrame(rows)))


def make_report(results: Iterable[RunResult], out_dir: str | os.PathLike, spec: Mapping | None = None, *,
                by: Sequence[str] = ("detector", "strategy"), stat_metrics: Sequence[str] = (DEFAULT_METRIC,),
                blocks: Sequence[str] = DEFAULT_BLOCKS, alpha: float = 0.05, dpi: int = 90,
                title: str | None = None, spec_text: str | None = None,
                references: Sequence[RunResult] = ()) -> Report:
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
    figs = FigureStore(out / "figures", dpi)
    report = Report(out_dir=out, index=out / "index.html")
    ok = [r for r in results if r.ok]
    n_failed = len(results) - len(ok)
    if n_failed:
        report.messages.append(f"{n_failed} of {len(results)} runs failed and are left out (listed under Provenance)")
    sections = []

    lb = leaderboard(ok)
    numbers = lb.to_csv(index=False)
    for fmt, text in (("csv", numbers), ("md", leaderboard_markdown(lb)), ("tex", leaderboard_latex(lb))):
        path = out / f"leaderboard.{fmt}"
        _atomic_write(path, text)
        report.tables[fmt] = path
    sections.append(("leaderboard", "Leaderboard", leaderboard_html(lb) if not lb.empty else
                     H.message("no finished run: nothing to rank")))

    refs_html = _references_html(references)
    if refs_html is not None:
        sections.append(("references", "Reference runs", refs_html))

    orders_table = order_sensitivity(ok)
    if not orders_table.empty:
        path = out / "order_sensitivity.csv"
        _atomic_write(path, orders_table.to_csv(index=False))
        report.tables["order_sensitivity"] = path
        sections.append(("orders", "Order sensitivity", _orders_html(orders_table)))

    base_metrics = list(dict.fromkeys(lb["base_metric"])) if not lb.empty else []
    stat_rows, stat_html = [], []
    for field_name in by:
        for base in base_metrics:
            for metric in stat_metrics:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = compare(ok, by=field_name, metric=metric, base_metric=base, blocks=blocks, alpha=alpha)
                report.comparisons.append(c)
                if c.message and c.statistic is None and c.wilcoxon_holm is None:
                    report.messages.append(f"{c.title}: {c.message}")
                    warnings.warn(f"{c.title}: {c.message}", StatisticsWarning, stacklevel=2)
                stat_rows.extend(statistics_rows(c))
                stat_html.append(comparison_html(c, figs))
    _atomic_write(out / "statistics.csv", statistics_frame(stat_rows).to_csv(index=False))
    report.tables["statistics"] = out / "statistics.csv"
    intro = statistics_intro(blocks, alpha, tuple(blocks) == DEFAULT_BLOCKS)
    sections.append(("statistics", "Statistical comparison", intro + "\n".join(stat_html)))

    sections.append(("curves", "Learning curves", curves_section(learning_curves(ok), figs)))
    sections.append(("forgetting", "Per-concept forgetting", forgetting_section(forgetting_table(ok), figs)))
    sections.append(("heatmaps", "R heatmaps", heatmap_section(ok, figs, report.messages)))
    from .timeseries import trace_section

    trace_html = trace_section(ok, figs)
    if trace_html is not None:
        sections.append(("time-series", "Time series: scores per step", trace_html))
    cost_html = cost_section(ok, figs)
    if cost_html is not None:
        sections.append(("cost", "Cost", cost_html))
    sections.append(("warnings", "Runs with warnings", _warnings_section(results)))
    for kind, heading in (("anytime", "Anytime curves"), ("prequential", "Prequential evaluation")):
        html_part = _stream_section(ok, figs, kind)
        if html_part is not None:
            sections.append((kind, heading, html_part))
    tuning = tuning_section(ok)
    if tuning is not None:
        sections.append(("tuning", "Tuning", tuning))
    validity = validity_section([r for r in references if r.ok and r.config.get("reference") == "single_task"])
    if validity is not None:  # from the single-task references: is each scenario worth concluding from
        sections.append(("validity", "Scenario validity", validity))
    sections.append(("spec", "Spec", _spec_html(spec, spec_text)))
    sections.append(("provenance", "Provenance", _provenance(results)))
    sections.append(("figures", "Index of figures", figs.index_html()))

    name = title or (f"clad report: {spec['name']}" if spec and spec.get("name") else "clad report")
    counts = ", ".join(f"{plural(k)}: {len({getattr(r, k) for r in ok})}" for k in CONFIG_KEYS)
    intro = (f"<p>{len(ok)} finished runs ({n_failed} failed); {counts}; seeds "
             f"{', '.join(map(str, sorted({r.seed for r in ok}))) or 'none'}.</p>")
    intro += "".join(H.message(m) for m in report.messages)
    _atomic_write(report.index, H.page(name, sections, intro))
    report.figures = dict(figs.paths)
    log.debug("report written to %s (%d figures)", report.index, len(report.figures))
    return report

