"""A detector of your own: any class with fit(X) -> self and score(X) (higher = more anomalous).

python examples/custom_detector.py
"""

import numpy as np

import clad


class DistanceToMean:
    """Scores a row by its distance to the mean of the training data."""

    def fit(self, X):
        self.mean_ = X.mean(axis=0)
        return self

    def score(self, X):
        return np.linalg.norm(X - self.mean_, axis=1)


dataset = clad.make_synthetic(n_concepts=3, random_state=1)
result = clad.run_experiment(
    dataset,
    clad.ConceptAware(),
    clad.Cumulative(DistanceToMean()),
    base_metrics=["roc_auc", "f1"],
    seed=0,
)
print(np.round(result.R["roc_auc"], 3))
print({k: round(v, 3) for k, v in result.metrics["roc_auc"].items() if isinstance(v, float)})
