"""The detector contract's checks (:data:`DETECTOR_CHECKS`, :func:`check_detector`)."""

from __future__ import annotations

import pickle
from typing import Callable

import numpy as np
from sklearn.metrics import roc_auc_score

from ..detectors import as_detector
from ..errors import CladValueError
from .checks import (
    CheckReport,
    easy_concept,
    fitted_attrs,
    fresh,
    keeps_params,
    mutable_defaults,
    name_of,
    params_of,
    parametrize,
    run_on_copies,
    same,
    with_seed,
)

__all__ = ["DETECTOR_CHECKS", "check_detector", "parametrize_detector_checks"]


def _d_fit_returns_self(det, data):
    X, _, _ = data
    obj = fresh(det)
    returned = obj.fit(X)
    if returned is not obj:
        return (
            f"fit() returned {type(returned).__name__}, expected the detector itself (return self)"
        )


def _score(det, X_fit, X):
    # copies: a detector that writes into its input fails leaves_input_unchanged, and no other check
    return as_detector(fresh(det)).fit(X_fit.copy()).score(X.copy())


def _d_score_shape_finite(det, data):
    # the adapters check shape and finiteness and raise a DetectorError naming the detector
    X, X_test, _ = data
    s = _score(det, X, X_test)
    if s.shape != (len(X_test),) or not np.isfinite(s).all():  # pragma: no cover - adapters raise
        return "score() returned a wrong shape or non-finite values"


def _d_higher_is_more_anomalous(det, data):
    """(A detector declaring ``_clad_no_signal = True``, a chance baseline such as random scores,
    is exempt: that it finds nothing is its point.)"""
    if getattr(det, "_clad_no_signal", False):
        return None
    X, X_test, y = data
    auc = roc_auc_score(y, _score(det, X, X_test))
    if auc < 0.8:
        hint = " (scores look inverted: higher must mean more anomalous)" if auc < 0.2 else ""
        return f"on an easy concept far anomalies get ROC-AUC {auc:.3f}; expected > 0.8{hint}"


def _d_threshold(det, data):
    X, _, _ = data
    t = as_detector(fresh(det)).fit(X).threshold_
    if not np.isfinite(t):
        return f"threshold_ is {t!r} after fit; expected a finite number"


def _d_clone_unfitted_equal_params(det, data):
    X, _, _ = data
    if not callable(getattr(det, "get_params", None)):
        # no get_params: clad clones the adapter, which deep-copies the never-fitted prototype
        det = as_detector(det)
    fitted = fresh(det)
    fitted.fit(X)
    c = fresh(fitted)
    # attributes a freshly made instance already has (some libraries create helpers in __init__) are fine
    left = sorted(set(fitted_attrs(c)) - set(fitted_attrs(fresh(det))))
    if left:
        return f"a clone of a fitted detector still has fitted attributes {left}; clone must give an unfitted copy"
    p1, p2 = params_of(fitted), params_of(c)
    diff = [k for k in p1 if k not in p2 or not same(p1[k], p2[k])]
    if diff:
        return f"a clone has different parameters: {diff}"


def _d_pickle(det, data):
    X, X_test, _ = data
    a = as_detector(fresh(det)).fit(X.copy())
    b = pickle.loads(pickle.dumps(a))
    if not np.array_equal(a.score(X_test.copy()), b.score(X_test.copy())):
        return "scores change after a pickle round trip"


def _d_same_seed(det, data):
    X, X_test, _ = data
    a = _score(with_seed(det, 7), X, X_test)
    b = _score(with_seed(det, 7), X, X_test)
    if not np.array_equal(a, b):
        return "the same random_state gave different scores (unseeded randomness?)"


def _changed_input(before: np.ndarray, after: np.ndarray, method: str) -> str | None:
    if np.array_equal(before, after):
        return None
    n = int(np.sum(before != after))
    return (
        f"{method}() changed its input X in place ({n} of {before.size} values differ); a detector must "
        "leave the data it is given unchanged (clad hands detectors read-only data, so this one fails in "
        "every run): work on a copy (X = np.array(X))"
    )


def _d_leaves_input_unchanged(det, data):
    X, X_test, _ = data
    X_fit, X_score = X.copy(), X_test.copy()  # writeable, so that a write shows instead of raising
    fitted = as_detector(fresh(det)).fit(X_fit)
    fitted.score(X_score)
    # score first: a fit that scores its training rows (for a threshold) changes them through score
    return _changed_input(X_test, X_score, "score") or _changed_input(X, X_fit, "fit")


def _d_repeatable_scores(det, data):
    """Scoring the same rows twice with one fitted detector gives the same scores: the evaluator scores
    each test concept in one call per training step, and shares the scores of equal steps, so what a
    detector learns while it scores a call (NAB's windowed Gaussian) must start afresh with the next."""
    X, X_test, _ = data
    fitted = as_detector(fresh(det)).fit(X.copy())
    a, b = fitted.score(X_test.copy()), fitted.score(X_test.copy())
    if not np.array_equal(a, b):
        return (
            f"scoring the same {len(X_test)} rows twice gave different scores ({int(np.sum(a != b))} differ): "
            "score() must not keep what it learns from one call for the next"
        )
    return None


def _d_fit_keeps_params(det, data):
    X, _, _ = data
    return keeps_params(
        det,
        lambda obj: obj.fit(X),
        "fit() changed parameter(s) {}; learned state belongs in attributes ending in '_'",
    )


DETECTOR_CHECKS: dict[str, Callable] = {
    "fit_returns_self": _d_fit_returns_self,
    "score_shape_and_finite": _d_score_shape_finite,
    "higher_is_more_anomalous": _d_higher_is_more_anomalous,
    "threshold_after_fit": _d_threshold,
    "clone_is_unfitted_with_equal_params": _d_clone_unfitted_equal_params,
    "pickle_round_trip": _d_pickle,
    "same_seed_same_scores": _d_same_seed,
    "scoring_twice_gives_the_same_scores": _d_repeatable_scores,
    "fit_does_not_change_params": _d_fit_keeps_params,
    "leaves_input_unchanged": _d_leaves_input_unchanged,
    "no_mutable_defaults": mutable_defaults,
}


def check_detector(detector, raise_on_failure: bool = True) -> CheckReport:
    """Run every detector check on an (unfitted) detector instance; see the module docstring."""
    if isinstance(detector, type):
        raise CladValueError(
            f"check_detector expects an instance, got the class {detector.__name__}"
        )
    return run_on_copies(
        DETECTOR_CHECKS, detector, easy_concept(), raise_on_failure, f"detector {name_of(detector)}"
    )


def parametrize_detector_checks(detectors):
    """``pytest.mark.parametrize("detector, check", ...)``: one test per detector and check.

    Use it as::

        @parametrize_detector_checks([MyDetector(), IsolationForest()])
        def test_conformance(detector, check):
            check(detector)
    """
    return parametrize(detectors, DETECTOR_CHECKS, easy_concept, "detector, check")
