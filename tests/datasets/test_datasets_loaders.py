"""Each loader on the real files in ../shared/datasets: the shapes and label counts of its README."""

import numpy as np
import pandas as pd
import pytest

from clad.datasets import (
    load_adbench,
    load_mvtec,
    load_npz_files,
    load_nsl_kdd,
    load_odds_mat,
    load_pyclad,
    load_table,
    read_nsl_kdd,
)
from clad.datasets.adbench import read_npz_xy
from clad.datasets.mvtec import CATEGORIES
from tests.data_helpers import SHARED, needs_data


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("CLAD_DATA", raising=False)


@needs_data
def test_pyclad_concept_file():
    ds = load_pyclad(data_dir=str(SHARED), allow_pickle=True)
    assert ds.train_names == ds.test_names == tuple(f"Cluster_{i}" for i in range(5))
    for tr, te in zip(ds.train, ds.test):
        assert tr.X.shape == (600, 41) and tr.y is None
        assert te.X.shape == (800, 41)
        assert np.bincount(te.y).tolist() == [400, 400]


@needs_data
def test_nsl_kdd_raw_counts():
    train, test = read_nsl_kdd(str(SHARED))
    assert len(train) == 25_192 and len(test) == 22_544
    assert train["family"].value_counts().to_dict() == {
        "normal": 13_449,
        "dos": 9_234,
        "probe": 2_289,
        "r2l": 209,
        "u2r": 11,
    }
    assert test["family"].value_counts().to_dict() == {
        "normal": 9_711,
        "dos": 7_458,
        "r2l": 2_887,
        "probe": 2_421,
        "u2r": 67,
    }


@pytest.mark.slow
@needs_data
def test_nsl_kdd_family_concepts():
    ds = load_nsl_kdd(data_dir=str(SHARED))
    assert ds.train_names == ("dos", "probe", "r2l", "u2r")
    # normal-only training rows, all of KDDTrain+'s normal traffic split among the four concepts
    assert sum(c.n_rows for c in ds.train) == 13_449 and all(c.n_anomalies == 0 for c in ds.train)
    assert [c.n_anomalies for c in ds.test] == [7_458, 2_421, 2_887, 67]
    assert sum(c.n_rows - c.n_anomalies for c in ds.test) == 9_711
    train, _ = read_nsl_kdd(str(SHARED))
    n_onehot = sum(
        train[c].nunique() for c in ("protocol_type", "service", "flag")
    )  # values seen in training
    assert ds.n_features == len(ds.metadata["feature_names"]) == 38 + n_onehot
    # min-max scaling fitted on the training file: training features lie in [0, 1]
    assert min(c.X.min() for c in ds.train) >= 0 and max(c.X.max() for c in ds.train) <= 1


@needs_data
def test_nsl_kdd_by_protocol_and_ordinal():
    ds = load_nsl_kdd(
        concepts="protocol", encoding="ordinal", scaling="standard", data_dir=str(SHARED)
    )
    assert ds.train_names == ("icmp", "tcp", "udp") and ds.n_features == 41
    assert sum(c.n_anomalies for c in ds.test) == 22_544 - 9_711


ADBENCH = {  # file: (rows, features, anomaly share in % as stated)
    "10_cover.npz": (286_048, 10, 0.96),
    "16_http.npz": (567_498, 3, 0.39),
    "20_letter.npz": (1_600, 32, 6.3),
    "22_magic.gamma.npz": (19_020, 10, 35),
    "23_mammography.npz": (11_183, 6, 2.3),
    "28_pendigits.npz": (6_870, 16, 2.3),
    "29_Pima.npz": (768, 8, 35),
    "2_annthyroid.npz": (7_200, 6, 7.4),
    "30_satellite.npz": (6_435, 36, 32),
    "32_shuttle.npz": (49_097, 9, 7.2),
    "34_smtp.npz": (95_156, 3, 0.03),
    "38_thyroid.npz": (3_772, 6, 2.5),
    "42_WBC.npz": (223, 9, 4.5),
    "44_Wilt.npz": (4_819, 5, 5.3),
    "4_breastw.npz": (683, 9, 35),
    "6_cardio.npz": (1_831, 21, 9.6),
}


