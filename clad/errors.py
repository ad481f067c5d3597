"""Exception classes raised by clad.

Every error that comes from what a user gave (a spec file, a dataset, a detector) is a
:class:`CladError`. The concrete classes also subclass the built-in exception that fits, so
``except ValueError`` keeps working for code that does not know clad.
"""

from __future__ import annotations

__all__ = [
    "CladError",
    "CladValueError",
    "CladTypeError",
    "DataError",
    "DetectorError",
    "SpecError",
    "ScenarioError",
    "RunWarning",
    "RunTimeoutError",
]


class CladError(Exception):
    """Base class of every error clad raises on purpose."""


class CladValueError(CladError, ValueError):
    """A value is not one of those allowed."""


class CladTypeError(CladError, TypeError):
    """A value has a type that is not allowed."""


class DataError(CladValueError):
    """A concept, a dataset or a data file is not usable (shape, labels, NaN, checksum...)."""


class DetectorError(CladValueError):
    """A detector broke its contract (wrong shape, non-finite scores, fit not returning self...)."""


class ScenarioError(CladValueError):
    """A strategy needs something the scenario does not give (e.g. a concept id)."""


class SpecError(CladValueError):
    """One or more problems in a spec file; ``problems`` lists every one of them."""

    def __init__(self, problems: list[str] | str, source: str | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.source = source
        head = f"{source}: " if source else ""
        if len(self.problems) == 1:
            msg = head + self.problems[0]
        else:
            msg = f"{head}{len(self.problems)} problems:\n" + "\n".join(
                f"  - {p}" for p in self.problems
            )
        super().__init__(msg)


class RunTimeoutError(CladError, TimeoutError):
    """A run took longer than its time limit (``run_experiment(timeout=...)``)."""


class RunWarning(UserWarning):
    """A run finished, but its numbers may mean little (constant scores, constant features, too
    few training rows, reversed scores, values lost in a cast): recorded in the run's
    ``warnings`` and counted on the console."""
