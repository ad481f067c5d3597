"""The strategy interface and the base class that does the work every strategy shares.

A strategy owns one or more detectors and decides what they are trained on:

* ``learn(X, concept_id=None)`` — one training call (a whole concept, or a batch of a stream);
* ``score(X, concept_id=None) -> Scored`` — scores (higher = more anomalous) and the threshold that
  turns them into labels, from **one** scoring pass.

Strategies are scikit-learn style estimators: ``__init__`` stores parameters only (the detector
*prototype* and ``random_state``); all state is created by ``learn`` and ends in ``_``. The
prototype is never fitted: each detector a strategy trains is a fresh ``clone`` of it.

Class attributes tell scenarios what a strategy needs: ``requires_concept_id`` (concept-aware only)
and ``requires_boundaries`` (not the concept-agnostic stream); ``supported_scenarios`` is derived
from them and from what each registered scenario gives. A scenario refuses a strategy whose needs
it cannot meet before anything runs.

:class:`Strategy` does the rest for every subclass, so that a subclass writes only ``learn`` (and
``score`` when it has more than one detector); the table in ``docs/guides/writing-strategies.md``
lists it. Besides: ``learn`` and ``score`` receive ``X`` read-only (a view, never a copy), a
detector's write into it raises a :class:`~clad.errors.DetectorError` naming the detector and the
method, and the parameters are checked against ``_parameter_constraints`` at the first ``learn``.

>>> import numpy as np
>>> from sklearn.ensemble import IsolationForest
>>> class Latest(Strategy):
...     def learn(self, X, concept_id=None):
...         self.detector_ = self._fit_new(X)
...         return self
>>> s = Latest(IsolationForest(n_estimators=10, random_state=0)).learn(np.zeros((20, 2)))
>>> s.n_learn_calls_, s.memory_rows(), s.supported_scenarios
(1, 0, ('concept_agnostic', 'concept_aware', 'concept_incremental'))
"""

from __future__ import annotations

import abc
import functools

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..core.concepts import readonly
from ..core.scored import Scored
from ..core.steps import fit_fresh
from ..detectors import as_detector, detector_name
from ..detectors.base import writes_guard
from ..errors import CladValueError
from ..validation import SEED, Validated

__all__ = ["Scored", "Strategy", "scenarios_for"]


def scenarios_for(requires_concept_id: bool, requires_boundaries: bool) -> tuple[str, ...]:
    """Names of the registered scenarios that give what a strategy with these needs requires.

    >>> scenarios_for(False, True)
    ('concept_aware', 'concept_incremental')
    """
    from ..scenarios import SCENARIOS

    out = []
    for name in SCENARIOS.names():
        scenario = SCENARIOS.resolve(name)
        if requires_concept_id and not getattr(scenario, "gives_concept_id", False):
            continue
        if requires_boundaries and not getattr(scenario, "gives_boundaries", False):
            continue
        out.append(name)
    return tuple(out)


class _SupportedScenarios:
    """``supported_scenarios``, read from the class's ``requires_*`` flags when asked for."""

    def __get__(self, obj, cls=None) -> tuple[str, ...]:
        cls = type(obj) if cls is None else cls
        return scenarios_for(bool(cls.requires_concept_id), bool(cls.requires_boundaries))


def _guarded(method):
    """Wrap a strategy's ``learn`` or ``score``: ``X`` handed over read-only, a detector's write
    into it reported by name, and each ``learn`` call counted once in ``n_learn_calls_`` (also
    when a subclass's ``learn`` calls ``super().learn``)."""
    name = method.__name__
    counted = name == "learn"

    @functools.wraps(method)
    def wrapper(self, X, concept_id=None, *args, **kwargs):
        X = readonly(X)
        outer = counted and not self.__dict__.get("_clad_learning", False)
        if outer:
            self.__dict__["_clad_learning"] = True
            if not hasattr(self, "n_learn_calls_"):
                self._validate_params()  # the declared constraints, before the first training call
                self.n_learn_calls_ = 0
        try:
            with writes_guard(
                lambda: f"{self._detector_name()} (in {type(self).__name__}.{name})", name
            ):
                out = method(self, X, concept_id, *args, **kwargs)
        finally:
            if outer:
                self.__dict__.pop("_clad_learning", None)
        if outer:
            self.n_learn_calls_ += 1
        return out

    wrapper._clad_guarded = True
    return wrapper


