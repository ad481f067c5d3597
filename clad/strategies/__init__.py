"""Strategies: what the detector(s) are trained on, step after step.

The interface and what a new strategy writes: :mod:`clad.strategies.base`. Every strategy is a
scikit-learn estimator: ``clone`` gives an unfitted copy, and fitted strategies pickle.

Registered names for spec files, read from the registry, with the scenarios each can run in
(``aware`` = concept_aware, ``incr`` = concept_incremental, ``agn`` = concept_agnostic):

>>> short = {"concept_aware": "aware", "concept_incremental": "incr", "concept_agnostic": "agn"}
>>> for name in STRATEGIES.names():
...     runs_in = STRATEGIES.resolve(name).supported_scenarios
...     runs_in = "all" if len(runs_in) == 3 else ", ".join(short[s] for s in short if s in runs_in)
...     print(f"{name:19} {runs_in:11} {STRATEGIES.doc(name)}")
agem                all         fine-tuning with A-GEM gradient projection on a reservoir memory (torch detectors)
balanced_replay     aware, incr fresh detector on a concept-balanced buffer of past rows plus the newest data
cumulative          all         train on everything seen so far (joint upper bound)
der                 all         fine-tuning with dark experience replay of recorded outputs (torch detectors)
drift_experts       all         a new expert on each change a drift detector finds in the stream
ewc                 all         fine-tuning with an elastic weight consolidation penalty (torch detectors)
experts             aware, incr one fresh detector per concept (MSTE); task-agnostic choice without an id
fine_tune           all         one detector trained further with partial_fit on new data
incremental         all         one detector updated batch after batch (river detectors, partial_fit)
lwf                 all         fine-tuning with distillation to the previous model (torch detectors)
naive               all         train a fresh detector on the newest data only
replay              all         fresh detector on a reservoir sample of past rows plus the newest data
replay_buffer_only  all         fresh detector on a reservoir sample of all rows seen
window              all         fresh detector on the last window_size rows (sliding window)

Buffer sizes are parameters (``buffer_size``, ``window_size``); ``replay`` and
``balanced_replay`` take ``mode="with_new"`` (default) or ``"buffer_only"``.
"""

from __future__ import annotations

from ..registry import Registry
from .base import Scored, Strategy
from .baselines import Cumulative, FineTune, Naive
from .experts import Experts
from .drift_experts import DriftExperts
from .incremental import Incremental
from .regularization import EWC, LwF
from .rehearsal import AGEM, DER
from .replay import BalancedReplay, Replay, Window

__all__ = [
    "STRATEGIES",
    "Scored",
    "Strategy",
    "Naive",
    "FineTune",
    "Cumulative",
    "Replay",
    "BalancedReplay",
    "Window",
    "Experts",
    "EWC",
    "LwF",
    "AGEM",
    "DER",
    "Incremental",
    "DriftExperts",
    "make_strategy",
]

STRATEGIES = Registry("strategy", methods=("learn", "score"))
STRATEGIES.add("naive", Naive, "train a fresh detector on the newest data only")
STRATEGIES.add("cumulative", Cumulative, "train on everything seen so far (joint upper bound)")
STRATEGIES.add(
    "replay", Replay, "fresh detector on a reservoir sample of past rows plus the newest data"
)
STRATEGIES.add(
    "replay_buffer_only",
    Replay,
    "fresh detector on a reservoir sample of all rows seen",
    defaults={"mode": "buffer_only"},
)
STRATEGIES.add(
    "balanced_replay",
    BalancedReplay,
    "fresh detector on a concept-balanced buffer of past rows plus the newest data",
)
STRATEGIES.add("window", Window, "fresh detector on the last window_size rows (sliding window)")
STRATEGIES.add(
    "experts", Experts, "one fresh detector per concept (MSTE); task-agnostic choice without an id"
)
STRATEGIES.add("fine_tune", FineTune, "one detector trained further with partial_fit on new data")
STRATEGIES.add(
    "ewc", EWC, "fine-tuning with an elastic weight consolidation penalty (torch detectors)"
)
STRATEGIES.add("lwf", LwF, "fine-tuning with distillation to the previous model (torch detectors)")
STRATEGIES.add(
    "agem",
    AGEM,
    "fine-tuning with A-GEM gradient projection on a reservoir memory (torch detectors)",
)
STRATEGIES.add(
    "der", DER, "fine-tuning with dark experience replay of recorded outputs (torch detectors)"
)
STRATEGIES.add(
    "incremental",
    Incremental,
    "one detector updated batch after batch (river detectors, partial_fit)",
)
STRATEGIES.add(
    "drift_experts",
    DriftExperts,
    "a new expert on each change a drift detector finds in the stream",
)


def make_strategy(name: str, detector, params: dict | None = None, random_state: int | None = None):
    """Build the strategy registered as ``name`` around the detector prototype ``detector``."""
    params = dict(params or {})
    strat = STRATEGIES.build(name, {**params, "detector": detector})
    has_seed = "random_state" in strat.get_params(deep=False)
    if random_state is not None and has_seed and strat.random_state is None:
        strat.set_params(random_state=random_state)
    return strat
