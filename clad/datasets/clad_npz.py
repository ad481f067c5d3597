"""clad's own pickle-free concept file: one ``.npz`` holding every concept's arrays and names.

Layout (all plain arrays, so ``numpy.load(..., allow_pickle=False)`` reads it)::

    format        "clad-concepts/1"
    name          the dataset name
    train_names   names of the training concepts, in learning order (unicode array)
    test_names    names of the test concepts (unicode array)
    train_X_<i>   features of training concept i      train_y_<i>  its labels (optional)
    test_X_<j>    features of test concept j          test_y_<j>   its labels

>>> import tempfile, os, numpy as np
>>> from clad.core.concepts import Concept, ConceptDataset
>>> ds = ConceptDataset([Concept("a", np.zeros((2, 3)))], [Concept("a", np.ones((2, 3)), np.array([0, 1]))], name="t")
>>> path = os.path.join(tempfile.mkdtemp(), "t.npz")
>>> _ = save_clad_npz(ds, path)
>>> back = load_clad_npz(path)
>>> back.name, back.train_names, back.test[0].y.tolist()
('t', ('a',), [0, 1])
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from ..atomic import atomic_output
from ..core.concepts import Concept, ConceptDataset
from ..errors import DataError
from ..validation import declare
from .files import locate

__all__ = ["save_clad_npz", "load_clad_npz", "FORMAT"]

FORMAT = "clad-concepts/1"


def save_clad_npz(dataset: ConceptDataset, path: str | os.PathLike, compress: bool = True) -> Path:
    """Write ``dataset`` to ``path`` in clad's ``.npz`` concept format (atomically: a temporary file
    in the same folder, then a rename)."""
    if not isinstance(dataset, ConceptDataset):
        raise DataError(f"save_clad_npz: expected a ConceptDataset, got {type(dataset).__name__}")
    path = Path(path)
    if path.suffix != ".npz":
        raise DataError(f"save_clad_npz: {str(path)!r} must end in .npz")
    arrays: dict[str, np.ndarray] = {
        "format": np.array(FORMAT),
        "name": np.array(dataset.name),
        "train_names": np.array(dataset.train_names, dtype=str),
        "test_names": np.array(dataset.test_names, dtype=str),
    }
    for role, concepts in (("train", dataset.train), ("test", dataset.test)):
        for i, c in enumerate(concepts):
            arrays[f"{role}_X_{i}"] = np.asarray(c.X)
            if c.y is not None:
                arrays[f"{role}_y_{i}"] = np.asarray(c.y)
    with atomic_output(path) as tmp, open(tmp, "wb") as fh:
        (np.savez_compressed if compress else np.savez)(fh, **arrays)
    return path


@declare(
    {"sha256": [None, str], "data_dir": [None, str]}, files=lambda a: [(a["file"], a["sha256"])]
)
def load_clad_npz(
    file: str, sha256: str | None = None, data_dir: str | None = None
) -> ConceptDataset:
    """Read a dataset written by :func:`save_clad_npz` (never unpickles anything).

    ``file`` is looked for in the data directories, then relative to the current directory;
    ``sha256``, when given, is checked first.
    """
    path = locate(file, data_dir, sha256=sha256)
    try:
        # np.load would read a file that is not a zip as a pickle and suggest allow_pickle
        if not zipfile.is_zipfile(path):
            raise DataError(
                f"clad_npz: {str(path)!r} is not a .npz file (a zip archive of arrays); write one with "
                "clad.datasets.save_clad_npz or `clad datasets convert`"
            )
        with np.load(path, allow_pickle=False) as z:
            if "format" not in z.files or str(z["format"]) != FORMAT:
                raise DataError(
                    f"clad_npz: {str(path)!r} is not a clad concept file (no format {FORMAT!r}); "
                    "write one with clad.datasets.save_clad_npz or `clad datasets convert`"
                )
            concepts = {}
            for role in ("train", "test"):
                names = [str(n) for n in z[f"{role}_names"]]
                # a concept without labels has no y array
                concepts[role] = [
                    Concept(n, z[f"{role}_X_{i}"], z.get(f"{role}_y_{i}"))
                    for i, n in enumerate(names)
                ]
            name = str(z["name"])
    except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"clad_npz: {str(path)!r} could not be read ({exc})") from None
    return ConceptDataset(
        concepts["train"], concepts["test"], name=name, metadata={"file": str(path)}
    )
