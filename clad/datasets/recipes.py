"""Concept recipes: turn one flat labelled dataset ``(X, y)`` into concepts (groups of row indices).

The three clustering recipes follow Faber et al. (IEEE Access 2024), who built continual scenarios
from flat datasets this way. In all three the *normal* rows are clustered into ``n_concepts``
concepts with scikit-learn's :class:`~sklearn.cluster.KMeans` (``n_init=10``, on features min-max
scaled to [0, 1] on the normal rows); they differ in where the anomalies go:

``cluster_random``     anomalies shuffled and dealt out to the concepts in equal shares
``cluster_closest``    each anomaly goes to the concept whose cluster centre is closest
``cluster_clustered``  anomalies clustered into ``n_concepts`` clusters (k-means), and each anomaly
                       cluster given to one concept through a seeded random one-to-one assignment
``faber2024``          the published generator of Faber et al., step for step (:mod:`clad.datasets.faber`;
                       run through :func:`clad.datasets.flat.scenario_from_flat`, as it makes its own split)
``chunks``             no clustering: the rows, in file order, cut into ``n_concepts`` consecutive parts
                       (for data kept in stream order, such as ADBench's http and smtp)

For large data the scaler and k-means are fitted on at most ``fit_rows`` normal rows drawn at random,
and cluster labels are then predicted in blocks, so no scaled copy of the whole array is made.
k-means runs single-threaded (``threadpoolctl``): these fits are small, and many threads on a busy
machine, or in runs going on in parallel, make them many times slower, not faster.
Concept names are ``cluster_0`` .. (``chunk_0`` .. for ``chunks``).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = np.vstack([rng.normal(c, 0.1, size=(50, 2)) for c in (0, 5, 10)] + [rng.normal(2.5, 3, size=(9, 2))])
>>> y = np.r_[np.zeros(150, int), np.ones(9, int)]
>>> groups = make_groups(X, y, "cluster_random", n_concepts=3, random_state=0)
>>> sorted(len(g.normal) for g in groups), [len(g.anomalies) for g in groups]
([50, 50, 50], [3, 3, 3])
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from . import _checks
from .build import ConceptRows

__all__ = ["RECIPES", "FABER", "make_groups", "subsample"]

#: the published generator's recipe name (:mod:`clad.datasets.faber`)
FABER = "faber2024"
RECIPES = ("cluster_random", "cluster_closest", "cluster_clustered", "chunks", FABER)
_BLOCK = 1 << 16


def _index_dtype(n: int):
    """int32 row indices when they fit (half the memory of int64 for a large file)."""
    return np.int32 if n < 2**31 - 1 else np.int64


def subsample(y: np.ndarray, max_rows: int | None, rng: np.random.Generator) -> np.ndarray | None:
    """Sorted indices of at most ``max_rows`` rows keeping the anomaly share (None = all rows)."""
    n = len(y)
    if max_rows is None or max_rows >= n:
        return None
    parts = []
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        k = int(round(max_rows * len(idx) / n))
        parts.append(rng.choice(idx, size=min(k, len(idx)), replace=False))
    return np.sort(np.concatenate(parts))


def _predict_blocks(model, scaler, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    out = np.empty(len(idx), dtype=np.int32)
    for start in range(0, len(idx), _BLOCK):
        block = X[idx[start:start + _BLOCK]].astype(np.float64, copy=False)
        out[start:start + _BLOCK] = model.predict(scaler.transform(block))
    return out


def _fit_kmeans(X, idx, k, fit_rows, rng, what):
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import MinMaxScaler

    if len(idx) < k:
        raise DataError(f"cannot cluster {len(idx)} {what} rows into n_concepts={k} clusters; use fewer concepts")
    sample = idx if len(idx) <= fit_rows else np.sort(rng.choice(idx, size=fit_rows, replace=False))
    Xs = X[sample].astype(np.float64, copy=False)
    scaler = MinMaxScaler().fit(Xs)
    seed = int(rng.integers(2**31 - 1))
    model = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(scaler.transform(Xs))
    return model, scaler


def make_groups(X: np.ndarray, y: np.ndarray, recipe: str = "cluster_random", n_concepts: int = 5,
                random_state: int = 0, rows: np.ndarray | None = None, fit_rows: int = 50_000,
                loader: str = "recipe") -> list[ConceptRows]:
    """Row-index groups (one per concept) made by ``recipe`` (see the module docstring).

    ``rows`` restricts the recipe to those row indices (e.g. a :func:`subsample`).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _make_groups(X, y, recipe, n_concepts, random_state, rows, fit_rows, loader)


def _make_groups(X, y, recipe, n_concepts, random_state, rows, fit_rows, loader) -> list[ConceptRows]:
    recipe = _checks.choice(loader, "recipe", recipe, RECIPES)
    if recipe == FABER:
        raise DataError(f"{loader}: recipe {FABER!r} makes its own train/test split; build it with "
                        "clad.datasets.flat.scenario_from_flat or clad.datasets.faber.scenario_faber")
    k = _checks.integer(loader, "n_concepts", n_concepts, minimum=1)
    fit_rows = _checks.integer(loader, "fit_rows", fit_rows, minimum=10)
    seed = _checks.seed(loader, random_state)
    rng = np.random.default_rng(seed)
    y = np.asarray(y)
    itype = _index_dtype(len(y))
    if rows is None:
        normal, anomalies = np.flatnonzero(y == 0).astype(itype), np.flatnonzero(y == 1).astype(itype)
        rows = np.arange(len(y), dtype=itype) if recipe == "chunks" else None
    else:
        rows = np.asarray(rows).astype(itype)
        yr = np.take(y, rows)
        normal, anomalies = rows[yr == 0], rows[yr == 1]
        del yr
    if recipe == "chunks":
        bounds = np.linspace(0, len(rows), k + 1).astype(int)
        groups = []
        for i in range(k):
            part = rows[bounds[i]:bounds[i + 1]]
            lab = np.take(y, part)
            groups.append(ConceptRows(f"chunk_{i}", part[lab == 0], part[lab == 1]))
        return groups
    model, scaler = _fit_kmeans(X, normal, k, fit_rows, rng, "normal")
    normal_lab = _predict_blocks(model, scaler, X, normal)
    if recipe == "cluster_random":
        shuffled = rng.permutation(anomalies)
        anom_parts = [np.sort(p) for p in np.array_split(shuffled, k)]
    elif recipe == "cluster_closest":
        anom_lab = _predict_blocks(model, scaler, X, anomalies)
        anom_parts = [anomalies[anom_lab == c] for c in range(k)]
    else:  # cluster_clustered
        amodel, ascaler = _fit_kmeans(X, anomalies, k, fit_rows, rng, "anomalous")
        anom_lab = _predict_blocks(amodel, ascaler, X, anomalies)
        assign = rng.permutation(k)  # anomaly cluster a goes to concept assign[a]
        anom_parts = [anomalies[assign[anom_lab] == c] for c in range(k)]
    return [ConceptRows(f"cluster_{c}", normal[normal_lab == c], anom_parts[c]) for c in range(k)]
