import sys
from pathlib import Path

# tests/plugins.py is importable as `plugins` (specs and `clad check` name it by import path)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hypothesis import HealthCheck, settings

# one fixed, derandomised profile: property tests give the same examples on every run and stay fast
settings.register_profile("clad", derandomize=True, max_examples=150, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("clad")
