"""Training steps computed once: a step's identity is its inputs.

A training step's **key** is computed from its inputs alone, before anything is fitted (a fresh
fit: :func:`fit_key`; scoring under a fitted state: :func:`~clad.core.step_keys.score_key`). Two
steps with the same key give the same fitted state and the same scores, so a :class:`StepCache`
(one per thread of one process: :func:`using`) computes each key once. A strategy is shared only if
it declares what enters its key (``step_inputs``, :func:`declared`); a cache made with
``verify=True`` computes every step anyway and raises :class:`SharingMismatch` on a difference.
The keys, the declarations and the verification: ``docs/guides/running.md`` (training steps
computed once) and ``docs/guides/writing-strategies.md`` (sharing training steps).

>>> import numpy as np
>>> from sklearn.ensemble import IsolationForest
>>> from clad.detectors import as_detector
>>> det = as_detector(IsolationForest(n_estimators=5, random_state=0))
>>> X = np.arange(20.0).reshape(10, 2)
>>> fit_key(det, X) == fit_key(det, X.copy()), fit_key(det, X) == fit_key(det, X[::-1])
(True, False)
>>> cache = StepCache()
>>> a = cache.fit(det, X, origin="step 1")
>>> b = cache.fit(det, X.copy(), origin="step 2")
>>> a is b, cache.counts.fits, cache.counts.fits_computed
(True, 2, 1)
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import threading
import warnings
from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np
from ..errors import CladError
from .concepts import owned
from .fitted_state import KEY_ATTR, first_difference, learned_state, state_bytes
from .step_keys import Unshareable, declared, fit_key, hash_parts, key_of, rows_fingerprint

__all__ = [
    "StepCache",
    "SharingMismatch",
    "Counts",
    "learned_state",
    "using",
    "current",
    "DEFAULT_MAX_BYTES",
    "fit_fresh",
    "fit_owned",
    "fit_further",
    "forget_key",
    "grid_work",
    "format_work",
]


#: a cache's default limit: the bytes of fitted states and scores it keeps (256 MiB)
DEFAULT_MAX_BYTES = 256 * 2**20


class SharingMismatch(CladError):
    """A shared step's result differs from the same step computed fresh: a strategy or detector
    declared fewer inputs than its computation reads."""


# -- the cache ---------------------------------------------------------------------------------------
@dataclass
class Counts:
    """What went through a cache: fits asked for and computed, scoring passes asked for and computed,
    and (verifying) how many shared results were checked against a fresh computation."""

    fits: int = 0
    fits_computed: int = 0
    passes: int = 0
    passes_computed: int = 0
    verified: int = 0

    def copy(self) -> "Counts":
        return dataclasses.replace(self)

    def minus(self, other: "Counts") -> "Counts":
        return Counts(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))


@dataclass
class _Entry:
    value: Any
    nbytes: int
    origin: str
    state: dict | None = None
    #: the warnings computing it raised, ``(message, category)``: raised again wherever it is used
    warned: tuple = ()


def _computing(compute: Callable[[], Any]) -> tuple[Any, tuple]:
    """``compute()`` and the warnings it raised (caught here: the caller raises them again, so a
    run records the same warnings whether it computed a step or took it from the cache)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = compute()
    return value, tuple((str(w.message), w.category) for w in caught)


def _replay(warned: tuple) -> None:
    for message, category in warned:
        warnings.warn(message, category, stacklevel=3)


