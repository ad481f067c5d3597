"""A scikit-learn detector adapter whose estimator calls are timed (for the benchmarks)."""

from __future__ import annotations

import time

from clad.detectors import SklearnDetector

#: seconds inside the estimators' own fit and score_samples, and the number of calls
CLOCK = {"fit": 0.0, "score": 0.0, "fits": 0, "scores": 0}


def reset() -> None:
    CLOCK.update(fit=0.0, score=0.0, fits=0, scores=0)


class TimedDetector(SklearnDetector):
    """SklearnDetector timing ``fit`` and ``score_samples`` (a class-level clock: clones share it)."""

    def _fit_estimator(self, est, X):
        t0 = time.perf_counter()
        out = super()._fit_estimator(est, X)
        CLOCK["fit"] += time.perf_counter() - t0
        CLOCK["fits"] += 1
        return out

    def _raw_score(self, est, X):
        t0 = time.perf_counter()
        out = super()._raw_score(est, X)
        CLOCK["score"] += time.perf_counter() - t0
        CLOCK["scores"] += 1
        return out
