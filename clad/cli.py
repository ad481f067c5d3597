"""The ``clad`` command line.

``clad run SPEC.toml --out DIR``   run every combination of a spec into ``DIR/results.sqlite``
                                  (resuming), then write ``DIR/results.json`` and summaries;
                                  ``--jobs N`` worker processes, ``--dask ADDRESS`` a Dask cluster,
                                  ``--slurm [CONFIG]`` SLURM jobs (``--cancel-on-exit``),
                                  ``--threads T`` BLAS/OpenMP/torch threads per run (default 1),
                                  ``--fresh`` start over, ``--timeout S`` per-run time limit.
                                  Exit status: 0 all fine, 1 when runs failed (the count and
                                  their causes are printed), 2 for a bad spec or command line, 111 when the results could
                                  not be written (e.g. disk full), 130 when interrupted (Ctrl-C),
                                  143 when terminated (SIGTERM, handled like Ctrl-C).
``clad run SPEC.toml --dry-run``   print the expanded grid and its size, run nothing
``clad report DIR``                figures, tables and statistics of a results folder in ``DIR/report``
``clad datasets list``             registered dataset loaders and dataset cards
``clad datasets info NAME``        a dataset card (source, sha256, license, citation, recipe) or a loader
``clad datasets convert SRC DST``  a pyCLAD concept file -> clad's pickle-free .npz (needs --allow-pickle)
``clad validate SPEC.toml``        scenario validity from single-task matrices (exit 1 when a check fails)
``clad verify SPEC|FOLDER``        rerun a reference suite and compare with its committed results (--update rewrites them)
``clad check NAME|module:Class``   conformance checks for a detector or strategy plug-in
``clad export DIR [--format csv|parquet|json|mlflow] [--per-series] [--bundle OUT]``  tidy tables of R, metrics and runs (or results.json),
                                  or every run logged to MLflow (``--tracking-uri URI``)
``clad pull SOURCE --out DIR``     import a bundle's runs that are the same computation here (each refusal with its reason)
``clad verify-bundle SOURCE``      recompute a stratified sample of a bundle's runs (--sample K --seed S); exit 1 if one disagrees
``clad leaderboard SOURCE... -o DIR``  the report of one or more bundles, offline (--previous B: what moved)
``clad list [KIND]``               registered detectors, strategies, scenarios and datasets
``clad version``                   versions of clad and the libraries behind the numbers
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import shlex
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from ._version import __version__
from .defaults import DEFAULT_METRIC
from .errors import CladError, CladValueError

log = logging.getLogger("clad")

#: exit status when one or more runs failed (the others finished and are kept)
EXIT_RUNS_FAILED = 1
#: exit status for a bad spec or command line
EXIT_USAGE = 2
#: exit status when the results could not be written (disk full, database unwritable)
EXIT_WRITE_FAILED = 111
#: exit status after Ctrl-C (SIGINT) and after SIGTERM (128 + the signal's number, as a shell reports it)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

RUN_EPILOG = """Runs start in the order --dry-run lists them. A failed run's cause is printed when it fails;
warnings raised inside a run are recorded in its results (field 'warnings') and counted.
See docs/guides/console.md.

exit status:
  0      every run finished
  1      runs failed: each failure's cause is printed when it happens, and at the end one table
         of the failures grouped by cause with their count; the full tracebacks are in
         DIR/results.sqlite (table runs, column error) and DIR/results.json
  2      a bad spec or command line (nothing was run), or a lost Dask cluster (finished runs
         are kept; run the same command again to resume)
  111    the results could not be written (e.g. disk full); finished runs are kept
  130    interrupted by Ctrl-C (SIGINT)
  143    terminated by SIGTERM, handled like Ctrl-C
After Ctrl-C or SIGTERM the runs that finished are kept, the worker processes are stopped and
results.json is written; run the same command again to resume. Worker processes also end by
themselves when this process is killed (SIGKILL)."""


class Terminated(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM, so that it stops a run exactly as Ctrl-C does."""


@contextmanager
def _sigterm_as_interrupt():
    """While the block runs, SIGTERM raises :class:`Terminated` (once: a second SIGTERM during the
    clean-up is ignored; SIGKILL still ends everything, workers included). Yields a record whose
    ``received`` tells whether SIGTERM came."""
    record = SimpleNamespace(received=False)
    if threading.current_thread() is not threading.main_thread():
        yield record
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        record.received = True
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield record
    finally:
        signal.signal(signal.SIGTERM, old)


