"""Progress of a grid: a tqdm bar on a terminal, plain log lines otherwise (what each shows:
docs/guides/console.md, "Progress").

Under ``--jobs`` the bar shows every running run's label and step, from the workers through a
queue. While the bar is shown, clad's log lines go through tqdm
(:func:`tqdm.contrib.logging.logging_redirect_tqdm`), so they never break it; warnings raised
inside a run are recorded in that run's result (``RunResult.warnings``), counted here, and not
printed. A failed run's cause (:attr:`RunResult.cause`) is printed when it happens;
:func:`format_failures` groups every failure of a grid by cause for the end of the command's
output.
"""

from __future__ import annotations

import logging
import shutil
import sys
import textwrap
import threading
import time
from contextlib import ExitStack
from typing import Iterable

from ..results.record import RunResult
from .config import RunConfig

__all__ = ["Progress", "ProgressEvents", "format_failures", "format_warnings", "shorten"]

log = logging.getLogger("clad.engine.progress")

#: the bar's own width in characters: fixed, so a long label never collapses it
BAR_WIDTH = 16
#: the width used when the terminal reports none (0 columns, e.g. some CI consoles)
FALLBACK_COLUMNS = 80
#: without a terminal, a progress line at least this often (seconds), however long a run takes
HEARTBEAT_SECONDS = 60.0
_BAR_FORMAT = (
    "{desc}: {percentage:3.0f}%|{bar:"
    + str(BAR_WIDTH)
    + "}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]{postfix}"
)


def shorten(text: str, width: int) -> str:
    """``text`` cut at a word boundary to at most ``width`` characters, ending in ``…`` when cut
    ('' when not even one word fits).

    >>> shorten("adbench-classical / concept_incremental / replay / iforest / seed 3", 42)
    'adbench-classical / concept_incremental …'
    >>> shorten("short", 40), shorten("unbreakable_long_name", 5)
    ('short', '')
    """
    if len(text) <= width:
        return text
    kept = ""
    for word in text.split(" "):  # spaces only: a hyphenated or dotted name is one word
        longer = f"{kept} {word}" if kept else word
        if len(longer) + 2 > width:
            break
        kept = longer
    return f"{kept} …" if kept else ""


def _columns() -> int:
    cols = shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns
    return cols if cols > 0 else FALLBACK_COLUMNS


def _indent(text: str, prefix: str = "    ") -> str:
    return textwrap.indent(text, prefix)


class Progress:
    """Follow ``total`` runs, of which ``already`` were finished before this invocation (a resumed grid)."""

    def __init__(
        self,
        total: int,
        already: int = 0,
        desc: str = "runs",
        bar: bool | None = None,
        elapsed: float = 0.0,
        flagged: int = 0,
    ):
        self.total = int(total)
        self.done = int(already)
        self.failed = 0
        # runs that recorded warnings (those of earlier invocations too)
        self.flagged = int(flagged)
        self._number: dict[str, int] = {}  # run_id -> its number in the log
        self.desc = desc
        self._current = ""
        self._running = 0
        self._active: dict[str, str] = {}  # run_id -> label (and step) of each running run
        if bar is None:
            bar = sys.stderr.isatty()
        self._bar = None
        self._stack = ExitStack()
        if bar:
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            self._bar = tqdm(
                total=self.total,
                initial=self.done,
                unit="run",
                desc=shorten(desc, 30) or "runs",
                file=sys.stderr,
                ncols=_columns(),
                bar_format=_BAR_FORMAT,
            )
            if elapsed > 0:  # a resumed grid: its clock and rate go on from the earlier invocations
                self._bar.start_t -= elapsed
                self._bar.initial = 0
            self._stack.enter_context(
                logging_redirect_tqdm(loggers=[logging.getLogger("clad")], tqdm_class=tqdm)
            )
        else:  # no terminal: a line now and then, so a log shows the grid is alive between runs
            self._started_at = time.monotonic()
            self._stop = threading.Event()
            beat = threading.Thread(target=self._heartbeat, name="clad-progress", daemon=True)
            beat.start()
            self._stack.callback(self._stop.set)
        self._refresh()

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            running = "; ".join(list(self._active.values())[:3])
            log.info(
                "still running after %.0f s: %d of %d runs done%s%s",
                time.monotonic() - self._started_at,
                self.done + self.failed,
                self.total,
                f", {self.failed} failed" if self.failed else "",
                f"; now: {running}" if running else "",
            )

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    def _counts(self) -> str:
        parts = [
            f"failed {self.failed}" if self.failed else "",
            f"warnings {self.flagged}" if self.flagged else "",
        ]
        return ", ".join(p for p in parts if p)

    def _refresh(self, now: bool = True) -> None:
        if self._bar is None:
            return
        bar = self._bar
        bar.ncols = _columns()  # follows a resized terminal; 0 columns is drawn 80 wide
        counts = self._counts()
        meter = bar.format_meter(**{**bar.format_dict, "postfix": counts})
        label = shorten(self._current, bar.ncols - len(meter) - 4)
        bar.set_postfix_str(" | ".join(p for p in (counts, label) if p), refresh=now)

    def _show_active(self) -> None:
        """The label: every running run with its concept step (one run: its whole label)."""
        self._current = " | ".join(self._active.values())

    def started(self, cfg: RunConfig) -> None:
        self._running += 1
        self._active[cfg.run_id] = cfg.describe()
        self._show_active()
        self._refresh()

    def step(self, cfg: RunConfig, step: str, index: int) -> None:
        self._active[cfg.run_id] = f"{cfg.describe()} step {index + 1} ({step})"
        self._show_active()
        self._refresh()

    def _count(self, result: RunResult) -> int:
        """Count a run that ended; its number in the log."""
        if result.ok:
            self.done += 1
        else:
            self.failed += 1
        n = self.done + self.failed
        if result.run_id:
            self._number[result.run_id] = n
        return n

    def finished(self, result: RunResult, cfg: RunConfig) -> None:
        self._running = max(0, self._running - 1)
        if result.warnings:
            self.flagged += 1
        n = self._count(result)
        self._active.pop(cfg.run_id, None)
        if self._bar is not None:
            self._show_active()
            self._refresh(now=False)
            self._bar.update(1)
            if not result.ok:
                self._bar.write(
                    f"run failed: {cfg.describe()}\n{_indent(result.cause)}", file=sys.stderr
                )
        elif result.ok:
            extra = f", {len(result.warnings)} warning(s)" if result.warnings else ""
            log.info(
                "run %d/%d done (%.1fs%s): %s",
                n,
                self.total,
                float(result.timings.get("total", 0.0)),
                extra,
                cfg.describe(),
            )
        else:
            log.warning(
                "run %d/%d FAILED: %s:\n%s", n, self.total, cfg.describe(), _indent(result.cause)
            )

    def shared(self, result: RunResult, cfg: RunConfig) -> None:
        """A run recorded as the same computation as ``result.shared_from``: counted and logged,
        with the number of the run that computed it."""
        n = self._count(result)
        source = self._number.get(result.shared_from or "")
        same = f"same computation as {f'run {source}' if source else result.shared_from}"
        if self._bar is not None:
            self._refresh(now=False)
            self._bar.update(1)
        elif result.ok:
            log.info("run %d/%d done (%s): %s", n, self.total, same, cfg.describe())
        else:
            log.warning("run %d/%d FAILED (%s): %s", n, self.total, same, cfg.describe())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._stack.close()