class StepCache:
    """Fitted states and scores by step key, at most ``max_bytes`` of them (estimated from their
    arrays and tensors; least recently used out first). ``verify`` computes every step anyway and
    compares (:class:`SharingMismatch` on a difference). ``peak_bytes`` is the most it held.

    Fitted detectors are handed out as they are: a declared strategy never changes a fitted
    detector (a detector that writes attributes while scoring rewrites them from its inputs on
    every call, as ECOD and COPOD do, which leaves its scores unchanged)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, verify: bool = False):
        self.max_bytes = int(max_bytes)
        self.verify = bool(verify)
        self.counts = Counts()
        self.bytes = 0
        self.peak_bytes = 0
        self._entries: "collections.OrderedDict[str, _Entry]" = collections.OrderedDict()
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._entries)

    def _get(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def _put(self, key: str, entry: _Entry) -> None:
        if entry.nbytes > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old.nbytes
        self._entries[key] = entry
        self.bytes += entry.nbytes
        while self.bytes > self.max_bytes and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self.bytes -= dropped.nbytes
        self.peak_bytes = max(self.peak_bytes, self.bytes)

    def count_fit(self) -> None:
        """Count a fit computed without a key (unshareable, or asked for by an undeclared strategy)."""
        with self._lock:
            self.counts.fits += 1
            self.counts.fits_computed += 1

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    # -- fits
    def fit(self, detector, X, origin: str = "") -> Any:
        """``detector`` (fresh, unfitted) fitted on ``X``, or the detector an earlier step with the
        same key fitted. The fitted detector carries its key (:func:`key_of`)."""
        try:
            key = fit_key(detector, X)
        except Unshareable:
            self.count_fit()
            return detector.fit(X)
        X = owned(X)  # the cached state may keep the rows: never rows someone can change later
        return self._fitted(key, lambda: detector.fit(X), origin, owned_copy=False)

    def fit_further(self, detector, X, origin: str = "") -> Any:
        """``detector`` (a keyed fitted state this strategy owns) trained further with
        ``partial_fit(X)``, or a copy of the state an earlier step with the same key reached (the
        key: the state it starts from and the rows). The strategy owns what it gets back."""
        try:
            start = key_of(detector)
            if start is None:
                raise Unshareable("a state without a key")
            key = "further:" + hash_parts("partial_fit", start, rows_fingerprint(X))
        except Unshareable:
            return _train_further(self, detector, X)
        detector.__dict__.pop(KEY_ATTR, None)
        return self._fitted(key, lambda: _train_further(None, detector, X), origin, owned_copy=True)

    def _fitted(self, key: str, compute: Callable[[], Any], origin: str, owned_copy: bool) -> Any:
        """What ``compute()`` fits under ``key``, computed once: shared as it is, or (``owned_copy``,
        for a strategy that goes on training it) kept as a snapshot and handed out as copies."""
        with self._lock:
            self.counts.fits += 1

        def keyed():
            fitted = compute()
            setattr(fitted, KEY_ATTR, key)
            return fitted

        def differs(entry: _Entry, fitted) -> str | None:
            where = first_difference(entry.state or {}, learned_state(fitted))
            if where is not None:
                return (
                    f"step key {key} was fitted by {entry.origin} and again by "
                    f"{origin or 'another step'}, and the two fitted states differ in {where!r}: the "
                    "strategy or detector declares fewer inputs than its fit reads"
                )

        keep = copy.deepcopy if owned_copy else None
        fitted, computed = self._once(
            key, keyed, origin, "fits_computed", differs, keep, state=True
        )
        return copy.deepcopy(fitted) if owned_copy and not computed else fitted

    def _once(
        self, key, compute, origin, counter, differs, keep=None, state=False
    ) -> tuple[Any, bool]:
        """``(value, computed)``: what an earlier step gave under ``key`` (its warnings raised
        again), or ``compute()`` (counted in ``counter``) kept under ``key``, as ``keep(value)``
        when given (with its learned state when verifying, if ``state``). Verifying, an earlier result is computed anyway and compared: ``differs(entry,
        value)`` describes a difference (a :class:`SharingMismatch`) or gives None."""
        with self._lock:
            entry = self._get(key)
        if entry is not None and not self.verify:
            _replay(entry.warned)
            return entry.value, False
        value, warned = _computing(compute)
        _replay(warned)
        with self._lock:
            if counter is not None:
                setattr(self.counts, counter, getattr(self.counts, counter) + 1)
            if entry is not None:
                self.counts.verified += 1
                difference = differs(entry, value)
                if difference is not None:
                    raise SharingMismatch(f"sharing verification failed: {difference}")
                return value, True
            kept = value if keep is None else keep(value)
            learned = learned_state(kept) if state and self.verify else None
            self._put(key, _Entry(kept, state_bytes(kept), origin, learned, warned))
        return value, True

    # -- scores
    def score(
        self,
        key: str | None,
        X,
        compute: Callable[[], Any],
        origin: str = "",
        rows: str | None = None,
    ) -> tuple[Any, bool]:
        """``(compute(), True)`` (a :class:`~clad.core.scored.Scored` of ``X``), or ``(what it
        gave an earlier step with the same key and rows, False)``.

        Parameters
        ----------
        key : str or None
            The scoring key (:func:`~clad.core.step_keys.score_key`); None: computed, never shared.
        X : array
            The rows scored.
        compute : callable
            Computes the scores of ``X`` when no earlier step gave them.
        origin : str
            The run and step asking, named if a verification finds a mismatch.
        rows : str, optional
            The fingerprint of ``X`` when the caller knows it
            (:func:`~clad.core.step_keys.rows_fingerprint`).
        """
        with self._lock:
            self.counts.passes += 1
        try:
            full = None if key is None else "score:" + hash_parts(key, rows or rows_fingerprint(X))
        except Unshareable:
            full = None
        if full is None:
            with self._lock:
                self.counts.passes_computed += 1
            return compute(), True

        def differs(entry: _Entry, value) -> str | None:
            if not _same_scored(entry.value, value):
                return (
                    f"scoring key {full} (state {key}) was computed by {entry.origin} and again by "
                    f"{origin or 'another step'}, and the scores differ: the strategy declares fewer "
                    "inputs than its scores read"
                )

        return self._once(full, compute, origin, "passes_computed", differs)

    # -- anything else computed from keyed inputs (the metric values of shared scores)
    def memo(self, key: str, compute: Callable[[], Any], origin: str = "") -> Any:
        """``compute()``, or what it gave an earlier call with the same ``key`` (its warnings
        raised again); verifying, computed anyway and compared (``repr``)."""

        def differs(entry: _Entry, value) -> str | None:
            if repr(entry.value) != repr(value):
                again = origin or "another step"
                return f"key {key} was computed by {entry.origin} and again by {again}, and the two differ"

        return self._once(key, compute, origin, None, differs)[0]


def _same_scored(a, b) -> bool:
    sa, sb = np.asarray(getattr(a, "scores", a)), np.asarray(getattr(b, "scores", b))
    ta, tb = getattr(a, "threshold", None), getattr(b, "threshold", None)
    return (
        sa.dtype == sb.dtype
        and sa.shape == sb.shape
        and sa.tobytes() == sb.tobytes()
        and np.asarray(ta, dtype=float).tobytes() == np.asarray(tb, dtype=float).tobytes()
    )


# -- the cache of this thread --------------------------------------------------------------------------
_LOCAL = threading.local()


def current() -> StepCache | None:
    """The cache this thread's runs share steps through (None: every step is computed)."""
    return getattr(_LOCAL, "cache", None)


