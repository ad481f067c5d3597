"""One declaration per base metric, read by every consumer.

A *base metric* fills the cells of R: a function of a test concept's labels and its scores (or
its thresholded labels, ``scores > threshold``). Each is declared once, as a :class:`BaseMetric`:
its function, label, bounds, direction, chance level (what a scoreless detector gets), parameters
with their checks, whether it reads a concept's time axis, and whether it is optimistic (its
threshold chosen on the test labels). The spec checks, the evaluator, the chance rows, the
intervals, the report's labels, the exports and ``clad list`` read the declaration.

Built-in names: ``roc_auc``, ``f1``, ``average_precision`` (:mod:`clad.metrics.point`), the range
metrics of time series (:mod:`clad.metrics.range_base`) and ``pr_auc_normalized``
(:mod:`clad.metrics.pr_auc_normalized`). A spec names a base metric of its own by import path,
``"package.module:NAME"`` where ``NAME`` is a :class:`BaseMetric`; its values are stored under that
path, so any process that can import it reads its declaration (:func:`get_base_metric`).

>>> import numpy as np
>>> m = BaseMetric("hits_at_top", lambda y, s: float(np.asarray(y)[np.argmax(s)]), "hit at the top",
...                chance=lambda y: float(np.mean(y)))
>>> m([0, 1, 0], [0.1, 0.9, 0.2]), m.chance_level([0, 0, 0, 1])
(1.0, 0.25)
>>> get_base_metric("roc_auc").label, get_base_metric("range_f1_oracle").optimistic
('ROC-AUC', True)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Sequence

import numpy as np

from ..errors import CladTypeError, CladValueError

__all__ = [
    "BaseMetric",
    "INPUT_KINDS",
    "BASE_METRIC_REGISTRY",
    "register_base_metric",
    "unregister_base_metric",
    "get_base_metric",
    "find_base_metric",
    "base_metric_names",
    "base_metric_problem",
    "check_base_metrics",
    "check_metric_params",
    "chance_level",
    "base_metric_label",
    "base_metric_shown",
    "base_metric_bounds",
    "integer_at_least",
    "unit_interval",
    "undefined_on_one_class",
    "METRIC_ALIASES",
    "metric_did_you_mean",
]

#: what a base metric's function reads beside the labels: the scores, or the thresholded labels
INPUT_KINDS = ("scores", "labels")


@dataclass(frozen=True)
class BaseMetric:
    """The declaration of one base metric.

    ``function(y, x, **params) -> float`` computes it on binary labels ``y`` and ``x``: the scores
    (``input="scores"``, higher = more anomalous) or the thresholded labels (``input="labels"``,
    ``scores > threshold``). It returns NaN when ``y`` holds one class (:func:`undefined_on_one_class`).
    ``chance(y, **params)`` is what a scoreless detector (every row the same score: every row
    flagged) gets on ``y``; ``bounds`` the range of its values; ``params`` maps each parameter it
    takes to a check ``check(metric, key, value) -> value`` (:func:`integer_at_least`,
    :func:`unit_interval`); ``time_axis``: computed on a concept's time points when it has a time
    axis; ``optimistic``: its threshold is chosen on the test labels (no detector can do that);
    ``additive``: a count (true positives, false alarms, ...): defined on labels of one class,
    summed over cells by pooled aggregation (:mod:`clad.metrics.pooled`), its chance level a
    reference and not a floor (no reversed-scores warning);
    ``version``: raised by one whenever a change of the declaration or its function changes a value
    it computes (it enters every run's result key, :mod:`clad.engine.result_key`, so a bundle's
    rows computed with another version are refused, not mixed in).
    """

    name: str
    function: Callable[..., float]
    label: str
    input: str = "scores"
    bounds: tuple[float, float] = (0.0, 1.0)
    higher_is_better: bool = True
    chance: Callable[..., float] | float = 0.5
    params: Mapping[str, Callable] = field(default_factory=dict)
    time_axis: bool = False
    optimistic: bool = False
    additive: bool = False
    version: int = 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise CladValueError(f"BaseMetric: name={self.name!r}; expected a non-empty string")
        if not callable(self.function):
            raise CladValueError(
                f"base metric {self.name}: function={self.function!r} is not callable"
            )
        if self.input not in INPUT_KINDS:
            raise CladValueError(
                f"base metric {self.name}: input={self.input!r}; expected one of {', '.join(INPUT_KINDS)}"
            )
        lo, hi = (float(b) for b in self.bounds)
        if not lo < hi:
            raise CladValueError(
                f"base metric {self.name}: bounds={self.bounds!r}; expected (low, high) with low < high"
            )
        object.__setattr__(self, "bounds", (lo, hi))
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise CladValueError(
                f"base metric {self.name}: version={self.version!r}; expected an integer >= 1"
            )
        if not callable(self.chance):
            level = float(self.chance)
            object.__setattr__(self, "chance", lambda y, **params: level)
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def __call__(self, y, x, **params) -> float:
        """The metric of labels ``y`` and scores (or thresholded labels) ``x``."""
        return float(self.function(y, x, **params))

    def checked(self, y, x, **params) -> float:
        """The metric of ``y`` and ``x``, held to its declaration: one real number (NaN where
        undefined) within its bounds, else an error naming the metric and what it returned."""
        return self.check_value(self.function(y, x, **params))

    def check_value(self, value) -> float:
        """``value`` as the float this metric declares, or an error naming the metric.

        >>> m = BaseMetric("m", lambda y, x: 0.0, "m")
        >>> m.check_value(1.0), m.check_value(float("nan"))
        (1.0, nan)
        >>> m.check_value(5.4)
        Traceback (most recent call last):
        clad.errors.CladValueError: base metric m returned 5.4, outside its declared bounds [0, 1]
        >>> m.check_value([0.5, 0.5])
        Traceback (most recent call last):
        clad.errors.CladTypeError: base metric m returned list [0.5, 0.5]; expected one real number (NaN where undefined)
        """
        v = np.asarray(value) if not isinstance(value, (str, bytes)) else None
        if v is None or v.ndim != 0 or v.dtype.kind not in "biuf":
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            raise CladTypeError(
                f"base metric {self.name} returned {type(value).__name__} {shown}; expected one real "
                "number (NaN where undefined)"
            )
        out = float(v)
        lo, hi = self.bounds
        slack = 1e-9 * (hi - lo) if np.isfinite(hi - lo) else 0.0
        if np.isinf(out) or not (np.isnan(out) or lo - slack <= out <= hi + slack):
            raise CladValueError(
                f"base metric {self.name} returned {out!r}, outside its declared bounds "
                f"[{lo:g}, {hi:g}]"
            )
        return out

    def chance_level(self, y, **params) -> float:
        """What a scoreless detector gets on labels ``y``."""
        return float(self.chance(np.asarray(y), **params))

    @property
    def shown(self) -> str:
        """The name as tables show it: an optimistic metric says so."""
        return f"{self.name} (optimistic: oracle threshold)" if self.optimistic else self.name

    @property
    def description(self) -> str:
        """The first line of the function's docstring."""
        return ((self.function.__doc__ or "").strip().splitlines() or [""])[0]


