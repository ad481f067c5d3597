"""Statistical comparison of methods (detectors or strategies) over independent blocks (by
default every dataset, see :mod:`clad.report.blocks`), following Demšar (2006) and Benavoli et al.
(2016):

* the Friedman test on the blocks x methods table, its p-value exact (enumerated), from a seeded
  permutation test or asymptotic (:func:`clad.report.exact.friedman_test`: exact up to
  :data:`~clad.report.exact.EXACT_MAX_BLOCKS` blocks, the switch point), with Iman and Davenport's F
  beside it;
* average ranks (:func:`scipy.stats.rankdata` per block; rank 1 = best);
* post-hoc, gated by the Friedman test: pairwise Wilcoxon signed-rank tests (exact over every sign
  pattern up to the switch point, :func:`clad.report.exact.wilcoxon_test`) with Holm's correction
  (:func:`holm`), and the Nemenyi test (the computation of
  ``scikit_posthocs.posthoc_nemenyi_friedman``);
* per pair, the median difference over blocks with a distribution-free interval from order
  statistics (:func:`clad.report.exact.median_interval`): how large a difference is;
* with several concept orders, whether the ranking survives the order
  (:func:`clad.report.order_sensitivity.order_agreement`: Kendall's W, the share of orders the best stays best);
* one verdict per comparison (:func:`comparison_verdict`): the text, the pair table and the
  critical-difference diagram (:func:`clad.report.plots.plot_cd`) are all drawn from it, so they
  cannot contradict each other.

Assumptions, stated with every result: the blocks are independent (runs that are the same
computation are merged first, and blocks that share a dataset are named), and a method's score in
a block is the mean over seeds and the remaining configuration fields. With too few blocks (< 3)
or methods (< 2) no test is run: :class:`Comparison` then carries a ``message`` saying why, and a
:class:`StatisticsWarning` is issued; nothing raises. With exactly one block, methods are compared
paired over seeds (:attr:`Comparison.paired`: the mean difference per pair with a 95 % Student-t
interval, none below 3 seeds): evidence about that one block only, a weaker claim than a test over blocks.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..metrics.base import base_metric_shown
from ..defaults import DEFAULT_BASE_METRIC, DEFAULT_METRIC
from ..results.record import RunResult
from ..errors import CladValueError
from ..metrics import get_metric
from .describe import describe, plural
from .blocks import DEFAULT_BLOCKS, evidence_blocks
from .exact import TestResult, friedman_test, iman_davenport, median_interval, wilcoxon_test
from .order_sensitivity import OrderAgreement, order_agreement, order_agreement_by_dataset

__all__ = [
    "Comparison",
    "StatisticsWarning",
    "score_matrix",
    "compare_methods",
    "compare",
    "Verdict",
    "comparison_verdict",
]

#: fewest blocks for which the tests are run at all
MIN_BLOCKS = 3
#: the decisions of a verdict and of each pair in it
DIFFER, NO_DIFFERENCE, NOT_TESTED = "differ", "no significant difference", "not tested"


class StatisticsWarning(UserWarning):
    """A comparison could not be made (too few blocks or methods); the message says why."""


@dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare_methods`.

    ``scores``: blocks x methods (the blocks used); ``ranks``: per-block ranks (1 = best);
    ``average_ranks``: sorted best first; ``statistic``/``pvalue``: Friedman's chi-square and the
    p-value the verdict uses (exact, permutation or asymptotic: ``test`` says which; None if not
    run); ``test``: the omnibus test (Friedman; with two methods the Wilcoxon signed-rank test);
    ``iman_davenport``: (F, p) beside Friedman's; ``wilcoxon_holm``/``nemenyi``: methods x methods
    p-values (None if not run); ``pairs``: one row per pair of methods (``a`` the better by average
    rank): the median difference a - b over blocks with its interval, the Wilcoxon and Nemenyi
    p-values; ``message``: why a test was not run or what limits it (None when everything ran);
    ``notes``: caveats (merged computations, shared datasets, dropped blocks); ``paired``: with one
    block, the comparison paired over seeds (one row per pair of methods); ``orders``: with several
    concept orders, whether the ranking survives them. :attr:`verdict` is what the page says.
    """

    by: str
    metric: str
    base_metric: str
    higher_is_better: bool
    alpha: float
    scores: pd.DataFrame
    ranks: pd.DataFrame
    average_ranks: pd.Series
    statistic: float | None = None
    pvalue: float | None = None
    wilcoxon_holm: pd.DataFrame | None = None
    nemenyi: pd.DataFrame | None = None
    dropped_blocks: tuple[str, ...] = ()
    message: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    paired: pd.DataFrame | None = None
    test: TestResult | None = None
    iman_davenport: tuple[float, float] | None = None
    pairs: pd.DataFrame | None = None
    orders: OrderAgreement | None = None
    #: per dataset run in several concept orders, the agreement of its orders' rankings
    orders_by_dataset: tuple[tuple[str, OrderAgreement], ...] = ()
    #: (block, seed) x methods: each block's score per seed before the mean over seeds
    #: (:attr:`clad.report.blocks.Blocks.per_seed`), for intervals of the block scores
    per_seed: pd.DataFrame | None = None

    @property
    def n_blocks(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_methods(self) -> int:
        return int(self.scores.shape[1])

    @property
    def significant(self) -> bool:
        """Whether the omnibus test (:attr:`test`: Friedman, or Wilcoxon with two methods) rejects
        "all methods perform alike" at ``alpha``."""
        return self.test is not None and bool(self.test.pvalue < self.alpha)

    @property
    def title(self) -> str:
        return f"{plural(self.by)} by {self.metric} ({base_metric_shown(self.base_metric)})"

    @functools.cached_property
    def verdict(self) -> "Verdict":
        """:func:`comparison_verdict` of this comparison (computed once)."""
        return comparison_verdict(self)


def score_matrix(
    results: Iterable[RunResult],
    by: str = "detector",
    metric: str = DEFAULT_METRIC,
    base_metric: str = DEFAULT_BASE_METRIC,
    blocks: Sequence[str] = DEFAULT_BLOCKS,
) -> pd.DataFrame:
    """Blocks x methods table of ``metric``: each cell the mean over seeds and over every
    configuration field that is neither ``by`` nor a block field (e.g. over strategies when
    comparing detectors), runs that are the same computation counted once
    (:func:`clad.report.blocks.evidence_blocks`). A method missing from a block leaves NaN.

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult(ds, sc, st, det, 0, metrics={"roc_auc": {"continual_average": v}})
    ...       for ds, sc, st, det, v in [("d", "s1", "naive", "a", 0.6), ("d", "s1", "cumulative", "a", 0.8),
    ...                                  ("d", "s1", "naive", "b", 0.5), ("e", "s2", "naive", "a", 0.9)]]
    >>> score_matrix(rs).round(2).to_dict()
    {'a': {'d': 0.7, 'e': 0.9}, 'b': {'d': 0.5, 'e': nan}}
    """
    return evidence_blocks(results, by, metric, base_metric, blocks).scores


def _ranks(scores: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    from .exact import tied_ranks

    values = -scores.to_numpy() if higher_is_better else scores.to_numpy()
    return pd.DataFrame(tied_ranks(values), index=scores.index, columns=scores.columns)


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment: the i-th smallest of m p-values times (m - i + 1), made
    non-decreasing in that order and capped at 1 (what ``statsmodels``' ``multipletests(...,
    method="holm")`` returns, which the tests check; written out here because that call runs a full
    garbage collection each time, 0.15 s, and a report makes many).

    >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate(p[order] * (p.size - np.arange(p.size))))
    out = np.empty_like(p)
    out[order] = stepped
    return out


