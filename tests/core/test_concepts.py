"""Concept and dataset validation: each bad input is a DataError naming the concept and the problem."""

import numpy as np
import pytest

from clad import Concept, ConceptDataset
from clad.errors import DataError


def good(name="A", n=10, d=3, labels=True):
    X = np.random.default_rng(0).normal(size=(n, d))
    y = np.r_[np.zeros(n - 2), np.ones(2)] if labels else None
    return Concept(name, X, y)


def test_valid_dataset():
    ds = ConceptDataset(
        [good("A", labels=False), good("B", labels=False), good("A", labels=False)],
        [good("A"), good("B"), good("C")],
    )
    assert ds.train_names == ("A", "B", "A")
    assert ds.test_names == ("A", "B", "C")
    assert ds.n_features == 3


def test_a_concept_owns_its_arrays():
    """The caller can no longer change a concept's data: a writable array is copied (read-only),
    a read-only one that nothing can write through is shared, dtype kept."""
    X, y = np.zeros((5, 2), dtype=np.float32), np.zeros(5, dtype=np.int8)
    c = Concept("A", X, y)
    X[0, 0], y[0] = 7.0, 1
    assert c.X[0, 0] == 0.0 and c.y[0] == 0 and c.X.dtype == np.float32
    assert not c.X.flags.writeable and not c.y.flags.writeable
    assert X.flags.writeable  # the caller's own array is left as it was
    with pytest.raises(ValueError, match="read-only"):
        c.X[0, 0] = 1.0
    frozen = np.ones((4, 2))
    frozen.flags.writeable = False
    assert Concept("B", frozen).X is frozen  # nothing can write it: shared, not copied
    view = np.ones((4, 2))[:3]
    view.flags.writeable = False  # a read-only view of a writable array is copied
    assert not np.shares_memory(Concept("C", view).X, view)
    part = Concept("D", c.X[1:])  # a part of another concept's data is shared
    assert np.shares_memory(part.X, c.X)


def test_a_writable_memory_map_is_viewed_not_copied(tmp_path):
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64, shape=(6, 2))
    mm[:] = 1.0
    c = Concept("M", mm)
    assert np.shares_memory(c.X, mm) and not c.X.flags.writeable  # never read whole into memory


def test_int_features_become_float():
    c = Concept("A", np.arange(6).reshape(3, 2))
    assert c.X.dtype == np.float64


@pytest.mark.parametrize(
    "X, y, match",
    [
        (
            np.array([[1.0, np.nan]]),
            None,
            r"concept 'bad': features contain NaN or infinity \(first at row 0, column 1\)",
        ),
        (np.array([[1.0, np.inf]]), None, "NaN or infinity"),
        (np.zeros((0, 3)), None, "concept 'bad': has no rows"),
        (np.zeros((3, 0)), None, "has no feature columns"),
        (np.zeros(3), None, r"must be a 2-D array .* got shape \(3,\)"),
        (np.array([["a", "b"]]), None, "features have dtype <U1; expected numbers"),
        (np.zeros((3, 2)), np.array([0, 1]), "2 labels for 3 rows; expected one label per row"),
        (
            np.zeros((3, 2)),
            np.array([0, 1, 2]),
            r"labels must be binary, 0 \(normal\) or 1 \(anomaly\); found 0, 1, 2",
        ),
        (np.zeros((2, 2)), np.array([0.0, np.nan]), "labels contain NaN"),
        (np.zeros((2, 2)), np.array(["x", "y"]), "labels have dtype"),
        (np.zeros((2, 2)), np.zeros((2, 1)), "labels must be 1-D"),
    ],
)
def test_bad_concepts(X, y, match):
    with pytest.raises(DataError, match=match):
        Concept("bad", X, y)


def test_bad_name():
    with pytest.raises(DataError, match="concept name must be a non-empty string"):
        Concept("", np.zeros((2, 2)))


def test_feature_count_mismatch():
    with pytest.raises(
        DataError,
        match="test concept 'B' has 4 features, but 'A' has 3; all concepts must have the same number",
    ):
        ConceptDataset([good("A", labels=False)], [good("A"), good("B", d=4)])


def test_test_concept_needs_labels():
    with pytest.raises(DataError, match="test concept 'A' has no labels"):
        ConceptDataset([good("A", labels=False)], [good("A", labels=False)])


def test_duplicate_test_names():
    with pytest.raises(DataError, match="test concept name 'A' is used twice"):
        ConceptDataset([good("A", labels=False)], [good("A"), good("A")])


def test_empty_lists():
    with pytest.raises(DataError, match="no training concepts"):
        ConceptDataset([], [good("A")])
    with pytest.raises(DataError, match="no test concepts"):
        ConceptDataset([good("A")], [])


def test_not_a_concept():
    with pytest.raises(DataError, match="expected Concept objects, got ndarray"):
        ConceptDataset([np.zeros((2, 2))], [good("A")])


def test_data_error_is_a_value_error():
    with pytest.raises(ValueError):
        Concept("x", np.zeros((0, 1)))
