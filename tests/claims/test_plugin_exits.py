"""A plug-in that ends its process never ends a grid in silence and never hangs it: ``sys.exit``
in ``fit`` fails its run (named, exit status 1), ``os._exit(0)`` or a signal in a worker process
fails its run and the other workers go on, ``sys.exit`` / a syntax error / an exception at import
is a clear error before anything runs (exit status 2), and a plug-in cannot silently take a
built-in's name."""

import json
import subprocess

import pytest

from clad.detectors import DETECTORS
from clad.errors import CladValueError
from clad.registry import Registry

from tests.runner_helpers import run_clad, small_spec, synthetic, write_spec

#: the longest a grid of 4 tiny runs may take before the test calls it a hang (seconds)
HANG = 180


def _spec(tmp_path, **params):
    return write_spec(
        tmp_path,
        **small_spec(
            seeds=[0, 1],
            datasets=[synthetic(n_train=40, n_test=30)],
            detectors=[
                {"name": "tests.reliability_plugins:ExitDetector", **params},
                {"name": "hbos"},
            ],
        ),
    )


def _run(tmp_path, spec, *extra):
    try:
        done = run_clad("run", spec, "--out", tmp_path / "o", "--quiet", *extra, timeout=HANG)
    except subprocess.TimeoutExpired:  # pragma: no cover - what this test is here to catch
        pytest.fail(f"clad run {' '.join(extra)} did not end within {HANG} s")
    runs = json.loads((tmp_path / "o" / "results.json").read_text())["runs"]
    return done, runs


@pytest.mark.slow
@pytest.mark.parametrize(
    "how,code,jobs",
    [
        ("sys.exit", 0, "1"),
        ("sys.exit", 0, "2"),
        ("sys.exit", 3, "2"),
        ("os._exit", 0, "2"),
        ("os._exit", 5, "2"),
        ("kill", 0, "2"),
    ],
)
def test_a_plugin_ending_its_process_fails_its_run_by_name_and_the_grid_goes_on(
    tmp_path, how, code, jobs
):
    done, runs = _run(tmp_path, _spec(tmp_path, how=how, code=code), "--jobs", jobs)
    assert done.returncode == 1, done.stderr
    failed = [r for r in runs if r["status"] != "ok"]
    assert len(runs) == 4 and len(failed) == 2
    assert all(r["detector"].startswith("tests.reliability_plugins:ExitDetector") for r in failed)
    assert (
        "tests.reliability_plugins:ExitDetector" in done.stderr
        and "2 of 4 runs failed" in done.stderr
    )
    if how == "sys.exit":
        assert f"sys.exit({code})" in failed[0]["error"]
    if (how, code) == ("os._exit", 0):
        assert "ended without returning a result" in failed[0]["error"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "body,words",
    [
        ("import sys\nsys.exit(0)\n", "called sys.exit(0)"),
        ("def broken(:\n", "syntax error"),
        ("raise RuntimeError('boom at import')\n", "raised RuntimeError: boom"),
    ],
)
def test_a_plugin_module_ending_or_failing_at_import_is_a_clear_error_before_any_run(
    tmp_path, body, words
):
    (tmp_path / "bad_plugin_module.py").write_text(body)
    spec = write_spec(tmp_path, **small_spec(detectors=[{"name": "bad_plugin_module:X"}]))
    done = run_clad("run", spec, "--out", tmp_path / "o", timeout=HANG)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_module_raising_at_import_is_a_clad_error_in_process(tmp_path, monkeypatch):
    from clad.registry import import_object

    (tmp_path / "exits_when_imported.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(CladValueError, match=r"called sys.exit\(0\)"):
        import_object("exits_when_imported:X", "detector")


def test_registering_a_taken_name_for_something_else_is_refused():
    with pytest.raises(CladValueError, match="'iforest' is already registered"):
        DETECTORS.add("iforest", "tests.reliability_plugins:ExitDetector")
    assert DETECTORS.path("iforest") != "tests.reliability_plugins:ExitDetector"
    r = Registry("colour")
    r.add("red", "builtins:str")
    r.add("red", "builtins:str")  # the same again (a module imported twice) is fine
    r.remove("red")
    r.add("red", "builtins:int")  # after remove(), on purpose
    assert r.path("red") == "builtins:int"
