"""The run record: typed run results and the strict-JSON results file.

A :class:`RunResult` is frozen: R per base metric (rows = training steps, columns = test concepts),
the row and column labels, the continual metrics computed from R, timings, seed, versions and the
run's full configuration; ``extras`` holds what a strategy reports beyond R (its optional
``extra_results(boundaries)`` hook, e.g. the drift report of ``drift_experts``). ``to_dict`` gives
strict JSON (NaN -> ``null``), and ``from_dict(to_dict(r))`` gives back an equal result. This pair
is the one mapping between a run and stored data: ``results.json`` (``docs/guides/results.md``;
written atomically, read back by :func:`clad.results.reading.load_results`) holds these records, and
the results database (:mod:`clad.results.store`) lays the same records out in tables.
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from importlib import metadata
from typing import Any, Callable, Iterable

import numpy as np

from .._version import __version__
from ..atomic import atomic_output
from ..errors import DataError

__all__ = [
    "RunResult",
    "RECORD_FIELDS",
    "error_cause",
    "versions",
    "write_results",
    "atomic_write_text",
    "to_jsonable",
    "is_tuning_run",
    "UNVERIFIED",
]

#: what marks a run imported without being recomputable here (its plug-in's code is not available):
#: the end of its origin and of its scenario's label, so that every table shows it apart
UNVERIFIED = " (unverified)"

#: the libraries whose versions a run records (their distribution names)
_PACKAGES = ("numpy", "scikit-learn", "pyod", "torch", "pandas")


def versions() -> dict[str, str | None]:
    """Versions of clad, Python and the libraries that decide the numbers (None if not installed).

    Read from package metadata, so torch is not imported just to learn its version; read once per
    process (a metadata look-up costs milliseconds, every run records it).
    """
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str | None], ...]:
    out: dict[str, str | None] = {"clad": __version__, "python": platform.python_version()}
    for dist in _PACKAGES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
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


def _nan(values) -> list:
    """``values`` with JSON's null read back as NaN."""
    return [float("nan") if v is None else v for v in values]


def _matrix(rows) -> np.ndarray:
    return np.array([_nan(row) for row in rows], dtype=np.float64)


def _metric_values(d: Mapping) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out[k] = dict(v)
        elif isinstance(v, list):
            out[k] = _nan(v)
        else:
            out[k] = float("nan") if v is None else v
    return out


def _prequential(d: Mapping | None) -> dict | None:
    if not d:
        return None
    curves = {
        kind: {m: _nan(vals) for m, vals in d[kind].items()} for kind in ("cumulative", "windowed")
    }
    return {**d, **curves}


def _anytime(a):
    if not a:
        return a
    return {**a, "rows_seen": list(a["rows_seen"]), "R": {m: _matrix(r) for m, r in a["R"].items()}}


def _threshold(record: Mapping) -> dict:
    out = dict(record)
    for key in ("threshold", "realised_fpr"):
        if out.get(key) is not None:
            out[key] = [[float(v) for v in _nan(row)] for row in out[key]]
    return out


def _chance(levels: Mapping) -> dict:
    return {m: [float(v) for v in _nan(values)] for m, values in levels.items()}


def _optional(convert: Callable) -> Callable:
    return lambda v: None if v is None else convert(v)


def _stored(
    column: str | None,
    read: Callable = lambda v: v,
    *,
    optional: bool = False,
    sql: str | None = None,
    **kwargs,
):
    """A field of the run record and how it is kept: ``column`` is ``"plain"`` (a database column
    holding the value), ``"json"`` (a column holding it as JSON; ``optional``: NULL, not ``null``,
    when the run has none) or None (R and metrics: tables of their own); ``sql`` renames the column
    (``order`` is an SQL keyword); ``read`` turns the strict-JSON value back into the field's type."""
    return field(
        metadata={"column": column, "read": read, "optional": optional, "sql": sql}, **kwargs
    )


