"""Spec files: a benchmark grid in TOML, validated completely before anything runs.

Every key a spec may hold, with its default, is in docs/guides/specs.md (an example spec there
too); an optional ``[tuning]`` section chooses detector (and strategy) parameters on data the
evaluation never scores (:mod:`clad.engine.tuning`, docs/guides/tuning.md), and a ``[slurm]`` table
runs the grid as SLURM jobs (docs/guides/running.md). This module holds :func:`load_spec` and the
readers of a spec's parts (``SPEC_READERS``, one per part).

The grid is datasets x orders x scenarios x strategies x detectors x seeds. Every problem in the file is
reported at once (a :class:`~clad.errors.SpecError` listing them), each with the key it is about
and a did-you-mean for misspelt names. A spec names classes by import path and so runs code, like a
Python script: run only specs you trust.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SpecError
from .config import RunConfig
from .sections import TOP_LEVEL_KEYS
from .spec_grid import (
    read_baselines,
    read_components,
    read_grid,
    read_pairs,
    read_postprocess,
    read_sizes,
    read_tuning,
)
from .spec_keys import (
    SpecReading,
    read_base_metrics,
    read_execution,
    read_keys,
    read_name,
    read_references,
    read_seeds,
    read_threshold,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Spec", "load_spec", "parse_spec", "TOP_LEVEL_KEYS", "SPEC_READERS"]


@dataclass
class Spec:
    """A validated spec: its name, source and the expanded grid of run configurations; ``text``
    is the TOML the user wrote (None for a spec given as a dict)."""

    name: str
    configs: Sequence[RunConfig]
    raw: dict = field(default_factory=dict)
    source: str | None = None
    skipped: list[str] = field(default_factory=list)
    jobs: int | None = None
    threads: int | None = None
    dask: str | None = None
    timeout: float | None = None
    text: str | None = None
    #: the validated ``[slurm]`` section (:class:`clad.engine.slurm_config.SlurmConfig`), or None
    slurm: Any = None
    share: bool = True
    #: the most runs of one torch network trained together (:mod:`clad.engine.replicas`; 1: off)
    replicas: int = 32
    #: the validated ``[tuning]`` section (:class:`clad.engine.tuning.TuningPlan`), or None
    tuning: Any = None
    #: the reference runs to compute (:mod:`clad.engine.references`): kinds of
    #: :data:`clad.metrics.reference_metrics.REFERENCE_KINDS`
    references: tuple[str, ...] = ()

    @property
    def tuning_configs(self) -> list[RunConfig]:
        """The tuning runs of a spec with a ``[tuning]`` section (none without)."""
        return [] if self.tuning is None else self.tuning.tuning_configs(self.configs)

    def __len__(self) -> int:
        return len(self.configs)


#: the largest spec file read (a spec is a page of text) and the deepest nesting of its tables and lists
MAX_SPEC_BYTES = 10_000_000
MAX_SPEC_DEPTH = 32


def _depth(value: Any, level: int = 0) -> int:
    """How deep ``value``'s tables and lists nest (stops counting past :data:`MAX_SPEC_DEPTH`)."""
    if level > MAX_SPEC_DEPTH or not isinstance(value, (dict, list)):
        return level
    items = value.values() if isinstance(value, dict) else value
    return max([_depth(v, level + 1) for v in items] or [level + 1])


def load_spec(path: str | Path) -> Spec:
    """Read and validate a TOML spec file."""
    path = Path(path)
    try:
        import stat as _stat

        mode = path.stat().st_mode
        # a FIFO, a device (/dev/zero), a socket
        if not (_stat.S_ISREG(mode) or _stat.S_ISDIR(mode)):
            raise SpecError(
                f"spec {str(path)!r} is not a regular file (a pipe, a device or a socket); expected a "
                "TOML file"
            )
        if _stat.S_ISREG(mode) and path.stat().st_size > MAX_SPEC_BYTES:
            raise SpecError(
                f"spec file {str(path)!r} holds {path.stat().st_size:,} bytes, more than a spec's "
                f"{MAX_SPEC_BYTES:,}; is it a spec?"
            )
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise SpecError(f"spec {str(path)!r} is a folder; expected a TOML file") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"spec file is not UTF-8 text ({exc})", source=str(path)) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", source=str(path)) from None
    except RecursionError:
        raise SpecError(
            f"its tables or lists are nested more than {MAX_SPEC_DEPTH} deep", source=str(path)
        ) from None
    if _depth(raw) > MAX_SPEC_DEPTH:
        raise SpecError(
            f"its tables or lists are nested more than {MAX_SPEC_DEPTH} deep", source=str(path)
        )
    spec = parse_spec(raw, source=str(path), default_name=path.stem)
    spec.text = text
    return spec


def parse_spec(raw: dict, source: str | None = None, default_name: str = "benchmark") -> Spec:
    """Validate a spec given as a dict (the parsed TOML) and expand its grid (data files may also
    lie beside the spec file ``source``)."""
    from .spec_checks import SPEC_FOLDER

    folder = str(Path(source).resolve().parent) if source and Path(source).is_file() else None
    token = SPEC_FOLDER.set(folder)
    try:
        return _parse_spec(raw, source, default_name)
    finally:
        SPEC_FOLDER.reset(token)


def _parse_spec(raw: dict, source: str | None, default_name: str) -> Spec:
    if not isinstance(raw, dict):
        raise SpecError(
            f"expected a table at the top level, got {type(raw).__name__}", source=source
        )
    r = SpecReading(raw, name=default_name)
    for read in SPEC_READERS:
        read(r)
    if r.problems:
        raise SpecError(r.problems, source=source)
    same = "name configs skipped jobs threads dask share tuning slurm references replicas".split()
    return Spec(
        **{k: getattr(r, k) for k in same},
        raw=raw,
        source=source,
        timeout=None if r.timeout is None else float(r.timeout),
    )


#: The readers of a spec's parts, in the order they run (and report their problems): each takes
#: what it reads from the spec's table and what the earlier ones have read.
SPEC_READERS = (
    read_keys,
    read_name,
    read_base_metrics,
    read_threshold,
    read_seeds,
    read_execution,
    read_references,
    read_components,
    read_baselines,
    read_postprocess,
    read_pairs,
    read_grid,
    read_tuning,
    read_sizes,
)
