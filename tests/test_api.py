"""Every strategy, scenario and detector class is importable from the top-level package, and
``import clad`` still imports neither torch nor matplotlib."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import clad
from clad.detectors import DETECTORS
from clad.scenarios import SCENARIOS
from clad.strategies import STRATEGIES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("registry", [STRATEGIES, SCENARIOS], ids=["strategies", "scenarios"])
def test_registered_classes_are_top_level(registry):
    for name in registry.names():
        cls = registry.resolve(name)
        assert getattr(clad, cls.__name__) is cls, f"{name}: clad.{cls.__name__} missing"
        assert cls.__name__ in clad.__all__


def test_clad_detector_classes_are_top_level():
    import clad.detectors as d

    classes = [getattr(d, n) for n in d.__all__ if inspect.isclass(getattr(d, n))]
    own = [DETECTORS.path(n) for n in DETECTORS.names() if DETECTORS.path(n).startswith("clad.")]
    assert len(classes) >= 4 and len(own) >= 2
    for cls in classes:
        assert getattr(clad, cls.__name__) is cls
    for path in own:  # clad's own detector classes (the PyTorch ones imported on first use)
        obj = DETECTORS.resolve(path)
        if inspect.isclass(obj):
            assert obj.__name__ in clad.__all__ and getattr(clad, obj.__name__) is obj, path


@pytest.mark.slow
def test_torch_detectors_are_lazy_and_the_top_level_stays_light():
    code = ("import sys, clad\n"
            "assert 'torch' not in sys.modules, 'torch imported by import clad'\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported by import clad'\n"
            "assert 'sklearn' not in sys.modules, 'scikit-learn imported by import clad'\n"
            "import clad.cli, clad.engine.forkserver\n"
            "assert 'sklearn' not in sys.modules, 'scikit-learn imported before a command runs'\n"
            "assert clad.Replay().get_params()['buffer_size'] == 1000\n"
            "assert 'AutoEncoder' in dir(clad)\n"
            "try:\n"
            "    clad.NoSuchThing\n"
            "except AttributeError as exc:\n"
            "    assert 'NoSuchThing' in str(exc)\n"
            "else:\n"
            "    raise SystemExit('no AttributeError')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr


def test_torch_detector_from_the_top_level():
    pytest.importorskip("torch")
    from clad.detectors.torch_ae import VAE, AutoEncoder

    assert clad.AutoEncoder is AutoEncoder and clad.VAE is VAE
