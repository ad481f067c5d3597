"""Threshold policies: how every detector's labels (``scores > threshold``) are made.

``"own"`` (the default) keeps each detector's own threshold; ``{"fpr": 0.05}`` sets it at the
``1 - fpr`` quantile (:func:`fpr_threshold`) of the model's scores on a calibration split of each
training concept's normal rows (:func:`calibration_split`), scored as the test concept is
(:func:`calibrated_thresholds`). Whatever the policy, every thresholded cell records the
false-positive rate it reached on the normal rows of its test concept (:func:`realised_fpr`). The
rules, the sampling noise of the realised rate and its measurements: ``docs/guides/thresholds.md``.

>>> check_threshold(None), check_threshold("own"), check_threshold({"fpr": 0.05})
('own', 'own', {'fpr': 0.05, 'calibration': 0.2})
>>> check_threshold({"fpr": 0.05, "calibration": 300})
{'fpr': 0.05, 'calibration': 300}
>>> import numpy as np
>>> fpr_threshold(np.arange(100.0), 0.05)
94.95
"""

from __future__ import annotations

import warnings
from typing import Mapping

import numpy as np

from ..errors import CladValueError, DataError
from .concepts import Concept, ConceptDataset

__all__ = [
    "DEFAULT_CALIBRATION_FRACTION",
    "check_threshold",
    "policy_text",
    "fpr_threshold",
    "realised_fpr",
    "calibration_seed",
    "calibration_split",
    "calibration_size",
    "min_calibration_rows",
    "check_calibration_rows",
    "batch_dependent",
    "joint_scores",
    "calibrated_thresholds",
    "threshold_record",
    "JOINT_SHARE",
]

#: the share of each training concept's normal rows held out for calibration
DEFAULT_CALIBRATION_FRACTION = 0.2
#: a batch-dependent score's calibration rows join the test batch in parts of at most this share of it
JOINT_SHARE = 0.05


#: the largest count of calibration rows a spec may ask for (more than any concept holds)
MAX_CALIBRATION_ROWS = 1_000_000_000


def check_threshold(value) -> str | dict:
    """A threshold policy as a spec writes it: ``"own"`` (or None), or ``{"fpr": x}`` with ``0 < x
    < 1`` and optionally ``"calibration"``: the calibration rows of each training concept, a share
    of its normal rows (``0 < calibration < 1``, default 0.2) or a count (an integer ``>= 2``).
    ``"fraction"`` is the older spelling of a share.

    >>> check_threshold({"fpr": 0.1, "fraction": 0.5})
    {'fpr': 0.1, 'calibration': 0.5}
    """
    if value is None or value == "own":
        return "own"
    allowed = ["fpr", "calibration", "fraction"]
    if not isinstance(value, Mapping):
        raise CladValueError(
            f'threshold={value!r}; expected "own" or a table {{fpr = 0.05}} (optionally with '
            "calibration = the share of each training concept's normal rows held out to calibrate, "
            "or their count)"
        )
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        from ..registry import did_you_mean

        raise CladValueError(
            f"threshold: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)}; "
            f"allowed: {', '.join(allowed)}"
        )
    fpr = value.get("fpr")
    if fpr is None:
        raise CladValueError(
            "threshold: a table needs fpr (the false-positive rate to calibrate to, e.g. 0.05)"
        )
    if isinstance(fpr, bool) or not isinstance(fpr, (int, float)) or not 0 < fpr < 1:
        raise CladValueError(f"threshold.fpr={fpr!r}; expected a number strictly between 0 and 1")
    if "calibration" in value and "fraction" in value:
        raise CladValueError(
            "threshold: give calibration or fraction (its older spelling), not both"
        )
    key = "fraction" if "fraction" in value else "calibration"
    size = value.get(key, DEFAULT_CALIBRATION_FRACTION)
    ok = not isinstance(size, bool) and (
        isinstance(size, float)
        and 0 < size < 1
        or isinstance(size, int)
        and (2 <= size <= MAX_CALIBRATION_ROWS if key == "calibration" else False)
    )
    if not ok:
        count = f" or a count of rows, an integer in [2, {MAX_CALIBRATION_ROWS:,}] (e.g. 300)"
        raise CladValueError(
            f"threshold.{key}={size!r}; expected a share of each training concept's normal rows "
            f"strictly between 0 and 1 (e.g. 0.2){count if key == 'calibration' else ''}"
        )
    return {"fpr": float(fpr), "calibration": size if isinstance(size, int) else float(size)}


def policy_text(policy) -> str:
    """How a page names a policy.

    >>> policy_text("own"), policy_text({"fpr": 0.05, "calibration": 0.2})
    ("each detector's own threshold", 'threshold at FPR 0.05 on held-out normal rows')
    """
    policy = check_threshold(policy)
    if policy == "own":
        return "each detector's own threshold"
    return f"threshold at FPR {policy['fpr']:g} on held-out normal rows"


