"""Adversarial inputs: nothing runs that was not asked for, seeds that are not seeds, data errors
that point at the file, its row and its column."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from clad.engine.spec import parse_spec
from clad.errors import CladError, SpecError

ROOT = Path(__file__).resolve().parents[2]
CLAD = [sys.executable, "-c", "import sys; from clad.cli import main; sys.exit(main())"]


def _run(args, cwd, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*CLAD, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


# -- nothing runs that was not asked for ------------------------------------------------------------


@pytest.mark.slow
def test_dry_run_of_a_spec_naming_os_system_as_a_scenario_creates_nothing(tmp_path):
    (tmp_path / "evil.toml").write_text(
        'datasets = ["synthetic"]\nstrategies = ["naive"]\ndetectors = ["iforest"]\n'
        '[[scenarios]]\nname = "os:system"\ncommand = "touch MARK"\n'
    )
    proc = _run(["run", "evil.toml", "--dry-run"], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert (
        "scenario 'os:system' is not a scenario" in proc.stderr
        and "nothing was called" in proc.stderr
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.toml"]


@pytest.mark.parametrize(
    "section,path",
    [
        ("scenarios", "threading:Thread"),  # a stdlib class with a run() method
        ("strategies", "os:system"),
        ("detectors", "subprocess:Popen"),
        ("datasets", "shutil:rmtree"),  # a Python function, but of the standard library
        ("detectors", "clad.strategies:Replay"),  # a class of another kind (no fit)
        ("scenarios", "clad.scenarios.base:Scenario.check_strategy"),  # a function, not a class
    ],
)
def test_an_import_path_must_name_an_object_of_its_kind(section, path):
    raw = {
        "datasets": ["synthetic"],
        "scenarios": ["concept_aware"],
        "strategies": ["naive"],
        "detectors": ["iforest"],
    }
    raw[section] = [{"name": path}]
    with pytest.raises(SpecError, match=f"{path}' is not a "):
        parse_spec(raw)


@pytest.mark.slow
def test_plugins_beside_the_spec_are_found(tmp_path):
    (tmp_path / "my_plugin.py").write_text(
        "from sklearn.ensemble import IsolationForest\n\nclass MyForest(IsolationForest):\n    pass\n"
    )
    (tmp_path / "s.toml").write_text(
        'datasets = ["synthetic"]\nscenarios = ["concept_aware"]\n'
        'strategies = ["naive"]\ndetectors = ["my_plugin:MyForest"]\n'
    )
    proc = _run(["run", str(tmp_path / "s.toml"), "--dry-run"], ROOT)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_a_module_in_the_current_folder_never_shadows_an_installed_package(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'scenarios = ["concept_aware"]\nstrategies = ["naive"]\n'
        '[[datasets]]\nname = "synthetic"\nn_concepts = 2\nn_train = 40\nn_test = 20\n'
        '[[detectors]]\nname = "iforest"\nn_estimators = 5\n'
    )
    folder = tmp_path / "results"
    proc = _run(["run", str(spec), "--out", str(folder), "--quiet"], ROOT)
    assert proc.returncode == 0, proc.stderr
    work = tmp_path / "work"
    work.mkdir()
    (work / "scipy.py").write_text(
        "open('SHADOWED', 'w').close()\nraise SystemExit(99)\n"
    )  # the report's statistics
    proc = _run(["report", str(folder), "--out", str(tmp_path / "rep")], work)
    assert not (work / "SHADOWED").exists(), proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert any((tmp_path / "rep" / "figures").glob("heatmap__*.js"))  # its figures written


# -- seeds that are not seeds ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3", 2**64])
def test_run_experiment_refuses_a_seed_that_is_not_a_non_negative_integer(seed):
    from sklearn.ensemble import IsolationForest

    from clad.core.experiment import run_experiment
    from clad.datasets import make_synthetic
    from clad.scenarios import ConceptAware
    from clad.strategies import Naive

    ds = make_synthetic(n_concepts=2, n_features=2, n_train=20, n_test=10)
    with pytest.raises(CladError, match=rf"seed={seed!r}; expected a non-negative integer"):
        run_experiment(ds, ConceptAware(), Naive(IsolationForest(n_estimators=5)), seed=seed)


@pytest.mark.parametrize("seeds", [[1.5], [-1], [0, 0], 0, 1.5, "3", [True]])
def test_spec_seeds_that_are_not_seeds_name_the_key(seeds):
    raw = {
        "datasets": ["synthetic"],
        "scenarios": ["concept_aware"],
        "strategies": ["naive"],
        "detectors": ["iforest"],
        "seeds": seeds,
    }
    with pytest.raises(
        SpecError,
        match=r"seeds: .*expected a count >= 1 or a list of distinct non-negative integers",
    ):
        parse_spec(raw)


# -- errors that point at the data -----------------------------------------------------------------


def test_a_csv_row_with_an_extra_field_shows_the_parsers_whole_message(tmp_path):
    from clad.datasets import load_table

    f = tmp_path / "extra.csv"
    f.write_text("concept,label,a,b\nA,0,1,2\nA,0,1,2,3\nB,1,2,3\n")
    with pytest.raises(CladError) as info:
        load_table(str(f))
    msg = str(info.value)
    assert str(f) in msg and "Expected 4 fields in line 3, saw 5" in msg and "\n" not in msg


def test_a_missing_csv_value_names_the_file_line_and_column(tmp_path):
    from clad.datasets import load_table

    f = tmp_path / "gap.csv"
    f.write_text(
        "concept,label,a,b\n"
        + "".join(f"{c},{int(i % 5 == 0)},{i},{i}\n" for c in "AB" for i in range(10)).replace(
            "A,0,3,3\n", "A,0,3,\n"
        )
    )
    with pytest.raises(CladError, match=r"column 'b' has nan at line 5, data row 4 of '.*gap.csv'"):
        load_table(str(f))


def test_a_nan_in_an_adbench_file_is_reported_by_clad_before_kmeans(tmp_path):
    from clad.datasets import load_adbench

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[137, 2] = np.nan
    y = (rng.random(200) < 0.1).astype(np.int64)
    folder = tmp_path / "adbench-classical"
    folder.mkdir()
    np.savez(folder / "mine.npz", X=X, y=y)
    with pytest.raises(CladError) as info:
        load_adbench(file="adbench-classical/mine.npz", data_dir=str(tmp_path), n_concepts=2)
    msg = str(info.value)
    assert "mine.npz" in msg and "row 137" in msg and "column 2" in msg
    assert "KMeans" not in msg and "Input X contains NaN" not in msg
