"""Scenarios: what a strategy is told while it learns.

=======================  ==========  ==========  ===================================================
name                     concept id  boundaries  learn calls
=======================  ==========  ==========  ===================================================
``concept_aware``        yes         yes         one per training concept, with its id
``concept_incremental``  no          yes         one per training concept
``concept_agnostic``     no          no          batches of ``batch_size`` rows of one stream
=======================  ==========  ==========  ===================================================

In all three, after each training concept every test concept is scored once into R
(rows = training steps, columns = test concepts).
"""

from __future__ import annotations

from ..registry import Registry
from .base import Scenario
from .concept_agnostic import ConceptAgnostic, stream_batches
from .concept_aware import ConceptAware
from .concept_incremental import ConceptIncremental

__all__ = [
    "SCENARIOS",
    "Scenario",
    "ConceptAware",
    "ConceptIncremental",
    "ConceptAgnostic",
    "stream_batches",
]

SCENARIOS = Registry("scenario", methods=("run",))
SCENARIOS.add("concept_aware", ConceptAware, "concept id at learn and score time")
SCENARIOS.add("concept_incremental", ConceptIncremental, "boundaries known, no id")
SCENARIOS.add("concept_agnostic", ConceptAgnostic, "a stream of batches, neither id nor boundaries")
