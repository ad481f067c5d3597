"""Conformance checks for plug-ins: is a detector or a strategy fit for clad?

:func:`check_detector` and :func:`check_strategy` run every contract check and report all
failures at once (a :class:`ConformanceError` listing them, or a :class:`CheckReport` with
``raise_on_failure=False``). Each check is also available alone, so a test suite can parametrise
over them (:func:`parametrize_detector_checks`), and ``clad check package.module:Class`` runs them
from the command line.

:func:`check_base_metric` checks a base metric's declaration (:class:`clad.metrics.BaseMetric`):
its values stay within its declared bounds on random labels and scores, a scoreless detector
(every row the same score, so every row flagged) gets its declared chance level, and labels of
one class give NaN.

Detector contract: ``fit(X)`` returns the detector itself; ``score(X)`` has shape ``(n,)`` and
finite values; higher = more anomalous (checked on an easy concept); a clone is unfitted and has
equal parameters; a fitted detector survives a pickle round trip; the same ``random_state`` gives
the same scores; ``fit`` does not change parameters; ``fit`` and ``score`` leave their input
unchanged (clad hands detectors read-only data, so a detector that writes into it fails every
run); no mutable defaults in ``__init__``. Each check gets its own copy of the data.

>>> from sklearn.ensemble import IsolationForest
>>> check_detector(IsolationForest(n_estimators=20)).ok
True
"""

from __future__ import annotations

import copy
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from .errors import CladError, CladValueError

__all__ = [
    "CheckReport",
    "ConformanceError",
    "DETECTOR_CHECKS",
    "STRATEGY_CHECKS",
    "BASE_METRIC_CHECKS",
    "check_base_metric",
    "check_detector",
    "check_strategy",
    "easy_concept",
    "parametrize_detector_checks",
    "parametrize_strategy_checks",
]


class ConformanceError(CladValueError):
    """A plug-in failed one or more contract checks; the message lists every failure."""


@dataclass
class CheckReport:
    """The outcome of a conformance run: check name -> None (passed) or the failure message."""

    subject: str
    results: dict[str, str | None] = field(default_factory=dict)

    @property
    def failures(self) -> dict[str, str]:
        return {k: v for k, v in self.results.items() if v is not None}

    @property
    def ok(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        lines = [
            f"{self.subject}: {len(self.results) - len(self.failures)}/{len(self.results)} checks passed"
        ]
        for name, msg in self.results.items():
            lines.append(
                f"  {'ok  ' if msg is None else 'FAIL'} {name}"
                + ("" if msg is None else f": {msg}")
            )
        return "\n".join(lines)


def easy_concept(n_train: int = 300, n_test: int = 200, n_features: int = 4, seed: int = 0):
    """Gaussian training rows; a test set whose anomalies lie far outside (an easy case)."""
    rng = np.random.default_rng(seed)
    X_train = rng.normal(size=(n_train, n_features))
    n_anom = n_test // 10
    normal = rng.normal(size=(n_test - n_anom, n_features))
    d = rng.normal(size=(n_anom, n_features))
    anomalies = 8.0 * d / np.linalg.norm(d, axis=1, keepdims=True)
    X_test = np.vstack([normal, anomalies])
    y_test = np.r_[np.zeros(n_test - n_anom), np.ones(n_anom)].astype(int)
    return X_train, X_test, y_test


def _name(obj) -> str:
    return type(obj).__name__


def _params(obj) -> dict:
    get = getattr(obj, "get_params", None)
    if callable(get):
        return get(deep=False)
    return {k: v for k, v in vars(obj).items() if not k.startswith("_") and not k.endswith("_")}


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if callable(getattr(a, "get_params", None)) and not isinstance(a, type):
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return pa.keys() == pb.keys() and all(_same(pa[k], pb[k]) for k in pa)
    if callable(getattr(a, "_get_params", None)) and not isinstance(a, type):  # river estimators
        return _same(a._get_params(), b._get_params())
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "__dict__") and type(a).__eq__ is object.__eq__:
        va = {k: v for k, v in vars(a).items() if not k.endswith("_")}
        vb = {k: v for k, v in vars(b).items() if not k.endswith("_")}
        return va.keys() == vb.keys() and all(_same(va[k], vb[k]) for k in va)
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return np.array_equal(a, b)
        return bool(a == b) if type(a) is type(b) else False
    except Exception:  # noqa: BLE001 - objects without a usable __eq__
        return repr(a) == repr(b)


