"""``clad run``: a spec's grid into a results folder, or with ``--dry-run`` the grid it would run.

:func:`clad.engine.benchmark.run_spec` is called in one place, :func:`_run_spec`; what the console
says afterwards is :func:`_said_after`.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
from pathlib import Path

from ..errors import CladValueError
from .console import (
    EXIT_INTERRUPTED,
    EXIT_RUNS_FAILED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    EXIT_WRITE_FAILED,
    positive_float,
    positive_int,
)

__all__ = ["add_parser", "command"]

log = logging.getLogger("clad")

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


def command(args) -> int:
    """Run the spec ``args.spec`` into ``args.out`` (or list its grid); the exit status."""
    if (args.jobs or 1) > 1 and not args.dry_run and args.dask is None:
        from ..engine.forkserver import prestart_workers, spec_detectors

        # started before anything heavy is imported: the server's imports (the grid's detector
        # modules among them) overlap with this process's own and with checking the spec
        prestart_workers(spec_detectors(args.spec))
    from ..engine.spec import load_spec

    spec = load_spec(args.spec)
    if args.dry_run or args.out is None:
        for msg in spec.skipped:
            log.info("skipped: %s", msg)
    if args.dry_run:
        return _dry_run(args, spec)
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
        from ..bundle.pull import pull

        pulled = pull(args.from_source, args.out, configs=spec.configs)
        for why in pulled.refused:
            print(f"not imported: {why}", file=sys.stderr)
    from ..engine.benchmark import ResultsWriteError

    try:
        done = _run_spec(args, spec)
    except ResultsWriteError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    return _said_after(args, done, pulled)


def _run_spec(args, spec):
    """The one call of :func:`~clad.engine.benchmark.run_spec`, with the command line's options."""
    from ..engine.benchmark import run_spec
    from ..engine.progress import ProgressEvents
    from ..engine.sharing import Sharing

    return run_spec(
        spec,
        args.out,
        execution=_execution(args, spec),
        sharing=Sharing.of(
            spec, share=False if args.no_share else None, verify=args.verify_sharing
        ),
        fresh=args.fresh,
        add=args.add,
        on_event=ProgressEvents(bar=not args.quiet and sys.stderr.isatty()),
    )


def _said_after(args, done, pulled) -> int:
    """What the console says once the runs are over; the exit status."""
    from ..engine.progress import format_failures, format_warnings

    if done.interrupted:
        return _interrupted(args, done)
    if not args.quiet:
        _summary(args, done)
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


def _interrupted(args, done) -> int:
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


def _summary(args, done) -> None:
    from ..engine.summary import format_summary

    print(format_summary(done.summary))
    shared = sum(1 for r in done.runs if r.ok and r.shared_from)
    same = (
        f"; {shared} of them the same computation as another run (computed once)" if shared else ""
    )
    print(
        f"\n{done.n_ok} runs finished, {done.n_failed} failed{same}\nresults in {done.database} and "
        f"{done.results_json}\nevery metric with its interval: {Path(done.out) / 'summary.md'}"
    )
    if done.work and done.work.get("runs"):
        from ..core.steps import format_work

        print(
            format_work(done.work)
            + (" (every shared step verified)" if args.verify_sharing else "")
        )
    if done.references:
        print(
            f"{sum(r.ok for r in done.references)} reference runs finished ({done.n_references_computed} "
            "computed now); every run's metrics against them are in summary.csv and results.json"
        )


def _dry_run(args, spec) -> int:
    """Print the expanded grid, in the order its runs will start, and its size."""
    from ..engine.preflight import preflight_problems
    from ..engine.run import execution_order
    from ..errors import SpecError

    execution = _execution(args, spec)
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
    for cfg in execution_order(tuning):
        print(f"  {cfg.run_id}  tuning: {cfg.describe()}")
    for cfg in execution_order(spec.configs):  # the order the runs will start in
        if spec.tuning is not None and spec.tuning.tuned(cfg):  # its id follows the choice
            print(f"  {'(after tuning)':16s}  {cfg.describe()}")
        else:
            print(f"  {cfg.run_id}  {cfg.describe()}")
    if spec.references and spec.tuning is not None:
        print("then the reference runs of the evaluation runs, once their parameters are chosen")
    elif spec.references:
        from ..engine.references import reference_plan

        refs = reference_plan(spec.configs, spec.references).configs
        print(f"then {len(refs)} reference runs (once each):")
        for cfg in refs:
            print(f"  {cfg.run_id}  {cfg.describe()}")
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


def _execution(args, spec):
    """Where and how the runs compute: the command line's options over the spec's."""
    from ..engine.settings import Execution

    return Execution.of(
        spec,
        jobs=args.jobs,
        threads=args.threads,
        dask=args.dask,
        timeout=args.timeout,
        slurm=_slurm_config(args, spec),
    )


def _slurm_config(args, spec):
    """The SLURM configuration of ``clad run``: ``--slurm [CONFIG]`` over the spec's ``[slurm]``
    section (None without ``--slurm``: the spec's section then applies unless --jobs or --dask
    is given), with ``--cancel-on-exit`` and, on an interactive console, a question on Ctrl-C."""
    import dataclasses

    from ..engine.slurm_config import SlurmConfig, load_slurm

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


def add_parser(sub) -> None:
    """Declare ``clad run`` and its options."""
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
    _add_execution(r)
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
    r.set_defaults(func=command, fresh=False)


def _add_execution(r) -> None:
    """The options that say where and how the runs compute (jobs, threads, Dask, SLURM, time limit)."""
    r.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        default=None,
        help="run N runs at once in worker processes (default: spec 'jobs', else 1)",
    )
    r.add_argument(
        "--threads",
        type=positive_int,
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
        type=positive_float,
        default=None,
        help="seconds per run before it is recorded as failed (default: spec 'timeout', else none)",
    )
