"""Concept orders on the real loaders, and data problems found before the grid (issue: concept
orders that work and are never pseudo-replication).

Every documented order form (``orders = { random = N }`` gives ``order = "random:<seed>"``) works
on every loader that takes ``order``, checked at spec time; a data problem (a concept without
anomalies) is said once per dataset by ``--dry-run`` and by ``clad run`` before any run."""

from __future__ import annotations

from pathlib import Path

import pytest

from clad.cli import main
from clad.engine.benchmark import run_spec
from clad.engine.spec import parse_spec
from clad.errors import SpecError
from tests.data_helpers import SHARED, needs_data

pytestmark = needs_data

LOADERS = {
    "adbench": {"file": "6_cardio.npz", "recipe": "cluster_closest", "n_concepts": 3},
    "mvtec": {"categories": ["bottle", "carpet", "screw"]},
    "nsl_kdd": {"concepts": "family"},
}


def _spec(dataset: dict, orders, seeds=(0,), strategies=("naive",), **top) -> dict:
    return {
        "name": "orders",
        "seeds": list(seeds),
        "strategies": list(strategies),
        "orders": orders,
        "datasets": [{**dataset, "data_dir": str(SHARED)}],
        "scenarios": ["concept_incremental"],
        "detectors": [{"name": "iforest", "n_estimators": 10}],
        **top,
    }


@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_random_orders_table_runs_on_every_real_loader(loader, tmp_path):
    spec = parse_spec(_spec({"name": loader, **LOADERS[loader]}, {"random": 2}))
    orders = [c.dataset.params["order"] for c in spec.configs]
    assert len(orders) == 2 and all(o.startswith("random:") for o in orders)
    result = run_spec(spec, tmp_path / "out")
    assert result.n_failed == 0 and result.n_ok == 2, [r.error for r in result.runs]
    learned = {tuple(r.concepts) for r in result.runs}
    assert all(r.order in orders for r in result.runs)
    names = {frozenset(c) for c in learned}
    assert len(names) == 1  # the same concepts, each run in its own fixed permutation


def test_an_order_a_loader_cannot_give_is_refused_at_spec_time():
    with pytest.raises(SpecError, match="not a concept order"):
        parse_spec(_spec({"name": "adbench", **LOADERS["adbench"]}, ["given", "backwards"]))


def test_the_order_constraint_accepts_every_documented_form():
    from clad.datasets.build import SPLIT_CONSTRAINTS, ORDERS
    from clad.validation import problems

    for order in (*ORDERS, "random:0", "random:3757552657"):
        assert problems("adbench", {"order": order}, SPLIT_CONSTRAINTS) == [], order
    for order in ("random:", "random:-1", "random:x", "random:<seed>", "Given", ""):
        assert problems("adbench", {"order": order}, SPLIT_CONSTRAINTS), order


PENDIGITS = {
    "name": "adbench",
    "label": "pendigits",
    "file": "28_pendigits.npz",
    "recipe": "cluster_closest",
    "n_concepts": 4,
}


def _write(tmp_path: Path, spec: dict) -> Path:
    import tomli_w

    path = tmp_path / "spec.toml"
    path.write_bytes(tomli_w.dumps(spec).encode())
    return path


def test_a_concept_without_anomalies_is_said_once_by_dry_run(tmp_path, capsys):
    spec = _spec(PENDIGITS, ["given"], seeds=(0, 1, 2), strategies=("naive", "replay"))
    del spec["orders"]
    path = _write(tmp_path, spec)
    assert main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("has no anomalies") == 1, err
    assert "datasets (pendigits)" in err and "before any run" in err


def test_a_concept_without_anomalies_stops_clad_run_before_any_run(tmp_path, capsys):
    spec = _spec(PENDIGITS, ["given"], seeds=(0, 1, 2), strategies=("naive", "replay"))
    del spec["orders"]
    out = tmp_path / "out"
    assert main(["run", str(_write(tmp_path, spec)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("has no anomalies") == 1
    assert not (out / "results.sqlite").exists()  # no run was computed or recorded


def test_a_cuda_device_this_machine_lacks_is_refused_by_dry_run(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    spec = {
        "name": "dev",
        "seeds": [0],
        "strategies": ["naive"],
        "scenarios": ["concept_incremental"],
        "datasets": [{"name": "synthetic", "n_concepts": 2, "n_train": 50, "n_test": 40}],
        "detectors": [{"name": "autoencoder", "device": "cuda", "epochs": 1}],
    }
    assert main(["run", str(_write(tmp_path, spec)), "--dry-run"]) == 2
    assert "no CUDA device" in capsys.readouterr().err


def test_references_are_computed_per_order_on_the_runs_own_concepts(tmp_path):
    """Naive in concept_incremental with a deterministic detector is the single-task run: its
    single-task intransigence is 0 under every order, and each order has its own references."""
    spec = parse_spec(
        _spec(
            {"name": "adbench", **LOADERS["adbench"], "label": "cardio"},
            ["given", "random"],
            seeds=(0, 1),
            references=["single_task", "joint"],
        )
        | {"detectors": ["ecod"]}
    )
    result = run_spec(spec, tmp_path / "out")
    assert result.n_failed == 0
    refs = [r for r in result.references if r.strategy == "single_task"]
    assert {r.dataset for r in refs} == {"cardio[order=given]", "cardio[order=random]"}
    for r in result.runs:
        assert r.metrics["roc_auc"]["intransigence_single_task"] == 0.0, (r.dataset, r.seed)


def test_three_orders_of_one_dataset_are_one_block_with_order_sensitivity(tmp_path):
    """cardio in three orders, one seed: one block, so no test across blocks (where counting orders
    as datasets gave 'differ, exact p = 0.0278'); the orders' agreement is shown within cardio."""
    from clad.report import make_report
    from clad.report.load import report_runs

    spec = parse_spec(
        _spec(
            {"name": "adbench", **LOADERS["adbench"], "label": "cardio"},
            ["given", "random", "easy_to_hard"],
            strategies=("naive", "replay"),
        )
        | {"detectors": [{"name": "iforest", "n_estimators": 10}, "ecod", "hbos"]}
    )
    result = run_spec(spec, tmp_path / "out")
    assert result.n_failed == 0 and len(result.runs) == 18
    report = make_report(report_runs(tmp_path / "out"), tmp_path / "out" / "report")
    c = next(c for c in report.comparisons if c.by == "detector")
    assert c.n_blocks == 1 and c.test is None and c.verdict.status == "not tested"
    assert [d for d, _ in c.orders_by_dataset] == ["cardio"] and c.orders_by_dataset[0][
        1
    ].n_orders == 3
    first = report.index.read_text()
    assert (
        "1 dataset (one block, over 3 concept orders)" in first and "verdict: differ" not in first
    )
    assert "Order sensitivity within each dataset" in report.pages["statistics.html"].read_text()
    assert [p for p in report.pages if p.startswith("blocks/")] == ["blocks/cardio.html"]
    # each configuration's spread over its three orders (orders labelled cardio[order=…] are one dataset)
    from clad.report.order_sensitivity import order_sensitivity

    table = order_sensitivity(result.runs)
    assert set(table["dataset"]) == {"cardio"} and set(table["orders"]) == {3}
    assert len(table.groupby(["strategy", "detector"])) == 6
