"""Runs pyCLAD scenarios for benchmarks/vs_pyclad.py, inside pyCLAD's own virtual environment.

Reads one JSON request per line on stdin: {"data": path, "scenario": "concept_aware" |
"concept_incremental", "strategy": "naive" | "cumulative", "detector": "IsolationForest" | "LOF" |
"OCSVM" | "ECOD", "random_state": IsolationForest's seed (default 0)}; builds pyCLAD's dataset, strategy, model adapter and ROC-AUC concept-metric callback
(outside the timing), times only ``scenario.run()``, and writes one JSON line: the seconds, R
(rows = learned concepts, columns = evaluated concepts, in learning order) and versions.
The data file is a trusted numpy pickle (pyCLAD's concept-file format).
"""

import json
import sys
import time
from importlib.metadata import version


def build(req):
    from pyclad.callbacks.evaluation.concept_metric_evaluation import ConceptMetricCallback
    from pyclad.callbacks.evaluation.time_evaluation import TimeEvaluationCallback
    from pyclad.data.readers.concepts_readers import read_dataset_from_npy
    from pyclad.metrics.base.roc_auc import RocAuc
    from pyclad.metrics.continual.average_continual import ContinualAverage
    from pyclad.metrics.continual.backward_transfer import BackwardTransfer
    from pyclad.metrics.continual.forward_transfer import ForwardTransfer
    from pyclad.models.adapters import pyod_adapters
    from pyclad.models.adapters.pyod_adapters import (
        IsolationForestAdapter,
        LocalOutlierFactorAdapter,
        OneClassSVMAdapter,
    )
    from pyclad.scenarios.concept_aware import ConceptAwareScenario
    from pyclad.scenarios.concept_incremental import ConceptIncrementalScenario
    from pyclad.strategies.baselines.cumulative import CumulativeStrategy
    from pyclad.strategies.baselines.naive import NaiveStrategy

    dataset = read_dataset_from_npy(req["data"], dataset_name="nsl-kdd")
    model = {
        "IsolationForest": lambda: IsolationForestAdapter(random_state=req.get("random_state", 0)),
        "LOF": lambda: LocalOutlierFactorAdapter(),
        "OCSVM": lambda: OneClassSVMAdapter(),
        "ECOD": lambda: _ecod(pyod_adapters),
    }[req["detector"]]()
    strategy = {"naive": NaiveStrategy, "cumulative": CumulativeStrategy}[req["strategy"]](model)
    metric = ConceptMetricCallback(
        base_metric=RocAuc(), metrics=[ContinualAverage(), BackwardTransfer(), ForwardTransfer()]
    )
    callbacks = [metric, TimeEvaluationCallback()]
    scenario_cls = {
        "concept_aware": ConceptAwareScenario,
        "concept_incremental": ConceptIncrementalScenario,
    }[req["scenario"]]
    return scenario_cls(dataset=dataset, strategy=strategy, callbacks=callbacks), metric


def _ecod(pyod_adapters):
    """pyCLAD's ECOD adapter (its contamination changes labels only, not the scores ROC-AUC uses)."""
    if hasattr(pyod_adapters, "ECODAdapter"):
        return pyod_adapters.ECODAdapter()
    from pyod.models.ecod import ECOD

    return pyod_adapters.PyODAdapter(ECOD(), "ECOD")


def main():
    versions = {p: version(p) for p in ("pyclad", "numpy", "scikit-learn", "pyod")}
    versions["python"] = sys.version.split()[0]
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        scenario, metric = build(req)
        t0 = time.perf_counter()
        scenario.run()
        seconds = time.perf_counter() - t0
        info = metric.info()
        (body,) = info.values()
        order = body["concepts_order"]
        R = [[body["metric_matrix"][a][b] for b in order] for a in order]
        print(
            json.dumps({"seconds": seconds, "R": R, "order": order, "versions": versions}),
            flush=True,
        )


if __name__ == "__main__":
    main()
