"""A report from Python: run a small grid in memory, compare detectors, draw one heatmap.

python examples/report_from_python.py OUT_DIR
"""

import sys
import warnings
from pathlib import Path

from sklearn.ensemble import IsolationForest
from sklearn.neighbors import LocalOutlierFactor

from clad import (
    ConceptAgnostic,
    ConceptAware,
    ConceptIncremental,
    Cumulative,
    Naive,
    make_synthetic,
    run_experiment,
)
from clad.report import StatisticsWarning, compare, heatmaps, make_report, plot_heatmap
from matplotlib.figure import Figure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "report-example")
dataset = make_synthetic(n_concepts=3, n_train=200, n_test=150, random_state=0)
detectors = {
    "iforest": IsolationForest(n_estimators=25),
    "lof": LocalOutlierFactor(n_neighbors=15, novelty=True),
}
results = []
for scenario in (ConceptAware(), ConceptIncremental(), ConceptAgnostic(batch_size=100)):
    for strategy in (Naive, Cumulative):
        for name, detector in detectors.items():
            for seed in (0, 1):
                results.append(
                    run_experiment(
                        dataset,
                        scenario,
                        strategy(detector),
                        seed=seed,
                        labels={"detector": name, "strategy": strategy.__name__.lower()},
                    )
                )

# statistics: a warning, not an exception, when there are too few blocks for a test
with warnings.catch_warnings():
    warnings.simplefilter("ignore", StatisticsWarning)
    comparison = compare(results, by="strategy", metric="continual_average")
print(comparison.average_ranks.to_string())
print(comparison.message or f"Friedman p = {comparison.pvalue:.3g}")

# one figure on an Axes of your own
fig = Figure(figsize=(5, 4), layout="constrained")
plot_heatmap(heatmaps(results)[0][0], fig.subplots())
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "one-heatmap.png", dpi=100)

report = make_report(results, out)
print(f"{report.index} ({len(report.figures)} figures)")