_REGISTRY: dict[str, BaseMetric] = {}
#: every declared base metric by name, in declaration order (read-only view; see :func:`register_base_metric`)
BASE_METRIC_REGISTRY: Mapping[str, BaseMetric] = MappingProxyType(_REGISTRY)
#: base metrics named by import path, resolved once per process
_IMPORTED: dict[str, BaseMetric] = {}


def register_base_metric(metric: BaseMetric, replace: bool = False) -> BaseMetric:
    """Add a declaration under its name (a name already declared is an error unless ``replace``)."""
    if not isinstance(metric, BaseMetric):
        raise CladValueError(
            f"register_base_metric() takes a BaseMetric declaration, got {type(metric).__name__}"
        )
    if metric.name in _REGISTRY and not replace and _REGISTRY[metric.name] is not metric:
        raise CladValueError(
            f"a base metric named {metric.name!r} is already declared; pick another name or replace=True"
        )
    _REGISTRY[metric.name] = metric
    return metric


def unregister_base_metric(name: str) -> None:
    """Remove a declaration (e.g. one a test added)."""
    _REGISTRY.pop(name, None)
    _IMPORTED.pop(name, None)


#: other tools' names of clad's base metrics (scikit-learn's, papers'): named in the did-you-mean
METRIC_ALIASES = {
    "auroc": "roc_auc",
    "auc": "roc_auc",
    "roc": "roc_auc",
    "rocauc": "roc_auc",
    "auc_roc": "roc_auc",
    "roc_auc_score": "roc_auc",
    "f1_score": "f1",
    "f1score": "f1",
    "f_1": "f1",
    "ap": "average_precision",
    "aupr": "average_precision",
    "auprc": "average_precision",
    "average_precision_score": "average_precision",
    "vus": "vus_pr",
}


