"""Small plug-ins used by the tests (named by import path 'plugins:Name' from specs and the CLI)."""

import numpy as np


class DistanceToMean:
    """A correct ten-line detector."""

    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)


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
