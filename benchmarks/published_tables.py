"""Published tables beside clad's: each row as published, as clad computes it from the raw files,
and the difference; then what clad adds (off-diagonal cells, chance levels).

    clad run scenarios/skab_outliers.toml --out results/skab
    clad run scenarios/nab.toml --out results/nab
    python benchmarks/published_tables.py results/skab results/nab

SKAB (https://github.com/waico/SKAB, README "Outlier detection problem"): F1, false-alarm rate and
missed-alarm rate (%) of counts pooled over the 34 test sets (R's diagonal: each experiment tested
after training on its own first 400 rows). The continual view: the same pooled scores over the
off-diagonal cells (a model tested on every *other* experiment), and the pooled F1 of flagging
every row (the chance level of the diagonal), with the experiments where a detector's F1 is below
its own chance level.

NAB (https://github.com/numenta/NAB, results/final_results.json): the NAB score of each profile,
raw scores summed over the 58 series (R's diagonal) and normalised between the null detector and
the perfect one. The continual view: the same score of each model on every series, the mean over
all cells of R beside the diagonal (for a detector that learns while it scores they agree).
"""

from __future__ import annotations

import sys

import numpy as np

from clad.metrics import pooled_counts, pooled_scores
from clad.metrics.nab import label_windows, nab_normalized
from clad.results.reading import load_results

#: SKAB's leaderboard rows: detector label -> (F1, FAR %, MAR %)
SKAB_PUBLISHED = {
    "T2": (0.66, 19.21, 42.60),
    "T2+Q": (0.76, 26.62, 24.92),
    "IForest": (0.29, 2.56, 82.89),
}


def skab_rows(runs) -> list[tuple]:
    """(label, published, clad's diagonal, off-diagonal, chance F1, files below chance) per SKAB run."""
    rows = []
    for r in runs:
        if r.detector not in SKAB_PUBLISHED or not r.ok:
            continue
        R = {m: np.asarray(v) for m, v in r.R.items()}
        where = {"steps": list(r.concepts), "test_names": list(r.test_concepts)}
        diag = pooled_scores(pooled_counts(R, "diagonal", **where))
        off = pooled_scores(pooled_counts(R, "off_diagonal", **where))
        anomalies, normal = np.sum(r.chance["tp"]), np.sum(r.chance["fp"])  # flagging every row
        chance_f1 = 2 * anomalies / (2 * anomalies + normal)
        below = sum(
            R["f1"][i, list(r.test_concepts).index(s)]
            < r.chance["f1"][list(r.test_concepts).index(s)]
            for i, s in enumerate(r.concepts)
        )
        clad = (round(diag["f1"], 2), round(100 * diag["far"], 2), round(100 * diag["mar"], 2))
        rows.append(
            (r.detector, SKAB_PUBLISHED[r.detector], clad, off, chance_f1, below, len(r.concepts))
        )
    return rows


#: NAB's scoreboard rows: detector label -> (standard, reward low FP, reward low FN)
NAB_PUBLISHED = {"windowedGaussian": (39.65, 20.87, 47.41)}
NAB_METRICS = {
    "nab_standard": "standard",
    "nab_low_fp": "reward_low_FP_rate",
    "nab_low_fn": "reward_low_FN_rate",
}


def _nab_windows(r) -> dict[str, int]:
    """The windows of each test concept (the record holds no window count: read the data)."""
    from clad.datasets import load_nab

    ds = load_nab(
        data_dir=r.config.get("dataset", {}).get("params", {}).get("data_dir", "../shared/datasets")
    )
    return {c.name: len(label_windows(c.y)) for c in ds.test if c.name in r.test_concepts}