class ProgressEvents:
    """An ``on_event`` consumer for :func:`clad.engine.benchmark.run_spec`: a :class:`Progress`
    from the grid's start to its end (``bar`` as in :class:`Progress`)."""

    def __init__(self, bar: bool | None = None):
        self.bar = bar
        self.progress: Progress | None = None

    def __call__(self, event) -> None:
        if event.kind == "grid_started":
            self.progress = Progress(
                event.total,
                already=event.finished_before,
                desc=event.name,
                bar=self.bar,
                elapsed=getattr(event, "elapsed_before", 0.0),
                flagged=getattr(event, "flagged_before", 0),
            )
        elif self.progress is None:
            return
        elif event.kind == "started":
            self.progress.started(event.config)
        elif event.kind == "step":
            self.progress.step(event.config, event.step, event.index)
        elif event.kind == "finished":
            self.progress.finished(event.result, event.config)
        elif event.kind == "shared":
            self.progress.shared(event.result, event.config)
        elif event.kind == "grid_finished":
            self.progress.close()


def run_label(run: RunResult) -> str:
    """``dataset / scenario / strategy / detector / seed N`` of a run (as ``RunConfig.describe``)."""
    return f"{run.dataset} / {run.scenario} / {run.strategy} / {run.detector} / seed {run.seed}"


def _grouped(runs: Iterable[RunResult], key) -> dict[str, list[RunResult]]:
    groups: dict[str, list[RunResult]] = {}
    for r in runs:
        for k in key(r):
            groups.setdefault(k, []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def _table(title: str, groups: dict[str, list[RunResult]], shown: int) -> str:
    lines = [title]
    for what, members in groups.items():
        lines.append(f"  {len(members)} run{'s' if len(members) > 1 else ''}:")
        lines.append(_indent(what, "      "))
        lines += [f"    - {run_label(r)}" for r in members[:shown]]
        if len(members) > shown:
            lines.append(f"    - ... and {len(members) - shown} more")
    return "\n".join(lines)


def format_failures(runs: Iterable[RunResult], shown: int = 5) -> str:
    """One table of the failed runs grouped by cause (most frequent first; causes that differ only
    in their numbers, such as a seed in a message, are one), each cause in full with its count and
    up to ``shown`` of its runs; '' when none failed.

    >>> from clad.results.record import RunResult
    >>> bad = [RunResult("d", "s", "naive", "x", seed, status="failed", error="ValueError: nu=2.0")
    ...        for seed in (0, 1)]
    >>> print(format_failures(bad))
    Failed runs by cause (2 failed):
      2 runs:
          ValueError: nu=2.0
        - d / s / naive / x / seed 0
        - d / s / naive / x / seed 1
    """
    failed = [r for r in runs if not r.ok]
    if not failed:
        return ""
    from ..report.wording import warning_template

    # causes that differ only in numbers: one
    groups = _grouped(failed, lambda r: [warning_template(r.cause)])
    shown_groups = {}
    for members in groups.values():
        causes = list(dict.fromkeys(r.cause for r in members))
        what = causes[0] + (
            f"\n(and {len(causes) - 1} more cause{'s' if len(causes) > 2 else ''} that differ "
            "only in their numbers)"
            if len(causes) > 1
            else ""
        )
        shown_groups[what] = members
    return _table(f"Failed runs by cause ({len(failed)} failed):", shown_groups, shown)


def format_warnings(runs: Iterable[RunResult], shown: int = 3) -> str:
    """The runs that recorded warnings, grouped by warning (most frequent first); '' when none did."""
    flagged = [r for r in runs if r.warnings]
    if not flagged:
        return ""
    n = sum(len(r.warnings) for r in flagged)
    title = (
        f"{len(flagged)} run{'s' if len(flagged) > 1 else ''} recorded {n} warning{'s' if n > 1 else ''} "
        "(listed in results.json, field 'warnings', and in the report):"
    )
    return _table(title, _grouped(flagged, lambda r: sorted(set(r.warnings))), shown)