class Strategy(Validated, BaseEstimator, abc.ABC):
    """Base class of clad's strategies (a user's strategy may also just follow the interface).

    A subclass implements :meth:`learn`; it overrides :meth:`score` only when it keeps more than
    one detector (as :class:`~clad.strategies.Experts` does).
    """

    requires_concept_id: bool = False
    requires_boundaries: bool = False
    #: whether ``learn`` or ``score`` read ``concept_id`` (True unless a subclass says otherwise: a
    #: strategy that ignores it gives the same R in concept_aware and concept_incremental)
    reads_concept_id: bool = True
    #: whether the strategy draws from ``random_state`` (False: it only hands it on, and the run
    #: seed does not change its result; see :func:`clad.core.seeding.seed_consumers`)
    uses_random_state: bool = True
    #: what enters the key of each training step (:mod:`clad.core.steps`): ``("rows",)`` says each
    #: fit is a fresh clone of the prototype fitted on the rows given to ``_fit_new``, never changed
    #: afterwards, and ``score`` is the fitted ``detector_``'s (or ``score_key`` says what it reads);
    #: None (default): never shared. A subclass with its own ``learn`` or ``score`` declares again.
    step_inputs: tuple[str, ...] | None = None
    #: why runs of this strategy cannot be trained as replicas of one stacked torch model
    #: (:mod:`clad.detectors.torch_replicas`), or None when they can: a strategy says so itself
    #: (None) when its torch training goes through the detector's ``fit`` / ``partial_fit`` with at
    #: most an ``extra_loss`` hook that reads the module's ``parameters()`` and ``reconstruct``
    replicas_problem: str | None = "the strategy does not say that it can run per replica"
    #: parameter constraints (clad.validation), checked at the first learn and by a spec before any run
    _parameter_constraints = {"random_state": [None, SEED]}
    #: scenario names this strategy runs in (derived from the two flags above)
    supported_scenarios = _SupportedScenarios()

    def __init__(self, detector=None, random_state: int | None = None):
        self.detector = detector
        self.random_state = random_state

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("learn", "score"):
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "_clad_guarded", False):
                setattr(cls, name, _guarded(method))

    def detector_problem(self, detector) -> str | None:
        """Why this strategy cannot train ``detector`` (a built detector, e.g. one without
        ``partial_fit`` for a strategy that trains one detector further), or None when it can. A
        spec asks it for every strategy x detector pair before anything runs; ``learn`` raises the
        same message."""
        return None

    # -- helpers for subclasses -------------------------------------------------------------
    def _new_detector(self):
        """A fresh, unfitted detector cloned from the prototype."""
        if self.detector is None:
            raise CladValueError(f"{type(self).__name__}: detector=None; give a detector prototype")
        return clone(as_detector(self.detector))

    def _fit_new(self, X):
        """A fresh detector fitted on ``X`` (handed over read-only); computed once per step key
        across the runs of a process when the strategy declares ``step_inputs``
        (:func:`clad.core.steps.fit_fresh`)."""
        return fit_fresh(self, self._new_detector(), readonly(X))

    def _check_fitted(self, attr: str = "detector_") -> None:
        if not hasattr(self, attr):
            raise CladValueError(f"{type(self).__name__}: score() called before any learn()")

    def _detector_name(self) -> str:
        if self.detector is None:
            return "None"
        try:
            return detector_name(as_detector(self.detector))
        except Exception:  # noqa: BLE001 - only a label for an error message
            return type(self.detector).__name__

    def memory_rows(self) -> int:
        """Training rows this strategy keeps in memory: the rows of ``buffer_`` (0 without one)."""
        return len(self.buffer_) if hasattr(self, "buffer_") else 0

    # -- interface -------------------------------------------------------------------------
    @abc.abstractmethod
    def learn(self, X: np.ndarray, concept_id: str | None = None) -> "Strategy":
        """One training call; returns ``self``."""

    @_guarded
    def score(self, X: np.ndarray, concept_id: str | None = None) -> Scored:
        """Scores of ``X`` and the threshold, from the single fitted detector ``detector_``."""
        self._check_fitted()
        return Scored(self.detector_.score(X), self.detector_.threshold_)
