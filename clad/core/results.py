"""Typed run results and the strict-JSON results file.

A :class:`RunResult` is frozen: R per base metric (rows = training steps, columns = test
concepts), the row and column labels, the continual metrics computed from R, timings, seed,
versions and the run's full configuration; ``extras`` holds what a strategy reports beyond R
(its optional ``extra_results(boundaries)`` hook, e.g. the drift report of ``drift_experts``). ``to_dict`` gives strict JSON (NaN -> ``null``), and
``from_dict(to_dict(r))`` gives back an equal result. This pair is the one mapping between a run
and stored data: ``results.json`` holds these records, and the results database
(:mod:`clad.engine.store`) lays the same records out in tables.

The results file ``results.json`` is ``{"clad_version": ..., "runs": [run, ...]}``; it is written
atomically (a temporary file renamed over the target), so a reader never sees half a file.
:func:`clad.engine.store.load_results` reads it back (``read_results`` is that function).
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable, Mapping

import numpy as np

from .._version import __version__
from ..atomic import atomic_output
from ..errors import DataError

__all__ = ["RunResult", "error_cause", "versions", "write_results", "read_results", "atomic_write_text", "to_jsonable"]

_PACKAGES = {"numpy": "numpy", "scikit-learn": "scikit-learn", "pyod": "pyod", "torch": "torch", "pandas": "pandas"}


def versions() -> dict[str, str | None]:
    """Versions of clad, Python and the libraries that decide the numbers (None if not installed).

    Read from package metadata, so torch is not imported just to learn its version; read once per
    process (a metadata look-up costs milliseconds, every run records it).
    """
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str | None], ...]:
    out: dict[str, str | None] = {"clad": __version__, "python": platform.python_version()}
    for key, dist in _PACKAGES.items():
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = None
    return tuple(out.items())


def to_jsonable(obj: Any) -> Any:
    """Numpy arrays/scalars to lists/numbers, NaN and infinities to None, recursively."""
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return obj


def _matrix(rows) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=np.float64)


def _metric_values(d: Mapping) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out[k] = dict(v)
        elif isinstance(v, list):
            out[k] = [float("nan") if x is None else x for x in v]
        else:
            out[k] = float("nan") if v is None else v
    return out


def _prequential(d: Mapping | None) -> dict | None:
    if not d:
        return None
    nan = float("nan")
    return {**d, **{kind: {m: [nan if v is None else v for v in vals] for m, vals in d[kind].items()}
                    for kind in ("cumulative", "windowed")}}


@dataclass(frozen=True, eq=False)
class RunResult:
    """One run: configuration, R per base metric, continual metrics, timings and provenance."""

    dataset: str
    scenario: str
    strategy: str
    detector: str
    seed: int
    concepts: tuple[str, ...] = ()
    test_concepts: tuple[str, ...] = ()
    R: Mapping[str, np.ndarray] = field(default_factory=dict)
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    timings: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str | None] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    memory_rows: tuple[int, ...] = ()
    anytime: Mapping[str, Any] | None = None
    extras: Mapping[str, Any] | None = None
    learned_rows: tuple[Mapping[str, int] | None, ...] | None = None
    prequential: Mapping[str, Any] | None = None
    order: str | None = None
    status: str = "ok"
    error: str | None = None
    run_id: str | None = None
    warnings: tuple[str, ...] = ()
    #: the run_id of the run that computed this result, when this configuration is the same
    #: computation (see :mod:`clad.engine.identity`); None when it was computed for itself
    shared_from: str | None = None
    #: fingerprints of what the run read: ``{"data file PATH": sha256, "code MODULE": hash or
    #: version}`` (a changed one makes a finished run stale, see :mod:`clad.engine.identity`)
    inputs: Mapping[str, str] = field(default_factory=dict)
    #: the peak memory of the run in bytes: how far the process's resident set size rose above its
    #: value when the run began (see :mod:`clad.core.memory`); None when not measured
    peak_memory: int | None = None
    #: per base metric, the chance level of each test concept (in ``test_concepts`` order): what a
    #: scoreless detector gets there (:func:`clad.metrics.base.chance_level`); None when not recorded
    chance: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def cause(self) -> str | None:
        r"""Why a failed run failed: the message of the exception that ended it (every line of it,
        which for a missing data file names the file, where clad looked, its sha256 and source),
        without the traceback's frames; None for a run that did not fail.

        >>> RunResult("d", "s", "st", "det", 0, status="failed", error=(
        ...     "Traceback (most recent call last):\n  File \"x.py\", line 1, in fit\n    raise E\n"
        ...     "DataError: data file 'a.npz' not found; looked in:\n  /data/a.npz\n")).cause
        "DataError: data file 'a.npz' not found; looked in:\n  /data/a.npz"
        """
        if self.ok:
            return None
        return error_cause(self.error)

    def to_dict(self) -> dict:
        d = {
            "run_id": self.run_id,
            "status": self.status,
            "dataset": self.dataset,
            "scenario": self.scenario,
            "strategy": self.strategy,
            "detector": self.detector,
            "seed": self.seed,
            "concepts": list(self.concepts),
            "test_concepts": list(self.test_concepts),
            "R": {m: np.asarray(r) for m, r in self.R.items()},
            "metrics": self.metrics,
            "timings": self.timings,
            "memory_rows": list(self.memory_rows),
            "anytime": self.anytime,
            "extras": self.extras,
            "learned_rows": None if self.learned_rows is None else list(self.learned_rows),
            "prequential": self.prequential,
            "order": self.order,
            "versions": dict(self.versions),
            "config": self.config,
            "error": self.error,
            "warnings": list(self.warnings),
            "shared_from": self.shared_from,
            "inputs": dict(self.inputs),
            "peak_memory": self.peak_memory,
            "chance": None if self.chance is None else {m: list(v) for m, v in self.chance.items()},
        }
        return to_jsonable(d)

    @classmethod
    def from_dict(cls, d: Mapping) -> "RunResult":
        if not isinstance(d, Mapping):
            raise DataError(f"run record must be a JSON object, got {type(d).__name__} {str(d)[:40]!r}")
        try:
            anytime = d.get("anytime")
            if anytime:
                anytime = {**anytime, "rows_seen": list(anytime["rows_seen"]),
                           "R": {m: _matrix(r) for m, r in anytime["R"].items()}}
            return cls(
                dataset=d["dataset"],
                scenario=d["scenario"],
                strategy=d["strategy"],
                detector=d["detector"],
                seed=int(d["seed"]),
                concepts=tuple(d.get("concepts", ())),
                test_concepts=tuple(d.get("test_concepts", ())),
                R={m: _matrix(r) for m, r in d.get("R", {}).items()},
                metrics={m: _metric_values(v) for m, v in d.get("metrics", {}).items()},
                timings=dict(d.get("timings", {})),
                versions=dict(d.get("versions", {})),
                config=dict(d.get("config", {})),
                memory_rows=tuple(d.get("memory_rows", ())),
                anytime=anytime,
                extras=d.get("extras"),
                learned_rows=None if d.get("learned_rows") is None else tuple(d["learned_rows"]),
                prequential=_prequential(d.get("prequential")),
                order=d.get("order"),
                status=d.get("status", "ok"),
                error=d.get("error"),
                run_id=d.get("run_id"),
                warnings=tuple(str(w) for w in d.get("warnings") or ()),
                shared_from=d.get("shared_from"),
                inputs=dict(d.get("inputs") or {}),
                peak_memory=None if d.get("peak_memory") is None else int(d["peak_memory"]),
                chance=None if not d.get("chance") else {m: [float("nan") if v is None else float(v) for v in vals]
                                                         for m, vals in d["chance"].items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"run record is not a clad result ({type(exc).__name__}: {exc})") from None


def error_cause(error: str | None) -> str:
    """The exception part of a formatted traceback: from the first line after the frames of the
    last ``Traceback (most recent call last):`` block to the end (a message of several lines stays
    whole); text that is not a traceback is returned stripped."""
    text = (error or "").strip()
    if not text:
        return "unknown error"
    marker = "Traceback (most recent call last):"
    if marker not in text:
        return text
    lines = text.rsplit(marker, 1)[1].splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line[0].isspace():
            return "\n".join(lines[i:]).strip()
    return lines[-1].strip() if lines else text


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`clad.atomic.atomic_output`)."""
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_results(path: str | os.PathLike, runs: Iterable[RunResult], spec: Mapping | None = None,
                  references: Iterable[RunResult] = ()) -> None:
    """Write ``results.json``: strict JSON (``allow_nan=False``), atomically; the reference runs of
    a spec with ``references`` (:mod:`clad.engine.references`), if any, under ``"references"``."""
    doc = {"clad_version": __version__, "spec": to_jsonable(spec or {}), "runs": [r.to_dict() for r in runs]}
    references = [r.to_dict() for r in references]
    if references:
        doc["references"] = references
    atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False))


def read_results(path: str | os.PathLike) -> list[RunResult]:
    """The runs of a ``results.json`` written by :func:`write_results` (or of any results folder or
    database): :func:`clad.engine.store.load_results`, the one reader of results."""
    from ..engine.store import load_results

    return load_results(path)
