"""What the torch tests share: clad's torch detectors at the sizes of the small cases, and their
data (tabular for the dense networks, windows for the sequence autoencoders). Import after
``pytest.importorskip("torch")``."""

from __future__ import annotations

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
