"""What every conformance check shares: the report (:class:`CheckReport`,
:class:`ConformanceError`), the easy test case, how parameters are compared, and running a family of
checks or parametrising a test suite over them."""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.base import clone

from ..errors import CladError, CladValueError

__all__ = ["CheckReport", "ConformanceError", "easy_concept"]


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
        passed = len(self.results) - len(self.failures)
        lines = [f"{self.subject}: {passed}/{len(self.results)} checks passed"]
        lines += [
            f"  ok   {name}" if msg is None else f"  FAIL {name}: {msg}"
            for name, msg in self.results.items()
        ]
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


def name_of(obj) -> str:
    return type(obj).__name__


def params_of(obj) -> dict:
    get = getattr(obj, "get_params", None)
    if callable(get):
        return get(deep=False)
    return {k: v for k, v in vars(obj).items() if not k.startswith("_") and not k.endswith("_")}


def same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if callable(getattr(a, "get_params", None)) and not isinstance(a, type):
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return pa.keys() == pb.keys() and all(same(pa[k], pb[k]) for k in pa)
    if callable(getattr(a, "_get_params", None)) and not isinstance(a, type):  # river estimators
        return same(a._get_params(), b._get_params())
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if hasattr(a, "__dict__") and type(a).__eq__ is object.__eq__:
        va = {k: v for k, v in vars(a).items() if not k.endswith("_")}
        vb = {k: v for k, v in vars(b).items() if not k.endswith("_")}
        return va.keys() == vb.keys() and all(same(va[k], vb[k]) for k in va)
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return np.array_equal(a, b)
        return bool(a == b) if type(a) is type(b) else False
    except Exception:  # noqa: BLE001 - objects without a usable __eq__
        return repr(a) == repr(b)


def keeps_params(obj, action, problem: str) -> str | None:
    """``problem`` naming the parameters that ``action`` on a fresh copy of ``obj`` changed, or None."""
    obj = fresh(obj)
    before = {k: copy.deepcopy(v) for k, v in params_of(obj).items()}
    action(obj)
    after = params_of(obj)
    changed = [k for k in before if k not in after or not same(before[k], after[k])]
    return problem.format(changed) if changed else None


def fitted_attrs(obj) -> list[str]:
    return [k for k in vars(obj) if k.endswith("_") and not k.startswith("__")]


def fresh(obj):
    try:
        return clone(obj)
    except TypeError:
        return copy.deepcopy(obj)


def with_seed(obj, seed: int):
    obj = fresh(obj)
    params = params_of(obj)
    if "random_state" in params:
        if hasattr(obj, "set_params"):
            obj.set_params(random_state=seed)
        else:
            obj.random_state = seed
    return obj


def mutable_defaults(obj, data=None) -> str | None:
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


def run_checks(
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


def run_on_copies(
    checks: dict[str, Callable], subject, data, raise_on_failure: bool, label: str
) -> CheckReport:
    """:func:`run_checks` of ``checks`` on ``subject``, each check given its own copy of ``data``
    (a check that writes into it harms no other).

    Parameters
    ----------
    checks : dict of str to callable
        Check name -> ``check(subject, data)`` returning None (passed) or the failure message.
    subject : object
        The detector or strategy checked.
    data : object
        The check's data (copied for each check).
    raise_on_failure : bool
        Raise a :class:`ConformanceError` listing every failure.
    label : str
        The report's subject (``"detector IsolationForest"``).
    """
    return run_checks(checks, lambda fn: fn(subject, copy.deepcopy(data)), raise_on_failure, label)


def parametrize(objs, checks: dict, data_fn, argnames: str):
    import pytest

    cases = [(obj, name, fn) for obj in objs for name, fn in checks.items()]
    params = [(obj, _bind(fn, data_fn)) for obj, _, fn in cases]
    ids = [f"{name_of(obj)}-{name}" for obj, name, _ in cases]
    return pytest.mark.parametrize(argnames, params, ids=ids)


def _bind(fn, data_fn) -> Callable[[Any], None]:
    def check(obj):
        msg = fn(obj, data_fn())
        if msg is not None:
            raise ConformanceError(f"{name_of(obj)}: {msg}")

    check.__name__ = fn.__name__.lstrip("_")
    return check
