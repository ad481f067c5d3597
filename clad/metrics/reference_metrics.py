"""The metrics against a reference model, one declaration per reference kind.

A metric declared with ``needs=("reference",)`` (:func:`~clad.metrics.intransigence`,
:func:`~clad.metrics.reference_forward_transfer`) compares R with one score per test concept from
*a* reference model. A benchmark can have two (``references = ["joint", "single_task"]`` in a
spec, see :mod:`clad.protocol.reference_models`): the joint model and the single-task experts. So each
such metric is declared once more per kind, as its own metric with its own name, label and input:
``intransigence_joint`` (label ``Intransigence (joint)``, input ``reference_joint``),
``intransigence_single_task`` (``Intransigence (ST)``, ``reference_single_task``),
``reference_forward_transfer_joint`` and ``reference_forward_transfer_single_task``. They are
ordinary declarations: :func:`~clad.metrics.summarize` computes them when given the input, and the
summaries, leaderboard, best marks and statistics show them as any other metric; without the input
they are absent. The function and its direction are those of the generic metric.

>>> from clad.metrics import get_metric, summarize
>>> get_metric("intransigence_joint").label, get_metric("intransigence_joint").lower_is_better
('Intransigence (joint)', True)
>>> s = summarize([[0.9, 0.5], [0.7, 0.8]], reference_joint=[1.0, 0.9])
>>> round(s["intransigence_joint"], 6), "intransigence_single_task" in s, "intransigence" in s
(0.1, False, False)
"""

from __future__ import annotations

import dataclasses

from .registry import INPUTS, REGISTRY, register

__all__ = [
    "REFERENCE_KINDS",
    "REFERENCE_LABELS",
    "REFERENCE_METRICS",
    "reference_input",
    "reference_metric",
    "declare_reference_metrics",
]

#: the reference models a benchmark can have (a spec's ``references``), what each is, and their short labels
REFERENCE_KINDS = {
    "joint": "one detector fitted on all training concepts together, scored on every test concept",
    "single_task": "a fresh detector per concept (its single-task expert), scored on every concept",
}
REFERENCE_LABELS = {"joint": "joint", "single_task": "ST"}


def reference_input(kind: str) -> str:
    """The name of the :func:`~clad.metrics.summarize` input holding reference ``kind``'s scores."""
    return f"reference_{kind}"


for _kind, _what in REFERENCE_KINDS.items():  # the inputs of the metrics against each reference
    INPUTS.setdefault(
        reference_input(_kind), f"one score per test concept from the {_kind} reference: {_what}"
    )


def reference_metric(name: str, kind: str) -> str:
    """The name of metric ``name`` (declared with ``needs=("reference",)``) against reference ``kind``."""
    return f"{name}_{kind}"


def declare_reference_metrics() -> list[str]:
    """Declare, for every metric that needs ``reference`` and every kind, its variant against that
    kind (those declared already are kept); returns their names."""
    names = []
    for m in [m for m in REGISTRY.values() if m.needs == ("reference",)]:
        for kind, short in REFERENCE_LABELS.items():
            name = reference_metric(m.name, kind)
            if name not in REGISTRY:
                register(
                    dataclasses.replace(
                        m, name=name, label=f"{m.label} ({short})", needs=(reference_input(kind),)
                    )
                )
            names.append(name)
    return names


#: the names of the metrics against each reference kind
REFERENCE_METRICS = tuple(declare_reference_metrics())
