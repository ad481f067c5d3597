"""Parameter checks shared by the loaders: each failure names the loader, the value and what is allowed."""

from __future__ import annotations

import numpy as np

from ..errors import CladTypeError, CladValueError
from ..registry import did_you_mean


def choice(loader: str, key: str, value, allowed) -> str:
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise CladValueError(f"{loader}: {key}={value!r}{hint}; allowed: {', '.join(map(repr, allowed))}")
    return value


def fraction(loader: str, key: str, value, low: float = 0.0, high: float = 1.0,
             low_open: bool = True, high_open: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise CladTypeError(f"{loader}: {key}={value!r}; expected a number")
    v = float(value)
    ok_low = v > low if low_open else v >= low
    ok_high = v < high if high_open else v <= high
    if not (ok_low and ok_high):
        lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
        raise CladValueError(f"{loader}: {key}={value!r}; expected a number in {lo}{low}, {high}{hi}")
    return v


def integer(loader: str, key: str, value, minimum: int = 1, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        extra = " or none" if allow_none else ""
        raise CladValueError(f"{loader}: {key}={value!r}; expected an integer >= {minimum}{extra}")
    return int(value)


def flag(loader: str, key: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise CladTypeError(f"{loader}: {key}={value!r}; expected true or false")
    return bool(value)


def seed(loader: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise CladValueError(f"{loader}: random_state={value!r}; expected a non-negative integer seed")
    return int(value)
