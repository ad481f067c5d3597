"""Property-based tests of the continual metrics against brute-force reference implementations."""

import json
import math

import pytest

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from clad import metrics
from clad.results import RunResult

cell = st.one_of(st.floats(0.0, 1.0), st.just(float("nan")))


@st.composite
def matrices(draw, min_n=1, max_n=6):
    n = draw(st.integers(min_n, max_n))
    m = draw(st.integers(n, max_n + 2))  # possibly extra never-learned columns
    return draw(arrays(np.float64, (n, m), elements=cell))


@st.composite
def general_case(draw):
    """R with names: a learning order with repeats, test concepts some of which are never learned."""
    names = ["a", "b", "c", "d"]
    steps = draw(st.lists(st.sampled_from(names), min_size=1, max_size=6))
    tests = draw(st.lists(st.sampled_from(names + ["x", "y"]), min_size=1, max_size=5, unique=True))
    R = draw(arrays(np.float64, (len(steps), len(tests)), elements=cell))
    return R, metrics.learned_at(steps, tests)


def ref_t(R, t):
    if t is None:
        return [j if j < R.shape[0] else -1 for j in range(R.shape[1])]
    return list(t)


def mean_or_nan(values):
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else float("nan")


def ref_ca(R, t=None):
    t = ref_t(R, t)
    return mean_or_nan(
        [R[i][j] for i in range(R.shape[0]) for j in range(R.shape[1]) if t[j] >= 0 and i >= t[j]]
    )


def ref_bwt(R, t=None):
    t = ref_t(R, t)
    return mean_or_nan(
        [
            R[i][j] - R[t[j]][j]
            for i in range(R.shape[0])
            for j in range(R.shape[1])
            if t[j] >= 0 and i > t[j]
        ]
    )


def ref_fwt(R, t=None):
    t = ref_t(R, t)
    return mean_or_nan(
        [R[i][j] for i in range(R.shape[0]) for j in range(R.shape[1]) if t[j] >= 0 and i < t[j]]
    )


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.slow
@given(matrices())
def test_standard_case_equals_reference(R):
    assert same(metrics.continual_average(R), ref_ca(R))
    assert same(metrics.backward_transfer(R), ref_bwt(R))
    assert same(metrics.forward_transfer(R), ref_fwt(R))


@pytest.mark.slow
@given(general_case())
def test_general_case_equals_reference(case):
    R, t = case
    assert same(metrics.continual_average(R, t), ref_ca(R, t))
    assert same(metrics.backward_transfer(R, t), ref_bwt(R, t))
    assert same(metrics.forward_transfer(R, t), ref_fwt(R, t))


def perturb(R, mask, data):
    R2 = R.copy()
    noise = data.draw(arrays(np.float64, R.shape, elements=cell))
    R2[mask] = noise[mask]
    return R2


@pytest.mark.slow
@given(matrices(min_n=2), st.data())
def test_ca_and_bwt_ignore_the_upper_triangle(R, data):
    n, m = R.shape
    upper = np.triu(np.ones((n, m), bool), k=1)
    R2 = perturb(R, upper, data)
    assert same(metrics.continual_average(R2), metrics.continual_average(R))
    assert same(metrics.backward_transfer(R2), metrics.backward_transfer(R))


@pytest.mark.slow
@given(matrices(min_n=2), st.data())
def test_fwt_ignores_lower_triangle_and_diagonal(R, data):
    n, m = R.shape
    lower = np.tril(np.ones((n, m), bool))
    R2 = perturb(R, lower, data)
    assert same(metrics.forward_transfer(R2), metrics.forward_transfer(R))


@pytest.mark.slow
@given(matrices())
def test_bounds_for_R_in_unit_interval(R):
    for fn in (
        metrics.continual_average,
        metrics.forward_transfer,
        metrics.final_average,
        metrics.learning_average,
    ):
        v = fn(R)
        assert math.isnan(v) or -1e-12 <= v <= 1 + 1e-12
    for fn in (metrics.backward_transfer, metrics.gem_backward_transfer, metrics.forgetting):
        v = fn(R)
        assert math.isnan(v) or -1 - 1e-12 <= v <= 1 + 1e-12


@pytest.mark.slow
@given(matrices())
def test_left_out_counts_nan_cells(R):
    s = metrics.summarize(R)
    n = R.shape[0]
    seen = [(i, j) for i in range(n) for j in range(min(n, R.shape[1])) if i >= j]
    assert s["left_out"]["continual_average"] == sum(math.isnan(R[i, j]) for i, j in seen)


@pytest.mark.slow
@given(matrices())
def test_results_file_invariant_under_json_round_trip(R):
    r = RunResult(
        dataset="d",
        scenario="s",
        strategy="st",
        detector="det",
        seed=0,
        concepts=tuple(f"c{i}" for i in range(R.shape[0])),
        test_concepts=tuple(f"c{j}" for j in range(R.shape[1])),
        R={"roc_auc": R},
        metrics={"roc_auc": metrics.summarize(R)},
    )
    text = json.dumps(r.to_dict(), allow_nan=False)
    back = RunResult.from_dict(json.loads(text))
    np.testing.assert_array_equal(back.R["roc_auc"], R)
    assert back.to_dict() == r.to_dict()
    assert json.dumps(back.to_dict(), allow_nan=False) == text
