"""What tests of several packages share about data: the shared real data sets (``SHARED``: the
folder ``../shared/datasets`` beside the repository, else ``$CLAD_DATA``) and skip marks for the
tests that read them (``needs``), a hand-made telemanom folder (the ``mini`` fixture) and a small
data set with contaminated training concepts."""

import os
from pathlib import Path

import numpy as np
import pytest


def shared_data() -> Path:
    """<repo root>/../shared/datasets, else $CLAD_DATA where that holds the data sets."""
    beside = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
    env = os.environ.get("CLAD_DATA")
    return Path(env) if not beside.is_dir() and env and Path(env).is_dir() else beside


SHARED = shared_data()


def needs(part: str = "") -> pytest.MarkDecorator:
    """A skip mark for tests that read ``SHARED / part`` (the whole shared folder by default)."""
    where = SHARED / part
    return pytest.mark.skipif(
        not where.is_dir(),
        reason=f"real data not found at {where} (<repo root>/../shared/datasets, else $CLAD_DATA)",
    )


needs_data = needs()
needs_smap = needs("nasa-smap")


def channel(cid: int, n: int, d: int = 3) -> np.ndarray:
    X = np.zeros((n, d))
    X[:, 0] = cid
    X[:, 1] = np.arange(n)
    return X


@pytest.fixture
def mini(tmp_path):
    """A telemanom folder: channels A-1, A-2, B-1 of spacecraft X, and M-1 of spacecraft Y;
    A-2 is listed twice (its ranges are united)."""
    root = tmp_path / "tele"
    for split in ("train", "test"):
        (root / split).mkdir(parents=True)
    sizes = {"A-1": (7, 10), "A-2": (5, 6), "B-1": (9, 8), "M-1": (4, 4)}
    for k, (chan, (n_tr, n_te)) in enumerate(sizes.items()):
        np.save(root / "train" / f"{chan}.npy", channel(10 + k, n_tr))
        np.save(root / "test" / f"{chan}.npy", channel(20 + k, n_te))
    (root / "labeled_anomalies.csv").write_text(
        "chan_id,spacecraft,anomaly_sequences,class,num_values\n"
        'A-2,X,"[[1, 1]]",[point],6\n'
        'A-1,X,"[[2, 3], [8, 9]]","[point, contextual]",10\n'
        'B-1,X,"[[7, 7]]",[point],8\n'
        'M-1,Y,"[[0, 0]]",[point],4\n'
        'A-2,X,"[[4, 5]]",[point],6\n'
    )
    return tmp_path


def contaminated_dataset():
    """Three concepts of 100 normal and 20 anomalous rows, 10 % of the training rows anomalous."""
    from clad.datasets.build import ConceptRows, make_dataset

    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(size=(300, 3)), rng.normal(4.0, 1.0, size=(60, 3))]
    y = np.r_[np.zeros(300, int), np.ones(60, int)]
    groups = [
        ConceptRows(
            f"g{k}", np.arange(100 * k, 100 * k + 100), np.arange(300 + 20 * k, 320 + 20 * k)
        )
        for k in range(3)
    ]
    return make_dataset(X, y, groups, test_size=0.3, contamination=0.1, random_state=0)
