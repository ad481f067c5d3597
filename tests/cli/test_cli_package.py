"""The command line has one home: ``clad/cli/`` prints, the library layers never do, and building the
parser (every command's) imports nothing heavy."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "torch", "pyod", "matplotlib")


def print_calls(source: str) -> list[int]:
    """The lines of ``source`` that call ``print`` (docstrings and doctests are text, not calls)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "print"
    ]


def test_the_print_finder_sees_calls_not_text():
    assert print_calls('"""\n>>> print(1)\n"""\nx = fingerprint(2)\nprint(x)\n') == [5]


def test_no_library_layer_prints():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "clad").rglob("*.py"))
        if "cli" not in path.relative_to(ROOT / "clad").parts[:1]
        for line in print_calls(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.slow
def test_building_the_parser_imports_nothing_heavy():
    code = (
        "import sys\n"
        "from clad.cli import build_parser\n"
        "p = build_parser()\n"
        "p.parse_args(['run', 'grid.toml', '--jobs', '2', '--out', 'o'])\n"
        "p.parse_args(['report', 'o', '--metric', 'bwt'])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert proc.stdout.strip() == "[]"


@pytest.mark.slow
def test_run_starts_the_worker_server_before_anything_heavy(tmp_path):
    """``clad run --jobs 2`` hands the grid's detectors to the worker server before this process
    imports scikit-learn: the server's imports overlap with reading the spec (its time to the first
    finished run is measured by benchmarks/cli_startup.py)."""
    spec = tmp_path / "grid.toml"
    spec.write_text('detectors = ["lof", {name = "iforest"}]\n')
    code = (
        "import sys\n"
        "import clad.engine.forkserver as fs\n"
        "def record(detectors=()):\n"
        f"    print(sorted(detectors), sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "    raise SystemExit(0)\n"
        "fs.prestart_workers = record\n"
        "from clad.cli import main\n"
        f"main(['run', {str(spec)!r}, '--jobs', '2', '--out', {str(tmp_path / 'o')!r}])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert proc.stdout.strip() == "['iforest', 'lof'] []"
