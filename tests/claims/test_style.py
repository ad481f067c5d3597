"""The code base has one style: `ruff format` leaves every file as it is and `ruff check` finds nothing."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args):
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(exe).exists():
        pytest.skip(
            "ruff is not installed (it comes with the test extra: pip install -e '.[test]')"
        )
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_format_leaves_every_file_as_it_is():
    done = _ruff("format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_check_finds_nothing():
    done = _ruff("check", ".")
    assert done.returncode == 0, done.stdout + done.stderr
