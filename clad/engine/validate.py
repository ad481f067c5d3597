"""Single-task matrices and validity reports for the scenarios of a spec file (``clad validate``).

For every distinct (dataset, detector, seed) of the spec's grid — datasets expanded by ``orders`` —
M is computed with the spec's own detector and seed: a naive, concept-incremental run (a fresh
detector per concept), on the same data the spec's runs load. The spec's scenarios and strategies
do not enter M.
"""

from __future__ import annotations

from typing import Iterator

from ..defaults import DEFAULT_BASE_METRIC
from ..protocol.single_task import SingleTaskMatrix, naive_matrix
from ..protocol.validity import Thresholds, ValidityReport, validate
from .config import Component, RunConfig

__all__ = ["single_task_configs", "spec_matrices", "validate_spec"]


def single_task_configs(spec, metric: str = DEFAULT_BASE_METRIC) -> list[RunConfig]:
    """One naive concept-incremental configuration per distinct (dataset, detector, seed) of ``spec``."""
    out: dict[tuple, RunConfig] = {}
    for cfg in spec.configs:
        key = (
            cfg.dataset.display,
            repr(sorted(cfg.dataset.params.items())),
            cfg.detector.display,
            repr(sorted(cfg.detector.params.items())),
            cfg.seed,
        )
        if key not in out:
            out[key] = RunConfig(
                cfg.dataset,
                Component("concept_incremental"),
                Component("naive"),
                cfg.detector,
                cfg.seed,
                (metric,),
                metric_params={k: v for k, v in (cfg.metric_params or {}).items() if k == metric}
                or None,
            )
    return list(out.values())


def spec_matrices(
    spec, metric: str = DEFAULT_BASE_METRIC
) -> Iterator[tuple[dict, SingleTaskMatrix]]:
    """``(labels, M)`` for each configuration of :func:`single_task_configs`, computed one after another."""
    from .run import build_run

    for cfg in single_task_configs(spec, metric):
        dataset, scenario, strategy = build_run(cfg)
        labels = {
            "dataset": cfg.dataset.display,
            "detector": cfg.detector.display,
            "seed": cfg.seed,
        }
        yield labels, naive_matrix(dataset, scenario, strategy, metric, cfg.seed)


def validate_spec(
    spec, metric: str = DEFAULT_BASE_METRIC, thresholds: Thresholds | None = None
) -> Iterator[ValidityReport]:
    """The :class:`~clad.protocol.validity.ValidityReport` of every (dataset, detector, seed) of ``spec``."""
    for labels, matrix in spec_matrices(spec, metric):
        yield validate(matrix, thresholds, labels)
