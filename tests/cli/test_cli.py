"""`clad run` on the quickstart spec, and spec errors reported with file, key and did-you-mean."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clad import metrics
from clad.cli import main
from clad.errors import SpecError
from clad.engine.spec import load_spec

from tests.runner_helpers import spec_toml, strict_loads, synthetic, write_spec

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "scenarios" / "quickstart.toml"


@pytest.mark.slow
def test_quickstart_results_are_strict_json_with_consistent_metrics(quickstart):
    doc = quickstart.doc
    spec = load_spec(QUICKSTART)
    assert len(doc["runs"]) == len(spec.configs)
    assert {r["scenario"] for r in doc["runs"]} == {
        "concept_aware",
        "concept_incremental",
        "concept_agnostic",
    }
    assert {r["strategy"] for r in doc["runs"]} == {"naive", "cumulative", "experts"}
    assert (
        sum(r["shared_from"] is not None for r in doc["runs"]) == 18
    )  # naive and cumulative: aware = incremental
    for run in doc["runs"]:
        assert run["status"] == "ok"
        t = metrics.learned_at(run["concepts"], run["test_concepts"])
        for m, rows in run["R"].items():
            R = np.array([[np.nan if v is None else v for v in row] for row in rows])
            assert R.shape == (len(run["concepts"]), len(run["test_concepts"]))
            reported = run["metrics"][m]
            for name, fn in (
                ("continual_average", metrics.continual_average),
                ("backward_transfer", metrics.backward_transfer),
                ("forward_transfer", metrics.forward_transfer),
            ):
                value = fn(R, t)
                if np.isnan(value):
                    assert reported[name] is None
                else:
                    assert reported[name] == value


@pytest.mark.slow
def test_quickstart_runs_recomputed_in_this_process_give_identical_R(quickstart):
    from clad.engine.run import run_config

    by_id = {r["run_id"]: r for r in quickstart.doc["runs"]}
    configs = load_spec(QUICKSTART).configs
    # one run per scenario and strategy, taking detectors and seeds in turn: every part of the grid
    groups: dict = {}
    for c in configs:
        groups.setdefault((c.scenario.display, c.strategy.display), []).append(c)
    sample = [group[i % len(group)] for i, group in enumerate(groups.values())]
    assert (
        len(sample) == 8
        and {c.seed for c in sample} == {0, 1, 2}
        and len({c.detector.display for c in sample}) == 3
    )
    for cfg in sample:
        again = run_config(cfg).to_dict()
        assert again["R"] == by_id[cfg.run_id]["R"], cfg.describe()
        assert again["seed"] == by_id[cfg.run_id]["seed"]


def write(tmp_path, text=None, **keys):
    """``text``, or else the GOOD spec with ``keys`` replaced, as ``tmp_path/spec.toml``."""
    return write_spec(tmp_path, text, **({} if text else {**GOOD, **keys}))


GOOD = dict(
    datasets=[synthetic(n_train=50)],
    scenarios=[{"name": "concept_aware"}],
    detectors=[{"name": "iforest", "n_estimators": 5}],
)


def test_spec_errors_name_file_key_and_suggestion(tmp_path):
    p = write(
        tmp_path,
        seeds=None,
        seed=[0],
        strategies=["naiv"],
        scenarios=[{"name": "concept_awre"}],
        detectors=[{"name": "iforest", "n_estimator": 5}],
    )
    with pytest.raises(SpecError) as err:
        load_spec(p)
    msg = str(err.value)
    assert str(p) in msg
    assert "4 problems" in msg
    assert "seed: unknown key (did you mean 'seeds'?)" in msg
    assert "strategies[0].name: unknown strategy 'naiv' (did you mean 'naive'?)" in msg
    assert (
        "scenarios[0].name: unknown scenario 'concept_awre' (did you mean 'concept_aware'?)" in msg
    )
    assert (
        "detectors[0] (iforest): unknown parameter 'n_estimator' (did you mean 'n_estimators'?)"
        in msg
    )


def test_spec_bad_values(tmp_path):
    p = write(
        tmp_path,
        seeds=-1,
        base_metrics=["auc"],
        scenarios=[{"name": "concept_agnostic", "batch_size": 0}],
    )
    with pytest.raises(SpecError) as err:
        load_spec(p)
    msg = str(err.value)
    assert "seeds: -1; expected a count >= 1" in msg
    assert "base_metrics[0]: unknown base metric 'auc'" in msg
    assert "batch_size=0; expected an integer >= 1" in msg


def test_spec_unknown_dataset_and_import_path(tmp_path):
    p = write(
        tmp_path,
        datasets=[synthetic(name="synthetc", n_train=50)],
        detectors=[{"name": "sklearn.ensemble:IsolationForrest", "n_estimators": 5}],
    )
    with pytest.raises(SpecError) as err:
        load_spec(p)
    assert "unknown dataset 'synthetc' (did you mean 'synthetic'?)" in str(err.value)
    assert "has no attribute 'IsolationForrest' (did you mean 'IsolationForest'?)" in str(err.value)


def test_spec_file_problems(tmp_path):
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "missing.toml")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(write(tmp_path, "name = = 1"))
    with pytest.raises(SpecError, match="datasets: missing"):
        load_spec(write(tmp_path, datasets=None))


def test_toml_ordering_mistake_gets_a_hint(tmp_path):
    # strategies written below the last [[detectors]] table belongs to that table
    text = (
        spec_toml(**{**GOOD, "strategies": None, "detectors": None})
        + '[[detectors]]\nname = "iforest"\nn_estimators = 5\nstrategies = ["naive"]\n'
    )
    with pytest.raises(SpecError) as err:
        load_spec(write(tmp_path, text))
    assert "top-level keys must come before the first [[table]]" in str(err.value)


def test_cli_reports_spec_error_and_exit_code(tmp_path, capsys):
    p = write(tmp_path, strategies=["naiv"])
    assert main(["run", str(p), "--out", str(tmp_path / "out")]) == 2
    assert "did you mean 'naive'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_dry_run_lists_grid(tmp_path, capsys):
    p = write(tmp_path, seeds=3)
    assert main(["run", str(p), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "3 runs" in out and "seed 2" in out


def test_failed_run_is_recorded_and_others_go_on(tmp_path):
    # a valid parameter that fails only on the data (a precomputed kernel needs a square matrix);
    # values no detector accepts are refused by the spec check before anything runs
    p = write(tmp_path, detectors=[*GOOD["detectors"], {"name": "ocsvm", "kernel": "precomputed"}])
    assert main(["run", str(p), "--out", str(tmp_path / "o"), "--quiet"]) == 1
    runs = strict_loads((tmp_path / "o" / "results.json").read_text())["runs"]
    status = {r["detector"]: r["status"] for r in runs}
    assert status == {"iforest": "ok", "ocsvm": "failed"}
    failed = next(r for r in runs if r["status"] == "failed")
    assert "Traceback" in failed["error"] and "square" in failed["error"]


def test_list_shows_every_registered_name(capsys):
    from clad.detectors import DETECTORS
    from clad.strategies import STRATEGIES

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in DETECTORS.names() + STRATEGIES.names() + ["concept_agnostic", "synthetic"]:
        assert f"  {name} " in out


@pytest.mark.slow
def test_quickstart_report_states_its_verdict_and_makes_no_claim_from_duplicated_blocks(
    quickstart, tmp_path
):
    """`clad run scenarios/quickstart.toml --out DIR && clad report DIR`: concept_aware and
    concept_incremental are the same computation for naive and cumulative (not for experts, which
    reads the concept id); the report shows them once and claims no significance from one dataset.
    Every comparison states its verdict, the test used and why."""
    import warnings

    from clad.results import RunResult, write_results
    from clad.report import compare

    results = [RunResult.from_dict(r) for r in quickstart.doc["runs"]]
    write_results(tmp_path / "results.json", results, spec=quickstart.doc["spec"])
    assert (
        main(["report", str(tmp_path), "--metric", "continual_average", "--metric", "forgetting"])
        == 0
    )
    page = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((tmp_path / "report").rglob("*.html"))
    )
    assert (
        "differ significantly" not in page and "Friedman" in page
    )  # the tests are described, none is claimed
    assert "concept_aware = concept_incremental" in page  # the shared configurations, shown once
    assert "detectors by forgetting (roc_auc)" in page and "weaker claim" in page
    # the verdict, the test used (none: neither exact nor asymptotic) and why, for every comparison
    verdicts = re.findall(r"<p class='verdict' data-status='([^']*)'>(.*?)</p>", page)
    assert len(verdicts) == 2 * 3 * 2  # detectors and strategies x 3 base metrics x 2 metrics
    for status, text in verdicts:
        text = re.sub(r"<[^>]+>", "", text)
        assert status == "not tested" and text.startswith(
            "Verdict: not tested. Test used: none — one independent block (dataset: synthetic)"
        )
        assert (
            "Neither an exact nor an asymptotic test across blocks is possible with one block"
            in text
        )
    table = pd.read_csv(tmp_path / "report" / "statistics.csv")
    comparisons = table[
        table["level"] == "comparison"
    ]  # one row per comparison, then its pairs' rows
    assert len(comparisons) == 2 * 3 * 2 and set(table["level"]) == {
        "comparison",
        "paired over seeds",
    }
    assert set(comparisons["verdict"]) == {"not tested"}
    assert comparisons["test_reason"].str.contains("one independent block").all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        finer = compare(results, by="detector", blocks=("dataset", "scenario"))
    # dataset x scenario: 3 settings, distinct computations (experts differs), blocks that share a dataset
    assert finer.n_blocks == 3 and any("share dataset synthetic" in n for n in finer.notes)
    assert (
        main(["report", str(tmp_path), "--metric", "continual_averag"]) == 2
    )  # unknown: a clear error
