"""Nothing silent: a strategy plug-in's scores are checked as a detector's are, and `clad verify`
refuses absurd tolerances and empty records and says how many values it compared."""

import json

import numpy as np
import pytest

from clad.cli import main
from clad.core.scored import Scored, check_scored
from clad.engine.benchmark import run_spec
from clad.engine.verify import reference_path
from clad.errors import DetectorError

from tests.runner_helpers import edit_reference, small_spec, spec_toml, synthetic


@pytest.mark.parametrize(
    "lie,words",
    [
        ("nan", "3 non-finite value"),
        ("short", "returned (3,) scores for the 20"),
        ("nan_threshold", "threshold nan"),
        ("text", "dtype <U1"),
    ],
)
def test_a_strategy_plugins_scores_are_checked_like_a_detectors(tmp_path, lie, words):
    spec = small_spec(
        strategies=[{"name": "reliability_plugins:LyingStrategy", "lie": lie}],
        datasets=[synthetic(n_test=20, n_train=30)],
    )
    if lie == "nan":
        spec["datasets"] = [synthetic(n_test=3, n_train=30)]
        words = "3 non-finite value(s) (NaN or infinity) among 3 scores of test concept"
    done = run_spec(spec, tmp_path / "o")
    assert not done.ok and done.n_failed == 1
    assert words in done.runs[0].error and "strategy 'LyingStrategy'" in done.runs[0].error


def test_check_scored_passes_a_good_one_unchanged():
    s = Scored(np.array([0.1, 0.2], dtype=np.float32), 0.15)
    assert check_scored(s, 2, "Mine", "x") is s
    with pytest.raises(DetectorError, match="threshold None"):
        check_scored(Scored(np.array([0.1, 0.2]), None), 2, "Mine", "x")


@pytest.fixture
def tiny(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(spec_toml(datasets=[synthetic(n_train=40, n_test=30)]))
    assert main(["verify", "--update", str(spec)]) == 0
    capsys.readouterr()
    return spec


def _every_value(doc, value):
    if isinstance(doc, dict):
        return {k: _every_value(v, value) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_every_value(v, value) for v in doc]
    return value if isinstance(doc, float) or doc is None else doc


@pytest.mark.parametrize("tolerance", [float("inf"), 1e9, 1e300, 0.5, -1e-9])
def test_verify_refuses_an_absurd_tolerance_in_a_reference(tiny, capsys, tolerance):
    def tamper(doc):
        for run in doc["runs"]:
            run["tolerance"] = tolerance
            run["R"] = _every_value(run["R"], 123.0)

    path = reference_path(tiny)
    edit_reference(tiny, tamper)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc).replace("Infinity", "1e999"))
    assert main(["verify", str(tiny)]) == 2
    err = capsys.readouterr().err
    assert "tolerance=" in err and "expected a number from 0 to 0.01" in err


@pytest.mark.parametrize("part", ["R", "metrics"])
def test_verify_refuses_a_record_emptied_of_its_values(tiny, capsys, part):
    def tamper(doc):
        for run in doc["runs"]:
            run[part] = {}

    edit_reference(tiny, tamper)
    assert main(["verify", str(tiny)]) == 2
    assert f"holds no {part} values (nothing to compare)" in capsys.readouterr().err


def test_verify_says_how_many_values_it_compared(tiny, capsys):
    assert main(["verify", str(tiny)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(reference_path(tiny).read_text())
    n_r = sum(len(row) for run in doc["runs"] for m in run["R"].values() for row in m)
    assert " values compared" in out and n_r > 0
    compared = int(out.split(" values compared")[0].rsplit(" ", 1)[1].replace(",", ""))
    assert compared > n_r


@pytest.mark.parametrize("tolerance", ["1e300", "inf", "0.5"])
def test_verify_update_refuses_an_absurd_tolerance_before_rerunning(tmp_path, capsys, tolerance):
    spec = tmp_path / "tiny.toml"
    spec.write_text(spec_toml())
    assert main(["verify", "--update", "--tolerance", tolerance, str(spec)]) == 2
    assert "expected a number from 0 to 0.01" in capsys.readouterr().err
    assert not reference_path(spec).exists()


def test_verify_update_into_a_read_only_folder_and_a_reference_that_is_a_folder(tmp_path, capsys):
    import os

    spec = tmp_path / "ro" / "tiny.toml"
    spec.parent.mkdir()
    spec.write_text(spec_toml())
    reference_path(spec).mkdir()
    assert main(["verify", str(spec)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["verify", "--update", str(spec)]) == 2
    assert "is a folder" in capsys.readouterr().err
    reference_path(spec).rmdir()
    os.chmod(spec.parent, 0o555)
    try:
        if os.access(spec.parent, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        assert main(["verify", "--update", str(spec)]) == 111
        assert "cannot write" in capsys.readouterr().err
    finally:
        os.chmod(spec.parent, 0o755)
