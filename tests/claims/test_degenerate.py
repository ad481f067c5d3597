"""Degenerate runs are flagged, not hidden: each case below finishes (or is refused) with a
warning (or the refusal) in the run's own record."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.neighbors import LocalOutlierFactor

from clad.core.concepts import Concept, ConceptDataset
from clad.core.experiment import run_experiment
from clad.datasets import make_synthetic
from clad.engine.config import Component, RunConfig
from clad.engine.run import run_safely
from clad.scenarios import ConceptAgnostic, ConceptIncremental
from clad.strategies import Naive


class MeanDistance:
    """Distance to the training mean (higher = more anomalous)."""

    def fit(self, X):
        self.mean_ = np.asarray(X, dtype=np.float64).mean(axis=0)
        return self

    def score(self, X):
        return np.abs(np.asarray(X, dtype=np.float64) - self.mean_).sum(axis=1)


class Constant(MeanDistance):
    def score(self, X):
        return np.zeros(len(X))


class Reversed(MeanDistance):
    def score(self, X):
        return -super().score(X)


class ComplexScores(MeanDistance):
    def score(self, X):
        return super().score(X) + 1j


class NaNThreshold(MeanDistance):
    def fit(self, X):
        super().fit(X)
        self.threshold_ = float("nan")
        return self


def data(n_concepts=3, n_train=60, n_test=40, edit=None):
    ds = make_synthetic(
        n_concepts=n_concepts, n_features=3, n_train=n_train, n_test=n_test, random_state=0
    )
    if edit is None:
        return ds
    return ConceptDataset(
        [Concept(c.name, edit(np.array(c.X)), c.y) for c in ds.train],
        [Concept(c.name, edit(np.array(c.X)), c.y) for c in ds.test],
        name=ds.name,
    )


def flagged(run, *words):
    hits = [w for w in run.warnings if all(word in w for word in words)]
    assert run.ok and hits, run.warnings
    assert all(w.startswith("RunWarning: ") for w in hits)
    return hits


def test_constant_scores_on_a_test_concept():
    run = run_experiment(data(), ConceptIncremental(), Naive(Constant()))
    assert np.all(run.R["roc_auc"] == 0.5)
    assert (
        len(flagged(run, "every score is the same", "ROC-AUC is 0.5")) == 3
    )  # one per test concept


def test_constant_and_near_constant_features_in_a_training_concept():
    def edit(X):
        X[:, 0] = 7.0
        X[:, 1] = 1e6 + 1e-6 * np.arange(len(X)) / len(X)  # varies in its 13th significant digit
        return X

    run = run_experiment(data(edit=edit), ConceptIncremental(), Naive(MeanDistance()))
    # one warning for the dataset, naming each concept (never one line per concept)
    (hit,) = flagged(run, "2 of 3 feature(s) constant or near-constant (column 0, 1)")
    assert "3 of 3 training concepts have constant or near-constant features" in hit


def test_a_training_step_with_fewer_rows_than_the_detector_needs():
    run = run_experiment(
        data(n_train=8),
        ConceptIncremental(),
        Naive(LocalOutlierFactor(n_neighbors=20, novelty=True)),
    )
    hits = flagged(run, "has 8 row(s); the detector's n_neighbors=20")
    assert len(hits) == 3


def test_one_training_row():
    ds = data()
    one = ConceptDataset([Concept(c.name, c.X[:1]) for c in ds.train], ds.test, name="one-row")
    run = run_experiment(one, ConceptIncremental(), Naive(MeanDistance()))
    assert len(flagged(run, "has 1 row(s); a detector needs at least 2 rows")) == 3


def test_reversed_scores_below_half_on_most_concepts():
    run = run_experiment(data(), ConceptIncremental(), Naive(Reversed()))
    diagonal = np.diag(run.R["roc_auc"])
    assert (diagonal < 0.5).all()
    assert flagged(
        run, "ROC-AUC below 0.5 on 3 of 3 concepts just learned", "are the scores reversed?"
    )
    assert not run_experiment(data(), ConceptIncremental(), Naive(MeanDistance())).warnings


def test_values_beyond_float32_range_become_non_finite_in_a_cast():
    run = run_experiment(
        data(edit=lambda X: X * 1e300 / 10), ConceptIncremental(), Naive(Constant())
    )
    hits = flagged(run, "beyond float32's range", "rescale the features")
    assert len(hits) == 6  # 3 training and 3 test concepts
    assert np.isinf(np.float32(1e300)) and np.isfinite(1e300)  # what the warning is about


def test_batch_size_at_least_the_stream_in_concept_agnostic():
    run = run_experiment(data(), ConceptAgnostic(batch_size=1000), Naive(MeanDistance()))
    assert flagged(run, "batch_size=1000 is at least the whole training stream (180 rows)")
    assert not run_experiment(
        data(), ConceptAgnostic(batch_size=50), Naive(MeanDistance())
    ).warnings


@pytest.mark.parametrize(
    "name, words",
    [
        (
            "ComplexScores",
            "score() returned complex numbers (dtype complex128); expected real scores",
        ),
        ("NaNThreshold", "threshold_ is nan; expected a finite real number"),
    ],
)
def test_the_detector_contract_is_checked_on_real_scores(name, words):
    cfg = RunConfig(
        Component("synthetic", {"n_concepts": 2, "n_features": 3, "n_train": 40, "n_test": 30}),
        Component("concept_incremental"),
        Component("naive"),
        Component(f"tests.claims.test_degenerate:{name}"),
    )
    run = run_safely(cfg)
    assert (
        run.status == "failed"
        and run.cause.splitlines()[0] == f"clad.errors.DetectorError: detector {name}: {words}"
    )
    assert (
        run.cause.splitlines()[1]
        == "(raised while the strategy learned training step 0 (concept 'C0'))"
    )


@pytest.mark.slow
def test_the_report_lists_the_runs_with_warnings(tmp_path):
    from clad.report import make_report

    run = run_experiment(
        data(n_concepts=2),
        ConceptIncremental(),
        Naive(Reversed()),
        seed=0,
        labels={"run_id": "r1", "detector": "reversed"},
    )
    page = make_report([run], tmp_path / "report").all_text()
    section = page[page.index("<h2>Warnings</h2>") :]
    assert "1 run recorded 1 warning" in section and "are the scores reversed?" in section
