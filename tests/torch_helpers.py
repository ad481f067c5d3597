"""What the torch tests share: clad's torch detectors at the sizes of the small cases, and their
data (tabular for the dense networks, windows for the sequence autoencoders), and the stream built
to forget (:func:`subspace_stream`) with the autoencoder the continual strategies train on it
(:func:`ae`). Import after ``pytest.importorskip("torch")``."""

from __future__ import annotations

import numpy as np

from clad import Concept, ConceptDataset
from clad.datasets import make_synthetic
from clad.datasets.windows import window_dataset
from clad.detectors.torch_ae import VAE, AutoEncoder
from clad.detectors.torch_seq import GRUAutoEncoder, LSTMAutoEncoder

DETECTORS = {
    "autoencoder": lambda **kw: AutoEncoder(hidden_sizes=(8, 3), **kw),
    "vae": lambda **kw: VAE(hidden_sizes=(8, 3), **kw),
    "lstm_autoencoder": lambda **kw: LSTMAutoEncoder(hidden_sizes=(6,), **kw),
    "gru_autoencoder": lambda **kw: GRUAutoEncoder(hidden_sizes=(6,), **kw),
}


def dataset(detector: str):
    """Two synthetic concepts; windows of 4 steps for the sequence autoencoders."""
    ds = make_synthetic(n_concepts=2, n_features=4, n_train=120, n_test=80, random_state=0)
    return window_dataset(ds, window=4, stride=2) if detector.endswith("_autoencoder") else ds


def subspace_stream(n_concepts=3, k=2, n_train=300, n_test=200, offset=1.0, seed=0):
    """Concept c: normal rows on its own k-dim subspace of R^d (d = k*n_concepts + 2); its
    anomalies are normal-looking rows pushed by ``offset`` into the 2 dimensions no concept uses.
    A network that still reconstructs concept c's subspace ranks them perfectly; one fine-tuned
    on another subspace sees concept c's normal rows as off-subspace too, so it forgets."""
    rng = np.random.default_rng(seed)
    d = k * n_concepts + 2
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    comp = Q[:, n_concepts * k :]
    train, test = [], []
    for c in range(n_concepts):
        B = Q[:, c * k : (c + 1) * k]

        def normal(n):
            return 2 * rng.normal(size=(n, k)) @ B.T + 0.05 * rng.normal(size=(n, d))

        half = n_test // 2
        dirs = rng.normal(size=(n_test - half, 2))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        anomalies = normal(n_test - half) + offset * dirs @ comp.T
        train.append(Concept(f"S{c}", normal(n_train)))
        test.append(
            Concept(
                f"S{c}",
                np.vstack([normal(half), anomalies]),
                np.r_[np.zeros(half), np.ones(n_test - half)],
            )
        )
    return ConceptDataset(train, test, name="subspaces")


def ae(**kw):
    """The autoencoder of the EWC/LwF/A-GEM/DER tests: (16, 6), 30 epochs, seeded; ``kw`` overrides."""
    params = dict(
        hidden_sizes=(16, 6),
        epochs=30,
        batch_size=32,
        learning_rate=3e-3,
        random_state=0,
        num_threads=1,
    )
    params.update(kw)
    return AutoEncoder(**params)
