"""A flat labelled dataset ``(X, y)`` -> a continual scenario: recipe, then split and order.

Shared by the loaders of datasets without native concepts (ADBench, ODDS). Their parameters read
the same in every one of them and in a spec file (the datasets guide, ``docs/guides/datasets.md``):
``recipe`` and the recipe's own parameters (which may stand beside it as the loader's keys), the
split (``test_size``, ``contamination``) and order (``order``, ``difficulty``) of
:mod:`clad.datasets.build`, an optional stratified subsample of ``max_rows`` rows first, and one
``random_state`` whose independent children seed the subsample, the recipe and the split.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 3)); y = (rng.random(300) < 0.1).astype(int)
>>> ds = scenario_from_flat(X, y, name="toy", n_concepts=3, random_state=0)
>>> ds.train_names
('cluster_0', 'cluster_1', 'cluster_2')
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..validation import Integral, Interval
from . import _checks
from .build import SPLIT_CONSTRAINTS
from .recipes import Recipe, as_recipe, subsample

__all__ = ["check_flat", "scenario_from_flat", "FLAT_CONSTRAINTS", "check_recipe"]


#: parameters of every loader of flat data (``adbench``, ``odds_mat``): the split's, ``max_rows`` and
#: the recipe (its own parameters are the recipe's: :func:`check_recipe`)
FLAT_CONSTRAINTS = {
    **SPLIT_CONSTRAINTS,
    "recipe": [str, dict, Recipe],
    "max_rows": [None, Interval(Integral, 2, None, closed="left")],
    "sha256": [None, str],
}


def check_recipe(arguments: dict, rest: dict, loader: str) -> dict:
    """``{"recipe": the recipe object}`` of a flat loader's call: its ``recipe`` with the keys its
    signature leaves to ``**recipe_params`` (``rest``), checked once
    (:func:`~clad.datasets.recipes.as_recipe`; a key that is neither the loader's nor the recipe's is
    refused with the loader's keys among the allowed ones)."""
    own = [k for k in arguments if k not in rest]
    return {"recipe": as_recipe(arguments.get("recipe", "cluster_random"), loader, rest, also=own)}


def first_non_finite(X: np.ndarray, block: int = 1 << 16) -> tuple[int, int] | None:
    """``(row, column)`` of the first NaN or infinity of a 2-D array (read in blocks of rows), or None."""
    if X.dtype.kind not in "fc":
        return None
    for start in range(0, X.shape[0], block):
        part = X[start : start + block]
        if not np.isfinite(part).all():
            r, c = np.argwhere(~np.isfinite(part))[0]
            return start + int(r), int(c)
    return None


def check_flat(X, y, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Check a flat ``X`` (2-D finite numbers) and ``y`` (0/1, one per row); return them (y as int8).

    ``X`` is returned as it is (no copy, whatever its number type). A NaN or infinity is reported by
    its row and column (counted from 0 as in the file's array), before any recipe (or scikit-learn)
    sees it.

    >>> check_flat(np.array([[0.0, 1.0], [np.nan, 2.0]]), [0, 1], "adbench: 'x.npz'")
    Traceback (most recent call last):
    ...
    clad.errors.DataError: adbench: 'x.npz': X has nan at row 1 (counted from 0), column 0 (counted from 0); expected finite numbers: fix or drop that row
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataError(f"{what}: X must be 2-D (rows x features), got shape {X.shape}")
    if X.dtype.kind not in "fiub":
        raise DataError(f"{what}: X has dtype {X.dtype}; expected numbers")
    y = np.asarray(y).ravel()
    if y.shape[0] != X.shape[0]:
        raise DataError(
            f"{what}: {y.shape[0]} labels for {X.shape[0]} rows; expected one label per row"
        )
    if y.dtype.kind not in "fiub":
        raise DataError(f"{what}: labels have dtype {y.dtype}; expected 0 (normal) or 1 (anomaly)")
    bad = first_non_finite(X)
    if bad is not None:
        r, c = bad
        raise DataError(
            f"{what}: X has {float(X[r, c])!r} at row {r} (counted from 0), column {c} (counted from "
            "0); expected finite numbers: fix or drop that row"
        )
    if not ((y == 0) | (y == 1)).all():  # no sorted copy of y, unlike np.unique
        shown = ", ".join(repr(v.item()) for v in np.unique(y)[:6])
        raise DataError(f"{what}: labels must be 0 (normal) or 1 (anomaly); found {shown}")
    return X, y.astype(np.int8)


def scenario_from_flat(
    X,
    y,
    *,
    name: str,
    loader: str = "dataset",
    recipe="cluster_random",
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    max_rows: int | None = None,
    random_state: int = 0,
    metadata: dict | None = None,
    **recipe_params,
):
    """Build the :class:`~clad.core.concepts.ConceptDataset` of a flat dataset (see the module
    docstring): ``recipe`` (a name, a table, or a :class:`~clad.datasets.recipes.Recipe`) with
    ``recipe_params`` beside it, the split, the order, an optional subsample of ``max_rows``."""
    X, y = check_flat(X, y, name)
    recipe = as_recipe(recipe, loader, recipe_params)
    seed = _checks.seed(loader, random_state)
    max_rows = _checks.integer(loader, "max_rows", max_rows, minimum=2, allow_none=True)
    sub_ss, recipe_ss, split_ss = np.random.SeedSequence(seed).spawn(3)
    rows = subsample(y, max_rows, np.random.default_rng(sub_ss))
    split = {
        "test_size": test_size,
        "contamination": contamination,
        "order": order,
        "difficulty": difficulty,
        "max_rows": max_rows,
    }
    return recipe.dataset(
        X,
        y,
        name=name,
        loader=loader,
        split=split,
        rows=rows,
        metadata=metadata,
        recipe_seed=int(recipe_ss.generate_state(1)[0]),
        split_seed=int(split_ss.generate_state(1)[0]),
    )
