"""Text written for a person: a test's p-value with its method, and warnings grouped by cause.

No page or console line shows a Python repr, dict or list literal: a test result is said as
"Friedman χ² = 10.33, exact p = 0.00167 over 46,656 arrangements"; warnings that differ only in
their numbers (a constant's value, a concept's index) are one cause, said once with where it
happened and how often.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from ..results.record import RunResult

__all__ = ["result_text", "warning_template", "WarningGroup", "warning_groups"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def p_text(p: float) -> str:
    """A p-value rounded for reading: three significant digits, scientific below 10⁻⁴."""
    return f"{p:.3g}" if p >= 1e-4 or p == 0 else f"{p:.1e}"


def result_text(test) -> str:
    """One phrase for a test result (:class:`clad.report.exact.TestResult`): its statistic, its
    p-value and how the p-value was obtained.

    >>> from clad.report.exact import TestResult
    >>> result_text(TestResult("Friedman", 10.333333, 0.0016718, "exact", "6 blocks", 0.0057, arrangements=46656))
    'Friedman χ² = 10.33, exact p = 0.00167 over 46,656 arrangements'
    >>> result_text(TestResult("Friedman", 4.2, 0.0301, "permutation", "", 0.03, permutations=10000, mc_se=0.0017))
    'Friedman χ² = 4.2, permutation p = 0.0301 from 10,000 permutations ± 0.0017 Monte-Carlo error'
    >>> result_text(TestResult("Wilcoxon signed-rank", 3.0, 0.5, "asymptotic", "", 0.5))
    'Wilcoxon signed-rank W = 3, asymptotic p = 0.5 by the normal approximation'
    """
    symbol = (
        "χ²"
        if test.name == "Friedman"
        else "W"
        if test.name.startswith("Wilcoxon")
        else "statistic"
    )
    how = {
        "exact": f"over {test.arrangements:,} arrangements"
        if test.arrangements
        else "over every arrangement",
        "permutation": (
            f"from {test.permutations:,} permutations" if test.permutations else "from permutations"
        )
        + (f" ± {test.mc_se:.2g} Monte-Carlo error" if test.mc_se is not None else ""),
        "asymptotic": "by the chi-square approximation"
        if test.name == "Friedman"
        else "by the normal approximation",
    }
    return (
        f"{test.name} {symbol} = {test.statistic:.4g}, {test.method} p = {p_text(test.pvalue)}"
        f" {how.get(test.method, '')}"
    ).rstrip()


def warning_template(text: str) -> str:
    """A warning's cause: its text with every number replaced by ``#`` (two warnings that differ
    only in a value or an index are one cause).

    >>> warning_template("test concept 'C3': every score is the same (0.25), so its ROC-AUC is 0.5")
    "test concept 'C#': every score is the same (#), so its ROC-AUC is #"
    """
    return _NUMBER.sub("#", text)


@dataclass
class WarningGroup:
    """The runs that recorded one cause of warning: ``template``, an ``example`` text, how many
    runs (``runs``) and warnings (``count``), and where: ``datasets`` and ``scenarios`` (each with
    its number of runs)."""

    template: str
    example: str
    runs: int = 0
    count: int = 0
    datasets: dict = field(default_factory=dict)
    scenarios: dict = field(default_factory=dict)
    data: bool = False  # a property of the data (every run on the dataset records it)

    def where(self, most: int = 4) -> str:
        """``synth0 (12), synth1 (3) … in concept_agnostic (15)``: the datasets and scenarios."""

        def listed(counts: dict) -> str:
            items = sorted(counts.items(), key=lambda kv: -kv[1])
            text = ", ".join(f"{k} ({v:,})" for k, v in items[:most])
            return text + (f" and {len(items) - most} more" if len(items) > most else "")

        return f"{listed(self.datasets)}; scenario {listed(self.scenarios)}"


#: the start of a warning that describes the data, not a run (the same for every run on a dataset)
DATA_PROPERTIES = ("training concept ",)


def warning_groups(results: Iterable[RunResult]) -> list[WarningGroup]:
    """The warnings of ``results`` grouped by :func:`warning_template`, most frequent first (a
    property of the data first).

    >>> rs = [RunResult(d, "s", "naive", "x", 0, warnings=(f"every score is the same ({v})",))
    ...       for d, v in (("a", 0.1), ("a", 0.2), ("b", 3))]
    >>> [(g.template, g.runs, g.datasets) for g in warning_groups(rs)]
    [('every score is the same (#)', 3, {'a': 2, 'b': 1})]
    """
    groups: dict[str, WarningGroup] = {}
    for r in results:
        for w in r.warnings:
            key = warning_template(w)
            g = groups.get(key)
            if g is None:
                g = groups[key] = WarningGroup(
                    key, w, data=w.startswith(DATA_PROPERTIES) and " constant or near-constant" in w
                )
            g.count += 1
        for key in dict.fromkeys(warning_template(w) for w in r.warnings):
            g = groups[key]
            g.runs += 1
            g.datasets[r.dataset] = g.datasets.get(r.dataset, 0) + 1
            g.scenarios[r.scenario] = g.scenarios.get(r.scenario, 0) + 1
    return sorted(groups.values(), key=lambda g: (not g.data, -g.runs))
