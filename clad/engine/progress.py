"""Progress of a grid: a tqdm bar on a terminal, plain log lines otherwise.

The bar counts runs (finished and failed together, with elapsed time and estimated time left);
its postfix shows how many are done, failed and remaining, and the current run's concept step
(sequential runs report each step; worker runs report per run).
"""

from __future__ import annotations

import logging
import sys

from ..core.results import RunResult
from .run import RunConfig

__all__ = ["Progress", "ProgressEvents"]

log = logging.getLogger("clad.engine.progress")


class Progress:
    """Follow ``total`` runs, of which ``already`` were finished before this invocation (a resumed grid)."""

    def __init__(self, total: int, already: int = 0, desc: str = "runs", bar: bool | None = None):
        self.total = int(total)
        self.done = int(already)
        self.failed = 0
        self.desc = desc
        self._current = ""
        self._running = 0
        if bar is None:
            bar = sys.stderr.isatty()
        self._bar = None
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, initial=self.done, unit="run", desc=desc, file=sys.stderr,
                             dynamic_ncols=True)
        self._refresh()

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    def _refresh(self, now: bool = True) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(f"done {self.done}, failed {self.failed}, left {self.remaining}"
                                      + (f" | {self._current}" if self._current else ""), refresh=now)

    def started(self, cfg: RunConfig) -> None:
        self._running += 1
        self._current = cfg.describe()[:70] if self._running == 1 else f"{self._running} running"
        self._refresh()

    def step(self, cfg: RunConfig, step: str, index: int) -> None:
        self._current = f"{cfg.describe()[:60]} step {index + 1} ({step})"
        self._refresh()

    def finished(self, result: RunResult, cfg: RunConfig) -> None:
        self._running = max(0, self._running - 1)
        if result.ok:
            self.done += 1
        else:
            self.failed += 1
        n = self.done + self.failed
        if self._bar is not None:
            self._current = f"{self._running} running" if self._running > 1 else ""
            self._refresh(now=False)
            self._bar.update(1)
            if not result.ok:
                self._bar.write(f"run failed: {cfg.describe()}: {_last_line(result.error)}", file=sys.stderr)
        elif result.ok:
            log.info("run %d/%d done (%.1fs): %s", n, self.total, float(result.timings.get("total", 0.0)),
                     cfg.describe())
        else:
            log.warning("run %d/%d FAILED: %s: %s", n, self.total, cfg.describe(), _last_line(result.error))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class ProgressEvents:
    """An ``on_event`` consumer for :func:`clad.engine.benchmark.run_spec`: a :class:`Progress`
    from the grid's start to its end (``bar`` as in :class:`Progress`)."""

    def __init__(self, bar: bool | None = None):
        self.bar = bar
        self.progress: Progress | None = None

    def __call__(self, event) -> None:
        if event.kind == "grid_started":
            self.progress = Progress(event.total, already=event.finished_before, desc=event.name, bar=self.bar)
        elif self.progress is None:
            return
        elif event.kind == "started":
            self.progress.started(event.config)
        elif event.kind == "step":
            self.progress.step(event.config, event.step, event.index)
        elif event.kind == "finished":
            self.progress.finished(event.result, event.config)
        elif event.kind == "grid_finished":
            self.progress.close()


def _last_line(text: str | None) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "unknown error"
