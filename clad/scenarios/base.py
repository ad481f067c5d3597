"""What every scenario shares: what it tells a strategy, and the check that it can run one."""

from __future__ import annotations

from sklearn.base import BaseEstimator

from ..errors import ScenarioError

__all__ = ["Scenario"]


class Scenario(BaseEstimator):
    """Base class. Subclasses set ``name``, ``gives_concept_id``, ``gives_boundaries`` and write
    ``run(dataset, strategy, evaluator)`` as one plain loop."""

    name = "scenario"
    gives_concept_id = False
    gives_boundaries = False

    def check_strategy(self, strategy) -> None:
        """Refuse, before anything runs, a strategy that needs what this scenario does not give."""
        who = type(strategy).__name__
        if getattr(strategy, "requires_concept_id", False) and not self.gives_concept_id:
            raise ScenarioError(
                f"strategy {who} needs the concept id, which scenario {self.name!r} does not give; "
                "run it in 'concept_aware'"
            )
        if getattr(strategy, "requires_boundaries", False) and not self.gives_boundaries:
            raise ScenarioError(
                f"strategy {who} needs concept boundaries, which scenario {self.name!r} does not give; "
                "run it in 'concept_aware' or 'concept_incremental'"
            )
        for method in ("learn", "score"):
            if not callable(getattr(strategy, method, None)):
                raise ScenarioError(f"strategy {who} has no {method}() method; see clad.strategies.Strategy")

    def run(self, dataset, strategy, evaluator):  # pragma: no cover - abstract
        raise NotImplementedError
