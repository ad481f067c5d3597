"""pyCLAD's NSL-KDD concept file through clad's concept-aware scenario, and its pickle opt-in."""

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

import clad
from clad.datasets import convert_pyclad, load_clad_npz, load_pyclad
from clad.engine.spec import parse_spec
from clad.errors import DataError
from tests.data_helpers import SHARED, needs_data

pytestmark = needs_data
NAMES = tuple(f"Cluster_{i}" for i in range(5))


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("CLAD_DATA", raising=False)


@pytest.fixture(scope="module")
def results():
    ds = load_pyclad(data_dir=str(SHARED), allow_pickle=True)
    out = {}
    for strategy in (clad.Naive, clad.Cumulative):
        out[strategy.__name__] = clad.run_experiment(
            ds, clad.ConceptAware(), strategy(IsolationForest(random_state=0)), seed=0
        )
    return out


@pytest.mark.slow
def test_learning_order_and_columns(results):
    for r in results.values():
        assert r.concepts == NAMES and r.test_concepts == NAMES
        assert r.R["roc_auc"].shape == (5, 5)


@pytest.mark.slow
def test_cumulative_keeps_every_learned_concept(results):
    R = results["Cumulative"].R["roc_auc"]
    assert (np.diag(R) >= 0.95).all()
    seen = R[np.tril_indices(5)]
    future = R[np.triu_indices(5, k=1)]
    assert seen.min() >= 0.95  # everything learned so far is still in the training data
    assert seen.mean() > future.mean() + 0.2  # concepts not yet learned are clearly worse


@pytest.mark.slow
def test_naive_learns_each_concept_then_forgets(results):
    naive, cum = results["Naive"], results["Cumulative"]
    Rn, Rc = naive.R["roc_auc"], cum.R["roc_auc"]
    assert (np.diag(Rn) >= 0.95).all()
    # after the first step both strategies have seen exactly Cluster_0 with the same seeded detector
    np.testing.assert_array_equal(Rn[0], Rc[0])
    assert (
        naive.metrics["roc_auc"]["backward_transfer"]
        < cum.metrics["roc_auc"]["backward_transfer"] - 0.05
    )
    assert Rn[np.tril_indices(5, k=-1)].min() < 0.9  # some learned concept was forgotten


def test_without_opt_in_the_error_explains_why():
    with pytest.raises(DataError, match="pickle") as info:
        load_pyclad(data_dir=str(SHARED))
    msg = str(info.value)
    assert "allow_pickle=True" in msg and "runs code" in msg and "clad datasets convert" in msg


def test_without_opt_in_through_a_spec(tmp_path):
    from clad.errors import SpecError

    raw = {
        "datasets": [{"name": "pyclad", "data_dir": str(SHARED)}],
        "scenarios": ["concept_aware"],
        "strategies": ["naive"],
        "detectors": [{"name": "iforest", "n_estimators": 10}],
    }
    with pytest.raises(SpecError, match="allow_pickle = true"):  # refused before anything runs
        parse_spec(raw)


def test_converted_file_loads_without_pickle(tmp_path):
    src = load_pyclad(data_dir=str(SHARED), allow_pickle=True)
    dst = convert_pyclad(
        "nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy",
        tmp_path / "p.npz",
        data_dir=str(SHARED),
    )
    with np.load(dst, allow_pickle=False) as z:  # the converted file needs no pickle at all
        assert "train_X_0" in z.files
    back = load_clad_npz(str(dst))
    assert back.train_names == NAMES and back.test_names == NAMES
    for a, b in zip(src.test + src.train, back.test + back.train):
        np.testing.assert_array_equal(a.X, b.X)
        if a.y is not None:
            np.testing.assert_array_equal(a.y, b.y)
