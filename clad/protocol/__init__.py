"""The benchmark protocol: checks that make a benchmark's conclusions hold up.

* :mod:`~clad.protocol.single_task` — the single-task matrix M (a fresh detector per concept, scored
  on every concept);
* :mod:`~clad.protocol.validity` — is a scenario feasible, non-trivial, does it show forgetting, are
  its concepts distinct;
* :mod:`~clad.protocol.matrix_orders` — concept orders from M (curriculum, smooth or abrupt drift),
  usable as ``order`` names in specs;
* :mod:`~clad.protocol.reference_models` — the reference models' datasets (joint model, single-task
  experts) and their score per test concept.

What runs a spec's checks is in the engine: :mod:`clad.engine.validate` (``clad validate SPEC``) and
:mod:`clad.engine.verify` (``clad verify SPEC_OR_FOLDER``: rerun a reference suite and compare with
its committed results).

See ``docs/guides/protocol.md``.
"""

from __future__ import annotations

from .single_task import SingleTaskMatrix, naive_matrix, single_task_dataset, single_task_matrix
from .validity import Check, Thresholds, ValidityReport, auc_interval, check_matrix, validate

__all__ = [
    "SingleTaskMatrix",
    "single_task_matrix",
    "single_task_dataset",
    "naive_matrix",
    "Thresholds",
    "Check",
    "ValidityReport",
    "check_matrix",
    "validate",
    "auc_interval",
]
