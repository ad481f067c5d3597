"""What every scenario shares: what it tells a strategy, and the check that it can run one."""

from __future__ import annotations

from sklearn.base import BaseEstimator

from ..errors import CladValueError, ScenarioError
from ..validation import SEED, Validated, check_n_jobs

__all__ = ["Scenario"]


class Scenario(Validated, BaseEstimator):
    """Base class. Subclasses set ``name``, ``gives_concept_id``, ``gives_boundaries`` and write
    ``run(dataset, strategy, evaluator)`` as one plain loop: ``strategy.learn`` inside
    ``evaluator.learning()``, then ``evaluator.end_of_concept`` when a training concept ends (and
    ``evaluator.anytime`` for intermediate rows), and ``return evaluator.result()``.

    Every scenario takes ``n_jobs`` (default None: the evaluator's own setting): threads scoring
    the test concepts of a step concurrently; R does not depend on it (see
    :class:`~clad.core.evaluation.Evaluator`). In a spec file it is a key of the scenario's table.
    """

    name = "scenario"
    gives_concept_id = False
    gives_boundaries = False
    #: the scenario whose loop this one equals for a strategy that never reads the concept id
    #: (the two then differ only in the id they pass), or None
    same_without_id: str | None = None
    #: parameter constraints (clad.validation); a subclass adds its own
    _parameter_constraints = {"random_state": [None, SEED]}

    def __init__(self, n_jobs: int | None = None):
        self.n_jobs = n_jobs

    def _validate(self) -> None:
        """Check this scenario's parameters (a spec checks them before anything runs)."""
        self._validate_params()
        try:
            check_n_jobs(getattr(self, "n_jobs", None))
        except CladValueError as exc:
            raise CladValueError(f"{self.name}: {exc}") from None

    def prepare(self, strategy, evaluator) -> None:
        """Check the strategy (:meth:`check_strategy`) and give the evaluator this scenario's
        ``n_jobs`` if one is set; every ``run`` starts with it."""
        self._validate()
        self.check_strategy(strategy)
        if getattr(self, "n_jobs", None) is not None:
            evaluator.n_jobs = check_n_jobs(self.n_jobs)

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
                raise ScenarioError(
                    f"strategy {who} has no {method}() method; see clad.strategies.Strategy"
                )

    def run(self, dataset, strategy, evaluator):  # pragma: no cover - abstract
        raise NotImplementedError
