"""One vocabulary of parameter checks: each component declares its constraints once.

Modelled on scikit-learn's ``_parameter_constraints`` (and built on its constraint objects in
:mod:`sklearn.utils._param_validation`): a class sets ``_parameter_constraints = {"key": [...]}``
and a loader function is wrapped by :func:`declare`. Each key maps to a list of allowed kinds
(any one suffices): :class:`Interval`, :class:`StrOptions`, ``None``, ``"boolean"``, a type, ...
Unlike scikit-learn's, clad's :class:`Interval` refuses booleans (``true`` is not a count), and a
failure names the component, the key, the value and what is allowed, every failing key at once.

:mod:`sklearn.utils._param_validation` is private to scikit-learn. clad pins what it uses of it
rather than copying it: ``Interval`` (its ``type``, ``left``, ``right``, ``closed`` and
``is_satisfied_by``), ``StrOptions`` and ``Options`` (their constructors and ``is_satisfied_by``),
``make_constraint`` (``None``, types, ``"boolean"``, ``"array-like"``, constraint objects) and the
``hidden`` flag of its constraints; ``tests/engine/test_spec_validation.py`` checks each of them, so a
scikit-learn release that changes one fails there first. :meth:`Validated._validate_params`
overrides scikit-learn's ``BaseEstimator._validate_params`` on purpose: the same role (check the
parameters against ``_parameter_constraints``), clad's vocabulary and messages.

>>> from numbers import Integral
>>> C = {"buffer_size": [Interval(Integral, 1, None, closed="left")], "mode": [StrOptions(("a", "b"))]}
>>> problems("Replay", {"buffer_size": 0, "mode": "a"}, C)
['Replay: buffer_size=0; expected an integer >= 1']
>>> check("Replay", {"buffer_size": True, "mode": "c"}, C)
Traceback (most recent call last):
...
clad.errors.CladValueError: Replay: buffer_size=True; expected an integer >= 1; Replay: mode='c'; allowed: 'a', 'b'
"""

from __future__ import annotations

import functools
import inspect
import os
from numbers import Integral, Real
from typing import Any, Callable

import numpy as np
from sklearn.utils._param_validation import Interval as _SkInterval
from sklearn.utils._param_validation import Options, make_constraint  # noqa: F401 - re-exported
from sklearn.utils._param_validation import StrOptions as _SkStrOptions

from .errors import CladValueError

__all__ = [
    "Interval",
    "StrOptions",
    "Options",
    "ListOf",
    "Device",
    "SEED",
    "COUNT",
    "declare",
    "problems",
    "check",
    "constraints_of",
    "Validated",
    "Integral",
    "Real",
    "check_n_jobs",
]