def holm_floor(n: int, k: int) -> float:
    """The smallest Holm-adjusted p-value any pair of ``k`` methods can get from exact two-sided
    Wilcoxon signed-rank tests over ``n`` blocks: the number of pairs times 2/2^n (capped at 1).
    At or above α, no Wilcoxon–Holm decision can say "differ", whatever the data.

    >>> holm_floor(6, 3), holm_floor(6, 2), holm_floor(8, 4)
    (0.09375, 0.03125, 0.046875)
    """
    return min(1.0, (k * (k - 1) // 2) * 2.0 / 2.0**n)


def nemenyi_reachable(n: int, k: int, alpha: float = 0.05) -> bool:
    """Whether any pair of ``k`` methods can differ by the Nemenyi test over ``n`` blocks: the
    largest possible difference of average ranks, k - 1, exceeds the critical difference
    q_α sqrt(k(k+1) / 6n) (q_α the studentized range quantile over sqrt 2, Demšar 2006).

    >>> nemenyi_reachable(2, 4), nemenyi_reachable(6, 4)
    (False, True)
    """
    return bool(k - 1 > critical_difference(n, k, alpha))


def critical_difference(n: int, k: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks for ``k`` methods over ``n`` blocks at
    ``alpha`` (Demšar 2006): q_α sqrt(k(k+1) / 6n), q_α the studentized range quantile / sqrt 2.

    >>> round(critical_difference(6, 4), 3)
    1.915
    """
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def _nemenyi(scores: pd.DataFrame) -> pd.DataFrame:
    """Methods x methods p-values of Nemenyi's test on a complete blocks x methods table (Demšar
    2006): the studentized range's survival function at sqrt 2 |R_a - R_b| / sqrt(k(k+1) / 6n), R
    the average ranks of k methods over n blocks; 1.0 on the diagonal. The computation of
    ``scikit_posthocs.posthoc_nemenyi_friedman`` on a complete table, step for step (the same
    numbers), without importing scikit-posthocs and the plotting it brings."""
    from .exact import tied_ranks

    # the ranks with clad's one tie tolerance (Nemenyi's statistic reads ranks only): float noise is a tie
    ranks = tied_ranks(scores.to_numpy())
    n, k = ranks.shape
    mean_ranks = ranks.mean(axis=0)
    upper = np.triu_indices(k, 1)
    q = np.abs(mean_ranks[upper[0]] - mean_ranks[upper[1]]) / np.sqrt(k * (k + 1.0) / (6.0 * n))
    p = np.ones((k, k))
    p[upper] = stats.studentized_range.sf(q * np.sqrt(2.0), k, np.inf)
    p[upper[1], upper[0]] = p[upper]
    names = list(scores.columns)
    return pd.DataFrame(p, index=names, columns=names)


#: the columns of :attr:`Comparison.pairs`
PAIR_COLUMNS = (
    "a",
    "b",
    "blocks",
    "median_difference",
    "ci_low",
    "ci_high",
    "ci_level",
    "wilcoxon_statistic",
    "wilcoxon_p",
    "wilcoxon_method",
    "wilcoxon_holm_p",
    "nemenyi_p",
)


def _pairs(
    scores: pd.DataFrame, order: Sequence[str], nemenyi: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per pair (``a`` before ``b`` in ``order``, best first): the median over blocks of
    a - b with its order-statistic interval, the Wilcoxon signed-rank test and its Holm-adjusted
    p-value, the Nemenyi p-value; and the methods x methods matrix of Holm-adjusted p-values."""
    rows, tests = [], []
    for a, b in itertools.combinations(order, 2):
        x, y = scores[a].to_numpy(), scores[b].to_numpy()
        median, low, high, level = median_interval(x - y)
        w = wilcoxon_test(x, y)
        tests.append(w)
        rows.append(
            {
                "a": a,
                "b": b,
                "blocks": int(x.size),
                "median_difference": median,
                "ci_low": low,
                "ci_high": high,
                "ci_level": level,
                "wilcoxon_statistic": w.statistic,
                "wilcoxon_p": w.pvalue,
                "wilcoxon_method": w.method,
                "nemenyi_p": float(nemenyi.loc[a, b]) if nemenyi is not None else np.nan,
            }
        )
    adjusted = holm([t.pvalue for t in tests])
    table = pd.DataFrame(rows, columns=[c for c in PAIR_COLUMNS if c != "wilcoxon_holm_p"])
    table.insert(PAIR_COLUMNS.index("wilcoxon_holm_p"), "wilcoxon_holm_p", adjusted.astype(float))
    return table, _symmetric(list(scores.columns), table["a"], table["b"], table["wilcoxon_holm_p"])


def _symmetric(
    names: Sequence[str], a: Iterable[str], b: Iterable[str], values: Iterable[float]
) -> pd.DataFrame:
    """A names x names matrix holding each pair's value on both sides of the diagonal, 1.0 elsewhere."""
    where = {n: i for i, n in enumerate(names)}
    out = np.ones((len(names), len(names)))
    for x, y, v in zip(a, b, values):
        out[where[x], where[y]] = out[where[y], where[x]] = float(v)
    return pd.DataFrame(out, index=list(names), columns=list(names))


def compare_methods(
    scores: pd.DataFrame,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    *,
    by: str = "method",
    metric: str = "score",
    base_metric: str = "",
    notes: Sequence[str] = (),
) -> Comparison:
    """Friedman test, average ranks, post-hoc tests and effect sizes on a blocks x methods table.

    Blocks with a missing value are left out (listed in ``dropped_blocks``). With fewer than
    :data:`MIN_BLOCKS` blocks or fewer than 2 methods no test runs; with exactly 2 methods the
    Friedman test (which needs 3) is replaced by the Wilcoxon signed-rank test alone. Up to
    :data:`~clad.report.exact.EXACT_MAX_BLOCKS` blocks the p-values are exact (or from a seeded
    permutation test), above it asymptotic. ``notes`` (caveats about the blocks) are kept with the result.

    >>> scores = pd.DataFrame({"A": [0.9, 0.8, 0.85, 0.95], "B": [0.7, 0.6, 0.65, 0.8],
    ...                        "C": [0.5, 0.55, 0.6, 0.7]})
    >>> c = compare_methods(scores)
    >>> c.average_ranks.to_dict(), c.statistic, c.test.method, round(c.pvalue, 4), round(c.test.pvalue_asymptotic, 4)
    ({'A': 1.0, 'B': 2.0, 'C': 3.0}, 8.0, 'exact', 0.0046, 0.0183)
    >>> print(c.verdict.text.split(". ")[0])
    Verdict: the 3 methods differ (Friedman, exact p = 0.00463 < α = 0.05)
    """
    if not 0 < alpha < 1:
        raise CladValueError(f"alpha={alpha!r} must lie strictly between 0 and 1")
    scores = scores.astype(float)
    complete = scores.notna().all(axis=1)
    dropped = tuple(str(b) for b in scores.index[~complete])
    scores = scores.loc[complete]
    ranks = (
        _ranks(scores, higher_is_better)
        if scores.size
        else pd.DataFrame(index=scores.index, columns=scores.columns)
    )
    average = ranks.mean(axis=0).astype(float).sort_values(kind="stable")
    common = dict(
        by=by,
        metric=metric,
        base_metric=base_metric,
        higher_is_better=higher_is_better,
        alpha=alpha,
        scores=scores,
        ranks=ranks,
        average_ranks=average,
        dropped_blocks=dropped,
    )
    notes = list(notes)
    if dropped:
        notes.append(f"{len(dropped)} block(s) left out for a missing value: {', '.join(dropped)}")
    n, k = scores.shape
    message = None
    if k < 2:
        message = f"only {k} {by}(s) with results in every block; a comparison needs at least 2"
    elif n < MIN_BLOCKS:
        message = (
            f"only {n} complete block(s) ({', '.join(map(str, scores.index)) or 'none'}); the Friedman and "
            f"post-hoc tests need at least {MIN_BLOCKS} to mean anything, so none was run "
            f"(average ranks are shown for information only)"
        )
    elif np.allclose(scores.to_numpy(), scores.to_numpy()[:, :1]):
        message = f"every {by} has the same score in every block: there is nothing to test"
    if message is not None:
        warnings.warn(f"{plural(by)} by {metric}: {message}", StatisticsWarning, stacklevel=2)
        return Comparison(**common, message=message, notes=tuple(notes))
    statistic = pvalue = nemenyi = fid = None
    if k >= 3:
        test = friedman_test(ranks.to_numpy())
        statistic, pvalue = test.statistic, test.pvalue
        fid = iman_davenport(test.statistic, n, k)
        nemenyi = _nemenyi(scores)
    pairs, holm = _pairs(scores, list(average.index), nemenyi)
    if k == 2:
        message = (
            f"the Friedman test needs at least 3 {plural(by)}; with 2, the Wilcoxon signed-rank test "
            f"alone compares them"
        )
        a, b = average.index
        test = wilcoxon_test(scores[a].to_numpy(), scores[b].to_numpy())
    floor = holm_floor(n, k)
    if floor >= alpha:
        pairs_n = k * (k - 1) // 2
        notes.append(
            f"with {n} blocks and {pairs_n} pair{'s' if pairs_n > 1 else ''} no Wilcoxon–Holm decision can "
            f"reach p < α = {alpha}: the smallest exact two-sided p is 2/2^{n} = {2 / 2**n:.3g}"
            + (f", and Holm multiplies it by {pairs_n}: {floor:.3g}" if pairs_n > 1 else "")
            + ("" if k == 2 else "; only the Nemenyi test can name a pair")
        )
    return Comparison(
        **common,
        statistic=statistic,
        pvalue=pvalue,
        wilcoxon_holm=holm,
        nemenyi=nemenyi,
        message=message,
        notes=tuple(notes),
        test=test,
        iman_davenport=fid,
        pairs=pairs,
    )


def paired_over_seeds(
    per_seed: pd.DataFrame, higher_is_better: bool = True, computations: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Methods compared pair by pair over the seeds of one block: per pair ``(a, b)`` (``a`` the
    better on average) the difference ``a - b`` over the seeds where both have a value, described
    as in :func:`clad.report.describe.describe` (``difference_mean``, ``_std``, ``_n``,
    ``_ci_low``, ``_ci_high``: a 95 % t-interval, none below 3 seeds), and ``a_better``, in how many seeds ``a``
    was better. With ``computations`` (what each cell was computed from,
    :attr:`clad.report.blocks.Blocks.computations`), seeds where both methods repeat a computation
    already counted are one value: a pair of deterministic methods has one difference, not one per seed.

    >>> t = pd.DataFrame({"A": [0.9, 0.8, 0.85], "B": [0.7, 0.75, 0.8]})
    >>> p = paired_over_seeds(t)
    >>> p[["a", "b", "difference_n", "a_better"]].values.tolist(), round(float(p["difference_mean"][0]), 4)
    ([['A', 'B', 3, 3]], 0.1)
    """
    means = per_seed.mean(axis=0).sort_values(ascending=not higher_is_better, kind="stable")
    rows = []
    for a, b in itertools.combinations(list(means.index), 2):
        diff = (per_seed[a] - per_seed[b]).dropna()
        if computations is not None:
            pair = [(computations.at[i, a], computations.at[i, b]) for i in diff.index]
            diff = diff[~pd.Series(pair, index=diff.index, dtype=object).duplicated().to_numpy()]
        d = diff.to_numpy()
        st = describe(d[:, None]) if d.size else describe(np.full((1, 1), np.nan))
        better = int((d > 0).sum() if higher_is_better else (d < 0).sum())
        rows.append(
            {
                "a": a,
                "b": b,
                **{
                    f"difference_{k}": (int(v[0]) if k == "n" else float(v[0]))
                    for k, v in st.items()
                },
                "a_better": better,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "a",
            "b",
            *(f"difference_{k}" for k in ("mean", "std", "n", "ci_low", "ci_high")),
            "a_better",
        ],
    )


def compare(
    results: Iterable[RunResult],
    by: str = "detector",
    metric: str = DEFAULT_METRIC,
    base_metric: str = DEFAULT_BASE_METRIC,
    blocks: Sequence[str] = DEFAULT_BLOCKS,
    alpha: float = 0.05,
) -> Comparison:
    """Compare methods on any declared scalar metric (higher or lower is better as its declaration
    in :data:`clad.metrics.REGISTRY` says) over independent blocks.

    The blocks come from :func:`clad.report.blocks.evidence_blocks` (same computations merged,
    shared datasets noted); then :func:`compare_methods`. With a single block the methods are
    compared paired over its seeds instead (:func:`paired_over_seeds`), and the message says that
    this is evidence about one block only.
    """
    higher = get_metric(metric).higher_is_better
    results = list(results)
    ev = evidence_blocks(results, by=by, metric=metric, base_metric=base_metric, blocks=blocks)
    notes = [*ev.merged, *ev.matched, *ev.shared]
    if ev.scores.shape[0] != 1 or ev.scores.shape[1] < 2:
        c = compare_methods(
            ev.scores,
            higher_is_better=higher,
            alpha=alpha,
            by=by,
            metric=metric,
            base_metric=base_metric,
            notes=notes,
        )
        return _with_orders(dataclasses.replace(c, per_seed=ev.per_seed), results, blocks)
    block = str(ev.scores.index[0])
    seeds = ev.per_seed.dropna(how="all")
    ids = ev.computations.reindex(seeds.index) if ev.computations is not None else None
    paired = paired_over_seeds(seeds, higher, ids)
    ranks = _ranks(ev.scores, higher)
    values = int(paired["difference_n"].max()) if len(paired) else 0
    if values < 2:
        message = (
            f"one independent block ({' × '.join(ev.fields)}: {block}) and fewer than two independent values "
            f"per pair of {plural(by)} over its seeds ({len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
            + (", every method one computation over them" if len(seeds) > 1 else "")
            + "): no test across blocks and no paired comparison is possible; the scores are shown for "
            "information only"
        )
        paired = None
    else:
        message = (
            f"one independent block ({' × '.join(ev.fields)}: {block}): no test across blocks is possible, "
            f"so the {plural(by)} are compared paired over its seeds (at most {values} independent values "
            f"per pair: seeds where both are one computation count once; mean difference with a 95 % "
            f"Student-t interval, none below 3 values). This shows whether a difference is consistent over "
            f"seeds on this block, not that it holds on other data: a weaker claim than a test over "
            f"independent datasets"
        )
    warnings.warn(f"{plural(by)} by {metric}: {message}", StatisticsWarning, stacklevel=2)
    c = Comparison(
        by=by,
        metric=metric,
        base_metric=base_metric,
        higher_is_better=higher,
        alpha=alpha,
        scores=ev.scores,
        ranks=ranks,
        average_ranks=ranks.mean(axis=0).sort_values(kind="stable"),
        message=message,
        notes=tuple(notes),
        paired=paired,
        per_seed=ev.per_seed,
    )
    return _with_orders(c, results, blocks)


def _with_orders(c: Comparison, results: Sequence[RunResult], blocks: Sequence[str]) -> Comparison:
    """``c`` with the agreement of its ranking across concept orders, when the runs have several."""
    if c.n_methods < 2 or c.average_ranks.empty:
        return c
    best = str(c.average_ranks.index[0])
    agreement = order_agreement(results, c.by, c.metric, c.base_metric, blocks, best=best)
    if agreement is None:
        return c
    within = order_agreement_by_dataset(results, c.by, c.metric, c.base_metric, best=best)
    return dataclasses.replace(c, orders=agreement, orders_by_dataset=tuple(within.items()))


# -- the verdict ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Verdict:
    """What a comparison lets a reader conclude: the one source of the page's text, pair table and
    critical-difference diagram (:func:`comparison_verdict`).

    ``status``: :data:`DIFFER`, :data:`NO_DIFFERENCE` or :data:`NOT_TESTED`; ``test``: the omnibus
    test (None when none could be run) and ``reason``: why that test (exact, permutation or
    asymptotic) or why none; ``posthoc``: the test whose decisions name the pairs that differ and
    that the diagram draws (Nemenyi after Friedman; the Wilcoxon signed-rank test with two
    methods); ``pairs``: :attr:`Comparison.pairs` plus a decision per post-hoc test
    (``nemenyi`` and ``wilcoxon_holm``: :data:`DIFFER`, :data:`NO_DIFFERENCE`, :data:`NOT_TESTED`, or
    "" where the test does not apply) and ``differ`` (by ``posthoc``); ``differing``: the pairs that
    differ by ``posthoc``; ``best``: the first by average rank, ``order_dependent``: whether it is
    best in every concept order (None with one order); ``sentences``: the text.
    """

    title: str
    by: str
    alpha: float
    status: str
    test: TestResult | None
    reason: str
    iman_davenport: tuple[float, float] | None
    posthoc: str | None
    posthoc_tested: bool
    pairs: pd.DataFrame
    differing: tuple[tuple[str, str], ...]
    best: str | None
    order_dependent: bool | None
    sentences: tuple[str, ...]

    @property
    def tested(self) -> bool:
        return self.status != NOT_TESTED

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def significance(self, test: str = "nemenyi") -> pd.DataFrame | None:
        """Methods x methods p-values of a post-hoc test (``"nemenyi"`` or ``"wilcoxon_holm"``) as
        the verdict decides them: the p-value where the pair was tested, 1.0 (nothing claimed) where
        the omnibus test gated it off; None when the test does not apply. What a diagram draws."""
        column = {"nemenyi": "nemenyi", "wilcoxon_holm": "wilcoxon_holm"}.get(test)
        if column is None:
            raise CladValueError(f"test={test!r}: allowed 'nemenyi', 'wilcoxon_holm'")
        if self.pairs.empty or (self.pairs[column] == "").all():
            return None
        names = list(dict.fromkeys([*self.pairs["a"], *self.pairs["b"]]))
        gated = [
            float(p) if d in (DIFFER, NO_DIFFERENCE) else 1.0
            for p, d in zip(self.pairs[f"{column}_p"], self.pairs[column])
        ]
        return _symmetric(names, self.pairs["a"], self.pairs["b"], gated)


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 1e-4 or p == 0 else f"{p:.1e}"


def _pair_list(pairs: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{a} vs {b}" for a, b in pairs)


def _decisions(p: pd.Series, tested: bool, alpha: float) -> list[str]:
    return [
        ("" if v != v else NOT_TESTED if not tested else DIFFER if v < alpha else NO_DIFFERENCE)
        for v in p
    ]


def comparison_verdict(c: Comparison) -> Verdict:
    """The verdict of a comparison, following Demšar's (2006) protocol: the omnibus test (Friedman;
    with two methods the Wilcoxon signed-rank test) decides whether the methods differ at all; only
    when it rejects are the post-hoc tests read, and then the pairs that differ are named. When it
    does not, every pair is "not tested" and the diagram joins every method (it claims nothing).
    With too little evidence for any test the verdict says so and why. The page's text, pair table
    and diagram are all drawn from this one object (also ``c.verdict``).

    Four blocks where the chi-square approximation would call three methods different (p = 0.0498)
    but the exact distribution does not:

    >>> scores = pd.DataFrame({"A": [0.6, 0.6, 0.6, 0.6], "B": [0.7, 0.7, 0.8, 0.8], "C": [0.8, 0.8, 0.7, 0.7]})
    >>> v = comparison_verdict(compare_methods(scores, by="detector"))
    >>> v.status, v.test.method, round(v.test.pvalue, 4), round(v.test.pvalue_asymptotic, 4)
    ('no significant difference', 'exact', 0.0694, 0.0498)
    >>> set(v.pairs["nemenyi"]), v.differing, float(v.significance("nemenyi").min().min())
    ({'not tested'}, (), 1.0)
    """
    kind = plural(c.by)
    alpha = c.alpha
    sentences: list[str] = []
    pairs = c.pairs.copy() if c.pairs is not None else pd.DataFrame(columns=list(PAIR_COLUMNS))
    best = str(c.average_ranks.index[0]) if len(c.average_ranks) and c.n_methods >= 2 else None
    test = c.test
    if test is None:
        status, posthoc, tested = NOT_TESTED, None, False
        reason = c.message or "no test was run"
        if c.paired is not None:
            reason = (
                f"{reason}. Neither an exact nor an asymptotic test across blocks is possible with one block "
                f"(each needs at least {MIN_BLOCKS})"
            )
        sentences.append(f"Verdict: not tested. Test used: none — {reason}.")
    else:
        tested = bool(test.pvalue < alpha)
        status = DIFFER if tested else NO_DIFFERENCE
        word = "<" if tested else "≥"
        head = (
            f"the {c.n_methods} {kind} differ"
            if tested
            else f"no significant difference among the {c.n_methods} {kind}"
        )
        sentences.append(
            f"Verdict: {head} ({test.name}, {test.method} p = {_p(test.pvalue)} {word} α = {alpha})."
        )
        reason = test.reason
        used = (
            f"Test used: {test.name} over {c.n_blocks} blocks"
            + (f" (χ² = {test.statistic:.4g})" if test.name == "Friedman" else "")
            + f", {test.method} p"
            + (f" (Monte-Carlo standard error {test.mc_se:.2g})" if test.mc_se is not None else "")
            + f" — {test.reason}."
        )
        if test.method != "asymptotic":
            used += f" The asymptotic approximation would give p = {_p(test.pvalue_asymptotic)}."
        if c.iman_davenport is not None:
            f_value, f_p = c.iman_davenport
            if f_value != f_value:
                used += (
                    " Iman–Davenport F: undefined (all blocks agree: every block ranks the methods alike, so "
                    "its denominator is 0)."
                )
            else:
                used += f" Iman–Davenport F = {f_value:.4g} (F-distribution p = {_p(f_p)}"
                used += (
                    ")."
                    if test.method == "asymptotic"
                    else f"; F is a monotone function of χ², so its {test.method} p is the same {_p(test.pvalue)})."
                )
        sentences.append(used)
        posthoc = "Nemenyi" if c.n_methods >= 3 else "Wilcoxon signed-rank"
    pairs["nemenyi"] = _decisions(pairs["nemenyi_p"], tested, alpha) if not pairs.empty else []
    pairs["wilcoxon_holm"] = (
        _decisions(pairs["wilcoxon_holm_p"], tested, alpha) if not pairs.empty else []
    )
    primary = "nemenyi" if posthoc == "Nemenyi" else "wilcoxon_holm"
    pairs["differ"] = (pairs[primary] == DIFFER) if not pairs.empty else []
    differing = tuple(
        (str(a), str(b)) for a, b, d in zip(pairs["a"], pairs["b"], pairs["differ"]) if d
    )
    if test is not None and not tested and c.n_methods >= 3:
        sentences.append(
            "Post-hoc tests: not tested — the omnibus test did not reject, so no pair is claimed to "
            "differ (Demšar 2006); the pair table and the diagram show this."
        )
    elif test is not None and c.n_methods >= 3:
        if differing:
            named = (
                f"Pairs that differ (Nemenyi, as the diagram draws them): {_pair_list(differing)}."
            )
        elif not nemenyi_reachable(c.n_blocks, c.n_methods, alpha):
            named = (
                f"No pair can be named: with {c.n_blocks} blocks the Nemenyi test cannot reach α = {alpha} for "
                f"any pair (its critical difference {critical_difference(c.n_blocks, c.n_methods, alpha):.3g} "
                f"exceeds the largest possible rank difference {c.n_methods - 1}); the omnibus test says the "
                f"{kind} differ, not which."
            )
        else:
            named = (
                "No pair differs by the Nemenyi test: the omnibus test says the "
                + kind
                + " differ, not which "
                "(it can detect a difference that no single pair shows)."
            )
        wh = [
            (a, b) for a, b, d in zip(pairs["a"], pairs["b"], pairs["wilcoxon_holm"]) if d == DIFFER
        ]
        floor = holm_floor(c.n_blocks, c.n_methods)
        if floor >= alpha:
            named += (
                f" Wilcoxon signed-rank with Holm's correction cannot reach α = {alpha} at {c.n_blocks} blocks "
                f"(smallest possible adjusted p {floor:.3g}), so it names no pair."
            )
        else:
            named += (
                f" Wilcoxon signed-rank with Holm's correction: {_pair_list(wh) if wh else 'no pair'} at α = "
                f"{alpha}."
            )
        sentences.append(named)
    elif test is not None and differing:
        sentences.append(f"The pair that differs: {_pair_list(differing)}.")
    order_dependent = None
    if best is not None:
        rank = float(c.average_ranks.iloc[0])
        tied = [str(m) for m, r in c.average_ranks.iloc[1:].items() if np.isclose(r, rank)]
        line = (
            f"Best by average rank: {best} ({rank:.2f}"
            + (f", tied with {', '.join(tied)}" if tied else "")
            + ")"
        )
        if c.orders is not None:
            o = c.orders
            order_dependent = o.order_dependent
            line += (
                f"; over {o.n_orders} concept orders Kendall's W = {o.kendall_w:.3g} (1 = every order ranks the "
                f"{kind} alike)"
            )
            if o.best == best:
                line += f" and {best} is best in {o.best_orders} of {o.n_orders}" + (
                    ": order-dependent" if order_dependent else ": in every order"
                )
            else:  # the best is missing from some order: it cannot be best in every one
                order_dependent = True
                line += f" and {best} is not ranked in every order: order-dependent"
        sentences.append(line + ".")
    return Verdict(
        title=c.title,
        by=c.by,
        alpha=alpha,
        status=status,
        test=test,
        reason=reason,
        iman_davenport=c.iman_davenport,
        posthoc=posthoc,
        posthoc_tested=tested,
        pairs=pairs,
        differing=differing,
        best=best,
        order_dependent=order_dependent,
        sentences=tuple(sentences),
    )
