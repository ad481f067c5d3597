"""The base metrics of rows: ROC-AUC, F1 and average precision, each declared once.

``roc_auc`` and ``average_precision`` read the scores, ``f1`` the thresholded labels (``scores >
threshold``, the same scores: F1 never needs a second scoring pass).

>>> from .base import get_base_metric
>>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
>>> get_base_metric("roc_auc")(y, s), get_base_metric("average_precision")(y, s)
(0.75, 0.8333333333333333)
"""

from __future__ import annotations

import numpy as np

from .base import BaseMetric, register_base_metric, undefined_on_one_class

__all__ = ["roc_auc", "average_precision", "f1", "ROC_AUC", "F1", "AVERAGE_PRECISION"]


@undefined_on_one_class
def roc_auc(y, scores) -> float:
    """ROC-AUC of binary labels ``y`` and finite scores.

    The arithmetic of scikit-learn's ``auc(*roc_curve(y, scores)[:2])`` -- which is what
    ``roc_auc_score`` computes for binary labels -- step for step (descending sort, one point per
    distinct score, collinear points dropped, trapezoidal rule), without its input checks: the
    evaluator has checked the labels once and the detector adapter the scores. Those checks cost
    ten times the computation on a test set of a few hundred rows, and were most of clad's own
    time in a run. The result equals ``roc_auc_score`` bit for bit (tested on tied and untied
    scores).
    """
    # imported here: a report that reads stored metrics needs no scipy.integrate
    from scipy.integrate import trapezoid

    scores = np.asarray(scores)
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
    return float(trapezoid(tps / tps[-1], fps / fps[-1]))


@undefined_on_one_class
def average_precision(y, scores) -> float:
    """Average precision: the step-wise area under the precision-recall curve (``average_precision_score``'s binary case)."""
    # imported here, as below: a report needs no scikit-learn
    from sklearn.metrics import precision_recall_curve

    precision, recall, _ = precision_recall_curve(y, scores)
    return float(-np.sum(np.diff(recall) * np.asarray(precision)[:-1]))


@undefined_on_one_class
def f1(y, labels) -> float:
    """F1 of the flagged rows (``scores > threshold``)."""
    from sklearn.metrics import f1_score

    return float(f1_score(y, labels, zero_division=0.0))


def _anomaly_rate(y) -> float:
    return float(np.mean(np.asarray(y) != 0))


def _flag_every_row(y) -> float:
    from sklearn.metrics import f1_score

    y = np.asarray(y)
    return float(f1_score(y, np.ones_like(y), zero_division=0.0))


ROC_AUC = register_base_metric(BaseMetric("roc_auc", roc_auc, "ROC-AUC", chance=0.5))
F1 = register_base_metric(BaseMetric("f1", f1, "F1", input="labels", chance=_flag_every_row))
AVERAGE_PRECISION = register_base_metric(
    BaseMetric("average_precision", average_precision, "average precision", chance=_anomaly_rate)
)
