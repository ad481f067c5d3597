"""The concept generator of Faber et al. (IEEE Access 2024), step for step as its published code
(github.com/lifelonglab/lifelong-anomaly-detection-scenarios; pyCLAD's scenarios were made with it).

It is the recipe ``faber2024`` beside clad's own recipes (:mod:`clad.datasets.recipes`). Its steps
(k-means on the features as given, the ``size_per_concept`` rows nearest each centroid, the capped
anomalies placed by ``assignment``, the seeded shuffles), where it matches the published code and
the one deliberate difference (``anomaly_shuffle``) are in the protocol guide
(``docs/guides/protocol.md``, "The Faber et al. (2024) concept generator"). Each shuffle is drawn
from ``random_state`` (independent child seeds for the normal rows, the anomalies and the test
sets). Concept names are ``cluster_0`` .. ``cluster_{k-1}``.

A small case (two tight groups of normal rows, four anomalies):

>>> import numpy as np
>>> X = np.array([[0.0], [0.1], [0.2], [0.3], [0.4], [10.0], [10.1], [10.2], [10.3], [10.4],
...               [5.0], [5.1], [5.2], [5.3]])
>>> y = np.r_[np.zeros(10, int), np.ones(4, int)]
>>> cs = faber_concepts(X, y, n_concepts=2, size_per_concept=5, assignment="random", random_state=0)
>>> [(len(c.train), len(c.test), int(y[c.test].sum())) for c in cs]
[(3, 4, 2), (3, 4, 2)]
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ..core.concepts import Concept, ConceptDataset
from ..errors import DataError
from . import _checks
from .build import order_concepts, take_rows

__all__ = [
    "FaberConcept",
    "ASSIGNMENTS",
    "ANOMALY_SHUFFLES",
    "faber_concepts",
    "nearest_in_clusters",
    "scenario_faber",
    "published_kmeans",
]

ASSIGNMENTS = ("random", "clustered_random", "clustered_closest")
ANOMALY_SHUFFLES = ("permutation", "published")


@dataclass(frozen=True)
class FaberConcept:
    """One concept as row indices into the flat array: ``train`` (normal rows) and ``test``
    (normal test rows and anomalies), each in its (shuffled) published order."""

    name: str
    train: np.ndarray
    test: np.ndarray


def published_kmeans(k: int, random_state: int = 42):
    """The k-means of the published generator (every setting written out)."""
    from sklearn.cluster import KMeans

    return KMeans(
        n_clusters=k,
        init="k-means++",
        n_init=10,
        max_iter=300,
        tol=1e-4,
        verbose=0,
        random_state=random_state,
        copy_x=True,
        algorithm="lloyd",
    )


def nearest_in_clusters(
    X: np.ndarray,
    rows: np.ndarray,
    k: int,
    size: int,
    kmeans_random_state: int = 42,
    what: str = "normal",
    loader: str = "faber2024",
) -> list[np.ndarray]:
    """For each k-means cluster ``c`` of ``X[rows]``: the at most ``size`` rows assigned to ``c``
    nearest its centroid, nearest first (a stable sort: equal distances keep the rows' order).

    >>> X = np.array([[0.0], [3.0], [1.0], [10.0], [12.0], [11.5]])
    >>> [r.tolist() for r in nearest_in_clusters(X, np.arange(6), 2, 2)]
    [[2, 0], [5, 4]]
    """
    from threadpoolctl import threadpool_limits

    if len(rows) < k:
        raise DataError(
            f"{loader}: cannot cluster {len(rows)} {what} rows into n_concepts={k} clusters; "
            "use fewer concepts"
        )
    data = X[rows]
    with threadpool_limits(limits=1):
        model = published_kmeans(k, kmeans_random_state)
        labels = model.fit_predict(data)
        dist = model.transform(data)
    own = dist[np.arange(len(rows)), labels]
    out = []
    for c in range(k):
        members = np.flatnonzero(labels == c)
        nearest = members[np.argsort(own[members], kind="stable")][:size]
        out.append(rows[nearest])
    return out


def faber_concepts(
    X,
    y,
    n_concepts: int = 5,
    size_per_concept: int = 1000,
    assignment: str = "random",
    kmeans_random_state: int = 42,
    anomaly_shuffle: str = "permutation",
    random_state: int = 0,
    rows: np.ndarray | None = None,
    loader: str = "faber2024",
) -> list[FaberConcept]:
    """The concepts of the published generator (every step: the protocol guide, module docstring).

    ``rows`` restricts the recipe to those row indices of ``X`` (default: all rows).
    """
    k = _checks.integer(loader, "n_concepts", n_concepts, minimum=1)
    size = _checks.integer(loader, "size_per_concept", size_per_concept, minimum=1)
    assignment = _checks.choice(loader, "assignment", assignment, ASSIGNMENTS)
    anomaly_shuffle = _checks.choice(loader, "anomaly_shuffle", anomaly_shuffle, ANOMALY_SHUFFLES)
    km_seed = _checks.seed(loader, kmeans_random_state)
    seed = _checks.seed(loader, random_state)
    y = np.asarray(y)
    rows = np.arange(len(y)) if rows is None else np.asarray(rows, dtype=np.int64)
    normal, anomalies = rows[y[rows] == 0], rows[y[rows] == 1]
    normal_ss, anom_ss, test_ss = np.random.SeedSequence(seed).spawn(3)
    normal_rng, test_rng = np.random.default_rng(normal_ss), np.random.default_rng(test_ss)
    normal_parts = [
        normal_rng.permutation(p)
        for p in nearest_in_clusters(X, normal, k, size, km_seed, "normal", loader)
    ]
    per_concept = min(int(len(anomalies) / k), int(2 * size / 5))
    if per_concept < 1:
        raise DataError(
            f"{loader}: {len(anomalies)} anomalies and size_per_concept={size} give each of the "
            f"{k} concepts min(int({len(anomalies)} / {k}), int(2 * {size} / 5)) = {per_concept} "
            "anomalies; a test set needs at least one"
        )
    if assignment != "random":
        clusters = nearest_in_clusters(X, anomalies, k, per_concept, km_seed, "anomalous", loader)
    if assignment == "random" and anomaly_shuffle == "published":
        # Python's random.shuffle on a 2-D NumPy array, as published: its swaps go through row
        # views, so a row is copied over another instead of exchanged (seeded here)
        col = anomalies.reshape(-1, 1).copy()
        random.Random(int(anom_ss.generate_state(1)[0])).shuffle(col)
        anom_parts = [col[per_concept * i : per_concept * (i + 1), 0] for i in range(k)]
    elif assignment == "random":
        shuffled = np.random.default_rng(anom_ss).permutation(anomalies)
        anom_parts = [shuffled[per_concept * i : per_concept * (i + 1)] for i in range(k)]
    elif assignment == "clustered_random":
        anom_parts = [clusters[i] for i in np.random.default_rng(anom_ss).permutation(k)]
    else:  # clustered_closest: greedy, concept by concept, the nearest remaining anomaly-cluster
        # mean (Euclidean, to the mean of the concept's normal rows; ties to the lowest cluster)
        left, means, anom_parts = list(range(k)), [X[c].mean(axis=0) for c in clusters], []
        for part in normal_parts:
            centre = X[part].mean(axis=0)
            best = left[int(np.argmin([np.linalg.norm(centre - means[i]) for i in left]))]
            anom_parts.append(clusters[best])
            left.remove(best)
    out = []
    for c, (part, anom) in enumerate(zip(normal_parts, anom_parts)):
        split = int(3 * len(part) / 5)
        test = test_rng.permutation(np.concatenate([part[split:], anom]))
        out.append(FaberConcept(f"cluster_{c}", part[:split], test))
    return out


def scenario_faber(
    X,
    y,
    *,
    name: str,
    loader: str = "faber2024",
    n_concepts: int = 5,
    size_per_concept: int = 1000,
    assignment: str = "random",
    kmeans_random_state: int = 42,
    anomaly_shuffle: str = "permutation",
    order: str = "given",
    difficulty: str = "iforest_auc",
    random_state: int = 0,
    rows: np.ndarray | None = None,
    metadata: dict | None = None,
) -> ConceptDataset:
    """The :class:`~clad.core.concepts.ConceptDataset` of :func:`faber_concepts`, concepts put in
    ``order`` (:func:`clad.datasets.build.order_concepts`); rows keep their published (shuffled) order.

    ``random_state`` seeds the shuffles and, independently, the ``"random"`` concept order.
    """
    seed = _checks.seed(loader, random_state)
    recipe_ss, order_ss = np.random.SeedSequence(seed).spawn(2)
    params = dict(
        n_concepts=n_concepts,
        size_per_concept=size_per_concept,
        assignment=assignment,
        kmeans_random_state=kmeans_random_state,
        anomaly_shuffle=anomaly_shuffle,
    )
    recipe_seed = int(recipe_ss.generate_state(1)[0])
    concepts = faber_concepts(X, y, **params, random_state=recipe_seed, rows=rows, loader=loader)
    y = np.asarray(y)
    pairs = [
        (
            Concept(c.name, take_rows(X, c.train), y[c.train].astype(np.int8)),
            Concept(c.name, take_rows(X, c.test), y[c.test].astype(np.int8)),
        )
        for c in concepts
    ]
    meta = {**(metadata or {}), "recipe": "faber2024", **params, "random_state": seed}
    return order_concepts(
        pairs,
        order=order,
        difficulty=difficulty,
        random_state=order_ss,
        name=name,
        metadata=meta,
        loader=loader,
    )