def _changed_params(obj, action) -> list[str]:
    """Names of the parameters of ``obj`` that ``action(obj)`` changed."""
    before = {k: copy.deepcopy(v) for k, v in _params(obj).items()}
    action(obj)
    after = _params(obj)
    return [k for k in before if k not in after or not _same(before[k], after[k])]


def _keeps_params(obj, action, problem: str) -> str | None:
    """``problem`` naming the parameters that ``action`` on a fresh copy of ``obj`` changed, or None."""
    changed = _changed_params(_fresh(obj), action)
    return problem.format(changed) if changed else None


def _fitted_attrs(obj) -> list[str]:
    return [k for k in vars(obj) if k.endswith("_") and not k.startswith("__")]


def _fresh(obj):
    try:
        return clone(obj)
    except TypeError:
        return copy.deepcopy(obj)


def _with_seed(obj, seed: int):
    obj = _fresh(obj)
    params = _params(obj)
    if "random_state" in params:
        if hasattr(obj, "set_params"):
            obj.set_params(random_state=seed)
        else:
            obj.random_state = seed
    return obj


def _mutable_defaults(obj, data=None) -> str | None:
    try:
        sig = inspect.signature(type(obj).__init__)
    except (TypeError, ValueError):
        return None
    bad = [
        p.name
        for p in sig.parameters.values()
        if isinstance(p.default, (list, dict, set, np.ndarray, bytearray))
    ]
    return f"__init__ has mutable default(s) for {', '.join(bad)}; use None" if bad else None


# ---------------------------------------------------------------------------------- detectors
def _d_fit_returns_self(det, data):
    X, _, _ = data
    obj = _fresh(det)
    returned = obj.fit(X)
    if returned is not obj:
        return (
            f"fit() returned {type(returned).__name__}, expected the detector itself (return self)"
        )


def _score(det, X_fit, X):
    from .detectors import as_detector

    # copies: a detector that writes into its input fails leaves_input_unchanged, and no other check
    return as_detector(_fresh(det)).fit(X_fit.copy()).score(X.copy())


def _d_score_shape_finite(det, data):
    # the adapters check shape and finiteness and raise a DetectorError naming the detector
    X, X_test, _ = data
    s = _score(det, X, X_test)
    if (
        s.shape != (len(X_test),) or not np.isfinite(s).all()
    ):  # pragma: no cover - adapters raise first
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
    from .detectors import as_detector

    X, _, _ = data
    t = as_detector(_fresh(det)).fit(X).threshold_
    if not np.isfinite(t):
        return f"threshold_ is {t!r} after fit; expected a finite number"


def _d_clone_unfitted_equal_params(det, data):
    X, _, _ = data
    if not callable(getattr(det, "get_params", None)):
        # no get_params: clad clones the adapter, which deep-copies the never-fitted prototype
        from .detectors import as_detector

        det = as_detector(det)
    fitted = _fresh(det)
    fitted.fit(X)
    c = _fresh(fitted)
    # attributes a freshly made instance already has (some libraries create helpers in __init__) are fine
    left = sorted(set(_fitted_attrs(c)) - set(_fitted_attrs(_fresh(det))))
    if left:
        return f"a clone of a fitted detector still has fitted attributes {left}; clone must give an unfitted copy"
    p1, p2 = _params(fitted), _params(c)
    diff = [k for k in p1 if k not in p2 or not _same(p1[k], p2[k])]
    if diff:
        return f"a clone has different parameters: {diff}"


def _d_pickle(det, data):
    from .detectors import as_detector

    X, X_test, _ = data
    a = as_detector(_fresh(det)).fit(X.copy())
    b = pickle.loads(pickle.dumps(a))
    if not np.array_equal(a.score(X_test.copy()), b.score(X_test.copy())):
        return "scores change after a pickle round trip"


def _d_same_seed(det, data):
    X, X_test, _ = data
    a = _score(_with_seed(det, 7), X, X_test)
    b = _score(_with_seed(det, 7), X, X_test)
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
    from .detectors import as_detector

    X, X_test, _ = data
    X_fit, X_score = X.copy(), X_test.copy()  # writeable, so that a write shows instead of raising
    fitted = as_detector(_fresh(det)).fit(X_fit)
    fitted.score(X_score)
    # score first: a fit that scores its training rows (for a threshold) changes them through score
    return _changed_input(X_test, X_score, "score") or _changed_input(X, X_fit, "fit")


