"""Naive vs Cumulative on the built-in synthetic concepts: forgetting shows up as a negative BWT.

python examples/quickstart.py
"""

import numpy as np
from sklearn.ensemble import IsolationForest

import clad

dataset = clad.make_synthetic(n_concepts=4, random_state=0)
for strategy in (clad.Naive(IsolationForest()), clad.Cumulative(IsolationForest())):
    result = clad.run_experiment(dataset, clad.ConceptIncremental(), strategy, seed=0)
    m = result.metrics["roc_auc"]
    print(
        f"{type(strategy).__name__:10s}  CA={m['continual_average']:.3f}  "
        f"BWT={m['backward_transfer']:+.3f}  FWT={m['forward_transfer']:.3f}"
    )
    print(np.round(result.R["roc_auc"], 2))
