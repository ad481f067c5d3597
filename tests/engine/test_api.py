"""The top-level API: what a user types, each name written once in ``clad/__init__.py``, every clad
scenario and strategy class there without editing it, one import path per name, and ``import clad``
still light (no scikit-learn, torch or matplotlib)."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import clad
from clad.scenarios import SCENARIOS
from clad.strategies import STRATEGIES

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = {
    "run_spec",
    "run_experiment",
    "load_results",
    "make_synthetic",
    "Concept",
    "ConceptDataset",
}


def _own_classes(registry) -> dict[str, type]:
    out = {}
    for name in registry.names():
        if registry.path(name).startswith("clad."):
            cls = registry.resolve(name)
            out[cls.__name__] = cls
    return out


@pytest.mark.parametrize("registry", [STRATEGIES, SCENARIOS], ids=["strategies", "scenarios"])
def test_every_registered_clad_class_is_top_level(registry):
    classes = _own_classes(registry)
    assert len(classes) >= 3
    for name, cls in classes.items():
        assert getattr(clad, name) is cls, f"clad.{name} missing"
        assert name in clad.__all__


def test_the_top_level_is_what_a_user_types():
    classes = set(_own_classes(STRATEGIES)) | set(_own_classes(SCENARIOS))
    assert set(clad.__all__) == FUNCTIONS | classes
    assert len(clad.__all__) == len(set(clad.__all__)) <= 25
    assert "Naive" in dir(clad) and "ConceptAgnostic" in dir(clad)
    for internal in (
        "Scored",
        "RunResult",
        "RunConfig",
        "DetectorAdapter",
        "BenchmarkResult",
        "Strategy",
    ):
        assert internal not in clad.__all__
    assert (
        clad.metrics.continual_average is not None and clad.errors.CladError
    )  # subpackages stay reachable


def test_each_public_name_is_written_once_in_the_package_init():
    tree = ast.parse((ROOT / "clad" / "__init__.py").read_text(encoding="utf-8"))
    strings = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    for name in FUNCTIONS:
        assert strings.count(name) == 1, name
    assert not any(
        isinstance(n, ast.Name) and n.id == "__all__" for n in ast.walk(tree)
    )  # derived, not listed


def _exporters() -> dict[str, list[str]]:
    """``{name: [module, ...]}``: the clad modules whose ``__all__`` lists the name (read from the
    source where it is a list of strings, else from the imported module: ``clad.report`` joins
    its modules' lists)."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "clad").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "__all__" for t in node.targets
            ):
                try:
                    names = ast.literal_eval(node.value)
                except ValueError:
                    names = importlib.import_module(module).__all__
                for name in names:
                    out.setdefault(name, []).append(module)
    return out


def test_each_public_name_has_one_import_path():
    # clad.X, and the module that defines X (re-exported by its own package's __init__ at most)
    exporters = _exporters()
    for name in clad.__all__:
        home = getattr(clad, name).__module__
        allowed = {home, home.rsplit(".", 1)[0]}
        assert set(exporters.get(name, [])) <= allowed, (name, exporters.get(name))


@pytest.mark.slow
def test_import_clad_stays_light():
    code = (
        "import sys, clad\n"
        "assert 'torch' not in sys.modules, 'torch imported by import clad'\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported by import clad'\n"
        "assert 'sklearn' not in sys.modules, 'scikit-learn imported by import clad'\n"
        "import clad.cli, clad.engine.forkserver\n"
        "assert 'sklearn' not in sys.modules, 'scikit-learn imported before a command runs'\n"
        "clad.run_spec\n"
        "assert 'torch' not in sys.modules\n"
        "assert clad.Replay().get_params()['buffer_size'] == 1000\n"
        "assert 'EWC' in dir(clad) and 'torch' not in sys.modules\n"
        "try:\n"
        "    clad.NoSuchThing\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchThing' in str(exc)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_public_functions_are_the_modules_own():
    for name in FUNCTIONS:
        obj = getattr(clad, name)
        assert inspect.getmodule(obj).__name__ == obj.__module__
