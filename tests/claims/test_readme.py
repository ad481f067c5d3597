"""The README's two commands are the ones CI runs, and the examples run."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    assert install in ci  # CI installs what the test command installs: everything
    assert ".[all]" in install and "torch==" in install
    quick = re.search(r"(pip install [^&]+?)\s*&&", run_cmd).group(1)
    assert (
        "torch" not in quick and "[all]" not in quick
    )  # the quickstart installs only what it uses
    test = test_cmd.rsplit("&&", 1)[1].strip()
    assert test in ci
    assert "venv" in ci


@pytest.mark.slow
@pytest.mark.parametrize("script", ["quickstart.py", "custom_detector.py"])
def test_examples_run(script):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


@pytest.mark.slow
def test_plugin_guide_passes_checks_and_runs_in_a_spec(tmp_path):
    guide = (ROOT / "docs" / "guides" / "plugins.md").read_text()
    code = re.search(r"```python\n(# my_detectors.py\n.+?)```", guide, re.S).group(1)
    assert len([l for l in code.splitlines() if l.strip()]) <= 12
    (tmp_path / "my_detectors.py").write_text(code)
    script = (
        Path(sys.executable).parent / "clad"
    )  # the console script: cwd is not on its sys.path by itself
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "clad.cli"]
    check = subprocess.run(
        cmd + ["check", "my_detectors:DistanceToMean"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    from clad.testing import DETECTOR_CHECKS

    n = len(DETECTOR_CHECKS)
    assert f"{n}/{n} checks passed" in check.stdout
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'strategies = ["cumulative"]\n[[datasets]]\nname = "synthetic"\nn_concepts = 2\n'
        'n_train = 60\nn_test = 40\n[[scenarios]]\nname = "concept_aware"\n'
        + re.search(
            r"```toml\n(\[\[detectors\]\]\nname = \"my_detectors:DistanceToMean\"\n)```", guide
        ).group(1)
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "clad.cli",
            "run",
            str(spec),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "results.json").exists()
