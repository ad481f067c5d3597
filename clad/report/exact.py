"""Tests that stay exact at the sample sizes benchmarks have (3 to 8 independent blocks).

Asymptotic tests (Friedman's chi-square, the normal approximation of the Wilcoxon signed-rank
statistic) are least trustworthy with few blocks and ties. Up to :data:`EXACT_MAX_BLOCKS` blocks
(the one switch point) the p-values come from the test's own null distribution: Friedman's by a
dynamic programme over rank-sum vectors within a budget (:data:`STATE_LIMIT`, :data:`WORK_LIMIT`),
beyond it from a seeded permutation test (:data:`PERMUTATIONS`); Wilcoxon's over every sign
pattern (:data:`ZERO_METHOD`). Above the switch point scipy's asymptotic tests stay. How each works,
its measured cost and the tie rule (:data:`TIE_TOLERANCE`): the statistics guide
(``docs/guides/statistics.md``). Pure numpy/scipy: numbers in, :class:`TestResult` out.

>>> r = friedman_test([[1, 2, 3], [1, 2, 3], [1, 2, 3]])
>>> r.method, r.arrangements, round(r.pvalue, 4), round(r.pvalue_asymptotic, 4)
('exact', 216, 0.0278, 0.0498)
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "EXACT_MAX_BLOCKS",
    "STATE_LIMIT",
    "CHUNK_ROWS",
    "WORK_LIMIT",
    "PERMUTATIONS",
    "PERMUTATION_SEED",
    "ZERO_METHOD",
    "TIE_TOLERANCE",
    "tied_ranks",
    "TestResult",
    "friedman_statistic",
    "friedman_test",
    "iman_davenport",
    "wilcoxon_test",
    "median_interval",
    "kendall_w",
]

#: the switch point: with at most this many blocks, p-values are exact (or from a permutation test);
#: with more, the asymptotic tests are used
EXACT_MAX_BLOCKS = 15
#: the most distinct rank-sum vectors the exact Friedman programme may hold after a block (its
#: time and memory budget, about STATE_LIMIT x (k + 1) x 8 bytes); beyond it, a Monte-Carlo
#: permutation test
STATE_LIMIT = 1_000_000
#: candidate rank-sum vectors made at once (states x k! arrangements, in chunks of this many rows)
CHUNK_ROWS = 2_000_000
#: the most candidate vectors (states x distinct arrangements, summed over the blocks) the exact
#: programme may make: its time budget (about a second on one core)
WORK_LIMIT = 4_000_000
#: random within-block permutations of the Monte-Carlo Friedman test
PERMUTATIONS = 10_000
#: seed of those permutations (fixed: a report is reproducible)
PERMUTATION_SEED = 2006
#: how zero differences are handled by the Wilcoxon signed-rank test (scipy's name): dropped
ZERO_METHOD = "wilcox"
#: one tie tolerance for every test: two values (or a difference and zero) closer than this, relative
#: to the block's largest magnitude (at least 1), are equal -- float noise is never a difference
TIE_TOLERANCE = 1e-12


def tied_ranks(values) -> np.ndarray:
    """Ranks within each row of ``values`` (1 = smallest), values closer than :data:`TIE_TOLERANCE`
    (relative to the row's largest magnitude, at least 1) tied at their average rank; a row holding
    NaN has NaN ranks (as :func:`scipy.stats.rankdata`).

    >>> tied_ranks([[0.5, 0.5 + 1e-13, 0.7]]).tolist()
    [[1.5, 1.5, 3.0]]
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    out = np.full(values.shape, np.nan)
    for i, row in enumerate(values):
        if np.isnan(row).any():  # as scipy's rankdata: a row with NaN has no ranks
            continue
        tol = TIE_TOLERANCE * max(1.0, float(np.max(np.abs(row))))
        order = np.argsort(row, kind="stable")
        snapped = row[order].copy()
        # a run of values each within tol of the previous is one tie
        for j in range(1, snapped.size):
            if snapped[j] - snapped[j - 1] <= tol:
                snapped[j] = snapped[j - 1]
        merged = np.empty_like(row)
        merged[order] = snapped
        out[i] = stats.rankdata(merged)
    return out


@dataclass(frozen=True)
class TestResult:
    """A test's outcome and how its p-value was obtained.

    ``method``: ``"exact"`` (the whole null distribution enumerated: ``arrangements`` outcomes),
    ``"permutation"`` (``permutations`` seeded random ones; ``mc_se`` the Monte-Carlo standard
    error of ``pvalue``) or ``"asymptotic"``; ``reason`` says why, in words;
    ``pvalue_asymptotic`` the approximation's p-value, for comparison.
    """

    __test__ = False  # not a pytest test class

    name: str
    statistic: float
    pvalue: float
    method: str
    reason: str
    pvalue_asymptotic: float
    arrangements: int | None = None
    permutations: int | None = None
    mc_se: float | None = None


def _tie_term(ranks: np.ndarray) -> float:
    """sum over blocks and tie groups of t^3 - t."""
    counts = [np.unique(row, return_counts=True)[1].astype(float) for row in np.atleast_2d(ranks)]
    return sum((float(np.sum(c**3 - c)) for c in counts), 0.0)


def friedman_statistic(ranks) -> float:
    """Friedman's chi-square with the correction for ties, from an n blocks x k methods array of
    within-block ranks (as :func:`scipy.stats.friedmanchisquare` computes it).

    >>> friedman_statistic([[1, 2, 3], [1, 3, 2], [2, 1, 3], [1, 2, 3]])  # rank sums 5, 8, 11
    4.5
    """
    r = np.asarray(ranks, dtype=float)
    n, k = r.shape
    sums = r.sum(axis=0)
    chi2 = 12.0 / (n * k * (k + 1)) * float(np.sum(sums**2)) - 3.0 * n * (k + 1)
    correction = 1.0 - _tie_term(r) / (n * (k**3 - k))
    return chi2 / correction if correction > 0 else float("nan")


_PACKED_LIMIT = 2**62  # rank-sum vectors packed into one int64 while they fit


def _doubled(ranks: np.ndarray) -> np.ndarray:
    """Average ranks are multiples of 1/2: twice them are integers (exact comparisons)."""
    return np.rint(2.0 * ranks).astype(np.int64)


class _OverBudget(Exception):
    """The exact programme would hold more rank-sum vectors than allowed."""


def _merge(probs: np.ndarray, vectors: np.ndarray, packed: bool, weights):
    """Distinct rank-sum vectors of ``vectors`` with the summed probability of each."""
    if packed:
        _, first, inverse = np.unique(vectors @ weights, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(vectors, axis=0, return_index=True, return_inverse=True)
    return vectors[first], np.bincount(inverse.ravel(), weights=probs)


def _exact_friedman(
    r2: np.ndarray, state_limit: int | None = None, chunk_rows: int | None = None
) -> float:
    """P(sum of squared rank sums >= observed) under every within-block arrangement equally likely,
    by a dynamic programme over rank-sum vectors: after each block, the distinct vectors of rank
    sums so far and the probability of each (a block's k! arrangements each 1/k!). The null
    distribution and the statistic are both symmetric in the methods, so a vector is kept sorted:
    the vectors that are permutations of each other are one state (up to k! times fewer). Raises
    :class:`_OverBudget` when more than ``state_limit`` vectors would be held."""
    state_limit = STATE_LIMIT if state_limit is None else state_limit
    chunk_rows = CHUNK_ROWS if chunk_rows is None else chunk_rows
    n, k = r2.shape
    observed = int(np.sum(r2.sum(axis=0) ** 2))
    if n == 1:  # one block: every arrangement has the same rank sums squared, so P(>= observed) = 1
        return 1.0
    # a block's arrangements alone exceed the budget: never listed
    if math.factorial(k) > WORK_LIMIT:
        raise _OverBudget(math.factorial(k))
    # every rank sum (doubled) lies in [0, base): a vector of them is one integer
    base = int(2 * k * n + 1)
    packed = base**k < _PACKED_LIMIT
    weights = base ** np.arange(k, dtype=np.int64) if packed else None
    states = np.zeros((1, k), dtype=np.int64)
    probs = np.ones(1)
    work = 0
    for index, row in enumerate(r2):
        arranged, mult = np.unique(
            row[np.array(list(itertools.permutations(range(k))))], axis=0, return_counts=True
        )
        p_arr = mult / float(mult.sum())  # distinct arrangements of the block (ties repeat some)
        block = len(states) * len(arranged)
        # the states never get fewer: the rest costs at least this
        if work + block * (n - index) > WORK_LIMIT:
            raise _OverBudget(work + block * (n - index))
        work += block
        step = max(1, chunk_rows // len(arranged))
        merged_states, merged_probs = None, None
        for start in range(0, len(states), step):
            s, p = states[start : start + step], probs[start : start + step]
            # the distribution is symmetric in the methods (every arrangement equally likely), and so is
            # the statistic: a vector and its permutations are one state, kept sorted
            new = np.sort((s[:, None, :] + arranged[None, :, :]).reshape(-1, k), axis=1)
            w = (p[:, None] * p_arr[None, :]).ravel()
            if merged_states is not None:
                new, w = np.concatenate([merged_states, new]), np.concatenate([merged_probs, w])
            merged_states, merged_probs = _merge(w, new, packed, weights)
            if len(merged_states) > state_limit:
                raise _OverBudget(len(merged_states))
        states, probs = merged_states, merged_probs
    return float(min(1.0, probs[(states**2).sum(axis=1) >= observed].sum()))


def _permutation_friedman(r2: np.ndarray, permutations: int, seed: int) -> float:
    """Monte-Carlo p-value (1 + #{as extreme}) / (1 + permutations): never 0, valid at any size."""
    n, k = r2.shape
    observed = int(np.sum(r2.sum(axis=0) ** 2))
    rng = np.random.default_rng(seed)
    extreme, done, chunk = 0, 0, max(1, 2_000_000 // (n * k))
    while done < permutations:
        m = min(chunk, permutations - done)
        shuffled = rng.permuted(np.broadcast_to(r2, (m, n, k)), axis=2)
        extreme += int(np.sum((shuffled.sum(axis=1) ** 2).sum(axis=1) >= observed))
        done += m
    return (1.0 + extreme) / (1.0 + permutations)


def friedman_test(
    ranks,
    *,
    max_blocks: int = EXACT_MAX_BLOCKS,
    state_limit: int | None = None,
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
) -> TestResult:
    """Friedman's test on an n blocks x k methods array of within-block ranks (ties as average
    ranks), its p-value exact, from a permutation test or asymptotic (see the module).

    >>> r = friedman_test([[1, 2, 3], [1, 3, 2], [2, 1, 3], [1, 2, 3]])
    >>> r.statistic, r.method, r.arrangements, round(r.pvalue, 4), round(r.pvalue_asymptotic, 4)
    (4.5, 'exact', 1296, 0.125, 0.1054)
    """
    r = np.asarray(ranks, dtype=float)
    if r.ndim != 2 or r.shape[0] < 1 or r.shape[1] < 2:
        raise ValueError(f"ranks of shape {r.shape}: need blocks x methods with at least 2 methods")
    n, k = r.shape
    chi2 = friedman_statistic(r)
    asymptotic = float(stats.chi2.sf(chi2, k - 1)) if chi2 == chi2 else float("nan")
    common = dict(name="Friedman", statistic=chi2, pvalue_asymptotic=asymptotic)
    if n > max_blocks:
        return TestResult(
            **common,
            pvalue=asymptotic,
            method="asymptotic",
            reason=f"{n} blocks > {max_blocks} (the switch point): the chi-square approximation",
        )
    arrangements = math.factorial(k) ** n
    r2 = _doubled(r)
    limit = STATE_LIMIT if state_limit is None else state_limit
    try:
        exact = _exact_friedman(r2, limit)
    except _OverBudget:
        exact = None
    if exact is not None:
        size = f"{arrangements:,}" if arrangements < 10**12 else f"{arrangements:.2g}"
        return TestResult(
            **common,
            pvalue=exact,
            method="exact",
            arrangements=arrangements,
            reason=f"{n} blocks ≤ {max_blocks} (the switch point): the exact distribution over all "
            f"({k}!)^{n} = {size} rank arrangements, by a dynamic programme over rank-sum "
            f"vectors (within its budget of {limit:,} vectors)",
        )
    p = _permutation_friedman(r2, permutations, seed)
    return TestResult(
        **common,
        pvalue=p,
        method="permutation",
        permutations=permutations,
        mc_se=math.sqrt(p * (1 - p) / permutations),
        reason=f"{n} blocks ≤ {max_blocks} (the switch point), but the exact distribution over "
        f"({k}!)^{n} ≈ {arrangements:.2g} rank arrangements needs more than {limit:,} rank-sum "
        f"vectors (the exact programme's budget): {permutations:,} random within-block "
        f"permutations (seed {seed})",
    )


def iman_davenport(chi2: float, n: int, k: int) -> tuple[float, float]:
    """Iman and Davenport's F = (n-1) chi2 / (n(k-1) - chi2) and its p-value from the F distribution
    with k-1 and (k-1)(n-1) degrees of freedom (Demšar 2006, eq. 2); undefined (NaN, NaN) when every
    block ranks the methods alike (the denominator is 0: a page says "undefined (all blocks agree)").

    >>> [round(v, 4) for v in iman_davenport(4.5, 4, 3)]
    [3.8571, 0.0837]
    >>> iman_davenport(8.0, 4, 3)  # every block ranks alike: chi2 = n (k - 1)
    (nan, nan)
    """
    denominator = n * (k - 1) - chi2
    if denominator <= 1e-12 * max(1.0, chi2):
        return float("nan"), float("nan")
    f = (n - 1) * chi2 / denominator
    return float(f), float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))


def _signed_rank_parts(d: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Non-zero differences and twice the average ranks of their absolute values (integers)."""
    tol = TIE_TOLERANCE * max(scale, 1.0)
    d = np.where(np.abs(d) <= tol, 0.0, d)
    nonzero = d[d != 0]
    magnitudes = np.round(np.abs(nonzero) / max(scale, 1.0), 12)  # equal up to rounding: tied
    return nonzero, _doubled(stats.rankdata(magnitudes))


def _exact_signed_rank(r2: np.ndarray, positive: int) -> float:
    """P(|W+ - mean| >= |observed - mean|) over all 2^m sign patterns (a convolution over ranks)."""
    total = int(r2.sum())
    counts = np.zeros(total + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in r2:  # each rank joins W+ (shifted by r) or not
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[: total + 1 - r]
        counts = counts + shifted
    values = np.arange(total + 1)
    extreme = np.abs(2 * values - total) >= abs(2 * positive - total)
    return float(counts[extreme].sum() / 2.0 ** len(r2))


def wilcoxon_test(x, y, *, max_blocks: int = EXACT_MAX_BLOCKS) -> TestResult:
    """Two-sided Wilcoxon signed-rank test of the paired values ``x`` and ``y`` (one per block):
    zero differences dropped (:data:`ZERO_METHOD`), tied absolute differences at their average
    rank; exact over all 2^m sign patterns of the m non-zero differences up to ``max_blocks``
    blocks, scipy's ``wilcoxon`` (its own choice of method) above. The statistic is min(W+, W-).

    >>> r = wilcoxon_test([0.9, 0.8, 0.7, 0.7, 0.6], [0.8, 0.7, 0.6, 0.7, 0.7])  # a zero and ties
    >>> r.method, r.arrangements, r.statistic, r.pvalue
    ('exact', 16, 2.5, 0.625)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"x and y must be 1-D of the same length, got shapes {x.shape} and {y.shape}"
        )
    n = x.size
    scale = float(np.max(np.abs(np.concatenate([x, y])))) if n else 1.0
    nonzero, r2 = _signed_rank_parts(x - y, scale)
    m = nonzero.size
    positive = int(r2[nonzero > 0].sum())
    statistic = min(positive, int(r2.sum()) - positive) / 2.0
    zeros = n - m
    name = "Wilcoxon signed-rank"
    if m == 0:
        reason = f"every one of the {n} differences is zero: nothing to test"
        return TestResult(name, 0.0, 1.0, "exact", reason, 1.0, arrangements=1)
    # the normal approximation (scipy's ``method="approx"``: tie-corrected variance, no continuity correction)
    mean, variance = r2.sum() / 4.0, float(np.sum(r2.astype(float) ** 2)) / 16.0
    asym = (
        math.erfc(abs(positive / 2.0 - mean) / math.sqrt(variance) / math.sqrt(2.0))
        if variance > 0
        else 1.0
    )
    if n > max_blocks:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.wilcoxon(x, y, zero_method=ZERO_METHOD)
        reason = f"{n} blocks > {max_blocks} (the switch point): scipy's wilcoxon"
        return TestResult(name, float(res.statistic), float(res.pvalue), "asymptotic", reason, asym)
    dropped = f", {zeros} zero difference{'s' if zeros != 1 else ''} dropped" if zeros else ""
    return TestResult(
        name,
        statistic,
        _exact_signed_rank(r2, positive),
        "exact",
        f"{n} blocks ≤ {max_blocks} (the switch point): all 2^{m} = {2**m:,} sign patterns of "
        f"the non-zero differences{dropped}",
        asym,
        arrangements=2**m,
    )


@functools.lru_cache(maxsize=256)
def _coverages(n: int) -> np.ndarray:
    """1 - 2 P(Binomial(n, 1/2) < l) for l = 1, 2, ..., (n + 1) // 2."""
    return 1.0 - 2.0 * stats.binom.cdf(np.arange(0, (n + 1) // 2), n, 0.5)


def median_interval(d, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """The median of ``d`` and a distribution-free interval for it from order statistics:
    ``(median, low, high, level)``. [d_(l), d_(n+1-l)] (sorted, 1-based) covers the median with
    probability ``level`` = 1 - 2 P(Binomial(n, 1/2) < l); ``l`` is the largest giving ``level`` >=
    ``confidence``. With too few values for that (n <= 5 at 95 %), the interval is [min, max] and
    ``level`` says how much less it covers (n = 3: 75 %, n = 4: 87.5 %, n = 5: 93.75 %).

    >>> median_interval([0.1, 0.3, 0.2, 0.5, 0.0, 0.4, 0.6, 0.2, 0.3, 0.1])
    (0.25, 0.1, 0.5, 0.978515625)
    >>> median_interval([0.1, 0.3, 0.2])
    (0.2, 0.1, 0.3, 0.75)
    """
    d = np.sort(np.asarray(d, dtype=float))
    n = d.size
    if n == 0:
        return (float("nan"),) * 4
    median = float(np.median(d))
    levels = _coverages(n)
    ok = np.nonzero(levels >= confidence)[0]
    l = int(ok[-1]) + 1 if ok.size else 1
    return median, float(d[l - 1]), float(d[n - l]), float(levels[l - 1]) if levels.size else 0.0


def kendall_w(ranks) -> float:
    """Kendall's coefficient of concordance W of m raters (rows) ranking n items (columns), ties
    at their average rank and corrected for: W = 12 S / (m^2 (n^3 - n) - m T), S the sum of squared
    deviations of the items' rank sums from their mean, T the sum over raters and tie groups of
    t^3 - t. 1 = every rater ranks alike, 0 = no agreement; NaN with fewer than 2 items or when
    every rater ties everything.

    >>> kendall_w([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]), kendall_w([[1, 2], [2, 1]])
    (1.0, 0.0)
    """
    r = np.asarray(ranks, dtype=float)
    m, n = r.shape
    if n < 2 or m < 1:
        return float("nan")
    sums = r.sum(axis=0)
    s = float(np.sum((sums - sums.mean()) ** 2))
    denominator = m**2 * (n**3 - n) - m * _tie_term(r)
    return 12.0 * s / denominator if denominator > 0 else float("nan")
