"""What every benchmark prints: the machine, its load and the versions it ran with."""

from __future__ import annotations

import os
import platform


def describe() -> str:
    import numpy
    import sklearn

    import clad

    from importlib.metadata import PackageNotFoundError, version

    try:
        pyod_version = version("pyod")  # not imported: its import alone costs memory and time
    except PackageNotFoundError:  # pragma: no cover
        pyod_version = "absent"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    blas = ", ".join(
        f"{v}={os.environ.get(v, 'unset')}" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"machine: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}\n"
        f"python {platform.python_version()}, clad {clad.__version__}, numpy {numpy.__version__}, "
        f"scikit-learn {sklearn.__version__}, pyod {pyod_version}; {blas}\n"
        f"load average (1, 5, 15 min): {load}"
    )


def load_now() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())
