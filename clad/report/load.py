"""Reading a results folder: ``DIR/results.sqlite`` when it is there, else ``DIR/results.json``.

:func:`load_spec_record` reads the spec recorded beside the runs, from the file
:func:`clad.results.reading.load_results` (the one reader of results) reads them from.
"""

from __future__ import annotations

import gc
import os
import sys

import dataclasses
import json
from collections.abc import Mapping
from typing import Iterable

import numpy as np

from ..results.record import RunResult
from ..results.reading import StoreReader, iter_results, read_document, results_source
from ..errors import DataError

__all__ = ["load_spec_record", "load_spec_text", "report_runs"]


class Scalars(Mapping):
    """A read-only ``{metric: value}`` of one run and base metric held as one array (the names
    shared by every run): a tenth of the memory of a dict of floats. ``None`` stays ``None``.

    >>> s = Scalars.of({"continual_average": 0.75, "forward_transfer": None}, {})
    >>> s["continual_average"], s.get("forward_transfer"), s.get("other", 1), len(s)
    (0.75, None, 1, 2)
    """

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict, values: np.ndarray):
        self._names, self._values = names, values

    @classmethod
    def of(cls, values: Mapping, shared: dict) -> "Scalars":
        names = tuple(values)
        index = shared.setdefault(("scalars", names), {n: i for i, n in enumerate(names)})
        return cls(index, np.array([np.nan if v is None else float(v) for v in values.values()]))

    def __getitem__(self, key):
        v = float(self._values[self._names[key]])
        return None if v != v else v

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def take(self, names) -> np.ndarray:
        """The values of ``names`` as one array: NaN for a name not held, or held as None.

        >>> Scalars.of({"a": 0.5, "b": None}, {}).take(["b", "a", "c"]).tolist()
        [nan, 0.5, nan]
        """
        idx = np.array([self._names.get(n, -1) for n in names], dtype=np.intp)
        out = np.full(len(idx), np.nan)
        held = idx >= 0
        out[held] = self._values[idx[held]]
        return out


def _slim(r: RunResult, shared: dict) -> RunResult:
    """``r`` with only what a report reads: the scalar metrics (every metric when the run has
    anytime or prequential curves, which read theirs), the dataset's part of the configuration and
    the detector's registered name (which tells a baseline);
    equal configurations, versions and labels held once (``shared``), the input fingerprints and the
    rows learned per step (no page shows them) dropped."""

    def once(value):
        key = json.dumps(value, sort_keys=True, default=str)
        return shared.setdefault(key, value)

    metrics = r.metrics
    if r.anytime is None and r.prequential is None:
        metrics = {
            b: Scalars.of(
                {k: v for k, v in m.items() if v is None or isinstance(v, (int, float))}, shared
            )
            for b, m in r.metrics.items()
        }
    config = {
        k: v
        for k, v in r.config.items()
        if "dataset" in k or k in ("metadata", "checksums", "sha256", "reference", "base_metrics")
    }
    # baselines are known by name
    if isinstance(r.config.get("detector"), dict) and "name" in r.config["detector"]:
        config["detector"] = {"name": r.config["detector"]["name"]}
    config = once(config)
    chance = r.chance if r.chance is None else once(r.chance)
    labels = {
        k: sys.intern(v)
        for k in ("status", "dataset", "scenario", "strategy", "detector")
        if isinstance(v := getattr(r, k), str)
    }
    return dataclasses.replace(
        r,
        **labels,
        metrics=metrics,
        config=config,
        versions=once(dict(r.versions)),
        inputs={},
        learned_rows=None,
        timings=_slim_timings(r, once),
        threshold=_slim_threshold(r.threshold, once),
        chance=chance,
        concepts=once(tuple(r.concepts)),
        test_concepts=once(tuple(r.test_concepts)),
        memory_rows=once(tuple(r.memory_rows)),
    )


def _slim_timings(r: RunResult, once):
    """A run's timings with the seconds of each step (``fit``, ``score``) reduced to their mean, the
    one number a report shows of them (:data:`clad.report.cost.COST`: the mean of one value is that
    value, so every table and figure is unchanged); ``total`` and ``work`` kept."""
    from .cost import cost_value

    timings = r.timings
    if not isinstance(timings, dict) or not any(
        isinstance(timings.get(k), (list, tuple)) for k in ("fit", "score")
    ):
        return timings
    out = dict(timings)
    if isinstance(timings.get("work"), dict):
        out["work"] = once(timings["work"])  # runs that did the same work hold one record of it
    for key, cost in (("fit", "fit_seconds"), ("score", "score_seconds")):
        if isinstance(timings.get(key), (list, tuple)):
            mean = cost_value(r, cost)
            out[key] = [mean] if mean == mean else []
    return out


def _slim_threshold(threshold, once):
    """A run's threshold record with what a report reads of it (:mod:`clad.report.thresholds`: the
    policy, held once, and the realised false-positive rates); the thresholds themselves dropped."""
    if not isinstance(threshold, dict):
        return threshold
    # the rates as one array, not a list of lists of floats (a fifth of the memory)
    return {
        k: once(v) if k == "policy" else _frozen(v)
        for k, v in threshold.items()
        if k in ("policy", "realised_fpr")
    }


def _frozen(rows):
    """``rows`` (a list of lists of numbers, None for no value) as a read-only float array, or as
    they are when they are not a matrix."""
    try:
        a = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=np.float64)
    except (TypeError, ValueError):
        return rows
    if a.ndim != 2:
        return rows
    a.flags.writeable = False
    return a


def report_runs(directory: str | os.PathLike) -> list[RunResult]:
    """The runs of a results folder as a report needs them, read from the database in a stream
    (:func:`clad.results.reading.iter_results`) and kept slim (:func:`_slim`): the report of a
    20,000-run folder holds what it shows, not every field of every run."""
    shared: dict = {}
    runs: Iterable[RunResult] = iter_results(directory)
    # the cyclic garbage collector paused while the runs are read: reading allocates hundreds of
    # thousands of objects that all stay alive, and each collection they would trigger scans them
    # again (what is dropped meanwhile is freed by reference counting, any cycle by the next collection)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return [_slim(r, shared) for r in runs]
    finally:
        if collecting:
            gc.enable()


def load_spec_record(directory: str | os.PathLike) -> dict | None:
    """The spec recorded with the results (from the same file
    :func:`~clad.results.reading.load_results` reads), or None.

    >>> import tempfile
    >>> from clad.results import write_results
    >>> d = tempfile.mkdtemp()
    >>> write_results(f"{d}/results.json", [], spec={"name": "toy"})
    >>> load_spec_record(d)
    {'name': 'toy'}
    """
    try:
        source = results_source(directory)
        if source.suffix == ".sqlite":
            with StoreReader(source) as store:
                spec = store.get_meta("spec")
        else:
            spec = read_document(source).get("spec")
    except DataError:
        return None
    return spec if isinstance(spec, dict) and spec else None


def load_spec_text(directory: str | os.PathLike) -> str | None:
    """The spec file's text as the user wrote it (stored by ``clad run`` in the database's meta
    table as ``spec_text``), or None when it was not stored (older results, a JSON file only)."""
    try:
        source = results_source(directory)
        if source.suffix != ".sqlite":
            return None
        with StoreReader(source) as store:
            text = store.get_meta("spec_text")
    except DataError:
        return None
    return text if isinstance(text, str) and text.strip() else None
