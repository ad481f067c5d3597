"""Concept-aware scenario: the strategy is told the concept id when it learns and when it scores."""

from __future__ import annotations

from .base import Scenario

__all__ = ["ConceptAware"]


class ConceptAware(Scenario):
    """One ``learn(X, concept_id=name)`` call per training concept; test sets are scored with their
    own concept id. R gets one row per training concept."""

    name = "concept_aware"
    gives_concept_id = True
    gives_boundaries = True
    same_without_id = "concept_incremental"

    def run(self, dataset, strategy, evaluator):
        self.prepare(strategy, evaluator)
        for i, concept in enumerate(dataset.train):
            with evaluator.learning(f"training step {i} (concept {concept.name!r})"):
                strategy.learn(concept.X, concept_id=concept.name)
            evaluator.end_of_concept(strategy, concept.name, with_ids=True)
        return evaluator.result()
