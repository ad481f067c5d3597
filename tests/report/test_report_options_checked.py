"""The report's options are checked before anything is written (a column list naming nothing or a
column twice is an error naming the value), and a headline base metric undefined everywhere leaves
its columns empty on one block as on several (never a KeyError)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from clad.errors import CladValueError
from clad.metrics import learned_at, summarize
from clad.report import make_report
from clad.report.table_formats import latex_columns
from clad.results import RunResult

CONCEPTS = ("A", "B", "C")


def _runs(blocks: int, undefined: str = "f1"):
    """Three detectors, two seeds per block; ``undefined`` is NaN in every cell, ROC-AUC is not."""
    rng = np.random.default_rng(0)
    out = []
    t = learned_at(CONCEPTS, CONCEPTS)
    for k in range(blocks):
        for det in "abc":
            for seed in (0, 1):
                nan, R = np.full((3, 3), np.nan), np.clip(0.6 + rng.normal(0, 0.05, (3, 3)), 0, 1)
                out.append(
                    RunResult(
                        f"d{k}",
                        "concept_incremental",
                        "naive",
                        det,
                        seed,
                        CONCEPTS,
                        CONCEPTS,
                        R={undefined: nan, "roc_auc": R},
                        metrics={undefined: summarize(nan, t), "roc_auc": summarize(R, t)},
                    )
                )
    return out


@pytest.mark.parametrize(
    "value,words",
    [
        ("", "name no column"),
        (",,,", "name no column"),
        (" , ", "name no column"),
        ([], "name no column"),
        ("CA,CA", "names continual_average a second time"),
        ("CA,continual_average", "names continual_average a second time"),
        ("all,CA", "latex column 'all' is not a scalar metric"),
    ],
)
def test_a_latex_column_list_naming_nothing_or_twice_is_refused_before_writing(
    tmp_path, value, words
):
    with pytest.raises(CladValueError, match=words):
        latex_columns(value)
    with pytest.raises(CladValueError, match=words):
        make_report(_runs(1), tmp_path / "rep", latex_columns=value)
    assert not (tmp_path / "rep").exists()  # nothing written


def test_an_unknown_headline_is_refused_before_writing(tmp_path):
    with pytest.raises(
        CladValueError, match="headline='pr_auc' is not a base metric of these results"
    ):
        make_report(_runs(1), tmp_path / "rep", headline="pr_auc")
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("blocks", [1, 3])
def test_a_base_metric_undefined_everywhere_leaves_its_columns_empty(tmp_path, blocks):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = make_report(
            _runs(blocks), tmp_path / "rep", spec={"base_metrics": ["f1", "roc_auc"]}
        )
    assert len([p for p in report.pages if p.startswith("blocks/")]) == blocks
    page = report.pages["blocks/d0.html"].read_text(encoding="utf-8")
    table = page[page.index("<table class='table leaderboard compact'>") :]
    table = table[: table.index("</table>")]
    assert (
        "<th colspan='3' class='group'>F1</th>" in table
        and "<th colspan='3' class='group'>ROC-AUC</th>" in table
    )
    assert (
        table.count("<td>n/a</td>") == 3 * 3
    )  # the three F1 columns of each configuration: no value