def _cmd_run(args) -> int:
    from .engine.benchmark import ResultsWriteError, run_spec
    from .engine.progress import ProgressEvents, format_failures, format_warnings
    from .engine.spec import load_spec
    from .engine.summary import format_summary

    spec = load_spec(args.spec)
    if args.dry_run or args.out is None:
        for msg in spec.skipped:
            log.info("skipped: %s", msg)
    if args.dry_run:
        from .engine.settings import Execution

        execution = Execution.of(
            spec,
            jobs=args.jobs,
            threads=args.threads,
            dask=args.dask,
            timeout=args.timeout,
            slurm=_slurm_config(args, spec),
        )
        from .engine.preflight import preflight_problems
        from .errors import SpecError

        found = preflight_problems(
            spec.configs, here=execution.dask is None and execution.slurm is None
        )
        if found:
            raise SpecError(found, source=spec.name)
        tuning = spec.tuning_configs
        print(
            f"{spec.name}: {len(spec)} runs ({execution.describe()})"
            + (
                f", after {len(tuning)} tuning runs (mode {spec.tuning.mode}; the evaluation runs' tuned "
                "parameters are chosen by them)"
                if spec.tuning is not None
                else ""
            )
        )
        from .engine.run import execution_order

        for cfg in execution_order(tuning):
            print(f"  {cfg.run_id}  tuning: {cfg.describe()}")
        for cfg in execution_order(spec.configs):  # the order the runs will start in
            if spec.tuning is not None and spec.tuning.tuned(cfg):  # its id follows the choice
                print(f"  {'(after tuning)':16s}  {cfg.describe()}")
            else:
                print(f"  {cfg.run_id}  {cfg.describe()}")
        if spec.references and spec.tuning is not None:
            print(
                "then the reference runs of the evaluation runs, once their parameters are chosen"
            )
        elif spec.references:
            from .engine.references import reference_plan

            refs = reference_plan(spec.configs, spec.references).configs
            print(f"then {len(refs)} reference runs (once each):")
            for cfg in refs:
                print(f"  {cfg.run_id}  {cfg.describe()}")
        return 0
    if args.out is None:
        print("clad run: --out DIR is required (or use --dry-run)", file=sys.stderr)
        return EXIT_USAGE
    pulled = None
    if args.from_source is not None:
        if args.fresh:
            print(
                "clad run: --fresh deletes the folder's runs; it cannot be combined with --from",
                file=sys.stderr,
            )
            return EXIT_USAGE
        from .bundle.pull import pull

        pulled = pull(args.from_source, args.out, configs=spec.configs)
        for why in pulled.refused:
            print(f"not imported: {why}", file=sys.stderr)
    try:
        done = run_spec(
            spec,
            args.out,
            jobs=args.jobs,
            threads=args.threads,
            dask=args.dask,
            timeout=args.timeout,
            slurm=_slurm_config(args, spec),
            fresh=args.fresh,
            share=False if args.no_share else None,
            add=args.add,
            on_event=ProgressEvents(bar=not args.quiet and sys.stderr.isatty()),
            verify_sharing=args.verify_sharing,
        )
    except ResultsWriteError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    if done.interrupted:
        by = " by SIGTERM" if args.signals.received else ""
        parts = (
            [f"{done.n_ok} evaluation"]
            + ([f"{done.n_tuning_ok} tuning"] if done.n_tuning else [])
            + ([f"{sum(r.ok for r in done.references)} reference"] if done.references else [])
        )
        detail = f" ({', '.join(parts)})" if len(parts) > 1 else ""
        print(
            f"clad: interrupted{by}; {done.n_kept} finished runs{detail} are kept in {done.database}; run the "
            "same command again to resume (they are not computed again)",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if by else EXIT_INTERRUPTED
    if not args.quiet:
        print(format_summary(done.summary))
        shared = sum(1 for r in done.runs if r.ok and r.shared_from)
        same = (
            f"; {shared} of them the same computation as another run (computed once)"
            if shared
            else ""
        )
        print(
            f"\n{done.n_ok} runs finished, {done.n_failed} failed{same}\nresults in {done.database} and "
            f"{done.results_json}\nevery metric with its interval: {Path(done.out) / 'summary.md'}"
        )
        if done.work and done.work.get("runs"):
            from .core.steps import format_work

            print(
                format_work(done.work)
                + (" (every shared step verified)" if args.verify_sharing else "")
            )
        if done.references:
            print(
                f"{sum(r.ok for r in done.references)} reference runs finished ({done.n_references_computed} "
                "computed now); every run's metrics against them are in summary.csv and results.json"
            )
    flagged = format_warnings(done.runs)
    if flagged:
        print(flagged, file=sys.stderr)
    if done.n_failed:
        print(format_failures(done.runs), file=sys.stderr)
        print(
            f"clad: {done.n_failed} of {done.n_total} runs failed; their tracebacks are in {done.database} "
            "(table runs, column error)",
            file=sys.stderr,
        )
        return EXIT_RUNS_FAILED
    if not args.quiet and done.n_ok:
        print(f"To see the report: clad report {shlex.quote(str(done.out))}")
    if pulled is not None:
        print(_from_line(pulled, done))
    return 0


def _from_line(pulled, done) -> str:
    """The end line of ``clad run --from``: how many runs were imported and how many computed here."""
    shared = (
        f" and {done.n_shared} recorded as the same computation as one of them"
        if done.n_shared
        else ""
    )
    refused = (
        f"; {len(pulled.refused)} of the bundle's runs refused (listed above)"
        if pulled.refused
        else ""
    )
    return (
        f"{len(pulled.imported)} runs imported from bundle sha256:{pulled.sha256[:12]}, {done.n_computed} "
        f"computed here{shared}{refused}"
    )


def _cmd_verify_bundle(args) -> int:
    from .bundle.format import read_bundle
    from .bundle.sources import opened
    from .bundle.verify import format_verdict, verify

    with opened(args.source, args.sha256) as (path, pin):
        bundle = read_bundle(path, pin)
    verdict = verify(bundle, args.sample, args.seed, tolerance=args.tolerance)
    print(format_verdict(verdict))
    return 0 if verdict.ok else 1


def _cmd_leaderboard(args) -> int:
    from .bundle.leaderboard import leaderboard

    done = leaderboard(args.sources, args.out, previous=args.previous)
    for why in done.conflicts:
        print(f"conflict: {why}", file=sys.stderr)
    changed = (
        ""
        if done.changes is None
        else (
            f"; against the previous bundle: {done.changes['new']} new, {done.changes['gone']} gone, "
            f"{done.changes['moved']} moved (changes.csv)"
        )
    )
    print(
        f"leaderboard of {done.runs} runs from {len(done.bundles)} bundles written to {done.out / 'index.html'}{changed}"
    )
    return 0


def _cmd_pull(args) -> int:
    from .bundle.pull import pull

    done = pull(args.source, args.out, sha256=args.sha256, unverified=args.unverified)
    for why in done.refused:
        print(f"refused: {why}")
    print(
        f"{len(done.imported) - done.already} runs imported into {done.out} from bundle sha256:{done.sha256}"
        + (f" ({done.already} already there)" if done.already else "")
        + f", {len(done.refused)} refused"
    )
    return 0


def _slurm_config(args, spec):
    """The SLURM configuration of ``clad run``: ``--slurm [CONFIG]`` over the spec's ``[slurm]``
    section (None without ``--slurm``: the spec's section then applies unless --jobs or --dask
    is given), with ``--cancel-on-exit`` and, on an interactive console, a question on Ctrl-C."""
    import dataclasses

    from .engine.slurm_config import SlurmConfig, load_slurm

    if args.slurm is None:
        if not args.cancel_on_exit:
            return None
        if spec.slurm is None:
            raise CladValueError(
                "--cancel-on-exit is for a grid run on SLURM (--slurm or a [slurm] section)"
            )
        cfg = spec.slurm
    else:
        cfg = spec.slurm or SlurmConfig()
        if args.slurm is not True:
            cfg = load_slurm(args.slurm, cfg)
    if args.cancel_on_exit:
        cfg = dataclasses.replace(cfg, cancel_on_exit=True)
    if cfg.cancel_on_exit is None and sys.stdin.isatty() and sys.stderr.isatty():

        def ask(jobs):
            answer = input(f"\ncancel the {len(jobs)} SLURM jobs still queued or running? [y/N] ")
            return answer.strip().lower() in ("y", "yes")

        cfg = dataclasses.replace(cfg, confirm_cancel=ask)
    return cfg


def _cmd_export(args) -> int:
    if args.bundle is not None:
        from .bundle.format import export_bundle

        done = export_bundle(args.dir, args.bundle)
        for why in done.left_out:
            print(f"left out: {why}", file=sys.stderr)
        print(
            f"{done.runs} runs in {done.shards} shards written to {done.path} (bundle sha256 {done.sha256})"
        )
        if args.index:
            from .bundle.index import write_index

            print(f"derived index written to {write_index(done.path)}")
        return 0
    if args.format == "mlflow":
        from .engine.export_mlflow import export_mlflow

        done = export_mlflow(args.dir, tracking_uri=args.tracking_uri)
        why = "; ".join(f"{n} {reason}" for reason, n in done["reasons"].items())
        print(
            f"{done['exported']} runs logged to MLflow, {done['updated']} updated"
            + (f" ({why})" if why else "")
            + f", {done['skipped']} already there"
            + (f", {done['retired']} retired (no longer in the folder)" if done["retired"] else "")
            + ", experiment "
            f"{done['experiment_id']} at {done['tracking_uri']}"
        )
        return 0
    if args.tracking_uri is not None:
        print("clad export: --tracking-uri is for --format mlflow", file=sys.stderr)
        return 2
    from .engine.export import export

    if args.per_series and args.format not in ("csv", "parquet"):
        print("clad export: --per-series is for --format csv or parquet", file=sys.stderr)
        return 2
    for path in export(args.dir, args.format, args.dest, per_series=args.per_series):
        print(path)
    return 0


def _cmd_report(args) -> int:
    import gc

    from .report.load import report_runs

    results = report_runs(args.dir)
    gc.freeze()  # the runs live while the report is made: out of the collector's way (each collection scanned them)
    try:
        return _report(args, results)
    finally:
        gc.unfreeze()


def _report(args, results) -> int:
    import warnings

    from .report import load_spec_record, load_spec_text, make_report
    from .results import load_references

    out = Path(args.out) if args.out else Path(args.dir) / "report"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report = make_report(
                results,
                out,
                spec=load_spec_record(args.dir),
                spec_text=load_spec_text(args.dir),
                stat_metrics=args.metric or (DEFAULT_METRIC,),
                headline=args.headline,
                latex_columns=args.latex_columns,
                references=load_references(args.dir),
                jobs=args.jobs or 1,
            )
        except OSError as exc:  # a read-only or full disk, or --out naming a file
            where = exc.filename or out
            print(
                f"clad: error: cannot write the report in {str(out)!r}: {where}: {exc.strerror or exc}; "
                "give a writable folder with --out",
                file=sys.stderr,
            )
            return EXIT_WRITE_FAILED
    from .report.stats import StatisticsWarning

    expected = [w for w in caught if issubclass(w.category, StatisticsWarning)]
    for line in _grouped_warnings(
        [w for w in caught if not issubclass(w.category, StatisticsWarning)]
    ):
        log.warning("%s", line)
    if expected:  # what the evidence allows is a fact about the grid, said in one short note
        print(_statistics_note(expected, out / "statistics.html"))
    print(
        f"report: {report.index} ({len(report.pages)} pages; {len(report.figures):,} figures, {report.drawn:,} drawn, "
        f"{report.reused:,} kept from the last report; tables: "
        f"{', '.join(str(p.name) for p in report.tables.values())})"
    )
    return 0


def _statistics_note(caught, page) -> str:
    """One short line for the statistics' caveats (one block, too few blocks, ...): each kind once,
    how many comparisons it concerns, and the page that explains them.

    >>> from types import SimpleNamespace as W
    >>> print(_statistics_note([W(message="detectors by CA: one independent block (dataset: d): no test"),
    ...                         W(message="strategies by CA: one independent block (dataset: d): no test")], "s.html"))
    note: 2 comparisons: one independent block (dataset: d); what that allows is on s.html
    """
    kinds: dict[str, int] = {}
    for message in dict.fromkeys(str(w.message) for w in caught):  # each comparison's caveat once
        about, sep, rest = message.partition(": ")
        text = rest if sep else about
        head = (
            text.split("): ", 1)[0] + ")" if "): " in text.split(". ")[0] else text.split(": ")[0]
        )
        head = head.split(";")[0][:100]
        kinds[head] = kinds.get(head, 0) + 1
    said = "; ".join(f"{n} comparison{'s' if n != 1 else ''}: {k}" for k, n in kinds.items())
    return f"note: {said}; what that allows is on {page}"


def _grouped_warnings(caught) -> list[str]:
    """The report's warnings, each said once: warnings that differ only in what they are about (the
    text before the first ': ', e.g. "detectors by continual_average") are one line naming how many
    comparisons they concern.

    >>> from types import SimpleNamespace as W
    >>> _grouped_warnings([W(message="a by x: one block"), W(message="b by x: one block"), W(message="other")])
    ['one block (2 comparisons: a by x, b by x)', 'other']
    """
    groups: dict[str, list[str]] = {}
    for w in caught:
        text = str(w.message)
        about, sep, rest = text.partition(": ")
        key, label = (rest, about) if sep and len(about) < 80 else (text, "")
        groups.setdefault(key, []).append(label)
    out = []
    for text, labels in groups.items():
        named = [x for x in dict.fromkeys(labels) if x]
        if len(labels) > 1 and named:
            out.append(f"{text} ({len(labels)} comparisons: {', '.join(named)})")
        else:
            out.append(f"{named[0]}: {text}" if named else text)
    return out


def _cmd_datasets(args) -> int:
    from .datasets import cli as datasets_cli

    return datasets_cli.run(args)


def _base_metric_target(target: str):
    """The base metric declaration ``clad check`` was named (a built-in name or an import path to a
    :class:`~clad.metrics.BaseMetric`), or None for a detector or strategy."""
    from .detectors import DETECTORS
    from .metrics.base import BaseMetric, base_metric_names, find_base_metric
    from .strategies import STRATEGIES

    if target in base_metric_names():
        return find_base_metric(target)
    if (
        target in DETECTORS.names()
        or target in STRATEGIES.names()
        or not (":" in target or "." in target)
    ):
        return None
    try:
        from .registry import import_object

        obj = import_object(target, "plug-in")
    except CladError:
        return None
    return obj if isinstance(obj, BaseMetric) else None


def _cmd_check(args) -> int:
    from .detectors import DETECTORS
    from .strategies import STRATEGIES
    from .testing import check_detector, check_strategy

    params = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"clad check: --param {item!r}; expected KEY=VALUE", file=sys.stderr)
            return 2
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    metric = _base_metric_target(args.target)
    if metric is not None:
        from .testing import check_base_metric

        report = check_base_metric(metric, raise_on_failure=False)
        print(report)
        return 0 if report.ok else 1
    if args.target in STRATEGIES:
        factory = STRATEGIES.resolve(args.target)
    else:
        factory = DETECTORS.resolve(args.target)
    if isinstance(factory, type) and callable(getattr(factory, "learn", None)):
        from sklearn.ensemble import IsolationForest

        strategy = (
            STRATEGIES.build(args.target, {"detector": IsolationForest(n_estimators=20), **params})
            if args.target in STRATEGIES
            else factory(detector=IsolationForest(n_estimators=20), **params)
        )
        report = check_strategy(strategy, raise_on_failure=False)
    else:
        detector = DETECTORS.build(args.target, params)
        report = check_detector(detector, raise_on_failure=False)
    print(report)
    return 0 if report.ok else 1


