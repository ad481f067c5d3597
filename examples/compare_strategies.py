"""Compare clad's continual strategies on the NSL-KDD concept file (5 concepts, concept-incremental).

Usage: python examples/compare_strategies.py [PATH_TO_CONCEPT_FILE]

By default the file is looked up in ../shared/datasets/pyclad-nsl-kdd/ next to the repository.
Prints ROC-AUC continual average (CA), backward transfer (BWT) and forward transfer (FWT) per
strategy, and the training rows each keeps in memory at the end.
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import IsolationForest

from clad import Concept, ConceptDataset, ConceptIncremental, run_experiment
from clad.strategies import (
    EWC,
    BalancedReplay,
    Cumulative,
    Experts,
    FineTune,
    LwF,
    Naive,
    Replay,
    Window,
)

DEFAULT = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "datasets"
    / "pyclad-nsl-kdd"
    / "nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy"
)


def load(path: Path) -> ConceptDataset:
    # pyCLAD's concept file is a pickled numpy object array of dicts
    # {name, train_data, test_data, test_labels}; this is a trusted file (pickles run code).
    raw = np.load(path, allow_pickle=True)
    train = [Concept(str(d["name"]), d["train_data"]) for d in raw]
    test = [Concept(str(d["name"]), d["test_data"], d["test_labels"]) for d in raw]
    return ConceptDataset(train, test, name="nsl-kdd-5-concepts")


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    ds = load(path)

    def forest():
        return IsolationForest(random_state=0)

    def autoencoder():
        from clad.detectors.torch_ae import AutoEncoder  # imports torch

        return AutoEncoder(
            hidden_sizes=(32, 8), epochs=20, batch_size=64, random_state=0, num_threads=1
        )

    runs = {
        "naive (iforest)": Naive(forest()),
        "cumulative (iforest)": Cumulative(forest()),
        "replay 300 (iforest)": Replay(forest(), buffer_size=300),
        "replay_buffer_only 300 (iforest)": Replay(forest(), buffer_size=300, mode="buffer_only"),
        "balanced_replay 300 (iforest)": BalancedReplay(forest(), buffer_size=300),
        "window 1200 (iforest)": Window(forest(), window_size=1200),
        "experts (iforest)": Experts(forest()),
        "naive (autoencoder)": Naive(autoencoder()),
        "fine_tune (autoencoder)": FineTune(autoencoder()),
        "ewc (autoencoder)": EWC(autoencoder(), ewc_lambda=1000.0),
        "lwf (autoencoder)": LwF(autoencoder(), alpha=1.0),
        "cumulative (autoencoder)": Cumulative(autoencoder()),
    }
    width = max(map(len, runs))
    print(f"{'strategy':<{width}}  {'CA':>6}  {'BWT':>7}  {'FWT':>6}  {'memory':>6}")
    for label, strategy in runs.items():
        result = run_experiment(ds, ConceptIncremental(), strategy, seed=0)
        m = result.metrics["roc_auc"]
        print(
            f"{label:<{width}}  {m['continual_average']:6.3f}  {m['backward_transfer']:+7.3f}  "
            f"{m['forward_transfer']:6.3f}  {result.memory_rows[-1]:6d}"
        )


if __name__ == "__main__":
    main()
