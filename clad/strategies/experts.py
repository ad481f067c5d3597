"""Per-concept experts (MSTE, multiple single-task experts): one fresh detector per concept."""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError
from ..validation import StrOptions
from ..core.step_keys import combine, key_of
from ..core.steps import current
from .base import Scored, Strategy

__all__ = ["Experts", "NO_EXPERT_POLICIES", "task_agnostic_choice", "fit_measures"]

#: what ``Experts`` does with a concept id it has no expert for
NO_EXPERT_POLICIES = ("task_agnostic", "latest", "error")


def fit_measures(reference: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """How well an expert fits a test set: ``(median of F(scores), robust distance)``, where ``F`` is
    the empirical CDF of the expert's sorted training scores ``reference`` and the robust distance
    is ``(median test score - median training score) / IQR of the training scores``.

    >>> import numpy as np
    >>> [round(v, 3) for v in fit_measures(np.arange(1.0, 11.0), np.array([2.0, 3.0, 9.0]))]
    [0.3, -0.556]
    """
    cdf = np.searchsorted(reference, scores, side="right") / reference.size
    q25, q50, q75 = np.quantile(reference, [0.25, 0.5, 0.75])
    iqr = q75 - q25
    if not iqr > 0:
        iqr = max(float(np.ptp(reference)), 1e-12)
    return float(np.median(cdf)), float((np.median(scores) - q50) / iqr)


def task_agnostic_choice(experts, train_scores, X) -> tuple[str, np.ndarray]:
    """The task-agnostic rule of :class:`Experts`: every expert scores ``X`` once; the one with the
    lowest median CDF (:func:`fit_measures`) wins, ties broken by the robust distance, then by the
    oldest expert. Returns the winner's key and its scores of ``X``. ``experts`` maps keys to fitted
    detectors in age order, ``train_scores`` the same keys to their sorted training scores."""
    keys = list(experts)
    scores = [experts[k].score(X) for k in keys]
    measures = np.array([fit_measures(train_scores[k], s) for k, s in zip(keys, scores)])
    # lexicographic: median CDF first, robust distance second, oldest expert last
    i = int(np.lexsort((np.arange(len(keys)), measures[:, 1], measures[:, 0]))[0])
    return keys[i], scores[i]


def _own_scores(det, X) -> np.ndarray:
    """``det.score(X)``, computed once per (fitted state, rows) through this thread's step cache."""
    cache, key = current(), key_of(det)
    if cache is None or key is None:
        return det.score(X)
    return cache.score(combine("own scores", key), X, lambda: det.score(X))[0]


class Experts(Strategy):
    """One fresh detector per concept, trained on that concept alone.

    **Learning.** Each ``learn`` call is one concept (so boundaries are required:
    ``requires_boundaries = True``, refused in the concept-agnostic stream). With a
    ``concept_id`` the expert of that id is (re)trained from scratch on ``X``; without one, every
    call makes a new expert. After fitting, the expert's scores of its own training rows are kept
    (sorted) as its *training-score distribution*.

    **Scoring with an id** (concept-aware): the expert of that id scores the rows, so the cell
    ``R[j, j]`` is exactly what a single detector trained on concept ``j`` alone gives.

    **Scoring without an id** (concept-incremental), the task-agnostic rule: every expert ``e``
    scores the test set, and each score is placed in ``e``'s training-score distribution
    (``F_e(s)``, the fraction of ``e``'s training scores ``<= s``). The chosen expert is the one
    with the lowest **median** of ``F_e`` over the test rows — the expert whose training data the
    test set resembles most (a test set of ``e``'s own concept has a median near 0.5, a foreign one
    near 1). Ties (e.g. every expert at 1) are broken by the lowest robust distance
    ``(median test score - median training score) / IQR of training scores``, then by the oldest
    expert. The median makes the choice robust to the test set's anomalies. The chosen expert's
    scores and threshold are returned (one scoring pass per expert; no second pass).

    **A concept id with no expert** (concept-aware, a test concept never trained) follows
    ``no_expert``: ``"task_agnostic"`` (default) applies the rule above, ``"latest"`` uses the
    most recently trained expert, ``"error"`` raises a :class:`~clad.errors.CladValueError`.

    Parameters
    ----------
    detector : detector prototype (cloned, never fitted)
    no_expert : {"task_agnostic", "latest", "error"}
    random_state : int or None (unused; the experts' randomness is the detector's own)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> rng = np.random.default_rng(0)
    >>> s = Experts(IsolationForest(n_estimators=20, random_state=0))
    >>> s = s.learn(rng.normal(0, 1, (200, 2)), "A").learn(rng.normal(20, 1, (200, 2)), "B")
    >>> s.choose_expert(rng.normal(20, 1, (50, 2)))
    'B'
    """

    replicas_problem = None

    requires_boundaries = True
    uses_random_state = False
    #: each expert a fresh fit on its concept's rows; scores from the experts and the id (score_key)
    step_inputs = ("rows",)

    _parameter_constraints = {"no_expert": [StrOptions(NO_EXPERT_POLICIES)]}

    def __init__(
        self, detector=None, no_expert: str = "task_agnostic", random_state: int | None = None
    ):
        self.detector = detector
        self.no_expert = no_expert
        self.random_state = random_state

    def learn(self, X, concept_id=None):
        if not hasattr(self, "experts_"):
            self.experts_, self.train_scores_ = {}, {}
        key = str(concept_id) if concept_id is not None else f"expert_{self.n_learn_calls_}"
        det = self._fit_new(X)
        self.experts_.pop(key, None)  # a retrained id becomes the latest expert
        self.experts_[key] = det
        self.train_scores_[key] = np.sort(_own_scores(det, X))
        return self

    def score_key(self, concept_id=None) -> str | None:
        """The key of what :meth:`score` reads (:mod:`clad.core.steps`): every expert's fit, in
        order, its id, the policy and the id asked for; None when an expert is not a keyed fit."""
        keys = [(k, key_of(d)) for k, d in getattr(self, "experts_", {}).items()]
        if not keys or any(v is None for _, v in keys):
            return None
        return combine("experts", self.no_expert, keys, concept_id)

    def choose_expert(self, X) -> str:
        """The key of the expert the task-agnostic rule picks for the test set ``X``."""
        self._check_fitted("experts_")
        return task_agnostic_choice(self.experts_, self.train_scores_, X)[0]

    def score(self, X, concept_id=None) -> Scored:
        self._check_fitted("experts_")
        if concept_id is not None:
            key = str(concept_id)
            if key in self.experts_:
                det = self.experts_[key]
                return Scored(det.score(X), det.threshold_)
            if self.no_expert == "error":
                raise CladValueError(
                    f"Experts: no expert for concept {key!r} (trained: {', '.join(self.experts_)}); "
                    "set no_expert='task_agnostic' or 'latest' to score concepts never trained"
                )
            if self.no_expert == "latest":
                det = self.experts_[next(reversed(self.experts_))]
                return Scored(det.score(X), det.threshold_)
        key, scores = task_agnostic_choice(self.experts_, self.train_scores_, X)
        return Scored(scores, self.experts_[key].threshold_)
