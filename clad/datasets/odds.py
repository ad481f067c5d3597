"""ODDS datasets in MATLAB ``.mat`` format (arrays ``X`` and ``y``), read with :func:`scipy.io.loadmat`.

ODDS (Outlier Detection DataSets, https://odds.cs.stonybrook.edu) publishes most of its datasets as
``.mat`` files; newer MATLAB v7.3 files are HDF5 and not readable by scipy (convert them first).
Like ADBench's, they have no native concepts: a concept recipe builds the scenario.
"""

from __future__ import annotations

import os

import numpy as np

from ..core.concepts import ConceptDataset
from ..errors import DataError
from ..validation import declare
from .files import locate
from .flat import FLAT_CONSTRAINTS, check_recipe

__all__ = ["load_odds_mat", "read_mat_xy"]


def read_mat_xy(path, what: str = "odds_mat") -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``y`` of a ``.mat`` file."""
    import scipy.io

    try:
        mat = scipy.io.loadmat(str(path))
    except Exception as exc:  # noqa: BLE001 - scipy's parser fails on malformed files in many ways
        # (IndexError, TypeError, MatReadError, ValueError...): all mean "not a readable .mat file"
        raise DataError(
            f"{what}: {str(path)!r} could not be read as a MATLAB .mat file "
            f"({type(exc).__name__}: {exc})"
        ) from None
    missing = [k for k in ("X", "y") if k not in mat]
    if missing:
        found = [k for k in mat if not k.startswith("__")]
        raise DataError(f"{what}: {str(path)!r} has variables {found}; expected 'X' and 'y'")
    return mat["X"], np.asarray(mat["y"]).ravel()


@declare(
    FLAT_CONSTRAINTS,
    files=lambda a: [(a["file"], a["sha256"])],
    rest=lambda a, extra: check_recipe(a, extra, "odds_mat"),
)
def load_odds_mat(
    file: str,
    recipe: str | dict = "cluster_random",
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    max_rows: int | None = None,
    sha256: str | None = None,
    data_dir: str | None = None,
    random_state: int = 0,
    **recipe_params,
) -> ConceptDataset:
    """A continual scenario built from one ODDS ``.mat`` file (``file`` is looked for in the data
    directories, then relative to the current directory; ``sha256``, when given, is checked).

    The parameters are those of :func:`clad.datasets.load_adbench`.
    """
    from .flat import check_flat, scenario_from_flat

    path = locate(file, data_dir, sha256=sha256)
    X, y = check_flat(*read_mat_xy(path), f"odds_mat: {str(path)!r}")
    name = os.path.splitext(os.path.basename(str(file)))[0]
    return scenario_from_flat(
        X,
        y,
        name=name,
        loader="odds_mat",
        recipe=recipe,
        test_size=test_size,
        contamination=contamination,
        order=order,
        difficulty=difficulty,
        max_rows=max_rows,
        random_state=random_state,
        metadata={"file": str(path)},
        **recipe_params,
    )
