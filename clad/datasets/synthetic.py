"""A seeded synthetic continual-AD dataset: Gaussian concepts that move, each with its own anomalies.

Concept ``k`` is a Gaussian blob with centre ``mu_k`` (centres drawn at least ``separation`` apart)
and scale ``sigma_k``. Its anomalies lie on a shell ``r * sigma_k`` away from ``mu_k`` with
``r`` in ``[anomaly_radius, anomaly_radius + 2]``: obvious to a detector that knows concept ``k``,
but about as far from any *other* concept as ``k``'s normal rows are. So a detector that forgot
concept ``k`` ranks its anomalies near chance: forgetting is real and visible in R.
"""

from __future__ import annotations

import numpy as np

from ..core.concepts import Concept, ConceptDataset
from ..validation import COUNT, SEED, Integral, Interval, Real, declare

__all__ = ["make_synthetic", "synthetic_nbytes"]


def synthetic_nbytes(args: dict) -> int | None:
    """n_concepts x (n_train + n_test) x n_features x 8 bytes"""
    try:
        n = [int(args[k]) for k in ("n_concepts", "n_train", "n_test", "n_features")]
    except (KeyError, TypeError, ValueError):
        return None
    return n[0] * (n[1] + n[2]) * n[3] * 8


@declare(
    {
        "n_concepts": [COUNT],
        "n_features": [COUNT],
        "n_train": [COUNT],
        "n_test": [Interval(Integral, 2, None, closed="left")],
        "anomaly_fraction": [Interval(Real, 0.0, 1.0, closed="neither")],
        "separation": [Interval(Real, 0.0, None, closed="neither")],
        "anomaly_radius": [Interval(Real, 0.0, None, closed="neither")],
        "random_state": [None, SEED],
    },
    nbytes=synthetic_nbytes,
)
def make_synthetic(
    n_concepts: int = 4,
    n_features: int = 8,
    n_train: int = 500,
    n_test: int = 400,
    anomaly_fraction: float = 0.1,
    separation: float = 8.0,
    anomaly_radius: float = 4.0,
    random_state: int | None = 0,
    order: str = "given",
) -> ConceptDataset:
    """Build the dataset: concepts ``C0 .. C{n-1}``, trained in that order, tested on all.

    Parameters
    ----------
    n_concepts, n_features : int
    n_train : int
        Normal training rows per concept.
    n_test : int
        Test rows per concept, of which ``round(anomaly_fraction * n_test)`` are anomalies.
    anomaly_fraction : float in (0, 1)
    separation : float
        Minimum distance between concept centres, in units of the largest scale.
    anomaly_radius : float
        Inner radius of the anomaly shell, in units of the concept's scale.
    random_state : int
        Seed; the same seed gives the same arrays, bit for bit.
    order : str, default "given"
        Concept order (:func:`clad.datasets.build.order_concepts`): ``"given"`` keeps ``C0 .. C{n-1}``;
        ``"random"`` draws a permutation from ``random_state``; ``"random:<seed>"`` is the permutation
        fixed by ``<seed>``.

    Examples
    --------
    >>> make_synthetic(n_concepts=3, n_features=2, n_train=10, n_test=10, order="random:5").train_names
    ('C1', 'C2', 'C0')

    >>> ds = make_synthetic(n_concepts=3, n_features=2, n_train=10, n_test=10, random_state=1)
    >>> ds.train_names, ds.test[0].X.shape, int(ds.test[0].y.sum())
    (('C0', 'C1', 'C2'), (10, 2), 1)
    """
    n_anom = min(max(1, int(round(anomaly_fraction * n_test))), n_test - 1)
    rng = np.random.default_rng(random_state)
    scales = rng.uniform(0.6, 1.4, size=n_concepts)
    # centres on a random walk of steps of length `separation`, re-drawn until far enough apart
    centres = np.zeros((n_concepts, n_features))
    gap = separation * scales.max()
    for k in range(1, n_concepts):
        for _ in range(1000):
            step = rng.normal(size=n_features)
            cand = centres[k - 1] + gap * step / np.linalg.norm(step)
            if np.min(np.linalg.norm(centres[:k] - cand, axis=1)) >= gap * 0.99:
                break
        centres[k] = cand

    def shell(k: int, n: int) -> np.ndarray:
        direction = rng.normal(size=(n, n_features))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        radius = rng.uniform(anomaly_radius, anomaly_radius + 2.0, size=(n, 1))
        return centres[k] + scales[k] * radius * direction

    train, test = [], []
    for k in range(n_concepts):
        name = f"C{k}"
        X_train = centres[k] + scales[k] * rng.normal(size=(n_train, n_features))
        normal = centres[k] + scales[k] * rng.normal(size=(n_test - n_anom, n_features))
        X_test = np.vstack([normal, shell(k, n_anom)])
        y_test = np.r_[np.zeros(n_test - n_anom, dtype=np.int8), np.ones(n_anom, dtype=np.int8)]
        shuffle = rng.permutation(n_test)
        train.append(Concept(name, X_train))
        test.append(Concept(name, X_test[shuffle], y_test[shuffle]))
    meta = {"generator": "clad.datasets.make_synthetic", "random_state": random_state}
    if order != "given":
        from .build import order_concepts

        order_rng = None if random_state is None else np.random.SeedSequence([random_state, 1])
        return order_concepts(
            list(zip(train, test)),
            order=order,
            random_state=order_rng,
            name="synthetic",
            metadata=meta,
            loader="synthetic",
        )
    return ConceptDataset(train, test, name="synthetic", metadata=meta)
