"""Every number beside its own chance level: a detector without scores is drawn at its chance
level, never below it, for F1 and every oracle metric; `clad validate --metric M` judges each
concept against M's own chance level, so a scoreless detector never passes feasibility."""

import numpy as np
import pytest

from clad.core.scored import Scored, flags
from clad.metrics.base import chance_level, get_base_metric
from clad.engine.benchmark import run_spec
from clad.metrics import ranges
from clad.protocol.validity import check_matrix, on_scale

from tests.runner_helpers import small_spec, synthetic

RANGE_Y = np.array([0] * 20 + [1] * 5 + [0] * 30 + [1] * 3 + [0] * 22)


@pytest.mark.parametrize(
    "name",
    [
        "f1",
        "pa_f1",
        "event_f1",
        "range_f1",
        "affiliation_f1",
        "pa_f1_oracle",
        "event_f1_oracle",
        "range_f1_oracle",
        "affiliation_f1_oracle",
    ],
)
def test_constant_scores_get_the_chance_level_not_less(name):
    y = RANGE_Y
    scored = Scored(np.full(y.size, 0.3), 0.3)  # the threshold flags nothing
    decl = get_base_metric(name)  # what the evaluator gives it: the scores, or the rows flagged
    value = decl(y, scored.scores if decl.input == "scores" else flags(scored))
    assert value == pytest.approx(chance_level(name, y)) and chance_level(name, y) > 0


def test_the_oracle_of_constant_scores_is_its_chance_level():
    assert ranges.oracle("pa_f1", RANGE_Y, np.zeros(RANGE_Y.size)) == ranges.chance_level(
        "pa_f1_oracle", RANGE_Y
    )


def test_a_constant_score_detectors_recorded_f1_equals_its_recorded_chance(tmp_path):
    done = run_spec(
        small_spec(
            base_metrics=["roc_auc", "f1"],
            detectors=["reliability_plugins:ConstantDetector"],
            datasets=[synthetic(n_concepts=3)],
        ),
        tmp_path / "o",
    )
    (run,) = done.runs
    f1 = np.asarray(run.R["f1"])
    chance = np.asarray(run.chance["f1"], dtype=float)
    assert np.allclose(f1, chance[None, :]) and (chance > 0).all()


def test_validate_judges_a_metric_against_its_own_chance_level():
    # VUS-PR-like: chance 0.9 on every concept; a scoreless detector scores its chance everywhere
    M = np.full((3, 3), 0.9)
    chance = (0.9, 0.9, 0.9)
    plain = check_matrix(
        M, ("a", "b", "c"), naive_bwt=-0.05
    )  # ROC-AUC's thresholds: 0.9 >= 0.7 passes
    assert plain[0].verdict == "PASS"
    judged = check_matrix(M, ("a", "b", "c"), naive_bwt=-0.05, chance=chance)
    assert judged[0].verdict == "FAIL" and "chance level 0.900" in judged[0].summary
    assert float(on_scale(0.7, 0.5)) == 0.7  # ROC-AUC itself: unchanged
    # a detector well above each concept's chance passes
    good = check_matrix(
        np.array([[0.97, 0.9, 0.9], [0.9, 0.98, 0.9], [0.9, 0.9, 0.97]]),
        ("a", "b", "c"),
        naive_bwt=-0.05,
        chance=chance,
    )
    assert good[0].verdict == "PASS"


def test_validate_spec_carries_each_concepts_chance_level():
    from clad.engine.spec import parse_spec
    from clad.engine.validate import validate_spec

    spec = parse_spec(
        small_spec(
            datasets=[synthetic(n_concepts=3)], detectors=["reliability_plugins:ConstantDetector"]
        )
    )
    (report,) = validate_spec(spec, "f1")
    assert report.matrix.chance is not None and len(report.matrix.chance) == 3
    feasible = report.checks[0]
    assert feasible.verdict == "FAIL" and "chance level" in feasible.summary
