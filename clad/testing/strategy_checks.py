"""The strategy contract's checks (:data:`STRATEGY_CHECKS`, :func:`check_strategy`)."""

from __future__ import annotations

import pickle
from typing import Callable

import numpy as np
from sklearn.metrics import roc_auc_score

from ..errors import CladValueError
from ..strategies.base import Scored
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

__all__ = ["STRATEGY_CHECKS", "check_strategy", "parametrize_strategy_checks"]


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
    s = _learn_all(fresh(strat), train)
    for (cid, X, y), scored in zip(test, _s_scores(s, test)):
        sc = np.asarray(scored.scores)
        if sc.shape != (len(X),):
            return f"scores for concept {cid!r} have shape {sc.shape}; expected ({len(X)},)"
        if not np.isfinite(sc).all() or not np.isfinite(scored.threshold):
            return f"non-finite scores or threshold for concept {cid!r}"


def _s_remembers_latest(strat, data):
    train, test = data
    s = _learn_all(fresh(strat), train)
    cid, X, y = test[-1]
    auc = roc_auc_score(y, _s_scores(s, test)[-1].scores)
    if auc < 0.8:
        return f"ROC-AUC {auc:.3f} on the concept just learned (easy case); expected > 0.8"


def _s_clone(strat, data):
    train, _ = data
    s = _learn_all(fresh(strat), train)
    c = fresh(s)
    if fitted_attrs(c):
        return f"a clone of a trained strategy has state {fitted_attrs(c)}; expected none"
    p1, p2 = params_of(s), params_of(c)
    diff = [k for k in p1 if k != "detector" and not same(p1[k], p2.get(k))]
    if diff:
        return f"a clone has different parameters: {diff}"


def _s_pickle(strat, data):
    train, test = data
    s = _learn_all(fresh(strat), train)
    b = pickle.loads(pickle.dumps(s))
    for x, y in zip(_s_scores(s, test), _s_scores(b, test)):
        if not np.array_equal(x.scores, y.scores):
            return "scores change after a pickle round trip"


def _s_same_seed(strat, data):
    train, test = data
    runs = []
    for _ in range(2):
        s = with_seed(strat, 11)
        det = params_of(s).get("detector")
        if det is not None:
            s.set_params(detector=with_seed(det, 5))
        runs.append([x.scores for x in _s_scores(_learn_all(s, train), test)])
    if not all(np.array_equal(a, b) for a, b in zip(*runs)):
        return "the same random_state gave different scores"


def _s_memory(strat, data):
    train, _ = data
    s = _learn_all(fresh(strat), train)
    fn = getattr(s, "memory_rows", None)
    if fn is None:
        return None
    rows = fn()
    if not isinstance(rows, (int, np.integer)) or rows < 0:
        return f"memory_rows() returned {rows!r}; expected a non-negative integer"


def _s_keeps_params(strat, data):
    train, _ = data
    return keeps_params(strat, lambda s: _learn_all(s, train), "learn() changed parameter(s) {}")


STRATEGY_CHECKS: dict[str, Callable] = {
    "protocol": _s_protocol,
    "scores_shape_and_finite": _s_scores_ok,
    "detects_on_latest_concept": _s_remembers_latest,
    "clone_is_untrained_with_equal_params": _s_clone,
    "pickle_round_trip": _s_pickle,
    "same_seed_same_scores": _s_same_seed,
    "memory_rows": _s_memory,
    "learn_does_not_change_params": _s_keeps_params,
    "no_mutable_defaults": mutable_defaults,
}


def check_strategy(strategy, raise_on_failure: bool = True) -> CheckReport:
    """Run every strategy check on an untrained strategy (with its detector prototype).

    >>> from sklearn.ensemble import IsolationForest
    >>> from clad.strategies import Cumulative
    >>> check_strategy(Cumulative(IsolationForest(n_estimators=20))).ok
    True
    """
    return run_on_copies(
        STRATEGY_CHECKS,
        strategy,
        _two_concepts(),
        raise_on_failure,
        f"strategy {name_of(strategy)}",
    )


def parametrize_strategy_checks(strategies):
    """Like :func:`parametrize_detector_checks`, for strategies (``"strategy, check"``)."""
    return parametrize(strategies, STRATEGY_CHECKS, _two_concepts, "strategy, check")