def _cmd_validate(args) -> int:
    from .engine.validate_verify_commands import run_validate

    return run_validate(args)


def _cmd_verify(args) -> int:
    from .engine.validate_verify_commands import run_verify

    return run_verify(args)


def _cmd_list(args) -> int:
    import inspect
    import shutil
    import textwrap

    from .datasets import DATASETS
    from .detectors import DETECTORS
    from .scenarios import SCENARIOS
    from .strategies import STRATEGIES

    def toml_value(v) -> str:  # a default as it would be written in a spec (None: left unset)
        if v is None:
            return "none"
        try:
            return json.dumps(v)
        except (TypeError, ValueError):
            return repr(v)

    def parameters(kind: str, registry, name: str) -> str:
        try:
            sig = inspect.signature(registry.resolve(name))
        except (ImportError, CladError, TypeError, ValueError) as exc:
            return f"(parameters not shown: {exc})"
        defaults = registry.defaults(name)
        parts = []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (
                kind == "strategies" and p.name == "detector"
            ):
                continue  # a strategy's detector comes from the spec's [[detectors]]
            if p.name in defaults:
                parts.append(f"{p.name}={toml_value(defaults[p.name])}")
            elif p.default is p.empty:
                parts.append(f"{p.name} (required)")
            else:
                parts.append(f"{p.name}={toml_value(p.default)}")
        return ", ".join(parts) or "no parameters"

    kinds = {
        "detectors": DETECTORS,
        "strategies": STRATEGIES,
        "scenarios": SCENARIOS,
        "datasets": DATASETS,
    }
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    if args.kind == "base_metrics":
        _list_base_metrics(args.names, width)
        return 0
    for kind in [args.kind] if args.kind else list(kinds):
        registry = kinds[kind]
        path = "package.module:function" if kind == "datasets" else "package.module:Class"
        print(f"{kind} (name in a spec, or any '{path}'), with their parameters and defaults:")
        for name in registry.names():
            print(f"  {name:20s} {registry.doc(name)}")
            print(
                textwrap.fill(
                    parameters(kind, registry, name),
                    width,
                    initial_indent=" " * 23,
                    subsequent_indent=" " * 23,
                    break_on_hyphens=False,
                )
            )
            if (
                kind == "strategies"
            ):  # whether runs of it can be trained as replicas of one torch model
                problem = getattr(registry.resolve(name), "replicas_problem", "not said")
                text = (
                    "replicas: yes"
                    if problem is None
                    else f"replicas: no, one model at a time ({problem})"
                )
                print(
                    textwrap.fill(text, width, initial_indent=" " * 23, subsequent_indent=" " * 23)
                )
    if args.kind is None:
        _list_base_metrics(args.names, width)
    return 0


