"""Small plug-ins named by import path in the tests' spec files and `clad check`
(``tests.plugins:Name``, or ``plugins:Name`` with tests/ on the path)."""

from __future__ import annotations

import signal
import time

import numpy as np

from clad.core.concepts import ConceptDataset
from clad.datasets import make_synthetic


class FailingDetector:
    """A detector whose fit always raises."""

    def __init__(self, message: str = "this detector always fails"):
        self.message = message

    def fit(self, X):
        raise RuntimeError(self.message)

    def score(self, X):  # pragma: no cover - never fitted
        return np.zeros(len(X))


class SlowDetector:
    """Distance to the training mean, after sleeping ``delay`` seconds in every fit."""

    def __init__(self, delay: float = 0.2):
        self.delay = delay

    def fit(self, X):
        time.sleep(self.delay)
        self.mean_ = np.asarray(X).mean(axis=0)
        d = self.score(X)
        self.threshold_ = float(np.quantile(d, 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)


class FitLogDetector:
    """Distance to the training mean; every fit appends its number of rows as one line to the file
    ``log`` (so a test can count fits, also those made in worker processes)."""

    def __init__(self, log: str = ""):
        self.log = log

    def fit(self, X):
        X = np.asarray(X)
        if self.log:
            with open(self.log, "a", encoding="ascii") as f:
                f.write(f"{len(X)}\n")
        self.mean_ = X.mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)


class DeafDetector(SlowDetector):
    """Like :class:`SlowDetector`, but blocks SIGALRM while it sleeps, as native code that never
    returns to the interpreter would: only killing its process stops it."""

    def fit(self, X):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            return super().fit(X)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


def ordered_synthetic(
    n_concepts: int = 3,
    n_train: int = 100,
    n_test: int = 60,
    order: str = "given",
    random_state: int | None = 0,
) -> ConceptDataset:
    """The synthetic dataset with its training concepts in the ``given`` order, ``reversed``, or a
    ``random`` permutation drawn from ``random_state``."""
    ds = make_synthetic(
        n_concepts=n_concepts, n_train=n_train, n_test=n_test, random_state=random_state
    )
    train = list(ds.train)
    if order == "reversed":
        train = train[::-1]
    elif order == "random":
        perm = np.random.default_rng(random_state).permutation(len(train))
        train = [train[i] for i in perm]
    elif order != "given":
        raise ValueError(f"order={order!r}; expected 'given', 'reversed' or 'random'")
    return ConceptDataset(train, list(ds.test), name=f"synthetic-{order}")


class CrashingDetector(SlowDetector):
    """Ends its own process in fit, as a crash in native code would."""

    def fit(self, X):
        import os

        os._exit(70)


def logged_synthetic(
    log: str,
    n_concepts: int = 3,
    n_features: int = 4,
    n_train: int = 120,
    n_test: int = 60,
    random_state: int | None = 0,
) -> ConceptDataset:
    """The synthetic dataset; appends ``"<pid> <random_state>"`` to the file ``log`` at each load."""
    import os

    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()} {random_state}\n")
    return make_synthetic(
        n_concepts=n_concepts,
        n_features=n_features,
        n_train=n_train,
        n_test=n_test,
        random_state=random_state,
    )


class ThreadReport:
    """Fails on purpose with the thread limits it sees, so a test can read them in the error."""

    def fit(self, X):
        import os

        from threadpoolctl import threadpool_info

        counts = sorted({pool["num_threads"] for pool in threadpool_info()})
        raise RuntimeError(f"threads={counts} OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")

    def score(self, X):  # pragma: no cover - never fitted
        return np.zeros(len(X))


class DistanceToMean:
    """A correct ten-line detector."""

    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)


class TextScores(DistanceToMean):
    """Broken: scores as numeric strings."""

    def score(self, X):
        return np.array([f"{v:.6f}" for v in super().score(X)])


class WrongSign(DistanceToMean):
    """Broken: lower = more anomalous."""

    def score(self, X):
        return -super().score(X)


class WrongShape(DistanceToMean):
    """Broken: returns two columns."""

    def score(self, X):
        s = super().score(X)
        return np.c_[s, s]


class FitReturnsNone(DistanceToMean):
    """Broken: fit does not return self."""

    def fit(self, X):
        super().fit(X)


class MutableDefault(DistanceToMean):
    """Broken: a mutable default argument."""

    def __init__(self, weights=[]):  # noqa: B006 - deliberately broken
        self.weights = weights


class RaisesInFit(DistanceToMean):
    """Fails every run: raises in fit."""

    def fit(self, X):
        raise RuntimeError("this detector always fails in fit")


class NaNScores(DistanceToMean):
    """Returns NaN scores."""

    def score(self, X):
        return np.full(len(X), np.nan)


class RaisesInScore(DistanceToMean):
    """Fits, then raises when asked for scores."""

    threshold_ = 1.0

    def score(self, X):
        if getattr(self, "fitted_for_threshold_", False):
            raise RuntimeError("this detector always fails in score")
        return super().score(X)

    def fit(self, X):
        super().fit(X)
        self.fitted_for_threshold_ = True
        return self


class ZeroesInFit(SlowDetector):
    """Breaks the rules: zeroes the rows it is fitted on (``X *= 0``)."""

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    def fit(self, X):
        super().fit(X)
        X *= 0
        return self


class CentresInScore:
    """Breaks the rules: centres the rows it scores in place (``X -= X.mean(0)``); no threshold of
    its own (clad takes a quantile of its training scores)."""

    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def score(self, X):
        X -= X.mean(0)
        return np.linalg.norm(X - self.mean_, axis=1)


def row_hashes(X) -> list[str]:
    """One sha1 per row of ``X`` (its bytes as float64), the ids a RecordingDetector logs."""
    import hashlib

    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64).reshape(len(X), -1))
    return [hashlib.sha1(row.tobytes()).hexdigest() for row in X]


class RecordingDetector:
    """Distance to the training mean (to the power ``power``) that appends the hash of every row
    it scores, one per line, to the file ``log`` (nothing when empty)."""

    def __init__(self, log: str = "", power: float = 1.0):
        self.log = log
        self.power = power

    def fit(self, X):
        X = np.asarray(X, dtype=np.float64)
        self.mean_ = X.mean(axis=0)
        self.threshold_ = float(np.quantile(self._distance(X), 0.9))
        return self

    def _distance(self, X):
        return np.linalg.norm(np.asarray(X, dtype=np.float64) - self.mean_, axis=1) ** self.power

    def score(self, X):
        if self.log:
            with open(self.log, "a", encoding="utf-8") as f:
                f.writelines(h + "\n" for h in row_hashes(X))
        return self._distance(X)


class SeedIgnoring(DistanceToMean):
    """Deterministic, but takes a ``random_state`` it never uses: the seed reaches it, so its runs
    are not shared in advance, yet every seed gives byte-identical R."""

    def __init__(self, random_state=None):
        self.random_state = random_state


class Fragile(DistanceToMean):
    """Fails when fitted on more than ``max_rows`` rows (e.g. a cumulative strategy's later steps)."""

    def __init__(self, max_rows: int = 150):
        self.max_rows = max_rows

    def fit(self, X):
        if len(X) > self.max_rows:
            raise MemoryError(f"{len(X)} rows > max_rows={self.max_rows}")
        return super().fit(X)
