"""One concept per file: a list of ``.npz`` files with arrays ``X`` and ``y``, each one concept.

Every file's rows are split into training and test rows as in :mod:`clad.datasets.build`; all
files must have the same number of feature columns. :func:`clad.datasets.load_mvtec` is this recipe
for the 15 MVTec-AD categories.
"""

from __future__ import annotations

import os

import numpy as np

from ..core.concepts import ConceptDataset
from ..errors import DataError
from ..validation import declare
from .adbench import read_npz_xy
from .build import SPLIT_CONSTRAINTS, ConceptRows, order_concepts, split_concept
from .files import locate
from .flat import check_flat

__all__ = ["load_npz_files"]


@declare(
    SPLIT_CONSTRAINTS,
    files=lambda a: (
        [(f, None) for f in a["files"]] if isinstance(a["files"], (list, tuple)) else []
    ),
)
def load_npz_files(
    files: list[str],
    names: list[str] | None = None,
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    data_dir: str | None = None,
    random_state: int = 0,
    loader: str = "npz_files",
    dataset_name: str = "files",
) -> ConceptDataset:
    """A scenario with one concept per ``.npz`` file (``names`` default to the file stems)."""
    if isinstance(files, str) or not isinstance(files, (list, tuple)) or not files:
        raise DataError(f"{loader}: files={files!r}; expected a non-empty list of .npz file names")
    if names is None:
        names = [os.path.splitext(os.path.basename(str(f)))[0] for f in files]
    if len(names) != len(files) or len(set(names)) != len(names):
        raise DataError(f"{loader}: names={names!r}; expected one distinct name per file")
    seed = int(random_state)
    split_ss, order_ss = np.random.SeedSequence(seed).spawn(2)
    split_rng = np.random.default_rng(split_ss)
    pairs, first = [], None
    for file, name in zip(files, names):
        path = locate(file, data_dir)
        X, y = check_flat(*read_npz_xy(path, loader), f"{loader}: {file}")
        if first is None:
            first = (file, X.shape[1])
        elif X.shape[1] != first[1]:
            raise DataError(
                f"{loader}: {file!r} has {X.shape[1]} feature columns but {first[0]!r} has {first[1]}; "
                "every file must have the same number of features"
            )
        rows = ConceptRows(name, np.flatnonzero(y == 0), np.flatnonzero(y == 1))
        pairs.append(split_concept(X, y, rows, test_size, contamination, split_rng, loader))
    meta = {
        "files": [str(f) for f in files],
        "test_size": test_size,
        "contamination": contamination,
        "random_state": seed,
    }
    return order_concepts(
        pairs,
        order=order,
        difficulty=difficulty,
        random_state=order_ss,
        name=dataset_name,
        metadata=meta,
        loader=loader,
    )
