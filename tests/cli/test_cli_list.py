"""`clad list` names every registered component with its parameters and their defaults."""

from __future__ import annotations

from clad.cli import main
from clad.strategies import STRATEGIES


def _listing(capsys, kind: str) -> str:
    assert main(["list", kind]) == 0
    return capsys.readouterr().out


def _params_of(text: str, name: str) -> str:
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.split()[:1] == [name])
    out = []
    for line in lines[k + 1 :]:
        if not line.startswith(" " * 23):
            break
        out.append(line.strip())
    return " ".join(out)


def test_strategies_show_their_defaults(capsys):
    text = _listing(capsys, "strategies")
    assert "'package.module:Class'" in text
    for name in STRATEGIES.names():
        assert _params_of(text, name), name
    assert "buffer_size=1000" in _params_of(text, "replay")
    assert 'mode="buffer_only"' in _params_of(
        text, "replay_buffer_only"
    )  # the registered default wins
    assert "detector" not in _params_of(text, "naive")  # the detector comes from [[detectors]]


def test_detectors_scenarios_and_datasets(capsys):
    detectors = _listing(capsys, "detectors")
    assert "novelty=true" in _params_of(detectors, "lof") and "n_neighbors=20" in _params_of(
        detectors, "lof"
    )
    assert 'max_samples="auto"' in _params_of(detectors, "iforest")
    scenarios = _listing(capsys, "scenarios")
    assert "batch_size=256" in _params_of(scenarios, "concept_agnostic")
    datasets = _listing(capsys, "datasets")
    assert "'package.module:function'" in datasets and "'package.module:Class'" not in datasets
    assert "n_concepts=" in _params_of(datasets, "synthetic")


def test_the_command_line_freezes_the_heap_at_exit_only():
    """``clad`` moves its objects to the garbage collector's permanent generation when the
    interpreter exits (the last collections then skip the libraries' heap), never while a caller
    in the same process goes on."""
    import subprocess
    import sys

    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('at exit', gc.get_freeze_count() > 0))\n"
        "from clad.cli import main\n"
        "main(['list', 'strategies'])\n"
        "print('after main', gc.get_freeze_count() > 0)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[-2:] == ["after main False", "at exit True"]
