"""Run configurations: what decides one run's numbers, and its identity.

:class:`Component` is a registered name (or import path) with keyword parameters; a
:class:`RunConfig` is one run of a grid (dataset, scenario, strategy, detector, seed, base
metrics) and its ``run_id``. :func:`derive_seeds` (seeds for a run's parts) lives in
:mod:`clad.core.seeding` with the one function that applies them.
This module imports nothing of the run engine, so a spec can be validated without it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .._version import __version__
from ..core.time_limit import MAX_TIMEOUT
from ..defaults import DEFAULT_BASE_METRIC

__all__ = ["Component", "RunConfig", "canonical", "group_by", "MAX_TIMEOUT"]


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)


def group_by(items: Iterable, key: Callable[[Any], Any]) -> dict[Any, list]:
    """``items`` by ``key(item)``: the groups in the order of their first item, each in order.

    >>> group_by([1, 2, 3, 4], lambda n: n % 2)
    {1: [1, 3], 0: [2, 4]}
    """
    groups: dict[Any, list] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


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
    base_metrics: tuple[str, ...] = (DEFAULT_BASE_METRIC,)
    #: the part of the dataset this run sees (:mod:`clad.core.data_views`), None for all of it; a
    #: spec's ``[tuning]`` section sets it (recorded only when set, so other run ids are unchanged)
    data_view: dict | None = None
    #: parameters of base metrics (``{"vus_pr": {"window": 50}}``), a spec's ``base_metric_params``;
    #: recorded only when set, so other run ids are unchanged
    metric_params: dict | None = None
    #: the threshold policy (:mod:`clad.core.thresholds`), a spec's ``threshold``: None for each
    #: detector's own (recorded only when set, so other run ids are unchanged)
    threshold: dict | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        """The configuration of a record written by :meth:`to_dict` (a run's ``config``).

        >>> cfg = RunConfig(Component("synthetic", {"n_concepts": 2}), Component("concept_aware"),
        ...                 Component("naive"), Component("lof", label="LOF"), seed=3)
        >>> RunConfig.from_dict(cfg.to_dict()) == cfg, RunConfig.from_dict(cfg.to_dict()).run_id == cfg.run_id
        (True, True)
        """

        def part(c: dict) -> Component:
            label = c.get("label")
            return Component(
                c["name"], dict(c.get("params") or {}), None if label == c["name"] else label
            )

        try:
            return cls(
                *(part(d[k]) for k in ("dataset", "scenario", "strategy", "detector")),
                seed=int(d["seed"]),
                base_metrics=tuple(d.get("base_metrics") or (DEFAULT_BASE_METRIC,)),
                data_view=d.get("data_view"),
                metric_params=d.get("base_metric_params") or None,
                threshold=d.get("threshold"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a run configuration ({type(exc).__name__}: {exc})") from None

    def to_dict(self) -> dict:
        d = {
            "dataset": self.dataset.to_dict(),
            "scenario": self.scenario.to_dict(),
            "strategy": self.strategy.to_dict(),
            "detector": self.detector.to_dict(),
            "seed": int(self.seed),
            "base_metrics": list(self.base_metrics),
        }
        if self.data_view is not None:
            d["data_view"] = dict(self.data_view)
        if self.metric_params:
            d["base_metric_params"] = {m: dict(v) for m, v in self.metric_params.items()}
        if self.threshold is not None:
            d["threshold"] = dict(self.threshold)
        return d

    @property
    def run_id(self) -> str:
        """A hash of the full configuration and clad's version (the run's identity)."""
        return hashlib.sha256(
            canonical({"config": self.to_dict(), "clad": __version__}).encode()
        ).hexdigest()[:16]

    def computation_key(
        self, scenario: str | None = None, seed_matters: bool = True, inputs: dict | None = None
    ) -> str:
        """What decides this run's numbers, as a hash: the configuration without display labels,
        with the scenario named ``scenario`` instead of its own (one whose loop is the same for this
        strategy), without the seed unless ``seed_matters``, and with the fingerprints of the
        ``inputs`` (data files, plug-in code). Runs with equal keys are one computation (see
        :mod:`clad.engine.identity`, which decides the arguments).

        >>> from clad.engine.config import Component, RunConfig
        >>> a = RunConfig(Component("d"), Component("concept_aware"), Component("naive"), Component("lof"), seed=0)
        >>> b = RunConfig(Component("d"), Component("concept_incremental"), Component("naive"), Component("lof"), seed=1)
        >>> a.computation_key() == b.computation_key()
        False
        >>> a.computation_key("concept_incremental", False) == b.computation_key(seed_matters=False)
        True
        """
        d = {
            k: {"name": v.name, "params": dict(v.params)}
            for k, v in (
                ("dataset", self.dataset),
                ("scenario", self.scenario),
                ("strategy", self.strategy),
                ("detector", self.detector),
            )
        }
        if scenario is not None:
            d["scenario"]["name"] = scenario
        d["seed"] = int(self.seed) if seed_matters else None
        d["base_metrics"] = list(self.base_metrics)
        d["inputs"] = dict(inputs or {})
        if self.metric_params:
            d["base_metric_params"] = {m: dict(v) for m, v in self.metric_params.items()}
        if self.data_view is not None:
            d["data_view"] = dict(self.data_view)
            if self.data_view.get("mode") == "validation_split":  # the split is drawn from the seed
                d["seed"] = int(self.seed)
        if self.threshold is not None:  # its calibration split is drawn from the seed
            d["threshold"] = dict(self.threshold)
            d["seed"] = int(self.seed)
        return hashlib.sha256(
            canonical({"computation": d, "clad": __version__}).encode()
        ).hexdigest()[:16]

    def describe(self) -> str:
        return (
            f"{self.dataset.display} / {self.scenario.display} / {self.strategy.display} / "
            f"{self.detector.display} / seed {self.seed}"
        )