def nab_rows(runs) -> list[tuple]:
    """(label, published, clad's diagonal scores, scores of all cells, standard score per family) per NAB run."""
    rows = []
    for r in runs:
        if not r.ok or "nab_standard" not in r.R:
            continue
        windows = _nab_windows(r)
        where = {n: j for j, n in enumerate(r.test_concepts)}
        diag, every = [], []
        for m, profile in NAB_METRICS.items():
            R = np.asarray(r.R[m])
            raw = sum(R[i, where[s]] for i, s in enumerate(r.concepts))
            diag.append(round(nab_normalized(raw, sum(windows.values()), profile=profile), 2))
            every.append(
                nab_normalized(R.sum() / R.shape[0], sum(windows.values()), profile=profile)
            )
        R = np.asarray(r.R["nab_standard"])
        family: dict[str, list[float]] = {}
        for i, s in enumerate(r.concepts):
            f = family.setdefault(s.split("/")[0], [0.0, 0])
            f[0] += R[i, where[s]]
            f[1] += windows[s]
        per_family = {k: nab_normalized(v, w) for k, (v, w) in family.items() if w}
        rows.append(
            (r.detector, NAB_PUBLISHED.get(r.detector), tuple(diag), tuple(every), per_family)
        )
    return rows


def print_nab(rows) -> float:
    print(
        "NAB (raw scores summed over the 58 series, normalised: standard / reward low FP / reward low FN)"
    )
    print(f"{'detector':17s} {'published':>24s} {'clad':>24s} {'difference':>24s}")
    worst = 0.0
    fmt = lambda t: f"{t[0]:6.2f} / {t[1]:6.2f} / {t[2]:6.2f}"  # noqa: E731
    for label, pub, clad, every, per_family in rows:
        if pub is None:  # no published row: clad's own view
            print(f"{label:17s} {'(not published)':>24s} {fmt(clad):>24s}")
        else:
            diff = tuple(round(c - p, 2) for c, p in zip(clad, pub))
            worst = max(worst, *(abs(d) for d in diff))
            print(f"{label:17s} {fmt(pub):>24s} {fmt(clad):>24s} {fmt(diff):>24s}")
        print(f"{'  every cell of R':17s} {'':>24s} {fmt(every):>24s}")
        print(
            "  standard score per family: "
            + ", ".join(f"{k} {v:.1f}" for k, v in per_family.items())
        )
    print(f"largest difference from a published value: {worst:.2f} points\n")
    return worst


def main(*folders: str) -> int:
    runs = [r for f in folders for r in load_results(f)]
    nab = nab_rows(runs)
    if nab:
        print_nab(nab)
    rows = skab_rows(runs)
    if not rows and not nab:
        print(
            f"no SKAB or NAB run in {', '.join(folders)}; run scenarios/skab_outliers.toml or scenarios/nab.toml first"
        )
        return 1
    if not rows:
        return 0
    print("SKAB outlier detection (pooled over the 34 test sets; F1, FAR %, MAR %)")
    print(f"{'detector':10s} {'published':>22s} {'clad':>22s} {'difference':>22s}")
    worst = 0.0
    for label, pub, clad, _, _, _, _ in rows:
        diff = tuple(round(c - p, 2) for c, p in zip(clad, pub))
        worst = max(worst, abs(diff[0]), *(abs(d) / 100 for d in diff[1:]))
        fmt = lambda t: f"{t[0]:.2f} / {t[1]:6.2f} / {t[2]:6.2f}"  # noqa: E731
        print(f"{label:10s} {fmt(pub):>22s} {fmt(clad):>22s} {fmt(diff):>22s}")
    print("\nThe continual view (clad's R beyond its diagonal)")
    print(
        f"{'detector':10s} {'off-diagonal F1 / FAR % / MAR %':>34s} {'chance F1':>10s} {'files below chance':>19s}"
    )
    for label, _, _, off, chance_f1, below, n in rows:
        print(
            f"{label:10s} {off['f1']:>14.2f} / {100 * off['far']:6.2f} / {100 * off['mar']:6.2f} "
            f"{chance_f1:>10.3f} {below:>12d} of {n}"
        )
    print(f"\nlargest difference from a published value: {worst:.4f} (F1, or a rate as a fraction)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*(sys.argv[1:] or ["results/skab", "results/nab"])))
