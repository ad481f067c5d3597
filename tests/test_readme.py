"""The README's two commands are the ones CI runs, and the examples run."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


def test_readme_has_two_commands_near_the_top():
    run_cmd, test_cmd = readme_commands()
    assert "clad run scenarios/quickstart.toml" in run_cmd
    assert "pytest" in test_cmd
    head = (ROOT / "README.md").read_text()[:1500]
    assert run_cmd in head and test_cmd in head


def test_ci_runs_the_readme_commands():
    run_cmd, test_cmd = readme_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    install = re.search(r"(pip install [^&]+?)\s*&&", test_cmd).group(1)
    assert install in run_cmd
    assert install in ci
    test = test_cmd.rsplit("&&", 1)[1].strip()
    assert test in ci
    assert "venv" in ci


@pytest.mark.parametrize("script", ["quickstart.py", "custom_detector.py"])
def test_examples_run(script):
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / script)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