@dataclass(frozen=True, eq=False)
class RunResult:
    """One run: configuration, R per base metric, continual metrics, timings and provenance.

    The fields are the run record, declared once: in this order they are the keys of a run in
    ``results.json`` (:meth:`to_dict`), and their metadata says how :mod:`clad.results.store` keeps
    each one and how :meth:`from_dict` reads it back (:data:`RECORD_FIELDS`).
    """

    #: the run's identity (:attr:`clad.engine.config.RunConfig.run_id`)
    run_id: str | None = _stored("plain", default=None, kw_only=True)
    #: ``ok`` or ``failed`` (the database also knows ``running`` and ``stale``)
    status: str = _stored("plain", default="ok", kw_only=True)
    dataset: str = _stored("plain")
    scenario: str = _stored("plain")
    strategy: str = _stored("plain")
    detector: str = _stored("plain")
    seed: int = _stored("plain", int)
    #: the concept learned at each training step (R's row labels)
    concepts: tuple[str, ...] = _stored("json", tuple, default=())
    #: the test concepts (R's column labels)
    test_concepts: tuple[str, ...] = _stored("json", tuple, default=())
    #: ``{base metric: R}``
    R: Mapping[str, np.ndarray] = _stored(
        None, lambda v: {m: _matrix(r) for m, r in v.items()}, default_factory=dict
    )
    #: ``{base metric: {continual metric: value or per-step list, "left_out": {...}}}``
    metrics: Mapping[str, Mapping[str, Any]] = _stored(
        None, lambda v: {m: _metric_values(x) for m, x in v.items()}, default_factory=dict
    )
    #: seconds: ``fit`` and ``score`` per step
    timings: Mapping[str, Any] = _stored("json", dict, default_factory=dict)
    #: training rows the strategy kept after each step
    memory_rows: tuple[int, ...] = _stored("json", tuple, default=())
    anytime: Mapping[str, Any] | None = _stored("json", _anytime, optional=True, default=None)
    #: what a strategy reports beyond R (its ``extra_results(boundaries)`` hook)
    extras: Mapping[str, Any] | None = _stored("json", optional=True, default=None)
    learned_rows: tuple[Mapping[str, int] | None, ...] | None = _stored(
        "json", _optional(tuple), optional=True, default=None
    )
    prequential: Mapping[str, Any] | None = _stored(
        "json", _prequential, optional=True, default=None
    )
    order: str | None = _stored("json", optional=True, sql="run_order", default=None)
    versions: Mapping[str, str | None] = _stored("json", dict, default_factory=dict)
    config: Mapping[str, Any] = _stored("json", dict, default_factory=dict)
    #: the traceback of a failed run
    error: str | None = _stored("plain", default=None)
    warnings: tuple[str, ...] = _stored(
        "json", lambda v: tuple(str(w) for w in v or ()), default=()
    )
    #: the run_id of the run that computed this result, when this configuration is the same
    #: computation (see :mod:`clad.engine.identity`); None when it was computed for itself
    shared_from: str | None = _stored("plain", default=None)
    #: fingerprints of what the run read: ``{"data file PATH": sha256, "code MODULE": hash or
    #: version}`` (a changed one makes a finished run stale, see :mod:`clad.engine.identity`)
    inputs: Mapping[str, str] = _stored("json", lambda v: dict(v or {}), default_factory=dict)
    #: the peak memory of the run in bytes: how far the process's resident set size rose above its
    #: value when the run began (see :mod:`clad.core.memory`); None when not measured
    peak_memory: int | None = _stored("json", _optional(int), optional=True, default=None)
    #: per base metric, the chance level of each test concept (in ``test_concepts`` order): what a
    #: scoreless detector gets there (:func:`clad.core.chance.concept_chance_level`; None for a
    #: single-class concept); None when not recorded (results written before it was)
    chance: Mapping[str, Any] | None = _stored(
        "json", _optional(_chance), optional=True, default=None
    )
    #: the threshold policy (``"own"`` or ``{"fpr": x, "calibration": share or count}``, :mod:`clad.core.thresholds`)
    #: and, per step and test concept like R, the ``threshold`` of the labels and the ``realised_fpr``
    #: (the share of the concept's normal rows flagged), with the ``calibration_rows`` held out per
    #: training concept; None when not recorded (results written before it was)
    threshold: Mapping[str, Any] | None = _stored(
        "json", _optional(_threshold), optional=True, default=None
    )
    #: what makes this run the same computation anywhere: ``{"key": hex, "parts": {...}}``, the
    #: parts being its data's sha256, clad's numbers-version, its base metrics' versions, the
    #: library versions and plug-in fingerprints (:mod:`clad.engine.result_key`); None for a failed
    #: run and for results written before it was recorded
    result_key: Mapping[str, Any] | None = _stored(
        "json", _optional(dict), optional=True, default=None
    )
    #: where the run was computed when not here: ``"bundle sha256:HEX"``, the bundle it was imported
    #: from (``clad pull``, ``clad run --from``); None for a run computed here
    origin: str | None = _stored("plain", default=None)
    #: the parts of the run that consume the run seed (``"dataset"``, ``"strategy"``,
    #: ``"detector"``, ``"scenario"``; :func:`clad.core.seeding.seed_consumers`), recorded when the
    #: run is computed; None when not known (results written before it was recorded)
    seed_reach: tuple[str, ...] | None = _stored(
        "json", _optional(tuple), optional=True, default=None
    )

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
        """The strict-JSON record of the run: every field, in :data:`RECORD_FIELDS` order."""
        return to_jsonable({f.name: getattr(self, f.name) for f in RECORD_FIELDS})

    @classmethod
    def from_dict(cls, d: Mapping) -> "RunResult":
        """The run of a record written by :meth:`to_dict` (a field left out takes its default)."""
        if not isinstance(d, Mapping):
            raise DataError(
                f"run record must be a JSON object, got {type(d).__name__} {str(d)[:40]!r}"
            )
        try:
            return cls(
                **{
                    f.name: f.metadata["read"](d[f.name])
                    for f in RECORD_FIELDS
                    if f.name in d or (f.default is MISSING and f.default_factory is MISSING)
                }
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(
                f"run record is not a clad result ({type(exc).__name__}: {exc})"
            ) from None


#: the fields of the run record, in record order, with how each is stored (``field.metadata``)
RECORD_FIELDS = fields(RunResult)


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


def write_results(
    path: str | os.PathLike,
    runs: Iterable[RunResult],
    spec: Mapping | None = None,
    references: Iterable[RunResult] = (),
) -> None:
    """Write ``results.json``: strict JSON (``allow_nan=False``), atomically; the reference runs of
    a spec with ``references`` (:mod:`clad.engine.references`), if any, under ``"references"``."""
    doc = {
        "clad_version": __version__,
        "spec": to_jsonable(spec or {}),
        "runs": [r.to_dict() for r in runs],
    }
    references = [r.to_dict() for r in references]
    if references:
        doc["references"] = references
    atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False))


def is_tuning_run(config: Mapping | None) -> bool:
    """Whether a run's configuration (``RunResult.config``) is a tuning run's: it saw the ``tune``
    part of its data (:mod:`clad.core.data_views`). Readers of a results folder leave these runs out
    (they are the means of a choice, not results).

    >>> is_tuning_run({"data_view": {"mode": "first_concepts", "part": "tune", "k": 1}}), is_tuning_run({})
    (True, False)
    """
    view = (config or {}).get("data_view") or {}
    return isinstance(view, Mapping) and view.get("part") == "tune"
