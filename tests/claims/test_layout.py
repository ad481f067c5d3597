"""The package's layout rules: the layer contracts of ``pyproject.toml`` hold (and fail when broken), no
import cycle, no private name taken from another module, validating a spec imports no executor, and no
module imports the package's ``__init__``."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# scikit-learn imports joblib, which imports concurrent.futures.process and multiprocessing.pool (its
# bundled loky): those are loaded by any spec naming a scikit-learn detector, whatever clad does, so they
# are not listed here; the torch detectors import torch when a spec names one (to check its parameters)
FORBIDDEN = (
    "clad.engine.executors",
    "clad.engine.run",
    "clad.results.store",
    "clad.engine.progress",
    "dask",
    "distributed",
    "torch",
    "pebble",
    "loky",
)


@pytest.mark.slow
def test_validating_a_spec_imports_no_executor():
    code = (
        "import json, sys, clad\n"
        "from clad.engine.spec import load_spec, parse_spec\n"
        "spec = load_spec(sys.argv[1])\n"
        "parse_spec({'seeds': 2, 'strategies': ['naive', 'replay'], 'scenarios': ['concept_agnostic'],"
        " 'datasets': ['synthetic'], 'detectors': ['iforest', 'hbos']})\n"
        "print(json.dumps([len(spec), sorted(sys.modules)]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "scenarios" / "quickstart.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    n_runs, modules = json.loads(proc.stdout)
    assert n_runs == 72
    loaded = [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert loaded == []
    assert (
        "clad.engine.spec" in modules and "clad.engine.config" in modules
    )  # the check sees real imports


def test_no_module_imports_the_package_init():
    offenders = []
    for path in sorted((ROOT / "clad").rglob("*.py")):
        if path == ROOT / "clad" / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                # `from clad import x`, or `from .. import x` reaching the top package
                depth = len(path.relative_to(ROOT / "clad").parts) - 1
                if (node.level == 0 and node.module == "clad") or (
                    node.level > 0 and node.module is None and node.level - 1 == depth
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            elif isinstance(node, ast.Import) and any(a.name == "clad" for a in node.names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


# -- the layer contracts (import-linter, configured in pyproject.toml) -----------------------------


def _lint(capsys) -> tuple[int, str]:
    """Run every import-linter contract of pyproject.toml on the package as it is on disk now: 0 when
    every contract is kept, 1 when one is broken. (import-linter's use case, not its command-line
    function, which reconfigures logging and so silences the loggers of later tests.)"""
    pytest.importorskip("importlinter")
    from importlinter import configuration
    from importlinter.application import use_cases

    configuration.configure()
    passed = use_cases.lint_imports(
        config_filename=str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True
    )
    return (0 if passed else 1), capsys.readouterr().out


def test_the_layer_contracts_hold(capsys):
    import logging

    code, out = _lint(capsys)
    assert code == 0, out
    assert "5 kept, 0 broken" in out  # the contracts were read and checked, not skipped
    assert not logging.getLogger(
        "clad.engine.progress"
    ).disabled  # linting leaves logging as it was


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(capsys):
    # an import inside a function counts as much as one at the top of a module
    probe = ROOT / "clad" / "metrics" / f"layer_probe_{os.getpid()}.py"
    probe.write_text(
        "def build():\n    from ..engine import spec\n\n    return spec\n", encoding="utf-8"
    )
    try:
        code, out = _lint(capsys)
    finally:
        probe.unlink()
    assert code == 1
    assert f"clad.metrics.layer_probe_{os.getpid()} -> clad.engine.spec" in out
    assert "BROKEN" in out


# -- no import cycles, no private names across modules --------------------------------------------


def _import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` within clad, imports inside functions included (grimp reads
    every import statement of a module, wherever it stands)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("clad", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative),
    and the modules that import themselves."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1 or node in edges.get(node, ()):
                        out.append(sorted(component))
    return out


def test_the_cycle_finder_finds_cycles():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": set()}
    assert sorted(_cycles(edges)) == [["a", "b", "c"], ["d"]]


def test_no_import_cycle_in_clad():
    edges = _import_graph()
    assert len(edges) > 100 and "clad.engine.spec" in edges["clad.engine.benchmark"]
    assert _cycles(edges) == []


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__") and part != "_version"


def _private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``from x import _name`` (or ``import clad.x._y``) reaching into another clad module; a
    private module imported by its own package's modules (``from . import _checks``) is allowed, and
    so is ``clad._version``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            internal = node.level > 0 or (node.module or "").split(".")[0] == "clad"
            if not internal:
                continue
            parts = (node.module or "").split(".")
            in_own_package = node.level == 1
            if any(_private(p) for p in parts) and not in_own_package:
                out.append(f"{path.relative_to(root)}:{node.lineno} {node.module}")
            for alias in node.names:
                private = _private(alias.name)
                own_private_module = (
                    in_own_package
                    and node.module is None
                    and (path.parent / f"{alias.name}.py").is_file()
                )
                if private and not own_private_module:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "clad" and any(_private(p) for p in parts[1:]):
                    out.append(f"{path.relative_to(root)}:{node.lineno} {alias.name}")
    return out


def test_the_private_import_check_sees_private_names(tmp_path):
    (tmp_path / "_helpers.py").write_text("", encoding="utf-8")
    code = (
        "from .base import _Hidden, Shown\nfrom . import _helpers\nfrom ..stats import _plural\n"
        "import clad.report._secret\nfrom .._version import __version__\n"
    )
    mod = tmp_path / "mod.py"
    mod.write_text(code, encoding="utf-8")
    found = [x.split(" ", 1)[1] for x in _private_imports(mod, tmp_path)]
    assert found == ["_Hidden", "_plural", "clad.report._secret"]


def test_no_private_name_is_imported_across_modules():
    offenders = [
        x for path in sorted((ROOT / "clad").rglob("*.py")) for x in _private_imports(path)
    ]
    assert offenders == []


def test_defaults_have_one_home():
    """The default base metric and the default continual metric are written once, in clad/defaults.py:
    no function or field of clad takes either literal as its default, and no ``.get(key, literal)``."""
    from clad.defaults import DEFAULT_BASE_METRIC, DEFAULT_METRIC

    literals = {DEFAULT_BASE_METRIC, DEFAULT_METRIC}
    offenders = []
    for path in sorted((ROOT / "clad").rglob("*.py")):
        if path.name == "defaults.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            defaults = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            elif isinstance(node, ast.ClassDef):  # a dataclass field's default
                defaults = [
                    n.value
                    for n in node.body
                    if isinstance(n, ast.AnnAssign) and n.value is not None
                ]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "get"
                and len(node.args) == 2
            ):
                defaults = [node.args[1]]
            elif isinstance(node, ast.keyword) and node.arg == "default":
                defaults = [node.value]
            for d in defaults:
                found = {n.value for n in ast.walk(d) if isinstance(n, ast.Constant)} & literals
                if found:
                    offenders.append(f"{path.relative_to(ROOT)}:{d.lineno} {sorted(found)}")
    assert offenders == []


def test_no_test_module_imports_another():
    """What tests of several folders share lives in a helper module at tests/ (CONTRIBUTING)."""
    tests = Path(__file__).resolve().parents[1]
    # the plug-in modules are named by specs as `plugins:Name`, so tests/ is on the path for them
    helpers = {p.stem for p in tests.glob("*.py")} - {"conftest"}
    helpers = {h for h in helpers if not h.endswith("plugins")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [f"{path.relative_to(tests)}: {n}" for n in names if n.startswith("test_")]
            # a helper is imported by one name (tests.data_helpers), never also by its bare one:
            # two names would be two module objects, each with its own globals
            found += [f"{path.relative_to(tests)}: {n} (bare)" for n in names if n in helpers]
    assert found == []
