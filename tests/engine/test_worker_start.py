"""How worker processes start: the worker server imports the grid's PyOD and scikit-learn detector
modules once, before it forks any worker (clad.engine.forkserver, clad.engine.worker_imports)."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys

import pytest

from clad.engine.worker_imports import detector_modules

PROBE = (
    "import os, sys\n"
    "from clad.engine.forkserver import mp_context, prestart_workers\n"
    "prestart_workers({detectors})\n"
    "print('left in the environment', 'CLAD_WORKER_DETECTORS' in os.environ)\n"
    "with mp_context().Pool(1) as pool:\n"
    "    print('in the worker', pool.apply(eval, (\"sorted(m for m in ('pyod.models.ecod', 'pyod.models.hbos', "
    "'sklearn.ensemble', 'tests.plugins') if m in __import__('sys').modules)\",)))\n"
)


@pytest.mark.slow
@pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods(), reason="workers are spawned here"
)
def test_workers_start_with_the_grids_pyod_and_sklearn_modules_imported():
    def probe(detectors):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(detectors=detectors)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return out.splitlines()

    named = probe(["ecod", "iforest", "tests.plugins:Mean"])
    # a plug-in's own module is imported by each worker, when its run builds the detector
    assert named == [
        "left in the environment False",
        "in the worker ['pyod.models.ecod', 'sklearn.ensemble']",
    ]
    assert probe([]) == ["left in the environment False", "in the worker []"]


def test_the_detector_modules_of_a_grid():
    names = ["hbos", "pyod.models.ecod:ECOD", "tests.plugins:Mean"]
    assert detector_modules(names) == ["pyod.models.hbos", "pyod.models.ecod"]
