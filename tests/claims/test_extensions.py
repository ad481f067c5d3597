"""Adding an extension touches its own module and its one registration line, nothing else: a module
outside clad adds a detector, a strategy, a dataset loader, a concept recipe and a continual metric
(registrations included), and each is found by ``clad list``, spec validation, a spec run, the run's
results and the conformance checks, with clad/__init__.py untouched."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

PLUGIN = textwrap.dedent('''
    """Extensions of clad that live outside it, registered where CONTRIBUTING.md says."""
    import numpy as np
    from sklearn.base import BaseEstimator

    from clad.core.concepts import Concept, ConceptDataset
    from clad.datasets import DATASETS
    from clad.datasets.build import ConceptRows
    from clad.datasets.recipes import RECIPES, Recipe
    from clad.detectors import DETECTORS
    from clad.metrics import scalar_metric
    from clad.strategies import STRATEGIES
    from clad.strategies.base import Strategy


    class FarFromMean(BaseEstimator):
        """Distance to the mean of the training rows (higher = more anomalous)."""

        def __init__(self, quantile: float = 0.9):
            self.quantile = quantile

        def fit(self, X, y=None):
            self.mean_ = np.asarray(X, dtype=float).mean(axis=0)
            self.threshold_ = float(np.quantile(self.score(X), self.quantile))
            return self

        def score(self, X):
            return np.linalg.norm(np.asarray(X, dtype=float) - self.mean_, axis=1)


    class LatestTwice(Strategy):
        """A fresh detector on the newest rows, seen twice (the same as once for a mean)."""

        reads_concept_id = False
        uses_random_state = False

        def learn(self, X, concept_id=None):
            self.detector_ = self._fit_new(np.vstack([X, X]))
            return self


    def load_shifted(n_concepts: int = 3, n_rows: int = 60, random_state: int = 0) -> ConceptDataset:
        """Gaussian concepts whose means move by 3 per concept; anomalies 6 away from their mean."""
        rng = np.random.default_rng(random_state)
        train, test = [], []
        for c in range(n_concepts):
            name = f"S{c}"
            train.append(Concept(name, rng.normal(3.0 * c, 1.0, size=(n_rows, 2))))
            X = np.vstack([rng.normal(3.0 * c, 1.0, size=(n_rows, 2)), rng.normal(3.0 * c + 6.0, 1.0, size=(6, 2))])
            test.append(Concept(name, X, np.r_[np.zeros(n_rows, int), np.ones(6, int)]))
        return ConceptDataset(train, test, name="shifted")


    @scalar_metric("Last", unit="concepts", name="ext_last_row_best")
    def last_row_best(R, learned_at=None):
        """The best value of the last row of R."""
        return np.nanmax(np.asarray(R, dtype=float)[-1:])


    class ByFirstFeature(Recipe):
        """Concepts by the first feature: ``n_concepts`` bands of equal width, anomalies in their band."""

        name = "ext_by_first_feature"

        def groups(self, X, y, random_state, rows=None):
            rows = np.arange(len(y)) if rows is None else np.asarray(rows)
            first = np.asarray(X)[rows, 0]
            edges = np.linspace(first.min(), first.max(), int(self.n_concepts) + 1)[1:-1]
            band = np.searchsorted(edges, first)
            lab = np.asarray(y)[rows]
            return [ConceptRows(f"band_{b}", rows[(band == b) & (lab == 0)], rows[(band == b) & (lab == 1)])
                    for b in range(int(self.n_concepts))]


    RECIPES.add("ext_by_first_feature", ByFirstFeature, "bands of the first feature")
    DETECTORS.add("ext_far_from_mean", FarFromMean, "distance to the training mean")
    STRATEGIES.add("ext_latest_twice", LatestTwice, "a fresh detector on the newest rows, twice")
    DATASETS.add("ext_shifted", load_shifted, "moving Gaussian concepts")
''')

NAMES = {
    "detectors": "ext_far_from_mean",
    "strategies": "ext_latest_twice",
    "datasets": "ext_shifted",
}


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    from clad.datasets import DATASETS
    from clad.detectors import DETECTORS
    from clad.datasets.recipes import RECIPES
    from clad.metrics import unregister
    from clad.strategies import STRATEGIES

    (tmp_path / "clad_ext_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    init = Path(importlib.import_module("clad").__file__)
    before = init.read_text(encoding="utf-8")
    try:
        yield importlib.import_module("clad_ext_plugin")
    finally:
        sys.modules.pop("clad_ext_plugin", None)
        for registry, name in (
            (DETECTORS, NAMES["detectors"]),
            (STRATEGIES, NAMES["strategies"]),
            (DATASETS, NAMES["datasets"]),
        ):
            registry.remove(name)
        RECIPES.remove("ext_by_first_feature")
        unregister("ext_last_row_best")
        assert init.read_text(encoding="utf-8") == before  # clad/__init__.py was not touched


@pytest.mark.slow  # clad list reads every registered class's signature (torch's too)
def test_each_extension_is_listed(plugin, capsys):
    from clad.cli import main

    for kind, name in NAMES.items():
        assert main(["list", kind]) == 0
        out = capsys.readouterr().out
        assert name in out, (kind, out)
        if kind == "detectors":
            assert "quantile=0.9" in out  # its parameters, read from its signature


def test_the_detector_and_the_strategy_pass_conformance(plugin):
    from clad.detectors import DETECTORS
    from clad.strategies import STRATEGIES
    from clad.testing import check_detector, check_strategy

    detector = DETECTORS.build(NAMES["detectors"])
    assert check_detector(detector).ok
    assert check_strategy(STRATEGIES.build(NAMES["strategies"], {"detector": detector})).ok


def test_a_spec_runs_every_extension_and_reports_the_metric(plugin, tmp_path):
    from clad.engine.benchmark import run_spec
    from clad.engine.spec import parse_spec
    from clad.errors import SpecError

    raw = {
        "name": "extensions",
        "seeds": 1,
        "datasets": [{"name": NAMES["datasets"], "n_concepts": 3}],
        "scenarios": ["concept_incremental"],
        "strategies": [NAMES["strategies"], "naive"],
        "detectors": [NAMES["detectors"]],
    }
    spec = parse_spec(raw)
    assert len(spec) == 2
    with pytest.raises(
        SpecError, match="n_rowz"
    ):  # the loader's parameters are checked like clad's own
        parse_spec({**raw, "datasets": [{"name": NAMES["datasets"], "n_rowz": 5}]})
    done = run_spec(spec, tmp_path / "out")
    assert done.ok and done.n_ok == 2
    runs = {r.strategy: r for r in done.runs}
    ours, naive = runs[NAMES["strategies"]], runs["naive"]
    assert ours.test_concepts == ("S0", "S1", "S2") and ours.R["roc_auc"].shape == (3, 3)
    # the newest rows twice or once give the same mean, so the same R as naive
    np.testing.assert_array_equal(ours.R["roc_auc"], naive.R["roc_auc"])
    last = ours.metrics["roc_auc"]["ext_last_row_best"]
    assert last == pytest.approx(np.nanmax(ours.R["roc_auc"][-1]))
    assert (
        "Last_mean"
        in (tmp_path / "out" / "summary.csv").read_text(encoding="utf-8").splitlines()[0]
    )


def test_a_recipe_reaches_the_flat_loaders(plugin, tmp_path):
    import scipy.io

    from clad.datasets import load_dataset
    from clad.engine.spec import parse_spec
    from clad.errors import SpecError

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 3, 300), rng.normal(size=300)])
    y = (rng.random(300) < 0.1).astype(int)
    scipy.io.savemat(tmp_path / "bands.mat", {"X": X, "y": y})
    recipe = {"name": "ext_by_first_feature", "n_concepts": 3}
    ds = load_dataset("odds_mat", {"file": str(tmp_path / "bands.mat"), "recipe": recipe})
    assert (
        ds.train_names == ("band_0", "band_1", "band_2")
        and ds.metadata["recipe"] == "ext_by_first_feature"
    )
    for c in ds.train:  # each concept holds its band of the first feature
        assert np.ptp(c.X[:, 0]) <= 1.0 + 1e-9
    entry = {
        "name": "odds_mat",
        "file": "bands.mat",
        "data_dir": str(tmp_path),
    }  # a spec's file lies in a data folder
    raw = {
        "seeds": 1,
        "scenarios": ["concept_incremental"],
        "strategies": ["naive"],
        "detectors": ["hbos"],
    }
    assert (
        len(
            parse_spec(
                {**raw, "datasets": [{**entry, "recipe": "ext_by_first_feature", "n_concepts": 3}]}
            )
        )
        == 1
    )
    with pytest.raises(SpecError, match="unknown parameter 'fit_rows'.*ext_by_first_feature"):
        parse_spec(
            {**raw, "datasets": [{**entry, "recipe": "ext_by_first_feature", "fit_rows": 100}]}
        )
