"""A spec checked completely before anything runs: values of every component, every data file, sizes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clad.engine.spec import parse_spec
from clad.errors import CladValueError, SpecError
from clad.validation import COUNT, Integral, Interval, StrOptions, check, problems

from tests.runner_helpers import spec_toml

ROOT = Path(__file__).resolve().parents[2]

BAD = spec_toml(
    name="bad",
    seeds=None,
    strategies=[{"name": "replay", "buffer_size": 0}],
    datasets=[{"name": "adbench", "file": "32_shuttle.npz", "data_dir": "nowhere"}],
    scenarios=[{"name": "concept_aware"}],
    detectors=[{"name": "iforest", "n_estimators": 0}, {"name": "knn", "n_neighbors": "twenty"}],
)


CLAD = [sys.executable, "-c", "import sys; from clad.cli import main; sys.exit(main())"]


def _env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CLAD_DATA"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # an empty default cache
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.slow
def test_dry_run_lists_every_bad_value_and_the_missing_file_and_creates_nothing(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(BAD)
    out = tmp_path / "results"
    proc = subprocess.run(
        [*CLAD, "run", str(spec), "--dry-run", "--out", str(out)],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr
    assert str(spec) in err and "4 problems" in err
    assert "detectors[0] (iforest): n_estimators=0; expected an int in the range [1, inf)" in err
    assert "strategies[0] (replay): buffer_size=0; expected an integer >= 1" in err
    assert "detectors[1] (knn): n_neighbors='twenty'; expected an int in the range [1, inf)" in err
    # the missing file: its name, where clad looked, the sha256 and the source address of its card
    assert "adbench-classical/32_shuttle.npz' not found" in err
    assert str(Path("nowhere") / "adbench-classical" / "32_shuttle.npz") in err
    assert "expected sha256 " in err and "https://github.com/Minqi824/ADBench" in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name != "cache"] == ["bad.toml"]


def test_values_of_every_kind_of_component_are_checked():
    raw = {
        "datasets": [{"name": "synthetic", "n_concepts": 0, "anomaly_fraction": 1.5}],
        "scenarios": [{"name": "concept_agnostic", "batch_size": 0}],
        "strategies": [{"name": "window", "window_size": True}, {"name": "ewc", "mode": "onlin"}],
        "detectors": [
            {"name": "lof", "n_neighbors": "twenty"},
            {"name": "ocsvm", "grid": {"nu": [0.5, 2.0]}},
            {"name": "pyod_iforest", "max_samples": -5},
        ],
    }
    with pytest.raises(SpecError) as info:
        parse_spec(raw)
    found = info.value.problems
    text = "\n".join(found)
    assert "synthetic): n_concepts=0; expected an integer >= 1" in text
    assert "anomaly_fraction=1.5; expected a number in (0.0, 1.0)" in text
    assert "concept_agnostic: batch_size=0; expected an integer >= 1" in text
    assert "window_size=True; expected an integer >= 1" in text
    assert "mode='onlin' (did you mean 'online'?); allowed: 'separate', 'online'" in text
    assert "(lof): n_neighbors='twenty'" in text
    assert "(ocsvm): nu=2.0" in text and "(ocsvm): nu=0.5" not in text  # one grid value is bad
    assert (
        "(pyod_iforest): max_samples=-5" in text
    )  # PyOD checked through scikit-learn's IsolationForest


def test_a_good_spec_still_passes():
    spec = parse_spec(
        {
            "datasets": [{"name": "synthetic", "n_concepts": 2}],
            "scenarios": ["concept_aware"],
            "strategies": [{"name": "replay", "buffer_size": 10}],
            "detectors": [
                {"name": "knn", "n_neighbors": 5},
                {"name": "iforest", "n_estimators": 5},
            ],
        }
    )
    assert len(spec) == 2


def test_the_vocabulary_refuses_booleans_as_counts_and_lists_every_failure():
    C = {
        "k": [COUNT],
        "m": [StrOptions(("a", "b"))],
        "x": [None, Interval(Integral, 0, 5, closed="both")],
    }
    assert problems("thing", {"k": 3, "m": "a", "x": None}, C) == []
    assert len(problems("thing", {"k": True, "m": "c", "x": 6}, C)) == 3
    with pytest.raises(
        CladValueError, match=r"thing: x=6; expected None or an integer in \[0, 5\]"
    ):
        check("thing", {"x": 6}, C)


def test_loaders_check_their_declared_parameters_when_called():
    from clad.datasets import load_adbench, make_synthetic

    with pytest.raises(CladValueError, match="synthetic: n_test=1; expected an integer >= 2"):
        make_synthetic(n_test=1)
    # the declaration is checked before the loader looks for its file
    with pytest.raises(
        CladValueError,
        match="adbench: recipe='kmeans'; allowed: 'chunks', 'cluster_closest', 'cluster_clustered'",
    ):
        load_adbench(file="no_such.npz", recipe="kmeans")


# -- bounded sizes --------------------------------------------------------------------------------

SMALL = {
    "datasets": ["synthetic"],
    "scenarios": ["concept_aware"],
    "strategies": ["naive"],
    "detectors": ["iforest"],
}


def test_a_billion_seeds_are_counted_not_built_and_refused_without_max_runs():
    with pytest.raises(
        SpecError,
        match=r"1,000,000,000 runs .* more than max_runs = 100,000; .*max_runs = 1000000000",
    ):
        parse_spec({**SMALL, "seeds": 10**9})
    spec = parse_spec({**SMALL, "seeds": 10**9, "max_runs": 10**9})
    assert isinstance(spec.configs.seeds, range)  # never expanded into a list
    assert len(spec) == 10**9 and spec.configs[-1].seed == 10**9 - 1 and spec.configs[5].seed == 5


def test_the_lazy_grid_equals_the_product_in_order():
    import itertools

    raw = {
        "datasets": ["synthetic", {"name": "synthetic", "n_concepts": 2}],
        "scenarios": ["concept_aware"],
        "strategies": ["naive", "cumulative"],
        "detectors": ["iforest", "lof"],
        "seeds": [3, 1, 2],
    }
    spec = parse_spec(raw)
    got = [
        (c.dataset.display, c.strategy.display, c.detector.display, c.seed) for c in spec.configs
    ]
    want = list(
        itertools.product(
            [c.display for c in spec.configs.datasets],
            ["naive", "cumulative"],
            ["iforest", "lof"],
            [3, 1, 2],
        )
    )
    assert got == want and len(spec) == 24
    assert (
        spec.configs[-1] == list(spec.configs)[-1] and spec.configs[2:4] == list(spec.configs)[2:4]
    )


@pytest.mark.parametrize("bad", [0, True, 2.5, "10"])
def test_max_runs_must_be_a_positive_integer(bad):
    with pytest.raises(SpecError, match="max_runs: "):
        parse_spec({**SMALL, "max_runs": bad})


@pytest.mark.parametrize("cls,key", [("Replay", "buffer_size"), ("Window", "window_size")])
def test_huge_buffers_hold_only_the_rows_they_were_given(cls, key):
    import numpy as np
    from sklearn.ensemble import IsolationForest

    import clad.strategies as S

    X = np.random.default_rng(0).normal(size=(300, 4))
    s = getattr(S, cls)(
        IsolationForest(n_estimators=5, random_state=0), **{key: 10**9}, random_state=0
    )
    s.learn(X[:100]).learn(X[100:])
    assert s.memory_rows() == 300
    assert (
        s.buffer_._data.nbytes <= 2 * 300 * 4 * 8
    )  # grows with the data (doubling), not 10**9 rows


def test_a_growing_window_keeps_the_last_rows():
    import numpy as np

    from clad.strategies.memory import RingBuffer

    X = np.arange(200.0).reshape(100, 2)
    w = RingBuffer(25)
    for k in range(0, 100, 9):
        w.add(X[k : k + 9])
        end = min(k + 9, 100)
        assert np.array_equal(w.view(), X[max(0, end - 25) : end])


def test_the_private_scikit_learn_api_clad_builds_on():
    """clad.validation builds on sklearn.utils._param_validation (private): what it uses is pinned here."""
    from numbers import Integral, Real

    from sklearn.base import BaseEstimator
    from sklearn.utils import _param_validation as pv

    from clad.strategies import Replay
    from clad.validation import COUNT, Interval, ListOf, StrOptions, Validated, problems

    base = pv.Interval(Real, 0.0, 1.0, closed="neither")
    assert (base.type, base.left, base.right, base.closed) == (Real, 0.0, 1.0, "neither")
    assert base.is_satisfied_by(0.5) and not base.is_satisfied_by(1.0)
    assert pv.StrOptions({"a", "b"}).is_satisfied_by("a") and not pv.StrOptions(
        {"a"}
    ).is_satisfied_by("c")
    assert pv.Options(Real, {0.5}).is_satisfied_by(0.5)
    for spec, good, bad in (
        (None, None, 0),
        (int, 3, "3"),
        ("boolean", True, 1.5),
        ("array-like", [1], None),
    ):
        c = pv.make_constraint(spec)
        assert c.is_satisfied_by(good) and not c.is_satisfied_by(bad), spec
        assert isinstance(getattr(c, "hidden", False), bool)
    assert pv.make_constraint(COUNT) is COUNT
    # clad's own layer over it
    assert not Interval(Integral, 1, None, closed="left").is_satisfied_by(True)
    assert problems("X", {"k": [0, 2]}, {"k": [ListOf(COUNT)]}) == [
        "X: k=[0, 2]; expected a non-empty list of integers >= 1"
    ]
    assert str(StrOptions(("b", "a"))) == "one of 'b', 'a'"
    # Validated's method replaces scikit-learn's in clad's estimators
    assert Replay._validate_params is Validated._validate_params
    assert Validated._validate_params is not BaseEstimator._validate_params
