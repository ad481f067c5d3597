"""The headline across blocks: which configurations rank first, and how sure that is.

A *configuration* is a strategy + detector within one scenario; a *block* a dataset, over every
concept order a spec ran it in; its score there the mean over seeds (:func:`block_scores`). **Rank
stability** is MTEB's paired bootstrap over blocks: each configuration's **rank interval** (2.5 %
and 97.5 % quantiles of its rank over the resamples, ties sharing the better rank) and **P(first)**;
exact over every multiset of blocks up to :data:`EXACT_MAX_MULTISETS`, else :data:`RESAMPLES`
resamples seeded with :data:`SEED`. The **top group** is every configuration whose interval reaches
first place; a configuration without a value in some block is not ranked (:class:`Ranking` names
it). The procedure in full: ``docs/guides/reports.md``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..metrics import get_metric
from ..results.record import RunResult
from .aggregate import dataset_of
from .leaderboard import SHARED_LABEL, scalar_value

__all__ = ["Ranking", "block_scores", "rank_stability", "block_winners", "MIN_BLOCKS_P_FIRST"]

#: the bootstrap distribution is enumerated exactly while the blocks' multisets number at most this
EXACT_MAX_MULTISETS = 20_000
#: resamples of the Monte-Carlo bootstrap beyond that, and the seed of its generator
RESAMPLES = 2_000
SEED = 20_240_601
#: the rank interval's probability
LEVEL = 0.95


def config_label(strategy: str, detector: str) -> str:
    """``strategy + detector``, the name of a configuration within a scenario."""
    return f"{strategy} + {detector}"


def block_scores(
    results: Iterable[RunResult], metric: str, base_metric: str
) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """Per scenario: (blocks x configurations table of ``metric``; blocks x configurations table of
    failed runs). Blocks are datasets: the concept orders a spec ran a dataset in are averaged within
    its block (:func:`clad.report.aggregate.dataset_of`), never counted as blocks of their own. A
    cell is the mean over the block's orders of the mean over seeds; it is NaN when the
    configuration has no finished run with a value in some order of its block (never a mean over
    the orders it happens to have). Runs recorded once for several scenarios (a scenario label
    ``concept_aware = concept_incremental``, :func:`clad.report.aggregate.merge_shared`) are ranked in
    each of those scenarios, beside every strategy that ran there, so each scenario's best is the
    best of all that ran in it."""
    values: dict[tuple, dict[str, list[float]]] = {}
    failed: dict[tuple, int] = {}
    order: dict[str, dict[str, None]] = {}
    blocks: dict[str, dict[str, dict[str, None]]] = {}  # scenario -> block -> its orders
    for r in results:
        v = scalar_value(r, base_metric, metric) if r.ok else float("nan")
        ordering = f"{r.dataset}|{r.order or ''}"
        # runs that are one computation in several scenarios (``a = b``, merge_shared) compete in each
        for scenario in str(r.scenario).split(SHARED_LABEL):
            key = (scenario, dataset_of(r), config_label(r.strategy, r.detector))
            order.setdefault(scenario, {})[key[2]] = None
            blocks.setdefault(scenario, {}).setdefault(key[1], {})[ordering] = None
            if not r.ok:
                failed[key] = failed.get(key, 0) + 1
                continue
            per_order = values.setdefault(key, {}).setdefault(ordering, [])
            if v == v:
                per_order.append(v)
    out = {}
    for scenario, configs in order.items():
        rows = list(blocks[scenario])
        table = pd.DataFrame(np.nan, index=rows, columns=list(configs))
        fails = pd.DataFrame(0, index=rows, columns=list(configs))
        for b in rows:
            for c in configs:
                got = values.get((scenario, b, c), {})
                means = [np.mean(got[o]) for o in blocks[scenario][b] if got.get(o)]
                if means and len(means) == len(blocks[scenario][b]):
                    table.at[b, c] = float(np.mean(means))
                fails.at[b, c] = failed.get((scenario, b, c), 0)
        out[scenario] = (table, fails)
    return out


def _multisets(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every multiset of ``n`` draws from ``n`` blocks as counts (rows), and its probability."""
    counts, weights = [], []
    log_n = n * math.log(n)
    for combo in itertools.combinations_with_replacement(range(n), n):
        c = np.bincount(combo, minlength=n)
        counts.append(c)
        weights.append(math.exp(math.lgamma(n + 1) - sum(math.lgamma(k + 1) for k in c) - log_n))
    return np.array(counts, dtype=np.float64), np.array(weights)


