"""Concept recipes on real data (ADBench shuttle), the split and the concept order."""

import numpy as np
import pytest

from clad.datasets import load_adbench, make_dataset, make_groups
from clad.datasets.adbench import read_npz_xy
from clad.datasets.build import ConceptRows
from clad.errors import CladValueError
from tests.data_helpers import SHARED, needs_data

CLUSTERING = ("cluster_random", "cluster_closest", "cluster_clustered")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("CLAD_DATA", raising=False)


@pytest.fixture(scope="module")
def shuttle():
    if not SHARED.is_dir():
        pytest.skip(f"real datasets not found at {SHARED}")
    return read_npz_xy(SHARED / "adbench-classical" / "32_shuttle.npz", "test")


def _load(recipe, seed):
    return load_adbench(
        "32_shuttle.npz", recipe=recipe, n_concepts=5, data_dir=str(SHARED), random_state=seed
    )


def _same(a, b):
    return a.train_names == b.train_names and all(
        np.array_equal(x.X, y.X) and np.array_equal(x.y, y.y)
        for x, y in zip(a.train + a.test, b.train + b.test)
    )


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("recipe", CLUSTERING)
def test_shuttle_recipes(recipe, shuttle):
    X, y = shuttle
    ds = _load(recipe, 7)
    assert len(ds.train) == len(ds.test) == 5
    for tr, te in zip(ds.train, ds.test):
        assert tr.n_rows > 0 and tr.n_anomalies == 0  # normal-only training rows
        assert set(np.unique(te.y).tolist()) == {0, 1}  # both classes in every test concept
    # every row of the file is used exactly once; all anomalies are in the test sets
    assert sum(c.n_rows for c in ds.train + ds.test) == len(y)
    assert sum(c.n_anomalies for c in ds.test) == int(y.sum())
    assert _same(ds, _load(recipe, 7))  # same seed, same concepts, bit for bit
    assert not _same(ds, _load(recipe, 8))  # another seed, other concepts


@pytest.mark.slow
@needs_data
def test_recipes_differ_in_where_anomalies_go(shuttle):
    X, y = shuttle
    shares = {r: [c.n_anomalies for c in _load(r, 7).test] for r in CLUSTERING}
    # random assignment deals the anomalies out in equal shares; the other two follow the data
    assert max(shares["cluster_random"]) - min(shares["cluster_random"]) <= 1
    assert max(shares["cluster_closest"]) - min(shares["cluster_closest"]) > 100
    # normal rows are clustered the same way in all three (same seed), so training sets agree
    sizes = {r: sorted(c.n_rows for c in _load(r, 7).train) for r in CLUSTERING}
    assert sizes["cluster_random"] == sizes["cluster_closest"] == sizes["cluster_clustered"]


