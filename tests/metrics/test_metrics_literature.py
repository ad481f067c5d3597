"""The metrics of the continual-learning literature and the named variants, against hand computations."""

import math

import numpy as np
import pytest

from clad import metrics
from clad.results import RunResult
from clad.errors import CladValueError

NAN = float("nan")
RB = np.array([[0.9, 0.5, 0.4], [0.7, 0.8, 0.6], [0.6, 0.75, 0.95]])
REF = np.array([1.0, 0.9, 0.9])


def tutorial_R():
    """The 5-task example of the continual-learning metrics tutorial: rows of the published table
    are tasks and columns 'after training task k'; R is its transpose, unknown cells NaN."""
    table = [
        [98.5, 62.3, 55.1, 51.8, 49.2],
        [NAN, 97.8, 58.6, 52.4, 50.1],
        [NAN, NAN, 98.2, 61.3, 53.7],
        [NAN, NAN, NAN, 97.5, 58.9],
        [NAN, NAN, NAN, NAN, 98.1],
    ]
    return np.array(table).T


def population_variance(values):
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


def test_tutorial_five_task_example():
    R = tutorial_R()
    assert R[4, 0] == 49.2 and R[1, 1] == 97.8 and math.isnan(R[0, 1])
    assert metrics.final_average(R) == pytest.approx(62.0)
    assert metrics.learning_average(R) == pytest.approx(98.02)
    assert metrics.gem_backward_transfer(R) == pytest.approx(-45.025)
    assert metrics.forgetting(R) == pytest.approx(45.025)
    # memory stability by hand: the population variance of each task's scores from the step that
    # learned it on (tasks 0..3; task 4 is learned at the last step), then their mean
    columns = [
        [98.5, 62.3, 55.1, 51.8, 49.2],
        [97.8, 58.6, 52.4, 50.1],
        [98.2, 61.3, 53.7],
        [97.5, 58.9],
    ]
    hand = sum(population_variance(c) for c in columns) / 4
    # the first of them written out: mean 63.38, squared deviations summed, divided by 5
    assert population_variance(columns[0]) == pytest.approx(
        (
            (98.5 - 63.38) ** 2
            + (62.3 - 63.38) ** 2
            + (55.1 - 63.38) ** 2
            + (51.8 - 63.38) ** 2
            + (49.2 - 63.38) ** 2
        )
        / 5
    )
    assert metrics.memory_stability(R) == pytest.approx(hand)
    # the unknown (future) cells are NaN: forward transfer has nothing to average, CA only seen cells
    assert math.isnan(metrics.forward_transfer(R))
    assert metrics.summarize(R)["left_out"]["forward_transfer"] == 10


def test_memory_stability_hand_and_nan():
    # concept 0: [0.9, 0.7, 0.6] mean 0.7333, var = (0.02778 + 0.00111 + 0.01778) / 3; concept 1: [0.8, 0.75]
    v0 = ((0.9 - 2.2 / 3) ** 2 + (0.7 - 2.2 / 3) ** 2 + (0.6 - 2.2 / 3) ** 2) / 3
    v1 = 0.025**2
    assert metrics.memory_stability(RB) == pytest.approx((v0 + v1) / 2)
    R = RB.copy()
    R[1, 0] = NAN  # concept 0 keeps [0.9, 0.6]: variance 0.15 ** 2
    assert metrics.memory_stability(R) == pytest.approx((0.15**2 + v1) / 2)
    R[2, 1] = NAN  # concept 1 keeps [0.8] only: variance 0
    assert metrics.memory_stability(R) == pytest.approx((0.15**2 + 0.0) / 2)
    R[1, 1] = NAN  # concept 1 has no value left: left out (one concept), not a variance of 0
    assert metrics.memory_stability(R) == pytest.approx(0.15**2)
    assert metrics.summarize(R)["left_out"]["memory_stability"] == 1
    assert metrics.get_metric("memory_stability").higher_is_better is False


def test_intransigence_and_reference_forward_transfer():
    # intransigence: (1.0 - 0.9) + (0.9 - 0.8) + (0.9 - 0.95) over 3 concepts
    assert metrics.intransigence(RB, REF) == pytest.approx(0.15 / 3)
    # reference FWT: concepts 1, 2: (0.8 - 0.9) + (0.95 - 0.9) over 2
    assert metrics.reference_forward_transfer(RB, REF) == pytest.approx(-0.025)
    R = RB.copy()
    R[1, 1] = NAN  # the diagonal cell of concept 1: its term is left out of both
    assert metrics.intransigence(R, REF) == pytest.approx((0.1 - 0.05) / 2)
    assert metrics.reference_forward_transfer(R, REF) == pytest.approx(0.05)
    s = metrics.summarize(R, reference=REF)
    assert s["left_out"]["intransigence"] == 1 and s["left_out"]["reference_forward_transfer"] == 1
    # a missing reference value leaves its concept out too
    assert metrics.intransigence(RB, [NAN, 0.9, 0.9]) == pytest.approx((0.1 - 0.05) / 2)