def _list_base_metrics(names, width: int) -> None:
    """Print the declared base metrics and those named by import path in ``names``."""
    import inspect
    import textwrap

    from .metrics.base import base_metric_names, get_base_metric

    print(
        "base_metrics (name in a spec, or any 'package.module:NAME' declaring a clad.metrics.BaseMetric), "
        "with their declarations:"
    )
    for name in [*base_metric_names(), *(n for n in names or () if n not in base_metric_names())]:
        m = get_base_metric(name)
        lo, hi = m.bounds
        try:
            sig = inspect.signature(m.function)
            defaults = {
                p.name: p.default for p in sig.parameters.values() if p.default is not p.empty
            }
        except (TypeError, ValueError):
            defaults = {}
        params = ", ".join(
            f"{k}={json.dumps(defaults[k]) if k in defaults else '(declared)'}" for k in m.params
        )
        facts = (
            [
                f"reads the {m.input}",
                f"in [{lo:g}, {hi:g}]",
                "higher is better" if m.higher_is_better else "lower is better",
            ]
            + (["time axis"] if m.time_axis else [])
            + (["optimistic"] if m.optimistic else [])
        )
        print(f"  {name:20s} {m.label}")
        print(
            textwrap.fill(
                "; ".join(facts) + (f"; parameters: {params}" if params else ""),
                width,
                initial_indent=" " * 23,
                subsequent_indent=" " * 23,
                break_on_hyphens=False,
            )
        )


