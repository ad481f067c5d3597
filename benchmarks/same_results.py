"""Are two results folders' numbers the same, bit for bit? R, the continual metrics, the chance
levels and the per-series values of every run, matched by (dataset, scenario, strategy, detector,
seed, order) -- e.g. a spec run before and after a change that must not change its numbers:

    python benchmarks/same_results.py results/before/results.json results/after/results.json
"""

from __future__ import annotations

import json
import sys


def _runs(path: str) -> dict:
    runs = json.load(open(path, encoding="utf-8"))["runs"]
    return {
        (r["dataset"], r["scenario"], r["strategy"], r["detector"], r["seed"], r.get("order")): r
        for r in runs
    }


def main(a: str, b: str) -> int:
    before, after = _runs(a), _runs(b)
    if before.keys() != after.keys():
        print(f"different runs: {len(before)} and {len(after)}")
        return 1
    cells = 0
    for key, run in before.items():
        for part in ("R", "metrics", "chance", "extras"):
            if run.get(part) != after[key].get(part):
                print(f"{part} differs for {key}")
                return 1
        cells += sum(len(row) for m in run["R"].values() for row in m)
    print(
        f"the same: {len(before)} runs, {cells} cells of R, their continual metrics, chance levels and "
        "per-series values equal bit for bit"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
