"""Windows over hand-made series: counts, labels, views, and no window across a split or a segment."""

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest

from clad import Concept, ConceptDataset, run_experiment
from clad.datasets import DATASETS, load_dataset
from clad.datasets.windows import (
    n_windows,
    sliding_windows,
    window_concept,
    window_dataset,
    window_labels,
)
from clad.detectors import as_detector
from clad.errors import CladValueError, DataError
from clad.scenarios import ConceptAgnostic, ConceptIncremental
from clad.strategies import Cumulative, Replay, Window


def series(channel: int, n: int, d: int = 2) -> np.ndarray:
    """Steps of one channel: column 0 is the channel id, column 1 the step index (so a window's
    rows tell which channel and which steps they came from)."""
    X = np.zeros((n, d))
    X[:, 0] = channel
    X[:, 1] = np.arange(n)
    return X


def test_counts_and_contents_by_hand():
    X = series(0, 10)
    for window, stride, expected in [
        (4, 1, 7),
        (4, 2, 4),
        (4, 3, 3),
        (10, 1, 1),
        (11, 1, 0),
        (1, 1, 10),
        (3, 5, 2),
    ]:
        W = sliding_windows(X, window, stride)
        assert W.shape == (expected, window, 2) == (n_windows(10, window, stride), window, 2)
        for i in range(expected):  # window i holds steps i*stride .. i*stride+window-1, in order
            assert W[i, :, 1].tolist() == list(range(i * stride, i * stride + window))


def test_windows_are_read_only_views():
    X = series(0, 50)
    W = sliding_windows(X, 8, 4)
    assert np.shares_memory(W, X) and not W.flags.writeable
    c = window_concept("c", [(X, None)], 8, 4)
    assert np.shares_memory(c.X, X)  # one segment: the concept keeps the view


def test_labels_any_and_last_by_hand():
    y = np.array([0, 0, 0, 1, 0, 0, 0, 0, 1, 1])
    # window 3, stride 2: starts 0, 2, 4, 6 -> steps [0..2], [2..4], [4..6], [6..8]
    assert window_labels(y, 3, 2, "any").tolist() == [0, 1, 0, 1]
    assert window_labels(y, 3, 2, "last").tolist() == [0, 0, 0, 1]
    # window 4, stride 3: starts 0, 3, 6 -> [0..3], [3..6], [6..9]
    assert window_labels(y, 4, 3, "any").tolist() == [1, 1, 1]
    assert window_labels(y, 4, 3, "last").tolist() == [1, 0, 1]
    assert window_labels(y, 11, 1, "any").shape == (0,)


def test_no_window_spans_two_segments():
    a, b, c = series(1, 7), series(2, 3), series(3, 9)  # b is shorter than the window
    concept = window_concept("s", [(a, None), (b, None), (c, None)], window=4, stride=2)
    assert concept.n_rows == n_windows(7, 4, 2) + 0 + n_windows(9, 4, 2) == 2 + 3
    for w in concept.X:
        assert len(np.unique(w[:, 0])) == 1  # one channel per window
        assert np.all(np.diff(w[:, 1]) == 1)  # consecutive steps of it
    assert [w[0, 0] for w in concept.X] == [1, 1, 3, 3, 3]


def hand_dataset():
    """Two concepts; training and test series with different channel ids, test with segments."""
    train = [Concept("A", np.vstack([series(1, 6), series(2, 5)])), Concept("B", series(3, 8))]
    y_a = np.zeros(9, dtype=int)
    y_a[5] = 1  # the first step of the second test segment of A... see below
    test = [
        Concept("A", np.vstack([series(11, 5), series(12, 4)]), y_a),
        Concept("B", series(13, 6), np.r_[np.zeros(5), 1]),
    ]
    meta = {"segments": {"train": [[6, 5], [8]], "test": [[5, 4], [6]]}}
    return ConceptDataset(train, test, name="hand", metadata=meta)


def test_dataset_transform_counts_labels_and_boundaries():
    w = window_dataset(hand_dataset(), window=3, stride=1, label="any")
    assert [c.n_rows for c in w.train] == [4 + 3, 6]
    assert [c.n_rows for c in w.test] == [3 + 2, 4]
    assert w.metadata["segments"] == {"train": [[4, 3], [6]], "test": [[3, 2], [4]]}
    assert w.metadata["windows"] == {"window": 3, "stride": 1, "label": "any"}
    # step 5 of test A is step 0 of its second segment (channel 12): only that segment's first window
    assert w.test[0].y.tolist() == [0, 0, 0, 1, 0]
    assert w.test[1].y.tolist() == [0, 0, 0, 1]
    for concepts, ids in ((w.train, {1, 2, 3}), (w.test, {11, 12, 13})):
        for c in concepts:  # no window mixes channels, and train and test windows never mix
            assert all(len(np.unique(x[:, 0])) == 1 for x in c.X)
            assert set(np.unique(c.X[:, :, 0])) <= ids
    last = window_dataset(hand_dataset(), window=3, stride=1, label="last")
    assert last.test[0].y.tolist() == [0, 0, 0, 0, 0] and last.test[1].y.tolist() == [0, 0, 0, 1]