def _cmd_version(args) -> int:
    from .results.record import versions

    print(json.dumps(versions(), indent=1))
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clad", description="Benchmarks for continual anomaly detection."
    )
    p.add_argument("--version", action="version", version=f"clad {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser(
        "run",
        help="run a spec file",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("spec", help="TOML spec file, e.g. scenarios/quickstart.toml")
    r.add_argument("--out", help="output folder (results.json is written there)")
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print the expanded grid, in the order the runs will start, and exit",
    )
    r.add_argument(
        "--from",
        dest="from_source",
        default=None,
        metavar="SOURCE",
        help="first import every run of this bundle that is the same computation here (a folder, a "
        "tar, file:// or https:// URL#sha256=HEX, git+URL@COMMIT), then compute only the others",
    )
    r.add_argument(
        "--quiet", action="store_true", help="no progress bar (plain log lines), no summary"
    )
    r.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        default=None,
        help="run N runs at once in worker processes (default: spec 'jobs', else 1)",
    )
    r.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="BLAS/OpenMP/torch threads per run (default: spec 'threads', else 1)",
    )
    r.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="run on a Dask distributed cluster, e.g. tcp://scheduler:8786 (default: spec 'dask')",
    )
    r.add_argument(
        "--slurm",
        nargs="?",
        const=True,
        default=None,
        metavar="CONFIG",
        help="run the grid as SLURM jobs (submitit job arrays; results folded here): the spec's [slurm] "
        "section, with the keys of the TOML file CONFIG over it when given",
    )
    r.add_argument(
        "--cancel-on-exit",
        action="store_true",
        help="with --slurm: on Ctrl-C cancel the submitted jobs (default: ask on a console, else leave "
        "them running; the same command then reattaches to them)",
    )
    r.add_argument(
        "--timeout",
        type=_positive_float,
        default=None,
        help="seconds per run before it is recorded as failed (default: spec 'timeout', else none)",
    )
    g = r.add_mutually_exclusive_group()
    g.add_argument(
        "--resume",
        dest="fresh",
        action="store_false",
        help="skip runs already finished in DIR/results.sqlite (the default)",
    )
    g.add_argument(
        "--fresh",
        dest="fresh",
        action="store_true",
        help="delete DIR/results.sqlite and run everything again",
    )
    r.add_argument(
        "--verify-sharing",
        action="store_true",
        help="compute every training step and scoring pass anyway and compare it, byte for byte, with "
        "the result shared by step key; a difference fails the run naming the key",
    )
    r.add_argument(
        "--no-share",
        action="store_true",
        help="compute every run and every training step itself, even those that are the same computation as another "
        "(default: spec 'share', else true: computed once, recorded with shared_from)",
    )
    r.add_argument(
        "--add",
        action="store_true",
        help="add this spec's runs to a folder holding another spec's results (by default another "
        "spec's folder is refused); results.json then holds every run of the folder",
    )
    r.set_defaults(func=_cmd_run, fresh=False)

    e = sub.add_parser("export", help="export a results database as tidy CSV or Parquet tables")
    e.add_argument(
        "dir", help="output folder of 'clad run' (holding results.sqlite), or the database file"
    )
    e.add_argument(
        "--format",
        choices=["csv", "parquet", "json", "mlflow"],
        default="csv",
        help="csv or parquet: tidy tables r_cells, metrics, runs; json: results.json; mlflow: every "
        "run logged into an MLflow tracking store (pip install 'clad[mlflow]')",
    )
    e.add_argument(
        "--dest", default=None, help="folder to write into (default: next to the database)"
    )
    e.add_argument(
        "--per-series",
        action="store_true",
        help="also per_series.csv: for time-series datasets made of several series (channels), every "
        "base metric per run, step, test concept and series",
    )
    e.add_argument(
        "--tracking-uri",
        default=None,
        metavar="URI",
        help="with --format mlflow: the MLflow tracking store (default: a local store in DIR/mlruns)",
    )
    e.add_argument(
        "--bundle",
        default=None,
        metavar="OUT",
        help="write a bundle instead: every finished run with its result key, in sorted JSON Lines shards "
        "with a manifest (a folder, or one tar when OUT ends with .tar); see docs/guides/bundles.md",
    )
    e.add_argument(
        "--index",
        action="store_true",
        help="with --bundle OUT (a folder): also write its derived index.parquet (needs pyarrow)",
    )
    e.set_defaults(func=_cmd_export)

    pl = sub.add_parser("pull", help="import a bundle's runs that are the same computation here")
    pl.add_argument(
        "source",
        help="a bundle folder or tar, a file:// or https:// URL (pinned: URL#sha256=HEX or "
        "--sha256), or git+URL@COMMIT[#path=FOLDER]",
    )
    pl.add_argument(
        "--out", required=True, help="results folder to import into (created when missing)"
    )
    pl.add_argument(
        "--sha256",
        default=None,
        help="the sha256 pinning the bundle (a URL's file, or the bundle's)",
    )
    pl.add_argument(
        "--unverified",
        action="store_true",
        help="also import, kept apart as unverified, the runs only a plug-in's missing code keeps "
        "from being recomputed here",
    )
    pl.set_defaults(func=_cmd_pull)

    vb = sub.add_parser(
        "verify-bundle", help="recompute a stratified random sample of a bundle's runs and compare"
    )
    vb.add_argument("source", help="a bundle (as for clad pull)")
    vb.add_argument(
        "--sample", type=_positive_int, default=100, help="how many runs to recompute (default 100)"
    )
    vb.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    vb.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="absolute tolerance of a value of R (default 0: bit for bit; at most 0.01)",
    )
    vb.add_argument("--sha256", default=None, help="the sha256 pinning the bundle")
    vb.set_defaults(func=_cmd_verify_bundle)

    lb = sub.add_parser(
        "leaderboard", help="a static report across bundles, offline (nothing computed)"
    )
    lb.add_argument("sources", nargs="+", help="bundles (as for clad pull)")
    lb.add_argument("-o", "--out", required=True, help="folder to write the site into")
    lb.add_argument(
        "--previous",
        default=None,
        help="an earlier bundle: changes.csv lists what is new, gone or moved",
    )
    lb.set_defaults(func=_cmd_leaderboard)

    rp = sub.add_parser("report", help="figures, tables and statistics of a results folder")
    rp.add_argument("dir", help="results folder written by `clad run --out DIR`")
    rp.add_argument("--out", help="report folder (default DIR/report)")
    rp.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help=f"scalar metric the statistics compare methods on (repeatable; default {DEFAULT_METRIC})",
    )
    rp.add_argument(
        "--headline",
        metavar="BASE_METRIC",
        help="base metric that leads the headline, tables and statistics (default: the first of the "
        "spec's base_metrics)",
    )
    rp.add_argument(
        "--latex-columns",
        metavar="LIST",
        help="columns of leaderboard.tex: metric names or labels, comma-separated (e.g. CA,BWT,FWT), or "
        "'all' for one table per metric family (default: the headline metrics)",
    )
    rp.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        default=None,
        help="worker processes that draw the PNG figures (time-series traces; the others are drawn by the "
        "browser) when there are enough of them (default 1); a figure whose content did not change "
        "since the last report in the folder is kept, not written again",
    )
    rp.set_defaults(func=_cmd_report)

    d = sub.add_parser(
        "datasets", help="dataset loaders and cards: list, info NAME, convert SRC DST"
    )
    d.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "info", "convert"],
        help="list: loaders and cards; info NAME: one card or loader; convert SRC DST: pyCLAD file -> .npz",
    )
    d.add_argument("args", nargs="*", help="NAME for info; SRC DST for convert")
    d.add_argument("--data-dir", default=None, help="data directory to look for SRC in (convert)")
    d.add_argument(
        "--allow-pickle",
        action="store_true",
        help="convert: allow unpickling SRC (it runs code from the file: only for files you trust)",
    )
    d.set_defaults(func=_cmd_datasets)

    c = sub.add_parser("check", help="run the conformance checks on a detector or strategy")
    c.add_argument("target", help="a registered name or 'package.module:Class'")
    c.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a constructor parameter (value parsed as JSON when it can be)",
    )
    c.set_defaults(func=_cmd_check)

    from .engine.validate_verify_commands import add_validate_arguments, add_verify_arguments

    va = sub.add_parser(
        "validate",
        help="is a spec's scenario feasible, non-trivial, forgetting, free of redundancy",
    )
    add_validate_arguments(va)
    va.set_defaults(func=_cmd_validate)

    vf = sub.add_parser(
        "verify", help="rerun reference specs and compare with their committed results"
    )
    add_verify_arguments(vf)
    vf.set_defaults(func=_cmd_verify)

    ls = sub.add_parser(
        "list", help="registered detectors, strategies, scenarios, datasets and base metrics"
    )
    ls.add_argument(
        "kind",
        nargs="?",
        choices=["detectors", "strategies", "scenarios", "datasets", "base_metrics"],
    )
    ls.add_argument(
        "names",
        nargs="*",
        metavar="IMPORT_PATH",
        help="base_metrics: also show these declarations ('package.module:NAME')",
    )
    ls.set_defaults(func=_cmd_list)

    v = sub.add_parser("version", help="versions of clad and its libraries")
    v.set_defaults(func=_cmd_version)
    return p