def _d_repeatable_scores(det, data):
    """Scoring the same rows twice with one fitted detector gives the same scores: the evaluator scores
    each test concept in one call per training step, and shares the scores of equal steps, so what a
    detector learns while it scores a call (NAB's windowed Gaussian) must start afresh with the next."""
    from .detectors import as_detector

    X, X_test, _ = data
    fitted = as_detector(_fresh(det)).fit(X.copy())
    a, b = fitted.score(X_test.copy()), fitted.score(X_test.copy())
    if not np.array_equal(a, b):
        return (
            f"scoring the same {len(X_test)} rows twice gave different scores ({int(np.sum(a != b))} differ): "
            "score() must not keep what it learns from one call for the next"
        )
    return None


def _d_fit_keeps_params(det, data):
    X, _, _ = data
    return _keeps_params(
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
    "no_mutable_defaults": _mutable_defaults,
}


def _run_checks(
    checks: dict[str, Callable], call: Callable, raise_on_failure: bool, label: str
) -> CheckReport:
    """Each check through ``call(check)``; a check that raises is a failure with its reason."""
    report = CheckReport(label)
    for name, fn in checks.items():
        try:
            report.results[name] = call(fn)
        except Exception as exc:  # noqa: BLE001 - a check that raises is a failure with its reason
            msg = str(exc) if isinstance(exc, CladError) else f"{type(exc).__name__}: {exc}"
            report.results[name] = f"raised {msg}"
    if raise_on_failure and not report.ok:
        raise ConformanceError(str(report))
    return report


def _run(
    checks: dict[str, Callable], subject, data, raise_on_failure: bool, label: str
) -> CheckReport:
    # each check gets its own copy of the data: a check that writes harms no other
    return _run_checks(checks, lambda fn: fn(subject, copy.deepcopy(data)), raise_on_failure, label)


def check_detector(detector, raise_on_failure: bool = True) -> CheckReport:
    """Run every detector check on an (unfitted) detector instance; see the module docstring."""
    if isinstance(detector, type):
        raise CladValueError(
            f"check_detector expects an instance, got the class {detector.__name__}"
        )
    return _run(
        DETECTOR_CHECKS, detector, easy_concept(), raise_on_failure, f"detector {_name(detector)}"
    )


# --------------------------------------------------------------------------------- strategies
def _two_concepts():
    X1, T1, y1 = easy_concept(seed=1)
    X2, T2, y2 = easy_concept(seed=2)
    return [("a", X1), ("b", X2 + 1.0)], [("a", T1, y1), ("b", T2 + 1.0, y2)]


def _learn_all(strategy, train):
    for cid, X in train:
        strategy.learn(
            X, concept_id=cid if getattr(strategy, "requires_concept_id", False) else None
        )
    return strategy


def _s_scores(strategy, test):
    from .strategies.base import Scored

    out = []
    for cid, X, _ in test:
        s = strategy.score(
            X, concept_id=cid if getattr(strategy, "requires_concept_id", False) else None
        )
        if not isinstance(s, Scored):
            raise CladValueError(
                f"score() returned {type(s).__name__}; expected clad.strategies.Scored"
            )
        out.append(s)
    return out


def _s_protocol(strat, data):
    for attr in ("learn", "score"):
        if not callable(getattr(strat, attr, None)):
            return f"no {attr}() method"
    for attr in ("requires_concept_id", "requires_boundaries"):
        if not isinstance(getattr(strat, attr, False), bool):
            return f"{attr} must be True or False"


def _s_scores_ok(strat, data):
    train, test = data
    s = _learn_all(_fresh(strat), train)
    for (cid, X, y), scored in zip(test, _s_scores(s, test)):
        sc = np.asarray(scored.scores)
        if sc.shape != (len(X),):
            return f"scores for concept {cid!r} have shape {sc.shape}; expected ({len(X)},)"
        if not np.isfinite(sc).all() or not np.isfinite(scored.threshold):
            return f"non-finite scores or threshold for concept {cid!r}"


def _s_remembers_latest(strat, data):
    train, test = data
    s = _learn_all(_fresh(strat), train)
    cid, X, y = test[-1]
    auc = roc_auc_score(y, _s_scores(s, test)[-1].scores)
    if auc < 0.8:
        return f"ROC-AUC {auc:.3f} on the concept just learned (easy case); expected > 0.8"


