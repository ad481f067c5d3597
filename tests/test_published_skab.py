"""SKAB as published: the time-ordered split, the SKAB loader, the control-chart detector, the
score post-processing, pooled counts, and the leaderboard rows reproduced from the raw files."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clad.datasets.ordered import ordered_split
from clad.errors import DataError

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
needs_data = pytest.mark.skipif(not (SHARED / "skab").is_dir(),
                                reason=f"SKAB not found at {SHARED / 'skab'} (<repo root>/../shared/datasets)")


# -- the ordered split -------------------------------------------------------------------------

X = np.arange(20.0).reshape(10, 2)
Y = np.array([0, 1, 0, 1, 0, 0, 1, 1, 0, 0])


def test_ordered_split_keeps_order_and_prefix_anomalies():
    tr, te, rec = ordered_split("a", X, Y, train_rows=4)
    assert tr.X[:, 0].tolist() == [0, 2, 4, 6] and tr.y.tolist() == [0, 1, 0, 1]
    assert te.X[:, 0].tolist() == [8, 10, 12, 14, 16, 18] and te.y.tolist() == [0, 0, 1, 1, 0, 0]
    assert rec == {"kind": "ordered", "rows": 10, "train_rows": 4, "test": "rest", "prefix_anomalies": "keep",
                   "prefix_anomalies_found": 2}


def test_ordered_split_drops_or_masks_prefix_anomalies():
    tr, te, _ = ordered_split("a", X, Y, train_rows=4, prefix_anomalies="drop", test="all")
    assert tr.X[:, 0].tolist() == [0, 4] and tr.y.tolist() == [0, 0]
    assert te.n_rows == 10 and te.y.tolist() == Y.tolist()  # dropped from training only
    tr, te, _ = ordered_split("a", X, Y, train_rows=4, prefix_anomalies="mask", test="all")
    assert tr.X[:, 0].tolist() == [0, 4]
    assert te.X[:, 0].tolist() == [0, 4, 8, 10, 12, 14, 16, 18]  # masked: evaluated nowhere
    tr, te, _ = ordered_split("a", X, Y, train_share=0.35)  # floor(3.5) = 3 rows
    assert tr.n_rows == 3 and te.n_rows == 7


@pytest.mark.parametrize("kwargs, words", [
    ({"train_rows": 10}, "leaves nothing to test"),
    ({}, "give one of train_rows"),
    ({"train_rows": 3, "train_share": 0.5}, "give one of train_rows"),
    ({"train_share": 1.5}, "train_share=1.5"),
    ({"train_rows": 3, "prefix_anomalies": "hide"}, "prefix_anomalies='hide'"),
    ({"train_rows": 3, "test": "tail"}, "test='tail'"),
])
def test_ordered_split_refuses_bad_values(kwargs, words):
    with pytest.raises(DataError, match=words):
        ordered_split("a", X, Y, **kwargs)


@needs_data
def test_skab_loader_gives_the_published_split():
    from clad.datasets import DATASETS

    ds = DATASETS.build("skab", {"data_dir": str(SHARED)})
    assert len(ds.train) == len(ds.test) == 34 and ds.train_names[0] == "valve1/0"
    assert all(c.n_rows == 400 for c in ds.train)
    # SKAB's own numbers: 23,801 test rows, 12,771 of them anomalous (TP + FN of its leaderboard rows)
    assert sum(c.n_rows for c in ds.test) == 23801 and sum(c.n_anomalies for c in ds.test) == 12771
    raw = pd.read_csv(SHARED / "skab" / "other" / "14.csv", sep=";")
    j = ds.test_names.index("other/14")
    np.testing.assert_array_equal(ds.test[j].X[:, 0], raw["Accelerometer1RMS"].to_numpy()[400:])
    assert ds.metadata["split"]["files"]["other/14"]["train_rows"] == 400
    groups = DATASETS.build("skab", {"data_dir": str(SHARED), "concepts": "groups", "groups": ["valve2"]})
    assert groups.train_names == ("valve2",) and groups.train[0].n_rows == 4 * 400