@contextlib.contextmanager
def using(cache: StepCache | None):
    """Share steps through ``cache`` in this thread while the block runs (None: share nothing)."""
    before = current()
    _LOCAL.cache = cache
    try:
        yield cache
    finally:
        _LOCAL.cache = before


@dataclass
class _Origin:
    """Where a step happens, for verification messages (set by the evaluator)."""

    run: str = ""
    step: int = 0


def origin() -> str:
    """A description of the step this thread is computing (for a verification message)."""
    o = getattr(_LOCAL, "origin", None)
    return "" if o is None else f"{o.run or 'a run'}, training step {o.step}"


def set_origin(run: str | None = None, step: int | None = None) -> None:
    o = getattr(_LOCAL, "origin", None)
    if o is None:
        o = _LOCAL.origin = _Origin()
    if run is not None:
        o.run, o.step = run, 0
    if step is not None:
        o.step = step


def _train_further(cache: StepCache | None, detector, X):
    """``detector.partial_fit(X)`` computed here (counted in ``cache``, if any): its state is no
    longer the keyed one."""
    if cache is not None:
        cache.count_fit()
    detector.__dict__.pop(KEY_ATTR, None)
    detector.partial_fit(X)
    return detector


def fit_owned(strategy, detector, X):
    """``detector`` (a fresh clone) fitted on ``X`` for a strategy that goes on training it
    (``partial_fit``): a copy of a shared state, never the shared object itself."""
    cache = current()
    if cache is None or declared(strategy) is None:
        return fit_fresh(strategy, detector, X)
    try:
        key = fit_key(detector, X)
    except Unshareable:
        return fit_fresh(strategy, detector, X)
    X = owned(X)
    return cache._fitted(key, lambda: detector.fit(X), origin(), owned_copy=True)


