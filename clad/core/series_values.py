"""The time-series extras of a run. A time-axis base metric is computed on the time points of a
test concept that has a time axis (:attr:`Concept.time <clad.core.concepts.Concept.time>`: window
scores mapped back to points, see :mod:`clad.core.time_axis`). Kept with the run: the base metrics
of every series (channel) of such a concept, and the point scores of one traced series after every step (the report's
figure), kept beside R (:attr:`Evaluation.per_series <clad.core.evaluation.Evaluation.per_series>`,
:attr:`Evaluation.trace <clad.core.evaluation.Evaluation.trace>`)."""

from __future__ import annotations

import warnings
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import CladValueError
from ..metrics import ranges as range_metrics
from ..metrics.base import BaseMetric
from .concepts import Concept
from .scored import Scored

__all__ = [
    "TRACE_POINTS",
    "per_series",
    "per_series_record",
    "series_chance",
    "trace_choice",
    "trace_scores",
    "trace_record",
]

#: points of the per-step trace of one series kept for the report (longer series are summarised)
TRACE_POINTS = 2000


def per_series(
    concept: Concept,
    scored: Scored,
    time_axis: Mapping[str, bool],
    metric: Callable[[str, np.ndarray, Scored], float],
) -> list[list[float]]:
    """Every base metric (the keys of ``time_axis``, each saying whether the metric reads time
    points) on every series of ``concept`` by ``metric(name, y, scored)``; NaN where a series holds
    one class."""
    axis = concept.time
    rows, points = axis.row_bounds(), axis.point_bounds()
    point_scores = axis.points(scored.scores)
    out = []
    for k in range(len(axis.series)):
        y_rows, y_pts = concept.y[rows[k] : rows[k + 1]], axis.y[points[k] : points[k + 1]]
        s_rows = Scored(np.asarray(scored.scores)[rows[k] : rows[k + 1]], scored.threshold)
        s_pts = Scored(point_scores[points[k] : points[k + 1]], scored.threshold)
        row = []
        for m, timed in time_axis.items():
            y, s = (y_pts, s_pts) if timed else (y_rows, s_rows)
            row.append(metric(m, y, s) if np.unique(y).size == 2 else float("nan"))
        out.append(row)
    return out


def series_chance(concept: Concept, decl: BaseMetric, params: Mapping) -> list[float]:
    """:func:`~clad.metrics.base.chance_level` of base metric ``decl`` on every series of a
    time-series concept (its points' labels for a range metric, its rows' otherwise; NaN where a
    series holds one class)."""
    axis = concept.time
    rows, points = axis.row_bounds(), axis.point_bounds()
    out = []
    for k in range(len(axis.series)):
        y = (
            axis.y[points[k] : points[k + 1]]
            if decl.time_axis
            else concept.y[rows[k] : rows[k + 1]]
        )
        try:
            out.append(float(decl.chance_level(y, **params)) if np.unique(y).size == 2 else np.nan)
        except (ValueError, CladValueError):
            out.append(float("nan"))
    return out


def per_series_record(
    test_concepts: Sequence[Concept],
    series_rows: Sequence[Sequence[list | None]],
    decls: Mapping[str, BaseMetric],
    metric_params: Mapping[str, dict],
) -> dict:
    """The run's per-series record: the series of each test concept with a time axis, every base
    metric's values on them after every step (``series_rows``: per step, per test concept, its
    :func:`per_series` or None) and their chance levels (:func:`series_chance`)."""
    timed = [j for j, c in enumerate(test_concepts) if c.time is not None]
    names = {test_concepts[j].name: list(test_concepts[j].time.series) for j in timed}
    values = {
        m: {
            test_concepts[j].name: [
                [row[j][k][i] for k in range(len(row[j]))] for row in series_rows
            ]
            for j in timed
        }
        for i, m in enumerate(decls)
    }
    chance = {
        m: {
            test_concepts[j].name: series_chance(test_concepts[j], decl, metric_params.get(m, {}))
            for j in timed
        }
        for m, decl in decls.items()
    }
    return {"series": names, "values": values, "chance": chance}


def trace_choice(test_concepts: Sequence[Concept]) -> tuple[int, int] | None:
    """The series whose scores are traced, as (test concept, series): the first series holding an
    anomaly range of the first test concept with a time axis (None without one)."""
    for j, c in enumerate(test_concepts):
        if c.time is None:
            continue
        bounds = c.time.point_bounds()
        for k in range(len(c.time.series)):
            if c.time.y[bounds[k] : bounds[k + 1]].any():
                return j, k
        return j, 0
    return None


def trace_scores(concept: Concept, scored: Scored, k: int) -> dict:
    """Series ``k``'s point scores and the threshold (at most :data:`TRACE_POINTS` points: a
    longer series is cut into that many equal buckets, each showing its largest score)."""
    bounds = concept.time.point_bounds()
    scores = concept.time.points(scored.scores)[bounds[k] : bounds[k + 1]]
    return {"scores": _bucket(scores, np.max).tolist(), "threshold": float(scored.threshold)}


def trace_record(concept: Concept, k: int, steps: Sequence[str], traced: Sequence[dict]) -> dict:
    """The traced series ``k`` of ``concept`` (concept, name, values of its first feature, point
    labels as ranges, bucket size) and its scores and threshold after every step (``traced``, one
    :func:`trace_scores` per step)."""
    bounds = concept.time.point_bounds()
    values = concept.time.values(concept.X)[bounds[k] : bounds[k + 1]]
    y = concept.time.y[bounds[k] : bounds[k + 1]]
    step = _bucket_size(y.size)
    return {
        "concept": concept.name,
        "series": concept.time.series[k],
        "n_points": int(y.size),
        "bucket": step,
        "values": [None if not np.isfinite(v) else float(v) for v in _bucket(values, np.nanmean)],
        "ranges": range_metrics.anomaly_ranges(y).tolist(),
        "steps": list(steps),
        "scores": [t["scores"] for t in traced],
        "thresholds": [t["threshold"] for t in traced],
    }


def _bucket_size(n: int) -> int:
    return max(1, -(-n // TRACE_POINTS))


def _bucket(values: np.ndarray, reduce) -> np.ndarray:
    """``values`` cut into consecutive buckets of :func:`_bucket_size` points, each reduced to one."""
    step = _bucket_size(values.size)
    if step == 1:
        return np.asarray(values, dtype=np.float64)
    pad = (-values.size) % step
    padded = np.concatenate([np.asarray(values, dtype=np.float64), np.full(pad, np.nan)]).reshape(
        -1, step
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN bucket stays NaN
        return reduce(padded, axis=1) if reduce is np.nanmean else np.nanmax(padded, axis=1)
