"""The telemanom loader: on a hand-made folder in the same layout, and on the shared SMAP copy."""

import numpy as np
import pytest

from clad.datasets import DATASETS, load_card, load_dataset, load_telemanom
from clad.errors import CladValueError, DataError

from tests.data_helpers import SHARED, mini, needs_smap  # noqa: F401


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("CLAD_DATA", raising=False)


def test_subsystem_concepts_by_hand(mini):
    ds = load_telemanom("tele", spacecraft="X", data_dir=str(mini))
    assert ds.train_names == ds.test_names == ("A", "B")
    assert [c.n_rows for c in ds.train] == [7 + 5, 9] and [c.n_rows for c in ds.test] == [10 + 6, 8]
    # A-1 first (channel order), then A-2 with its two ranges united
    assert ds.test[0].y.tolist() == [0, 0, 1, 1, 0, 0, 0, 0, 1, 1] + [0, 1, 0, 0, 1, 1]
    assert ds.test[1].y.tolist() == [0] * 7 + [1]
    assert ds.train[0].y is None
    assert ds.metadata["channels"] == {"A": ["A-1", "A-2"], "B": ["B-1"]}
    assert ds.metadata["segments"] == {"train": [[7, 5], [9]], "test": [[10, 6], [8]]}


def test_windows_never_span_two_channels_or_the_split(mini):
    ds = load_telemanom("tele", spacecraft="X", window=4, stride=2, data_dir=str(mini))
    # A: train (7-4)//2+1 + (5-4)//2+1 = 2 + 1; test (10-4)//2+1 + (6-4)//2+1 = 4 + 2
    assert [c.n_rows for c in ds.train] == [3, 3] and [c.n_rows for c in ds.test] == [6, 3]
    for c in ds.train + ds.test:
        assert all(len(np.unique(w[:, 0])) == 1 for w in c.X)
    assert {float(v) for v in np.unique(ds.train[0].X[:, :, 0])} == {
        10.0,
        11.0,
    }  # train channels only
    # test A windows: A-1 starts 0,2,4,6 (ranges 2-3, 8-9), A-2 starts 0,2 (steps 1, 4, 5)
    assert ds.test[0].y.tolist() == [1, 1, 0, 1, 1, 1]
    last = load_telemanom(
        "tele", spacecraft="X", window=4, stride=2, window_label="last", data_dir=str(mini)
    )
    assert last.test[0].y.tolist() == [1, 0, 0, 1, 0, 1]


def test_channel_concepts_and_other_spacecraft(mini):
    ds = load_telemanom("tele", spacecraft="X", concepts="channel", data_dir=str(mini))
    assert ds.train_names == ("A-1", "A-2", "B-1")
    y = load_telemanom("tele", spacecraft="Y", data_dir=str(mini))
    assert y.train_names == ("M",) and y.test[0].y.tolist() == [1, 0, 0, 0]
    only_b = load_telemanom("tele", spacecraft="X", subsystems=["B"], data_dir=str(mini))
    assert only_b.train_names == ("B",)


def test_errors_name_the_problem(mini):
    with pytest.raises(DataError, match="no channel of spacecraft='Z'.*it lists: X, Y"):
        load_telemanom("tele", spacecraft="Z", data_dir=str(mini))
    with pytest.raises(
        CladValueError, match="concepts='subsystems' \\(did you mean 'subsystem'\\?\\)"
    ):
        load_telemanom("tele", spacecraft="X", concepts="subsystems", data_dir=str(mini))
    with pytest.raises(DataError, match="unknown subsystems \\['Q'\\]; X has: A, B"):
        load_telemanom("tele", spacecraft="X", subsystems=["Q"], data_dir=str(mini))
    csv = mini / "tele" / "labeled_anomalies.csv"
    csv.write_text(csv.read_text().replace('B-1,X,"[[7, 7]]"', 'B-1,X,"[[7, 8]]"'))
    with pytest.raises(DataError, match="range \\[7, 8\\] is outside its 8 test steps"):
        load_telemanom("tele", spacecraft="X", data_dir=str(mini))
    with pytest.raises(DataError, match="not found"):
        load_telemanom("nowhere", data_dir=str(mini))


@pytest.mark.slow
@needs_smap
def test_the_shared_smap_copy_as_its_readme_describes():
    ds = load_telemanom(data_dir=str(SHARED))
    assert ds.train_names == ("A", "B", "D", "E", "F", "G", "P", "R", "S", "T")
    n_channels = {k: len(v) for k, v in ds.metadata["channels"].items()}
    assert n_channels == {
        "A": 9,
        "B": 1,
        "D": 12,
        "E": 13,
        "F": 3,
        "G": 6,
        "P": 5,
        "R": 1,
        "S": 1,
        "T": 3,
    }
    assert sum(c.n_rows for c in ds.train) == 138_004 and sum(c.n_rows for c in ds.test) == 435_826
    # 57,043 steps counting P-2's two rows apart; their union leaves 55,972
    assert sum(c.n_anomalies for c in ds.test) == 55_972 and ds.row_shape == (25,)


@needs_smap
def test_card_recipe_builds_the_windowed_scenario():
    card = load_card("nasa-smap")
    assert card["loader"] == "telemanom" and "telemanom" in DATASETS
    ds = load_dataset(
        "telemanom", {**card["default_recipe"], "data_dir": str(SHARED), "subsystems": ["B", "S"]}
    )
    assert ds.row_shape == (16, 25)
    # B-1: 2,435 training steps -> 152 windows of 16 (stride 16)
    assert ds.train[0].n_rows == (2435 - 16) // 16 + 1 == 152