def test_reference_metrics_are_absent_without_a_reference():
    s = metrics.summarize(RB)
    for name in ("intransigence", "reference_forward_transfer", "gem_forward_transfer"):
        assert name not in s and name not in s["left_out"]
    with_ref = metrics.summarize(RB, reference=REF, baseline=[0.5, 0.5, 0.5])
    assert with_ref["intransigence"] == pytest.approx(0.05)
    assert with_ref["gem_forward_transfer"] == pytest.approx(0.05)


def test_accuracy_curve_averages():
    # seen curve: 0.9, (0.7 + 0.8) / 2, (0.6 + 0.75 + 0.95) / 3; all curve: the row means
    seen = [0.9, 0.75, 2.3 / 3]
    assert metrics.accuracy_seen_average(RB) == pytest.approx(sum(seen) / 3)
    assert metrics.accuracy_all_average(RB) == pytest.approx((1.8 / 3 + 2.1 / 3 + 2.3 / 3) / 3)
    R = RB.copy()
    R[0, 0] = NAN  # step 0 has no seen value left: that step is left out of AUAC, not counted as 0
    assert metrics.accuracy_seen_average(R) == pytest.approx((0.75 + 2.3 / 3) / 2)
    assert metrics.accuracy_all_average(R) == pytest.approx((0.45 + 0.7 + 2.3 / 3) / 3)
    assert metrics.summarize(R)["left_out"]["accuracy_seen_average"] == 1


def test_per_concept_drop():
    np.testing.assert_allclose(metrics.per_concept_drop(RB), [0.3, 0.05, 0.0])
    R = RB.copy()
    R[2, 1] = NAN
    np.testing.assert_allclose(metrics.per_concept_drop(R), [0.3, NAN, 0.0])
    # never-learned concept (third column of a 2-step run)
    np.testing.assert_allclose(metrics.per_concept_drop(RB[:2]), [0.2, 0.0, NAN])
    assert metrics.summarize(RB)["per_concept_drop"] == pytest.approx([0.3, 0.05, 0.0])


def test_per_step_curves():
    np.testing.assert_allclose(
        metrics.continual_average_curve(RB), [0.9, 0.8, metrics.continual_average(RB)]
    )
    np.testing.assert_allclose(
        metrics.backward_transfer_curve(RB), [NAN, -0.2, metrics.backward_transfer(RB)]
    )
    # FWT after step 1: only R[0, 1]; after step 2: R[0, 1], R[0, 2], R[1, 2]
    np.testing.assert_allclose(metrics.forward_transfer_curve(RB), [NAN, 0.5, 0.5])
    R = RB.copy()
    R[0, 1] = NAN
    np.testing.assert_allclose(metrics.forward_transfer_curve(R), [NAN, NAN, 0.5])
    np.testing.assert_allclose(
        metrics.continual_average_curve(R), [0.9, 0.8, metrics.continual_average(R)]
    )
    # general case: steps A, B, A; test concepts A, B, C (C never learned)
    t = metrics.learned_at(["A", "B", "A"], ["A", "B", "C"])
    np.testing.assert_allclose(
        metrics.backward_transfer_curve(RB, t),
        [NAN, -0.2, ((-0.2) + (0.6 - 0.9) + (0.75 - 0.8)) / 3],
    )


