"""Chance levels on test concepts: what a scoreless detector gets
(:func:`~clad.metrics.base.chance_level`) on each test concept of a run (per series:
:mod:`clad.core.series_values`)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..errors import CladValueError
from ..metrics.base import get_base_metric
from .concepts import Concept

__all__ = ["concept_chance_level", "chance_levels"]


def concept_chance_level(name: str, concept: Concept, **params) -> float:
    """:func:`~clad.metrics.base.chance_level` of base metric ``name`` on a test concept: its time
    points' labels for a time-axis metric when it has a time axis, its row labels otherwise."""
    decl = get_base_metric(name)
    timed = decl.time_axis and concept.time is not None
    return decl.chance_level(concept.time.y if timed else concept.y, **params)


def chance_levels(
    test_concepts: Sequence[Concept],
    base_metrics: Sequence[str],
    metric_params: Mapping[str, dict],
    single_class: Sequence[bool],
) -> dict[str, list[float]]:
    """:func:`concept_chance_level` of every base metric on every test concept (NaN for a
    single-class concept and where a metric defines no chance level)."""
    out = {}
    for m in base_metrics:
        levels = []
        for j, c in enumerate(test_concepts):
            try:
                levels.append(
                    float("nan")
                    if single_class[j]
                    else float(concept_chance_level(m, c, **metric_params.get(m, {})))
                )
            except (ValueError, CladValueError):  # no chance level defined for it
                levels.append(float("nan"))
        out[m] = levels
    return out
