"""Checks of a run's inputs and outputs that warn rather than stop it: data that makes the numbers
meaningless (:func:`check_data`, before the run) and scores that look reversed
(:func:`check_reversed`, after it)."""

from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np

from ..errors import RunWarning
from ..metrics.base import find_base_metric

__all__ = ["check_reversed", "check_data"]


def check_reversed(
    R: dict[str, np.ndarray],
    steps: Sequence[str],
    test_names: Sequence[str],
    chance: Mapping[str, Sequence[float]] | None = None,
) -> None:
    """Warn (:class:`~clad.errors.RunWarning`) when a base metric is below its chance level on most
    concepts right after they were learned, and below it on average over them (the cells of R where the step and the test concept have
    the same name): a detector ranks anomalies *lower* than normal rows there, so its scores may be
    reversed (clad expects higher = more anomalous). ``chance`` gives each base metric's chance level
    per test concept (:func:`~clad.core.chance.concept_chance_level`); without it, ROC-AUC against 0.5."""
    position = {name: j for j, name in enumerate(test_names)}
    levels = dict(chance or {})
    if not levels and "roc_auc" in R:
        levels = {"roc_auc": [0.5] * len(test_names)}
    for name, level in levels.items():
        decl = find_base_metric(name)
        if name not in R or level is None or decl is None or decl.optimistic or decl.additive:
            continue
        pairs = [
            (R[name][i, position[s]], level[position[s]])
            for i, s in enumerate(steps)
            if s in position
        ]
        pairs = [(v, c) for v, c in pairs if np.isfinite(v) and np.isfinite(c)]
        if not pairs:
            continue
        below = sum((v < c) if decl.higher_is_better else (v > c) for v, c in pairs)
        mean_v, mean_c = np.mean([v for v, _ in pairs]), np.mean([c for _, c in pairs])
        # most concepts below chance *and* their mean below the mean chance: a mean above chance
        # (a few good concepts) contradicts "reversed", so nothing is said
        mean_below = mean_v < mean_c if decl.higher_is_better else mean_v > mean_c
        if below > len(pairs) / 2 and mean_below:
            shown = "ROC-AUC below 0.5" if name == "roc_auc" else f"{name} below chance"
            warnings.warn(
                f"{shown} on {below} of {len(pairs)} concepts just learned (mean "
                f"{mean_v:.3f}, chance {mean_c:.3f}): are the scores reversed? clad expects higher "
                "scores for more anomalous rows",
                RunWarning,
                stacklevel=2,
            )
            return


#: detector parameters that a training step needs more rows than
_ROW_PARAMETERS = ("n_neighbors", "n_clusters", "n_components")
#: a feature whose spread is at most this fraction of its magnitude (plus an absolute floor) is near-constant
_NEAR_CONSTANT = 1e-9


def _rows_needed(detector) -> tuple[int, str]:
    """The fewest training rows ``detector`` can learn from, and why: 2, or one more than its
    largest ``n_neighbors`` / ``n_clusters`` / ``n_components`` parameter."""
    needed, why = 2, "a detector needs at least 2 rows"
    params = detector.get_params(deep=True) if hasattr(detector, "get_params") else {}
    for key, value in params.items():
        if (
            key.rsplit("__", 1)[-1] in _ROW_PARAMETERS
            and isinstance(value, (int, np.integer))
            and value + 1 > needed
        ):
            needed, why = int(value) + 1, f"the detector's {key.rsplit('__', 1)[-1]}={int(value)}"
    return needed, why


def check_data(dataset, detector=None, batch_size: int | None = None) -> None:
    """Warn (:class:`~clad.errors.RunWarning`) before a run about data that makes its numbers
    meaningless: constant or near-constant features in a training concept, a training concept with
    fewer rows than ``detector`` needs, finite values beyond float32's range (a detector that casts
    to float32 sees infinities), and a ``batch_size`` at least as long as the whole training stream
    (concept-agnostic: one batch, so every row of R is the same)."""
    big = float(np.finfo(np.float32).max)
    needed, why = _rows_needed(detector)
    flat_concepts: list[str] = []  # constant features: one warning for the whole dataset
    for c in dataset.train:
        X = np.asarray(c.X)
        if len(X) < needed:
            warnings.warn(
                f"training concept {c.name!r} has {len(X)} row(s); {why}, so what it learns there "
                "means little",
                RunWarning,
                stacklevel=2,
            )
        if len(X) > 1 and np.issubdtype(X.dtype, np.number):
            rows = X.reshape(len(X), -1)  # windows (rows x steps x channels): every value of a row
            spread = np.ptp(rows, axis=0).astype(np.float64)
            scale = np.abs(rows).max(axis=0).astype(np.float64)
            flat = np.flatnonzero(spread <= _NEAR_CONSTANT * np.maximum(scale, 1.0))
            if flat.size:
                shown = ", ".join(map(str, flat[:10])) + (", ..." if flat.size > 10 else "")
                what = (
                    "feature(s)"
                    if X.ndim <= 2
                    else f"value(s) per window ({' x '.join(map(str, X.shape[1:]))}, flattened)"
                )
                flat_concepts.append(
                    f"{c.name!r}: {flat.size} of {rows.shape[1]} {what} constant or near-constant "
                    f"(column {shown})"
                )
    if len(flat_concepts) == 1:
        warnings.warn(
            f"training concept {flat_concepts[0]}; a detector learns nothing from them",
            RunWarning,
            stacklevel=2,
        )
    elif flat_concepts:
        listed = "; ".join(flat_concepts[:5]) + (
            f"; and {len(flat_concepts) - 5} more" if len(flat_concepts) > 5 else ""
        )
        warnings.warn(
            f"{len(flat_concepts)} of {len(dataset.train)} training concepts have constant or "
            f"near-constant features, which a detector learns nothing from: {listed}",
            RunWarning,
            stacklevel=2,
        )
    for c in (*dataset.train, *dataset.test):
        X = np.asarray(c.X)
        if np.issubdtype(X.dtype, np.floating) and X.size:
            with np.errstate(invalid="ignore"):
                over = int(np.count_nonzero(np.isfinite(X) & (np.abs(X) > big)))
            if over:
                warnings.warn(
                    f"concept {c.name!r}: {over} value(s) beyond float32's range (|x| > {big:.3g}) become "
                    "non-finite when a detector casts to float32; rescale the features",
                    RunWarning,
                    stacklevel=2,
                )
    if batch_size is not None:
        stream = sum(len(c.X) for c in dataset.train)
        if stream and int(batch_size) >= stream:
            warnings.warn(
                f"batch_size={batch_size} is at least the whole training stream ({stream} rows): one "
                "batch, so every row of R is the same",
                RunWarning,
                stacklevel=2,
            )