def test_pyclad_code_backward_transfer():
    assert metrics.pyclad_code_backward_transfer([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 3
    assert metrics.backward_transfer([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 4
    assert metrics.pyclad_code_backward_transfer(
        [[0.8, 0, 0], [0.5, 1, 0], [0.4, 0.8, 0.9]]
    ) == pytest.approx(-0.2)
    # (0.7 - 0.9) + (0.6 - 0.7) + (0.75 - 0.8) over 3
    assert metrics.pyclad_code_backward_transfer(RB) == pytest.approx(-0.35 / 3)
    R = RB.copy()
    R[1, 0] = NAN  # both changes of concept 0 touch it: left out
    assert metrics.pyclad_code_backward_transfer(R) == pytest.approx(-0.05)
    assert metrics.summarize(R)["left_out"]["pyclad_code_backward_transfer"] == 2


def test_gem_forward_transfer():
    b = [0.5, 0.45, 0.5]
    # concept 1: R[0, 1] - 0.45 = 0.05; concept 2: R[1, 2] - 0.5 = 0.1
    assert metrics.gem_forward_transfer(RB, b) == pytest.approx(0.075)
    R = RB.copy()
    R[1, 2] = NAN
    assert metrics.gem_forward_transfer(R, b) == pytest.approx(0.05)
    # recurring concept: steps A, B, A, C; C learned at step 3 reads R[2, C]
    R4 = np.array([[0.9, 0.3, 0.2], [0.8, 0.9, 0.4], [0.95, 0.7, 0.6], [0.9, 0.6, 0.9]])
    t = metrics.learned_at(["A", "B", "A", "C"], ["A", "B", "C"])
    assert metrics.gem_forward_transfer(R4, [0.5, 0.5, 0.5], t) == pytest.approx(
        ((0.3 - 0.5) + (0.6 - 0.5)) / 2
    )
    with pytest.raises(CladValueError, match="baseline has 2 values"):
        metrics.gem_forward_transfer(RB, [0.5, 0.5])


def test_concept_names_that_never_match_warn_with_both_lists():
    with pytest.warns(
        metrics.ConceptNamesWarning, match=r"training \['a', 'b'\], test \['x', 'y'\]"
    ):
        assert metrics.check_concept_names(["a", "b"], ["x", "y"]) is False
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert metrics.check_concept_names(["a", "b"], ["b", "z"]) is True


def test_registry_declares_every_public_metric_once():
    names = metrics.scalar_names()
    for name in (
        "continual_average",
        "memory_stability",
        "intransigence",
        "pyclad_code_backward_transfer",
    ):
        assert name in names and metrics.SCALAR_METRICS[name] is getattr(metrics, name)
    lower = {n for n in names if not metrics.get_metric(n).higher_is_better}
    # intransigence against each reference kind is its own declaration (clad.metrics.reference_metrics)
    assert lower == {
        "forgetting",
        "memory_stability",
        "intransigence",
        "intransigence_joint",
        "intransigence_single_task",
    }
    assert metrics.scalar_names(headline=True) == [
        "continual_average",
        "backward_transfer",
        "forward_transfer",
    ]
    with pytest.raises(ValueError, match="did you mean"):
        metrics.get_metric("continual_averge")


def test_pyclad_code_bwt_is_two_over_n_times_gem_bwt_without_nan():
    # the step-to-step changes of a concept add up to its final value minus its first (docs/guides/metrics.md)
    rng = np.random.default_rng(3)
    for n in range(2, 7):
        R = rng.uniform(size=(n, n))
        assert metrics.pyclad_code_backward_transfer(R) == pytest.approx(
            2 / n * metrics.gem_backward_transfer(R)
        )


def test_run_experiment_warns_when_no_concept_name_matches():
    from sklearn.ensemble import IsolationForest

    from clad import ConceptDataset, ConceptIncremental, Naive, make_synthetic, run_experiment
    from clad.core.concepts import Concept

    ds = make_synthetic(n_concepts=2, n_features=2, n_train=40, n_test=40, random_state=0)
    renamed = ConceptDataset(
        ds.train, [Concept(f"test_{c.name}", c.X, c.y) for c in ds.test], name="renamed"
    )
    r = run_experiment(
        renamed, ConceptIncremental(), Naive(IsolationForest(n_estimators=5)), seed=0
    )
    # the warning is recorded in the run's record (and counted on the console), not shown
    assert any(
        w.startswith("ConceptNamesWarning: ")
        and "training ['C0', 'C1'], test ['test_C0', 'test_C1']" in w
        for w in r.warnings
    ), r.warnings
    assert math.isnan(r.metrics["roc_auc"]["continual_average"])
    # every scalar metric of the run records its left-out count
    assert set(r.metrics["roc_auc"]["left_out"]) == set(metrics.scalar_names(needs_only=()))


def test_the_store_keeps_every_left_out_count_and_the_per_concept_values(tmp_path):
    from clad.results.store import ResultStore

    R = RB.copy()
    R[2, 0] = NAN
    run = RunResult(
        "d",
        "s",
        "naive",
        "if",
        0,
        ("A", "B"),
        ("A", "B", "C"),
        R={"roc_auc": R[:2]},
        metrics={"roc_auc": metrics.summarize(R[:2])},
        run_id="abc",
    )
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.write(run)
        back = store.load_results()[0].metrics["roc_auc"]
    assert back["left_out"] == run.metrics["roc_auc"]["left_out"]
    assert len(back["left_out"]) == len(metrics.scalar_names(needs_only=()))
    np.testing.assert_allclose(back["per_concept_drop"], [0.2, 0.0, NAN])
