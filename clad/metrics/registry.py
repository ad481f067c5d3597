"""One declaration per continual metric, read by every consumer.

A metric is a pure function of R plus a :class:`Metric` declaration: its short label, whether
higher or lower is better, the inputs it needs beyond R (``reference``: one score per test concept
from a reference model; ``baseline``: one score per test concept from an untrained model;
``anytime``: the anytime matrix), and what one left-out term is. :func:`summarize` (the run's
metrics), the end-of-run summary, the leaderboard, the statistics and the report's best marks all
read :data:`REGISTRY`, so adding a metric is one function and one decorator in one module.

Three kinds:

* ``scalar`` (:func:`scalar_metric`): the decorated function returns the metric's *terms*, the
  values it averages (cells, differences, concepts or steps); the public function returns their
  mean with NaN terms left out, and ``fn.terms`` gives the terms. A NaN term is one *left out*:
  :func:`summarize` records how many per metric.
* ``curve`` (:func:`curve_metric`): one value per training step.
* ``per_concept`` (:func:`concept_metric`): one value per test concept.

>>> import numpy as np
>>> @scalar_metric("Last", unit="cells")
... def last_row_mean(R, learned_at=None):
...     '''Mean of the last row of R.'''
...     return np.asarray(R, dtype=float)[-1]
>>> last_row_mean([[0.5, 0.1], [0.7, float("nan")]]), last_row_mean.terms([[0.5, 0.1], [0.7, 0.2]]).tolist()
(0.7, [0.7, 0.2])
>>> summarize([[0.5, 0.1], [0.7, float("nan")]])["left_out"]["last_row_mean"]
1
>>> unregister("last_row_mean")
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Iterator

import numpy as np

from ..errors import CladValueError
from .cells import nanmean, prepare

__all__ = [
    "Metric",
    "INPUTS",
    "REGISTRY",
    "scalar_metric",
    "curve_metric",
    "concept_metric",
    "register",
    "unregister",
    "get_metric",
    "scalar_names",
    "summarize",
    "SCALAR_METRICS",
]

#: the inputs a metric may need beyond R and ``learned_at``
INPUTS = {
    "reference": "one score per test concept from a reference model (joint model or single-task expert)",
    "baseline": "one score per test concept from an untrained (randomly initialised) model",
    "anytime": "the anytime matrix and the rows seen at each of its evaluations",
}
KINDS = ("scalar", "curve", "per_concept")
#: how a metric's range follows from its base metric's (see :meth:`Metric.bounds`)
SCALES = ("value", "difference", "variance", "unbounded")


@dataclass(frozen=True)
class Metric:
    """The declaration of one continual metric.

    ``function(R, *needed_inputs, learned_at=None)`` computes it; ``terms`` (scalars only) gives the
    values it averages, whose NaN entries are its left-out count, each one ``unit`` (``"cells"``,
    ``"differences"``, ``"concepts"``, ``"steps"``); ``headline`` metrics are shown in the
    end-of-run summary text.
    """

    name: str
    function: Callable
    kind: str
    label: str
    higher_is_better: bool = True
    needs: tuple[str, ...] = ()
    unit: str = "cells"
    headline: bool = False
    terms: Callable | None = None
    scale: str = "value"

    def bounds(self, base: tuple[float, float]) -> tuple[float, float]:
        """The range of this metric's values when R's cells lie in ``base`` (the base metric's
        declared bounds, :func:`clad.metrics.base.base_metric_bounds`): by its ``scale``, ``"value"`` (a
        mean of cells: the same range), ``"difference"`` (a mean of differences of cells:
        ``(low - high, high - low)``), ``"variance"`` (a population variance of cells: ``(0,
        (high - low)² / 4)``) or ``"unbounded"``.

        >>> get_metric("continual_average").bounds((0.0, 1.0)), get_metric("backward_transfer").bounds((0.0, 1.0))
        ((0.0, 1.0), (-1.0, 1.0))
        """
        lo, hi = (float(b) for b in base)
        if self.scale == "value":
            return lo, hi
        if self.scale == "difference":
            return lo - hi, hi - lo
        if self.scale == "variance":
            return 0.0, (hi - lo) ** 2 / 4
        return -np.inf, np.inf

    @property
    def description(self) -> str:
        """The first line of the function's docstring."""
        return ((self.function.__doc__ or "").strip().splitlines() or [""])[0]

    @property
    def lower_is_better(self) -> bool:
        return not self.higher_is_better


_REGISTRY: dict[str, Metric] = {}
#: every declared metric by name, in declaration order (read-only view; see :func:`register`)
REGISTRY: Mapping[str, Metric] = MappingProxyType(_REGISTRY)


def register(metric: Metric, replace: bool = False) -> Metric:
    """Add a declaration (a name already declared is an error unless ``replace``)."""
    if not isinstance(metric, Metric):
        raise CladValueError(f"register() takes a Metric declaration, got {type(metric).__name__}")
    if metric.kind not in KINDS:
        raise CladValueError(
            f"metric {metric.name!r}: kind {metric.kind!r} is not one of {', '.join(KINDS)}"
        )
    unknown = [n for n in metric.needs if n not in INPUTS]
    if unknown:
        raise CladValueError(
            f"metric {metric.name!r} needs {unknown}; the inputs are {', '.join(INPUTS)}"
        )
    if (
        metric.name in _REGISTRY
        and not replace
        and _REGISTRY[metric.name].function is not metric.function
    ):
        raise CladValueError(
            f"a continual metric named {metric.name!r} is already declared "
            f"({_REGISTRY[metric.name].function.__module__}); pick another name or replace=True"
        )
    if metric.scale not in SCALES:
        raise CladValueError(
            f"metric {metric.name!r}: scale {metric.scale!r} is not one of {', '.join(SCALES)}"
        )
    if metric.kind == "scalar" and metric.terms is None:
        raise CladValueError(
            f"scalar metric {metric.name!r} needs a terms function (the values it averages)"
        )
    _REGISTRY[metric.name] = metric
    return metric


