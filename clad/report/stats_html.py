"""The statistics section of the report: each comparison's verdict, pair table, scores and
critical-difference diagram, all rendered from its one :class:`~clad.report.stats.Verdict`, and
its rows of ``statistics.csv``."""

from __future__ import annotations

import json
from typing import Sequence

import pandas as pd

from . import html as H
from .exact import EXACT_MAX_BLOCKS, PERMUTATIONS, STATE_LIMIT, ZERO_METHOD
from .figures import FigureStore, cd_html
from .describe import plural
from .stats import DIFFER, NO_DIFFERENCE, NOT_TESTED, Comparison, Verdict
from .tables import frame_html, stats_text, stats_tips

__all__ = [
    "pair_table",
    "comparison_html",
    "statistics_rows",
    "statistics_frame",
    "statistics_intro",
]

#: the style of a table whose claims are gated off (greyed)
_GREY = "color:#8a8a8a"


def _num(v: float) -> str:
    return "n/a" if v is None or v != v else f"{v:.3g}"


def pair_table(v: Verdict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pair table as shown: one row per pair, the median difference a - b over blocks with its
    order-statistic interval and coverage, the Wilcoxon p-value (raw, how it was computed, Holm-
    adjusted) and decision, the Nemenyi p-value and decision; and which cells are bold (the
    decisions that say "differ")."""
    rows = [
        [
            f"{r.a} vs {r.b}",
            f"{_num(r.median_difference)} [{_num(r.ci_low)}, {_num(r.ci_high)}] "
            f"({100 * r.ci_level:.3g} %)",
            f"{_num(r.wilcoxon_p)} ({r.wilcoxon_method})",
            _num(r.wilcoxon_holm_p),
            r.wilcoxon_holm or "n/a",
            _num(r.nemenyi_p),
            r.nemenyi or "n/a",
        ]
        for r in v.pairs.itertuples(index=False)
    ]
    shown = pd.DataFrame(
        rows,
        columns=[
            "pair",
            "median a − b [interval]",
            "Wilcoxon p",
            "Holm p",
            "Wilcoxon–Holm",
            "Nemenyi p",
            "Nemenyi",
        ],
    )
    marks = pd.DataFrame(False, index=shown.index, columns=shown.columns)
    marks["Wilcoxon–Holm"] = shown["Wilcoxon–Holm"] == DIFFER
    marks["Nemenyi"] = shown["Nemenyi"] == DIFFER
    marks["pair"] = list(v.pairs["differ"]) if len(v.pairs) else []
    return shown, marks


def _pairs_html(c: Comparison, v: Verdict) -> str:
    if v.pairs.empty:
        return ""
    shown, marks = pair_table(v)
    better = "higher" if c.higher_is_better else "lower"
    legend = (
        f"<p class='legend'>Pairs ({H.html.escape(plural(c.by))} ordered by average rank, a the better): the "
        f"median over the {c.n_blocks} blocks of the difference a − b in {H.html.escape(c.metric)} ({better} "
        f"is better) with a distribution-free interval from order statistics and the probability that it "
        f"covers the median (95 % when there are enough blocks for it; with n ≤ 5 blocks [min, max] covers "
        f"1 − 2^(1−n)); the Wilcoxon signed-rank p-value (zero differences dropped, zero_method="
        f"'{ZERO_METHOD}') and Holm's adjustment over the pairs; the Nemenyi p-value. Bold: the pair differs "
        f"at α = {c.alpha}.</p>"
    )
    table = frame_html(shown, marks)
    if not v.posthoc_tested:
        gate = (
            f"Not tested: the omnibus test did not reject (p = {v.test.pvalue:.3g} ≥ α = {c.alpha}), so no "
            f"pair is claimed to differ; the p-values are shown greyed, for information only."
        )
        return legend + H.message(gate) + f'<div class="not-tested" style="{_GREY}">{table}</div>'
    return legend + table


def comparison_html(c: Comparison, figs: FigureStore) -> str:
    """One comparison: the verdict, messages and caveats, the paired-over-seeds table (one block),
    the pair table, the scores with average ranks and the critical-difference diagram."""
    v = c.verdict
    out = [
        f"<h3>{H.html.escape(c.title)}</h3>",
        f"<p class='verdict' data-status='{H.html.escape(v.status)}'><strong>{H.html.escape(v.sentences[0])}"
        f"</strong> {H.html.escape(' '.join(v.sentences[1:]))}</p>",
    ]
    if c.message and v.tested:
        out.append(H.message(c.message))
    out += [H.message(note) for note in c.notes]
    if c.paired is not None and not c.paired.empty:
        shown = pd.DataFrame(
            {
                "pair": [f"{a} vs {b}" for a, b in zip(c.paired["a"], c.paired["b"])],
                "difference a − b": stats_text(c.paired, "difference"),
                "a better in": [
                    f"{k} of {n} independent value{'s' if n != 1 else ''}"
                    for k, n in zip(c.paired["a_better"], c.paired["difference_n"])
                ],
            }
        )
        out.append(
            "<p class='legend'>Paired over seeds (one block): per pair, the mean over seeds of the "
            "difference in "
            + H.html.escape(c.metric)
            + f" ({'higher' if c.higher_is_better else 'lower'} is "
            "better) ± its std over seeds (the 95 % Student-t interval, none below 3 seeds, and the number "
            "of seeds with both values in each cell's tooltip):</p>"
        )
        tips = pd.DataFrame(
            {"pair": "", "difference a − b": stats_tips(c.paired, "difference"), "a better in": ""}
        )
        out.append(frame_html(shown, tips=tips))
    out.append(_pairs_html(c, v))
    if c.scores.size:
        table = c.scores.copy()
        table.loc["average rank"] = c.ranks.mean(axis=0)
        out.append(
            "<p class='legend'>Scores per block (mean over seeds, distinct scenario settings and other "
            "fields) and average rank (1 = best):</p>"
        )
        out.append(frame_html(table, index=True))
    if c.orders is not None:
        o = c.orders
        ranks = o.ranks.copy()
        ranks.index = [str(i) for i in ranks.index]
        out.append(
            f"<p class='legend'>Average rank of each {H.html.escape(c.by)} within each concept order (1 = best; "
            f"Kendall's W = {o.kendall_w:.3g} over {o.n_orders} orders; {H.html.escape(str(o.best))} best in "
            f"{o.best_orders} of them):</p>" + frame_html(ranks, index=True)
        )
    if c.orders_by_dataset:
        rows = [
            {
                "dataset": d,
                "orders": a.n_orders,
                "Kendall's W": round(a.kendall_w, 3),
                f"best {c.by}": a.best,
                "best in": f"{a.best_orders} of {a.n_orders}",
                "order-dependent": "yes" if a.order_dependent else "no",
            }
            for d, a in c.orders_by_dataset
        ]
        out.append(
            f"<p class='legend'>Order sensitivity within each dataset: its concept orders rank the "
            f"{H.html.escape(plural(c.by))} (each order's runs alone), Kendall's W says how alike (1 = "
            f"identically), and the best over all orders is counted where it stays best. The orders of a "
            f"dataset are one block of the tests above, never several.</p>"
            + frame_html(pd.DataFrame(rows))
        )
    out.append(cd_html(c, figs))
    return "\n".join(p for p in out if p)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def statistics_rows(c: Comparison) -> list[dict]:
    """The rows of ``statistics.csv`` for one comparison: first one row (``level`` = "comparison")
    with the verdict, the omnibus test and how its p-value was obtained, then one row per pair
    (``level`` = "pair") with the median difference, its interval and the post-hoc decisions."""
    v = c.verdict
    t = c.test
    fid = c.iman_davenport or (None, None)
    key = {"by": c.by, "metric": c.metric, "base_metric": c.base_metric}
    rows = [
        {
            "level": "comparison",
            **key,
            "blocks": c.n_blocks,
            "methods": c.n_methods,
            "verdict": v.status,
            "test": t.name if t else "",
            "p_method": t.method if t else "",
            "test_reason": v.reason,
            "friedman_statistic": c.statistic,
            "friedman_p": c.pvalue,
            "test_statistic": t.statistic if t else None,
            "test_p": t.pvalue if t else None,
            "p_asymptotic": t.pvalue_asymptotic if t else None,
            "arrangements": t.arrangements if t else None,
            "permutations": t.permutations if t else None,
            "mc_se": t.mc_se if t else None,
            "iman_davenport_F": fid[0],
            "iman_davenport_p": fid[1],
            "posthoc": v.posthoc or "",
            "differing_pairs": _json([list(p) for p in v.differing]),
            "best": v.best or "",
            "kendall_w_orders": c.orders.kendall_w if c.orders else None,
            "best_share_orders": c.orders.best_share if c.orders else None,
            "order_dependent": v.order_dependent,
            "average_ranks": _json({str(k): float(x) for k, x in c.average_ranks.items()}),
            "message": c.message or "",
            "notes": " | ".join(c.notes),
        }
    ]
    for r in v.pairs.itertuples(index=False):
        rows.append(
            {
                "level": "pair",
                **key,
                "blocks": int(r.blocks),
                "a": r.a,
                "b": r.b,
                "median_difference": r.median_difference,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "ci_level": r.ci_level,
                "wilcoxon_statistic": r.wilcoxon_statistic,
                "wilcoxon_p": r.wilcoxon_p,
                "wilcoxon_method": r.wilcoxon_method,
                "wilcoxon_holm_p": r.wilcoxon_holm_p,
                "wilcoxon_holm": r.wilcoxon_holm,
                "nemenyi_p": r.nemenyi_p,
                "nemenyi": r.nemenyi,
                "verdict": DIFFER
                if r.differ
                else NO_DIFFERENCE
                if v.posthoc_tested
                else NOT_TESTED,
            }
        )
    return rows


def statistics_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """``statistics.csv`` as a table: the rows of :func:`statistics_rows`, counts as integers."""
    table = pd.DataFrame(list(rows))
    for column in ("blocks", "methods", "arrangements", "permutations"):
        if column in table:
            table[column] = table[column].astype("Int64")
    return table


def statistics_intro(blocks: Sequence[str], alpha: float, default: bool) -> str:
    """The legend of the statistics section: blocks, the tests, exact below the switch point, the gate."""
    why = (
        " (the default: datasets are the independent units, and blocks that share a dataset would not be "
        "independent)"
        if default
        else ""
    )
    return (
        f"<p class='legend'>Blocks: {H.html.escape(' × '.join(blocks))}{why}. Each score is the mean over "
        f"seeds, over the distinct scenario settings and over the other configuration fields; runs that are the "
        f"same computation (identical R for every method and seed, e.g. a strategy that never reads the concept "
        f"id in concept_aware and concept_incremental) are counted once, and the page says where. With at least "
        f"3 blocks: the Friedman test (Iman–Davenport's F beside it), then, only if it rejects at α = {alpha} "
        f"(Demšar's protocol), the Nemenyi test (drawn in the critical-difference diagram) and Wilcoxon "
        f"signed-rank tests with Holm's correction. With at most {EXACT_MAX_BLOCKS} blocks (the switch point) "
        f"every p-value is exact: Friedman's over every within-block rank arrangement, by a dynamic programme "
        f"over rank-sum vectors while it holds at most {STATE_LIMIT:,} of them, else from {PERMUTATIONS:,} seeded "
        f"random permutations (its Monte-Carlo standard error stated); Wilcoxon's over every sign pattern. Above it the asymptotic tests are used. "
        f"The tests assume independent blocks. With fewer than 3 blocks no test is run; with one block the "
        f"methods are compared paired over seeds, evidence about that block only. Guide: "
        f"docs/guides/statistics.md.</p>"
    )
