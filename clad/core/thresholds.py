"""Threshold policies: how every detector's labels (``scores > threshold``) are made.

The thresholded base metrics (F1, range F1, event F1, ...: those declared ``input="labels"``) read
labels, and the labels depend on a threshold. Two policies, one for every detector of a spec:

* ``"own"`` (the default): each detector's own threshold -- PyOD's ``threshold_`` from its
  ``contamination``, scikit-learn's ``offset_``, clad's autoencoders' training quantile, a
  plug-in's own. Two detectors' F1 are then measured at different false-positive rates.
* ``{"fpr": 0.05}``: the threshold is the score quantile at that false-positive rate on normal
  rows the evaluation never scores: a *calibration split* of each training concept (a share
  ``fraction`` of its normal rows, 0.2 by default), drawn from the run seed and taken out of the
  training concept before anything is trained, as a tuning split is. After a training step the
  threshold is the ``1 - fpr`` quantile of the model's scores on the calibration rows of the concept
  just learned, scored as the test concept is (with its concept id where the scenario gives one);
  the same rule for every detector and strategy. (Per-concept experts in a concept-aware scenario
  therefore have each expert's threshold set on the newest concept's rows.)

Whatever the policy, every thresholded cell records the false-positive rate it reached on the
normal rows of its test concept (:func:`realised_fpr`): under ``{"fpr": 0.05}`` it starts near 0.05
on the concept just learned, and how it drifts on past concepts after later steps is a forgetting
of calibration that no continual metric shows.

>>> check_threshold(None), check_threshold("own"), check_threshold({"fpr": 0.05})
('own', 'own', {'fpr': 0.05, 'fraction': 0.2})
>>> import numpy as np
>>> fpr_threshold(np.arange(100.0), 0.05)
94.05
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import CladValueError, DataError
from .concepts import Concept, ConceptDataset

__all__ = ["POLICIES", "DEFAULT_CALIBRATION_FRACTION", "check_threshold", "policy_text", "fpr_threshold",
           "realised_fpr", "calibration_seed", "calibration_split"]

POLICIES = ("own", "fpr")
#: the share of each training concept's normal rows held out for calibration
DEFAULT_CALIBRATION_FRACTION = 0.2


def check_threshold(value) -> str | dict:
    """A threshold policy as a spec writes it: ``"own"`` (or None), or ``{"fpr": x}`` with ``0 < x
    < 1`` and optionally ``"fraction"`` (the calibration share, ``0 < fraction < 1``)."""
    if value is None or value == "own":
        return "own"
    if not isinstance(value, Mapping):
        raise CladValueError(f"threshold={value!r}; expected \"own\" or a table {{fpr = 0.05}} (optionally with "
                             "fraction = the share of each training concept's normal rows held out to calibrate)")
    unknown = sorted(set(value) - {"fpr", "fraction"})
    if unknown:
        from ..registry import did_you_mean

        raise CladValueError(f"threshold: unknown key {unknown[0]!r}{did_you_mean(unknown[0], ['fpr', 'fraction'])}; "
                             "allowed: fpr, fraction")
    out = {}
    for key, default in (("fpr", None), ("fraction", DEFAULT_CALIBRATION_FRACTION)):
        v = value.get(key, default)
        if v is None:
            raise CladValueError("threshold: a table needs fpr (the false-positive rate to calibrate to, e.g. 0.05)")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
            raise CladValueError(f"threshold.{key}={v!r}; expected a number strictly between 0 and 1")
        out[key] = float(v)
    return out


def policy_text(policy) -> str:
    """How a page names a policy.

    >>> policy_text("own"), policy_text({"fpr": 0.05, "fraction": 0.2})
    ("each detector's own threshold", 'threshold at FPR 0.05 on held-out normal rows')
    """
    policy = check_threshold(policy)
    if policy == "own":
        return "each detector's own threshold"
    return f"threshold at FPR {policy['fpr']:g} on held-out normal rows"


def fpr_threshold(scores, fpr: float) -> float:
    """The threshold at false-positive rate ``fpr`` on normal rows with ``scores``: their ``1 - fpr``
    quantile (linear interpolation), so that a share ``fpr`` of them lies above it."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        raise DataError("a threshold at a false-positive rate needs calibration rows; there are none")
    return float(np.quantile(scores, 1.0 - float(fpr)))


def realised_fpr(y, scores, threshold: float) -> float:
    """The share of the normal rows (``y == 0``) flagged (``score > threshold``); NaN without one.

    >>> realised_fpr([0, 0, 0, 0, 1], [0.1, 0.2, 0.6, 0.3, 0.9], 0.5)
    0.25
    """
    y, scores = np.asarray(y), np.asarray(scores)
    normal = scores[y == 0]
    return float(np.mean(normal > threshold)) if normal.size else float("nan")


def calibration_seed(seed: int) -> int:
    """The seed of a run's calibration split: a sixth child of the run seed, independent of the
    seeds of its parts and of its validation split (:func:`clad.core.seeding.validation_seed`)."""
    return int(np.random.SeedSequence(int(seed), spawn_key=(5,)).generate_state(1, dtype=np.uint32)[0])


def calibration_split(dataset: ConceptDataset, fraction: float, seed: int) -> tuple[ConceptDataset, dict[str, np.ndarray]]:
    """``dataset`` with a share ``fraction`` of each training concept's normal rows taken out (drawn
    without replacement by a generator seeded from ``seed``, one stream per training step), and
    those rows by concept name (a recurring concept's rows joined). A training concept without
    labels counts every row as normal.

    >>> from clad.datasets import make_synthetic
    >>> ds = make_synthetic(n_concepts=2, n_features=2, n_train=50, n_test=10)
    >>> kept, held = calibration_split(ds, 0.2, seed=0)
    >>> [c.n_rows for c in kept.train], {k: len(v) for k, v in held.items()}
    ([40, 40], {'C0': 10, 'C1': 10})
    """
    seeds = np.random.SeedSequence(int(seed)).spawn(len(dataset.train))
    train, held = [], {}
    for c, s in zip(dataset.train, seeds):
        rng = np.random.default_rng(s)
        normal = np.arange(c.n_rows) if c.y is None else np.flatnonzero(np.asarray(c.y) == 0)
        n = int(np.floor(fraction * normal.size + 0.5))
        if n < 1 or n >= c.n_rows:
            raise DataError(f"threshold fraction = {fraction}: training concept {c.name!r} has {normal.size} normal "
                            f"rows of {c.n_rows}; its calibration part would hold {n}; choose a fraction that leaves "
                            "rows on both sides")
        idx = np.sort(rng.choice(normal, size=n, replace=False))
        keep = np.setdiff1d(np.arange(c.n_rows), idx, assume_unique=True)
        train.append(Concept(c.name, c.X[keep], None if c.y is None else c.y[keep], validate=False))
        X = np.asarray(c.X)[idx]
        held[c.name] = X if c.name not in held else np.concatenate([held[c.name], X])
    metadata = {**dataset.metadata, "calibration": {"fraction": float(fraction)}}
    return ConceptDataset(train, list(dataset.test), name=dataset.name, metadata=metadata), held