def _s_clone(strat, data):
    train, _ = data
    s = _learn_all(_fresh(strat), train)
    c = _fresh(s)
    if _fitted_attrs(c):
        return f"a clone of a trained strategy has state {_fitted_attrs(c)}; expected none"
    p1, p2 = _params(s), _params(c)
    diff = [k for k in p1 if k != "detector" and not _same(p1[k], p2.get(k))]
    if diff:
        return f"a clone has different parameters: {diff}"


def _s_pickle(strat, data):
    train, test = data
    s = _learn_all(_fresh(strat), train)
    b = pickle.loads(pickle.dumps(s))
    for x, y in zip(_s_scores(s, test), _s_scores(b, test)):
        if not np.array_equal(x.scores, y.scores):
            return "scores change after a pickle round trip"


def _s_same_seed(strat, data):
    train, test = data
    runs = []
    for _ in range(2):
        s = _with_seed(strat, 11)
        det = _params(s).get("detector")
        if det is not None:
            s.set_params(detector=_with_seed(det, 5))
        runs.append([x.scores for x in _s_scores(_learn_all(s, train), test)])
    if not all(np.array_equal(a, b) for a, b in zip(*runs)):
        return "the same random_state gave different scores"


def _s_memory(strat, data):
    train, _ = data
    s = _learn_all(_fresh(strat), train)
    fn = getattr(s, "memory_rows", None)
    if fn is None:
        return None
    rows = fn()
    if not isinstance(rows, (int, np.integer)) or rows < 0:
        return f"memory_rows() returned {rows!r}; expected a non-negative integer"


def _s_keeps_params(strat, data):
    train, _ = data
    return _keeps_params(strat, lambda s: _learn_all(s, train), "learn() changed parameter(s) {}")


STRATEGY_CHECKS: dict[str, Callable] = {
    "protocol": _s_protocol,
    "scores_shape_and_finite": _s_scores_ok,
    "detects_on_latest_concept": _s_remembers_latest,
    "clone_is_untrained_with_equal_params": _s_clone,
    "pickle_round_trip": _s_pickle,
    "same_seed_same_scores": _s_same_seed,
    "memory_rows": _s_memory,
    "learn_does_not_change_params": _s_keeps_params,
    "no_mutable_defaults": _mutable_defaults,
}


def check_strategy(strategy, raise_on_failure: bool = True) -> CheckReport:
    """Run every strategy check on an untrained strategy (with its detector prototype).

    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.strategies import Cumulative
    >>> check_strategy(Cumulative(IsolationForest(n_estimators=20))).ok
    True
    """
    return _run(
        STRATEGY_CHECKS, strategy, _two_concepts(), raise_on_failure, f"strategy {_name(strategy)}"
    )


def _parametrize(objs, checks: dict, data_fn, argnames: str):
    import pytest

    params, ids = [], []
    for obj in objs:
        for name, fn in checks.items():
            params.append((obj, _bind(fn, data_fn)))
            ids.append(f"{_name(obj)}-{name}")
    return pytest.mark.parametrize(argnames, params, ids=ids)


def _bind(fn, data_fn) -> Callable[[Any], None]:
    def check(obj):
        msg = fn(obj, data_fn())
        if msg is not None:
            raise ConformanceError(f"{_name(obj)}: {msg}")

    check.__name__ = fn.__name__.lstrip("_")
    return check


def parametrize_detector_checks(detectors):
    """``pytest.mark.parametrize("detector, check", ...)``: one test per detector and check.

    Use it as::

        @parametrize_detector_checks([MyDetector(), IsolationForest()])
        def test_conformance(detector, check):
            check(detector)
    """
    return _parametrize(detectors, DETECTOR_CHECKS, easy_concept, "detector, check")


def parametrize_strategy_checks(strategies):
    """Like :func:`parametrize_detector_checks`, for strategies (``"strategy, check"``)."""
    return _parametrize(strategies, STRATEGY_CHECKS, _two_concepts, "strategy, check")


# -- base metrics ----------------------------------------------------------------------------------

#: random cases a base metric's bounds are checked on
BOUNDS_CASES = 40


