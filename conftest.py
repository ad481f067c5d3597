"""Doctests of modules whose optional dependency is not installed are left out (their tests skip)."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("torch") is None:
    collect_ignore.extend(["clad/detectors/torch_ae.py", "clad/detectors/torch_graph.py"])
