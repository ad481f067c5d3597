"""One declaration per *base* metric: the score of one test concept that fills a cell of R.

A base metric (``roc_auc``, ``f1``, ``average_precision``, and any other registered with
:func:`base_metric`) is a function ``(y_true, scored) -> float`` of a concept's labels and the
detector's :class:`~clad.strategies.Scored` output, declared with

* ``label``: its short name on pages (``ROC-AUC``);
* ``bounds``: the range its values can take (``(0, 1)`` for the three built-in ones). Every
  continual metric of R inherits a range from it (see :meth:`clad.metrics.Metric.bounds`) and no
  interval a report shows leaves that range;
* ``chance``: the value a *scoreless* detector gets on a test concept, a function of the concept's
  labels alone (ROC-AUC 0.5; average precision the anomaly rate; F1 of flagging every row
  :math:`2p/(1+p)` at anomaly rate :math:`p`). Every score is shown beside it.

The evaluator (:mod:`clad.core.evaluation`) reads this registry: registering a base metric here is
all it takes for a spec's ``base_metrics`` to accept it, R to hold it and reports to show its chance
level.

>>> y = np.array([0] * 90 + [1] * 10)
>>> [round(chance_level(m, y), 4) for m in ("roc_auc", "average_precision", "f1")]
[0.5, 0.1, 0.1818]
>>> get_base_metric("f1").bounds
(0.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterator

import numpy as np

from ..errors import CladValueError

__all__ = ["BaseMetric", "BASE_REGISTRY", "BASE_METRIC_FUNCTIONS", "base_metric", "get_base_metric",
           "base_bounds", "chance_level", "chance_levels", "anomaly_rate", "UNBOUNDED"]

#: the range of a value nothing is declared about
UNBOUNDED = (-np.inf, np.inf)


@dataclass(frozen=True)
class BaseMetric:
    """The declaration of one base metric (see the module)."""

    name: str
    function: Callable[[np.ndarray, Any], float]
    label: str
    bounds: tuple[float, float] = (0.0, 1.0)
    chance: Callable[[np.ndarray], float] | None = None
    higher_is_better: bool = True

    @property
    def description(self) -> str:
        """The first line of the function's docstring."""
        return ((self.function.__doc__ or "").strip().splitlines() or [""])[0]


_BASE: dict[str, BaseMetric] = {}
#: every declared base metric by name, in declaration order (read-only view)
BASE_REGISTRY: Mapping[str, BaseMetric] = MappingProxyType(_BASE)


def base_metric(name: str, label: str, *, bounds: tuple[float, float] = (0.0, 1.0),
                chance: Callable[[np.ndarray], float] | None = None, higher_is_better: bool = True):
    """Declare the decorated function ``(y_true, scored) -> float`` as base metric ``name``.

    ``chance(y_true)`` is what a detector without information gets on labels ``y_true`` (None when
    no such value is defined); ``bounds`` the smallest and largest values the metric can take.
    """
    lo, hi = (float(b) for b in bounds)
    if not lo < hi:
        raise CladValueError(f"base metric {name!r}: bounds={bounds!r} must be (low, high) with low < high")
    if chance is not None and not callable(chance):
        raise CladValueError(f"base metric {name!r}: chance={chance!r} must be a function of the labels or None")

    def decorate(fn: Callable) -> Callable:
        if name in _BASE and _BASE[name].function is not fn:
            raise CladValueError(f"a base metric named {name!r} is already declared ({_BASE[name].function.__module__})")
        _BASE[name] = BaseMetric(name, fn, label, (lo, hi), chance, bool(higher_is_better))
        return fn

    return decorate


class _Functions(Mapping):
    """``{name: function}`` of the declared base metrics, always in step with the registry."""

    def __getitem__(self, name: str) -> Callable:
        return _BASE[name].function

    def __iter__(self) -> Iterator[str]:
        return iter(_BASE)

    def __len__(self) -> int:
        return len(_BASE)

    def __repr__(self) -> str:
        return f"BASE_METRICS({', '.join(self)})"


#: ``{name: function(y_true, scored)}`` of every declared base metric (a live view)
BASE_METRIC_FUNCTIONS: Mapping[str, Callable] = _Functions()


def get_base_metric(name: str) -> BaseMetric:
    """The declaration of base metric ``name`` (a clear error for an unknown name)."""
    try:
        return _BASE[name]
    except KeyError:
        from ..registry import did_you_mean

        raise CladValueError(f"unknown base metric {name!r}{did_you_mean(str(name), _BASE)}; declared: "
                             f"{', '.join(_BASE)}") from None


