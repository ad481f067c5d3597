"""Statistical comparison of methods (detectors or strategies) over independent blocks (by
default every dataset, see :mod:`clad.report.blocks`), following Demšar (2006) and Benavoli et al.
(2016): the Friedman test (p-value exact, permuted or asymptotic: :mod:`clad.report.exact`) with
Iman and Davenport's F, average ranks, post-hoc tests gated by it (Wilcoxon signed-rank with Holm's
correction, Nemenyi: :mod:`clad.report.posthoc`), per pair the median difference over blocks with
a distribution-free interval, the ranking's agreement across concept orders
(:mod:`clad.report.order_sensitivity`), and one verdict per comparison (:func:`comparison_verdict`)
from which the text, the pair table and the critical-difference diagram are all drawn, so they
cannot contradict each other. With too few blocks (< 3) or methods (< 2) nothing is tested: the
:class:`Comparison` carries a ``message`` saying why and a :class:`StatisticsWarning` is issued;
nothing raises. With one block the methods are compared paired over seeds
(:attr:`Comparison.paired`), a weaker claim. What each test assumes and how its p-value is
obtained: ``docs/guides/statistics.md``.
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

from ..metrics.base import base_metric_shown
from ..defaults import DEFAULT_BASE_METRIC, DEFAULT_METRIC
from ..results.record import RunResult
from ..errors import CladValueError
from ..metrics import get_metric
from .describe import STATS, describe, plural, stats_at
from .blocks import DEFAULT_BLOCKS, evidence_blocks
from .exact import TestResult, friedman_test, iman_davenport, wilcoxon_test
from .order_sensitivity import OrderAgreement, order_agreement, order_agreement_by_dataset
from .posthoc import PAIR_COLUMNS, holm_floor, nemenyi_pvalues, pairs_frame, symmetric_matrix
from .verdict_text import (
    DIFFER,
    NO_DIFFERENCE,
    NOT_TESTED,
    best_sentence,
    decisions,
    omnibus_sentence,
    posthoc_sentence,
)

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

    Parameters
    ----------
    results : iterable of RunResult
    by : str, default "detector"
        The configuration field whose values are the methods (the columns).
    metric : str
        The scalar metric in the cells.
    base_metric : str
        The base metric it is computed from.
    blocks : sequence of str
        The configuration fields that make a block (a row; by default the dataset).

    Examples
    --------
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


def _untestable(scores: pd.DataFrame, by: str) -> str | None:
    """Why a complete blocks x methods table cannot be tested (None when it can)."""
    n, k = scores.shape
    if k < 2:
        return f"only {k} {by}(s) with results in every block; a comparison needs at least 2"
    if n < MIN_BLOCKS:
        return (
            f"only {n} complete block(s) ({', '.join(map(str, scores.index)) or 'none'}); the Friedman and "
            f"post-hoc tests need at least {MIN_BLOCKS} to mean anything, so none was run "
            f"(average ranks are shown for information only)"
        )
    if np.allclose(scores.to_numpy(), scores.to_numpy()[:, :1]):
        return f"every {by} has the same score in every block: there is nothing to test"
    return None


def _holm_note(n: int, k: int, alpha: float, floor: float) -> str:
    """The note that no Wilcoxon–Holm decision can reach ``alpha`` (its ``floor``, :func:`holm_floor`)."""
    pairs_n = k * (k - 1) // 2
    return (
        f"with {n} blocks and {pairs_n} pair{'s' if pairs_n > 1 else ''} no Wilcoxon–Holm decision can "
        f"reach p < α = {alpha}: the smallest exact two-sided p is 2/2^{n} = {2 / 2**n:.3g}"
        + (f", and Holm multiplies it by {pairs_n}: {floor:.3g}" if pairs_n > 1 else "")
        + ("" if k == 2 else "; only the Nemenyi test can name a pair")
    )


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
    permutation test), above it asymptotic.

    Parameters
    ----------
    scores : DataFrame
        Blocks x methods.
    higher_is_better : bool, default True
        The direction of the scores (rank 1 = best).
    alpha : float, default 0.05
        The significance level, strictly between 0 and 1.
    by, metric, base_metric : str
        What the methods are and what the scores measure, for the messages and titles.
    notes : sequence of str
        Caveats about the blocks, kept with the result.

    Examples
    --------
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
    message = _untestable(scores, by)
    if message is not None:
        warnings.warn(f"{plural(by)} by {metric}: {message}", StatisticsWarning, stacklevel=2)
        return Comparison(**common, message=message, notes=tuple(notes))
    statistic = pvalue = nemenyi = fid = None
    if k >= 3:
        test = friedman_test(ranks.to_numpy())
        statistic, pvalue = test.statistic, test.pvalue
        fid = iman_davenport(test.statistic, n, k)
        nemenyi = nemenyi_pvalues(scores)
    pairs, holm = pairs_frame(scores, list(average.index), nemenyi)
    if k == 2:
        message = (
            f"the Friedman test needs at least 3 {plural(by)}; with 2, the Wilcoxon signed-rank test "
            f"alone compares them"
        )
        a, b = average.index
        test = wilcoxon_test(scores[a].to_numpy(), scores[b].to_numpy())
    floor = holm_floor(n, k)
    if floor >= alpha:
        notes.append(_holm_note(n, k, alpha, floor))
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
        rows.append([a, b, *stats_at(st, 0).values(), better])
    return pd.DataFrame(rows, columns=["a", "b", *(f"difference_{k}" for k in STATS), "a_better"])


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

    Parameters
    ----------
    results : iterable of RunResult
    by : str, default "detector"
        The configuration field whose values are the methods compared.
    metric : str
        The scalar metric compared (a name in :data:`clad.metrics.REGISTRY`).
    base_metric : str
        The base metric it is computed from.
    blocks : sequence of str
        The configuration fields that make a block (by default the dataset).
    alpha : float, default 0.05
        The significance level of every test.
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
        column = test
        if column not in ("nemenyi", "wilcoxon_holm"):
            raise CladValueError(f"test={test!r}: allowed 'nemenyi', 'wilcoxon_holm'")
        if self.pairs.empty or (self.pairs[column] == "").all():
            return None
        names = list(dict.fromkeys([*self.pairs["a"], *self.pairs["b"]]))
        gated = [
            float(p) if d in (DIFFER, NO_DIFFERENCE) else 1.0
            for p, d in zip(self.pairs[f"{column}_p"], self.pairs[column])
        ]
        return symmetric_matrix(names, self.pairs["a"], self.pairs["b"], gated)


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
        reason = test.reason
        sentences.extend(omnibus_sentence(c, test, tested))
        posthoc = "Nemenyi" if c.n_methods >= 3 else "Wilcoxon signed-rank"
    pairs["nemenyi"] = decisions(pairs["nemenyi_p"], tested, alpha) if not pairs.empty else []
    pairs["wilcoxon_holm"] = (
        decisions(pairs["wilcoxon_holm_p"], tested, alpha) if not pairs.empty else []
    )
    primary = "nemenyi" if posthoc == "Nemenyi" else "wilcoxon_holm"
    pairs["differ"] = (pairs[primary] == DIFFER) if not pairs.empty else []
    differing = tuple(
        (str(a), str(b)) for a, b, d in zip(pairs["a"], pairs["b"], pairs["differ"]) if d
    )
    if test is not None:
        sentences.extend(posthoc_sentence(c, pairs, differing, tested))
    order_dependent = None
    if best is not None:
        line, order_dependent = best_sentence(c, best)
        sentences.append(line)
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
