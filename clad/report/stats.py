"""Statistical comparison of methods (detectors or strategies) over independent blocks (by
default every dataset, see :mod:`clad.report.blocks`), following Demšar (2006) and Benavoli et al.
(2016):

* the Friedman test (:func:`scipy.stats.friedmanchisquare`) on the blocks x methods table;
* average ranks (:func:`scipy.stats.rankdata` per block; rank 1 = best);
* post-hoc: pairwise Wilcoxon signed-rank tests (:func:`scipy.stats.wilcoxon`) with Holm's
  correction (``statsmodels.stats.multitest.multipletests``), and the Nemenyi test
  (``scikit_posthocs.posthoc_nemenyi_friedman``);
* a critical-difference diagram is drawn from the result by :func:`clad.report.plots.plot_cd`.

Assumptions, stated with every result: the blocks are independent (runs that are the same
computation are merged first, and blocks that share a dataset are named), and a method's score in
a block is the mean over seeds and the remaining configuration fields. With too few blocks (< 3)
or methods (< 2) no test is run: :class:`Comparison` then carries a ``message`` saying why, and a
:class:`StatisticsWarning` is issued; nothing raises. With exactly one block, methods are compared
paired over seeds (:attr:`Comparison.paired`: the mean difference per pair with a 95 % t-based
interval): evidence about that one block only, a weaker claim than a test over blocks.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..core.evaluation import base_metric_shown
from ..results.record import RunResult
from ..errors import CladValueError
from ..metrics import get_metric
from .describe import describe
from .describe import plural as _plural
from .blocks import DEFAULT_BLOCKS, evidence_blocks

__all__ = ["StatisticsWarning", "Comparison", "score_matrix", "compare_methods", "compare", "paired_over_seeds",
           "MIN_BLOCKS", "DEFAULT_BLOCKS"]

#: fewest blocks for which the tests are run at all
MIN_BLOCKS = 3


class StatisticsWarning(UserWarning):
    """A comparison could not be made (too few blocks or methods); the message says why."""


@dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare_methods`.

    ``scores``: blocks x methods (the blocks used); ``ranks``: per-block ranks (1 = best);
    ``average_ranks``: sorted best first; ``statistic``/``pvalue``: Friedman (None if not run);
    ``wilcoxon_holm``/``nemenyi``: methods x methods p-values (None if not run); ``message``: why a
    test was not run or what limits it (None when everything ran); ``notes``: caveats (merged
    computations, shared datasets, dropped blocks); ``paired``: with one block, the comparison
    paired over seeds (one row per pair of methods).
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

    @property
    def n_blocks(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_methods(self) -> int:
        return int(self.scores.shape[1])

    @property
    def significant(self) -> bool:
        """Whether the Friedman test rejects "all methods perform alike" at ``alpha``."""
        return self.pvalue is not None and bool(self.pvalue < self.alpha)

    @property
    def title(self) -> str:
        return f"{_plural(self.by)} by {self.metric} ({base_metric_shown(self.base_metric)})"





def score_matrix(results: Iterable[RunResult], by: str = "detector", metric: str = "continual_average",
                 base_metric: str = "roc_auc", blocks: Sequence[str] = DEFAULT_BLOCKS) -> pd.DataFrame:
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
    values = -scores.to_numpy() if higher_is_better else scores.to_numpy()
    return pd.DataFrame(stats.rankdata(values, axis=1), index=scores.index, columns=scores.columns)


def _wilcoxon_holm(scores: pd.DataFrame) -> pd.DataFrame:
    try:
        from statsmodels.stats.multitest import multipletests
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("Holm's correction needs statsmodels: pip install 'clad[report]'") from None

    names = list(scores.columns)
    pairs = list(itertools.combinations(range(len(names)), 2))
    raw = []
    for a, b in pairs:
        x, y = scores.iloc[:, a].to_numpy(), scores.iloc[:, b].to_numpy()
        if np.allclose(x, y):
            raw.append(1.0)  # no difference at all: nothing to test
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            raw.append(float(stats.wilcoxon(x, y).pvalue))
    adjusted = multipletests(raw, method="holm")[1] if raw else []
    out = pd.DataFrame(1.0, index=names, columns=names)
    for (a, b), p in zip(pairs, adjusted):
        out.iloc[a, b] = out.iloc[b, a] = float(p)
    return out


def _nemenyi(scores: pd.DataFrame) -> pd.DataFrame:
    try:
        import scikit_posthocs as sp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the Nemenyi test needs scikit-posthocs: pip install 'clad[report]'") from None
    out = sp.posthoc_nemenyi_friedman(scores.to_numpy())
    out.index = out.columns = list(scores.columns)
    return out.astype(float)


def compare_methods(scores: pd.DataFrame, higher_is_better: bool = True, alpha: float = 0.05, *,
                    by: str = "method", metric: str = "score", base_metric: str = "",
                    notes: Sequence[str] = ()) -> Comparison:
    """Friedman test, average ranks and post-hoc tests on a blocks x methods table.

    Blocks with a missing value are left out (listed in ``dropped_blocks``). With fewer than
    :data:`MIN_BLOCKS` blocks or fewer than 2 methods no test runs; with exactly 2 methods the
    Friedman test (which needs 3) is replaced by the Wilcoxon signed-rank test alone. ``notes``
    (caveats about the blocks) are kept with the result.

    >>> scores = pd.DataFrame({"A": [0.9, 0.8, 0.85, 0.95], "B": [0.7, 0.6, 0.65, 0.8],
    ...                        "C": [0.5, 0.55, 0.6, 0.7]})
    >>> c = compare_methods(scores)
    >>> c.average_ranks.to_dict(), round(c.statistic, 3), round(c.pvalue, 4)
    ({'A': 1.0, 'B': 2.0, 'C': 3.0}, 8.0, 0.0183)
    """
    if not 0 < alpha < 1:
        raise CladValueError(f"alpha={alpha!r} must lie strictly between 0 and 1")
    scores = scores.astype(float)
    complete = scores.notna().all(axis=1)
    dropped = tuple(str(b) for b in scores.index[~complete])
    scores = scores.loc[complete]
    ranks = _ranks(scores, higher_is_better) if scores.size else pd.DataFrame(index=scores.index,
                                                                               columns=scores.columns)
    average = ranks.mean(axis=0).astype(float).sort_values(kind="stable")
    common = dict(by=by, metric=metric, base_metric=base_metric, higher_is_better=higher_is_better, alpha=alpha,
                  scores=scores, ranks=ranks, average_ranks=average, dropped_blocks=dropped)
    notes = list(notes)
    if dropped:
        notes.append(f"{len(dropped)} block(s) left out for a missing value: {', '.join(dropped)}")
    n, k = scores.shape
    message = None
    if k < 2:
        message = f"only {k} {by}(s) with results in every block; a comparison needs at least 2"
    elif n < MIN_BLOCKS:
        message = (f"only {n} complete block(s) ({', '.join(map(str, scores.index)) or 'none'}); the Friedman and "
                   f"post-hoc tests need at least {MIN_BLOCKS} to mean anything, so none was run "
                   f"(average ranks are shown for information only)")
    if message is not None:
        warnings.warn(f"{_plural(by)} by {metric}: {message}", StatisticsWarning, stacklevel=2)
        return Comparison(**common, message=message, notes=tuple(notes))
    statistic = pvalue = None
    nemenyi = None
    if k == 2:
        message = (f"the Friedman test needs at least 3 {_plural(by)}; with 2, the Wilcoxon signed-rank test "
                   f"alone compares them")
    elif np.allclose(scores.to_numpy(), scores.to_numpy()[:, :1]):
        message = f"every {by} has the same score in every block: there is nothing to test"
        warnings.warn(f"{_plural(by)} by {metric}: {message}", StatisticsWarning, stacklevel=2)
        return Comparison(**common, message=message, notes=tuple(notes))
    else:
        res = stats.friedmanchisquare(*(scores[c].to_numpy() for c in scores.columns))
        statistic, pvalue = float(res.statistic), float(res.pvalue)
        nemenyi = _nemenyi(scores)
    if n < 6:
        notes.append(f"with {n} blocks no two-sided Wilcoxon test can reach p < 0.05")
    return Comparison(**common, statistic=statistic, pvalue=pvalue, wilcoxon_holm=_wilcoxon_holm(scores),
                      nemenyi=nemenyi, message=message, notes=tuple(notes))


def paired_over_seeds(per_seed: pd.DataFrame, higher_is_better: bool = True) -> pd.DataFrame:
    """Methods compared pair by pair over the seeds of one block: per pair ``(a, b)`` (``a`` the
    better on average) the difference ``a - b`` over the seeds where both have a value, described
    as in :func:`clad.report.describe.describe` (``difference_mean``, ``_std``, ``_n``,
    ``_ci_low``, ``_ci_high``: a 95 % t-based interval), and ``a_better``, in how many seeds ``a``
    was better.

    >>> t = pd.DataFrame({"A": [0.9, 0.8, 0.85], "B": [0.7, 0.75, 0.8]})
    >>> p = paired_over_seeds(t)
    >>> p[["a", "b", "difference_n", "a_better"]].values.tolist(), round(float(p["difference_mean"][0]), 4)
    ([['A', 'B', 3, 3]], 0.1)
    """
    means = per_seed.mean(axis=0).sort_values(ascending=not higher_is_better, kind="stable")
    rows = []
    for a, b in itertools.combinations(list(means.index), 2):
        d = (per_seed[a] - per_seed[b]).dropna().to_numpy()
        st = describe(d[:, None]) if d.size else describe(np.full((1, 1), np.nan))
        better = int((d > 0).sum() if higher_is_better else (d < 0).sum())
        rows.append({"a": a, "b": b, **{f"difference_{k}": (int(v[0]) if k == "n" else float(v[0]))
                                        for k, v in st.items()}, "a_better": better})
    return pd.DataFrame(rows, columns=["a", "b", *(f"difference_{k}" for k in ("mean", "std", "n", "ci_low",
                                                                              "ci_high")), "a_better"])


def compare(results: Iterable[RunResult], by: str = "detector", metric: str = "continual_average",
            base_metric: str = "roc_auc", blocks: Sequence[str] = DEFAULT_BLOCKS,
            alpha: float = 0.05) -> Comparison:
    """Compare methods on any declared scalar metric (higher or lower is better as its declaration
    in :data:`clad.metrics.REGISTRY` says) over independent blocks.

    The blocks come from :func:`clad.report.blocks.evidence_blocks` (same computations merged,
    shared datasets noted); then :func:`compare_methods`. With a single block the methods are
    compared paired over its seeds instead (:func:`paired_over_seeds`), and the message says that
    this is evidence about one block only.
    """
    higher = get_metric(metric).higher_is_better
    ev = evidence_blocks(results, by=by, metric=metric, base_metric=base_metric, blocks=blocks)
    notes = [*ev.merged, *ev.shared]
    if ev.scores.shape[0] != 1 or ev.scores.shape[1] < 2:
        return compare_methods(ev.scores, higher_is_better=higher, alpha=alpha, by=by, metric=metric,
                               base_metric=base_metric, notes=notes)
    block = str(ev.scores.index[0])
    seeds = ev.per_seed.dropna(how="all")
    paired = paired_over_seeds(seeds, higher)
    ranks = _ranks(ev.scores, higher)
    message = (f"one independent block ({' × '.join(ev.fields)}: {block}): no test across blocks is possible, so "
               f"the {_plural(by)} are compared paired over its {len(seeds)} seed(s) (mean difference with a 95 % "
               f"t-interval). This shows whether a difference is consistent over seeds on this block, not that it "
               f"holds on other data: a weaker claim than a test over independent datasets")
    warnings.warn(f"{_plural(by)} by {metric}: {message}", StatisticsWarning, stacklevel=2)
    return Comparison(by=by, metric=metric, base_metric=base_metric, higher_is_better=higher, alpha=alpha,
                      scores=ev.scores, ranks=ranks, average_ranks=ranks.mean(axis=0).sort_values(kind="stable"),
                      message=message, notes=tuple(notes), paired=paired)
