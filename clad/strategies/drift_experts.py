"""Drift-triggered experts: a change detector on the stream starts a new expert when the data change.

The strategy for the concept-agnostic stream, where nobody says when a concept ends.
"""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError
from ..validation import COUNT, Integral, Interval, StrOptions
from .base import Scored, Strategy
from .experts import task_agnostic_choice
from .memory import RingBuffer

__all__ = ["DriftExperts", "DRIFT_DETECTORS", "SIGNALS"]

#: change detectors by name: river's ADWIN and Page-Hinkley
DRIFT_DETECTORS = {"adwin": "ADWIN", "page_hinkley": "PageHinkley"}
#: what the change detector watches, row by row
SIGNALS = ("rank", "score")


class DriftExperts(Strategy):
    """A pool of experts grown by a change detector watching the stream (the rule in full:
    ``docs/guides/time-series.md``, "Drift-triggered experts").

    The first batch starts expert 0. Every later batch is first scored by the current expert,
    before it learns the batch, and each row's signal goes, in order, to a river change detector.
    When it fires at a row, the row is recorded (``detections_``, rows of the stream from 0) and a
    new expert, watched by a fresh change detector, starts on the rest of the batch from that row;
    else the current expert goes on learning (``partial_fit`` if the detector has one, else a refit
    on the newest ``window_size`` rows of its segment). **Scoring** uses the task-agnostic rule of
    ``experts`` (:func:`~clad.strategies.experts.task_agnostic_choice`). :meth:`extra_results`
    scores ``detections_`` against the true boundaries, stored in the run's ``extras["drift"]``.

    Parameters
    ----------
    detector : detector prototype (cloned, never fitted)
    drift : {"adwin", "page_hinkley"}
    drift_params : dict or None
        Keyword parameters of river's change detector (e.g. ``{"delta": 0.002}`` for ADWIN).
    signal : {"rank", "score"}
        ``"rank"``: the row's score placed in the current expert's training-score distribution,
        ``F(s)`` in [0, 1] (the fraction of its training scores ``<= s``), whatever the detector's
        score scale; ``"score"``: the raw score.
    window_size : int, default 2000
        Rows a detector without ``partial_fit`` is refitted on (the newest of its segment).
    min_rows : int, default 32
        Fewest rows a new expert starts on.
    grace_rows : int, default 0
        Rows learned without watching after a new expert starts (its scores settle first).
    max_delay : int or None
        Detections later than this many rows after a boundary count as false alarms (and the
        boundary as missed) in the drift report.
    random_state : int or None (unused: the change detectors are deterministic)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import IsolationForest
    >>> rng = np.random.default_rng(0)
    >>> s = DriftExperts(IsolationForest(n_estimators=20, random_state=0), window_size=500)
    >>> for k in range(12):
    ...     s = s.learn(rng.normal(0 if k < 6 else 8, 1, (100, 2)))
    >>> len(s.experts_), [d // 100 for d in s.detections_]
    (2, [6])
    """

    replicas_problem = None

    _parameter_constraints = {
        "drift": [StrOptions(tuple(DRIFT_DETECTORS))],
        "signal": [StrOptions(SIGNALS)],
        "drift_params": [None, dict],
        "window_size": [COUNT],
        "min_rows": [COUNT],
        "grace_rows": [Interval(Integral, 0, None, closed="left")],
        "max_delay": [None, Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        detector=None,
        drift: str = "adwin",
        drift_params: dict | None = None,
        signal: str = "rank",
        window_size: int = 2000,
        min_rows: int = 32,
        grace_rows: int = 0,
        max_delay: int | None = None,
        random_state: int | None = None,
    ):
        self.detector = detector
        self.drift = drift
        self.drift_params = drift_params
        self.signal = signal
        self.window_size = window_size
        self.min_rows = min_rows
        self.grace_rows = grace_rows
        self.max_delay = max_delay
        self.random_state = random_state

    # -- set-up -----------------------------------------------------------------------------
    def _change_detector(self):
        from river import drift as river_drift

        detector = getattr(river_drift, DRIFT_DETECTORS[self.drift])
        try:
            return detector(**dict(self.drift_params or {}))
        except TypeError as exc:
            raise CladValueError(
                f"DriftExperts: drift_params={self.drift_params!r} for {self.drift!r}: {exc}"
            ) from None

    # -- experts ----------------------------------------------------------------------------
    def _start_expert(self, X) -> None:
        key = f"expert_{len(self.experts_)}"
        det = self._new_detector()
        self.incremental_ = callable(getattr(det, "partial_fit", None))
        self.segment_ = None if self.incremental_ else RingBuffer(int(self.window_size))
        self.current_ = key
        self.drift_ = self._change_detector()
        self.segment_rows_ = 0
        self.experts_[key] = det
        self._train(X, first=True)

    def _train(self, X, first: bool) -> None:
        det = self.experts_[self.current_]
        if self.incremental_:
            (det.fit if first else det.partial_fit)(X)
            learned = X
        else:
            self.segment_.add(X)
            learned = self.segment_.view()
            det.fit(learned)
        self.train_scores_[self.current_] = np.sort(det.score(learned))
        self.segment_rows_ += int(X.shape[0])

    def _watch(self, X) -> int | None:
        """Feed the batch's signal to the change detector; the index of the row it fired at, or None."""
        det = self.experts_[self.current_]
        scores = det.score(X)
        if self.signal == "rank":
            ref = self.train_scores_[self.current_]
            scores = np.searchsorted(ref, scores, side="right") / ref.size
        skip = max(0, int(self.grace_rows) - self.segment_rows_)
        for i in range(skip, len(scores)):
            self.drift_.update(float(scores[i]))
            if self.drift_.drift_detected:
                return i
        return None

    # -- interface --------------------------------------------------------------------------
    def learn(self, X, concept_id=None):
        X = np.asarray(X)
        if not hasattr(self, "experts_"):
            self.experts_, self.train_scores_, self.detections_ = {}, {}, []
            self.rows_seen_ = 0
            self._start_expert(X)
        else:
            at = self._watch(X)
            if at is None:
                self._train(X, first=False)
            else:
                self.detections_.append(self.rows_seen_ + at)
                start = min(at, max(0, X.shape[0] - int(self.min_rows)))
                self._start_expert(X[start:])
        self.rows_seen_ += int(X.shape[0])
        return self

    def score(self, X, concept_id=None) -> Scored:
        self._check_fitted("experts_")
        key, scores = task_agnostic_choice(self.experts_, self.train_scores_, X)
        return Scored(scores, self.experts_[key].threshold_)

    def memory_rows(self) -> int:
        seg = getattr(self, "segment_", None)
        return len(seg) if seg is not None else 0

    def extra_results(self, boundaries) -> dict:
        """``{"drift": report}``: :attr:`detections_` scored against the stream's true ``boundaries``
        (rows at which each training concept after the first starts)."""
        from ..core.boundaries import score_detections

        self._check_fitted("experts_")
        report = score_detections(
            self.detections_,
            [b for b in boundaries if 0 < b < self.rows_seen_],
            self.rows_seen_,
            max_delay=self.max_delay,
        )
        report["n_experts"] = len(self.experts_)
        return {"drift": report}
