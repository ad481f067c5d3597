"""Parameter checks of the loaders' shared helpers (recipes, splits), in the one vocabulary of
:mod:`clad.validation`; each failure names the loader, the key, the value and what is allowed.
The loaders themselves declare their constraints with :func:`clad.validation.declare`."""

from __future__ import annotations

from ..validation import SEED, Integral, Interval, Real, StrOptions, check

#: constraints shared by the loaders (declared once here, used by every loader that has the key)
TEST_SIZE = [Interval(Real, 0.0, 1.0, closed="neither")]
CONTAMINATION = [Interval(Real, 0.0, 0.5, closed="both")]
SEEDS = [SEED]
FLAG = ["boolean"]


def choice(loader: str, key: str, value, allowed) -> str:
    check(loader, {key: value}, {key: [StrOptions(allowed)]})
    return value


def fraction(loader: str, key: str, value, high: float = 1.0, closed: str = "neither") -> float:
    check(loader, {key: value}, {key: [Interval(Real, 0.0, high, closed=closed)]})
    return float(value)


def integer(loader: str, key: str, value, minimum: int = 1, allow_none: bool = False) -> int | None:
    allowed = [Interval(Integral, minimum, None, closed="left")] + ([None] if allow_none else [])
    check(loader, {key: value}, {key: allowed})
    return None if value is None else int(value)


def seed(loader: str, value) -> int:
    check(loader, {"random_state": value}, {"random_state": SEEDS})
    return int(value)
