"""Concept recipes: turn one flat labelled dataset ``(X, y)`` into concepts (groups of row indices).

What each recipe does (``cluster_random``, ``cluster_closest``, ``cluster_clustered`` after Faber et
al., ``faber2024`` the published generator itself, :mod:`clad.datasets.faber`, and ``chunks``, the
rows in file order, for data kept in stream order such as ADBench's http and smtp) and the forms a
loader's ``recipe`` value takes are in the datasets guide (``docs/guides/datasets.md``); adding one
is in CONTRIBUTING. A recipe is a class registered in :data:`RECIPES` with its own
``_parameter_constraints``; :func:`as_recipe` turns a loader's value into a recipe object, checked
once. Concept names are ``cluster_0`` .. (``chunk_0`` .. for ``chunks``).

For large data the scaler and k-means are fitted on at most ``fit_rows`` normal rows drawn at random,
and cluster labels are then predicted in blocks, so no scaled copy of the whole array is made.
k-means runs single-threaded (``threadpoolctl``): these fits are small, and many threads on a busy
machine, or in runs going on in parallel, make them many times slower, not faster.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = np.vstack([rng.normal(c, 0.1, size=(50, 2)) for c in (0, 5, 10)] + [rng.normal(2.5, 3, size=(9, 2))])
>>> y = np.r_[np.zeros(150, int), np.ones(9, int)]
>>> groups = make_groups(X, y, {"name": "cluster_random", "n_concepts": 3}, random_state=0)
>>> sorted(len(g.normal) for g in groups), [len(g.anomalies) for g in groups]
([50, 50, 50], [3, 3, 3])
"""

from __future__ import annotations

import inspect
from typing import Mapping, Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import CladValueError, DataError
from ..registry import Registry, did_you_mean
from ..validation import COUNT, Integral, Interval, StrOptions, Validated
from . import _checks
from .build import ConceptRows, make_dataset
from .faber import ANOMALY_SHUFFLES, ASSIGNMENTS, scenario_faber

__all__ = [
    "RECIPES",
    "FABER",
    "Recipe",
    "ClusterRandom",
    "ClusterClosest",
    "ClusterClustered",
    "Chunks",
    "Faber2024",
    "as_recipe",
    "make_groups",
    "subsample",
]

#: the published generator's recipe name (:mod:`clad.datasets.faber`)
FABER = "faber2024"
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
        block = X[idx[start : start + _BLOCK]].astype(np.float64, copy=False)
        out[start : start + _BLOCK] = model.predict(scaler.transform(block))
    return out


def _fit_kmeans(X, idx, k, fit_rows, rng, what):
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import MinMaxScaler

    if len(idx) < k:
        raise DataError(
            f"cannot cluster {len(idx)} {what} rows into n_concepts={k} clusters; use fewer concepts"
        )
    sample = idx if len(idx) <= fit_rows else np.sort(rng.choice(idx, size=fit_rows, replace=False))
    Xs = X[sample].astype(np.float64, copy=False)
    scaler = MinMaxScaler().fit(Xs)
    seed = int(rng.integers(2**31 - 1))
    model = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(scaler.transform(Xs))
    return model, scaler


def _rows(y, rows, all_rows: bool):
    """``(normal, anomalies, rows)`` as row indices of the smallest integer type."""
    itype = _index_dtype(len(y))
    if rows is None:
        normal, anomalies = (np.flatnonzero(y == c).astype(itype) for c in (0, 1))
        return normal, anomalies, (np.arange(len(y), dtype=itype) if all_rows else None)
    rows = np.asarray(rows).astype(itype)
    yr = np.take(y, rows)
    return rows[yr == 0], rows[yr == 1], rows


