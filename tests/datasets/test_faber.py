"""The published generator of Faber et al. (recipe ``faber2024``) step by step on a hand-checkable case,
and on NSL-KDD with the published preprocessing."""

import random
from pathlib import Path

import numpy as np
import pytest

from clad.datasets import load_adbench, load_nsl_kdd
from clad.datasets.faber import faber_concepts
from clad.errors import CladValueError, DataError
from tests.data_helpers import SHARED, needs

REPO = Path(__file__).resolve().parents[2]
needs_data = needs("nsl-kdd")

# One feature. Normal rows: group A (7 rows around 0.4), group B (3 rows at 10), group C (5 rows at 20).
# Anomalies: three groups of three, around 6, -6 and 30.
A = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 1.5]
B = [10.0, 10.1, 10.2]
C = [20.0, 20.1, 20.2, 20.3, 20.4]
G1, G2, G3 = [6.0, 6.1, 6.5], [-6.0, -6.1, -6.5], [30.0, 30.1, 30.5]
VALUES = np.array(A + B + C + G1 + G2 + G3)
X = VALUES.reshape(-1, 1)
Y = np.r_[np.zeros(15, int), np.ones(9, int)]
K, SIZE = 3, 5
# By hand. Step 2, the SIZE = 5 rows of each cluster nearest its centroid: A's centroid is 3.0 / 7 = 0.43, so
# 0.4, 0.5, 0.3, 0.2, 0.1 (0.0 at 0.43 and 1.5 at 1.07 are left out); B has 3 rows, all kept; C has 5.
CONCEPT_NORMAL = {"A": {0.1, 0.2, 0.3, 0.4, 0.5}, "B": set(B), "C": set(C)}
# Split: int(3 * 5 / 5) = 3 train rows for A and C, int(3 * 3 / 5) = 1 for B.
N_TRAIN = {"A": 3, "B": 1, "C": 3}
# Step 3: a = min(int(9 / 3), int(2 * 5 / 5)) = min(3, 2) = 2 anomalies per concept. Clustered: each anomaly
# group's 2 rows nearest its mean (6.2 -> 6.1, 6.0; -6.2 -> -6.1, -6.0; 30.2 -> 30.1, 30.0).
ANOM_CLUSTERS = {"g1": {6.0, 6.1}, "g2": {-6.0, -6.1}, "g3": {30.0, 30.1}}
PER_CONCEPT = 2


def _group_of(concept) -> str:
    normal = set(VALUES[concept.train]) | set(VALUES[concept.test][Y[concept.test] == 0])
    return next(g for g, rows in CONCEPT_NORMAL.items() if normal == rows)


def _check_normal_part(concepts):
    groups = [_group_of(c) for c in concepts]
    assert sorted(groups) == ["A", "B", "C"]
    for c, g in zip(concepts, groups):
        assert len(c.train) == N_TRAIN[g] and (Y[c.train] == 0).all()
        assert int((Y[c.test] == 0).sum()) == len(CONCEPT_NORMAL[g]) - N_TRAIN[g]
    return groups


def _anomalies(c) -> set:
    return set(VALUES[c.test][Y[c.test] == 1])


@pytest.mark.parametrize("seed", [0, 1])
def test_clustered_closest_by_hand(seed):
    cs = faber_concepts(
        X, Y, n_concepts=K, size_per_concept=SIZE, assignment="clustered_closest", random_state=seed
    )
    groups = _check_normal_part(cs)
    # greedy, concept by concept: concept means A 0.3, B 10.1, C 20.2; anomaly cluster means 6.05, -6.05, 30.05.
    # A and B both lie nearest g1 (5.75 and 4.05): the one that comes first takes it, the other then takes
    # g2 (A: 6.35 against 29.75; B: 16.15 against 19.95); C takes g3 (9.85 against 14.15 for g1).
    first = next(g for g in groups if g in ("A", "B"))
    expected = {first: "g1", ({"A", "B"} - {first}).pop(): "g2", "C": "g3"}
    for c, g in zip(cs, groups):
        assert _anomalies(c) == ANOM_CLUSTERS[expected[g]]


def test_clustered_random_by_hand():
    seen = set()
    for seed in range(8):
        cs = faber_concepts(
            X,
            Y,
            n_concepts=K,
            size_per_concept=SIZE,
            assignment="clustered_random",
            random_state=seed,
        )
        groups = _check_normal_part(cs)
        got = {
            g: next(name for name, rows in ANOM_CLUSTERS.items() if _anomalies(c) == rows)
            for c, g in zip(cs, groups)
        }
        assert sorted(got.values()) == [
            "g1",
            "g2",
            "g3",
        ]  # each anomaly cluster to exactly one concept
        seen.add(tuple(sorted(got.items())))
    assert len(seen) > 1  # the order of the anomaly clusters is random (seeded), not fixed


