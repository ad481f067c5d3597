"""Published tables beside clad's: each row as published, as clad computes it from the raw files,
and the difference; then what clad adds (off-diagonal cells, chance levels).

    clad run scenarios/skab_outliers.toml --out results/skab
    python benchmarks/published_tables.py results/skab

SKAB (https://github.com/waico/SKAB, README "Outlier detection problem"): F1, false-alarm rate and
missed-alarm rate (%) of counts pooled over the 34 test sets (R's diagonal: each experiment tested
after training on its own first 400 rows). The continual view: the same pooled scores over the
off-diagonal cells (a model tested on every *other* experiment), and the pooled F1 of flagging
every row (the chance level of the diagonal), with the experiments where a detector's F1 is below
its own chance level.
"""

from __future__ import annotations

import sys

import numpy as np

from clad.metrics import pooled_counts, pooled_scores
from clad.results.store import load_results

#: SKAB's leaderboard rows: detector label -> (F1, FAR %, MAR %)
SKAB_PUBLISHED = {"T2": (0.66, 19.21, 42.60), "T2+Q": (0.76, 26.62, 24.92), "IForest": (0.29, 2.56, 82.89)}


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
        below = sum(R["f1"][i, list(r.test_concepts).index(s)] < r.chance["f1"][list(r.test_concepts).index(s)]
                    for i, s in enumerate(r.concepts))
        clad = (round(diag["f1"], 2), round(100 * diag["far"], 2), round(100 * diag["mar"], 2))
        rows.append((r.detector, SKAB_PUBLISHED[r.detector], clad, off, chance_f1, below, len(r.concepts)))
    return rows


def main(folder: str) -> int:
    rows = skab_rows(load_results(folder))
    if not rows:
        print(f"no SKAB run in {folder}; run scenarios/skab_outliers.toml first")
        return 1
    print("SKAB outlier detection (pooled over the 34 test sets; F1, FAR %, MAR %)")
    print(f"{'detector':10s} {'published':>22s} {'clad':>22s} {'difference':>22s}")
    worst = 0.0
    for label, pub, clad, _, _, _, _ in rows:
        diff = tuple(round(c - p, 2) for c, p in zip(clad, pub))
        worst = max(worst, abs(diff[0]), *(abs(d) / 100 for d in diff[1:]))
        fmt = lambda t: f"{t[0]:.2f} / {t[1]:6.2f} / {t[2]:6.2f}"  # noqa: E731
        print(f"{label:10s} {fmt(pub):>22s} {fmt(clad):>22s} {fmt(diff):>22s}")
    print("\nThe continual view (clad's R beyond its diagonal)")
    print(f"{'detector':10s} {'off-diagonal F1 / FAR % / MAR %':>34s} {'chance F1':>10s} {'files below chance':>19s}")
    for label, _, _, off, chance_f1, below, n in rows:
        print(f"{label:10s} {off['f1']:>14.2f} / {100 * off['far']:6.2f} / {100 * off['mar']:6.2f} "
              f"{chance_f1:>10.3f} {below:>12d} of {n}")
    print(f"\nlargest difference from a published value: {worst:.4f} (F1, or a rate as a fraction)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "results/skab"))
