"""A base metric declaration's checks (:data:`BASE_METRIC_CHECKS`, :func:`check_base_metric`)."""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from ..metrics.base import BaseMetric, get_base_metric
from .checks import CheckReport, run_checks

__all__ = ["BASE_METRIC_CHECKS", "check_base_metric"]


#: random cases a base metric's bounds are checked on
BOUNDS_CASES = 40


def _metric_cases(seed: int = 0, n_cases: int = BOUNDS_CASES):
    """Random labels (both classes; anomalies in runs, as a time series has them) with random
    scores: some tied, some informative, some reversed; and their labels at a random threshold."""
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n = int(rng.integers(8, 400))
        y = np.zeros(n, dtype=np.int8)
        for _ in range(int(rng.integers(1, 6))):
            start = int(rng.integers(0, n))
            y[start : start + int(rng.integers(1, max(2, n // 8)))] = 1
        if y.all() or not y.any():
            y[:1], y[-1:] = 0, 1
        scores = rng.normal(size=n) + y * rng.normal(scale=2.0)
        if k % 3 == 1:
            scores = np.round(scores, 0)
        threshold = float(np.quantile(scores, rng.uniform(0.0, 1.0)))
        yield y, scores, (scores > threshold).astype(np.int8)


def _input(metric, scores, labels):
    return scores if metric.input == "scores" else labels


def _m_declaration(metric, data=None):
    if not isinstance(metric, BaseMetric):
        return f"expected a clad.metrics.BaseMetric declaration, got {type(metric).__name__}"
    return None


def _m_bounds(metric, data=None):
    lo, hi = metric.bounds
    for y, scores, labels in _metric_cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = metric(y, _input(metric, scores, labels))
        if not np.isfinite(value) or not lo <= value <= hi:
            return (
                f"{value!r} on {y.size} random labels ({int(y.sum())} anomalies) is outside its declared "
                f"bounds [{lo:g}, {hi:g}]"
            )
    return None


def _m_chance(metric, data=None):
    for y, scores, _ in list(_metric_cases(seed=1, n_cases=10)):
        scoreless = (
            np.full(y.size, 0.5) if metric.input == "scores" else np.ones(y.size, dtype=np.int8)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value, chance = metric(y, scoreless), metric.chance_level(y)
        # an optimistic metric's threshold grid on one score flags nothing; its chance level is the
        # better of flagging nothing and flagging everything, so it may lie above that value
        if not (
            np.isclose(value, chance, rtol=1e-9, atol=1e-12)
            or (metric.optimistic and value <= chance)
        ):
            return (
                f"a scoreless detector (every row the same score) gets {value!r} on {y.size} labels "
                f"({int(y.sum())} anomalies), but the declared chance level is {chance!r}"
            )
    return None


def _m_one_class(metric, data=None):
    rng = np.random.default_rng(2)
    scores = rng.normal(size=50)
    additive = getattr(metric, "additive", False)  # a count is defined on one class: finite
    for cls in (0, 1):
        y = np.full(50, cls, dtype=np.int8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = metric(y, _input(metric, scores, (scores > 0).astype(np.int8)))
            except Exception as exc:  # noqa: BLE001 - the evaluator needs a NaN, not an exception
                return f"labels all {cls} raise {type(exc).__name__}: {exc}; expected NaN"
        if additive and not np.isfinite(value):
            return f"labels all {cls} (one class) give {value!r}; expected a finite count (the metric is additive)"
        if not additive and not np.isnan(value):
            return f"labels all {cls} (one class) give {value!r}; expected NaN (the metric is undefined there)"
    return None


#: the base metric checks: name -> function(metric, data) -> failure message or None
BASE_METRIC_CHECKS: dict[str, Callable] = {
    "declaration": _m_declaration,
    "bounds_on_random_inputs": _m_bounds,
    "chance_level_of_a_scoreless_detector": _m_chance,
    "nan_on_one_class": _m_one_class,  # for an additive metric (a count): finite on one class
}


def check_base_metric(metric, raise_on_failure: bool = True) -> CheckReport:
    """Run every base metric check on a declaration (or a name or import path of one).

    >>> check_base_metric("pr_auc_normalized").ok
    True
    """
    decl = metric if isinstance(metric, BaseMetric) else get_base_metric(metric)
    checks = BASE_METRIC_CHECKS if isinstance(decl, BaseMetric) else {"declaration": _m_declaration}
    # a count is defined on one class: the same check, named for what it asks
    if getattr(decl, "additive", False):
        checks = {
            ("defined_on_one_class" if k == "nan_on_one_class" else k): v for k, v in checks.items()
        }
    return run_checks(
        checks, lambda fn: fn(decl), raise_on_failure, f"base metric {getattr(decl, 'name', decl)}"
    )