def forget_key(detector) -> None:
    """``detector`` is about to change in a way no key describes: it is no longer a keyed state."""
    if detector is not None and hasattr(detector, "__dict__"):
        detector.__dict__.pop(KEY_ATTR, None)


def fit_further(strategy, detector, X):
    """``detector`` (the strategy's own) trained further with ``partial_fit(X)``: through this
    thread's cache when the strategy declares ``"state"`` among its step inputs, else computed."""
    cache = current()
    decl = declared(strategy)
    if cache is None or decl is None or "state" not in decl:
        return _train_further(cache, detector, X)
    return cache.fit_further(detector, X, origin=origin())


def fit_fresh(strategy, detector, X):
    """``detector`` (a fresh clone) fitted on ``X`` for ``strategy``: through this thread's cache
    when the strategy declares its step inputs, else computed."""
    cache = current()
    if cache is None or declared(strategy) is None:
        if cache is not None:
            cache.count_fit()
        return detector.fit(X)
    return cache.fit(detector, X, origin=origin())


# -- what a grid computed -------------------------------------------------------------------------
def grid_work(results) -> dict:
    """The work of a grid's runs: ``runs``, ``steps`` (training steps its runs contain),
    ``fitted`` (those computed), ``passes`` (scoring passes its runs contain) and ``scored``
    (those computed), and ``cache_bytes`` (the largest a cache held). A run recorded as sharing
    another's result (``shared_from``) contains that run's steps and computed none; a run without
    a record of its work (older results) counts as computing everything it contains."""
    out = {"runs": 0, "steps": 0, "fitted": 0, "passes": 0, "scored": 0, "cache_bytes": 0}
    for r in results:
        if not getattr(r, "ok", False):
            continue
        out["runs"] += 1
        work = (r.timings or {}).get("work") if isinstance(r.timings, dict) else None
        if not isinstance(work, dict):
            steps = len(r.concepts)
            passes = steps * len(r.test_concepts)
            work = {"steps": steps, "fitted": steps, "passes": passes, "scored": passes}
        out["steps"] += int(work.get("steps", 0))
        out["passes"] += int(work.get("passes", 0))
        if not r.shared_from:
            out["fitted"] += int(work.get("fitted", 0))
            out["scored"] += int(work.get("scored", 0))
        out["cache_bytes"] = max(out["cache_bytes"], int(work.get("cache_bytes", 0) or 0))
    return out


def format_work(work: dict) -> str:
    """The line a person reads: ``"1,440 runs: 7,200 training steps, 2,310 fitted; 36,000 scoring
    passes, 11,550 computed"``.

    >>> format_work({"runs": 2, "steps": 10, "fitted": 6, "passes": 50, "scored": 30})
    '2 runs: 10 training steps, 6 fitted; 50 scoring passes, 30 computed'
    """
    return (
        f"{work['runs']:,} runs: {work['steps']:,} training steps, {work['fitted']:,} fitted; "
        f"{work['passes']:,} scoring passes, {work['scored']:,} computed"
    )
