"""Where and how a grid's runs are computed: one value resolved once from the spec and the caller.

A spec may set ``jobs``, ``threads``, ``dask``, ``timeout`` and a ``[slurm]`` section; the command line (or the caller of
:func:`~clad.engine.benchmark.run_spec`) may give each of them too, and then wins. That rule is
here only: :meth:`Execution.of` resolves it, ``clad run`` and its dry run both read the result.

>>> from types import SimpleNamespace
>>> spec = SimpleNamespace(jobs=4, threads=None, dask=None, timeout=60.0)
>>> ex = Execution.of(spec, jobs=2)
>>> ex, ex.describe()
(Execution(jobs=2, threads=1, dask=None, timeout=60.0, slurm=None), '2 processes, time limit 60 s per run')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Execution", "spec_of"]


def spec_of(spec):
    """``spec`` read when it is a path to a TOML spec file or a dict (the parsed TOML);
    :class:`~clad.errors.CladTypeError` for a value that cannot be one."""
    import os
    from collections.abc import Mapping

    from ..errors import CladTypeError
    from .spec import load_spec, parse_spec

    if isinstance(spec, (str, os.PathLike)):
        return load_spec(spec)
    if isinstance(spec, Mapping):
        return parse_spec(dict(spec))
    if spec is None or isinstance(spec, (int, float, bytes, list, tuple)):
        raise CladTypeError(f"spec={spec!r}; expected a Spec, a path to a TOML spec file or a dict")
    return spec


@dataclass(frozen=True)
class Execution:
    """``jobs`` worker processes (or ``dask``: a scheduler address or a ``distributed.Client``),
    ``threads`` BLAS/OpenMP/torch threads per run, ``timeout`` seconds per run (None: no limit)."""

    jobs: int = 1
    threads: int = 1
    dask: Any = None
    timeout: float | None = None
    #: a :class:`~clad.engine.slurm_config.SlurmConfig`: the runs are SLURM jobs
    slurm: Any = None
    #: the most runs of one torch network trained together as replicas (1: off; see
    #: :mod:`clad.engine.replicas`); the spec's ``replicas`` key
    replicas: int = field(default=1, repr=False)

    @classmethod
    def of(
        cls,
        spec,
        *,
        jobs: int | None = None,
        threads: int | None = None,
        dask=None,
        timeout: float | None = None,
        slurm=None,
        replicas: int | None = None,
    ) -> "Execution":
        """The ``spec``'s (a :class:`~clad.engine.spec.Spec`, a path to a TOML spec file or a dict)
        ``jobs``, ``threads``, ``dask``, ``timeout``, ``replicas`` and ``[slurm]`` section
        unless given here (``jobs`` and ``threads`` default to 1 when the spec does not set them
        either; ``jobs`` or ``dask`` given here run the grid there rather than on the spec's SLURM)."""
        spec = spec_of(spec)
        if slurm is None and jobs is None and dask is None:
            slurm = getattr(spec, "slurm", None)
        return cls(
            jobs=jobs if jobs is not None else (spec.jobs or 1),
            threads=threads if threads is not None else (spec.threads or 1),
            dask=dask if dask is not None else (None if slurm is not None else spec.dask),
            timeout=timeout if timeout is not None else spec.timeout,
            slurm=slurm,
            replicas=int(
                replicas if replicas is not None else (getattr(spec, "replicas", None) or 1)
            ),
        )

    @property
    def parallel(self) -> bool:
        """Runs computed in local worker processes (more than one job, no Dask, no SLURM)."""
        return self.jobs > 1 and self.dask is None and self.slurm is None

    def describe(self) -> str:
        """Where the runs are computed and their time limit, as the dry run prints it."""
        where = (
            f"Dask at {self.dask}"
            if self.dask
            else f"{self.jobs} process{'es' if self.jobs > 1 else ''}"
        )
        if self.slurm is not None:
            where = self.slurm.describe()
        return where + (f", time limit {self.timeout:g} s per run" if self.timeout else "")
