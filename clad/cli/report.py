"""``clad report``: the figures, tables and statistics of a results folder; its options become
:func:`clad.report.make_report`'s arguments in one place (:func:`_report`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from ..defaults import DEFAULT_METRIC
from .console import EXIT_WRITE_FAILED

__all__ = ["add_parser", "command"]

log = logging.getLogger("clad")


def command(args) -> int:
    """Write the report of the results folder ``args.dir``; what it holds, and notes on its warnings."""
    import gc

    from ..report.load import report_runs

    results = report_runs(args.dir)
    gc.freeze()  # the runs live while the report is made: out of the collector's way (each collection scanned them)
    try:
        return _report(args, results)
    finally:
        gc.unfreeze()


def _report(args, results) -> int:
    """The one call of :func:`~clad.report.make_report`, with the command line's options, and what
    the console says of it."""
    import warnings

    from ..report import load_spec_record, load_spec_text, make_report
    from ..results import load_references

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
            )
        except OSError as exc:  # a read-only or full disk, or --out naming a file
            where = exc.filename or out
            print(
                f"clad: error: cannot write the report in {str(out)!r}: {where}: {exc.strerror or exc}; "
                "give a writable folder with --out",
                file=sys.stderr,
            )
            return EXIT_WRITE_FAILED
    from ..report.stats import StatisticsWarning

    expected = [w for w in caught if issubclass(w.category, StatisticsWarning)]
    for line in grouped_warnings(
        [w for w in caught if not issubclass(w.category, StatisticsWarning)]
    ):
        log.warning("%s", line)
    if expected:  # what the evidence allows is a fact about the grid, said in one short note
        print(statistics_note(expected, out / "statistics.html"))
    print(
        f"report: {report.index} ({len(report.pages)} pages; {len(report.figures):,} figures, {report.drawn:,} drawn, "
        f"{report.reused:,} kept from the last report; tables: "
        f"{', '.join(str(p.name) for p in report.tables.values())})"
    )
    return 0


def statistics_note(caught, page) -> str:
    """One short line for the statistics' caveats (one block, too few blocks, ...): each kind once,
    how many comparisons it concerns, and the page that explains them.

    >>> from types import SimpleNamespace as W
    >>> print(statistics_note([W(message="detectors by CA: one independent block (dataset: d): no test"),
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


def grouped_warnings(caught) -> list[str]:
    """The report's warnings, each said once: warnings that differ only in what they are about (the
    text before the first ': ', e.g. "detectors by continual_average") are one line naming how many
    comparisons they concern.

    >>> from types import SimpleNamespace as W
    >>> grouped_warnings([W(message="a by x: one block"), W(message="b by x: one block"), W(message="other")])
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


def add_parser(sub) -> None:
    """Declare ``clad report`` and its options."""
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
    rp.set_defaults(func=command)
