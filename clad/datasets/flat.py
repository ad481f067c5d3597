"""A flat labelled dataset ``(X, y)`` -> a continual scenario: recipe, then split and order.

Shared by the loaders of datasets without native concepts (ADBench, ODDS, a table without a concept
column). The parameters read the same in every one of them and in a spec file:

``recipe``, ``n_concepts``, ``fit_rows``   how concepts are made (:mod:`clad.datasets.recipes`)
``size_per_concept``, ``assignment``,      parameters of the ``faber2024`` recipe, the published generator
``kmeans_random_state``, ``anomaly_shuffle``  of Faber et al. (:mod:`clad.datasets.faber`); it makes its
                                           own split (3/5 of each concept trains), so ``test_size``,
                                           ``contamination`` and ``fit_rows`` stay at their defaults
``test_size``, ``contamination``           the split of each concept (:mod:`clad.datasets.build`)
``order``, ``difficulty``                  the concept order (:mod:`clad.datasets.build`)
``max_rows``                               optional stratified subsample of the rows first
``random_state``                           one seed; subsample, recipe and split get independent children

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 3)); y = (rng.random(300) < 0.1).astype(int)
>>> ds = scenario_from_flat(X, y, name="toy", n_concepts=3, random_state=0)
>>> ds.train_names
('cluster_0', 'cluster_1', 'cluster_2')
"""

from __future__ import annotations

import numpy as np

from ..errors import CladValueError, DataError
from ..validation import COUNT, Integral, Interval, StrOptions
from . import _checks
from .build import SPLIT_CONSTRAINTS, make_dataset
from .faber import ANOMALY_SHUFFLES, ASSIGNMENTS, scenario_faber
from .recipes import FABER, RECIPES, make_groups, subsample

__all__ = ["check_flat", "scenario_from_flat", "FLAT_CONSTRAINTS"]


#: parameters of every loader of flat data (``adbench``, ``odds_mat``): the split's and the recipe's
FLAT_CONSTRAINTS = {
    **SPLIT_CONSTRAINTS, "recipe": [StrOptions(RECIPES)], "n_concepts": [COUNT],
    "max_rows": [None, Interval(Integral, 2, None, closed="left")], "fit_rows": [Interval(Integral, 10, None, closed="left")],
    "size_per_concept": [COUNT], "assignment": [StrOptions(ASSIGNMENTS)], "kmeans_random_state": _checks.SEEDS,
    "anomaly_shuffle": [StrOptions(ANOMALY_SHUFFLES)], "sha256": [None, str],
}

def first_non_finite(X: np.ndarray, block: int = 1 << 16) -> tuple[int, int] | None:
    """``(row, column)`` of the first NaN or infinity of a 2-D array (read in blocks of rows), or None."""
    if X.dtype.kind not in "fc":
        return None
    for start in range(0, X.shape[0], block):
        part = X[start:start + block]
        if not np.isfinite(part).all():
            r, c = np.argwhere(~np.isfinite(part))[0]
            return start + int(r), int(c)
    return None


