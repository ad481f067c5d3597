"""The package's layout rules: validating a spec imports no executor; no module imports the package's ``__init__``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# scikit-learn imports joblib, which imports concurrent.futures.process and multiprocessing.pool (its
# bundled loky): those are loaded by any spec naming a scikit-learn detector, whatever clad does, so they
# are not listed here; the torch detectors import torch when a spec names one (to check its parameters)
FORBIDDEN = ("clad.engine.executors", "clad.engine.run", "clad.engine.store", "clad.engine.progress", "dask",
             "distributed", "torch", "pebble", "loky")


@pytest.mark.slow
def test_validating_a_spec_imports_no_executor():
    code = ("import json, sys, clad\n"
            "from clad.engine.spec import load_spec, parse_spec\n"
            "spec = load_spec(sys.argv[1])\n"
            "parse_spec({'seeds': 2, 'strategies': ['naive', 'replay'], 'scenarios': ['concept_agnostic'],"
            " 'datasets': ['synthetic'], 'detectors': ['iforest', 'hbos']})\n"
            "print(json.dumps([len(spec), sorted(sys.modules)]))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "scenarios" / "quickstart.toml")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    n_runs, modules = json.loads(proc.stdout)
    assert n_runs == 72
    loaded = [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert loaded == []
    assert "clad.engine.spec" in modules and "clad.engine.config" in modules  # the check sees real imports


def test_no_module_imports_the_package_init():
    offenders = []
    for path in sorted((ROOT / "clad").rglob("*.py")):
        if path == ROOT / "clad" / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                # `from clad import x`, or `from .. import x` reaching the top package
                depth = len(path.relative_to(ROOT / "clad").parts) - 1
                if (node.level == 0 and node.module == "clad") or (node.level > 0 and node.module is None
                                                                   and node.level - 1 == depth):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            elif isinstance(node, ast.Import) and any(a.name == "clad" for a in node.names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
