"""``clad leaderboard SOURCE... -o DIR``: the report of one or more bundles, offline.

The runs of every bundle (:mod:`clad.bundle.sources`) are read and checked, joined by result key
(a run held by two bundles counts once; two bundles disagreeing on one key's R is a conflict,
listed) and written as a static report by :func:`clad.report.make_report`, with ``bundles.csv``
and, against a ``previous`` bundle, ``changes.csv`` beside it. A run naming a plug-in whose code is
not available here is unverified, shown apart (its scenario's label ends with ``" (unverified)"``).
Nothing is computed and no data is read. What the site shows: docs/guides/bundles.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import numpy as np

from ..engine.config import RunConfig, canonical
from ..engine.result_key import canonical_config
from ..results.record import RunResult
from .format import UNVERIFIED, Bundle, read_bundle, result_of, said
from .pull import kept_apart, missing_code
from .sources import opened

__all__ = ["Leaderboard", "leaderboard", "changes"]


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    """What ``clad leaderboard`` wrote."""

    out: Path
    runs: int
    bundles: tuple[str, ...]
    conflicts: tuple[str, ...]
    changes: dict | None
    unverified: int = 0


def _read(source: str) -> Bundle:
    with opened(source) as (path, pin):
        return read_bundle(path, pin)


def _run(row: dict, sha256: str) -> RunResult:
    """The run of a bundle row, kept apart when it is unverified here (see the module docstring)."""
    unverified = bool(missing_code(row["parts"]))
    config = kept_apart(row["config"]) if unverified else row["config"]
    origin = f"bundle sha256:{sha256}" + (UNVERIFIED if unverified else "")
    result = result_of(row, config, run_id=RunConfig.from_dict(config).run_id, origin=origin)
    return (
        dataclasses.replace(result, scenario=config["scenario"]["label"]) if unverified else result
    )


def _said(row: dict) -> dict:
    r = row["record"]
    return {k: r[k] for k in ("dataset", "scenario", "strategy", "detector", "seed")}


def _largest_change(a: dict, b: dict) -> float:
    out = 0.0
    for m in set(a["record"]["R"]) & set(b["record"]["R"]):
        x = np.array(a["record"]["R"][m], dtype=float)
        y = np.array(b["record"]["R"][m], dtype=float)
        if x.shape == y.shape and np.isfinite(x - y).any():
            out = max(out, float(np.nanmax(np.abs(x - y))))
    return out


def _library_versions(rows: Sequence[dict]) -> dict[str, str]:
    """``{library: its versions in the key parts of rows, joined}``."""
    libraries = [r["parts"]["libraries"] for r in rows]
    return {
        lib: ", ".join(sorted({str(have[lib]) for have in libraries if lib in have}))
        for lib in sorted({k for have in libraries for k in have})
    }


def changes(current: Sequence[dict], previous: Sequence[dict]) -> list[dict]:
    """Rows of ``changes.csv``: ``new``, ``gone`` and ``moved`` runs between two sets of bundle rows."""

    def by_config(rows):
        return {canonical(canonical_config(r["config"])): r for r in rows}

    now, before = by_config(current), by_config(previous)
    out = []
    for c in sorted(set(now) | set(before)):
        a, b = before.get(c), now.get(c)
        if a is None:
            out.append({"change": "new", **_said(b), "detail": ""})
        elif b is None:
            out.append({"change": "gone", **_said(a), "detail": ""})
        elif a["key"] != b["key"]:
            parts = [
                p
                for p in ("data", "numbers", "metrics", "libraries", "code")
                if a["parts"].get(p) != b["parts"].get(p)
            ]
            detail = f"{', '.join(parts)} changed; largest change of R {_largest_change(a, b):.6g}"
            out.append({"change": "moved", **_said(b), "detail": detail})
    return out


def leaderboard(
    sources: Sequence[str], out: str | Path, previous: str | None = None
) -> Leaderboard:
    """Write the leaderboard of bundles ``sources`` into folder ``out`` (see the module docstring)."""
    import pandas as pd

    from ..report import make_report

    bundles = [_read(s) for s in sources]
    rows: dict[str, tuple[dict, str]] = {}
    conflicts = []
    for bundle in bundles:
        for row in bundle.rows:
            held = rows.get(row["key"])
            if held is None:
                rows[row["key"]] = (row, bundle.sha256)
            elif held[0]["record"]["R"] != row["record"]["R"]:
                conflicts.append(
                    f"{said(row['record'])}: bundles "
                    f"{held[1][:12]} and {bundle.sha256[:12]} disagree on R (the first is shown)"
                )
    results = [_run(row, sha) for row, sha in rows.values()]
    out = Path(out)
    make_report(results, out, title="clad leaderboard")
    table = [
        {
            "bundle sha256": b.sha256,
            "numbers_version": b.manifest.get("numbers_version"),
            "runs": len(b.rows),
            "unverified runs": sum(bool(missing_code(r["parts"])) for r in b.rows),
            **_library_versions(b.rows),
        }
        for b in bundles
    ]
    pd.DataFrame(table).to_csv(out / "bundles.csv", index=False)
    moved = None
    if previous is not None:
        found = changes([r for r, _ in rows.values()], _read(previous).rows)
        pd.DataFrame(
            found,
            columns=["change", "dataset", "scenario", "strategy", "detector", "seed", "detail"],
        ).to_csv(out / "changes.csv", index=False)
        moved = {kind: sum(c["change"] == kind for c in found) for kind in ("new", "gone", "moved")}
    return Leaderboard(
        out,
        len(results),
        tuple(b.sha256 for b in bundles),
        tuple(conflicts),
        moved,
        sum(r.origin.endswith(UNVERIFIED) for r in results),
    )
