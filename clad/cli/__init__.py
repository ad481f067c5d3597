"""The ``clad`` command line: ``clad --help`` lists the commands, ``clad COMMAND --help`` their
options and exit statuses (the parser is their one description).

One module per command group declares its commands' arguments and runs them: :mod:`~clad.cli.run`,
:mod:`~clad.cli.report`, :mod:`~clad.cli.export` (export, pull, verify-bundle, leaderboard),
:mod:`~clad.cli.catalog` (check, list, version), :mod:`~clad.cli.datasets` and
:mod:`~clad.cli.validate` (validate, verify); what they share is in :mod:`~clad.cli.console`.
Building the parser imports no numpy, pandas, scikit-learn or torch: a command imports the library
when it runs. The library layers never print; the commands do.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import logging
import os
import sys

from .._version import __version__
from ..errors import CladError
from . import catalog, datasets, export, report, run, validate
from .console import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    EXIT_WRITE_FAILED,
    CommandParser,
    Terminated,
    safe_console,
    sigterm_as_interrupt,
    terminal_safe,
)

__all__ = ["main", "build_parser", "terminal_safe"]

#: the commands in the order ``clad --help`` lists them, each declared by its module
COMMANDS = (
    run.add_parser,
    export.add_export,
    export.add_pull,
    export.add_verify_bundle,
    export.add_leaderboard,
    report.add_parser,
    datasets.add_parser,
    catalog.add_check,
    validate.add_validate,
    validate.add_verify,
    catalog.add_list,
    catalog.add_version,
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (a command's own arguments may be declared when it is parsed).

    >>> build_parser().parse_args(["run", "grid.toml", "--jobs", "2"]).jobs
    2
    """
    p = argparse.ArgumentParser(
        prog="clad", description="Benchmarks for continual anomaly detection."
    )
    p.add_argument("--version", action="version", version=f"clad {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=CommandParser)
    for declare in COMMANDS:
        declare(sub)
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
    if args.command in ("check", "list"):
        extra.append(os.getcwd())
    for folder in extra:
        if folder not in sys.path:
            sys.path.append(folder)


_exit_hook: list = []  # whether gc.freeze is registered to run at interpreter exit


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (default: the process's arguments); its exit status."""
    # at interpreter exit only (a caller in a longer-lived process is untouched), every object moves
    # to the garbage collector's permanent generation: the interpreter's last collections then skip
    # the heap of the libraries a command imported (scikit-learn, SciPy, pandas, PyOD: a third of a
    # second of CPU at the end of every ``clad run``)
    if not _exit_hook:
        atexit.register(gc.freeze)
        _exit_hook.append(True)
    with safe_console():
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _plugin_path(args)
    logging.basicConfig(
        level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO,
        format="%(levelname)s %(message)s",
        stream=sys.stderr,
    )
    # plain progress lines, even with --quiet
    logging.getLogger("clad.engine.progress").setLevel(logging.INFO)
    try:
        with sigterm_as_interrupt() as args.signals:
            return int(args.func(args) or 0)
    except CladError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the output went to a command that stopped reading (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        from ..results.store import DestinationError

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