def _plugin_path(args) -> None:
    """Where plug-ins named by import path ('my_module:MyDetector') are found: after the installed
    packages, never before them (so a ``matplotlib.py`` in the current folder never shadows
    matplotlib). The spec's folder is appended for the commands that read a spec, the current
    folder for ``clad check`` and ``clad list`` (which may name a plug-in by import path); the
    implicit current-folder entry of ``python -c`` goes last."""
    if "" in sys.path:
        sys.path.remove("")
        sys.path.append("")
    extra = []
    for key in ("spec", "target"):
        value = getattr(args, key, None)
        if isinstance(value, str) and value.endswith(".toml"):
            extra.append(os.path.dirname(os.path.abspath(value)))
    if getattr(args, "func", None) in (_cmd_check, _cmd_list):
        extra.append(os.getcwd())
    for folder in extra:
        if folder not in sys.path:
            sys.path.append(folder)


def _prestart_for(argv: list[str]) -> None:
    """``clad run ... --jobs N`` (N > 1, not a dry run, no Dask): start the worker server before
    anything else, so that its imports overlap with building the parser and checking the spec."""
    if argv[:1] != ["run"] or "--dry-run" in argv or any(a.startswith("--dask") for a in argv):
        return
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("spec", nargs="?")
    pre.add_argument("--jobs", "-j", default="1")
    for option in ("--out", "--threads", "--timeout"):  # the options that take a value
        pre.add_argument(option)
    pre.add_argument("--slurm", nargs="?")
    try:
        known, _ = pre.parse_known_args(argv[1:])
    except SystemExit:  # a bad command line is the real parser's to report
        return
    if known.jobs.isdigit() and int(known.jobs) > 1:  # a bad value is the real parser's to report
        from .engine.forkserver import prestart_workers

        prestart_workers(_spec_detectors(known.spec))


