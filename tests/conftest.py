"""Shared test set-up: the ``plugins`` import path, the hypothesis profile and the session-wide quickstart run."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "scenarios" / "quickstart.toml"

# tests/plugins.py (and the other *_plugins modules) are importable as `plugins` (specs and `clad check`
# name them by import path); the helper modules are imported as `tests.<name>` (tests/claims/test_layout.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))

# one fixed, derandomised profile: property tests give the same examples on every run and stay fast
settings.register_profile(
    "clad",
    derandomize=True,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("clad")


@pytest.fixture(scope="session")
def quickstart(tmp_path_factory):
    """The README's first command, ``clad run scenarios/quickstart.toml --out DIR``, run once per
    test session in a subprocess: ``out`` (the folder) and ``doc`` (its results.json, strict JSON)."""
    from tests.runner_helpers import strict_loads

    out = tmp_path_factory.mktemp("quickstart") / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "clad.cli", "run", str(QUICKSTART), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return SimpleNamespace(
        out=out, spec=QUICKSTART, doc=strict_loads((out / "results.json").read_text())
    )
