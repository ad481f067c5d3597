"""Strategies: what the detector(s) are trained on, step after step.

Protocol (see :mod:`clad.strategies.base`): ``learn(X, concept_id=None)`` and
``score(X, concept_id=None) -> Scored``; class attributes ``requires_concept_id`` and
``requires_boundaries`` say which scenarios can run the strategy.

Registered names for spec files:

==============  =========================================================  ==================
name            what it trains on                                          scenarios
==============  =========================================================  ==================
``naive``       the newest data only                                       all
``cumulative``  everything seen so far (joint upper bound)                 all
==============  =========================================================  ==================
"""

from __future__ import annotations

from ..registry import Registry
from .base import Scored, Strategy
from .baselines import Cumulative, Naive
from .replay import BalancedReplay, Replay, Window

__all__ = ["STRATEGIES", "Scored", "Strategy", "Naive", "Cumulative", "Replay", "BalancedReplay", "Window",
           "make_strategy"]

STRATEGIES = Registry("strategy")
STRATEGIES.add("naive", Naive, "train a fresh detector on the newest data only")
STRATEGIES.add("cumulative", Cumulative, "train on everything seen so far (joint upper bound)")
STRATEGIES.add("replay", Replay, "fresh detector on a reservoir sample of past rows plus the newest data")
STRATEGIES.add("replay_buffer_only", Replay, "fresh detector on a reservoir sample of all rows seen",
               defaults={"mode": "buffer_only"})
STRATEGIES.add("balanced_replay", BalancedReplay,
               "fresh detector on a concept-balanced buffer of past rows plus the newest data")
STRATEGIES.add("window", Window, "fresh detector on the last window_size rows (sliding window)")


def make_strategy(name: str, detector, params: dict | None = None, random_state: int | None = None):
    """Build the strategy registered as ``name`` around the detector prototype ``detector``."""
    params = dict(params or {})
    strat = STRATEGIES.build(name, {**params, "detector": detector})
    if random_state is not None and "random_state" in strat.get_params(deep=False) and strat.random_state is None:
        strat.set_params(random_state=random_state)
    return strat
