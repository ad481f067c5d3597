"""Concept orders from a single-task matrix: hand-made M, and the named orders through a loader."""

import numpy as np
import pytest

from clad.datasets import ORDERS, load_npz_files, make_synthetic
from clad.datasets.build import order_concepts
from clad.errors import DataError
from clad.protocol.matrix_orders import (
    curriculum_order,
    drift_distance,
    drift_order,
    order_from_matrix,
)

# four concepts a, b, c, d; diagonal 0.90, 0.70, 0.95, 0.80 -> difficulty 0.10, 0.30, 0.05, 0.20
M = np.array(
    [
        [0.90, 0.60, 0.85, 0.50],
        [0.40, 0.70, 0.30, 0.65],
        [0.75, 0.20, 0.95, 0.55],
        [0.60, 0.55, 0.45, 0.80],
    ]
)
# D = 1 - (M + M.T) / 2:
#        a      b      c      d
# a    0.10   0.50   0.20   0.45
# b    0.50   0.30   0.75   0.40
# c    0.20   0.75   0.05   0.50
# d    0.45   0.40   0.50   0.20
D = np.array(
    [
        [0.10, 0.50, 0.20, 0.45],
        [0.50, 0.30, 0.75, 0.40],
        [0.20, 0.75, 0.05, 0.50],
        [0.45, 0.40, 0.50, 0.20],
    ]
)


def test_distance_by_hand():
    assert drift_distance(M) == pytest.approx(D)


def test_curriculum_by_hand():
    assert curriculum_order(M) == [2, 0, 3, 1]  # difficulty 0.05 (c), 0.10 (a), 0.20 (d), 0.30 (b)
    assert curriculum_order(M, descending=True) == [1, 3, 0, 2]


def test_drift_by_hand():
    # smooth: start c (easiest); nearest to c: a (0.20); nearest to a of b, d: d (0.45); then b
    assert drift_order(M) == [2, 0, 3, 1]
    # abrupt: start c; farthest from c: b (0.75); farthest from b of a, d: a (0.50); then d
    assert drift_order(M, abrupt=True) == [2, 1, 0, 3]
    assert order_from_matrix(M, "drift_abrupt") == [2, 1, 0, 3]


def test_ties_go_to_the_first_concept_and_nan_is_refused():
    assert curriculum_order(np.full((3, 3), 0.8)) == [0, 1, 2]
    assert drift_order(np.full((3, 3), 0.8), abrupt=True) == [0, 1, 2]
    bad = M.copy()
    bad[1, 2] = np.nan
    with pytest.raises(DataError, match=r"\('b', 'c'\)"):
        order_from_matrix(bad, "drift_smooth", names=("a", "b", "c", "d"))


@pytest.mark.slow
def test_named_orders_reach_every_recipe_loader(tmp_path):
    for name in ("curriculum_ascending", "curriculum_descending", "drift_smooth", "drift_abrupt"):
        assert name in ORDERS
    ds = make_synthetic(n_concepts=4, random_state=0)
    pairs = list(zip(ds.train, ds.test))
    out = order_concepts(pairs, order="drift_abrupt")
    st = out.metadata["single_task"]
    expected = [st["names"][i] for i in order_from_matrix(np.array(st["M"]), "drift_abrupt")]
    assert list(out.train_names) == list(out.test_names) == expected
    # and through a file loader: its training order follows the curriculum computed from its own M
    rng = np.random.default_rng(1)
    files = []
    for i, spread in enumerate(
        (0.5, 3.0, 1.0)
    ):  # anomalies at distance 6: easy for a tight concept
        X = np.vstack([rng.normal(0, spread, (200, 3)), rng.normal(6, spread, (20, 3))])
        np.savez(tmp_path / f"c{i}.npz", X=X, y=np.r_[np.zeros(200, int), np.ones(20, int)])
        files.append(str(tmp_path / f"c{i}.npz"))
    asc = load_npz_files(files, order="curriculum_ascending")
    M_file = np.array(asc.metadata["single_task"]["M"])
    names = asc.metadata["single_task"]["names"]
    assert list(asc.train_names) == [names[i] for i in np.argsort(-np.diag(M_file), kind="stable")]
    assert asc.train_names[-1] == "c1"  # the widest concept is the hardest


@pytest.mark.slow
def test_named_orders_in_a_spec(tmp_path):
    from clad.engine.run import build_run
    from clad.engine.spec import parse_spec

    rng = np.random.default_rng(2)
    files = []
    for i, shift in enumerate((0.0, 10.0, 20.0)):
        X = np.vstack([rng.normal(shift, 1.0 + i, (150, 2)), rng.normal(shift + 5, 1, (15, 2))])
        np.savez(tmp_path / f"k{i}.npz", X=X, y=np.r_[np.zeros(150, int), np.ones(15, int)])
        files.append(str(tmp_path / f"k{i}.npz"))
    spec = parse_spec(
        {
            "orders": ["curriculum_descending", "drift_smooth"],
            "strategies": ["naive"],
            "datasets": [{"name": "npz_files", "files": files, "data_dir": str(tmp_path)}],
            "scenarios": ["concept_incremental"],
            "detectors": [{"name": "iforest", "n_estimators": 20}],
        }
    )
    got = {}
    for cfg in spec.configs:
        ds = build_run(cfg)[0]
        got[cfg.dataset.params["order"]] = (ds.train_names, ds.metadata["single_task"])
    for name, (train_names, st) in got.items():
        assert list(train_names) == [
            st["names"][i] for i in order_from_matrix(np.array(st["M"]), name)
        ]
