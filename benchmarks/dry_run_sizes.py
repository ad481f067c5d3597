"""How long `clad run --dry-run` takes to refuse a grid that is too large: a [tuning] section of
500 x 300 values, refused from the product of its list lengths before any candidate is built.

    python benchmarks/dry_run_sizes.py
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    spec = (
        'name = "big"\ndatasets = [{name = "synthetic", n_concepts = 3}]\nscenarios = ["concept_incremental"]\n'
        'strategies = ["naive"]\ndetectors = ["iforest"]\n[tuning]\nmode = "first_concepts"\nk = 1\n'
        "[tuning.detectors.iforest]\n"
        f"n_estimators = {list(range(1, 501))}\nmax_samples = {list(range(2, 302))}\n"
    )
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.toml"
        path.write_text(spec)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "clad.cli", "run", str(path), "--dry-run"],
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
    print(
        f"500 x 300 tuning grid: clad run --dry-run exit {proc.returncode} after {seconds:.2f} s (whole process)"
    )
    print(proc.stderr.strip().splitlines()[-1][:300])


if __name__ == "__main__":
    main()