class Interval(_SkInterval):
    """scikit-learn's Interval, except that a boolean is never a number."""

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)

    def __init__(self, *args, description: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.description = description

    def __str__(self):
        return self.description or self.describe()

    def describe(self, plural: bool = False) -> str:
        kind = "an integer" if self.type is Integral else "a number"
        if plural:
            kind = "integers" if self.type is Integral else "numbers"
        lo_in = self.closed in ("left", "both")
        hi_in = self.closed in ("right", "both")
        if self.right is None and self.left is not None:
            return f"{kind} {'>=' if lo_in else '>'} {self.left}"
        if self.left is None and self.right is not None:
            return f"{kind} {'<=' if hi_in else '<'} {self.right}"
        if self.left is None:
            return kind
        return f"{kind} in {'[' if lo_in else '('}{self.left}, {self.right}{']' if hi_in else ')'}"


class StrOptions(_SkStrOptions):
    """One of the given strings; the options keep the order they are given in (for messages)."""

    def __init__(self, options, *, deprecated=None):
        self.ordered = tuple(options)
        super().__init__(set(self.ordered), deprecated=deprecated)

    def __str__(self):
        return "one of " + ", ".join(map(repr, self.ordered))


class ListOf:
    """A non-empty list (or tuple) whose every item satisfies ``item``."""

    def __init__(self, item):
        self.item = make_constraint(item)
        self.hidden = False

    def is_satisfied_by(self, val):
        return (
            isinstance(val, (list, tuple))
            and len(val) > 0
            and all(self.item.is_satisfied_by(v) for v in val)
        )

    def __str__(self):
        item = (
            self.item.describe(plural=True) if isinstance(self.item, Interval) else str(self.item)
        )
        return f"a non-empty list of {item}"


class Device:
    """A torch device string: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"`` (lower case, as torch
    spells them; ``"meta"``, ``"tpu"``, ``"CPU"`` or ``""`` are refused before anything runs)."""

    hidden = False

    def is_satisfied_by(self, val):
        import re

        return isinstance(val, str) and re.fullmatch(r"cpu|cuda(:[0-9]{1,3})?|mps", val) is not None

    def __str__(self):
        return "'cpu', 'cuda', 'cuda:N' or 'mps'"


#: a seed: an integer in [0, 2**63 - 1]
SEED = Interval(
    Integral, 0, 2**63 - 1, closed="both", description="a non-negative integer below 2**63"
)
#: a count of at least one
COUNT = Interval(Integral, 1, None, closed="left")


def _constraint(c):
    # clad's own constraints (and a component's, such as a detector's declared filter) have
    # is_satisfied_by; scikit-learn's vocabulary is made into its constraint objects
    return c if callable(getattr(c, "is_satisfied_by", None)) else make_constraint(c)


def _head(who: str | None, key: str, value: Any) -> str:
    return f"{key}: {value!r}" if who is None else f"{who}: {key}={value!r}"


def problems(who: str | None, params: dict, constraints: dict) -> list[str]:
    """One message per parameter of ``params`` that satisfies none of its declared constraints
    (``who: key=value; ...``, or ``key: value; ...`` without ``who``, as for a spec's own keys)."""
    out = []
    for key, value in params.items():
        allowed = constraints.get(key)
        if allowed is None or allowed == "no_validation":
            continue
        cons = [_constraint(c) for c in allowed]
        if any(c.is_satisfied_by(value) for c in cons):
            continue
        shown = [str(c) for c in cons if not getattr(c, "hidden", False)]
        options = [c for c in cons if isinstance(c, StrOptions)]
        if options and len(options) == len(cons):
            from .registry import did_you_mean

            hint = did_you_mean(value, options[0].ordered) if isinstance(value, str) else ""
            out.append(
                f"{_head(who, key, value)}{hint}; allowed: {', '.join(map(repr, options[0].ordered))}"
            )
        else:
            out.append(f"{_head(who, key, value)}; expected {' or '.join(shown)}")
    return out


def check(who: str, params: dict, constraints: dict) -> None:
    """Raise a :class:`~clad.errors.CladValueError` listing every failing parameter."""
    found = problems(who, params, constraints)
    if found:
        raise CladValueError("; ".join(found))


def constraints_of(obj: Any) -> dict:
    """The constraints ``obj`` (a class, an instance or a declared function) declares; {} if none."""
    return dict(getattr(obj, "_parameter_constraints", None) or {})


class Validated:
    """Mixin: ``_validate_params()`` checks ``get_params(deep=False)`` against the class's
    ``_parameter_constraints`` (the declarations of every base class merged). Put before
    scikit-learn's ``BaseEstimator`` in the bases, it replaces that class's method of the same name."""

    _parameter_constraints: dict = {}

    @classmethod
    def _all_constraints(cls) -> dict:
        merged: dict = {}
        for klass in reversed(cls.__mro__):
            merged.update(klass.__dict__.get("_parameter_constraints", {}) or {})
        return merged

    def _validate_params(self) -> None:
        name = getattr(self, "name", None)
        who = name if isinstance(name, str) else type(self).__name__
        check(who, self.get_params(deep=False), self._all_constraints())


def declare(
    constraints: dict,
    files: Callable[[dict], list] | None = None,
    nbytes: Callable[[dict], int | None] | None = None,
    rules: Callable[[dict], list] | None = None,
    rest: Callable[[dict, dict], Any] | None = None,
) -> Callable:
    """Decorator for a loader function: its parameters are checked against ``constraints`` on every
    call (before its body runs), and the declaration stays readable for a spec check without a call.

    ``files(arguments) -> [(relpath, sha256 or None), ...]`` names the data files a call reads, so
    that a spec can locate and verify them before anything runs. ``rest(arguments, extra)`` checks
    the keys the signature leaves to its ``**kwargs`` (``extra``; a flat loader's recipe
    parameters), raising a :class:`~clad.errors.CladError` naming what is wrong, and returns the
    arguments that replace them in the call (a flat loader's checked recipe object); a spec calls it
    too, before anything runs. ``nbytes(arguments)`` is the memory the data set a call builds takes,
    known from the arguments (None when it is not): a spec refuses one above its ``max_data_gb``
    before anything is built (its docstring says how the size is counted). ``rules(arguments) ->
    [problem, ...]`` states what the constraints of single parameters cannot (one parameter against
    another, or against the data file once it is located); it runs on every call (the first problem
    is raised) and in a spec's check.

    >>> @declare({"n": [COUNT]})
    ... def f(n=1):
    ...     return n
    >>> f(2), f.__name__
    (2, 'f')
    >>> f(0)
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: f: n=0; expected an integer >= 1
    """

    def deco(fn):
        sig = inspect.signature(fn)
        who = fn.__name__.removeprefix("load_").removeprefix("make_")

        var_keyword = [n for n, p in sig.parameters.items() if p.kind is p.VAR_KEYWORD]

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            values = dict(bound.arguments)
            extra = values.pop(var_keyword[0], {}) if var_keyword else {}
            check(who, values, constraints)
            if rules is not None:
                found = rules({**values, **extra})
                if found:
                    raise CladValueError(f"{who}: {found[0]}")
            if rest is None:
                return fn(*args, **kwargs)
            return fn(**{**values, **rest(values, extra)})

        wrapper._parameter_constraints = dict(constraints)
        wrapper._data_files = files
        wrapper._data_nbytes = nbytes
        wrapper._data_rules = rules
        wrapper._check_rest = rest
        return wrapper

    return deco


def arguments(fn: Callable, params: dict) -> dict:
    """``params`` completed with ``fn``'s defaults (what a call would see), without calling it."""
    sig = inspect.signature(fn)
    out = {
        k: p.default
        for k, p in sig.parameters.items()
        if p.default is not inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    out.update(params)
    return out


def check_n_jobs(n_jobs) -> int:
    """The number of scoring threads for ``n_jobs``: None -> 1, -1 -> every CPU, k >= 1 -> k.

    >>> check_n_jobs(None), check_n_jobs(3)
    (1, 3)
    """
    if n_jobs is None:
        return 1
    if (
        isinstance(n_jobs, bool)
        or not isinstance(n_jobs, (int, np.integer))
        or (n_jobs < 1 and n_jobs != -1)
    ):
        raise CladValueError(f"n_jobs={n_jobs!r}; expected None, -1 (every CPU) or an integer >= 1")
    return int(os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
