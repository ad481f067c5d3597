"""``clad validate`` (scenario validity from single-task matrices) and ``clad verify`` (reference
suites rerun and compared). ``clad validate``'s options (the base metrics, the thresholds'
defaults) are declared when that command is parsed: only then is the library imported."""

from __future__ import annotations

import argparse
import json

from ..defaults import DEFAULT_BASE_METRIC

__all__ = ["add_validate", "run_validate", "add_verify", "run_verify"]

#: the options of the thresholds of :class:`~clad.protocol.validity.Thresholds`, by field
THRESHOLD_OPTIONS = {
    "feasible_min": ("--feasible", "feasible: every M[j, j] >= X"),
    "trivial_ceiling": ("--ceiling", "non-trivial: not every cell >= X"),
    "forgetting_max": ("--forgetting", "forgetting: naive's backward transfer < X"),
    "redundancy_tol": (
        "--redundancy",
        "no redundancy: no pair whose cross scores both lie within X of their diagonals",
    ),
}


def add_validate(sub) -> None:
    """Declare ``clad validate`` (its arguments: :func:`_validate_arguments`, when it is parsed)."""
    va = sub.add_parser(
        "validate",
        help="is a spec's scenario feasible, non-trivial, forgetting, free of redundancy",
        arguments=_validate_arguments,
    )
    va.set_defaults(func=run_validate)


def _validate_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``clad validate``."""
    from ..metrics.base import base_metric_names
    from ..protocol.validity import Thresholds

    d = Thresholds()
    p.add_argument(
        "spec", help="TOML spec file; M is computed for each of its (dataset, detector, seed)"
    )
    p.add_argument(
        "--metric",
        default=DEFAULT_BASE_METRIC,
        choices=base_metric_names(),
        help=f"base metric of M (default {DEFAULT_BASE_METRIC})",
    )
    for field, (option, text) in THRESHOLD_OPTIONS.items():
        default = getattr(d, field)
        p.add_argument(
            option, type=float, default=default, metavar="X", help=f"{text} (default {default:g})"
        )
    p.add_argument("--json", metavar="FILE", default=None, help="also write the reports as JSON")


def run_validate(args) -> int:
    """Print a validity report per (dataset, detector, seed) of the spec; 1 when a check fails."""
    from ..engine.spec import load_spec
    from ..engine.validate import validate_spec
    from ..errors import CladValueError
    from ..protocol.validity import Thresholds
    from ..results.record import atomic_write_text
    from ..results.store import DestinationError, writable_destination

    spec = load_spec(args.spec)
    try:
        thresholds = Thresholds(args.feasible, args.ceiling, args.forgetting, args.redundancy)
    except CladValueError as exc:  # named by the option the user typed
        text = str(exc)
        for name, (option, _) in THRESHOLD_OPTIONS.items():
            text = text.replace(f"{name}=", f"{option} ")
        raise CladValueError(text) from None
    if args.json:  # before anything is computed: a destination that cannot be written fails at once
        writable_destination(args.json, "file", "--json")
    reports = []
    for report in validate_spec(spec, args.metric, thresholds):
        reports.append(report)
        print(report.format(), flush=True)
    n_ok = sum(r.ok for r in reports)
    print(f"\n{spec.name}: {n_ok} of {len(reports)} scenario(s) pass every check")
    if args.json:
        try:
            atomic_write_text(
                args.json, json.dumps([r.to_dict() for r in reports], indent=1, allow_nan=False)
            )
        except OSError as exc:
            raise DestinationError(
                args.json, exc.strerror or str(exc), "give a writable file with --json"
            ) from None
    return 0 if n_ok == len(reports) else 1


def add_verify(sub) -> None:
    """Declare ``clad verify`` and its options."""
    p = sub.add_parser(
        "verify", help="rerun reference specs and compare with their committed results"
    )
    p.add_argument(
        "target",
        help="a spec file, or a folder of specs (e.g. scenarios/suite), each with "
        "NAME.reference.json beside NAME.toml",
    )
    p.add_argument(
        "--update", action="store_true", help="rerun and (re)write the reference results instead"
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="with --update: absolute tolerance to record for every run (default: 1e-9, or 1e-4 for "
        "PyTorch detectors)",
    )
    p.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (default 1)")
    p.set_defaults(func=run_verify)


def run_verify(args) -> int:
    """Verify (or with ``--update`` rewrite) every spec of the target; 1 when anything differs."""
    import time

    from ..engine.verify import format_check, spec_files, update_reference, verify_spec

    t0 = time.perf_counter()
    files = spec_files(args.target)
    if args.update:
        for f in files:
            path, n, seconds = update_reference(f, jobs=args.jobs, tolerance=args.tolerance)
            print(f"wrote {path} ({n} runs, {seconds:.1f} s)", flush=True)
        return 0
    checks = []
    for f in files:
        check = verify_spec(f, jobs=args.jobs)
        checks.append(check)
        print(format_check(check), flush=True)
    bad = [c.spec_file.name for c in checks if not c.ok]
    total = sum(len(c.runs) for c in checks)
    compared = sum(r.compared for c in checks for r in c.runs)
    print(
        f"\n{len(checks)} spec(s), {total} runs, {compared:,} values compared, {time.perf_counter() - t0:.1f} s: "
        + ("every number equals its reference" if not bad else f"differences in {', '.join(bad)}")
    )
    return 1 if bad else 0
