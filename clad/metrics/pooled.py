"""Pooled aggregation: confusion counts summed over a set of cells of R, then one F1 or rate.

Every continual metric of :mod:`clad.metrics.continual` is a mean of cells. Benchmarks such as SKAB
instead *pool*: they sum the true/false positives and negatives of every test set and compute one
F1, false-alarm rate and missed-alarm rate from the sums, so a large test set weighs more. With the
count base metrics ``tp``, ``fp``, ``fn``, ``tn`` (:mod:`clad.metrics.counts`) in a run's R,
:func:`pooled_counts` sums them over a set of cells and :func:`pooled_scores` computes

* precision ``TP / (TP + FP)``, recall ``TP / (TP + FN)``,
* F1 ``2 TP / (2 TP + FP + FN)`` (SKAB's ``TP / (TP + (FN + FP) / 2)``),
* the false-alarm rate FAR ``FP / (FP + TN)`` and the missed-alarm rate MAR ``FN / (FN + TP)``,

each NaN where its denominator is zero. The cells (:data:`CELLS`): ``"diagonal"`` (each test
concept right after its own training step: the single-concept protocol of most published tables),
``"off_diagonal"`` (a model tested on concepts it was not just trained on), ``"last_row"`` (the
final model on every concept), ``"all"``, or a boolean mask of R's shape.

>>> R = {"tp": [[3, 1], [0, 4]], "fp": [[1, 5], [2, 0]], "fn": [[1, 3], [4, 0]], "tn": [[5, 1], [4, 6]]}
>>> c = pooled_counts(R, "diagonal", steps=["a", "b"], test_names=["a", "b"])
>>> c
{'tp': 7, 'fp': 1, 'fn': 1, 'tn': 11}
>>> {k: round(v, 4) for k, v in pooled_scores(c).items()}
{'f1': 0.875, 'precision': 0.875, 'recall': 0.875, 'far': 0.0833, 'mar': 0.125}
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import CladValueError
from .counts import COUNT_METRICS

__all__ = ["pooled_counts", "pooled_scores", "pooled_record", "cell_mask", "CELLS", "POOLED_SCORES"]

CELLS = ("diagonal", "off_diagonal", "last_row", "all")
#: the scores :func:`pooled_scores` computes, and whether higher is better
POOLED_SCORES = {"f1": True, "precision": True, "recall": True, "far": False, "mar": False}


def cell_mask(
    shape: tuple[int, int],
    cells,
    steps: Sequence[str] | None = None,
    test_names: Sequence[str] | None = None,
) -> np.ndarray:
    """The boolean mask of the cells named by ``cells`` (module docstring) in an R of ``shape``;
    ``"diagonal"`` and ``"off_diagonal"`` pair a step with the test concept of the same name (both
    name lists needed), or row ``i`` with column ``i`` without them."""
    n_rows, n_cols = shape
    if isinstance(cells, (np.ndarray, list, tuple)):
        mask = np.asarray(cells, dtype=bool)
        if mask.shape != tuple(shape):
            raise CladValueError(
                f"cells: a mask of shape {mask.shape}; expected R's shape {tuple(shape)}"
            )
        return mask
    if cells not in CELLS:
        raise CladValueError(
            f"cells={cells!r}; expected one of {', '.join(CELLS)} or a boolean mask of R's shape"
        )
    mask = np.zeros(shape, dtype=bool)
    if cells == "all":
        mask[:] = True
    elif cells == "last_row":
        mask[-1] = True
    else:
        if steps is not None and test_names is not None:
            col = {name: j for j, name in enumerate(test_names)}
            for i, s in enumerate(steps):
                if s in col:
                    mask[i, col[s]] = True
        else:
            idx = np.arange(min(n_rows, n_cols))
            mask[idx, idx] = True
        if cells == "off_diagonal":
            mask = ~mask
    return mask


def pooled_counts(
    R: Mapping[str, np.ndarray],
    cells="diagonal",
    steps: Sequence[str] | None = None,
    test_names: Sequence[str] | None = None,
) -> dict[str, int]:
    """``tp``, ``fp``, ``fn``, ``tn`` summed over ``cells`` of R (``R`` maps each count to its
    matrix; NaN cells, e.g. an undefined step, are left out)."""
    missing = [m for m in COUNT_METRICS if m not in R]
    if missing:
        raise CladValueError(
            f"pooled counts need the base metrics {', '.join(COUNT_METRICS)} in R; missing "
            f"{', '.join(missing)} (add them to base_metrics)"
        )
    mats = {m: np.asarray(R[m], dtype=np.float64) for m in COUNT_METRICS}
    mask = cell_mask(mats["tp"].shape, cells, steps, test_names)
    return {m: int(np.nansum(v[mask])) for m, v in mats.items()}


def _ratio(a: float, b: float) -> float:
    return float(a / b) if b else float("nan")


def pooled_scores(counts: Mapping[str, int]) -> dict[str, float]:
    """F1, precision, recall, false-alarm rate and missed-alarm rate of pooled counts (fractions, not %)."""
    tp, fp, fn, tn = (counts[m] for m in COUNT_METRICS)
    return {
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "far": _ratio(fp, fp + tn),
        "mar": _ratio(fn, fn + tp),
    }


def pooled_record(
    R: Mapping[str, np.ndarray], steps: Sequence[str], test_names: Sequence[str]
) -> dict:
    """The counts and :func:`pooled_scores` of every named set of cells (:data:`CELLS`), as a run
    records them (``extras["pooled"]``; NaN, for JSON, as None).

    >>> R = {"tp": [[3, 1], [0, 4]], "fp": [[1, 5], [2, 0]], "fn": [[1, 3], [4, 0]], "tn": [[5, 1], [4, 6]]}
    >>> pooled_record(R, ["a", "b"], ["a", "b"])["diagonal"]["f1"]
    0.875
    """
    out = {}
    for cells in CELLS:
        counts = pooled_counts(R, cells, steps, test_names)
        scores = {k: (None if v != v else v) for k, v in pooled_scores(counts).items()}
        out[cells] = {**counts, **scores}
    return out
