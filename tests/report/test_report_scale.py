"""The report at the size of a grid: the headline across blocks, its rank intervals against an
independent computation, text without Python literals, warnings grouped by cause, equal
configurations merged, failed blocks named, figures kept by content, runs read in a stream."""

from __future__ import annotations

import itertools
import re
import warnings
import zlib
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from clad.metrics import learned_at, summarize
from clad.report import make_report
from clad.report.identical import merge_identical
from clad.report.pages import headline_lines
from clad.report.ranking import (
    EXACT_MAX_MULTISETS,
    MIN_BLOCKS_P_FIRST,
    n_multisets,
    rank_stability,
    rankings,
)
from clad.report.wording import warning_groups
from clad.results import RunResult

CONCEPTS = ("C0", "C1", "C2")
#: what a Python literal or repr looks like on a page or a console line
REPR = [re.compile(r"\w+\(\w+="), re.compile(r"\{'"), re.compile(r"\['")]


def _run(
    dataset,
    scenario,
    strategy,
    detector,
    seed,
    *,
    quality=0.0,
    same_as=None,
    warning=None,
    failed=False,
):
    rng = np.random.default_rng(
        zlib.crc32(repr((dataset, scenario, same_as or strategy, detector, seed)).encode())
    )
    R = np.clip(0.7 + quality + rng.normal(0, 0.05, (3, 3)), 0, 1)
    key = f"{dataset}|{scenario}|{strategy}|{detector}|{seed}"
    order = dataset.split("[order=", 1)[1].rstrip("]") if "[order=" in dataset else None
    config = (
        {"dataset": {"name": "synthetic", "params": {"order": order}}} if order else None
    )  # as a spec's orders give
    if failed:
        return RunResult(
            dataset,
            scenario,
            strategy,
            detector,
            seed,
            CONCEPTS,
            CONCEPTS,
            run_id=key,
            status="failed",
            error="Traceback (most recent call last):\nMemoryError: out of memory\n",
            config=config,
            order=order,
        )
    return RunResult(
        dataset,
        scenario,
        strategy,
        detector,
        seed,
        CONCEPTS,
        CONCEPTS,
        run_id=key,
        config=config,
        order=order,
        R={"roc_auc": R},
        metrics={"roc_auc": summarize(R, learned_at(CONCEPTS, CONCEPTS))},
        timings={"fit": [0.01 * (1 + quality)] * 3, "score": [0.002] * 3, "total": 0.04},
        chance={"roc_auc": [0.5, 0.5, 0.5]},
        warnings=(warning,) if warning else (),
    )


def _grid(n_datasets=3, seeds=3, fail=None):
    """datasets x 2 orders x 1 scenario x (naive, cumulative, replay) x (a, b) x seeds; replay holds
    cumulative's R everywhere; a few runs warn about a constant score with different constants."""
    runs = []
    for k in range(n_datasets):
        for order in ("given", "random"):
            block = f"d{k}[order={order}]"
            for strategy in ("naive", "cumulative", "replay"):
                for detector, q in (("a", 0.1), ("b", 0.0)):
                    for seed in range(seeds):
                        same = "cumulative" if strategy == "replay" else None
                        warning = (
                            f"test concept 'C{seed}': every score is the same ({0.1 * (seed + 1):g}), so its "
                            "ROC-AUC is 0.5"
                            if detector == "b" and strategy == "naive"
                            else None
                        )
                        runs.append(
                            _run(
                                block,
                                "incremental",
                                strategy,
                                detector,
                                seed,
                                quality=q,
                                same_as=same,
                                warning=warning,
                                failed=(block, strategy, detector) == fail,
                            )
                        )
    return runs


