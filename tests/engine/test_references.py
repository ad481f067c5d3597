"""Reference runs (``references = ["joint", "single_task"]``): computed once per dataset x detector x
seed through the grid, stored, and every run's intransigence and forward transfer against them."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from clad.engine.settings import Execution
from clad.engine.benchmark import run_spec
from clad.engine.references import ReferenceConfig
from clad.engine.spec import parse_spec
from clad.results.store import ResultStore
from clad.errors import SpecError
from clad.metrics import REGISTRY, learned_at
from clad.engine.validate import spec_matrices
from clad.report import leaderboard, make_report
from clad.results import load_references, load_results

N_CONCEPTS, N_TRAIN = 3, 60


def _spec(log, references=None, seeds=2):
    raw = {
        "name": "refs",
        "seeds": seeds,
        "strategies": ["naive", {"name": "replay", "buffer_size": 30}],
        "scenarios": ["concept_aware", "concept_incremental"],
        "detectors": [{"name": "plugins:FitLogDetector", "log": str(log)}],
        "datasets": [
            {
                "name": "synthetic",
                "n_concepts": N_CONCEPTS,
                "n_features": 3,
                "n_train": N_TRAIN,
                "n_test": 40,
            }
        ],
    }
    if references is not None:
        raw["references"] = references
    return parse_spec(raw)


def _fits(log) -> list[int]:
    return [int(x) for x in log.read_text().split()] if log.exists() else []


def _by_hand(R, ref, t):
    """Intransigence and reference forward transfer by loops over the learned concepts."""
    intr, fwt = [], []
    for j, tj in enumerate(t):
        if tj < 0:
            continue
        intr.append(ref[j] - R[tj, j])
        if tj >= 1:
            fwt.append(R[tj, j] - ref[j])
    return np.mean(intr), np.mean(fwt)


@pytest.mark.slow
def test_references_once_per_dataset_detector_seed_and_metrics_of_every_run(tmp_path):
    log = tmp_path / "fits.txt"
    out = tmp_path / "out"
    events = []
    result = run_spec(_spec(log, ["joint", "single_task"]), out, on_event=events.append)
    assert result.ok and result.n_total == 2 * 2 * 2  # 2 strategies x 2 scenarios x 2 seeds
    # the progress tells the spec's runs only: 8 runs, all to be recorded now (those computed and those
    # shared with them, each logged), no reference among them
    started = [e for e in events if e.kind == "grid_started"][0]
    assert (started.total, started.finished_before) == (8, 0)
    assert len([e for e in events if e.kind in ("finished", "shared")]) == 8
    assert not [
        e
        for e in events
        if getattr(e, "config", None) is not None and isinstance(e.config, ReferenceConfig)
    ]
    # counted three ways: reference runs computed by the grid, stored records, and the joint model's fits
    # (the only fits on every training row: naive fits one concept, replay one concept + 30 buffered rows)
    assert result.n_references_computed == 2 * 2  # (joint, single_task) x 2 seeds, not per run
    fits = _fits(log)
    assert fits.count(N_CONCEPTS * N_TRAIN) == 2  # one joint model per seed
    doc = json.loads((out / "results.json").read_text())
    refs = doc["references"]
    assert sorted((r["strategy"], r["seed"]) for r in refs) == [
        ("joint", 0),
        ("joint", 1),
        ("single_task", 0),
        ("single_task", 1),
    ]
    assert all(r["scenario"] == "reference" and r["status"] == "ok" for r in refs)
    ref_of = {(r["strategy"], r["seed"]): r for r in refs}
    assert np.asarray(ref_of["joint", 0]["R"]["roc_auc"]).shape == (1, N_CONCEPTS)
    assert np.asarray(ref_of["single_task", 0]["R"]["roc_auc"]).shape == (N_CONCEPTS, N_CONCEPTS)

    for run in doc["runs"]:
        assert run["status"] == "ok"
        m = run["metrics"]["roc_auc"]
        R = np.array(run["R"]["roc_auc"], dtype=float)
        t = learned_at(run["concepts"], run["test_concepts"])
        joint = ref_of["joint", run["seed"]]
        st = ref_of["single_task", run["seed"]]
        # by hand from the stored reference R: the joint model's one row, the experts' diagonal
        ref_joint = [
            joint["R"]["roc_auc"][0][joint["test_concepts"].index(c)] for c in run["test_concepts"]
        ]
        ref_st = [
            st["R"]["roc_auc"][st["concepts"].index(c)][st["test_concepts"].index(c)]
            for c in run["test_concepts"]
        ]
        for kind, ref in (("joint", ref_joint), ("single_task", ref_st)):
            intr, fwt = _by_hand(R, ref, t)
            assert m[f"intransigence_{kind}"] == pytest.approx(intr)
            assert m[f"reference_forward_transfer_{kind}"] == pytest.approx(fwt)
            assert m["left_out"][f"intransigence_{kind}"] == 0
        assert "intransigence" not in m  # the generic one needs a single reference: absent

    # the single-task reference is the single-task matrix M that `clad validate` computes for the spec
    for labels, matrix in spec_matrices(_spec(tmp_path / "validate-fits.txt", ["single_task"])):
        np.testing.assert_array_equal(
            np.array(ref_of["single_task", labels["seed"]]["R"]["roc_auc"]), matrix.M
        )

    # naive in concept_incremental is the single-task run itself: its diagonal equals the experts'
    naive = [
        r
        for r in doc["runs"]
        if r["strategy"] == "naive" and r["scenario"] == "concept_incremental"
    ]
    for r in naive:
        assert r["metrics"]["roc_auc"]["intransigence_single_task"] == pytest.approx(0.0, abs=1e-12)

    # the leaderboard shows them from the registry's declarations, labels and directions included
    lb = leaderboard(result.runs)
    for kind in ("joint", "single_task"):
        assert lb[f"intransigence_{kind}_n"].eq(2).all()
        assert REGISTRY[f"intransigence_{kind}"].lower_is_better
    assert "Intransigence (joint)" in (out / "summary.csv").read_text()

    # the report shows the reference scores (read back from the folder)
    refs_back = load_references(out)
    assert len(refs_back) == 4
    report = make_report(
        load_results(out), tmp_path / "report", stat_metrics=(), references=refs_back
    )
    page = report.all_text()
    assert (
        "Reference runs" in page and "Scenario validity" in page
    )  # validity: from the single-task matrices

    # resume: nothing computed again, references included; the values are unchanged
    again = run_spec(_spec(log, ["joint", "single_task"]), out)
    assert again.n_computed == 0 and again.n_references_computed == 0
    assert _fits(log) == fits
    assert json.loads((out / "results.json").read_text())["runs"] == doc["runs"]

    # a reference whose input changed since (here: a data file it read) is computed again, alone
    with ResultStore(out / "results.sqlite") as store:
        ref = store.load_references()[0]
        store.write_reference(
            dataclasses.replace(ref, inputs={"data file /nonexistent/x.npz": "sha256:0"})
        )
    third = run_spec(_spec(log, ["joint", "single_task"]), out)
    assert third.n_computed == 0 and third.n_references_computed == 1
    assert json.loads((out / "results.json").read_text())["runs"] == doc["runs"]


def test_without_references_the_metrics_are_absent(tmp_path):
    out = tmp_path / "out"
    result = run_spec(_spec(tmp_path / "fits.txt", seeds=1), out)
    assert result.ok and result.n_references_computed == 0 and result.references == ()
    doc = json.loads((out / "results.json").read_text())
    assert "references" not in doc
    for run in doc["runs"]:
        names = set(run["metrics"]["roc_auc"])
        assert not {n for n in names if "intransigence" in n or "reference_forward" in n}
    lb = leaderboard(result.runs)
    assert lb["intransigence_joint_mean"].isna().all()  # absent, not zero


@pytest.mark.slow
def test_references_of_a_tuned_grid_see_the_evaluation_data_and_the_chosen_parameters(tmp_path):
    raw = {
        "seeds": 1,
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "detectors": ["iforest"],
        "datasets": [
            {"name": "synthetic", "n_concepts": 3, "n_features": 3, "n_train": 60, "n_test": 40}
        ],
        "tuning": {
            "mode": "first_concepts",
            "k": 1,
            "detectors": {"iforest": {"max_samples": [16, 32]}},
        },
        "references": ["joint", "single_task"],
    }
    done = run_spec(raw, tmp_path / "out")
    assert done.ok and done.n_total == 1 and done.n_tuning == 2 and done.n_references_computed == 2
    run = done.runs[0]
    for ref in (
        done.references
    ):  # the evaluation run's part of the data (C0 went to tuning) and its detector
        assert ref.config["data_view"] == run.config["data_view"]
        assert ref.config["detector"] == run.config["detector"]
        assert ref.test_concepts == run.test_concepts == ("C1", "C2")
    # naive in concept_incremental is the single-task run: the same seeds, so no intransigence against it
    assert run.metrics["roc_auc"]["intransigence_single_task"] == pytest.approx(0.0, abs=1e-12)
    assert np.isfinite(run.metrics["roc_auc"]["intransigence_joint"])


def test_references_one_kind_and_bad_values():
    assert _spec("x", ["single_task"]).references == ("single_task",)
    assert _spec("x").references == ()
    with pytest.raises(
        SpecError, match=r"references\[1\]: 'jiont' is not a reference kind \(did you mean 'joint'"
    ):
        _spec("x", ["single_task", "jiont"])
    with pytest.raises(SpecError, match="references: 'joint'; expected a list"):
        _spec("x", "joint")
    with pytest.raises(SpecError, match="listed twice"):
        _spec("x", ["joint", "joint"])


@pytest.mark.slow
def test_references_are_computed_in_worker_processes(tmp_path):
    log = tmp_path / "fits.txt"
    result = run_spec(
        _spec(log, ["joint"], seeds=1),
        tmp_path / "out",
        execution=Execution.of(_spec(log, ["joint"], seeds=1), jobs=2),
    )
    assert result.ok and result.n_references_computed == 1
    assert _fits(log).count(N_CONCEPTS * N_TRAIN) == 1  # the joint model, fitted once, in a worker
    assert all("intransigence_joint" in r.metrics["roc_auc"] for r in result.runs)
    assert not any("intransigence_single_task" in r.metrics["roc_auc"] for r in result.runs)
