"""What is checked once before the first run of a grid, after the spec itself: the data and the devices.

A spec check (:mod:`clad.engine.spec`) sees parameters; some problems show only once a dataset is
built: a recipe that leaves a concept without anomalies, too few normal rows to split, a concept
order a loader cannot give. :func:`data_problems` builds each distinct dataset of a grid (loader,
parameters and concept order) once, with the seed of the first run that uses it, and reports each
problem once per dataset, before any run is computed, instead of once per run after the grid
started. The dataset built here is the one the runs load (the per-process cache of
:mod:`clad.engine.run`), so a sequential grid does not build it twice. A problem that appears only
under another seed (a seeded recipe) still fails the runs of that seed, each recorded with its cause.

:func:`preflight_problems` adds the devices the detectors name when the runs are computed on this
machine (:func:`clad.engine.spec_checks.device_problems`); a Dask or SLURM grid's machines may differ.
``clad run`` and ``clad run --dry-run`` both call it.
"""

from __future__ import annotations

import logging
from typing import Iterable

from .config import RunConfig, canonical

__all__ = ["data_problems", "preflight_problems"]

log = logging.getLogger(__name__)


def _cause(exc: BaseException) -> str:
    """``exc``'s message after the loader call it was raised in (a clad error is said in its own
    words; another exception keeps its type)."""
    from ..errors import CladError

    text = "\n      ".join(line.rstrip() for line in str(exc).strip().splitlines())
    if isinstance(exc, CladError):
        return text.split("}: ", 1)[1] if text.startswith("dataset '") and "}: " in text else text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def data_problems(configs: Iterable[RunConfig]) -> list[str]:
    """One line per distinct dataset of ``configs`` that cannot be built (see the module)."""
    from .run import run_dataset

    seen: set[tuple[str, str]] = set()
    out: list[str] = []
    for cfg in configs:
        key = (cfg.dataset.name, canonical(cfg.dataset.params))
        if key in seen:
            continue
        seen.add(key)
        try:
            run_dataset(cfg)
        except Exception as exc:  # noqa: BLE001 - every run of this dataset would fail with it: said once, here
            out.append(
                f"datasets ({cfg.dataset.display}): {_cause(exc)} (found by building it with seed "
                f"{cfg.seed} before any run)"
            )
    return out


def _first_of_each_dataset(configs) -> list[RunConfig]:
    """The first run of each dataset component; a spec's :class:`~clad.engine.spec_grid.Grid` (datasets
    vary slowest) gives them without expanding the whole grid."""
    datasets = getattr(configs, "datasets", None)
    if datasets is None or not len(configs):
        return list(configs)
    step = len(configs) // len(datasets)
    return [configs[i * step] for i in range(len(datasets))]


def preflight_problems(configs, here: bool) -> list[str]:
    """Data problems (:func:`data_problems`) and, when the runs are computed on this machine
    (``here``), the devices the detectors name that this machine lacks."""
    found = []
    if here:
        from .spec_checks import device_problems

        found += device_problems(
            getattr(configs, "detectors", None)
            or {c.detector.display: c.detector for c in configs}.values()
        )
    return found + data_problems(_first_of_each_dataset(configs))
