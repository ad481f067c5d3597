"""Run configurations: what decides one run's numbers, and its identity.

:class:`Component` is a registered name (or import path) with keyword parameters; a
:class:`RunConfig` is one run of a grid (dataset, scenario, strategy, detector, seed, base
metrics) and its ``run_id``. :func:`derive_seeds` (seeds for a run's parts) lives in
:mod:`clad.core.seeding` with the one function that applies them, and is re-exported here.
This module imports nothing of the run engine, so a spec can be validated without it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..core.seeding import derive_seeds

__all__ = ["Component", "RunConfig", "derive_seeds", "canonical"]


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)


@dataclass(frozen=True)
class Component:
    """A registered name (or import path) with keyword parameters and a display label."""

    name: str
    params: dict = field(default_factory=dict)
    label: str | None = None

    @property
    def display(self) -> str:
        return self.label or self.name

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "label": self.display}


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides one run's numbers."""

    dataset: Component
    scenario: Component
    strategy: Component
    detector: Component
    seed: int = 0
    base_metrics: tuple[str, ...] = ("roc_auc",)

    def to_dict(self) -> dict:
        return {
            "dataset": self.dataset.to_dict(),
            "scenario": self.scenario.to_dict(),
            "strategy": self.strategy.to_dict(),
            "detector": self.detector.to_dict(),
            "seed": int(self.seed),
            "base_metrics": list(self.base_metrics),
        }

    @property
    def run_id(self) -> str:
        """A hash of the full configuration and clad's version (the run's identity)."""
        return hashlib.sha256(canonical({"config": self.to_dict(), "clad": __version__}).encode()).hexdigest()[:16]

    def describe(self) -> str:
        return (f"{self.dataset.display} / {self.scenario.display} / {self.strategy.display} / "
                f"{self.detector.display} / seed {self.seed}")
