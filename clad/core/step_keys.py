"""The keys of training steps and scoring passes (:mod:`clad.core.steps`): what determines a
computation -- a configuration described as text (:func:`describe`), the exact rows
(:func:`rows_fingerprint`) and what a strategy declares it reads (:func:`declared`) -- hashed into
one key."""

from __future__ import annotations

import hashlib
import types
from typing import Any

import numpy as np

from .fitted_state import KEY_ATTR

__all__ = [
    "Unshareable",
    "rows_fingerprint",
    "describe",
    "hash_parts",
    "fit_key",
    "key_of",
    "declared",
    "score_key",
    "combine",
]


class Unshareable(TypeError):
    """An input that cannot be part of a key (an object whose state its description does not
    show): the step is computed, never shared."""


def rows_fingerprint(X) -> str:
    """The fingerprint of exactly these rows in this order (dtype, shape and bytes).

    >>> a = np.zeros((3, 2))
    >>> rows_fingerprint(a) == rows_fingerprint(np.zeros((3, 2))), rows_fingerprint(a) == rows_fingerprint(a.T)
    (True, False)
    """
    a = np.asarray(X)
    if a.dtype.hasobject:
        raise Unshareable("rows of dtype object")
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(np.ascontiguousarray(a).data)
    return h.hexdigest()


def describe(obj: Any, depth: int = 0) -> str:
    """A text that determines ``obj`` as a configuration: plain values, containers, arrays (by
    fingerprint), classes and functions by import path, estimators by class and
    ``get_params(deep=False)``; :class:`Unshareable` for anything else.

    >>> from sklearn.ensemble import IsolationForest
    >>> describe(IsolationForest(n_estimators=5)) == describe(IsolationForest(n_estimators=5))
    True
    >>> describe(IsolationForest(n_estimators=5)) == describe(IsolationForest(n_estimators=6))
    False
    """
    if depth > 12:
        raise Unshareable("a configuration nested too deep")
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return f"{type(obj).__name__}:{obj!r}"
    if isinstance(obj, np.generic):
        return f"{obj.dtype.str}:{obj!r}"
    if isinstance(obj, np.ndarray):
        return f"array:{rows_fingerprint(obj)}"
    if isinstance(obj, (list, tuple)):
        return f"{type(obj).__name__}[" + ",".join(describe(v, depth + 1) for v in obj) + "]"
    if isinstance(obj, dict):
        items = sorted((describe(k, depth + 1), describe(v, depth + 1)) for k, v in obj.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        name = getattr(obj, "__qualname__", "")
        if "<" in name:  # a lambda or a local function: its name does not determine it
            raise Unshareable(f"{name} has no import path")
        return f"{getattr(obj, '__module__', '?')}.{name}"
    get_params = getattr(obj, "get_params", None)
    if callable(get_params) and not isinstance(obj, type):
        cls = type(obj)
        return f"{cls.__module__}.{cls.__qualname__}({describe(get_params(deep=False), depth + 1)})"
    raise Unshareable(f"{type(obj).__name__} is not a configuration value")


def hash_parts(*parts: str) -> str:
    """One key of several texts (each ended by a NUL, so the parts cannot run into each other)."""
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def fit_key(detector, X) -> str:
    """The key of fitting a fresh, unfitted ``detector`` on ``X``: its configuration and the rows."""
    return "fit:" + hash_parts("fit", describe(detector), rows_fingerprint(X))


def key_of(detector) -> str | None:
    """The step key of the fit that made ``detector`` (None: not a keyed fit)."""
    return getattr(detector, KEY_ATTR, None) if detector is not None else None


def declared(strategy) -> tuple[str, ...] | None:
    """What ``strategy`` declares enters its step keys (its class's ``step_inputs``), or None when
    it is never shared: no declaration, or a class that writes its own ``learn`` or ``score`` (or
    ``_fit_new``, ``_new_detector``) below the class that declared, without declaring again.

    >>> from clad.strategies import Naive
    >>> class Mine(Naive):
    ...     def learn(self, X, concept_id=None):
    ...         return super().learn(X)
    >>> declared(Naive()), declared(Mine())
    (('rows', 'state'), None)
    """
    cls = type(strategy)
    owner = next((c for c in cls.__mro__ if "step_inputs" in c.__dict__), None)
    if owner is None or owner.__dict__["step_inputs"] is None:
        return None
    own = ("learn", "score", "_fit_new", "_new_detector", "score_key")
    for c in cls.__mro__:
        if c is owner:
            break
        if any(m in c.__dict__ for m in own):
            return None
    return tuple(owner.__dict__["step_inputs"])


def score_key(strategy, concept_id) -> str | None:
    """The key of what ``strategy.score(X, concept_id)`` computes from (without the rows), or None
    when it is not shared: a strategy's own ``score_key(concept_id)`` when it has one, else the
    key of its fitted ``detector_`` (with the id when the strategy reads it)."""
    if declared(strategy) is None:
        return None
    own = getattr(strategy, "score_key", None)
    if callable(own):
        return own(concept_id)
    base = key_of(getattr(strategy, "detector_", None))
    if base is None:
        return None
    read = getattr(strategy, "reads_concept_id", True)
    return hash_parts("score", base, repr(concept_id) if read else "")


def combine(*parts: Any) -> str:
    """A key made of other keys and plain values (for a strategy's ``score_key``)."""
    return hash_parts(*(repr(p) for p in parts))
