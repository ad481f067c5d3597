"""Every size is a product known before anything is built: parameter grids, tuning candidates,
anytime evaluations, generated data and time limits are refused at spec time above a stated
limit, and the message names the option that lifts it."""

import time

import pytest

from clad.engine.sections import MAX_RUNS
from clad.engine.spec import parse_spec
from clad.errors import CladValueError, SpecError

SMALL = {
    "datasets": [
        {"name": "synthetic", "n_concepts": 3, "n_features": 2, "n_train": 30, "n_test": 20}
    ],
    "scenarios": ["concept_incremental"],
    "strategies": ["naive"],
    "detectors": ["iforest"],
}


def _tuned(n_est: int, n_samp: int, **top) -> dict:
    return {
        **SMALL,
        **top,
        "tuning": {
            "mode": "first_concepts",
            "k": 1,
            "detectors": {
                "iforest": {
                    "n_estimators": list(range(1, n_est + 1)),
                    "max_samples": list(range(2, n_samp + 2)),
                }
            },
        },
    }


def test_a_500_by_300_tuning_grid_is_refused_from_the_product_of_its_lengths():
    start = time.perf_counter()
    with pytest.raises(
        SpecError,
        match=r"tuning.detectors.iforest: 150,000 candidates \(500 n_estimators x 300 "
        r"max_samples\).*more than max_runs = 100,000; .*set max_runs = 150000",
    ):
        parse_spec(_tuned(500, 300))
    print(f"500 x 300 tuning grid refused in {time.perf_counter() - start:.2f} s")


def test_tuning_runs_are_counted_arithmetically_and_the_count_is_the_number_built():
    spec = parse_spec({**_tuned(3, 2), "seeds": 2, "strategies": ["naive", "cumulative"]})
    assert spec.tuning.count_upper(spec.configs) == len(spec.tuning_configs) == 3 * 2 * 2 * 2
    # over the limit with the evaluation runs: refused before any tuning run is listed
    with pytest.raises(
        SpecError, match=r"4 evaluation runs and 24 tuning runs, more than max_runs = 20"
    ):
        parse_spec(
            {**_tuned(3, 2), "seeds": 2, "strategies": ["naive", "cumulative"], "max_runs": 20}
        )


def test_a_detector_grid_larger_than_max_runs_is_refused_before_its_combinations_are_built():
    raw = {
        **SMALL,
        "detectors": [
            {
                "name": "iforest",
                "grid": {"n_estimators": list(range(1, 401)), "max_samples": list(range(2, 302))},
            }
        ],
    }
    with pytest.raises(
        SpecError,
        match=r"detectors\[0\].grid: 120,000 combinations \(400 n_estimators x 300 "
        r"max_samples\), more than max_runs = 100,000; .*max_runs = 120000",
    ):
        parse_spec(raw)


def test_a_large_grid_has_each_value_checked_not_each_combination():
    from clad.engine.sections import CHECK_EVERY_COMBINATION

    raw = {
        **SMALL,
        "max_runs": MAX_RUNS,
        "detectors": [
            {
                "name": "iforest",
                "grid": {"n_estimators": [0, *range(1, 20)], "max_samples": [*range(2, 21), 0]},
            }
        ],
    }
    assert 20 * 20 > CHECK_EVERY_COMBINATION
    with pytest.raises(SpecError) as info:
        parse_spec(raw)
    assert "n_estimators=0" in str(info.value) and "max_samples=0" in str(info.value)
    assert (
        len(
            parse_spec(
                {
                    **raw,
                    "detectors": [
                        {
                            "name": "iforest",
                            "grid": {
                                "n_estimators": list(range(1, 21)),
                                "max_samples": list(range(2, 22)),
                            },
                        }
                    ],
                }
            )
        )
        == 400
    )


def test_anytime_evaluations_above_max_evaluations_are_refused_and_the_key_lifts_it():
    raw = {
        **SMALL,
        "scenarios": [
            {"name": "concept_agnostic", "batch_size": 10, "anytime_per_concept": 100000}
        ],
    }
    with pytest.raises(
        SpecError,
        match=r"anytime_per_concept: 100,000 evaluations per training concept x 3 "
        r"concepts = 300,000 .*max_evaluations = 10,000; .*max_evaluations = 300000",
    ):
        parse_spec(raw)
    assert len(parse_spec({**raw, "max_evaluations": 300000})) == 1


def test_anytime_evaluations_beyond_a_concept_rows_fail_the_run_clearly():
    from clad import ConceptAgnostic, run_experiment
    from clad.datasets import make_synthetic
    from clad.strategies import Naive
    from sklearn.ensemble import IsolationForest

    ds = make_synthetic(n_concepts=2, n_features=2, n_train=30, n_test=20)
    with pytest.raises(
        CladValueError,
        match=r"anytime_per_concept=31 is more than the 30 rows of training "
        r"concept 0.*anytime_per_concept <= 30",
    ):
        run_experiment(
            ds,
            ConceptAgnostic(batch_size=10, anytime_per_concept=31),
            Naive(IsolationForest(n_estimators=5)),
        )


def test_generated_data_above_max_data_gb_is_refused_before_it_is_built():
    raw = {**SMALL, "datasets": [{"name": "synthetic", "n_features": 100_000_000}]}
    with pytest.raises(
        SpecError,
        match=r"would take 2,880.0 GB in memory \(n_concepts x \(n_train \+ n_test\) x "
        r"n_features x 8 bytes\), more than max_data_gb = 4; .*max_data_gb = 2880",
    ):
        parse_spec(raw)
    windowed = {
        **SMALL,
        "datasets": [
            {
                "name": "windowed",
                "dataset": "synthetic",
                "window": 1000,
                "params": {"n_features": 200},
            }
        ],
    }
    with pytest.raises(
        SpecError, match=r"datasets \(windowed\).*inner data set's bytes x window / stride"
    ):
        parse_spec(windowed)
    assert len(parse_spec({**windowed, "max_data_gb": 100})) == 1


@pytest.mark.parametrize("timeout", [1e12, float("inf"), 30 * 24 * 3600 + 1])
def test_a_timeout_beyond_30_days_is_a_spec_error_not_an_overflow(timeout):
    with pytest.raises(
        SpecError, match=r"timeout: .*at most 2,592,000 \(30 days\); leave timeout out for no limit"
    ):
        parse_spec({**SMALL, "timeout": timeout})
    from clad.engine.executors import check_execution

    with pytest.raises(CladValueError, match="up to 2,592,000"):
        check_execution(1, 1, timeout)
    assert parse_spec({**SMALL, "timeout": 30 * 24 * 3600}).timeout == 2592000.0


def test_run_experiment_stops_a_hanging_score_at_its_timeout():
    import time as _time

    from clad import ConceptIncremental, run_experiment
    from clad.datasets import make_synthetic
    from clad.errors import RunTimeoutError
    from clad.strategies import Naive

    from plugins import DistanceToMean

    class Hangs(DistanceToMean):
        def score(self, X):
            _time.sleep(30)
            return super().score(X)

    ds = make_synthetic(n_concepts=2, n_features=2, n_train=20, n_test=10)
    start = _time.perf_counter()
    with pytest.raises(RunTimeoutError, match=r"timeout: the run took longer than 0.3 s"):
        run_experiment(ds, ConceptIncremental(), Naive(Hangs()), timeout=0.3)
    assert _time.perf_counter() - start < 10
    with pytest.raises(CladValueError, match="up to 2,592,000"):
        run_experiment(ds, ConceptIncremental(), Naive(Hangs()), timeout=1e12)
