"""The strategy base class does the common work: the learn counter, the default score and
memory_rows, supported_scenarios from the requires_* flags, read-only input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import IsolationForest

from clad.errors import CladValueError, DetectorError
from clad.strategies import STRATEGIES, Naive, Strategy
from clad.testing import check_strategy

from plugins import DistanceToMean


class Latest(Strategy):
    """The smallest strategy: a fresh detector on the newest data, scored by the base class."""

    def learn(self, X, concept_id=None):
        self.detector_ = self._fit_new(X)
        return self


class LatestTwice(Latest):
    """Calls the parent's learn: still one counted call per learn."""

    def learn(self, X, concept_id=None):
        super().learn(X, concept_id)
        return super().learn(X, concept_id)


class NeedsId(Latest):
    requires_concept_id = True


class NeedsBoundaries(Latest):
    requires_boundaries = True


class Zeroing(DistanceToMean):
    """Breaks the rules: writes into the rows it is given."""

    def fit(self, X):
        super().fit(X)
        X *= 0
        return self


X = np.random.default_rng(0).normal(size=(40, 3))


def test_the_base_is_abstract_in_learn():
    with pytest.raises(TypeError, match="abstract"):
        Strategy(DistanceToMean())

    class NoLearn(Strategy):
        pass

    with pytest.raises(TypeError, match="learn"):
        NoLearn(DistanceToMean())


@pytest.mark.slow
def test_a_minimal_subclass_gets_counter_score_memory_rows_and_passes_the_checks():
    s = Latest(DistanceToMean())
    with pytest.raises(CladValueError, match=r"Latest: score\(\) called before any learn\(\)"):
        s.score(X)
    s.learn(X).learn(X + 1)
    assert s.n_learn_calls_ == 2 and s.memory_rows() == 0
    scored = s.score(X)
    assert (
        np.array_equal(scored.scores, s.detector_.score(X))
        and scored.threshold == s.detector_.threshold_
    )
    assert check_strategy(Latest(IsolationForest(n_estimators=20)), raise_on_failure=False).ok
    c = clone(s)
    assert set(c.get_params()) == {"detector", "random_state"} and not hasattr(c, "n_learn_calls_")


def test_a_learn_calling_super_is_counted_once():
    assert LatestTwice(DistanceToMean()).learn(X).learn(X).n_learn_calls_ == 2


@pytest.mark.slow
@pytest.mark.parametrize("name", STRATEGIES.names())
def test_every_registered_strategy_counts_its_learn_calls(name):
    if name in (
        "ewc",
        "lwf",
        "fine_tune",
        "incremental",
        "agem",
        "der",
    ):  # need a trainable network
        pytest.importorskip("torch")
        from clad.detectors.torch_ae import AutoEncoder

        det = AutoEncoder(hidden_sizes=(3,), epochs=1)
    else:
        det = IsolationForest(n_estimators=5, random_state=0)
    s = STRATEGIES.build(name, {"detector": det})
    for k in range(3):
        s.learn(X + k, concept_id=f"c{k}")
    assert s.n_learn_calls_ == 3


def test_supported_scenarios_follow_the_flags():
    assert Latest.supported_scenarios == (
        "concept_agnostic",
        "concept_aware",
        "concept_incremental",
    )
    assert NeedsBoundaries.supported_scenarios == ("concept_aware", "concept_incremental")
    assert NeedsId.supported_scenarios == ("concept_aware",)
    assert NeedsId(DistanceToMean()).supported_scenarios == ("concept_aware",)  # on instances too


def test_a_detector_writing_into_its_input_is_named_with_the_method():
    mine = X.copy()
    with pytest.raises(
        DetectorError, match=r"detector Zeroing: fit\(\) changes its input X in place"
    ):
        Naive(Zeroing()).learn(mine)
    assert (
        np.array_equal(mine, X) and mine.flags.writeable
    )  # the caller's array is unchanged, still its own
