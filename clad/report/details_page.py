"""The details page (:data:`DETAILS_SECTIONS`): baselines, thresholds, time series, reference runs,
streams, tuning and scenario validity, warnings, the spec, provenance and the index of figures."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..results.record import UNVERIFIED, RunResult
from . import html as H
from .tuning_validity import tuning_section, validity_section
from .pages import warnings_html
from .wording import warning_groups, warning_template
from .describe import CONFIG_KEYS
from .series import per_series_table
from .stream import stream_section
from .tables import frame_html
from .sections import Page, atomic_write


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


def _versions_html(results: Sequence[RunResult]) -> list[str]:
    versions: dict[str, set] = {}
    for r in results:
        for k, v in r.versions.items():
            versions.setdefault(k, set()).add(str(v))
    if not versions:
        return []
    vt = pd.DataFrame(
        {"package": list(versions), "version": [", ".join(sorted(v)) for v in versions.values()]}
    )
    return [
        H.details(
            "Versions: "
            + ", ".join(f"{k} {', '.join(sorted(v))}" for k, v in list(versions.items())[:4])
            + (" …" if len(versions) > 4 else ""),
            frame_html(vt),
        )
    ]


def _datasets_html(results: Sequence[RunResult]) -> list[str]:
    datasets: dict[str, dict] = {}
    for r in results:
        info = {
            k: v
            for k, v in r.config.items()
            if "dataset" in k or k in ("metadata", "checksums", "sha256")
        }
        datasets.setdefault(r.dataset, info)
    if not datasets:
        return []
    return [
        H.details(
            f"Datasets: {', '.join(datasets)}",
            "<p class='legend'>As recorded in the run "
            "configurations (parameters, and metadata and checksums when the loader records "
            "them).</p>" + H.pre(datasets),
        )
    ]


def _runs_frame(results: Sequence[RunResult]) -> pd.DataFrame:
    """One row per run: its number, id, configuration, seed, status and seconds (and its origin
    when some runs were imported from a bundle)."""
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
    if any(r.origin for r in results):  # imported from a bundle (clad pull, clad run --from)
        runs["origin"] = [_origin_shown(r.origin) if r.origin else "computed here" for r in results]
    return runs


def _origin_shown(origin: str, cut: str = "") -> str:
    """A bundle origin with its sha256 cut to 12 digits (``cut`` after them), keeping an unverified
    import's mark.

    >>> _origin_shown("bundle sha256:" + "ab" * 32 + UNVERIFIED)
    'bundle sha256:abababababab (unverified)'
    """
    mark = UNVERIFIED if origin.endswith(UNVERIFIED) else ""
    return origin[: len("bundle sha256:") + 12] + cut + mark


def _runs_html(results: Sequence[RunResult], runs_csv: Path | None) -> list[str]:
    out = []
    runs = _runs_frame(results)
    imported = [r for r in results if r.origin]
    if imported:
        bundles = sorted({r.origin for r in imported})
        out.append(
            f"<p>Origin: {len(results) - len(imported)} runs computed here, {len(imported)} imported from "
            f"{H.html.escape(', '.join(_origin_shown(b, '…') for b in bundles))} (each "
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
        atomic_write(runs_csv, runs.to_csv(index=False))
    if len(runs) <= MAX_RUN_ROWS:
        out.append(H.details(f"Runs ({len(results)})", legend + frame_html(runs)))
    else:
        out.append(
            f"<p>Runs: {len(results):,}, listed in <a href='runs.csv'>runs.csv</a>.</p>" + legend
        )
    return out


def _failures_html(results: Sequence[RunResult]) -> list[str]:
    """One message per cause of failure: its first run, and how many more fail the same way."""
    causes: dict[str, list] = {}
    for r in results:
        if not r.ok:
            causes.setdefault(warning_template(r.cause or "unknown cause"), []).append(r)
    out = []
    for members in causes.values():
        r = members[0]
        more = f" and {len(members) - 1} more runs failing the same way" if len(members) > 1 else ""
        out.append(
            H.message(
                f"failed: {r.run_id} {r.dataset} / {r.scenario} / {r.strategy} / {r.detector} / seed "
                f"{r.seed}: {r.cause}{more}"
            )
        )
    return out


def _provenance(results: Sequence[RunResult], runs_csv: Path | None = None) -> str:
    """Versions, seeds, the computation shared, datasets, runs (``runs_csv`` written) and failures."""
    out = _versions_html(results)
    seeds = sorted({r.seed for r in results})
    out.append(f"<p>Seeds: {H.html.escape(', '.join(map(str, seeds)) or 'none')}</p>")
    # training steps shared by key
    if any(isinstance((r.timings or {}).get("work"), dict) for r in results):
        from ..core.steps import format_work, grid_work

        out.append(
            f"<p>Computation: {H.html.escape(format_work(grid_work(results)))} (training steps and "
            "scoring passes with the same inputs are computed once; clad.core.steps)</p>"
        )
    out += _datasets_html(results)
    out += _runs_html(results, runs_csv)
    out += _failures_html(results)
    return "\n".join(out)


def _baselines_section(p: Page):
    from .baselines import baseline_detectors, baseline_section, baseline_verdicts

    verdicts = baseline_verdicts(p.lb, baseline_detectors(p.shown))
    if verdicts.empty:
        return []
    p.write("baselines.csv", verdicts)
    return [("baselines", "Baselines", baseline_section(verdicts))]


def _thresholds_section(p: Page):
    from .thresholds import threshold_section, threshold_table

    table = threshold_table(p.shown)
    if table.empty:
        return []
    import json

    # the drift after each step as a JSON list (null: no past concept yet), not a Python repr
    p.write("thresholds.csv", table.assign(drift_per_step=table["drift_per_step"].map(json.dumps)))
    return [
        ("thresholds", "Thresholds and false-positive rates", threshold_section(p.shown, table))
    ]


def _timeseries_section(p: Page):
    from .timeseries import trace_section

    trace_html = trace_section(p.ok, p.figs)
    channels = per_series_table(p.ok)
    if not channels.empty:
        p.write("per_series.csv", channels)
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
    if trace_html is None:
        return []
    return [("time-series", "Time series: scores per step", trace_html)]


def _references_section(p: Page):
    refs_html = _references_html(p.references)
    return [] if refs_html is None else [("references", "Reference runs", refs_html)]


def _warnings_part(p: Page):
    n_runs = sum(1 for r in p.results if r.warnings)
    return [("warnings", "Warnings", warnings_html(warning_groups(p.results), n_runs))]


def _streams_section(p: Page):
    out = []
    for kind, heading in (("anytime", "Anytime curves"), ("prequential", "Prequential evaluation")):
        html_part = stream_section(p.shown, p.figs, kind)
        if html_part is not None:
            out.append((kind, heading, html_part))
    return out


def _protocol_section(p: Page):
    out = []
    tuning = tuning_section(p.ok)
    if tuning is not None:
        out.append(("tuning", "Tuning", tuning))
    validity = validity_section(
        [r for r in p.references if r.ok and r.config.get("reference") == "single_task"]
    )
    # from the single-task references: is each scenario worth concluding from
    if validity is not None:
        out.append(("validity", "Scenario validity", validity))
    return out


def _spec_section(p: Page):
    return [("spec", "Spec", H.details("The spec file", _spec_html(p.spec, p.spec_text)))]


def _provenance_section(p: Page):
    return [("provenance", "Provenance", _provenance(p.results, p.out / "runs.csv"))]


def figures_section(p: Page):
    index = H.details(f"{len(p.figs.entries)} figures", p.figs.index_html())
    return [("figures", "Index of figures", index)]


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