class Recipe(Validated, BaseEstimator):
    """A concept recipe: flat ``(X, y)`` -> concepts. ``__init__`` stores the parameters (checked by
    :func:`as_recipe` against ``_parameter_constraints``); :meth:`groups` gives one
    :class:`~clad.datasets.build.ConceptRows` per concept, which :meth:`dataset` splits and orders."""

    #: its registered name (what metadata records)
    name = "recipe"
    _parameter_constraints = {"n_concepts": [COUNT]}

    def __init__(self, n_concepts: int = 5):
        self.n_concepts = n_concepts

    def groups(self, X, y, random_state: int, rows=None) -> list[ConceptRows]:
        raise NotImplementedError  # pragma: no cover - abstract

    def dataset(
        self, X, y, *, name, loader, split, recipe_seed, split_seed, rows=None, metadata=None
    ):
        """The concepts of :meth:`groups` (seeded by ``recipe_seed``), split and ordered by
        :func:`~clad.datasets.build.make_dataset` (``split``: ``test_size``, ``contamination``,
        ``order``, ``difficulty`` and ``max_rows``, recorded; seeded by ``split_seed``)."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            groups = self.groups(X, y, recipe_seed, rows=rows)
        meta = dict(metadata or {})
        meta.update(recipe=self.name, n_concepts=self.n_concepts, max_rows=split["max_rows"])
        return make_dataset(
            X,
            y,
            groups,
            name=name,
            test_size=split["test_size"],
            contamination=split["contamination"],
            order=split["order"],
            difficulty=split["difficulty"],
            random_state=split_seed,
            metadata=meta,
            loader=loader,
        )


class Chunks(Recipe):
    """No clustering: the rows, in file order, cut into ``n_concepts`` consecutive parts."""

    name = "chunks"

    def groups(self, X, y, random_state: int, rows=None) -> list[ConceptRows]:
        y = np.asarray(y)
        _, _, rows = _rows(y, rows, all_rows=True)
        k = int(self.n_concepts)
        bounds = np.linspace(0, len(rows), k + 1).astype(int)
        groups = []
        for i in range(k):
            part = rows[bounds[i] : bounds[i + 1]]
            lab = np.take(y, part)
            groups.append(ConceptRows(f"chunk_{i}", part[lab == 0], part[lab == 1]))
        return groups


class _Clustering(Recipe):
    """The normal rows clustered into ``n_concepts`` concepts by k-means (fitted on at most
    ``fit_rows`` rows); a subclass says where the anomalies go (:meth:`anomaly_parts`)."""

    _parameter_constraints = {"fit_rows": [Interval(Integral, 10, None, closed="left")]}

    def __init__(self, n_concepts: int = 5, fit_rows: int = 50_000):
        self.n_concepts = n_concepts
        self.fit_rows = fit_rows

    def groups(self, X, y, random_state: int, rows=None) -> list[ConceptRows]:
        k, rng = int(self.n_concepts), np.random.default_rng(random_state)
        normal, anomalies, _ = _rows(np.asarray(y), rows, all_rows=False)
        model, scaler = _fit_kmeans(X, normal, k, int(self.fit_rows), rng, "normal")
        normal_lab = _predict_blocks(model, scaler, X, normal)
        parts = self.anomaly_parts(X, anomalies, k, model, scaler, rng)
        return [ConceptRows(f"cluster_{c}", normal[normal_lab == c], parts[c]) for c in range(k)]

    def anomaly_parts(self, X, anomalies, k, model, scaler, rng) -> list[np.ndarray]:
        raise NotImplementedError  # pragma: no cover


class ClusterRandom(_Clustering):
    """Anomalies shuffled and dealt out to the concepts in equal shares."""

    name = "cluster_random"

    def anomaly_parts(self, X, anomalies, k, model, scaler, rng):
        return [np.sort(p) for p in np.array_split(rng.permutation(anomalies), k)]


class ClusterClosest(_Clustering):
    """Each anomaly goes to the concept whose cluster centre is closest."""

    name = "cluster_closest"

    def anomaly_parts(self, X, anomalies, k, model, scaler, rng):
        lab = _predict_blocks(model, scaler, X, anomalies)
        return [anomalies[lab == c] for c in range(k)]


class ClusterClustered(_Clustering):
    """Anomalies clustered into ``n_concepts`` clusters, each given to one concept by a seeded
    random one-to-one assignment."""

    name = "cluster_clustered"

    def anomaly_parts(self, X, anomalies, k, model, scaler, rng):
        amodel, ascaler = _fit_kmeans(X, anomalies, k, int(self.fit_rows), rng, "anomalous")
        lab = _predict_blocks(amodel, ascaler, X, anomalies)
        assign = rng.permutation(k)  # anomaly cluster a goes to concept assign[a]
        return [anomalies[assign[lab] == c] for c in range(k)]


class Faber2024(Recipe):
    """The published generator of Faber et al. (:mod:`clad.datasets.faber`): it splits each concept
    itself, so a loader's ``test_size`` and ``contamination`` stay at their defaults."""

    name = FABER
    _parameter_constraints = {
        "size_per_concept": [COUNT],
        "assignment": [StrOptions(ASSIGNMENTS)],
        "kmeans_random_state": _checks.SEEDS,
        "anomaly_shuffle": [StrOptions(ANOMALY_SHUFFLES)],
    }

    def __init__(
        self,
        n_concepts: int = 5,
        size_per_concept: int = 1000,
        assignment: str = "random",
        kmeans_random_state: int = 42,
        anomaly_shuffle: str = "permutation",
    ):
        self.n_concepts = n_concepts
        self.size_per_concept = size_per_concept
        self.assignment = assignment
        self.kmeans_random_state = kmeans_random_state
        self.anomaly_shuffle = anomaly_shuffle

    def groups(self, X, y, random_state: int, rows=None) -> list[ConceptRows]:
        raise DataError(
            f"recipe {FABER!r} makes its own train/test split; build it with "
            "clad.datasets.flat.scenario_from_flat or clad.datasets.faber.scenario_faber"
        )

    def dataset(
        self, X, y, *, name, loader, split, recipe_seed, split_seed, rows=None, metadata=None
    ):
        defaults = {"test_size": 0.5, "contamination": 0.0}
        shown = ", ".join(f"{k}={split[k]!r}" for k, v in defaults.items() if split[k] != v)
        if shown:
            raise CladValueError(
                f"{loader}: {shown} does not apply to recipe='faber2024', which trains on the first "
                "3/5 of each concept's normal rows, keeps every anomaly for testing and clusters all "
                "rows; leave these at their defaults"
            )
        return scenario_faber(
            X,
            y,
            name=name,
            loader=loader,
            **self.get_params(),
            order=split["order"],
            difficulty=split["difficulty"],
            random_state=recipe_seed,
            rows=rows,
            metadata={**(metadata or {}), "max_rows": split["max_rows"]},
        )


