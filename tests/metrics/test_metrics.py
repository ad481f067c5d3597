"""Continual metrics against hand-computed matrices."""

import math

import numpy as np
import pytest

from clad import metrics
from clad.errors import CladValueError

R3 = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=float)
RB = np.array([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])


def test_design_check_matrix():
    assert metrics.continual_average(R3) == pytest.approx(34 / 6)
    assert metrics.backward_transfer(R3) == pytest.approx(4.0)
    assert metrics.forward_transfer(R3) == pytest.approx(11 / 3)


def test_pyclad_code_bwt_differs():
    # pyCLAD's code: mean of R[i, j] - R[i-1, j] over i > j gives 3 here; clad follows the documentation
    pyclad_code = np.mean([R3[i, j] - R3[i - 1, j] for i in range(3) for j in range(3) if i > j])
    assert pyclad_code == pytest.approx(3.0)
    assert metrics.backward_transfer(R3) != pytest.approx(pyclad_code)


def test_second_matrix():
    assert metrics.continual_average(RB) == pytest.approx(0.78333333333)
    assert metrics.backward_transfer(RB) == pytest.approx(-0.18333333333)
    assert metrics.forward_transfer(RB) == pytest.approx(0.5)


def test_single_step_bwt_fwt_are_nan():
    R = np.array([[0.8]])
    assert metrics.continual_average(R) == pytest.approx(0.8)
    assert math.isnan(metrics.backward_transfer(R))
    assert math.isnan(metrics.forward_transfer(R))


def test_nan_cells_are_left_out_not_propagated():
    R = RB.copy()
    R[2, 0] = np.nan  # a seen cell
    R[0, 2] = np.nan  # a future cell
    # CA: seen cells 0.9, 0.7, 0.8, 0.75, 0.95 (0.6 left out)
    assert metrics.continual_average(R) == pytest.approx((0.9 + 0.7 + 0.8 + 0.75 + 0.95) / 5)
    # BWT: (0.7-0.9), (0.75-0.8) (R[2,0] left out)
    assert metrics.backward_transfer(R) == pytest.approx(((0.7 - 0.9) + (0.75 - 0.8)) / 2)
    # FWT: 0.5, 0.6 (R[0,2] left out)
    assert metrics.forward_transfer(R) == pytest.approx(0.55)
    s = metrics.summarize(R)
    assert {
        k: s["left_out"][k] for k in ("continual_average", "backward_transfer", "forward_transfer")
    } == {"continual_average": 1, "backward_transfer": 1, "forward_transfer": 1}
    # every scalar metric records its left-out count: final row 0.6 (NaN) out of final/forgetting/GEM-BWT
    assert set(s["left_out"]) == set(metrics.scalar_names(needs_only=()))
    assert s["left_out"]["final_average"] == 1 and s["left_out"]["forgetting"] == 1
    assert s["left_out"]["gem_backward_transfer"] == 1 and s["left_out"]["learning_average"] == 0


def test_nan_diagonal_removes_its_bwt_terms():
    R = RB.copy()
    R[0, 0] = np.nan
    # terms with j=0 use R[0,0]: left out; remaining (0.75 - 0.8)
    assert metrics.backward_transfer(R) == pytest.approx(-0.05)
    assert metrics.summarize(R)["left_out"]["backward_transfer"] == 2


def test_all_nan_gives_nan():
    R = np.full((2, 2), np.nan)
    assert math.isnan(metrics.continual_average(R))


def test_other_metrics_hand_computed():
    assert metrics.final_average(RB) == pytest.approx((0.6 + 0.75 + 0.95) / 3)
    assert metrics.learning_average(RB) == pytest.approx((0.9 + 0.8 + 0.95) / 3)
    # forgetting: concept 0 max(0.9, 0.7) - 0.6 = 0.3 ; concept 1 max(0.8) - 0.75 = 0.05
    assert metrics.forgetting(RB) == pytest.approx((0.3 + 0.05) / 2)
    # GEM BWT: (0.6 - 0.9 + 0.75 - 0.8) / 2
    assert metrics.gem_backward_transfer(RB) == pytest.approx(-0.175)
    np.testing.assert_allclose(metrics.accuracy_seen(RB), [0.9, 0.75, (0.6 + 0.75 + 0.95) / 3])
    np.testing.assert_allclose(metrics.accuracy_all(RB), RB.mean(axis=1))


def test_general_case_recurring_and_unlearned():
    # steps learn A, B, A ; test concepts A, B, C (C never learned)
    R = np.array([[0.9, 0.4, 0.5], [0.6, 0.8, 0.3], [0.95, 0.7, 0.2]])
    t = metrics.learned_at(["A", "B", "A"], ["A", "B", "C"])
    assert t.tolist() == [0, 1, -1]
    # seen: A rows 0..2 (0.9, 0.6, 0.95), B rows 1..2 (0.8, 0.7)
    assert metrics.continual_average(R, t) == pytest.approx((0.9 + 0.6 + 0.95 + 0.8 + 0.7) / 5)
    # BWT against R[t(j), j]: A: 0.6-0.9, 0.95-0.9 ; B: 0.7-0.8
    assert metrics.backward_transfer(R, t) == pytest.approx(
        ((0.6 - 0.9) + (0.95 - 0.9) + (0.7 - 0.8)) / 3
    )
    # FWT: only B at row 0 (C is never learned: left out)
    assert metrics.forward_transfer(R, t) == pytest.approx(0.4)
    assert metrics.unlearned_average(R, t) == pytest.approx((0.5 + 0.3 + 0.2) / 3)


def test_general_case_reduces_to_standard():
    t = metrics.learned_at(["a", "b", "c"], ["a", "b", "c"])
    for fn in (metrics.continual_average, metrics.backward_transfer, metrics.forward_transfer):
        assert fn(RB, t) == fn(RB)


def test_standard_case_with_more_columns_than_steps():
    R = np.array([[0.9, 0.5, 0.1], [0.7, 0.8, 0.2]])
    # third column never learned: out of CA/BWT/FWT
    assert metrics.forward_transfer(R) == pytest.approx(0.5)
    assert metrics.unlearned_average(R) == pytest.approx(0.15)


@pytest.mark.parametrize("bad", [np.zeros((0, 0)), np.zeros(3), [[]]])
def test_bad_matrix_is_a_clear_error(bad):
    with pytest.raises(CladValueError, match="R must be a non-empty 2-D matrix"):
        metrics.continual_average(bad)


def test_bad_learned_at():
    with pytest.raises(CladValueError, match="learned_at has shape"):
        metrics.continual_average(RB, [0, 1])
    with pytest.raises(CladValueError, match="learned_at values"):
        metrics.continual_average(RB, [0, 1, 5])