def test_random_by_hand():
    cs = faber_concepts(
        X, Y, n_concepts=K, size_per_concept=SIZE, assignment="random", random_state=3
    )
    _check_normal_part(cs)
    parts = [_anomalies(c) for c in cs]
    assert [len(p) for p in parts] == [PER_CONCEPT] * K
    assert (
        set().union(*parts) <= set(G1 + G2 + G3) and len(set().union(*parts)) == K * PER_CONCEPT
    )  # disjoint
    again = faber_concepts(
        X, Y, n_concepts=K, size_per_concept=SIZE, assignment="random", random_state=3
    )
    assert all(
        np.array_equal(a.test, b.test) and np.array_equal(a.train, b.train)
        for a, b in zip(cs, again)
    )
    other = [
        faber_concepts(
            X, Y, n_concepts=K, size_per_concept=SIZE, assignment="random", random_state=s
        )
        for s in range(4, 10)
    ]
    assert any([_anomalies(c) for c in o] != parts for o in other)


def test_published_shuffle_copies_rows_like_random_shuffle_on_a_2d_array():
    # the published code calls random.shuffle on the 2-D anomaly array; its swaps copy rows over one another
    anomalies = np.flatnonzero(Y == 1)
    arr = X[anomalies].copy()
    seed = 11
    anom_ss = np.random.SeedSequence(seed).spawn(3)[1]
    random.Random(int(anom_ss.generate_state(1)[0])).shuffle(arr)
    expected = [list(arr[PER_CONCEPT * i : PER_CONCEPT * (i + 1), 0]) for i in range(K)]
    cs = faber_concepts(
        X,
        Y,
        n_concepts=K,
        size_per_concept=SIZE,
        assignment="random",
        anomaly_shuffle="published",
        random_state=seed,
    )
    assert [sorted(VALUES[c.test][Y[c.test] == 1]) for c in cs] == [sorted(e) for e in expected]
    # the copying in that shuffle: the 9 rows no longer hold 9 distinct values
    assert len(np.unique(arr)) < len(arr)


def test_test_sets_are_shuffled_and_rows_keep_their_labels():
    cs = faber_concepts(
        X, Y, n_concepts=K, size_per_concept=SIZE, assignment="clustered_closest", random_state=0
    )
    orders = [np.array_equal(Y[c.test], np.sort(Y[c.test])) for c in cs]
    assert not all(orders)  # not normal rows first then anomalies everywhere


def test_bad_parameters_are_named():
    with pytest.raises(CladValueError, match="assignment='closest'"):
        faber_concepts(X, Y, assignment="closest")
    with pytest.raises(DataError, match="n_concepts=20"):
        faber_concepts(X, Y, n_concepts=20)
    with pytest.raises(DataError, match="anomalies"):
        faber_concepts(X, np.r_[np.zeros(23, int), np.ones(1, int)], n_concepts=3)


@needs("adbench-classical")
def test_adbench_takes_the_recipe_and_refuses_split_parameters():
    ds = load_adbench(
        "6_cardio.npz",
        recipe="faber2024",
        n_concepts=3,
        size_per_concept=200,
        assignment="clustered_closest",
        data_dir=str(SHARED),
    )
    assert [c.n_rows for c in ds.train] == [120, 120, 120]
    assert all(int((c.y == 0).sum()) == 80 and 1 <= c.n_anomalies <= 80 for c in ds.test)
    with pytest.raises(CladValueError, match="test_size=0.3"):
        load_adbench("6_cardio.npz", recipe="faber2024", test_size=0.3, data_dir=str(SHARED))


@pytest.mark.slow
@needs_data
def test_nsl_kdd_published_preprocessing_by_hand():
    ds = load_nsl_kdd(concepts="protocol", preprocessing="faber2024", data_dir=str(SHARED))
    names = ds.metadata["feature_names"]
    assert names[:4] == [
        "duration",
        "protocol_type",
        "service",
        "flag",
    ]  # the file's column order is kept
    X_all = np.vstack([c.X for c in ds.train + ds.test])
    assert X_all.min() == 0.0 and X_all.max() == 1.0
    # protocol_type: icmp, tcp, udp -> ordinal 0, 1, 2 -> min-max 0, 0.5, 1
    for c in ds.train:
        assert set(np.unique(c.X[:, 1]).tolist()) == {{"icmp": 0.0, "tcp": 0.5, "udp": 1.0}[c.name]}
    with pytest.raises(CladValueError, match="encoding='ordinal'"):
        load_nsl_kdd(preprocessing="faber2024", encoding="ordinal", data_dir=str(SHARED))


@needs_data
@pytest.mark.slow
def test_nsl_kdd_faber2024_concepts_have_the_pyclad_shape():
    ds = load_nsl_kdd(
        concepts="faber2024",
        preprocessing="faber2024",
        n_concepts=5,
        size_per_concept=1000,
        assignment="random",
        data_dir=str(SHARED),
        random_state=0,
    )
    shapes = [
        (tr.n_rows, int((te.y == 0).sum()), int(te.y.sum())) for tr, te in zip(ds.train, ds.test)
    ]
    # every concept follows the rule: n = min(1000, cluster rows); int(3n/5) train; the rest, plus
    # min(int(24,576 / 5), int(2 * 1000 / 5)) = 400 anomalies, test
    for n_train, n_test_normal, n_anom in shapes:
        n = n_train + n_test_normal
        assert n <= 1000 and n_train == int(3 * n / 5) and n_anom == 400
    # with the data here (KDDTrain+ 20 % and KDDTest+), four of the five k-means clusters (random_state 42)
    # hold more than 1000 normal rows: those concepts have the shape of pyCLAD's file (600; 400 + 400)
    assert sorted(shapes, reverse=True)[:4] == [(600, 400, 400)] * 4