def check_flat(X, y, what: str, columns=None, row_name=None) -> tuple[np.ndarray, np.ndarray]:
    """Check a flat ``X`` (2-D finite numbers) and ``y`` (0/1, one per row); return them (y as int8).

    ``X`` is returned as it is (no copy, whatever its number type). A NaN or infinity is reported by
    its row and column in the file, before any recipe (or scikit-learn) sees it: ``columns`` names
    the columns, ``row_name(i)`` says where array row ``i`` is in the file (default: ``row i``,
    counted from 0 as in the file's array).

    >>> check_flat(np.array([[0.0, 1.0], [np.nan, 2.0]]), [0, 1], "adbench: 'x.npz'", columns=["a", "b"])
    Traceback (most recent call last):
    ...
    clad.errors.DataError: adbench: 'x.npz': X has nan at row 1 (counted from 0), column 'a' (index 0); expected finite numbers: fix or drop that row
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataError(f"{what}: X must be 2-D (rows x features), got shape {X.shape}")
    if X.dtype.kind not in "fiub":
        raise DataError(f"{what}: X has dtype {X.dtype}; expected numbers")
    y = np.asarray(y).ravel()
    if y.shape[0] != X.shape[0]:
        raise DataError(f"{what}: {y.shape[0]} labels for {X.shape[0]} rows; expected one label per row")
    if y.dtype.kind not in "fiub":
        raise DataError(f"{what}: labels have dtype {y.dtype}; expected 0 (normal) or 1 (anomaly)")
    bad = first_non_finite(X)
    if bad is not None:
        r, c = bad
        where = row_name(r) if row_name is not None else f"row {r} (counted from 0)"
        col = f"column {columns[c]!r} (index {c})" if columns is not None else f"column {c} (counted from 0)"
        raise DataError(f"{what}: X has {float(X[r, c])!r} at {where}, {col}; expected finite numbers: fix or drop that row")
    if not ((y == 0) | (y == 1)).all():  # no sorted copy of y, unlike np.unique
        shown = ", ".join(repr(v.item()) for v in np.unique(y)[:6])
        raise DataError(f"{what}: labels must be 0 (normal) or 1 (anomaly); found {shown}")
    return X, y.astype(np.int8)


def _no_split_params(loader: str, test_size, contamination, fit_rows) -> None:
    """The faber2024 recipe splits each concept itself and clusters every row: say so if asked otherwise."""
    given = {k: v for k, v, default in (("test_size", test_size, 0.5), ("contamination", contamination, 0.0),
                                        ("fit_rows", fit_rows, 50_000)) if v != default}
    if given:
        shown = ", ".join(f"{k}={v!r}" for k, v in given.items())
        raise CladValueError(f"{loader}: {shown} does not apply to recipe='faber2024', which trains on the first "
                             "3/5 of each concept's normal rows, keeps every anomaly for testing and clusters all "
                             "rows; leave these at their defaults")


def scenario_from_flat(X, y, *, name: str, loader: str = "dataset", recipe: str = "cluster_random",
                       n_concepts: int = 5, test_size: float = 0.5, contamination: float = 0.0,
                       order: str = "given", difficulty: str = "iforest_auc", max_rows: int | None = None,
                       fit_rows: int = 50_000, random_state: int = 0, metadata: dict | None = None,
                       size_per_concept: int = 1000, assignment: str = "random", kmeans_random_state: int = 42,
                       anomaly_shuffle: str = "permutation"):
    """Build the :class:`~clad.core.concepts.ConceptDataset` of a flat dataset (see the module docstring)."""
    X, y = check_flat(X, y, name)
    seed = _checks.seed(loader, random_state)
    max_rows = _checks.integer(loader, "max_rows", max_rows, minimum=2, allow_none=True)
    sub_ss, recipe_ss, split_ss = np.random.SeedSequence(seed).spawn(3)
    rows = subsample(y, max_rows, np.random.default_rng(sub_ss))
    if recipe == FABER:
        _no_split_params(loader, test_size, contamination, fit_rows)
        meta = dict(metadata or {})
        meta["max_rows"] = max_rows
        return scenario_faber(X, y, name=name, loader=loader, n_concepts=n_concepts,
                              size_per_concept=size_per_concept, assignment=assignment,
                              kmeans_random_state=kmeans_random_state, anomaly_shuffle=anomaly_shuffle, order=order,
                              difficulty=difficulty, random_state=int(recipe_ss.generate_state(1)[0]), rows=rows,
                              metadata=meta)
    groups = make_groups(X, y, recipe, n_concepts, int(recipe_ss.generate_state(1)[0]), rows=rows,
                         fit_rows=fit_rows, loader=loader)
    meta = dict(metadata or {})
    meta.update(recipe=recipe, n_concepts=n_concepts, max_rows=max_rows)
    return make_dataset(X, y, groups, name=name, test_size=test_size, contamination=contamination, order=order,
                        difficulty=difficulty, random_state=int(split_ss.generate_state(1)[0]), metadata=meta,
                        loader=loader)