def test_closest_assignment_follows_the_clusters():
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [10, 0], [0, 10]])
    X = np.vstack(
        [rng.normal(c, 0.5, (60, 2)) for c in centres]
        + [rng.normal(c, 2.0, (5, 2)) for c in centres]
    )
    y = np.r_[np.zeros(180, int), np.ones(15, int)]
    groups = make_groups(X, y, {"name": "cluster_closest", "n_concepts": 3}, random_state=0)
    for g in groups:
        # each anomaly sits in the concept of the blob it was drawn around
        blob_of_normal = {int(i) // 60 for i in g.normal}
        blob_of_anomalies = {(int(i) - 180) // 5 for i in g.anomalies}
        assert len(blob_of_normal) == 1 and blob_of_anomalies == blob_of_normal
    clustered = make_groups(X, y, {"name": "cluster_clustered", "n_concepts": 3}, random_state=0)
    for g in (
        clustered
    ):  # each anomaly cluster (one blob's anomalies) goes to exactly one concept, whole
        assert len(g.anomalies) == 5 and len({(int(i) - 180) // 5 for i in g.anomalies}) == 1


def test_chunks_keep_file_order():
    y = np.array([0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0])
    groups = make_groups(np.zeros((12, 1)), y, {"name": "chunks", "n_concepts": 3})
    assert [g.normal.tolist() for g in groups] == [[0, 1, 3], [4, 5, 7], [8, 10, 11]]
    assert [g.anomalies.tolist() for g in groups] == [[2], [6], [9]]


def _toy():
    X = np.arange(40.0).reshape(20, 2)
    y = np.zeros(20, int)
    y[[4, 9, 14, 19]] = 1
    groups = [
        ConceptRows(
            n,
            np.setdiff1d(np.arange(i * 10, i * 10 + 10), [4, 9, 14, 19]),
            np.array([i * 10 + 4, i * 10 + 9]),
        )
        for i, n in enumerate("ab")
    ]
    return X, y, groups


def test_split_sizes_and_contamination():
    X, y, groups = _toy()
    ds = make_dataset(X, y, groups, test_size=0.25, random_state=0)
    assert [c.n_rows for c in ds.train] == [6, 6] and [c.n_rows for c in ds.test] == [4, 4]
    assert [c.n_anomalies for c in ds.test] == [2, 2]
    # rows keep their file order inside a concept
    assert all((np.diff(c.X[:, 0]) > 0).all() for c in ds.train + ds.test)
    dirty = make_dataset(X, y, groups, test_size=0.25, contamination=0.2, random_state=0)
    # 6 normal training rows, 20% anomalies -> round(0.2 * 6 / 0.8) = 2 wanted, 1 allowed (one stays in test)
    assert [c.n_anomalies for c in dirty.train] == [1, 1] and [
        c.n_anomalies for c in dirty.test
    ] == [1, 1]


def test_orders():
    X, y, groups = _toy()
    given = make_dataset(X, y, groups, random_state=0)
    assert given.train_names == ("a", "b") == given.test_names
    perms = {
        make_dataset(X, y, groups, order="random", random_state=s).train_names for s in range(8)
    }
    assert perms == {("a", "b"), ("b", "a")}
    # anomaly share: concept b gets a larger share of anomalies -> easier under that measure
    groups2 = [groups[0], ConceptRows("b", groups[1].normal[:4], groups[1].anomalies)]
    e2h = make_dataset(
        X, y, groups2, order="easy_to_hard", difficulty="anomaly_share", random_state=0
    )
    h2e = make_dataset(
        X, y, groups2, order="hard_to_easy", difficulty="anomaly_share", random_state=0
    )
    assert e2h.train_names == ("b", "a") and h2e.train_names == ("a", "b")
    vals = e2h.metadata["difficulty"]["values"]
    assert vals == {"a": 2 / 6, "b": 2 / 4}


@pytest.mark.slow
@needs_data
def test_difficulty_order_by_detector_auc():
    ds = load_adbench(
        "6_cardio.npz", n_concepts=3, order="easy_to_hard", data_dir=str(SHARED), random_state=0
    )
    vals = ds.metadata["difficulty"]["values"]
    assert ds.metadata["difficulty"]["measure"] == "iforest_auc"
    assert [vals[n] for n in ds.train_names] == sorted(vals.values(), reverse=True)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"recipe": "cluster_randm"}, "did you mean 'cluster_random'"),
        ({"n_concepts": 0}, "n_concepts=0; expected an integer >= 1"),
        ({"test_size": 1.5}, r"test_size=1.5; expected a number in \(0.0, 1.0\)"),
        ({"order": "easiest"}, "order='easiest'"),
        ({"contamination": 0.7}, "contamination=0.7"),
    ],
)
def test_bad_parameters(kw, match):
    from clad.datasets import scenario_from_flat

    X, y, _ = _toy()
    with pytest.raises(CladValueError, match=match):
        scenario_from_flat(
            X, y, name="toy", loader="adbench", n_concepts=kw.pop("n_concepts", 2), **kw
        )


def test_a_recipe_is_one_value_checked_once():
    from clad.datasets import scenario_from_flat
    from clad.datasets.recipes import RECIPES, Chunks, as_recipe

    X, y, _ = _toy()
    beside = scenario_from_flat(X, y, name="toy", recipe="chunks", n_concepts=2, random_state=4)
    table = scenario_from_flat(
        X, y, name="toy", recipe={"name": "chunks", "n_concepts": 2}, random_state=4
    )
    obj = scenario_from_flat(X, y, name="toy", recipe=Chunks(n_concepts=2), random_state=4)
    assert (
        _same(beside, table) and _same(beside, obj) and beside.train_names == ("chunk_0", "chunk_1")
    )
    assert beside.metadata["recipe"] == "chunks" and beside.metadata["n_concepts"] == 2
    assert sorted(RECIPES.names()) == [
        "chunks",
        "cluster_closest",
        "cluster_clustered",
        "cluster_random",
        "faber2024",
    ]
    with pytest.raises(
        CladValueError,
        match=r"adbench: unknown parameter 'size_per_concept'.*\(the recipe 'chunks' takes n_concepts\)",
    ):
        as_recipe("chunks", "adbench", {"size_per_concept": 10})
    with pytest.raises(
        CladValueError, match=r"unknown parameter 'test_sise' \(did you mean 'test_size'\?\)"
    ):
        as_recipe("chunks", "adbench", {"test_sise": 0.3}, also=["file", "test_size"])
    with pytest.raises(CladValueError, match="given in the recipe table and beside it"):
        as_recipe({"name": "chunks", "n_concepts": 2}, "adbench", {"n_concepts": 3})
    with pytest.raises(CladValueError, match="adbench: fit_rows=5; expected an integer >= 10"):
        as_recipe({"name": "cluster_random", "fit_rows": 5}, "adbench")
