"""Plug-ins of the SLURM tests (``slurm_plugins:Name`` with tests/ on the path): a detector that
logs each fit with its seed and the SLURM job computing it, and one that takes a lot of memory."""

from __future__ import annotations

import os
import time

import numpy as np


class SeedLog:
    """Distance to the training mean; every fit appends ``RANDOM_STATE JOB`` to the file ``log``
    (so a test can count each run's computations and the job that made them), then sleeps
    ``delay`` seconds."""

    def __init__(self, log: str = "", delay: float = 0.0, random_state=None):
        self.log, self.delay, self.random_state = log, delay, random_state

    def fit(self, X):
        if self.log:
            job = (
                f"{os.environ['SLURM_ARRAY_JOB_ID']}_{os.environ['SLURM_ARRAY_TASK_ID']}"
                if "SLURM_ARRAY_TASK_ID" in os.environ
                else os.environ.get("SLURM_JOB_ID", "none")
            )
            with open(self.log, "a", encoding="ascii") as f:
                f.write(f"{self.random_state} {job}\n")
        time.sleep(self.delay)
        self.mean_ = np.asarray(X).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)


class MemoryHog:
    """Distance to the training mean, after taking ``mb`` megabytes (written, so they are
    resident) for ``hold`` seconds in every fit."""

    def __init__(self, mb: int = 1500, hold: float = 5.0):
        self.mb, self.hold = mb, hold

    def fit(self, X):
        block = np.ones(self.mb * 1024 * 1024 // 8)
        time.sleep(self.hold)
        del block
        self.mean_ = np.asarray(X).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.9))
        return self

    def score(self, X):
        return np.linalg.norm(np.asarray(X) - self.mean_, axis=1)