def _spec_detectors(path: str | None) -> list[str]:
    """The detector names a spec file lists (``detectors = ["hbos", {name = ...}]``), read without
    checking anything (the spec is checked later): the worker server imports their modules while the
    spec is checked. Nothing when the file cannot be read."""
    if not path:
        return []
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            return []
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except (OSError, ValueError):
        return []
    listed = raw.get("detectors", [])
    if not isinstance(listed, list):
        return []
    names = [d.get("name") if isinstance(d, dict) else d for d in listed]
    return [n for n in names if isinstance(n, str)]


#: control characters never written to the console as they are (escape sequences could clear the
#: screen, move the cursor or fake a line): every C0 and C1 control but newline, tab and carriage return
_CONTROL = {
    c: f"\\x{c:02x}"
    for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
    if chr(c) not in "\n\t\r"
}


def terminal_safe(text: str) -> str:
    r"""``text`` with its control characters written as escapes (``\x1b``): labels, concept names and
    messages that come from files and plug-ins reach the console as text, never as commands.

    >>> terminal_safe("ok\x1b[2J done")
    'ok\\x1b[2J done'
    """
    return text.translate(_CONTROL) if isinstance(text, str) else text


class _SafeStream:
    """A console stream whose writes go through :func:`terminal_safe`; everything else is the stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._stream.write(terminal_safe(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def _safe_console():
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _SafeStream(sys.stdout), _SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before


def _freeze_heap() -> None:
    """Move every object to the garbage collector's permanent generation: the interpreter's last
    collections at exit then skip the heap of the libraries a command imported (scikit-learn, SciPy,
    pandas, PyOD: a third of a second of CPU at the end of every ``clad run``)."""
    import gc

    gc.freeze()


_exit_hook: list = []  # whether _freeze_heap is registered to run at interpreter exit


def main(argv: list[str] | None = None) -> int:
    if (
        not _exit_hook
    ):  # runs at interpreter exit only: a caller in a longer-lived process is untouched
        import atexit

        atexit.register(_freeze_heap)
        _exit_hook.append(True)
    with _safe_console():
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    _prestart_for(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    _plugin_path(args)
    logging.basicConfig(
        level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO,
        format="%(levelname)s %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("clad.engine.progress").setLevel(
        logging.INFO
    )  # plain progress lines, even with --quiet
    try:
        with _sigterm_as_interrupt() as args.signals:
            return int(args.func(args) or 0)
    except CladError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the output went to a command that stopped reading (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        from .results.store import DestinationError

        if not isinstance(exc, DestinationError):
            raise
        print(f"clad: error: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    except KeyboardInterrupt as exc:
        by = " by SIGTERM" if isinstance(exc, Terminated) else ""
        print(
            f"clad: interrupted{by}; finished runs are kept in the results database",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if by else EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
