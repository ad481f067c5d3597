"""What the section builders of a report's pages share: the runs, the options, the figures and
the report being written (:class:`Page`), and how a page writes a file or boxes a long table."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ..defaults import DEFAULT_METRIC
from ..atomic import atomic_output
from ..results.record import RunResult
from .figures import FigureStore


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write through a temporary file and a rename (readable by all, like a page meant to be shared)."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


@dataclass
class Page:
    """What the section builders of :func:`make_report` share: the runs, the options, the figures,
    the report being written and the caveats gathered for the banner at the top."""

    results: list
    ok: list
    shown: list  # the finished runs, a shared configuration once (merge_shared)
    lb: pd.DataFrame
    chance: pd.DataFrame
    figs: FigureStore
    report: Any  # the Report being written (clad.report.make)
    out: Path
    by: Sequence[str]
    stat_metrics: Sequence[str]
    blocks: Sequence[str]
    alpha: float
    spec: Mapping | None
    spec_text: str | None
    references: Sequence[RunResult]
    caveats: list = field(default_factory=list)
    latex_columns: Sequence[str] | None = None
    prefix: str = ""  # from the page being built to the report folder
    headline_metric: str = DEFAULT_METRIC

    def write(self, name: str, data: str | pd.DataFrame, key: str | None = None) -> None:
        """Write the file ``name`` of the report folder (a table as CSV) and list it among the
        report's tables as ``key`` (by default its name without the suffix)."""
        path = self.out / name
        atomic_write(path, data.to_csv(index=False) if isinstance(data, pd.DataFrame) else data)
        self.report.tables[key or path.stem] = path


#: most leaderboard rows the first page holds as the compact leaderboard (beyond, the block pages hold it)
FIRST_PAGE_ROWS = 120


#: most rows a table shows at its full height (beyond, it scrolls in a box: the page keeps its height)
SCROLL_ROWS = 40


def scrolled(html_text: str, rows: int) -> str:
    """``html_text`` in a scrolling box when its tables hold more than :data:`SCROLL_ROWS` rows."""
    return f"<div class='scroll'>{html_text}</div>" if rows > SCROLL_ROWS else html_text
