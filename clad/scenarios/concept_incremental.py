"""Concept-incremental scenario: boundaries are known (one learn call per concept), ids are not."""

from __future__ import annotations

from .base import Scenario

__all__ = ["ConceptIncremental"]


class ConceptIncremental(Scenario):
    """One ``learn(X)`` call per training concept, with no concept id; test sets are scored with no
    id either. R gets one row per training concept."""

    name = "concept_incremental"
    gives_concept_id = False
    gives_boundaries = True

    def run(self, dataset, strategy, evaluator):
        self.prepare(strategy, evaluator)
        for i, concept in enumerate(dataset.train):
            with evaluator.learning(f"training step {i} (concept {concept.name!r})"):
                strategy.learn(concept.X)
            evaluator.end_of_concept(strategy, concept.name, with_ids=False)
        return evaluator.result()
