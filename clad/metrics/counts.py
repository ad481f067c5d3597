"""Confusion counts as base metrics: ``tp``, ``fp``, ``fn``, ``tn`` of the flagged rows.

A thresholded cell records how many rows it flagged rightly and wrongly; these counts are
*additive* (:attr:`~clad.metrics.base.BaseMetric.additive`): defined on a test concept of one class
too (a count of zero is a count), summed rather than averaged over cells (pooled F1, false- and
missed-alarm rates: :mod:`clad.metrics.pooled`), and their chance level -- what flagging every row
gives (every anomaly a true positive, every normal row a false positive) -- is a reference, not a
floor: a count below it says nothing about reversed scores.

>>> y, flagged = [0, 0, 1, 1, 1], [1, 0, 1, 0, 0]
>>> [get_base_metric(m)(y, flagged) for m in ("tp", "fp", "fn", "tn")]
[1.0, 1.0, 2.0, 1.0]
>>> get_base_metric("fp").chance_level([0, 0, 1])
2.0
"""

from __future__ import annotations

import numpy as np

from .base import BaseMetric, get_base_metric, register_base_metric  # noqa: F401 (doctest)

__all__ = [
    "true_positives",
    "false_positives",
    "false_negatives",
    "true_negatives",
    "TP",
    "FP",
    "FN",
    "TN",
    "COUNT_METRICS",
]

#: the four counts, in the order tables list them
COUNT_METRICS = ("tp", "fp", "fn", "tn")


def _pair(y, labels) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(y) == 1, np.asarray(labels) == 1


def true_positives(y, labels) -> float:
    """True positives: anomalous rows flagged."""
    a, f = _pair(y, labels)
    return float(np.count_nonzero(a & f))


def false_positives(y, labels) -> float:
    """False positives: normal rows flagged (false alarms)."""
    a, f = _pair(y, labels)
    return float(np.count_nonzero(~a & f))


def false_negatives(y, labels) -> float:
    """False negatives: anomalous rows not flagged (missed alarms)."""
    a, f = _pair(y, labels)
    return float(np.count_nonzero(a & ~f))


def true_negatives(y, labels) -> float:
    """True negatives: normal rows not flagged."""
    a, f = _pair(y, labels)
    return float(np.count_nonzero(~a & ~f))


def _anomalies(y) -> float:
    return float(np.count_nonzero(np.asarray(y) == 1))


def _normal(y) -> float:
    return float(np.count_nonzero(np.asarray(y) != 1))


def _count(name, fn, label, chance) -> BaseMetric:
    return register_base_metric(
        BaseMetric(
            name, fn, label, input="labels", bounds=(0.0, np.inf), chance=chance, additive=True
        )
    )


TP = _count("tp", true_positives, "true positives (rows)", _anomalies)
FP = _count("fp", false_positives, "false positives (rows)", _normal)
FN = _count("fn", false_negatives, "false negatives (rows)", 0.0)
TN = _count("tn", true_negatives, "true negatives (rows)", 0.0)
