"""Plug-ins that misbehave in the ways a process can end or lie, named by import path in the
reliability tests' specs (``reliability_plugins:Name``; tests/ is on the path)."""

from __future__ import annotations

import os
import sys

import numpy as np


class _Mean:
    def fit(self, X):
        self.mean_ = np.asarray(X, dtype=float).reshape(len(X), -1).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X, dtype=float).reshape(len(X), -1) - self.mean_, axis=1)


class ExitDetector(_Mean):
    """Ends its process in ``fit``: ``how`` is ``"sys.exit"`` (SystemExit with ``code``),
    ``"os._exit"`` (the process ends at once, with ``code``) or ``"kill"`` (SIGKILL to itself)."""

    def __init__(self, how: str = "sys.exit", code: int = 0):
        self.how = how
        self.code = code

    def fit(self, X):
        if self.how == "sys.exit":
            sys.exit(self.code)
        if self.how == "os._exit":
            os._exit(self.code)
        if self.how == "kill":
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        return super().fit(X)


from clad.strategies import Naive, Scored  # noqa: E402


class LyingStrategy(Naive):
    """A strategy plug-in (naive learning) whose ``score`` breaks the contract: ``lie`` is
    ``"nan"`` (NaN scores), ``"short"`` (3 scores whatever the rows), ``"nan_threshold"`` or
    ``"text"``."""

    def __init__(self, detector=None, lie: str = "nan"):
        super().__init__(detector=detector)
        self.lie = lie

    def score(self, X, concept_id=None):
        n = len(X)
        if self.lie == "nan":
            return Scored(np.full(n, np.nan), 0.5)
        if self.lie == "short":
            return Scored(np.zeros(3), 0.5)
        if self.lie == "text":
            return Scored(np.array(["a"] * n), 0.5)
        return Scored(np.linspace(0, 1, n), float("nan"))


class GateDetector(_Mean):
    """Waits in ``fit`` until the file ``gate`` exists (at most ``limit`` seconds), so that a test
    holds a run open exactly as long as it needs to, on conditions rather than wall time."""

    def __init__(self, gate: str = "", limit: float = 600.0):
        self.gate = gate
        self.limit = limit

    def fit(self, X):
        import time

        end = time.monotonic() + self.limit
        while self.gate and not os.path.exists(self.gate) and time.monotonic() < end:
            time.sleep(0.05)
        return super().fit(X)


class ConstantDetector(_Mean):
    """Every row gets the same score (a detector without scores); its threshold is that score."""

    def fit(self, X):
        self.threshold_ = 0.0
        return self

    def score(self, X):
        return np.zeros(len(X))


from clad.metrics.base import BaseMetric, undefined_on_one_class  # noqa: E402


@undefined_on_one_class
def _shifted_auc(y, scores):
    """ROC-AUC plus 5: values far outside the [0, 1] its declaration claims."""
    from sklearn.metrics import roc_auc_score

    return 5.0 + roc_auc_score(y, scores)


@undefined_on_one_class
def _pair(y, scores):
    """Two numbers where one is expected."""
    return np.array([0.5, 0.5])


@undefined_on_one_class
def _text(y, scores):
    """A string where a number is expected."""
    return "0.5"


#: base metrics that break their declaration: out of bounds, an array, a string
OUT_OF_BOUNDS = BaseMetric("out_of_bounds", _shifted_auc, "shifted ROC-AUC", bounds=(0.0, 1.0))
ARRAY_METRIC = BaseMetric("array_metric", _pair, "a pair")
TEXT_METRIC = BaseMetric("text_metric", _text, "a string")
