"""Drawing a report's PNG figures (a time-series run's traces; the others are drawn by the browser,
:mod:`clad.report.charts`): planned, kept by what they show, drawn in worker processes.

A figure is *planned* as a drawing function and its arguments (aggregated data: tables, heatmap
data), not drawn on the spot. Its *key* is a digest of the function, its arguments, the
resolution and the source of the report's plotting modules. ``figures/figures.json`` keeps the
key of every PNG of the last report: a planned figure whose file is there under the same key is
reused as it is, so a report after a few added runs redraws only the figures those runs touch.
The others are drawn in ``jobs`` worker processes (each writes its PNGs itself, atomically).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..atomic import atomic_output

__all__ = ["digest", "Planned", "draw_planned", "png_size", "part_names", "MANIFEST"]

log = logging.getLogger(__name__)

#: the file beside the PNGs that keeps each one's key
MANIFEST = "figures.json"
#: the modules whose source decides how a figure looks (a change in one redraws every figure)
_DRAWING_SOURCES = (
    "plots.py",
    "canvas.py",
    "layout.py",
    "figures.py",
    "cost.py",
    "drawing.py",
    "costquality.py",
    "timeseries.py",
)


def _feed(h, obj) -> None:
    """Feed ``obj`` to the hash ``h`` canonically (equal content, equal bytes)."""
    if obj is None or isinstance(obj, (bool, int, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, float):
        h.update(b"f" + struct.pack("<d", obj if obj == obj else float("nan")))
    elif isinstance(obj, np.generic):
        _feed(h, obj.item())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"nd{a.dtype.str}{a.shape};".encode())
        h.update(
            np.where(np.isnan(a), np.nan, a).tobytes()
            if a.dtype.kind == "f"
            else a.tobytes()
            if a.dtype.kind != "O"
            else repr(a.tolist()).encode()
        )
    elif isinstance(obj, pd.DataFrame):
        h.update(b"df")
        _feed(h, [str(c) for c in obj.columns])
        _feed(h, [str(t) for t in obj.dtypes])
        h.update(pd.util.hash_pandas_object(obj, index=True).to_numpy().tobytes())
    elif isinstance(obj, pd.Series):
        _feed(h, obj.to_frame())
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}{len(obj)}[".encode())
        for v in obj:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(f"dict{len(obj)}{{".encode())
        for k, v in obj.items():
            _feed(h, k)
            _feed(h, v)
        h.update(b"}")
    elif dataclasses.is_dataclass(obj):
        h.update(type(obj).__qualname__.encode())
        _feed(h, {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    elif callable(obj):
        h.update(f"{obj.__module__}.{obj.__qualname__};".encode())
    else:
        h.update(f"{type(obj).__qualname__}:{obj!r};".encode())


def digest(*objects) -> str:
    """A hex digest of ``objects``' content (tables, arrays, dataclasses, plain values).

    >>> digest(pd.DataFrame({"a": [1.0, float("nan")]})) == digest(pd.DataFrame({"a": [1.0, float("nan")]}))
    True
    >>> digest(np.array([1.0, 2.0])) == digest(np.array([1.0, 2.5]))
    False
    """
    h = hashlib.sha256()
    for obj in objects:
        _feed(h, obj)
    return h.hexdigest()


def _code_version() -> str:
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in _DRAWING_SOURCES:
        p = here / name
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


@dataclass
class Planned:
    """One drawing: ``draw(*args)`` returns, per stem of ``stems``, a list of figures (a figure too
    large for one PNG comes in parts): ``stem.png``, or ``stem__part1.png``, ``stem__part2.png`` …"""

    stems: tuple[str, ...]
    draw: Callable
    args: tuple
    key: str = ""


def part_names(stem: str, n: int) -> list[str]:
    """The file names of a stem drawn as ``n`` figures.

    >>> part_names("heatmap__d", 1), part_names("heatmap__d", 2)
    (['heatmap__d.png'], ['heatmap__d__part1.png', 'heatmap__d__part2.png'])
    """
    return [f"{stem}.png"] if n == 1 else [f"{stem}__part{k}.png" for k in range(1, n + 1)]


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) in pixels from a PNG's header, or None when the file is not a PNG."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def _draw_one(folder: str, dpi: int, job: Planned) -> dict[str, list[str]]:
    """Draw ``job`` and write its PNGs into ``folder`` (runs in a worker process); its files per stem."""
    from matplotlib import pyplot as plt

    from .canvas import figure_png

    groups = job.draw(*job.args)
    if len(groups) != len(job.stems):
        raise RuntimeError(
            f"{job.draw.__qualname__} drew {len(groups)} groups of figures for {len(job.stems)} stems"
        )
    out, seen = {}, []
    for stem, figures in zip(job.stems, groups):
        names = part_names(stem, len(figures))
        for name, fig in zip(names, figures):
            png = fig if isinstance(fig, bytes) else figure_png(fig, dpi=dpi)
            with atomic_output(Path(folder) / name) as tmp:
                tmp.write_bytes(png)
            if not isinstance(fig, bytes):
                seen.append(fig)
        out[stem] = names
    for fig in dict.fromkeys(seen):  # a reused figure appears once
        plt.close(fig)
    return out


#: fewest drawings per worker process before :func:`draw_planned` starts workers (fewer are drawn here)
MIN_PER_WORKER = 8


def draw_planned(
    folder: Path, dpi: int, planned: Sequence[Planned], jobs: int = 1
) -> tuple[int, int, dict[str, list[str]]]:
    """Draw every planned figure not already in ``folder`` under its key; return how many PNG
    files were drawn and reused, and the files of every stem. The manifest is rewritten with every
    planned stem's key and files."""
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        old = old.get("figures", {}) if isinstance(old, dict) else {}
    except (OSError, ValueError):
        old = {}
    version = _code_version()
    todo, files = [], {}
    reused = 0
    for job in planned:
        job.key = digest(version, dpi, job.draw, job.args)
        kept = [old.get(s) for s in job.stems]
        if all(
            isinstance(k, dict)
            and k.get("key") == job.key
            and k.get("files")
            and all((folder / n).is_file() for n in k["files"])
            for k in kept
        ):
            for stem, k in zip(job.stems, kept):
                files[stem] = list(k["files"])
                reused += len(k["files"])
        else:
            todo.append(job)
    drawn = 0
    if todo:
        # a worker process costs about a second of imports: worth it only for several drawings each
        jobs = max(1, min(int(jobs or 1), len(todo) // MIN_PER_WORKER))
        if jobs == 1:
            results = [_draw_one(str(folder), dpi, job) for job in todo]
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # a fresh worker, not a fork of this process: a fork carries the report's whole heap and, as
            # reference counts change, copies it page by page (a worker of a 20,000-run report grew to
            # twice the main process); a forkserver child starts from the drawing modules alone
            method = (
                "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            )
            context = multiprocessing.get_context(method)
            if method == "forkserver":
                context.set_forkserver_preload(
                    ["clad.report.timeseries", "clad.report.plots", "matplotlib.pyplot"]
                )
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                results = list(
                    pool.map(
                        _draw_one, [str(folder)] * len(todo), [dpi] * len(todo), todo, chunksize=1
                    )
                )
        for got in results:
            files.update(got)
            drawn += sum(len(v) for v in got.values())
    manifest = {s: {"key": j.key, "files": files[s]} for j in planned for s in j.stems}
    with atomic_output(manifest_path) as tmp:
        tmp.write_text(
            json.dumps({"figures": manifest}, indent=0, sort_keys=True), encoding="utf-8"
        )
    log.debug("figures: %d drawn, %d reused (%d workers)", drawn, reused, jobs)
    return drawn, reused, files


def prune(folder: Path, keep: set[str]) -> None:
    """Remove the figure files (PNGs, browser figures) of ``folder`` that this report did not produce
    (an earlier report's)."""
    for p in [*Path(folder).glob("*.png"), *Path(folder).glob("*.js")]:
        if p.name not in keep:
            try:
                p.unlink()
            except OSError:
                pass


def worker_count(jobs: int | None) -> int:
    """``jobs`` as a number of processes: None or 0 one, -1 every core."""
    if jobs is None or jobs == 0:
        return 1
    if jobs < 0:
        return os.cpu_count() or 1
    return int(jobs)
