"""The ``clad`` command line.

``clad run SPEC.toml --out DIR``   run every combination of a spec into ``DIR/results.sqlite``
                                  (resuming), then write ``DIR/results.json`` and summaries;
                                  ``--jobs N`` worker processes, ``--dask ADDRESS`` a Dask cluster,
                                  ``--threads T`` BLAS/OpenMP/torch threads per run (default 1),
                                  ``--fresh`` start over, ``--timeout S`` per-run time limit.
                                  Exit status: 0 all fine, N (at most 100) when N runs failed,
                                  2 for a bad spec or command line, 111 when the results could
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
``clad export DIR [--format csv|parquet|json]``  tidy tables of R, metrics and runs (or results.json)
``clad list [KIND]``               registered detectors, strategies, scenarios and datasets
``clad version``                   versions of clad and the libraries behind the numbers
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from ._version import __version__
from .errors import CladError

log = logging.getLogger("clad")

#: exit status when the results could not be written (disk full, database unwritable)
EXIT_WRITE_FAILED = 111
#: exit status after Ctrl-C (SIGINT) and after SIGTERM (128 + the signal's number, as a shell reports it)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

RUN_EPILOG = """exit status:
  0      every run finished
  N      N runs failed (at most 100); their tracebacks are in DIR/results.sqlite
  2      a bad spec or command line
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
    from .engine.progress import ProgressEvents
    from .engine.spec import load_spec
    from .engine.summary import format_summary

    spec = load_spec(args.spec)
    if args.dry_run or args.out is None:
        for msg in spec.skipped:
            log.info("skipped: %s", msg)
    if args.dry_run:
        jobs = args.jobs if args.jobs is not None else (spec.jobs or 1)
        dask = args.dask if args.dask is not None else spec.dask
        timeout = args.timeout if args.timeout is not None else spec.timeout
        where = f"Dask at {dask}" if dask else f"{jobs} process{'es' if jobs > 1 else ''}"
        print(f"{spec.name}: {len(spec)} runs ({where}"
              + (f", time limit {timeout:g} s per run" if timeout else "") + ")")
        for cfg in spec.configs:
            print(f"  {cfg.run_id}  {cfg.describe()}")
        return 0
    if args.out is None:
        print("clad run: --out DIR is required (or use --dry-run)", file=sys.stderr)
        return 2
    try:
        done = run_spec(spec, args.out, jobs=args.jobs, threads=args.threads, dask=args.dask, timeout=args.timeout,
                        fresh=args.fresh, on_event=ProgressEvents(bar=not args.quiet and sys.stderr.isatty()))
    except ResultsWriteError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    if done.interrupted:
        by = " by SIGTERM" if args.signals.received else ""
        print(f"clad: interrupted{by}; {done.n_ok} finished runs are kept in {done.database}; run the same "
              "command again to resume", file=sys.stderr)
        return EXIT_TERMINATED if by else EXIT_INTERRUPTED
    if not args.quiet:
        print(format_summary(done.summary))
        print(f"\n{done.n_ok} runs finished, {done.n_failed} failed; results in {done.database} and "
              f"{done.results_json}")
    if done.n_failed:
        log.error("%d of %d runs failed; their tracebacks are in %s (table runs, column error)", done.n_failed,
                  done.n_total, done.database)
    return min(done.n_failed, 100)


def _cmd_export(args) -> int:
    from .engine.export import export

    for path in export(args.dir, args.format, args.dest):
        print(path)
    return 0


def _cmd_report(args) -> int:
    import warnings

    from .report import load_results, load_spec_record, make_report

    results = load_results(args.dir)
    out = Path(args.out) if args.out else Path(args.dir) / "report"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = make_report(results, out, spec=load_spec_record(args.dir),
                             stat_metrics=args.metric or ("continual_average",))
    for w in caught:
        log.warning("%s", w.message)
    print(f"report: {report.index} ({len(report.figures)} figures; tables: "
          f"{', '.join(str(p.name) for p in report.tables.values())})")
    return 0


def _cmd_datasets(args) -> int:
    from .datasets import cli as datasets_cli

    return datasets_cli.run(args)


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
    if args.target in STRATEGIES:
        factory = STRATEGIES.resolve(args.target)
    else:
        factory = DETECTORS.resolve(args.target)
    if isinstance(factory, type) and callable(getattr(factory, "learn", None)):
        from sklearn.ensemble import IsolationForest

        strategy = STRATEGIES.build(args.target, {"detector": IsolationForest(n_estimators=20), **params}) \
            if args.target in STRATEGIES else factory(detector=IsolationForest(n_estimators=20), **params)
        report = check_strategy(strategy, raise_on_failure=False)
    else:
        detector = DETECTORS.build(args.target, params)
        report = check_detector(detector, raise_on_failure=False)
    print(report)
    return 0 if report.ok else 1


def _cmd_validate(args) -> int:
    from .protocol.cli import run_validate

    return run_validate(args)


def _cmd_verify(args) -> int:
    from .protocol.cli import run_verify

    return run_verify(args)


def _cmd_list(args) -> int:
    from .datasets import DATASETS
    from .detectors import DETECTORS
    from .scenarios import SCENARIOS
    from .strategies import STRATEGIES

    kinds = {"detectors": DETECTORS, "strategies": STRATEGIES, "scenarios": SCENARIOS, "datasets": DATASETS}
    for kind in [args.kind] if args.kind else list(kinds):
        registry = kinds[kind]
        print(f"{kind} (name in a spec, or any 'package.module:Class'):")
        for name in registry.names():
            print(f"  {name:20s} {registry.doc(name)}")
    return 0


