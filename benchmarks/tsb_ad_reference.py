"""TSB-AD's values of the range metrics on seeded random series, stored for clad's tests.

TSB-AD is used here only, never by clad or its tests. Install it without its dependencies (its
``TSB_AD/evaluation/`` needs only numpy and scikit-learn)::

    pip install --no-deps TSB-AD==1.5
    python benchmarks/tsb_ad_reference.py            # writes tests/data/tsb_ad_reference.json

The series come from ``tests/range_series.py`` (``make_series(seed)``); the JSON holds the
generation parameters and, per seed, TSB-AD's values: VUS-ROC and VUS-PR (``generate_curve``,
version ``opt``, 250 thresholds, the seed's buffer width), the oracle values of PA-F1, event F1,
range F1 and affiliation F (``get_metrics`` without ``pred``: 100 thresholds from the smallest to
the largest score) and the same four at the predictions ``scores > mean + 2 std``. It also stores
TSB-AD's values on series with ranges at both ends (``make_edge_series``; the metrics other than
point-adjusted and event F1, whose defects show there) and on the cases where its code has a defect
(``DEFECT_CASES``), so the tests show the difference. It takes a few minutes (TSB-AD's code loops in Python).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.range_series import (
    DEFECT_CASES,
    EDGE_METRICS,
    EDGE_PARAMS,
    PARAMS,
    make_edge_series,  # noqa: E402
    make_series,
    threshold_of,
)

OUT = os.path.join(ROOT, "tests", "data", "tsb_ad_reference.json")


def tsb_values(y: np.ndarray, scores: np.ndarray, window: int) -> dict:
    from TSB_AD.evaluation.basic_metrics import basic_metricor, generate_curve

    grader = basic_metricor()
    y = y.astype(int)
    *_, vus_roc, vus_pr = generate_curve(y, scores, window, "opt", 250)
    pred = (scores > threshold_of(scores)).astype(int)
    out = {"vus_roc": float(vus_roc), "vus_pr": float(vus_pr)}
    for name, fn in (
        ("pa_f1", grader.metric_PointF1PA),
        ("event_f1", grader.metric_EventF1PA),
        ("range_f1", grader.metric_RF1),
        ("affiliation_f1", grader.metric_Affiliation),
    ):
        out[f"{name}_oracle"] = float(fn(y, scores))
        out[name] = float(fn(y, scores, preds=pred))
    return out


def main() -> None:
    import TSB_AD  # noqa: F401  (a clear error if it is not installed)

    warnings.simplefilter("ignore")
    series = []
    t0 = time.perf_counter()
    for seed in range(PARAMS["first_seed"], PARAMS["first_seed"] + PARAMS["n_series"]):
        y, scores, window = make_series(seed)
        values = tsb_values(y, scores, window)
        series.append({"seed": seed, "n": int(y.size), "window": window, "values": values})
        print(
            f"seed {seed}: n={y.size} window={window} ranges={int(np.sum(np.diff(np.r_[0, y]) == 1))} "
            f"vus_pr={values['vus_pr']:.4f}",
            flush=True,
        )
    edges = []
    for seed in range(
        EDGE_PARAMS["first_seed"], EDGE_PARAMS["first_seed"] + EDGE_PARAMS["n_series"]
    ):
        y, scores, window = make_edge_series(seed)
        values = tsb_values(y, scores, window)
        edges.append(
            {
                "seed": seed,
                "n": int(y.size),
                "window": window,
                "values": {k: values[k] for k in EDGE_METRICS},
            }
        )
    grader = __import__(
        "TSB_AD.evaluation.basic_metrics", fromlist=["basic_metricor"]
    ).basic_metricor()
    defects = {}
    for name, (y, pred) in DEFECT_CASES.items():
        y, pred = np.array(y), np.array(pred)
        fn = grader.metric_PointF1PA if name.startswith("pa_f1") else grader.metric_EventF1PA
        defects[name] = float(fn(y, pred.astype(float), preds=pred))
    from importlib.metadata import version

    doc = {
        "tsb_ad": version("TSB-AD"),
        "params": PARAMS,
        "threshold": "mean + 2 std of the scores",
        "series": series,
        "edge_params": EDGE_PARAMS,
        "edge_series": edges,
        "defect_cases": defects,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        json.dump(doc, fh, indent=1)
    print(f"wrote {OUT} ({len(series)} series, {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