def test_without_segments_each_concept_is_one_series():
    ds = hand_dataset()
    ds.metadata.pop("segments")
    w = window_dataset(ds, window=3, stride=2)
    assert [c.n_rows for c in w.train] == [n_windows(11, 3, 2), n_windows(8, 3, 2)]


def test_bad_parameters_and_inputs():
    ds = hand_dataset()
    with pytest.raises(CladValueError, match="window=0; expected an integer >= 1"):
        window_dataset(ds, window=0)
    with pytest.raises(CladValueError, match="label='all'.*allowed: 'any', 'last'"):
        window_dataset(ds, window=2, label="all")
    with pytest.raises(DataError, match="no segment of at least window=20 steps"):
        window_dataset(ds, window=20)
    with pytest.raises(DataError, match="already windowed"):
        window_dataset(window_dataset(ds, window=2), window=2)
    ds.metadata["segments"] = {"train": [[6, 4], [8]], "test": [[5, 4], [6]]}
    with pytest.raises(DataError, match="segment lengths \\[6, 4\\] add up to 10"):
        window_dataset(ds, window=2)


def test_three_d_concepts_validate_and_share_one_row_shape():
    c = Concept("w", np.zeros((4, 3, 2)))
    assert c.row_shape == (3, 2) and c.n_features == 6 and c.window == 3
    with pytest.raises(DataError, match="rows of shape \\(4, 2\\), but 'A' has \\(3, 2\\)"):
        ConceptDataset(
            [Concept("A", np.zeros((4, 3, 2)))],
            [Concept("B", np.zeros((4, 4, 2)), np.r_[0, 0, 1, 1])],
        )
    bad = np.zeros((2, 3, 2))
    bad[1, 2, 0] = np.nan
    with pytest.raises(DataError, match="row 1, step 2, column 0"):
        Concept("w", bad)


def test_tabular_detectors_get_flattened_windows():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(200, 5, 3))
    det = as_detector(IsolationForest(n_estimators=20, random_state=0)).fit(W)
    assert det.n_features_in_ == 15 and det.estimator_.n_features_in_ == 15
    assert np.array_equal(det.score(W), det.score(W.reshape(200, 15)))


@pytest.mark.parametrize("strategy", [Cumulative, Replay, Window])
def test_windowed_concepts_run_through_row_keeping_strategies(strategy):
    rng = np.random.default_rng(1)
    train = [Concept(k, rng.normal(loc=i, size=(120, 2))) for i, k in enumerate("AB")]
    test = [
        Concept(k, rng.normal(loc=i, size=(60, 2)), np.r_[np.zeros(55), np.ones(5)])
        for i, k in enumerate("AB")
    ]
    ds = window_dataset(ConceptDataset(train, test), window=4, stride=2)
    kw = (
        {"buffer_size": 30}
        if strategy is Replay
        else {"window_size": 40}
        if strategy is Window
        else {}
    )
    for scenario in (ConceptIncremental(), ConceptAgnostic(batch_size=25, transition=10)):
        r = run_experiment(ds, scenario, strategy(IsolationForest(n_estimators=10), **kw), seed=0)
        assert r.R["roc_auc"].shape == (2, 2)


def test_windowed_loader_wraps_any_registered_loader():
    assert "windowed" in DATASETS
    ds = load_dataset(
        "windowed",
        {
            "dataset": "synthetic",
            "params": {"n_concepts": 2, "n_train": 40, "n_test": 30},
            "window": 5,
            "stride": 5,
            "random_state": 3,
        },
    )
    assert ds.row_shape == (5, 8) and [c.n_rows for c in ds.train] == [8, 8]
    same = load_dataset(
        "windowed",
        {
            "dataset": "synthetic",
            "params": {"n_concepts": 2, "n_train": 40, "n_test": 30},
            "window": 5,
            "stride": 5,
            "random_state": 3,
        },
    )
    assert np.array_equal(ds.train[1].X, same.train[1].X)