def fpr_threshold(scores, fpr: float) -> float:
    """The threshold at false-positive rate ``fpr`` on normal rows with ``scores``: their ``1 - fpr``
    quantile at the plotting position ``(1 - fpr)(m + 1)`` of the ``m`` sorted scores, linearly
    interpolated (numpy's ``method="weibull"``). A new row of the same distribution then exceeds it
    with probability ``fpr`` on average over calibration samples: the ``k``-th smallest of ``m``
    scores is exceeded with probability ``(m + 1 - k) / (m + 1)``. (numpy's default position
    ``(1 - fpr)(m - 1) + 1`` is exceeded with probability about ``fpr + (1 - 2 fpr) / (m + 1)``: 0.059
    for 0.05 on 100 rows.) With fewer than :func:`min_calibration_rows` rows the position lies
    past the largest score, which is then the threshold.

    >>> fpr_threshold(np.arange(1.0, 20.0), 0.05), fpr_threshold(np.arange(1.0, 40.0), 0.05)
    (19.0, 38.0)
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        raise DataError(
            "a threshold at a false-positive rate needs calibration rows; there are none"
        )
    return float(np.quantile(scores, 1.0 - float(fpr), method="weibull"))


def min_calibration_rows(fpr: float) -> int:
    """The fewest calibration rows whose ``1 - fpr`` quantile lies below their largest score
    (``(1 - fpr)(m + 1) <= m``): 19 for 0.05, 9 for 0.1.

    >>> min_calibration_rows(0.05), min_calibration_rows(0.1), min_calibration_rows(0.01)
    (19, 9, 99)
    """
    return int(np.ceil(round((1.0 - float(fpr)) / float(fpr), 9)))


def check_calibration_rows(calibration: Mapping, fpr: float) -> None:
    """A :class:`~clad.errors.RunWarning` for each training concept with fewer calibration rows than
    :func:`min_calibration_rows`: its threshold is then the largest calibration score, which a new
    row exceeds with probability ``1 / (m + 1)``, above ``fpr``."""
    from ..errors import RunWarning

    need = min_calibration_rows(fpr)
    for name, rows in calibration.items():
        if len(rows) < need:
            warnings.warn(
                f"training concept {name!r} has {len(rows)} calibration rows; a threshold at FPR {fpr:g} "
                f"needs at least {need} (with fewer it is the largest calibration score, and the "
                f"false-positive rate about 1/{len(rows) + 1}); raise threshold.calibration",
                RunWarning,
                stacklevel=2,
            )


def batch_dependent(strategy, rows, concept_id=None, whole=None) -> bool:
    """Whether ``strategy``'s score of a row depends on the other rows scored with it (PyOD's ECOD
    and COPOD recompute their empirical distributions on the training rows and the batch): ``rows``
    scored in one batch (``whole``, when already computed) and in two halves differ by more than
    rounding. A threshold set on such scores holds only for rows scored in the same batch.

    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.strategies import Naive
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> batch_dependent(Naive(IsolationForest(n_estimators=5, random_state=0)).learn(X), X[:20])
    False
    """
    rows = np.asarray(rows)
    if len(rows) < 2:
        return False
    h = len(rows) // 2
    if whole is None:
        whole = strategy.score(rows, concept_id=concept_id).scores
    whole = np.asarray(whole, dtype=np.float64)
    halves = [strategy.score(part, concept_id=concept_id).scores for part in (rows[:h], rows[h:])]
    parts = np.concatenate([np.asarray(s, dtype=np.float64) for s in halves])
    return not np.allclose(whole, parts, rtol=1e-9, atol=1e-12, equal_nan=True)


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
    return int(
        np.random.SeedSequence(int(seed), spawn_key=(5,)).generate_state(1, dtype=np.uint32)[0]
    )


def calibration_size(size, n_normal: int) -> int:
    """The calibration rows of a training concept with ``n_normal`` normal rows: a share ``size``
    (a float, rounded half up) or a count (an int).

    >>> calibration_size(0.2, 500), calibration_size(300, 500)
    (100, 300)
    """
    return (
        int(size) if isinstance(size, (int, np.integer)) else int(np.floor(size * n_normal + 0.5))
    )


def calibration_split(
    dataset: ConceptDataset, size, seed: int
) -> tuple[ConceptDataset, dict[str, np.ndarray]]:
    """``dataset`` with calibration rows taken out of each training concept's normal rows: a share
    ``size`` of them (a float) or ``size`` rows (an int), drawn without replacement by a generator
    seeded from ``seed``, one stream per training step; and those rows by concept name (a recurring
    concept's rows joined). A training concept without labels counts every row as normal.

    >>> from clad.datasets import make_synthetic
    >>> ds = make_synthetic(n_concepts=2, n_features=2, n_train=50, n_test=10)
    >>> kept, held = calibration_split(ds, 0.2, seed=0)
    >>> [c.n_rows for c in kept.train], {k: len(v) for k, v in held.items()}
    ([40, 40], {'C0': 10, 'C1': 10})
    >>> kept, held = calibration_split(ds, 30, seed=0)
    >>> [c.n_rows for c in kept.train], {k: len(v) for k, v in held.items()}
    ([20, 20], {'C0': 30, 'C1': 30})
    """
    seeds = np.random.SeedSequence(int(seed)).spawn(len(dataset.train))
    train, held = [], {}
    what = (
        f"calibration = {size}"
        if isinstance(size, (int, np.integer))
        else f"calibration share {size:g}"
    )
    for c, s in zip(dataset.train, seeds):
        rng = np.random.default_rng(s)
        normal = np.arange(c.n_rows) if c.y is None else np.flatnonzero(np.asarray(c.y) == 0)
        n = calibration_size(size, normal.size)
        if n < 1 or n > normal.size or n >= c.n_rows:
            raise DataError(
                f"threshold {what}: training concept {c.name!r} has {normal.size} normal rows of "
                f"{c.n_rows}; its calibration part would hold {n}; choose a size that leaves rows on "
                "both sides"
            )
        idx = np.sort(rng.choice(normal, size=n, replace=False))
        keep = np.setdiff1d(np.arange(c.n_rows), idx, assume_unique=True)
        train.append(Concept(c.name, c.X[keep], None if c.y is None else c.y[keep], validate=False))
        X = np.asarray(c.X)[idx]
        held[c.name] = X if c.name not in held else np.concatenate([held[c.name], X])
    metadata = {**dataset.metadata, "calibration": {"size": size}}
    return ConceptDataset(train, list(dataset.test), name=dataset.name, metadata=metadata), held


def joint_scores(strategy, test_rows, calibration_rows, concept_id=None) -> np.ndarray:
    """The scores of ``calibration_rows`` each scored in the batch of ``test_rows``: the test rows
    with a part of the calibration rows appended, parts of at most :data:`JOINT_SHARE` of the test
    batch, so that a score that depends on its batch (:func:`batch_dependent`) sees, for every
    calibration row, the batch the test rows were scored in but for a few rows. No label is read.

    >>> from clad.strategies import Naive
    >>> from sklearn.ensemble import IsolationForest
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> s = Naive(IsolationForest(n_estimators=5, random_state=0)).learn(X)
    >>> bool(np.allclose(joint_scores(s, X[:40], X[40:]), s.score(X[40:]).scores))
    True
    """
    test_rows, calibration_rows = np.asarray(test_rows), np.asarray(calibration_rows)
    step = max(1, int(np.floor(JOINT_SHARE * len(test_rows))))
    parts = []
    for i in range(0, len(calibration_rows), step):
        part = calibration_rows[i : i + step]
        scored = strategy.score(np.concatenate([test_rows, part]), concept_id=concept_id)
        parts.append(np.asarray(scored.scores, dtype=np.float64)[len(test_rows) :])
    return np.concatenate(parts)


def calibrated_thresholds(
    strategy, test_concepts, calibration_rows, fpr: float, with_ids: bool
) -> tuple[list[float], bool | None]:
    """Each test concept's threshold under ``{"fpr": fpr}``: the ``1 - fpr`` quantile
    (:func:`fpr_threshold`) of the model's scores on the calibration rows, scored as the test
    concept is.

    Parameters
    ----------
    strategy : Strategy
        The trained strategy whose ``score`` scores the rows.
    test_concepts : sequence of Concept
        The test concepts, each getting its threshold.
    calibration_rows : array
        Held-out normal rows of the concept just learned.
    fpr : float
        The target false-positive rate.
    with_ids : bool
        Score with each test concept's id (the scenario gives ids).

    Returns
    -------
    thresholds : list of float
        One per test concept.
    joint : bool or None
        Whether the model's score of a row depends on the rows scored with it
        (:func:`batch_dependent`, probed once), so that the calibration rows were scored in each
        test concept's batch (:func:`joint_scores`); None without a test concept.
    """
    found: dict[str | None, float] = {}
    joint = None
    out = []
    for c in test_concepts:
        key = c.name if with_ids else None
        if joint is None:
            whole = strategy.score(calibration_rows, concept_id=key).scores
            joint = batch_dependent(strategy, calibration_rows, concept_id=key, whole=whole)
            if not joint:
                found[key] = fpr_threshold(whole, fpr)
        if joint:  # the calibration rows' scores in the test concept's batch
            scores = joint_scores(strategy, c.X, calibration_rows, concept_id=key)
            out.append(fpr_threshold(scores, fpr))
            continue
        if key not in found:
            found[key] = fpr_threshold(strategy.score(calibration_rows, concept_id=key).scores, fpr)
        out.append(found[key])
    return out, joint


def threshold_record(policy, fpr_rows, calibration, joint_calibration) -> dict:
    """A run's threshold record: the ``policy``, and per step and test concept the threshold and
    the realised false-positive rate (``fpr_rows``: per step, per test concept, the pair), the
    calibration rows of each training concept and, under ``{"fpr": x}``, whether the model's scores
    depended on the batch (then calibrated in it: ``joint_calibration``, per scoring pass)."""
    record = {
        "policy": policy,
        "threshold": [[t for t, _ in row] for row in fpr_rows],
        "realised_fpr": [[f for _, f in row] for row in fpr_rows],
        "calibration_rows": {k: int(len(v)) for k, v in calibration.items()},
    }
    if policy != "own":
        record["calibrated_in_test_batch"] = any(joint_calibration)
    return record
