"""Everything a spec names is checked at spec time, by the one check `clad run --dry-run` and
`clad run` share: values that only one component validated at run time, strategy x detector
pairs, paths that must stay inside their data folder, import paths of the kind they must name."""

import pytest

from clad.cli import main
from clad.engine.spec import parse_spec
from clad.errors import CladValueError, SpecError
from tests.runner_helpers import small_spec, synthetic, write_spec
from tests.data_helpers import SHARED

BASE = small_spec(
    datasets=[synthetic(n_concepts=3, n_features=2, n_train=30, n_test=20)],
    scenarios=["concept_agnostic"],
    detectors=["iforest"],
)

CASES = {
    "telemanom window 0": (
        {"datasets": [{"name": "telemanom", "window": 0}]},
        r"\(telemanom\): window=0; expected",
    ),
    "telemanom stride 0": (
        {"datasets": [{"name": "telemanom", "stride": 0}]},
        r"\(telemanom\): stride=0; expected",
    ),
    "telemanom window_label": (
        {"datasets": [{"name": "telemanom", "window_label": "first"}]},
        r"window_label='first'; allowed: 'any', 'last'",
    ),
    "telemanom path": (
        {"datasets": [{"name": "telemanom", "path": "../../../../etc"}]},
        r"'../../../../etc/labeled_anomalies.csv' climbs out of its data directory",
    ),
    "half_space_trees n_trees 0": (
        {"detectors": [{"name": "half_space_trees", "n_trees": 0}]},
        r"half_space_trees: n_trees=0; expected an integer >= 1",
    ),
    "drift misspelt": (
        {"strategies": [{"name": "drift_experts", "drift": "adwinn"}]},
        r"drift='adwinn' \(did you mean 'adwin'\?\); allowed: 'adwin', 'page_hinkley'",
    ),
    "incremental with iforest": (
        {"strategies": ["incremental"]},
        r"strategy 'incremental' cannot train detector 'iforest': .*cannot learn incrementally",
    ),
    "fine_tune with iforest": (
        {"strategies": ["fine_tune"]},
        r"strategy 'fine_tune' cannot train detector 'iforest': .*partial_fit",
    ),
    "orders path": (
        {"orders": ["../../x"]},
        r"orders: '../../x' is not a concept order of dataset 'synthetic'; "
        r"allowed: 'given'",
    ),
    "orders misspelt": (
        {"orders": ["given", "randon"]},
        r"'randon' is not a concept order .*did you mean 'random'",
    ),
    "table /etc/passwd": (
        {"datasets": [{"name": "table", "file": "/etc/passwd"}]},
        r"\(table\): data file '/etc/passwd' lies outside every data directory",
    ),
    "table climbing": (
        {"datasets": [{"name": "table", "file": "../../etc/passwd"}]},
        r"climbs out of its data directory",
    ),
    "windowed builtins:eval": (
        {"datasets": [{"name": "windowed", "dataset": "builtins:eval"}]},
        r"\(windowed\).dataset: dataset 'builtins:eval' is not a dataset: .*standard library; "
        r"nothing was called",
    ),
    "windowed os:system": (
        {"datasets": [{"name": "windowed", "dataset": "os:system"}]},
        r"dataset 'os:system' is not a dataset",
    ),
    "windowed window 0": (
        {"datasets": [{"name": "windowed", "window": 0}]},
        r"\(windowed\): window=0",
    ),
    "windowed inner values": (
        {"datasets": [{"name": "windowed", "params": {"n_concepts": 0}}]},
        r"\(windowed\) > synthetic: n_concepts=0",
    ),
    "adbench outside": (
        {"datasets": [{"name": "adbench", "file": "/etc/hosts"}]},
        r"lies outside every data directory",
    ),
    "classifier as detector": (
        {"detectors": ["sklearn.ensemble:RandomForestClassifier"]},
        r"'sklearn.ensemble:RandomForestClassifier' is not a detector: .*a classifier",
    ),
    "regressor as detector": (
        {"detectors": ["sklearn.linear_model:LinearRegression"]},
        r"a regressor",
    ),
    "iforest max_features 0 (checked by scikit-learn only at fit)": (
        {"detectors": [{"name": "pyod_iforest", "max_features": 0}]},
        r"\(pyod_iforest\): max_features=0; expected an integer >= 1 or a number in \(0, 1\]",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_spec_value_that_used_to_fail_at_run_time_is_refused_at_spec_time(case):
    change, pattern = CASES[case]
    with pytest.raises(SpecError, match=pattern):
        parse_spec({**BASE, **change})


def test_compatible_pairs_and_real_orders_still_pass():
    assert (
        len(parse_spec({**BASE, "strategies": ["incremental"], "detectors": ["half_space_trees"]}))
        == 1
    )
    assert len(parse_spec({**BASE, "orders": ["given", "random:7"]})) == 2


def test_a_strategy_says_at_learn_what_the_spec_check_says():
    import numpy as np
    from sklearn.ensemble import IsolationForest

    from clad.strategies import Naive

    with pytest.raises(CladValueError, match="partial_fit"):
        Naive(IsolationForest(), warm_start=True).learn(np.zeros((5, 2)))


@pytest.mark.skipif(
    not (SHARED / "adbench-classical" / "32_shuttle.npz").is_file(), reason="needs the shared data"
)
def test_pyclad_without_allow_pickle_and_too_many_adbench_concepts_are_refused_at_spec_time():
    with pytest.raises(
        SpecError, match=r"\(pyclad\): allow_pickle=False; a pyCLAD concept file is a pickled"
    ):
        parse_spec({**BASE, "datasets": [{"name": "pyclad", "data_dir": str(SHARED)}]})
    with pytest.raises(
        SpecError, match=r"n_concepts=5000; .* 3,511 anomalies, enough for at most 3,511 concepts"
    ):
        parse_spec(
            {**BASE, "datasets": [{"name": "adbench", "n_concepts": 5000, "data_dir": str(SHARED)}]}
        )


def test_dry_run_and_run_share_the_check(tmp_path, capsys):
    spec = write_spec(tmp_path, **{**BASE, "strategies": ["incremental"]})
    assert main(["run", str(spec), "--dry-run"]) == 2
    dry = capsys.readouterr().err
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == dry and "cannot train detector 'iforest'" in dry
    assert not (tmp_path / "out").exists()


def test_a_detector_returning_numeric_strings_fails_its_run_as_clad_check_says():
    """The run-time contract is as strict as `clad check`: numeric strings are not scores."""
    import numpy as np

    from clad import ConceptIncremental, run_experiment
    from clad.datasets import make_synthetic
    from clad.errors import DetectorError
    from clad.strategies import Naive
    from clad.testing import check_detector

    from plugins import DistanceToMean

    class Texty(DistanceToMean):
        def score(self, X):
            return np.array([str(v) for v in super().score(X)])

    class TextyList(DistanceToMean):
        def score(self, X):
            return [str(v) for v in super().score(X)]

    ds = make_synthetic(n_concepts=2, n_features=2, n_train=20, n_test=10)
    for det in (Texty(), TextyList()):
        with pytest.raises(
            DetectorError, match=r"score\(\) returned text .*numeric strings are refused"
        ):
            run_experiment(ds, ConceptIncremental(), Naive(det))
        assert not check_detector(det, raise_on_failure=False).ok
