"""TSB-AD's per-series VUS-PR on its SMAP series, beside clad's computation of the same protocol.

TSB-AD's multivariate benchmark (TheDatumOrg/TSB-AD, ``benchmark_exp/benchmark_eval_results/
multi_mergedTable_VUS-PR.csv``; its published values predate the model changes of a79f315, so the
protocol is that of 35ba9c3) holds 25 SMAP series, each a single telemanom channel's test array with
one row of ``labeled_anomalies.csv`` as its labels (P-2 is listed twice: each listing is its own
series). A series is matched to a channel of ``../shared/datasets/nasa-smap`` by its length, its
anomalous points and its first anomaly (the file name's ``1st_``). The protocol, as facts:

* every row is z-scored across its features (the 25 columns; sample deviation, NaN to 0);
* IForest (``n_estimators=25``, ``max_features=0.8``, ``random_state=0``) is fitted on the whole
  series and scores it; OCSVM (RBF, ``nu=0.1``, ``gamma="auto"``) is fitted on the first ``tr_``
  rows, min-max scaled per row, and scores the whole series (not min-max scaled); MCD
  (``support_fraction=0.8``, raised by 0.1 while the fit fails and scikit-learn's default from 1 on,
  ``random_state=2024``) is fitted on
  the first ``tr_`` rows and scores the Mahalanobis distance;
* the scores are min-max scaled and VUS-PR is computed with the buffer width TSB-AD derives from the
  first channel's autocorrelation (the lag of its highest local maximum within 400 lags, plus 3;
  125 outside [3, 300]), 250 thresholds (``clad.metrics.ranges.vus_pr``).

    python benchmarks/tsb_ad_smap.py /path/to/multi_mergedTable_VUS-PR.csv
"""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from clad.metrics.ranges import vus_pr

SMAP = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "nasa-smap"
DETECTORS = ("IForest", "OCSVM", "MCD")


def buffer_width(x: np.ndarray) -> int:
    """TSB-AD's periodicity estimate (its ``find_length_rank`` with rank 1), used as VUS's window."""
    from scipy.signal import argrelextrema
    from statsmodels.tsa.stattools import acf

    base = 3
    ac = acf(np.asarray(x)[:20000], nlags=400, fft=True)[base:]
    peaks = argrelextrema(ac, np.greater)[0]
    if peaks.size == 0:
        return 125
    best = peaks[int(np.argsort(ac[peaks])[::-1][0])]
    return 125 if best < 3 or best > 300 else int(best + base)


def _rows_z(X: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(
            (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, ddof=1, keepdims=True)
        )


def _minmax(s: np.ndarray) -> np.ndarray:
    from sklearn.preprocessing import MinMaxScaler

    return MinMaxScaler().fit_transform(np.asarray(s).reshape(-1, 1)).ravel()


def scores(name: str, X: np.ndarray, train_rows: int) -> np.ndarray | None:
    """The min-max scaled scores of detector ``name`` under TSB-AD's protocol (module docstring)."""
    from sklearn.covariance import MinCovDet
    from sklearn.ensemble import IsolationForest
    from sklearn.svm import OneClassSVM

    Z = _rows_z(X)
    if name == "IForest":
        return _minmax(
            -IsolationForest(n_estimators=25, max_features=0.8, random_state=0)
            .fit(Z)
            .decision_function(Z)
        )
    train = Z[:train_rows]
    if name == "OCSVM":
        lo, hi = train.min(axis=1, keepdims=True), train.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            scaled = np.nan_to_num((train - lo) / np.where(hi > lo, hi - lo, 1.0))
        return _minmax(
            -OneClassSVM(kernel="rbf", nu=0.1, gamma="auto").fit(scaled).decision_function(Z)
        )
    for fraction in (
        0.8,
        0.9,
        None,
    ):  # raised by 0.1 while the fit fails; from 1 on, scikit-learn's default
        try:
            return _minmax(
                MinCovDet(support_fraction=fraction, random_state=2024).fit(train).mahalanobis(Z)
            )
        except ValueError:
            continue
    return None


def channels() -> list[tuple[str, np.ndarray, np.ndarray, int]]:
    """Every listing of ``labeled_anomalies.csv``: (channel, test array, labels, first anomaly)."""
    table = pd.read_csv(SMAP / "labeled_anomalies.csv")
    out = []
    for _, row in table.iterrows():
        X = np.load(SMAP / "test" / f"{row.chan_id}.npy").astype(np.float64)
        y = np.zeros(len(X), dtype=np.int8)
        for a, b in ast.literal_eval(row.anomaly_sequences):
            y[a : b + 1] = 1
        out.append((row.chan_id, X, y, int(np.flatnonzero(y)[0])))
    return out


def main(table_path: str) -> int:
    warnings.filterwarnings("ignore")
    table = pd.read_csv(table_path)
    table = table[table.file.str.contains("_SMAP_")]
    known = channels()
    rows, unmatched = [], []
    for _, r in table.iterrows():
        parts = r.file.removesuffix(".csv").split("_")
        train_rows, first = int(parts[-3]), int(parts[-1])
        found = [
            (c, X, y)
            for c, X, y, f in known
            if len(y) == r.ts_len and int(y.sum()) == r.anomaly_len and f == first
        ]
        if len(found) != 1:
            unmatched.append(r.file)
            continue
        c, X, y = found[0]
        w = buffer_width(X[:, 0])
        mine = {
            d: (lambda s: float("nan") if s is None else vus_pr(y, s, window=w))(
                scores(d, X, train_rows)
            )
            for d in DETECTORS
        }
        rows.append((r.file, c, w, {d: float(r[d]) for d in DETECTORS}, mine))
    print(
        f"{len(rows)} of {len(table)} SMAP series matched to a shared channel; not matched: {', '.join(unmatched)}"
    )
    print(
        f"{'series':45s} {'chan':5s} {'win':>4s}  "
        + "  ".join(f"{d + ' pub / clad':>20s}" for d in DETECTORS)
    )
    for f, c, w, pub, mine in rows:
        cells = "  ".join(f"{pub[d]:>9.4f} / {mine[d]:<8.4f}" for d in DETECTORS)
        print(f"{f:45s} {c:5s} {w:>4d}  {cells}")
    print()
    for d in DETECTORS:
        diff = np.array([m[d] - p[d] for _, _, _, p, m in rows])
        within = int(np.sum(np.abs(diff) <= 0.01))
        print(
            f"{d:8s} mean published {np.mean([p[d] for *_, p, _ in rows]):.4f}  mean clad "
            f"{np.nanmean([m[d] for *_, m in rows]):.4f}  within 0.01: {within} of {len(rows)}  "
            f"largest difference {np.nanmax(np.abs(diff)):.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
