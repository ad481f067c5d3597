"""Independent evidence for the statistics: which runs are blocks of a test, and which are one.

A *block* is a set of configuration fields (by default the dataset alone, :data:`DEFAULT_BLOCKS`);
each method's score in a block is the mean over seeds and over the remaining fields. The rules that
keep blocks independent (the same computation counts once, blocks that share a dataset are named,
the concept orders of a dataset are that dataset) are those of ``docs/guides/statistics.md``; here,
identity is checked on the recorded R matrices (every base metric) and concept names, a run
recorded as sharing another's result (``shared_from``) is that run's computation, and runs without
R are never merged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np  # noqa: F401 (doctest)
import pandas as pd

from ..defaults import DEFAULT_BASE_METRIC, DEFAULT_METRIC
from ..results.record import RunResult
from ..errors import CladValueError
from .aggregate import dataset_of
from .describe import CONFIG_KEYS
from .leaderboard import scalar_value
from .describe import plural, run_digest

__all__ = ["DEFAULT_BLOCKS", "Blocks", "run_fingerprint", "evidence_blocks"]

#: blocks of the statistics unless asked otherwise: datasets (independent data)
DEFAULT_BLOCKS = ("dataset",)


def run_fingerprint(r: RunResult) -> str | None:
    """A digest of what a run computed (its concept names and every R), or None without R
    (:func:`clad.report.describe.run_digest`).

    >>> a = RunResult("d", "aware", "naive", "if", 0, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])})
    >>> b = RunResult("d", "incremental", "naive", "if", 0, ("A",), ("A",), R={"roc_auc": np.array([[0.7]])})
    >>> run_fingerprint(a) == run_fingerprint(b), run_fingerprint(RunResult("d", "s", "n", "i", 0))
    (True, None)
    """
    return run_digest(r)


@dataclass(frozen=True, eq=False)
class Blocks:
    """The evidence of a comparison.

    ``scores``: blocks x methods (mean over seeds, distinct scenario settings and other fields);
    ``per_seed``: (block, seed) x methods, the same before averaging over seeds; ``computations``:
    the same shape, what each cell was computed from (equal strings: one computation, so seeds with
    equal strings are one independent value); ``merged``: what was counted once and why;
    ``shared``: what the blocks share (they are then not independent); ``matched``: the
    configurations left out because some method lacks them (failed or not run).
    """

    fields: tuple[str, ...]
    scores: pd.DataFrame
    per_seed: pd.DataFrame
    merged: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    computations: pd.DataFrame | None = None
    matched: tuple[str, ...] = ()


def _label(values) -> str:
    return " / ".join(map(str, values if isinstance(values, tuple) else (values,)))


def _text_rows(df: pd.DataFrame, keys: list[str]) -> list[tuple[str, ...]]:
    """The values of ``keys`` in each row of ``df``, as text."""
    return list(zip(*(df[k].astype(str).tolist() for k in keys)))


def _identical_groups(df: pd.DataFrame, fields: list[str], keys: list[str]) -> list[list[tuple]]:
    """The groups of ``df`` by ``fields``, as lists of group keys whose runs are identical (first-seen
    order; a group that cannot be proved identical to another stands alone). A group's signature
    is what its runs computed, independent of its own labels: the set of (``keys`` as text,
    fingerprint) of its runs; a group with a run without fingerprint has none."""
    labels = _text_rows(df, keys)
    fingerprints = df["fingerprint"].tolist()
    unknown = df["fingerprint"].isna().to_numpy()
    found: dict = {}
    groups = df.groupby(fields, sort=False).indices
    for key, rows in sorted(groups.items(), key=lambda group: group[1][0]):  # first seen first
        key = key if isinstance(key, tuple) else (key,)
        sig = None if unknown[rows].any() else frozenset((labels[i], fingerprints[i]) for i in rows)
        found.setdefault(("alone", key) if sig is None else sig, []).append(key)
    return list(found.values())


def _drop(df: pd.DataFrame, fields: list[str], keys: list[tuple]) -> pd.DataFrame:
    if not keys:
        return df
    return df[~pd.MultiIndex.from_frame(df[fields]).isin(pd.MultiIndex.from_tuples(keys))]


def evidence_blocks(
    results: Iterable[RunResult],
    by: str = "detector",
    metric: str = DEFAULT_METRIC,
    base_metric: str = DEFAULT_BASE_METRIC,
    blocks: Sequence[str] = DEFAULT_BLOCKS,
) -> Blocks:
    """The blocks x methods scores of ``metric`` with duplicated computations counted once.

    Scenario settings of one block whose runs are identical are merged before the block's mean is
    taken; blocks whose runs are identical are merged into one block (labelled ``a = b``).
    """
    fields = _block_fields(by, blocks)
    results = [r for r in results if r.ok]
    if not results:
        return Blocks(tuple(fields), pd.DataFrame(), pd.DataFrame())
    df = _runs_frame(results, by, base_metric, metric)
    fine = fields + (["scenario"] if "scenario" not in fields and by != "scenario" else [])
    rest = [k for k in CONFIG_KEYS if k != by and k not in fine] + (
        ["order"] if df["order"].ne("").any() else []
    )
    merged: list[str] = []
    if fine != fields:  # scenario settings of one block with identical runs count once
        df = _merge_settings(df, fields, fine, by, rest, merged)
    df["block"] = [" / ".join(values) for values in _text_rows(df, fields)]
    for group in _identical_groups(df, fields, [by, *rest, *fine[len(fields) :], "seed"]):
        if len(group) > 1:  # whole blocks with identical runs are one block
            label = " = ".join(_label(k) for k in group)
            merged.append(
                f"blocks {label} hold identical R for every {by} and seed (the same computation): "
                f"one block"
            )
            df = _drop(df, fields, group[1:])
            df.loc[df["block"] == _label(group[0]), "block"] = label
    df, matched = _matched(df, by, [*fine[len(fields) :], *rest])
    if df.empty:
        return Blocks(
            tuple(fields), pd.DataFrame(), pd.DataFrame(), tuple(merged), (), None, tuple(matched)
        )
    scores, per_seed, ids = _tables(df, by, fine[len(fields) :])
    blocks_of = df.groupby("dataset", sort=False)["block"].unique()
    shared = [
        f"blocks {', '.join(b)} share dataset {d}: they are not independent"
        for d, b in blocks_of.items()
        if len(b) > 1
    ]
    return Blocks(
        tuple(fields), scores, per_seed, tuple(merged), tuple(shared), ids, tuple(matched)
    )


def _block_fields(by: str, blocks: Sequence[str]) -> list[str]:
    """The block fields, each a configuration field other than ``by``, each once."""
    if by not in CONFIG_KEYS:
        raise CladValueError(
            f"by={by!r} is not a configuration field; allowed: {', '.join(CONFIG_KEYS)}"
        )
    fields = list(blocks)
    bad = [b for b in fields if b not in CONFIG_KEYS or b == by]
    if bad or not fields or len(set(fields)) != len(fields):
        raise CladValueError(
            f"blocks={fields!r}: each must be a configuration field other than by={by!r} "
            f"({', '.join(k for k in CONFIG_KEYS if k != by)}), each once"
        )
    return fields


def _runs_frame(results: list[RunResult], by: str, base_metric: str, metric: str) -> pd.DataFrame:
    """One row per run: its configuration, order, seed, fingerprint and value of ``metric``."""
    # a run recorded as sharing another's result (shared_from) is that computation, by record
    digest = {r.run_id: run_fingerprint(r) for r in results if r.run_id and not r.shared_from}
    # column by column (a dict per run would cost ten times the memory at a paper's grid)
    df = pd.DataFrame(
        {
            **{k: [getattr(r, k) for r in results] for k in CONFIG_KEYS},
            "order": [str(r.order or "") for r in results],
            "seed": [r.seed for r in results],
            "fingerprint": [digest.get(r.shared_from) or run_fingerprint(r) for r in results],
            "value": [scalar_value(r, base_metric, metric) for r in results],
        }
    )
    # the concept orders of one dataset are one dataset: one block, never several
    if by != "dataset":
        df["dataset"] = [dataset_of(r) for r in results]
    return df


def _merge_settings(
    df: pd.DataFrame, fields: list[str], fine: list[str], by: str, rest: list[str], merged: list
) -> pd.DataFrame:
    """``df`` with the settings (``fine`` beyond ``fields``) of one block whose runs are identical
    for every ``by``, ``rest`` field and seed counted once, each merge said in ``merged``."""
    for block, sub in df.groupby(fields, sort=False):
        for group in _identical_groups(sub, fine, [by, *rest, "seed"]):
            if len(group) > 1:
                merged.append(
                    f"{_label(block)}: {' = '.join(_label(k[len(fields) :]) for k in group)} hold "
                    f"identical R for every {by} and seed (the same computation): counted once"
                )
                df = _drop(df, fine, group[1:])
    return df


def _tables(df: pd.DataFrame, by: str, settings: list[str]):
    """The blocks x methods scores, the (block, seed) x methods values and what each of those was
    computed from: the mean over ``settings``, then over seeds."""
    by_setting = df.groupby(["block", *settings, by, "seed"], sort=False)["value"].mean()
    ids = (
        df.assign(fingerprint=df["fingerprint"].fillna("?"))
        .groupby(["block", by, "seed"], sort=False)["fingerprint"]
        .agg(lambda v: "|".join(sorted(map(str, v))))
        .unstack(by)
    )
    ids.columns.name = None
    per_seed_long = by_setting.groupby(["block", by, "seed"], sort=False).mean()
    per_seed = per_seed_long.unstack(by)
    per_seed.columns.name = None
    scores = per_seed.groupby(level="block", sort=False).mean()
    scores.index.name = None
    return scores, per_seed, ids.reindex(per_seed.index)


def _matched(df: pd.DataFrame, by: str, context: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """``df`` with only the configurations (``context`` fields, then seeds) that every method of
    its block has, and a sentence per block naming what was left out and which method lacks it. A
    method averaged over strategies one of which failed for another method would otherwise be
    compared on different configurations."""
    keep, notes = [], []
    for block, part in df.groupby("block", sort=False):
        methods = list(dict.fromkeys(part[by]))
        if len(methods) < 2:
            keep.append(part)
            continue
        for level, fields in (("configuration", context), ("seed", [*context, "seed"])):
            if not fields:
                continue
            rows = _text_rows(part, fields)
            have: dict = {m: set() for m in methods}
            for m, row in zip(part[by].tolist(), rows):
                have[m].add(row)
            common = set.intersection(*have.values())
            every = set.union(*have.values())
            if common == every:
                continue
            missing = sorted(every - common)
            lacking = sorted({str(m) for m in methods if have[m] != every})
            shown = ", ".join(" / ".join(x) for x in missing[:4]) + (
                " …" if len(missing) > 4 else ""
            )
            what = " / ".join(fields)
            notes.append(
                f"block {block}: {len(missing)} {what} combination{'s' if len(missing) > 1 else ''} "
                f"({shown}) left out for every {by}, since {', '.join(lacking)} lack{'s' if len(lacking) == 1 else ''} "
                f"{'it' if len(missing) == 1 else 'them'} (failed or not run): the {plural(by)} are compared on "
                f"the {level}s all of them completed"
                + ("" if common else "; nothing is left in this block")
            )
            part = part[[row in common for row in rows]]
        keep.append(part)
    return (pd.concat(keep) if keep else df.iloc[:0]), notes
