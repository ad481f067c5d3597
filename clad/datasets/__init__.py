"""Datasets: loaders that return a :class:`~clad.concepts.ConceptDataset`, registered by name.

================  ===============================================================
name              what
================  ===============================================================
``synthetic``     seeded moving Gaussian concepts (:func:`make_synthetic`)
================  ===============================================================

A loader is any callable returning a ``ConceptDataset``; a spec names it by its registered name or
by ``package.module:function``. Loaders that take ``random_state`` get one derived from the run seed
unless the spec sets it.
"""

from __future__ import annotations

from ..registry import Registry
from .synthetic import make_synthetic

__all__ = ["DATASETS", "make_synthetic", "load_dataset"]

DATASETS = Registry("dataset")
DATASETS.add("synthetic", make_synthetic, "seeded moving Gaussian concepts with their own anomalies")


def load_dataset(name: str, params: dict | None = None):
    """Build the dataset registered as ``name`` with ``params``; check that it is a ConceptDataset."""
    from ..concepts import ConceptDataset
    from ..errors import CladTypeError

    ds = DATASETS.build(name, params)
    if not isinstance(ds, ConceptDataset):
        raise CladTypeError(f"dataset loader {name!r} returned {type(ds).__name__}; expected a ConceptDataset")
    return ds