RECIPES = Registry("recipe", methods=("groups",))
RECIPES.add(
    "cluster_random",
    ClusterRandom,
    "normal rows clustered by k-means; anomalies dealt out at random",
)
RECIPES.add(
    "cluster_closest", ClusterClosest, "normal rows clustered; each anomaly to its closest cluster"
)
RECIPES.add(
    "cluster_clustered",
    ClusterClustered,
    "normal rows and anomalies clustered; clusters matched at random",
)
RECIPES.add("chunks", Chunks, "the rows in file order, cut into consecutive parts")
RECIPES.add(FABER, Faber2024, "the published generator of Faber et al. (2024); makes its own split")


def as_recipe(
    recipe, loader: str = "recipe", params: Mapping | None = None, also: Sequence[str] = ()
) -> Recipe:
    """The recipe object of ``recipe`` (a registered name, a table ``{"name": ..., parameter: value}``,
    or a :class:`Recipe`, returned as it is) with ``params`` (the recipe's parameters given beside it),
    its names and values checked once: a :class:`~clad.errors.CladValueError` names the loader, the
    key and what is allowed (the recipe's parameters and ``also``, the caller's own keys).

    >>> as_recipe({"name": "cluster_closest", "n_concepts": 3})
    ClusterClosest(n_concepts=3)
    >>> as_recipe("chunks", "adbench", {"fit_rows": 100})
    Traceback (most recent call last):
    ...
    clad.errors.CladValueError: adbench: unknown parameter 'fit_rows'; allowed: n_concepts (the recipe 'chunks' takes n_concepts)
    """
    params = dict(params or {})
    if isinstance(recipe, Recipe) and not params:
        return recipe
    if isinstance(recipe, Mapping):
        table = dict(recipe)
        recipe = table.pop("name", None)
        if not isinstance(recipe, str):
            raise CladValueError(
                f"{loader}: recipe={dict(table)!r} has no 'name'; expected a recipe name "
                f"({', '.join(RECIPES.names())}) or a table with 'name' and its parameters"
            )
        both = sorted(set(table) & set(params))
        if both:
            raise CladValueError(
                f"{loader}: {both[0]!r} is given in the recipe table and beside it; give it once"
            )
        params = {**table, **params}
    if not isinstance(recipe, str):
        raise CladValueError(
            f"{loader}: recipe={recipe!r}; expected a recipe name ({', '.join(RECIPES.names())}) "
            "or a table with 'name' and its parameters"
        )
    _checks.choice(loader, "recipe", recipe, RECIPES.names())
    cls = RECIPES.resolve(recipe)
    own = list(inspect.signature(cls).parameters)
    for key in params:
        if key not in own:
            allowed = [*own, *(k for k in also if k not in own and k != "recipe")]
            raise CladValueError(
                f"{loader}: unknown parameter {key!r}{did_you_mean(key, allowed)}; allowed: "
                f"{', '.join(allowed)} (the recipe {recipe!r} takes {', '.join(own) or 'none'})"
            )
    obj = cls(**params)
    try:
        obj._validate_params()
    except CladValueError as exc:
        raise CladValueError(f"{loader}: {str(exc).split(': ', 1)[-1]}") from None
    return obj


def make_groups(
    X: np.ndarray,
    y: np.ndarray,
    recipe="cluster_random",
    random_state: int = 0,
    rows: np.ndarray | None = None,
    loader: str = "recipe",
) -> list[ConceptRows]:
    """Row-index groups (one per concept) made by ``recipe`` (a name, a table with its parameters,
    or a :class:`Recipe`; see the module docstring). ``rows`` restricts the recipe to those row
    indices (e.g. a :func:`subsample`)."""
    from threadpoolctl import threadpool_limits

    recipe = as_recipe(recipe, loader)
    seed = _checks.seed(loader, random_state)
    with threadpool_limits(limits=1):
        return recipe.groups(X, y, seed, rows=rows)