def _metric_cases(seed: int = 0, n_cases: int = BOUNDS_CASES):
    """Random labels (both classes; anomalies in runs, as a time series has them) with random
    scores: some tied, some informative, some reversed; and their labels at a random threshold."""
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n = int(rng.integers(8, 400))
        y = np.zeros(n, dtype=np.int8)
        for _ in range(int(rng.integers(1, 6))):
            start = int(rng.integers(0, n))
            y[start : start + int(rng.integers(1, max(2, n // 8)))] = 1
        if y.all() or not y.any():
            y[:1], y[-1:] = 0, 1
        scores = rng.normal(size=n) + y * rng.normal(scale=2.0)
        if k % 3 == 1:
            scores = np.round(scores, 0)
        threshold = float(np.quantile(scores, rng.uniform(0.0, 1.0)))
        yield y, scores, (scores > threshold).astype(np.int8)


def _input(metric, scores, labels):
    return scores if metric.input == "scores" else labels


def _m_declaration(metric, data=None):
    from .metrics.base import BaseMetric

    if not isinstance(metric, BaseMetric):
        return f"expected a clad.metrics.BaseMetric declaration, got {type(metric).__name__}"
    return None


def _m_bounds(metric, data=None):
    import warnings

    lo, hi = metric.bounds
    for y, scores, labels in _metric_cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = metric(y, _input(metric, scores, labels))
        if not np.isfinite(value) or not lo <= value <= hi:
            return (
                f"{value!r} on {y.size} random labels ({int(y.sum())} anomalies) is outside its declared "
                f"bounds [{lo:g}, {hi:g}]"
            )
    return None


def _m_chance(metric, data=None):
    import warnings

    for y, scores, _ in list(_metric_cases(seed=1, n_cases=10)):
        scoreless = (
            np.full(y.size, 0.5) if metric.input == "scores" else np.ones(y.size, dtype=np.int8)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value, chance = metric(y, scoreless), metric.chance_level(y)
        # an optimistic metric's threshold grid on one score flags nothing; its chance level is the
        # better of flagging nothing and flagging everything, so it may lie above that value
        if not (
            np.isclose(value, chance, rtol=1e-9, atol=1e-12)
            or (metric.optimistic and value <= chance)
        ):
            return (
                f"a scoreless detector (every row the same score) gets {value!r} on {y.size} labels "
                f"({int(y.sum())} anomalies), but the declared chance level is {chance!r}"
            )
    return None


def _m_one_class(metric, data=None):
    import warnings

    rng = np.random.default_rng(2)
    scores = rng.normal(size=50)
    additive = getattr(
        metric, "additive", False
    )  # a count is defined on one class: finite, not NaN
    for cls in (0, 1):
        y = np.full(50, cls, dtype=np.int8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = metric(y, _input(metric, scores, (scores > 0).astype(np.int8)))
            except Exception as exc:  # noqa: BLE001 - the evaluator needs a NaN, not an exception
                return f"labels all {cls} raise {type(exc).__name__}: {exc}; expected NaN"
        if additive and not np.isfinite(value):
            return f"labels all {cls} (one class) give {value!r}; expected a finite count (the metric is additive)"
        if not additive and not np.isnan(value):
            return f"labels all {cls} (one class) give {value!r}; expected NaN (the metric is undefined there)"
    return None


#: the base metric checks: name -> function(metric, data) -> failure message or None
BASE_METRIC_CHECKS: dict[str, Callable] = {
    "declaration": _m_declaration,
    "bounds_on_random_inputs": _m_bounds,
    "chance_level_of_a_scoreless_detector": _m_chance,
    "nan_on_one_class": _m_one_class,  # for an additive metric (a count): finite on one class
}


def check_base_metric(metric, raise_on_failure: bool = True) -> CheckReport:
    """Run every base metric check on a declaration (or a name or import path of one).

    >>> check_base_metric("pr_auc_normalized").ok
    True
    """
    from .metrics.base import BaseMetric, get_base_metric

    decl = metric if isinstance(metric, BaseMetric) else get_base_metric(metric)
    checks = BASE_METRIC_CHECKS if isinstance(decl, BaseMetric) else {"declaration": _m_declaration}
    if getattr(
        decl, "additive", False
    ):  # a count is defined on one class: the same check, named for what it asks
        checks = {
            ("defined_on_one_class" if k == "nan_on_one_class" else k): v for k, v in checks.items()
        }
    return _run_checks(
        checks, lambda fn: fn(decl), raise_on_failure, f"base metric {getattr(decl, 'name', decl)}"
    )