def metric_did_you_mean(name) -> str:
    """``" (did you mean 'x'?)"`` for an unknown base metric: the metric another tool's name means
    (``auroc`` -> ``roc_auc``, ``f1_score`` -> ``f1``), else the closest spelling.

    >>> metric_did_you_mean("auroc"), metric_did_you_mean("F1_Score")
    (" (did you mean 'roc_auc'? clad's name for auroc)", " (did you mean 'f1'? clad's name for F1_Score)")
    """
    from ..registry import did_you_mean

    alias = METRIC_ALIASES.get(str(name).strip().lower().replace("-", "_").replace(" ", "_"))
    if alias is not None and alias in _REGISTRY:
        return f" (did you mean {alias!r}? clad's name for {name})"
    return did_you_mean(str(name), _REGISTRY)


def _is_path(name: str) -> bool:
    return ":" in name or "." in name


def get_base_metric(name: str) -> BaseMetric:
    """The declaration of base metric ``name``: a declared name, or an import path
    ``"package.module:NAME"`` to a :class:`BaseMetric` (a clear error, with a suggestion, otherwise).

    >>> get_base_metric("roc_acu")
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: unknown base metric 'roc_acu' (did you mean 'roc_auc'?); declared: roc_auc, f1, average_precision, vus_pr, vus_roc, pa_f1, event_f1, range_f1, affiliation_f1, pa_f1_oracle, event_f1_oracle, range_f1_oracle, affiliation_f1_oracle, pr_auc_normalized, tp, fp, fn, tn, nab_standard, nab_low_fp, nab_low_fn, or an import path 'package.module:NAME'
    """
    if isinstance(name, BaseMetric):
        return name
    if not isinstance(name, str):
        raise CladValueError(
            f"base metric {name!r}: expected a name or an import path 'package.module:NAME'"
        )
    found = _REGISTRY.get(name) or _IMPORTED.get(name)
    if found is not None:
        return found
    from ..registry import import_object

    if not _is_path(name):
        raise CladValueError(
            f"unknown base metric {name!r}{metric_did_you_mean(name)}; declared: "
            f"{', '.join(_REGISTRY)}, or an import path 'package.module:NAME'"
        )
    obj = import_object(name, "base metric")
    if not isinstance(obj, BaseMetric):
        raise CladValueError(
            f"base metric {name!r} is a {type(obj).__name__}; expected a "
            "clad.metrics.BaseMetric declaration"
        )
    _IMPORTED[name] = obj
    return obj


def find_base_metric(name: str) -> BaseMetric | None:
    """:func:`get_base_metric`, or None where ``name`` cannot be resolved (a results file of
    another version, a plug-in this process cannot import)."""
    try:
        return get_base_metric(name)
    except (CladValueError, TypeError):
        return None


def base_metric_names() -> list[str]:
    """The declared base metrics' names, in declaration order."""
    return list(_REGISTRY)


def base_metric_problem(name) -> str | None:
    """Why ``name`` names no base metric (None when it does), for a spec's problem list."""
    try:
        get_base_metric(name)
    except CladValueError as exc:
        return str(exc)
    return None


def check_base_metrics(names) -> tuple[str, ...]:
    """Validate a list of base metric names (non-empty, each declared or an import path to a
    declaration, no duplicates)."""
    if isinstance(names, str):
        names = [names]
    try:
        names = list(names)
    except TypeError:
        raise CladValueError(f"base_metrics must be a list of names, got {names!r}") from None
    if not names:
        raise CladValueError(f"base_metrics is empty; choose from {', '.join(_REGISTRY)}")
    for n in names:
        get_base_metric(n)
    if len(set(names)) != len(names):
        raise CladValueError(f"base_metrics lists a name twice: {names!r}")
    return tuple(names)


def integer_at_least(low: int, high: int | None = None) -> Callable:
    """A parameter check: an integer ``>= low`` (and ``<= high`` when given: a bound on the memory
    and time a value can ask for)."""

    def check(metric, key, value):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < low
            or (high is not None and value > high)
        ):
            allowed = (
                f"an integer >= {low}" if high is None else f"an integer from {low} to {high:,}"
            )
            raise CladValueError(f"base metric {metric}: {key}={value!r}; expected {allowed}")
        return int(value)

    return check


