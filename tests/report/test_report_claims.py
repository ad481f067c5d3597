"""Claims that hold on any spec: every count, interval, mark, headline and test of the report counts
distinct computations; no analysis the spec did not ask for; comparisons on matched
configurations; the spec's own headline metric; words that match their evidence."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from clad.report import best_status, compare, leaderboard, make_report
from clad.report.leaderboard import scenario_groups
from clad.report.headline import deterministic_caveats, deterministic_configurations
from clad.report.posthoc import holm_floor
from clad.report.stats import compare_methods
from clad.results import RunResult, load_results

from tests.runner_helpers import write_spec


def _fixed(label, random_state, n_train=60):
    """A synthetic dataset whose data do not depend on the run seed (its random_state is given)."""
    return {
        "name": "synthetic",
        "label": label,
        "n_concepts": 2,
        "n_features": 3,
        "n_train": n_train,
        "n_test": 40,
        "random_state": random_state,
    }


#: four fixed datasets; hbos never sees the seed (shared in advance), seedless takes a random_state it
#: never uses (byte-identical R found after the fact), iforest uses it, fragile fails under cumulative on
#: "big" only (200 training rows); no ``orders`` key; average precision is the spec's first base metric
CLAIMS_SPEC = dict(
    name="claims",
    base_metrics=["average_precision", "roc_auc"],
    seeds=3,
    strategies=["naive", "cumulative"],
    datasets=[
        _fixed("fixed0", 0),
        _fixed("fixed1", 1),
        _fixed("fixed2", 2),
        _fixed("big", 3, n_train=100),
    ],
    scenarios=[{"name": "concept_incremental"}],
    detectors=[
        {"name": "hbos"},
        {"name": "plugins:SeedIgnoring", "label": "seedless"},
        {"name": "iforest", "n_estimators": 10},
        {"name": "plugins:Fragile", "label": "fragile"},
    ],
)


@pytest.fixture(scope="module")
def claims(tmp_path_factory):
    import clad

    folder = tmp_path_factory.mktemp("claims")
    spec = write_spec(folder, **CLAIMS_SPEC)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = clad.run_spec(spec, folder / "out")
        results = load_results(folder / "out")
        report = make_report(results, folder / "report")
    page = report.all_text()  # every page of the report, the first first
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    return dict(done=done, results=results, report=report, page=page, text=text, folder=folder)


def _row(lb, dataset, strategy, detector, base="average_precision"):
    part = lb[
        (lb.dataset == dataset)
        & (lb.strategy == strategy)
        & (lb.detector == detector)
        & (lb.base_metric == base)
    ]
    assert len(part) == 1
    return part.iloc[0]


@pytest.mark.slow
def test_deterministic_configurations_count_once_in_the_leaderboard(claims):
    lb = pd.read_csv(claims["folder"] / "report" / "leaderboard.csv")
    for detector in ("hbos", "seedless"):  # shared in advance / identical after the fact
        row = _row(lb, "fixed0", "naive", detector)
        assert row.runs == 3 and row.computations == 1 and row.continual_average_n == 1
        assert np.isnan(row.continual_average_std) and np.isnan(row.continual_average_ci_low)
    row = _row(lb, "fixed0", "naive", "iforest")
    assert (
        row.computations == 3
        and row.continual_average_n == 3
        and row.continual_average_ci_low == row.continual_average_ci_low
    )
    # the console summary counts the same
    summary = claims["done"].summary
    s = summary[
        (summary.dataset == "fixed0") & (summary.detector == "hbos") & (summary.strategy == "naive")
    ]
    assert set(s["CA_n"]) == {1}


@pytest.mark.slow
def test_the_caveat_box_names_deterministic_configurations_and_why(claims):
    text = claims["text"]
    box = text[text.index("Read with care") :]
    assert "deterministic over seeds (no part consumes the seed" in box
    assert (
        "byte-identical R for every seed, found after the run (the seed reaches the detector" in box
    )
    assert "fixed0 / concept_incremental / naive / seedless" in box
    table = deterministic_configurations(claims["results"])
    assert set(table.loc[~table.shared, "detector"]) == {"seedless"}
    assert set(table.loc[table.shared, "detector"]) == {"hbos", "fragile"}


@pytest.mark.slow
def test_no_within_noise_and_no_bold_on_one_independent_value(claims):
    lb = claims["report"].tables["csv"]
    table = pd.read_csv(lb)
    status = best_status(table, ["continual_average"])
    one = table["continual_average_n"] < 2
    assert not status.loc[one, "continual_average"].isin(["best", "within noise"]).any()
    head = claims["text"][: claims["text"].index("Read with care")]
    for line in re.findall(r"concept_incremental : [^;]*", head):
        if "one independent value" in line:
            assert "within noise" not in line and "intervals clear" not in line
    assert "no noise can be estimated" in head


@pytest.mark.slow
def test_no_order_analysis_without_orders(claims):
    text, stats = claims["text"], pd.read_csv(claims["folder"] / "report" / "statistics.csv")
    assert "concept orders" not in text and "Kendall's W =" not in text
    assert stats["kendall_w_orders"].isna().all() and stats["best_share_orders"].isna().all()
    assert "orders" not in claims["report"].tables  # no order_sensitivity.csv
    assert all(c.orders is None for c in claims["report"].comparisons)


@pytest.mark.slow
def test_detectors_compared_on_the_configurations_every_detector_completed(claims):
    c = next(
        c
        for c in claims["report"].comparisons
        if c.by == "detector" and c.base_metric == "average_precision"
    )
    assert any(
        "block big" in n
        and "cumulative" in n
        and "fragile" in n
        and "left out for every detector" in n
        for n in c.notes
    )
    # on "big" every detector's score is its naive score alone (cumulative left out for all of them)
    lb = leaderboard(claims["results"], ["continual_average"])
    for detector in ("hbos", "seedless", "iforest", "fragile"):
        naive = _row(lb, "big", "naive", detector)
        assert c.scores.at["big", detector] == pytest.approx(naive.continual_average_mean)
    stats = pd.read_csv(claims["folder"] / "report" / "statistics.csv")
    row = stats[
        (stats.level == "comparison")
        & (stats.by == "detector")
        & (stats.base_metric == "average_precision")
    ].iloc[0]
    assert "fragile lacks it" in row.notes
    head = claims["text"][: claims["text"].index("Read with care")]
    assert (
        "big / concept_incremental" in head and "cumulative + fragile (3 of 3 runs failed)" in head
    )


@pytest.mark.slow
def test_the_specs_first_base_metric_leads(claims):
    report = claims["report"]
    text = claims["text"]
    assert "Best per scenario by CA (average" in text
    assert pd.read_csv(report.tables["csv"])["base_metric"].iloc[0] == "average_precision"
    assert report.comparisons[0].base_metric == "average_precision"
    md = report.tables["md"].read_text()
    assert md.index("### fixed0 — average") < md.index("### fixed0 — roc")
    from clad.engine.summary import format_summary

    console = format_summary(claims["done"].summary)
    assert console.index("average") < console.index("roc")


@pytest.mark.slow
def test_headline_option_chooses_the_base_metric(claims, tmp_path):
    from clad.cli import main

    out = claims["folder"] / "out"
    assert main(["report", str(out), "--out", str(tmp_path / "r"), "--headline", "roc_auc"]) == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert "Best per scenario</b> by CA (ROC" in page or "by CA (roc_auc)" in page
    assert pd.read_csv(tmp_path / "r" / "statistics.csv")["base_metric"].iloc[0] == "roc_auc"
    with pytest.raises(Exception, match="headline='vus_pr' is not a base metric"):
        make_report(claims["results"], tmp_path / "r2", headline="vus_pr")


# -- hand-made runs: fast --------------------------------------------------------------------------


def _runs(values, detector, dataset="d", strategy="naive", scenario="s", R=True):
    out = []
    for seed, v in enumerate(values):
        out.append(
            RunResult(
                dataset,
                scenario,
                strategy,
                detector,
                seed,
                ("A",),
                ("A",),
                R={"roc_auc": np.array([[v]])} if R else {},
                metrics={"roc_auc": {"continual_average": v}},
                run_id=f"{dataset}{detector}{strategy}{seed}",
            )
        )
    return out


def test_identical_values_over_seeds_are_one_value():
    lb = leaderboard(
        _runs([0.9, 0.9, 0.9], "knn") + _runs([0.8, 0.85, 0.82], "if"), ["continual_average"]
    )
    knn = lb[lb.detector == "knn"].iloc[0]
    assert (knn.runs, knn.computations, knn.continual_average_n) == (3, 1, 1)
    assert np.isnan(knn.continual_average_std) and np.isnan(knn.continual_average_ci_high)
    # a best mean that rests on one computation is neither "clear" nor "within noise"
    assert best_status(lb, ["continual_average"])["continual_average"].tolist() == [
        "no noise estimate",
        "",
    ]


def test_shared_runs_without_R_count_once():
    runs = [
        RunResult(
            "d", "s", "naive", "knn", 0, metrics={"roc_auc": {"continual_average": 0.9}}, run_id="a"
        )
    ]
    runs += [
        RunResult(
            "d",
            "s",
            "naive",
            "knn",
            s,
            metrics={"roc_auc": {"continual_average": 0.9}},
            run_id=f"b{s}",
            shared_from="a",
        )
        for s in (1, 2)
    ]
    row = leaderboard(runs, ["continual_average"]).iloc[0]
    assert (row.runs, row.computations, row.continual_average_n) == (3, 1, 1)
    assert "deterministic over seeds" in deterministic_caveats(runs)[0]


def test_one_seed_says_no_paired_comparison():
    runs = [r for det, v in (("a", 0.9), ("b", 0.8), ("c", 0.7)) for r in _runs([v], det)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare(runs, by="detector")
    assert c.paired is None
    assert "no paired comparison is possible" in c.message and "seed(s)" not in c.message
    assert "Verdict: not tested" in c.verdict.text


def test_deterministic_methods_over_seeds_are_not_paired_per_seed():
    runs = [r for det, v in (("a", 0.9), ("b", 0.8)) for r in _runs([v] * 5, det)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare(runs, by="detector")
    assert c.paired is None and "fewer than two independent values" in c.message
    mixed = [r for r in _runs([0.9] * 4, "a")] + _runs([0.8, 0.7, 0.75, 0.6], "b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare(mixed, by="detector")
    assert int(c.paired["difference_n"].iloc[0]) == 4  # b varies: four independent differences


def test_ties_in_every_block_give_an_undefined_iman_davenport():
    scores = pd.DataFrame(
        {
            "A": [0.9, 0.8, 0.85, 0.95, 0.7, 0.75],
            "B": [0.7, 0.6, 0.65, 0.8, 0.5, 0.55],
            "C": [0.5, 0.5, 0.6, 0.7, 0.4, 0.45],
        }
    )
    c = compare_methods(scores)
    text = c.verdict.text
    assert "Iman–Davenport F: undefined (all blocks agree" in text
    assert "inf" not in text and "p = 0)" not in text
    from clad.report.stats_html import statistics_frame, statistics_rows

    row = statistics_frame(statistics_rows(c)).iloc[0]
    assert pd.isna(row.iman_davenport_F)


def test_methods_tied_in_every_block_are_not_tested():
    scores = pd.DataFrame(
        {"A": [0.9, 0.8, 0.7, 0.6], "B": [0.9, 0.8, 0.7, 0.6], "C": [0.9, 0.8, 0.7, 0.6]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare_methods(scores)
    assert c.test is None and "same score in every block: there is nothing to test" in c.message
    assert "inf" not in c.verdict.text and "Verdict: not tested" in c.verdict.text


def test_posthoc_that_cannot_reach_alpha_is_said_so():
    rng = np.random.default_rng(1)
    base = np.array(
        [0.9, 0.8, 0.7, 0.6]
    )  # four methods, every block ranks them alike: Friedman rejects
    scores = pd.DataFrame(base + rng.normal(0, 0.001, (6, 4)), columns=list("ABCD"))
    c = compare_methods(scores)
    assert c.significant
    assert holm_floor(6, 4) >= 0.05
    text = c.verdict.text
    assert "Holm's correction cannot reach α = 0.05 at 6 blocks" in text
    assert any("no Wilcoxon–Holm decision can reach" in n for n in c.notes)
    # the pair verdicts follow the post-hoc test the diagram draws, and agree with the omnibus test
    assert c.verdict.differing  # Nemenyi names A vs D
    assert set(c.verdict.pairs.loc[c.verdict.pairs.differ, "nemenyi"]) == {"differ"}


def test_failed_strategy_does_not_flip_the_best_detector():
    # MSL-like: pca failed under cumulative; iforest is better on the strategies both completed
    rows = {
        ("naive", "iforest"): 0.55,
        ("replay", "iforest"): 0.545,
        ("cumulative", "iforest"): 0.50,
        ("naive", "pca"): 0.54,
        ("replay", "pca"): 0.542,
    }
    runs = []
    for d, shift in (("msl", 0.0), ("smap", 0.01), ("x", 0.02)):
        for (st, det), v in rows.items():
            runs += _runs([v + shift], det, dataset=d, strategy=st)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare(runs, by="detector")
    assert c.average_ranks.index[0] == "iforest"
    assert c.scores.at["msl", "iforest"] == pytest.approx((0.55 + 0.545) / 2)
    assert any("cumulative" in n and "pca lacks it" in n for n in c.notes)


def test_nothing_left_after_matching_refuses():
    runs = _runs([0.5], "a", strategy="naive") + _runs([0.6], "b", strategy="cumulative")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare(runs, by="detector")
    assert c.test is None and any("nothing is left in this block" in n for n in c.notes)


def test_one_scenario_is_never_split_into_blocks():
    # the quickstart's case: naive + ecod stands for concept_aware and concept_incremental (one computation),
    # experts + ecod has a row per scenario; in concept_aware naive's FWT 0.848 beats experts' 0.845
    t = pd.DataFrame(
        {
            "dataset": ["q"] * 3,
            "base_metric": ["roc_auc"] * 3,
            "scenario": [
                "concept_aware = concept_incremental",
                "concept_aware",
                "concept_incremental",
            ],
            "strategy": ["naive", "experts", "experts"],
            "detector": ["ecod"] * 3,
            "forward_transfer_mean": [0.848, 0.845, 0.840],
            "forward_transfer_n": [3, 3, 3],
            "forward_transfer_ci_low": [0.846, 0.80, 0.80],
            "forward_transfer_ci_high": [0.85, 0.8455, 0.845],
        }
    )
    status = best_status(t, ["forward_transfer"])["forward_transfer"].tolist()
    assert status[1] == "" and status[0] == "best"  # experts is not bold where naive is better
    assert [list(i) for _, i in scenario_groups(t, ["dataset", "scenario"])] == [[0, 1], [0, 2]]


def test_reversed_scores_warning_agrees_with_its_numbers():
    from clad.core.data_checks import check_reversed
    from clad.errors import RunWarning

    steps = [f"c{i}" for i in range(10)]
    values = [0.03] * 6 + [0.09] * 4  # 6 of 10 below chance 0.04, but the mean 0.054 is above it
    R = {"range_f1": np.diag(values)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RunWarning)
        check_reversed(R, steps, steps, {"range_f1": [0.04] * 10})  # nothing said
    with pytest.warns(RunWarning, match="below chance on 6 of 10 concepts"):
        check_reversed(
            {"range_f1": np.diag([0.01] * 6 + [0.05] * 4)}, steps, steps, {"range_f1": [0.04] * 10}
        )


# -- time series: the per-series mean ---------------------------------------------------------------

from tests.data_helpers import mini  # noqa: E402,F401  (the hand-made telemanom folder)


@pytest.mark.slow
def test_per_series_mean_on_a_time_series_grid(mini, tmp_path):
    import clad

    spec = write_spec(
        tmp_path,
        name="ts",
        base_metrics=["vus_pr", "roc_auc"],
        seeds=[0],
        datasets=[
            {
                "name": "telemanom",
                "path": "tele",
                "spacecraft": "X",
                "window": 4,
                "stride": 2,
                "data_dir": str(mini),
            }
        ],
        detectors=[{"name": "iforest", "n_estimators": 10}],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clad.run_spec(spec, tmp_path / "out")
        results = load_results(tmp_path / "out")
        report = make_report(results, tmp_path / "report")
    (run,) = results
    assert run.status == "ok", run.error
    data = run.extras["time_series"]["per_series"]
    assert data["series"] == {"A": ["A-1", "A-2"], "B": ["B-1"]}
    # per series, its own chance level (recorded at evaluation time)
    assert set(data["chance"]["vus_pr"]) == {"A", "B"} and len(data["chance"]["vus_pr"]["A"]) == 2
    lb = pd.read_csv(report.tables["csv"])
    assert lb["base_metric"].tolist()[:2] == [
        "vus_pr",
        "vus_pr_per_series_mean",
    ]  # the spec's first leads
    ps = lb[lb.base_metric == "vus_pr_per_series_mean"].iloc[0]
    values = data["values"]["vus_pr"]
    diagonal = [v for j, c in enumerate(("A", "B")) for v in values[c][j] if v is not None]
    assert ps.learning_average_mean == pytest.approx(
        np.mean(diagonal)
    )  # every series weighs the same
    table = pd.read_csv(report.tables["per_series"])
    assert set(table["series"]) == {"A-1", "A-2", "B-1"} and "chance" in table
    assert "Per-series values" in report.all_text()


@pytest.mark.slow
def test_quickstart_bold_marks_per_scenario_not_per_label(quickstart, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = make_report(load_results(quickstart.out), tmp_path / "r")
    lb = pd.read_csv(report.tables["csv"])
    names = ["continual_average", "backward_transfer", "forward_transfer"]
    status = best_status(lb, names)
    checked = 0
    for (dataset, base, scenario), idx in scenario_groups(
        lb, ["dataset", "base_metric", "scenario"]
    ):
        for m in names:
            for row in idx:
                if status.at[row, m] in (
                    "best",
                    "within noise",
                ):  # a marked row is the best of its scenario
                    assert lb.loc[idx, f"{m}_mean"].max() == lb.at[row, f"{m}_mean"], (scenario, m)
                    checked += 1
    assert checked
    # the quickstart's case: experts + ecod's FWT 0.845 is not bold in concept_aware, where naive + ecod has 0.848
    row = lb[
        (lb.scenario == "concept_aware")
        & (lb.strategy == "experts")
        & (lb.detector == "ecod")
        & (lb.base_metric == "roc_auc")
    ].index[0]
    assert status.at[row, "forward_transfer"] == ""
    assert "concept_aware = concept_incremental :" not in re.sub(r"<[^>]+>", " ", report.all_text())
