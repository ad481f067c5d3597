"""``pr_auc_normalized``: average precision rescaled by the anomaly rate (the prevalence).

:math:`(AP - p) / (1 - p)` with :math:`p` the fraction of anomalies in ``y``: 0 for a scoreless
detector (its AP is :math:`p`), 1 for a perfect ranking, negative below chance (above
:math:`-p / (1 - p)`, which is unbounded below as :math:`p` nears 1). CAD-Benchmarks reports it as
"Normalized-PR-AUC". Unlike average precision, it compares across concepts whose anomaly rates
differ. The whole declaration of a base metric: this module is all clad needed to add it.

>>> pr_auc_normalized([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
1.0
>>> round(pr_auc_normalized([0, 0, 0, 1], [0.4, 0.1, 0.2, 0.3]), 4)  # AP 1/2, p 1/4: (1/2 - 1/4) / (3/4)
0.3333
"""

from __future__ import annotations

import numpy as np

from .base import BaseMetric, register_base_metric, undefined_on_one_class
from .point import average_precision

__all__ = ["pr_auc_normalized", "PR_AUC_NORMALIZED"]


@undefined_on_one_class
def pr_auc_normalized(y, scores) -> float:
    """Average precision rescaled by the anomaly rate p: (AP - p) / (1 - p)."""
    p = float(np.mean(np.asarray(y) != 0))
    return (average_precision(y, scores) - p) / (1.0 - p)


PR_AUC_NORMALIZED = register_base_metric(
    BaseMetric(
        "pr_auc_normalized",
        pr_auc_normalized,
        "average precision normalised by the anomaly rate",
        bounds=(-np.inf, 1.0),
        chance=0.0,
    )
)
