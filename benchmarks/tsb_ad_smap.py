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
  ``random_state=2024``) is fitted on the first ``tr_`` rows and scores the Mahalanobis distance.
  TSB-AD ran scikit-learn 1.3 (``scikit-learn>=1.3.2``), whose ``MinCovDet`` scaled the raw
  distances by their median over the chi-square median (Rousseeuw and Van Driessen) before choosing
  the rows of the re-weighted estimate; later releases use a consistency factor instead, which picks
  other rows. :func:`mcd_distances` applies the 1.3 correction to scikit-learn's ``fast_mcd``;
* the scores are min-max scaled and VUS-PR is computed with the buffer width TSB-AD derives from the
  first channel's autocorrelation (the lag of its highest local maximum within 400 lags, plus 3;
  125 outside [3, 300]), 250 thresholds (``clad.metrics.ranges.vus_pr``).

    python benchmarks/tsb_ad_smap.py /path/to/multi_mergedTable_VUS-PR.csv [--sensitivity]

``--sensitivity`` computes every series again with its values rounded to 8 decimals and prints how
far each detector's VUS-PR moves: OCSVM and MCD are fitted on training rows of which few are
distinct (2 to a few hundred of about 2,000), so a change in the inputs' last digits (as a CSV copy
of the arrays may make) moves their scores' order, where IForest does not move.
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
    # raised by 0.1 while the fit fails (0.8 + 0.1, as TSB-AD adds); from 1 on, the default
    for fraction in (0.8, 0.8 + 0.1, None):
        try:
            return _minmax(mcd_distances(train, Z, fraction))
        except ValueError:
            continue
    return None


def mcd_distances(train: np.ndarray, X: np.ndarray, fraction: float | None) -> np.ndarray:
    """The squared Mahalanobis distances of the rows of ``X`` under scikit-learn 1.3's
    ``MinCovDet(support_fraction=fraction, random_state=2024).fit(train)``: the raw FastMCD
    estimate, its distances divided by their median over the chi-square median, the rows below
    the chi-square 0.975 quantile re-estimated (ValueError, as 1.3 raised, when the support's
    covariance is 0)."""
    from scipy.stats import chi2
    from sklearn.covariance import EmpiricalCovariance, fast_mcd

    n, p = train.shape
    _, covariance, support, dist = fast_mcd(
        train, support_fraction=fraction, random_state=np.random.RandomState(2024)
    )
    if support.sum() < n and np.allclose(covariance, 0):
        raise ValueError("the covariance matrix of the support data is 0")
    keep = dist / (np.median(dist) / chi2(p).isf(0.5)) < chi2(p).isf(0.025)
    return EmpiricalCovariance().fit(train[keep]).mahalanobis(X)


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


def _vus(y: np.ndarray, s: np.ndarray | None, window: int) -> float:
    return float("nan") if s is None else vus_pr(y, s, window=window)


def main(table_path: str, sensitivity: bool = False) -> int:
    warnings.filterwarnings("ignore")
    moved: dict[str, dict[str, float]] = {}
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
        mine = {d: _vus(y, scores(d, X, train_rows), w) for d in DETECTORS}
        if sensitivity:  # the same series with every value rounded to 8 decimals
            moved[c] = {d: _vus(y, scores(d, np.round(X, 8), train_rows), w) for d in DETECTORS}
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
    if sensitivity:
        _print_sensitivity(rows, moved)
    return 0


def _print_sensitivity(rows, moved) -> None:
    """How far VUS-PR moves when the inputs move by at most 5e-9 (rounded to 8 decimals)."""
    print("\nwith the series rounded to 8 decimals (inputs moved by at most 5e-9):")
    for d in DETECTORS:
        shift = np.array([moved[c][d] - m[d] for _, c, _, _, m in rows])
        far = [c for (_, c, *_), v in zip(rows, shift) if abs(v) > 0.01]
        print(
            f"{d:8s} largest move of VUS-PR {np.nanmax(np.abs(shift)):.4f}; "
            f"more than 0.01 on {len(far)} series{': ' + ', '.join(far) if far else ''}"
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--sensitivity" in sys.argv[2:]))