class _Text(HTMLParser):
    """The text a reader sees on a page (scripts and styles left out), and the findings box's items."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.items: list[str] = []
        self._skip = 0
        self._li = None

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        if tag == "li":
            self._li = ""

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1
        if tag == "li" and self._li is not None:
            self.items.append(self._li)
            self._li = None

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)
            if self._li is not None:
                self._li += data


def _read(path) -> _Text:
    t = _Text()
    t.feed(path.read_text(encoding="utf-8"))
    return t


@pytest.fixture(scope="module")
def grid_report(tmp_path_factory):
    runs = _grid(fail=("d2[order=random]", "naive", "a"))
    out = tmp_path_factory.mktemp("scale") / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = make_report(runs, out, {"name": "scale check"})
    return runs, report


# -- rank stability against an independent computation ---------------------------------------


def _brute_force(scores: pd.DataFrame, higher: bool = True):
    """Every ordered resample of the blocks (n^n of them, equally likely), ranked by brute force."""
    x = scores.to_numpy(float)
    n, k = x.shape
    ranks = []
    for draw in itertools.product(range(n), repeat=n):
        means = x[list(draw)].mean(axis=0)
        means = np.round(means if higher else -means, 12)
        ranks.append([1 + sum(means[j] > means[i] for j in range(k)) for i in range(k)])
    ranks = np.array(ranks)
    out = {}
    for i, c in enumerate(scores.columns):
        values = np.sort(ranks[:, i])
        total = len(values)
        low = next(r for r in values if np.mean(values <= r) > 0.025)
        high = next(r for r in values if np.mean(values <= r) >= 0.975)
        out[c] = (int(low), int(high), float(np.mean(ranks[:, i] == 1)), total)
    return out


@pytest.mark.parametrize(
    "table",
    [
        {"a": [0.9, 0.8, 0.7], "b": [0.6, 0.9, 0.5], "c": [0.5, 0.5, 0.4]},
        {
            "a": [0.9, 0.8, 0.7, 0.6],
            "b": [0.85, 0.9, 0.5, 0.7],
            "c": [0.5, 0.95, 0.4, 0.65],
            "d": [0.1, 0.2, 0.3, 0.4],
        },
        {"x": [0.5, 0.7, 0.6, 0.8, 0.55], "y": [0.6, 0.6, 0.6, 0.6, 0.6]},
        {
            "a": [0.9, 0.8, 0.7, 0.9, 0.8, 0.6],
            "b": [0.6, 0.9, 0.5, 0.85, 0.7, 0.65],
            "c": [0.5, 0.5, 0.4, 0.3, 0.9, 0.7],
        },
    ],
)
def test_rank_intervals_and_p_first_equal_a_brute_force_bootstrap(table):
    scores = pd.DataFrame(table)
    r = rank_stability(scores)
    assert r.method.startswith("exact")
    expected = _brute_force(scores)
    for _, row in r.table.iterrows():
        low, high, p_first, _ = expected[row["configuration"]]
        assert (row["rank_low"], row["rank_high"]) == (low, high), row["configuration"]
        if len(scores) >= MIN_BLOCKS_P_FIRST:
            assert row["p_first"] == pytest.approx(p_first, abs=1e-12)
        else:  # a few multisets of a few blocks are no probability: none is given
            assert np.isnan(row["p_first"])
    assert set(r.top) == {c for c, (low, *_) in expected.items() if low == 1}


def test_rank_stability_by_resampling_draws_what_it_says():
    n = 9
    assert n_multisets(n) > EXACT_MAX_MULTISETS  # too many multisets: Monte-Carlo
    rng = np.random.default_rng(3)
    scores = pd.DataFrame(rng.uniform(0.5, 0.9, (n, 3)), columns=["a", "b", "c"])
    r = rank_stability(scores, resamples=500, seed=11)
    assert r.method == "500 bootstrap resamples of the 9 blocks (seed 11)"
    draws = np.random.default_rng(11).integers(0, n, size=(500, n))
    first = {c: 0 for c in scores.columns}
    for d in draws:
        means = scores.to_numpy()[d].mean(axis=0)
        for i, c in enumerate(scores.columns):
            first[c] += np.round(means[i], 12) >= np.round(means.max(), 12)
    for _, row in r.table.iterrows():
        assert row["p_first"] == pytest.approx(first[row["configuration"]] / 500)


def test_a_configuration_missing_a_block_is_named_and_not_ranked():
    scores = pd.DataFrame(
        {"a": [0.9, 0.8, np.nan], "b": [0.6, 0.7, 0.5], "c": [0.5, 0.5, 0.4]},
        index=["d1", "d2", "d3"],
    )
    r = rank_stability(scores)
    assert r.missing == {"a": ("d3",)}
    assert "a" not in set(r.table["configuration"])  # never averaged over the two blocks it has
    lines = headline_lines([r], "CA")
    assert any("left out of the ranking" in line and "a (no value on d3)" in line for line in lines)


def test_rankings_leave_out_the_configuration_whose_runs_failed_on_a_block():
    runs = _grid(fail=("d2[order=random]", "naive", "a"))
    ranked = rankings(merge_identical(runs)[0], "continual_average", "roc_auc")
    (r,) = ranked
    # the orders of a dataset are one block: a configuration missing one order misses the block
    assert r.missing == {"naive + a": ("d2",)}
    assert "naive + a" not in set(r.table["configuration"]) and len(r.blocks) == 3


# -- equal configurations, warnings -----------------------------------------------------------


def test_strategies_with_identical_R_on_every_block_and_seed_merge():
    runs = _grid()
    merged, notes = merge_identical(runs)
    assert {r.strategy for r in merged if r.ok} == {"naive", "cumulative = replay"}
    assert len(merged) == len(runs) - len([r for r in runs if r.strategy == "replay"])
    assert notes and "cumulative = replay hold identical R on every dataset and seed" in notes[0]
    # equal on some seeds only: apart
    changed = [
        r
        if not (
            r.strategy == "replay"
            and r.seed == 0
            and r.dataset == "d0[order=given]"
            and r.detector == "a"
        )
        else _run(r.dataset, r.scenario, r.strategy, r.detector, r.seed, quality=0.05)
        for r in runs
    ]
    kept, _ = merge_identical(changed)
    assert {r.strategy for r in kept if r.detector == "b"} == {"naive", "cumulative = replay"}
    assert {r.strategy for r in kept if r.detector == "a"} == {"naive", "cumulative", "replay"}


def test_warnings_that_differ_only_in_numbers_are_one_group():
    groups = warning_groups(_grid())
    assert len(groups) == 1
    g = groups[0]
    assert g.template == "test concept 'C#': every score is the same (#), so its ROC-AUC is #"
    assert g.runs == 6 * 3 and len(g.datasets) == 6 and g.scenarios == {"incremental": 18}


# -- the pages --------------------------------------------------------------------------------


def test_headline_names_the_blocks_dataset_and_order_on_every_line(grid_report):
    _, report = grid_report
    page = report.index.read_text(encoding="utf-8")
    box = page.split("<div class='findings headline'>", 1)[1].split("</div>", 1)[0]
    head = _Text()
    head.feed(box.split("<p><b>Do the statistics", 1)[0])
    assert head.items
    for line in head.items:
        # the data set (the ranking's blocks) or the data set and its order (the best per scenario)
        assert re.search(r"d\d\[order=(given|random)\]", line) or re.search(
            r"\(3 blocks: d0, d1, d2\)|no value on d2\)", line
        ), line
    winners = page.split("<table id='winners-table'", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td><a href='blocks/[^']+'>([^<]+)</a>", winners)
    assert sorted(rows) == [
        f"d{k}" for k in range(3)
    ]  # a block per dataset, over both of its orders


def test_no_page_shows_a_python_literal(grid_report):
    _, report = grid_report
    assert (
        len(report.pages) >= 3 + 4
    )  # a page per block (dataset), the first page, leaderboard, statistics, details
    for name, path in report.pages.items():
        text = " ".join(_read(path).parts)
        for pattern in REPR:
            assert not pattern.search(text), (name, pattern.pattern, pattern.search(text).group(0))
    stats = report.pages["statistics.html"].read_text(encoding="utf-8")
    assert "Friedman" in stats and "TestResult(" not in stats


def test_first_page_says_merges_failures_and_warning_causes(grid_report):
    _, report = grid_report
    text = " ".join(_read(report.index).parts)
    assert "cumulative = replay" in text
    assert "naive + a (no value on d2)" in text
    assert "1 cause" in text and "test concept 'C#': every score is the same (#)" in text
    assert re.search(
        r"exact p = [\d.e-]+ over [\d,]+ arrangements", text
    )  # a p-value with its method
    # what was run: three datasets, each one block over its two concept orders (never six blocks)
    assert re.search(
        r"\b3 datasets \(one block each, over up to 2 concept orders\) × 1 scenario × ", text
    ), text[:300]


def test_console_lines_show_no_python_literal(tmp_path, capsys):
    from clad.cli import main
    from clad.results.store import ResultStore

    (tmp_path / "runs").mkdir()
    with ResultStore(tmp_path / "runs") as store:
        for r in _grid(n_datasets=2, seeds=2):
            store.write(r)
    assert main(["report", str(tmp_path / "runs")]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "drawn" in text
    for pattern in REPR:
        assert not pattern.search(text), pattern.search(text).group(0)


# -- cost: figures kept by content, runs read in a stream --------------------------------------


@pytest.mark.slow
def test_a_second_report_redraws_only_the_figures_new_runs_touch(tmp_path):
    runs = _grid(n_datasets=2, seeds=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = make_report(runs, tmp_path / "r")
        again = make_report(runs, tmp_path / "r")
        assert (
            first.drawn == len(first.figures) > 0
            and again.drawn == 0
            and again.reused == len(first.figures)
        )
        more = runs + [_run("d0[order=given]", "incremental", "naive", "a", 7)]
        third = make_report(more, tmp_path / "r")
    stamp = {n: p.stat().st_mtime_ns for n, p in third.figures.items()}
    block_figures = [n for n in third.figures if "d1-order" in n]
    assert block_figures and 0 < third.drawn < len(third.figures)
    assert all(
        stamp[n] == (tmp_path / "r" / "figures" / n).stat().st_mtime_ns for n in block_figures
    )
    redrawn = {
        n
        for n in third.figures
        if (tmp_path / "r" / "figures" / n).stat().st_mtime_ns
        > max(p.stat().st_mtime_ns for n2, p in again.figures.items() if "d1-order" in n2)
    }
    assert redrawn and not any(
        "d1-order" in n for n in redrawn
    )  # the other block's figures are kept


def test_runs_read_in_a_stream_equal_the_runs_read_at_once(tmp_path):
    from clad.report.load import report_runs
    from clad.results import iter_results, load_results
    from clad.results.store import ResultStore

    runs = _grid(n_datasets=1, seeds=2, fail=("d0[order=given]", "naive", "a"))
    with ResultStore(tmp_path) as store:
        for r in runs:
            store.write(r)
    whole = load_results(tmp_path)
    streamed = list(iter_results(tmp_path, batch=5))
    assert [r.to_dict() for r in streamed] == [r.to_dict() for r in whole]
    slim = report_runs(tmp_path)
    assert [(r.run_id, r.status, r.R.keys()) for r in slim] == [
        (r.run_id, r.status, r.R.keys()) for r in whole
    ]
    assert all(
        not isinstance(v, list) for r in slim for m in r.metrics.values() for v in m.values()
    )