def base_bounds(name: str) -> tuple[float, float]:
    """The declared range of base metric ``name``; unbounded for a name not declared here (a
    results file from another version, a metric of a plug-in not imported).

    >>> base_bounds("roc_auc"), base_bounds("not_declared")
    ((0.0, 1.0), (-inf, inf))
    """
    m = _BASE.get(name)
    return m.bounds if m is not None else UNBOUNDED


def anomaly_rate(y_true) -> float:
    """The share of anomalies (label 1) in ``y_true``; NaN for no labels.

    >>> anomaly_rate([0, 0, 0, 1])
    0.25
    """
    y = np.asarray(y_true)
    return float(np.mean(y == 1)) if y.size else float("nan")


def _two_classes(y_true) -> bool:
    y = np.asarray(y_true)
    return bool(y.size) and 0 < np.count_nonzero(y == 1) < y.size


def chance_level(name: str, y_true) -> float:
    """What a scoreless detector gets for base metric ``name`` on labels ``y_true``: NaN when the
    metric declares no chance level or the labels have a single class (the cell is then NaN too).

    >>> chance_level("f1", [0] * 9 + [1]), chance_level("roc_auc", [0, 0])
    (0.18181818181818182, nan)
    """
    m = _BASE.get(name)
    if m is None or m.chance is None or not _two_classes(y_true):
        return float("nan")
    return float(m.chance(np.asarray(y_true)))


def chance_levels(name: str, concepts_y) -> list[float]:
    """:func:`chance_level` of each test concept's labels, in order."""
    return [chance_level(name, y) for y in concepts_y]


def roc_auc_chance(y_true) -> float:
    """A detector that ranks rows at random (or gives every row the same score) has ROC-AUC 0.5."""
    return 0.5


def average_precision_chance(y_true) -> float:
    """A random ranking's expected average precision is the anomaly rate (the precision of any cut)."""
    return anomaly_rate(y_true)


def f1_chance(y_true) -> float:
    """F1 of flagging every row: precision ``p`` (the anomaly rate), recall 1, so ``2p / (1 + p)``."""
    p = anomaly_rate(y_true)
    return 2 * p / (1 + p)


@base_metric("roc_auc", "ROC-AUC", bounds=(0.0, 1.0), chance=roc_auc_chance)
def _roc_auc(y, scored) -> float:
    """ROC-AUC of binary labels ``y`` (both classes present) and finite scores.

    The arithmetic of scikit-learn's ``auc(*roc_curve(y, scores)[:2])`` -- which is what
    ``roc_auc_score`` computes for binary labels -- step for step (descending sort, one point per
    distinct score, collinear points dropped, trapezoidal rule), without its input checks: the
    evaluator has checked the labels once and the detector adapter the scores. Those checks cost
    ten times the computation on a test set of a few hundred rows, and were most of clad's own
    time in a run. The result equals ``roc_auc_score`` bit for bit (tested on tied and untied
    scores).
    """
    scores = np.asarray(scored.scores)
    order = np.argsort(scores, kind="stable")[::-1]
    ranked = scores[order]
    thresholds = np.append(np.flatnonzero(np.diff(ranked)), ranked.size - 1)
    tps = np.cumsum(np.asarray(y)[order], dtype=np.float64)[thresholds]
    fps = 1 + thresholds.astype(np.float64) - tps
    if fps.shape[0] > 2:
        corner = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        keep = np.flatnonzero(np.concatenate(([True], corner, [True])))
        fps, tps = fps[keep], tps[keep]
    fps = np.concatenate(([0.0], fps))
    tps = np.concatenate(([0.0], tps))
    from scipy.integrate import trapezoid

    return float(trapezoid(tps / tps[-1], fps / fps[-1]))


@base_metric("f1", "F1", bounds=(0.0, 1.0), chance=f1_chance)
def _f1(y, scored) -> float:
    """F1 of the detector's own labels (``scores > threshold_``)."""
    from sklearn.metrics import f1_score

    return float(f1_score(y, scored.labels, zero_division=0.0))


@base_metric("average_precision", "AP", bounds=(0.0, 1.0), chance=average_precision_chance)
def _average_precision(y, scored) -> float:
    """Average precision: the step-wise area under the precision-recall curve of the scores."""
    from sklearn.metrics import precision_recall_curve

    # average_precision_score's binary case: the step-wise area under precision_recall_curve
    precision, recall, _ = precision_recall_curve(y, scored.scores)
    return float(-np.sum(np.diff(recall) * np.asarray(precision)[:-1]))