def n_multisets(n: int) -> int:
    """How many multisets of ``n`` draws from ``n`` blocks there are: C(2n - 1, n)."""
    return math.comb(2 * n - 1, n)


def _ranks(means: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Per resample (rows), each configuration's rank: 1 + how many configurations are strictly better."""
    m = -means if higher_is_better else means
    m = np.round(m, 12)  # a tie in exact arithmetic stays a tie after averaging
    return 1 + (m[:, None, :] < m[:, :, None]).sum(axis=2)


def _quantile(ranks: np.ndarray, weights: np.ndarray, q: float) -> int:
    """The smallest rank r with P(rank <= r) >= q (weighted)."""
    order = np.argsort(ranks, kind="stable")
    cum = np.cumsum(weights[order])
    k = int(np.searchsorted(cum, q * cum[-1] - 1e-12))
    return int(ranks[order][min(k, len(order) - 1)])


#: fewest blocks for which P(first) is given: below it the share of resamples is a few multisets of a
#: few datasets (2 blocks give 3 multisets, so a "P(first) 1.00" from two datasets), not a probability
MIN_BLOCKS_P_FIRST = 5


@dataclass(frozen=True)
class Ranking:
    """The rank stability of one scenario's configurations over its blocks.

    ``table``: one row per ranked configuration, best mean first: ``configuration``, ``mean``
    (over blocks), ``rank`` (on the observed blocks), ``rank_low``/``rank_high`` (the rank
    interval), ``p_first``; ``top``: the top group; ``missing``: ``{configuration: blocks}`` of the
    configurations left out; ``blocks``: the blocks used; ``method``: how the bootstrap was computed.
    """

    scenario: str
    metric: str
    base_metric: str
    table: pd.DataFrame
    top: tuple[str, ...]
    blocks: tuple[str, ...]
    missing: dict = field(default_factory=dict)
    method: str = ""


def rank_stability(
    scores: pd.DataFrame,
    higher_is_better: bool = True,
    *,
    scenario: str = "",
    metric: str = "",
    base_metric: str = "",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Ranking:
    """Rank intervals and P(first) of the configurations (columns) over the blocks (rows).

    A configuration with a NaN cell is left out and named in ``missing``. P(first) is NaN with
    fewer than :data:`MIN_BLOCKS_P_FIRST` blocks. Exact over every
    multiset of blocks while there are at most :data:`EXACT_MAX_MULTISETS` of them, else
    ``resamples`` bootstrap resamples from ``numpy.random.default_rng(seed)``.

    >>> s = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.6, 0.9, 0.5], "c": [0.5, 0.5, 0.4]})
    >>> r = rank_stability(s)  # P(first) needs MIN_BLOCKS_P_FIRST blocks
    >>> r.table[["configuration", "rank_low", "rank_high", "p_first"]].round(3).values.tolist()
    [['a', 1, 2, nan], ['b', 1, 2, nan], ['c', 3, 3, nan]]
    >>> five = pd.concat([s, s.iloc[:2]], ignore_index=True)
    >>> rank_stability(five).table["p_first"].round(3).tolist()
    [0.913, 0.087, 0.0]
    >>> r.top, r.method
    (('a', 'b'), 'exact over 10 multisets of the 3 blocks')
    """
    complete = [c for c in scores.columns if scores[c].notna().all()]
    missing = {
        str(c): tuple(str(b) for b in scores.index[scores[c].isna()])
        for c in scores.columns
        if c not in complete
    }
    x = scores[complete].to_numpy(dtype=np.float64)
    n = x.shape[0]
    cols = ["configuration", "mean", "rank", "rank_low", "rank_high", "p_first"]
    if n == 0 or not complete:
        return Ranking(
            scenario,
            metric,
            base_metric,
            pd.DataFrame(columns=cols),
            (),
            tuple(map(str, scores.index)),
            missing,
            "no block",
        )
    if n_multisets(n) <= EXACT_MAX_MULTISETS:
        counts, weights = _multisets(n)
        method = (
            f"exact over {len(weights):,} multiset{'s' if len(weights) != 1 else ''} of the {n} block"
            + ("s" if n != 1 else "")
        )
    else:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n, size=(resamples, n))
        counts = np.stack([np.bincount(d, minlength=n) for d in draws]).astype(np.float64)
        weights = np.full(resamples, 1.0 / resamples)
        method = f"{resamples:,} bootstrap resamples of the {n} blocks (seed {seed})"
    means = counts @ x / n  # resamples x configurations
    ranks = _ranks(means, higher_is_better)
    observed = _ranks(x.mean(axis=0, keepdims=True), higher_is_better)[0]
    alpha = (1 - LEVEL) / 2
    rows = []
    for k, c in enumerate(complete):
        low = _quantile(ranks[:, k], weights, alpha + 1e-12)
        high = _quantile(ranks[:, k], weights, 1 - alpha)
        first = float(weights[ranks[:, k] == 1].sum() / weights.sum())
        p_first = first if n >= MIN_BLOCKS_P_FIRST else float("nan")
        rows.append([str(c), float(x[:, k].mean()), int(observed[k]), low, high, p_first])
    table = pd.DataFrame(rows, columns=cols).sort_values(
        ["rank", "mean"], ascending=[True, not higher_is_better], kind="stable"
    )
    table = table.reset_index(drop=True)
    top = tuple(table.loc[table["rank_low"] == 1, "configuration"])
    return Ranking(
        scenario, metric, base_metric, table, top, tuple(map(str, scores.index)), missing, method
    )


def rankings(results: Sequence[RunResult], metric: str, base_metric: str) -> list[Ranking]:
    """:func:`rank_stability` of every scenario's configurations (:func:`block_scores`)."""
    higher = get_metric(metric).higher_is_better
    return [
        rank_stability(table, higher, scenario=scenario, metric=metric, base_metric=base_metric)
        for scenario, (table, _) in block_scores(results, metric, base_metric).items()
    ]


def block_winners(
    scores: pd.DataFrame, higher_is_better: bool = True, chance: pd.Series | None = None
) -> pd.DataFrame:
    """Per block (row of ``scores``): the best configuration, its score, its margin over the
    runner-up (None with one configuration) and the block's chance level (``chance``, indexed by
    block; NaN when unknown).

    >>> s = pd.DataFrame({"a": [0.9, 0.6], "b": [0.7, 0.8]}, index=["d1", "d2"])
    >>> block_winners(s).round(3).values.tolist()
    [['d1', 'a', 0.9, 0.2, nan], ['d2', 'b', 0.8, 0.2, nan]]
    """
    rows = []
    for block, row in scores.iterrows():
        row = row.dropna().sort_values(ascending=not higher_is_better, kind="stable")
        if row.empty:
            continue
        margin = abs(float(row.iloc[0] - row.iloc[1])) if len(row) > 1 else float("nan")
        c = float(chance.get(block, float("nan"))) if chance is not None else float("nan")
        rows.append([str(block), str(row.index[0]), float(row.iloc[0]), margin, c])
    return pd.DataFrame(rows, columns=["block", "best", "score", "margin", "chance"])
