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