def unit_interval(metric, key, value):
    """A parameter check: a number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise CladValueError(f"base metric {metric}: {key}={value!r}; expected a number in [0, 1]")
    return float(value)


def check_metric_params(params, base_metrics: Sequence[str] | None = None) -> dict[str, dict]:
    """Validate the parameters of base metrics: ``{metric: {parameter: value}}``, each metric one
    of ``base_metrics`` (when given) and declaring the parameters (:attr:`BaseMetric.params`).

    >>> check_metric_params({"vus_pr": {"window": 50}})
    {'vus_pr': {'window': 50}}
    >>> check_metric_params({"vus_pr": {"widow": 50}})
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: base metric vus_pr: unknown parameter 'widow' (did you mean 'window'?); it takes: window, thresholds
    """
    from ..registry import did_you_mean

    if params is None:
        return {}
    if not isinstance(params, dict):
        raise CladValueError(
            f"base_metric_params={params!r}; expected a table {{metric = {{parameter = value}}}}"
        )
    out = {}
    for metric, values in params.items():
        decl = find_base_metric(metric)
        if decl is None:
            raise CladValueError(
                f"base_metric_params: unknown base metric {metric!r}{metric_did_you_mean(metric)}"
            )
        if base_metrics is not None and metric not in base_metrics:
            raise CladValueError(
                f"base_metric_params: {metric!r} is not one of the base metrics ({', '.join(base_metrics)})"
            )
        allowed = decl.params
        if not allowed:
            raise CladValueError(
                f"base_metric_params: base metric {metric!r} takes no parameter; those that do: "
                f"{', '.join(n for n, m in _REGISTRY.items() if m.params)}"
            )
        if not isinstance(values, dict):
            raise CladValueError(
                f"base_metric_params.{metric}={values!r}; expected a table of parameters "
                f"({', '.join(allowed)})"
            )
        checked = {}
        for key, value in values.items():
            if key not in allowed:
                raise CladValueError(
                    f"base metric {metric}: unknown parameter {key!r}{did_you_mean(str(key), allowed)}; "
                    f"it takes: {', '.join(allowed)}"
                )
            checked[key] = allowed[key](metric, key, value)
        out[metric] = checked
    return out


def chance_level(name: str, y, **params) -> float:
    """What a detector without scores (every row the same score) gets for base metric ``name`` on
    labels ``y`` (its declared chance level): ROC-AUC 0.5, average precision the anomaly rate, F1
    of flagging every row, and for the range metrics :func:`clad.metrics.ranges.chance_level` (a
    time-series concept's point labels are the ones to give for those).

    >>> chance_level("average_precision", [0, 0, 0, 1]), chance_level("f1", [0, 0, 0, 1])
    (0.25, 0.4)
    """
    return get_base_metric(name).chance_level(y, **params)


def base_metric_bounds(name: str) -> tuple[float, float]:
    """The range of base metric ``name``; unbounded for one this process does not know.

    >>> base_metric_bounds("roc_auc"), base_metric_bounds("not_declared")
    ((0.0, 1.0), (-inf, inf))
    """
    decl = find_base_metric(name)
    return decl.bounds if decl is not None else (-np.inf, np.inf)


def base_metric_label(name: str) -> str:
    """The label of a base metric (the name itself for one this process does not know).

    >>> base_metric_label("range_f1_oracle")
    'range F1 at the oracle threshold (optimistic)'
    """
    decl = find_base_metric(name)
    return decl.label if decl is not None else name


def base_metric_shown(name: str) -> str:
    """A base metric's name as tables and figures show it: an optimistic one (its threshold chosen
    on the test labels) is marked.

    >>> base_metric_shown("range_f1_oracle"), base_metric_shown("range_f1")
    ('range_f1_oracle (optimistic: oracle threshold)', 'range_f1')
    """
    decl = find_base_metric(name)
    return decl.shown if decl is not None else name


def undefined_on_one_class(fn: Callable[..., float]) -> Callable[..., float]:
    """Decorate a base metric's function so that labels of one class give NaN."""

    @functools.wraps(fn)
    def metric(y, x, **params) -> float:
        labels = np.asarray(y)
        if not labels.size or labels.min() == labels.max():  # one class
            return float("nan")
        return fn(y, x, **params)

    return metric