@needs_data
@pytest.mark.parametrize("fname", sorted(ADBENCH))
def test_adbench_shapes(fname):
    rows, features, share = ADBENCH[fname]
    X, y = read_npz_xy(SHARED / "adbench-classical" / fname, "adbench")
    assert X.shape == (rows, features)
    assert set(np.unique(y).tolist()) == {0, 1}
    assert abs(100 * y.mean() - share) <= max(0.5, 0.05 * share)  # README rounds the share


@needs_data
def test_adbench_loader_keeps_every_row():
    ds = load_adbench("cardio", n_concepts=3, data_dir=str(SHARED), random_state=0)
    assert ds.name == "6_cardio" and ds.n_features == 21
    assert sum(c.n_rows for c in ds.train) + sum(c.n_rows for c in ds.test) == 1_831
    assert sum(c.n_anomalies for c in ds.test) == 176


@needs_data
def test_mvtec_fifteen_categories():
    ds = load_mvtec(data_dir=str(SHARED))
    assert ds.train_names == ds.test_names == CATEGORIES and len(CATEGORIES) == 15
    assert ds.n_features == 512
    for tr, te in zip(ds.train, ds.test):
        X, y = read_npz_xy(SHARED / "adbench-mvtec-resnet18" / f"MVTec-AD_{tr.name}.npz", "mvtec")
        assert 102 <= len(y) <= 501 and 0.125 <= y.mean() < 0.335  # README: 13-33% (rounded)
        assert tr.n_rows + te.n_rows == len(y) and te.n_anomalies == int(y.sum())
        assert tr.n_anomalies == 0 and tr.X.dtype == np.float32  # float arrays kept as they are


@needs_data
def test_npz_files_one_concept_per_file():
    files = ["adbench-classical/42_WBC.npz", "adbench-classical/4_breastw.npz"]
    with pytest.raises(Exception, match="feature columns"):  # 9 and 9 features: fine; cardio has 21
        load_npz_files(files + ["adbench-classical/6_cardio.npz"], data_dir=str(SHARED))
    ds = load_npz_files(files, data_dir=str(SHARED))
    assert ds.train_names == ("42_WBC", "4_breastw")


def test_odds_mat(tmp_path):
    import scipy.io

    rng = np.random.default_rng(0)
    X = np.vstack(
        [rng.normal(0, 1, (120, 4)), rng.normal(6, 1, (120, 4)), rng.normal(3, 4, (12, 4))]
    )
    y = np.r_[np.zeros(240), np.ones(12)].reshape(-1, 1)  # ODDS stores y as a column
    scipy.io.savemat(tmp_path / "toy.mat", {"X": X, "y": y})
    ds = load_odds_mat(
        str(tmp_path / "toy.mat"), n_concepts=2, recipe="cluster_closest", random_state=0
    )
    assert ds.name == "toy" and ds.n_features == 4
    assert sorted(c.n_rows for c in ds.train) == [
        60,
        60,
    ]  # the two blobs, half of each for training
    assert sum(c.n_anomalies for c in ds.test) == 12


def _frame():
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "machine": np.repeat(["m2", "m1", "m3"], 40),
            "fault": np.tile([0] * 36 + [1] * 4, 3),
            "a": rng.normal(size=120),
            "b": rng.integers(0, 5, 120),
            "ok": rng.random(120) > 0.5,
        }
    )


@pytest.mark.parametrize("kind", ["frame", "csv", "parquet"])
def test_table(tmp_path, kind):
    df = _frame()
    kw = dict(concept_column="machine", label_column="fault", test_size=0.25, random_state=3)
    if kind == "frame":
        ds = load_table(frame=df, **kw)
    elif kind == "csv":
        df.to_csv(tmp_path / "t.csv", index=False)
        ds = load_table(str(tmp_path / "t.csv"), **kw)
    else:
        df.to_parquet(tmp_path / "t.parquet")
        ds = load_table(str(tmp_path / "t.parquet"), **kw)
    assert ds.train_names == ("m2", "m1", "m3") and ds.n_features == 3  # order of first appearance
    assert [c.n_rows for c in ds.train] == [27, 27, 27] and [c.n_anomalies for c in ds.test] == [
        4,
        4,
        4,
    ]
    ref = load_table(frame=df, **kw)
    for a, b in zip(ds.test, ref.test):
        np.testing.assert_allclose(a.X, b.X)
