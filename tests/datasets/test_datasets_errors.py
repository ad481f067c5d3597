"""Bad data gets a clear clad error: checksum mismatch, missing file, bad tables, mismatched files."""

import shutil

import numpy as np
import pandas as pd
import pytest

from clad.datasets import load_adbench, load_npz_files, load_table, locate, sha256_of
from clad.datasets.cards import find_file
from clad.errors import CladTypeError, DataError
from tests.data_helpers import SHARED, needs_data

WBC = "adbench-classical/42_WBC.npz"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch, tmp_path):
    monkeypatch.delenv("CLAD_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the default cache: empty


@needs_data
def test_checksum_mismatch(tmp_path):
    (tmp_path / "adbench-classical").mkdir()
    data = bytearray((SHARED / WBC).read_bytes())
    data[-30] ^= 0xFF  # one flipped byte
    (tmp_path / WBC).write_bytes(bytes(data))
    expected = find_file(WBC)["sha256"]
    with pytest.raises(DataError, match="checksum mismatch") as info:
        load_adbench("42_WBC.npz", n_concepts=2, data_dir=str(tmp_path))
    msg = str(info.value)
    assert expected in msg and sha256_of(tmp_path / WBC) in msg and str(tmp_path / WBC) in msg
    assert "github.com/Minqi824/ADBench" in msg


@needs_data
def test_unchanged_copy_passes_the_check(tmp_path):
    (tmp_path / "adbench-classical").mkdir()
    shutil.copy(SHARED / WBC, tmp_path / WBC)
    assert locate(WBC, tmp_path) == tmp_path / WBC


def test_missing_file(tmp_path):
    with pytest.raises(DataError) as info:
        load_adbench("42_WBC.npz", n_concepts=2, data_dir=str(tmp_path / "nowhere"))
    msg = str(info.value)
    assert "'adbench-classical/42_WBC.npz' not found" in msg
    assert str(tmp_path / "nowhere" / WBC) in msg and str(tmp_path / "cache" / "clad" / WBC) in msg
    assert find_file(WBC)["sha256"] in msg
    assert (
        "https://github.com/Minqi824/ADBench/raw/3dac822/adbench/datasets/Classical/42_WBC.npz"
        in msg
    )


def test_clad_data_overrides_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAD_DATA", str(tmp_path / "env"))
    with pytest.raises(DataError) as info:
        locate(WBC, tmp_path / "spec")
    looked = str(info.value).split("looked in:")[1]
    assert looked.index(str(tmp_path / "env")) < looked.index(str(tmp_path / "spec"))


def test_unknown_adbench_name():
    with pytest.raises(DataError, match="did you mean '32_shuttle.npz'"):
        load_adbench("shutle")


def test_table_without_the_concept_column():
    df = pd.DataFrame({"Concept": ["a", "b"], "label": [0, 1], "x": [1.0, 2.0]})
    with pytest.raises(DataError, match="concept column 'concept'") as info:
        load_table(frame=df)
    assert "did you mean 'Concept'" in str(info.value) and "columns: Concept, label, x" in str(
        info.value
    )


def test_csv_with_a_non_numeric_feature(tmp_path):
    df = pd.DataFrame(
        {
            "concept": ["a"] * 6,
            "label": [0, 0, 0, 0, 1, 1],
            "x": np.arange(6.0),
            "colour": ["red", "blue"] * 3,
        }
    )
    df.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(DataError, match="feature column 'colour' has dtype (object|str)") as info:
        load_table(str(tmp_path / "t.csv"))
    assert "encode the column first or leave it out with feature_columns" in str(info.value)
    ds = load_table(str(tmp_path / "t.csv"), feature_columns=["x"])  # leaving it out works
    assert ds.n_features == 1


def test_table_with_non_binary_labels():
    df = pd.DataFrame({"concept": ["a"] * 4, "label": [0, 1, 2, 0], "x": np.arange(4.0)})
    with pytest.raises(DataError, match="labels must be 0 .normal. or 1 .anomaly.; found 0, 1, 2"):
        load_table(frame=df)


def test_csv_errors_name_the_file_line_and_the_column(tmp_path):
    # a quoted field spanning two lines and a blank line: the message points at the line in the file,
    # not at a position in a concept's shuffled split
    (tmp_path / "t.csv").write_text(
        "concept,label,x1,x2,note\n"
        'a,0,1.0,2.0,"two\nlines"\n'
        "\n"
        "a,0,2.0,3.0,ok\n"
        "b,0,3.0,,ok\n"
        "b,1,4.0,5.0,ok\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError) as info:
        load_table(str(tmp_path / "t.csv"), feature_columns=["x1", "x2"])
    msg = str(info.value)
    assert "feature column 'x2' has nan at line 6, data row 3 of" in msg and "t.csv" in msg
    df = pd.DataFrame(
        {"concept": ["a", "a", "b"], "label": [0, 1, 0], "x": [1.0, np.inf, 2.0]}, index=[7, 8, 9]
    )
    with pytest.raises(
        DataError, match=r"feature column 'x' has inf at row 8 of the frame \(position 1\)"
    ):
        load_table(frame=df)
    df = pd.DataFrame({"concept": ["a"] * 3, "label": [0.0, np.nan, 1.0], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(DataError, match=r"label column 'label' has nan at row 1 of the frame"):
        load_table(frame=df)


def test_table_needs_exactly_one_source():
    with pytest.raises(CladTypeError, match="exactly one of file"):
        load_table()


def test_mismatched_feature_counts(tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "a.npz", X=rng.normal(size=(20, 3)), y=np.r_[np.zeros(18), np.ones(2)])
    np.savez(tmp_path / "b.npz", X=rng.normal(size=(20, 4)), y=np.r_[np.zeros(18), np.ones(2)])
    with pytest.raises(DataError, match="'b.npz' has 4 feature columns but 'a.npz' has 3") as info:
        load_npz_files(["a.npz", "b.npz"], data_dir=str(tmp_path))
    assert "every file must have the same number of features" in str(info.value)


def test_npz_without_X_and_y(tmp_path):
    np.savez(tmp_path / "c.npz", data=np.zeros((3, 2)))
    with pytest.raises(DataError, match=r"has arrays \['data'\]; expected 'X' and 'y'"):
        load_npz_files(["c.npz"], data_dir=str(tmp_path))


def test_concept_without_anomalies(tmp_path):
    df = pd.DataFrame(
        {"concept": ["a"] * 4 + ["b"] * 4, "label": [0, 0, 0, 1, 0, 0, 0, 0], "x": np.arange(8.0)}
    )
    with pytest.raises(DataError, match="concept 'b' has no anomalies"):
        load_table(frame=df)


def test_clad_npz_refuses_other_files(tmp_path):
    from clad.datasets import load_clad_npz

    np.savez(tmp_path / "x.npz", X=np.zeros((2, 2)))
    with pytest.raises(DataError, match="is not a clad concept file"):
        load_clad_npz(str(tmp_path / "x.npz"))


def test_download_needs_a_card(tmp_path):
    from clad.datasets import download

    with pytest.raises(DataError, match="no dataset card lists 'mine/data.npz'"):
        download("mine/data.npz", tmp_path)


def test_user_sha256_is_checked(tmp_path):
    from clad.datasets import load_odds_mat

    (tmp_path / "a.mat").write_bytes(b"not really")
    with pytest.raises(DataError, match="checksum mismatch"):
        load_odds_mat(str(tmp_path / "a.mat"), sha256="0" * 64)
