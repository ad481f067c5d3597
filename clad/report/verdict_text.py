"""The sentences of a comparison's verdict (:func:`clad.report.stats.comparison_verdict`): the
omnibus test and the test used, the pairs the post-hoc tests name, and the best by average rank
with its dependence on the concept order; and the decision words of a verdict and of each pair."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .describe import plural
from .posthoc import critical_difference, holm_floor, nemenyi_reachable
from .wording import p_text

__all__ = [
    "DIFFER",
    "NO_DIFFERENCE",
    "NOT_TESTED",
    "decisions",
    "omnibus_sentence",
    "posthoc_sentence",
    "best_sentence",
]

#: the decisions of a verdict and of each pair in it
DIFFER, NO_DIFFERENCE, NOT_TESTED = "differ", "no significant difference", "not tested"


def _pair_list(pairs: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{a} vs {b}" for a, b in pairs)


def decisions(p: pd.Series, tested: bool, alpha: float) -> list[str]:
    """Each pair's decision from its p-value: "" where the test does not apply (NaN),
    :data:`NOT_TESTED` where the omnibus test gated it off, else :data:`DIFFER` below ``alpha``."""
    return [
        ("" if v != v else NOT_TESTED if not tested else DIFFER if v < alpha else NO_DIFFERENCE)
        for v in p
    ]


def omnibus_sentence(c, test, tested: bool) -> list[str]:
    """The verdict of comparison ``c``'s omnibus test ``test`` (rejected if ``tested``) and the
    test used: its blocks, statistic, p-value and why that p-value, and Iman–Davenport's F."""
    kind, alpha = plural(c.by), c.alpha
    word = "<" if tested else "≥"
    head = (
        f"the {c.n_methods} {kind} differ"
        if tested
        else f"no significant difference among the {c.n_methods} {kind}"
    )
    verdict = f"Verdict: {head} ({test.name}, {test.method} p = {p_text(test.pvalue)} {word} α = {alpha})."
    used = (
        f"Test used: {test.name} over {c.n_blocks} blocks"
        + (f" (χ² = {test.statistic:.4g})" if test.name == "Friedman" else "")
        + f", {test.method} p"
        + (f" (Monte-Carlo standard error {test.mc_se:.2g})" if test.mc_se is not None else "")
        + f" — {test.reason}."
    )
    if test.method != "asymptotic":
        used += f" The asymptotic approximation would give p = {p_text(test.pvalue_asymptotic)}."
    if c.iman_davenport is not None:
        f_value, f_p = c.iman_davenport
        if f_value != f_value:
            used += (
                " Iman–Davenport F: undefined (all blocks agree: every block ranks the methods alike, so "
                "its denominator is 0)."
            )
        else:
            used += f" Iman–Davenport F = {f_value:.4g} (F-distribution p = {p_text(f_p)}"
            used += (
                ")."
                if test.method == "asymptotic"
                else f"; F is a monotone function of χ², so its {test.method} p is the same {p_text(test.pvalue)})."
            )
    return [verdict, used]


def posthoc_sentence(
    c, pairs: pd.DataFrame, differing: Sequence[tuple[str, str]], tested: bool
) -> list[str]:
    """What the post-hoc tests of comparison ``c`` name (``pairs`` with their decisions,
    ``differing`` by the primary post-hoc test; the omnibus test rejected if ``tested``): nothing,
    or one sentence."""
    kind, alpha = plural(c.by), c.alpha
    if not tested and c.n_methods >= 3:
        return [
            "Post-hoc tests: not tested — the omnibus test did not reject, so no pair is claimed to "
            "differ (Demšar 2006); the pair table and the diagram show this."
        ]
    if c.n_methods < 3:
        return [f"The pair that differs: {_pair_list(differing)}."] if differing else []
    if differing:
        named = f"Pairs that differ (Nemenyi, as the diagram draws them): {_pair_list(differing)}."
    elif not nemenyi_reachable(c.n_blocks, c.n_methods, alpha):
        named = (
            f"No pair can be named: with {c.n_blocks} blocks the Nemenyi test cannot reach α = {alpha} for "
            f"any pair (its critical difference {critical_difference(c.n_blocks, c.n_methods, alpha):.3g} "
            f"exceeds the largest possible rank difference {c.n_methods - 1}); the omnibus test says the "
            f"{kind} differ, not which."
        )
    else:
        named = (
            f"No pair differs by the Nemenyi test: the omnibus test says the {kind} differ, not which "
            "(it can detect a difference that no single pair shows)."
        )
    wh = [(a, b) for a, b, d in zip(pairs["a"], pairs["b"], pairs["wilcoxon_holm"]) if d == DIFFER]
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
    return [named]


def best_sentence(c, best: str) -> tuple[str, bool | None]:
    """The best of comparison ``c`` by average rank (``best``) with the methods tied with it and,
    over several concept orders, whether it stays best; and whether it is order-dependent (None
    with one order)."""
    kind = plural(c.by)
    rank = float(c.average_ranks.iloc[0])
    tied = [str(m) for m, r in c.average_ranks.iloc[1:].items() if np.isclose(r, rank)]
    line = (
        f"Best by average rank: {best} ({rank:.2f}"
        + (f", tied with {', '.join(tied)}" if tied else "")
        + ")"
    )
    order_dependent = None
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
    return line + ".", order_dependent
