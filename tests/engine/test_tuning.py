"""Tuning without test data: a spec's [tuning] section (clad.engine.tuning, clad.core.data_views)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from clad.engine.settings import Execution
from clad.cli import main
from clad.core.concepts import Concept, ConceptDataset
from clad.core.data_views import apply_view, validation_indices
from clad.results import RunResult
from clad.datasets import make_synthetic
from clad.engine.benchmark import run_spec
from clad.engine.run import build_run
from clad.engine.spec import load_spec, parse_spec
from clad.results.store import ResultStore
from clad.errors import DataError, SpecError
from tests.plugins import row_hashes
from tests.runner_helpers import spec_toml, synthetic

DATA = {"name": "synthetic", "n_concepts": 3, "n_features": 3, "n_train": 60, "n_test": 40}


def _spec(tuning: dict, detectors=None, **top) -> dict:
    return {
        "seeds": 1,
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "detectors": detectors or [{"name": "iforest", "n_estimators": 10}],
        "datasets": [dict(DATA)],
        "tuning": tuning,
        **top,
    }


# -- must show 1: no row of an evaluation test concept is scored while tuning, in both modes ---------
@pytest.mark.parametrize(
    "mode", [{"mode": "first_concepts", "k": 1}, {"mode": "validation_split", "fraction": 0.3}]
)
def test_no_evaluation_test_row_is_scored_during_tuning(tmp_path, mode):
    log = tmp_path / "scored.log"
    raw = _spec(
        {**mode, "detectors": {"recorder": {"power": [1.0, 2.0]}}},
        detectors=[
            {"name": "tests.plugins:RecordingDetector", "label": "recorder", "log": str(log)}
        ],
        seeds=[0, 1],
    )

    def mark(event):  # runs are sequential (jobs = 1): each run's rows follow its marker
        if getattr(event, "kind", None) == "started":
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"RUN {event.config.data_view['part']} {event.config.seed}\n")

    done = run_spec(raw, tmp_path / "out", on_event=mark, execution=Execution.of(raw, jobs=1))
    assert done.ok and done.n_total == 2 and done.n_tuning == 4
    scored = {
        ("tune", 0): set(),
        ("tune", 1): set(),
        ("evaluate", 0): set(),
        ("evaluate", 1): set(),
    }
    part = None
    for line in log.read_text().splitlines():
        if line.startswith("RUN "):
            _, p, seed = line.split()
            part = (p, int(seed))
        else:
            scored[part].add(line)
    for cfg in done.runs:
        seed = cfg.seed
        # the dataset this run reads, without any view: every test row, by concept
        whole, _, _ = build_run(
            dataclasses.replace(
                parse_spec(_spec(raw["tuning"], raw["detectors"])).configs[0],
                seed=seed,
                data_view=None,
            )
        )
        test_rows = {c.name: set(row_hashes(c.X)) for c in whole.test}
        tuned, evaluated = scored[("tune", seed)], scored[("evaluate", seed)]
        assert tuned and evaluated
        if mode["mode"] == "first_concepts":
            evaluation_rows = test_rows["C1"] | test_rows["C2"]
            assert evaluated >= evaluation_rows  # the evaluation scored all of C1 and C2 ...
            assert not tuned & evaluation_rows  # ... and no tuning run scored any of them
            assert tuned >= test_rows["C0"] and not evaluated & test_rows["C0"]  # C0: tuning only
            assert list(cfg.test_concepts) == ["C1", "C2"] and list(cfg.concepts) == ["C1", "C2"]
        else:
            for rows in test_rows.values():
                validation, test = tuned & rows, evaluated & rows
                assert (
                    validation and test and not validation & test
                )  # disjoint parts of every concept
                assert validation | test == rows
                assert len(validation) == pytest.approx(0.3 * len(rows), abs=2)


def test_validation_split_is_stratified_seeded_and_shared_by_both_parts():
    y = np.array([0] * 17 + [1] * 3)
    idx = validation_indices(y, 0.25, seed=5)
    # round half up per label: 17 * 0.25 = 4.25 -> 4 normal rows, 3 * 0.25 = 0.75 -> 1 anomaly
    assert len(idx) == 5 and int(y[idx].sum()) == 1
    assert np.array_equal(idx, validation_indices(y, 0.25, seed=5))
    assert not np.array_equal(idx, validation_indices(y, 0.25, seed=6))
    ds = make_synthetic(n_concepts=2, n_features=2, n_train=30, n_test=20)
    tune = apply_view(ds, {"mode": "validation_split", "part": "tune", "fraction": 0.25}, seed=3)
    ev = apply_view(ds, {"mode": "validation_split", "part": "evaluate", "fraction": 0.25}, seed=3)
    for whole, a, b in zip(ds.test, tune.test, ev.test):
        assert a.n_rows + b.n_rows == whole.n_rows
        assert not set(row_hashes(a.X)) & set(row_hashes(b.X))
    assert tune.train_names == ev.train_names == ds.train_names


def test_first_concepts_with_a_recurring_concept():
    X, y = np.zeros((4, 2)), np.array([0, 0, 1, 1])
    a, b, c = (Concept(n, X + i) for i, n in enumerate("ABC"))
    tests = [Concept(n, X + i, y) for i, n in enumerate("ABCD")]  # D is never trained
    ds = ConceptDataset([a, b, a, c], tests)
    tune = apply_view(ds, {"mode": "first_concepts", "part": "tune", "k": 1}, seed=0)
    ev = apply_view(ds, {"mode": "first_concepts", "part": "evaluate", "k": 1}, seed=0)
    assert tune.train_names == ("A", "A") and tune.test_names == ("A",)
    assert ev.train_names == ("B", "C") and ev.test_names == ("B", "C", "D")
    with pytest.raises(DataError, match="k = 3.*k <= 2"):
        apply_view(ds, {"mode": "first_concepts", "part": "tune", "k": 3}, seed=0)


# -- must show 2: a [tuning] grid through clad run records the candidates, scores and the choice --------
TUNED = dict(
    name="tuned",
    seeds=[0, 1],
    datasets=[synthetic(n_concepts=4)],
    detectors=[{"name": "iforest", "n_estimators": 10}],
    tuning={
        "mode": "first_concepts",
        "k": 2,
        "objective": "continual_average",
        "detectors": {"iforest": {"max_samples": [8, 32], "max_features": [1, 3]}},
    },
)
SPEC = spec_toml(**TUNED)


@pytest.mark.slow
def test_clad_run_records_the_choice_and_evaluates_with_it(tmp_path, capsys):
    spec = tmp_path / "tuned.toml"
    spec.write_text(SPEC)
    assert main(["run", str(spec), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 runs" in out and "after 8 tuning runs" in out and out.count("tuning: ") == 8
    assert (
        out.count("(after tuning)    synthetic / concept_incremental / naive / iforest / seed") == 2
    )
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    runs = json.loads((tmp_path / "out" / "results.json").read_text())["runs"]
    assert len(runs) == 2  # the evaluation runs only; the tuning runs stay in the database
    with ResultStore(tmp_path / "out") as store:
        stored = {r.run_id: r for r in store.load_results()}
    for run in runs:
        rec = run["extras"]["tuning"]
        assert rec["objective"] == "continual_average" and rec["higher_is_better"] and rec["k"] == 2
        assert [c["detector"] for c in rec["candidates"]] == [
            {"max_samples": 8, "max_features": 1},
            {"max_samples": 8, "max_features": 3},
            {"max_samples": 32, "max_features": 1},
            {"max_samples": 32, "max_features": 3},
        ]
        for c in rec["candidates"]:
            R = np.asarray(stored[c["run_id"]].R["roc_auc"])  # the tuning run: 2 concepts, 2 steps
            assert R.shape == (2, 2) and stored[c["run_id"]].test_concepts == ("C0", "C1")
            assert c["score"] == pytest.approx((R[0, 0] + R[1, 0] + R[1, 1]) / 3)  # CA by hand
        scores = [c["score"] for c in rec["candidates"]]
        best = scores.index(max(scores))  # the first of the best
        assert (
            rec["chosen"] == best
            and rec["chosen_params"]["detector"] == rec["candidates"][best]["detector"]
        )
        assert run["config"]["detector"]["params"] == {
            "n_estimators": 10,
            **rec["candidates"][best]["detector"],
        }
        assert run["config"]["data_view"] == {"mode": "first_concepts", "part": "evaluate", "k": 2}
        assert run["test_concepts"] == ["C2", "C3"] and run["concepts"] == ["C2", "C3"]
        assert run["detector"] == "iforest"
    # the readers of a results folder (report, export) leave the tuning runs out
    from clad.results.reading import load_results

    assert (
        len(load_results(tmp_path / "out")) == 2
        and len(load_results(tmp_path / "out", tuning=True)) == 10
    )
    assert (
        main(["export", str(tmp_path / "out"), "--format", "json", "--dest", str(tmp_path / "x")])
        == 0
    )
    assert len(json.loads((tmp_path / "x" / "results.json").read_text())["runs"]) == 2
    # the report shows each choice, its tuning score and its margin over the runner-up
    from clad.report import make_report
    from clad.report.tuning_validity import tuning_table

    table = tuning_table(load_results(tmp_path / "out"))
    for row, run in zip(table.itertuples(), runs):
        scores = [c["score"] for c in run["extras"]["tuning"]["candidates"]]
        assert row.score == max(scores) and row.candidates == 4
        assert row.margin == pytest.approx(max(scores) - sorted(scores)[-2])
    page = make_report(load_results(tmp_path / "out"), tmp_path / "report").all_text()  # every page
    assert (
        "Tuning" in page and "max_samples=" in page and "never score an evaluation test row" in page
    )
    # resumed: nothing computed again, the same choice
    again = run_spec(load_spec(spec), tmp_path / "out")
    assert again.n_computed == 0 and [r.config for r in again.runs] == [r["config"] for r in runs]
    assert [r.extras["tuning"] for r in again.runs] == [
        r["extras"]["tuning"] for r in runs
    ]  # from the store


def test_strategy_grid_and_lower_is_better_objective(tmp_path):
    raw = _spec(
        {
            "mode": "validation_split",
            "fraction": 0.25,
            "objective": "forgetting",
            "strategies": {"replay": {"buffer_size": [10, 40]}},
        },
        seeds=[0],
    )
    raw["strategies"] = [{"name": "replay"}]
    done = run_spec(raw, tmp_path / "o")
    assert done.ok and done.n_tuning == 2
    rec = done.runs[0].extras["tuning"]
    assert rec["higher_is_better"] is False
    scores = [c["score"] for c in rec["candidates"]]
    assert rec["chosen"] == scores.index(min(scores))
    assert (
        done.runs[0].config["strategy"]["params"]["buffer_size"]
        == rec["candidates"][rec["chosen"]]["strategy"]["buffer_size"]
    )


def _result(score):
    return RunResult("d", "s", "st", "det", 0, metrics={"roc_auc": {"continual_average": score}})


def test_ties_and_undefined_scores_are_settled_deterministically():
    spec = parse_spec(
        _spec(
            {
                "mode": "first_concepts",
                "k": 1,
                "detectors": {"iforest": {"max_samples": [8, 16, 32]}},
            }
        )
    )
    cfg = spec.configs[0]
    runs = spec.tuning.tuning_runs(cfg)
    for scores, chosen in (
        ([0.7, 0.9, 0.9], 1),
        ([float("nan"), 0.2, 0.2], 1),
        ([None, 0.1, 0.3], 2),
    ):
        results = {r.run_id: _result(s) for r, s in zip(runs, scores) if s is not None}
        evaluation, rec = spec.tuning.choose(cfg, results)
        assert (
            rec["chosen"] == chosen
            and evaluation.detector.params["max_samples"] == [8, 16, 32][chosen]
        )
    evaluation, rec = spec.tuning.choose(cfg, {})
    assert evaluation is None and rec["chosen"] is None


def test_tuning_runs_that_all_fail_fail_the_evaluation_run_with_a_cause(tmp_path):
    raw = _spec(
        {"mode": "first_concepts", "k": 1, "detectors": {"fail": {"message": ["a", "b"]}}},
        detectors=[{"name": "tests.plugins:FailingDetector", "label": "fail"}],
    )
    done = run_spec(raw, tmp_path / "o")
    assert (
        done.n_failed == 1
        and "TuningError" in done.runs[0].cause
        and "fails" not in done.runs[0].cause
    )
    assert done.runs[0].extras["tuning"]["chosen"] is None


# -- must show 3: bad tuning sections fail at spec time, naming the key, the value and what is allowed --
@pytest.mark.parametrize(
    "tuning, expected",
    [
        (
            {"mode": "first_concept", "k": 1, "detectors": {"iforest": {"max_samples": [8]}}},
            "tuning.mode: 'first_concept'; expected one of 'first_concepts', 'validation_split' (did you mean 'first_concepts'?)",
        ),
        (
            {"mode": "first_concepts", "k": 3, "detectors": {"iforest": {"max_samples": [8]}}},
            "tuning.k: 3 leaves no concept to evaluate in dataset 'synthetic' (n_concepts = 3); allowed: 1 to 2",
        ),
        (
            {"mode": "first_concepts", "k": 0, "detectors": {"iforest": {"max_samples": [8]}}},
            "tuning.k: 0",
        ),
        (
            {"mode": "first_concepts", "detectors": {"iforest": {"max_samples": [8]}}},
            "tuning.k: missing",
        ),
        (
            {
                "mode": "validation_split",
                "fraction": 1.0,
                "detectors": {"iforest": {"max_samples": [8]}},
            },
            "tuning.fraction: 1.0; expected a number strictly between 0 and 1",
        ),
        (
            {
                "mode": "validation_split",
                "fraction": 0.2,
                "k": 1,
                "detectors": {"iforest": {"max_samples": [8]}},
            },
            "tuning.k: only used with mode first_concepts",
        ),
        (
            {
                "mode": "first_concepts",
                "k": 1,
                "objective": "continual_avg",
                "detectors": {"iforest": {"max_samples": [8]}},
            },
            "tuning.objective: 'continual_avg' is not a continual metric computed from R (did you mean 'continual_average'?)",
        ),
        (
            {
                "mode": "first_concepts",
                "k": 1,
                "base_metric": "f1",
                "detectors": {"iforest": {"max_samples": [8]}},
            },
            "tuning.base_metric: 'f1' is not one of the spec's base_metrics (roc_auc)",
        ),
        (
            {"mode": "first_concepts", "k": 1, "detectors": {"iforest": {"max_sampels": [8]}}},
            "unknown parameter 'max_sampels' (did you mean 'max_samples'?)",
        ),
        (
            {"mode": "first_concepts", "k": 1, "detectors": {"iforest": {"max_samples": [-3]}}},
            "tuning.detectors.iforest[0] (iforest): max_samples=-3; expected",
        ),
        (
            {"mode": "first_concepts", "k": 1, "detectors": {"iforest": {"n_estimators": [5, 6]}}},
            "tuning.detectors.iforest.n_estimators: 'iforest' sets it in 'detectors' too",
        ),
        (
            {"mode": "first_concepts", "k": 1, "detectors": {"lof": {"n_neighbors": [5]}}},
            "tuning.detectors.lof: no entry of 'detectors' is labelled or named 'lof'",
        ),
        (
            {"mode": "first_concepts", "k": 1, "detectors": {"iforest": {"max_samples": []}}},
            "tuning.detectors.iforest: expected parameters with non-empty lists",
        ),
        ({"mode": "first_concepts", "k": 1}, "tuning: nothing to tune"),
        (
            {"mode": "first_concepts", "k": 1, "detector": {}},
            "tuning.detector: unknown key (did you mean 'detectors'?)",
        ),
    ],
)
def test_bad_tuning_sections_fail_at_spec_time(tuning, expected):
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(tuning))
    assert expected in str(err.value)


def test_dry_run_of_a_bad_tuning_section_exits_2(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text(spec_toml(**{**TUNED, "tuning": {**TUNED["tuning"], "k": 4}}))
    assert main(["run", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert (
        "bad.toml" in err
        and "tuning.k: 4 leaves no concept to evaluate" in err
        and "allowed: 1 to 3" in err
    )


def test_a_spec_without_tuning_keeps_its_run_ids():
    raw = _spec({})
    del raw["tuning"]
    cfg = parse_spec(raw).configs[0]
    assert cfg.data_view is None and "data_view" not in cfg.to_dict()


@pytest.mark.parametrize(
    "mode, shared",
    [
        ({"mode": "first_concepts", "k": 1}, True),
        ({"mode": "validation_split", "fraction": 0.3}, False),
    ],
)
def test_tuning_runs_are_shared_when_they_are_one_computation(tmp_path, mode, shared):
    # LOF under naive consumes no seed: seeds 0 and 1 are one computation, unless the split is drawn from the seed
    raw = _spec(
        {**mode, "detectors": {"lof": {"n_neighbors": [5, 10]}}}, detectors=["lof"], seeds=[0, 1]
    )
    raw["datasets"][0]["random_state"] = 0
    done = run_spec(raw, tmp_path / "o")
    assert done.ok and done.n_tuning == 4
    assert done.n_computed == (3 if shared else 6) and done.n_shared == (3 if shared else 0)
    recs = [r.extras["tuning"] for r in done.runs]
    assert [c["run_id"] for c in recs[0]["candidates"]] != [
        c["run_id"] for c in recs[1]["candidates"]
    ]
    if shared:
        assert done.runs[1].shared_from == done.runs[0].run_id


@pytest.mark.slow
def test_worker_processes_give_the_same_choice_and_numbers(tmp_path):
    raw = _spec(
        {
            "mode": "validation_split",
            "fraction": 0.3,
            "detectors": {"iforest": {"max_samples": [8, 32]}},
        },
        seeds=[0, 1],
    )
    one, two = (
        run_spec(raw, tmp_path / "a", execution=Execution.of(raw, jobs=1)),
        run_spec(raw, tmp_path / "b", execution=Execution.of(raw, jobs=2)),
    )
    assert one.ok and two.ok
    for a, b in zip(one.runs, two.runs):
        assert a.extras["tuning"] == b.extras["tuning"] and a.config == b.config
        assert np.array_equal(a.R["roc_auc"], b.R["roc_auc"])


def test_progress_events_count_tuning_and_evaluation_runs(tmp_path):
    raw = _spec(
        {"mode": "first_concepts", "k": 1, "detectors": {"iforest": {"max_samples": [8, 16]}}},
        seeds=[0, 1],
    )
    for finished_before in (0, 6):  # then resumed: every run finished before
        events = []
        run_spec(raw, tmp_path / "o", on_event=events.append)
        started = [e for e in events if e.kind == "grid_started"]
        assert (
            len(started) == 1
            and started[0].total == 6
            and started[0].finished_before == finished_before
        )
        assert sum(e.kind == "finished" for e in events) == 6 - finished_before


def test_bad_strategy_values_fail_at_spec_time():
    raw = _spec(
        {"mode": "first_concepts", "k": 1, "strategies": {"replay": {"buffer_size": [10, -1]}}}
    )
    raw["strategies"] = ["replay"]
    with pytest.raises(
        SpecError,
        match=r"tuning.strategies.replay\[0\] \(replay\): buffer_size=-1; expected an integer >= 1",
    ):
        parse_spec(raw)
