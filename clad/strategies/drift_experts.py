"""Drift-triggered experts: a change detector on the stream starts a new expert when the data change.

The strategy for the concept-agnostic stream, where nobody says when a concept ends.
"""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError
from ..validation import COUNT, Integral, Interval, StrOptions
from .base import Scored, Strategy
from .experts import task_agnostic_choice
from .memory import RingBuffer, check_capacity

__all__ = ["DriftExperts", "DRIFT_DETECTORS", "SIGNALS"]

#: change detectors by name: river's ADWIN and Page-Hinkley
DRIFT_DETECTORS = {"adwin": "ADWIN", "page_hinkley": "PageHinkley"}
#: what the change detector watches, row by row
SIGNALS = ("rank", "score")


class DriftExperts(Strategy):
    """A pool of experts grown by a change detector watching the stream.

    **Learning.** The first batch starts expert 0. Every later batch is first scored by the
    current expert (before it learns the batch), and each row's *signal* goes, in order, to a
    river change detector (``drift``: ``"adwin"``, default, or ``"page_hinkley"``, with
    ``drift_params``):

    * ``signal="rank"`` (default): the row's score placed in the current expert's training-score
      distribution, ``F(s)`` in [0, 1] (the fraction of its training scores ``<= s``): near uniform
      while the data are like those the expert learned, near 1 once they are not, whatever the
      detector's score scale;
    * ``signal="score"``: the raw score.

    When the change detector fires at a row, the row is recorded (``detections_``, counted in rows
    of the stream from 0), and a **new expert** starts on the rest of the batch from that row (at
    least its last ``min_rows`` rows); a fresh change detector then watches the new expert. While no
    change is detected the current expert goes on learning: with ``partial_fit`` if the detector
    has one (clad's PyTorch and incremental detectors), else by a refit on the last
    ``window_size`` rows of its segment. ``grace_rows`` rows after a new expert starts are learned
    without watching (the young expert's scores settle first).

    **Scoring** uses the task-agnostic rule of ``experts``
    (:func:`~clad.strategies.experts.task_agnostic_choice`): every expert scores the test set, the
    one whose training scores it resembles most gives the scores and threshold.

    **Drift report.** :meth:`extra_results` scores ``detections_`` against the true boundaries
    (:func:`clad.core.boundaries.score_detections`: delay in rows, missed boundaries, false alarms);
    ``run_experiment`` stores it in the run's ``extras["drift"]``.

    Parameters
    ----------
    detector : detector prototype (cloned, never fitted)
    drift : {"adwin", "page_hinkley"}
    drift_params : dict or None
        Keyword parameters of river's change detector (e.g. ``{"delta": 0.002}`` for ADWIN).
    signal : {"rank", "score"}
    window_size : int, default 2000
        Rows a detector without ``partial_fit`` is refitted on (the newest of its segment).
    min_rows : int, default 32
        Fewest rows a new expert starts on.
    grace_rows : int, default 0
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

        try:
            return getattr(river_drift, DRIFT_DETECTORS[self.drift])(
                **dict(self.drift_params or {})
            )
        except TypeError as exc:
            raise CladValueError(
                f"DriftExperts: drift_params={self.drift_params!r} for {self.drift!r}: {exc}"
            ) from None

    def _check_params(self) -> None:
        if self.drift not in DRIFT_DETECTORS:
            raise CladValueError(
                f"DriftExperts: drift={self.drift!r}; allowed: {', '.join(map(repr, DRIFT_DETECTORS))}"
            )
        if self.signal not in SIGNALS:
            raise CladValueError(
                f"DriftExperts: signal={self.signal!r}; allowed: {', '.join(map(repr, SIGNALS))}"
            )
        if self.drift_params is not None and not isinstance(self.drift_params, dict):
            raise CladValueError(
                f"DriftExperts: drift_params={self.drift_params!r}; expected a table of parameters"
            )
        check_capacity(self.window_size, "DriftExperts", "window_size")
        check_capacity(self.min_rows, "DriftExperts", "min_rows")
        check_capacity(self.grace_rows, "DriftExperts", "grace_rows", minimum=0)
        if self.max_delay is not None:
            check_capacity(self.max_delay, "DriftExperts", "max_delay", minimum=0)

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
            self._check_params()
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