def _cmd_version(args) -> int:
    from .core.results import versions

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
    p = argparse.ArgumentParser(prog="clad", description="Benchmarks for continual anomaly detection.")
    p.add_argument("--version", action="version", version=f"clad {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a spec file", epilog=RUN_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("spec", help="TOML spec file, e.g. scenarios/quickstart.toml")
    r.add_argument("--out", help="output folder (results.json is written there)")
    r.add_argument("--dry-run", action="store_true", help="print the expanded grid and exit")
    r.add_argument("--quiet", action="store_true", help="no progress bar (plain log lines), no summary")
    r.add_argument("--jobs", "-j", type=_positive_int, default=None,
                   help="run N runs at once in worker processes (default: spec 'jobs', else 1)")
    r.add_argument("--threads", type=_positive_int, default=None,
                   help="BLAS/OpenMP/torch threads per run (default: spec 'threads', else 1)")
    r.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run on a Dask distributed cluster, e.g. tcp://scheduler:8786 (default: spec 'dask')")
    r.add_argument("--timeout", type=_positive_float, default=None,
                   help="seconds per run before it is recorded as failed (default: spec 'timeout', else none)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--resume", dest="fresh", action="store_false",
                   help="skip runs already finished in DIR/results.sqlite (the default)")
    g.add_argument("--fresh", dest="fresh", action="store_true",
                   help="delete DIR/results.sqlite and run everything again")
    r.set_defaults(func=_cmd_run, fresh=False)

    e = sub.add_parser("export", help="export a results database as tidy CSV or Parquet tables")
    e.add_argument("dir", help="output folder of 'clad run' (holding results.sqlite), or the database file")
    e.add_argument("--format", choices=["csv", "parquet", "json"], default="csv",
                   help="csv or parquet: tidy tables r_cells, metrics, runs; json: results.json")
    e.add_argument("--dest", default=None, help="folder to write into (default: next to the database)")
    e.set_defaults(func=_cmd_export)

    rp = sub.add_parser("report", help="figures, tables and statistics of a results folder")
    rp.add_argument("dir", help="results folder written by `clad run --out DIR`")
    rp.add_argument("--out", help="report folder (default DIR/report)")
    rp.add_argument("--metric", action="append", metavar="NAME",
                    help="scalar metric the statistics compare methods on (repeatable; default continual_average)")
    rp.set_defaults(func=_cmd_report)

    from .datasets.cli import add_arguments as _dataset_arguments

    d = sub.add_parser("datasets", help="dataset loaders and cards: list, info NAME, convert SRC DST")
    _dataset_arguments(d)
    d.set_defaults(func=_cmd_datasets)

    c = sub.add_parser("check", help="run the conformance checks on a detector or strategy")
    c.add_argument("target", help="a registered name or 'package.module:Class'")
    c.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a constructor parameter (value parsed as JSON when it can be)")
    c.set_defaults(func=_cmd_check)

    from .protocol.cli import add_validate_arguments, add_verify_arguments

    va = sub.add_parser("validate", help="is a spec's scenario feasible, non-trivial, forgetting, free of redundancy")
    add_validate_arguments(va)
    va.set_defaults(func=_cmd_validate)

    vf = sub.add_parser("verify", help="rerun reference specs and compare with their committed results")
    add_verify_arguments(vf)
    vf.set_defaults(func=_cmd_verify)

    ls = sub.add_parser("list", help="registered detectors, strategies, scenarios and datasets")
    ls.add_argument("kind", nargs="?", choices=["detectors", "strategies", "scenarios", "datasets"])
    ls.set_defaults(func=_cmd_list)

    v = sub.add_parser("version", help="versions of clad and its libraries")
    v.set_defaults(func=_cmd_version)
    return p


def _plugin_path(args) -> None:
    """Where plug-ins named by import path ('my_module:MyDetector') are found: after the installed
    packages, never before them (so a ``matplotlib.py`` in the current folder never shadows
    matplotlib). The spec's folder is appended for the commands that read a spec, the current
    folder for ``clad check``; the implicit current-folder entry of ``python -c`` goes last."""
    if "" in sys.path:
        sys.path.remove("")
        sys.path.append("")
    extra = []
    for key in ("spec", "target"):
        value = getattr(args, key, None)
        if isinstance(value, str) and value.endswith(".toml"):
            extra.append(os.path.dirname(os.path.abspath(value)))
    if getattr(args, "func", None) is _cmd_check:
        extra.append(os.getcwd())
    for folder in extra:
        if folder not in sys.path:
            sys.path.append(folder)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _plugin_path(args)
    logging.basicConfig(level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO,
                        format="%(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("clad.engine.progress").setLevel(logging.INFO)  # plain progress lines, even with --quiet
    try:
        with _sigterm_as_interrupt() as args.signals:
            return int(args.func(args) or 0)
    except CladError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the output went to a command that stopped reading (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as exc:
        by = " by SIGTERM" if isinstance(exc, Terminated) else ""
        print(f"clad: interrupted{by}; finished runs are kept in the results database", file=sys.stderr)
        return EXIT_TERMINATED if by else EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