def unregister(name: str) -> None:
    """Remove a declaration (e.g. one a test added)."""
    _REGISTRY.pop(name, None)


def _declare(kind: str, label: str, lower_is_better: bool, needs, name: str | None, **fields):
    def decorate(fn: Callable) -> Callable:
        public, terms = fn, None
        if kind == "scalar":

            @functools.wraps(fn)
            def public(*args, **kwargs) -> float:
                return nanmean(fn(*args, **kwargs))

            public.terms = terms = fn
        fields.update(higher_is_better=not lower_is_better, needs=tuple(needs), terms=terms)
        register(Metric(name or fn.__name__, public, kind, label, **fields))
        return public

    return decorate


def scalar_metric(
    label: str,
    *,
    lower_is_better: bool = False,
    needs=(),
    unit: str = "cells",
    headline: bool = False,
    name: str | None = None,
    scale: str = "value",
):
    """Declare a scalar metric: decorate the function that returns its terms (see the module);
    ``scale`` says how its range follows from the base metric's (:meth:`Metric.bounds`)."""
    fields = {"unit": unit, "headline": bool(headline), "scale": scale}
    return _declare("scalar", label, lower_is_better, needs, name, **fields)


def curve_metric(label: str, *, lower_is_better: bool = False, needs=(), name: str | None = None):
    """Declare a per-step curve: the decorated function returns one value per training step."""
    return _declare("curve", label, lower_is_better, needs, name, unit="steps")


def concept_metric(label: str, *, lower_is_better: bool = False, needs=(), name: str | None = None):
    """Declare a per-concept metric: the decorated function returns one value per test concept."""
    return _declare("per_concept", label, lower_is_better, needs, name, unit="concepts")


def get_metric(name: str) -> Metric:
    """The declaration of ``name`` (a clear error, with a suggestion, for an unknown name).

    >>> get_metric("forgetting").higher_is_better
    False
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        from ..registry import did_you_mean

        raise CladValueError(
            f"unknown continual metric {name!r}{did_you_mean(str(name), _REGISTRY)}; declared: "
            f"{', '.join(_REGISTRY)}"
        ) from None


def scalar_names(
    *, headline: bool | None = None, needs_only: tuple[str, ...] | None = None
) -> list[str]:
    """Names of the scalar metrics, in declaration order; ``headline=True`` keeps the summary's
    headline metrics; ``needs_only`` keeps those whose inputs are all in it (``()``: R alone)."""
    return [
        m.name
        for m in _REGISTRY.values()
        if m.kind == "scalar"
        and (headline is None or m.headline == headline)
        and (needs_only is None or set(m.needs) <= set(needs_only))
    ]


class _ScalarView(Mapping):
    """``{name: function}`` of the scalar metrics, always in step with the registry."""

    def __getitem__(self, name: str) -> Callable:
        m = _REGISTRY[name]
        if m.kind != "scalar":
            raise KeyError(name)
        return m.function

    def __iter__(self) -> Iterator[str]:
        return iter(scalar_names())

    def __len__(self) -> int:
        return len(scalar_names())

    def __repr__(self) -> str:
        return f"SCALAR_METRICS({', '.join(self)})"


#: ``{name: function}`` of every scalar metric (a live view of :data:`REGISTRY`)
SCALAR_METRICS: Mapping[str, Callable] = _ScalarView()


def summarize(R, learned_at=None, **inputs) -> dict:
    """Every declared metric whose inputs are given, and ``left_out``: how many terms each scalar
    metric left out of its mean (NaN cells, differences, concepts or steps; see its ``unit``).

    ``inputs`` are those of :data:`INPUTS` (e.g. ``reference=[...]``); a metric that needs an input
    not given is absent from the result, never zero. Curves and per-concept values are lists.

    >>> s = summarize([[1.0, float("nan")], [0.5, 0.7]])
    >>> s["continual_average"], s["forward_transfer"], s["left_out"]["forward_transfer"]
    (0.7333333333333334, nan, 1)
    >>> "intransigence" in s, "intransigence" in summarize([[1.0]], reference=[0.9])
    (False, True)
    """
    unknown = [k for k in inputs if k not in INPUTS]
    if unknown:
        raise CladValueError(
            f"summarize() got unknown inputs {unknown}; allowed: {', '.join(INPUTS)}"
        )
    R, t = prepare(R, learned_at)
    out: dict = {}
    left_out: dict[str, int] = {}
    for m in list(_REGISTRY.values()):
        if any(inputs.get(n) is None for n in m.needs):
            continue
        args = [inputs[n] for n in m.needs]
        if m.kind == "scalar":
            terms = np.asarray(m.terms(R, *args, learned_at=t), dtype=np.float64)
            out[m.name] = nanmean(terms)
            left_out[m.name] = int(np.isnan(terms).sum())
        else:
            out[m.name] = np.asarray(m.function(R, *args, learned_at=t), dtype=np.float64).tolist()
    out["left_out"] = left_out
    return out
