"""Runs that are one computation are computed once, and sharing is exact (issue 13, item 2)."""

import sqlite3
import tomllib
from pathlib import Path

import numpy as np
import pytest

from clad.engine.benchmark import run_spec
from clad.engine.config import Component, RunConfig
from clad.engine.identity import computation_keys, run_traits
from clad.engine.spec import parse_spec

from tests.runner_helpers import synthetic
from tests.data_helpers import SHARED, needs_data

ROOT = Path(__file__).resolve().parents[2]


def _cfg(scenario, strategy, detector, seed=0, dataset=("synthetic", {"n_concepts": 2})):
    return RunConfig(
        Component(*dataset), Component(scenario), Component(strategy), Component(*detector), seed
    )


def test_traits_follow_the_declarations():
    flat = ("pyclad", {"allow_pickle": True})
    # naive never reads the id: concept_aware is concept_incremental for it
    assert run_traits(_cfg("concept_aware", "naive", ("lof", {}), dataset=flat)) == (
        "concept_incremental",
        False,
    )
    # experts and balanced_replay read it
    assert run_traits(_cfg("concept_aware", "experts", ("lof", {}), dataset=flat))[0] is None
    assert run_traits(_cfg("concept_aware", "balanced_replay", ("lof", {}), dataset=flat)) == (
        None,
        True,
    )
    # a seeded detector, a seeded loader: the seed matters
    assert run_traits(_cfg("concept_incremental", "naive", ("iforest", {}), dataset=flat)) == (
        None,
        True,
    )
    assert run_traits(_cfg("concept_incremental", "naive", ("lof", {}))) == (None, True)
    # an explicit random_state wins over the seed: the seed no longer matters
    assert (
        run_traits(
            _cfg("concept_incremental", "naive", ("iforest", {"random_state": 3}), dataset=flat)
        )[1]
        is False
    )


def test_keys_group_only_what_is_the_same_computation():
    flat = ("pyclad", {"allow_pickle": True})
    cfgs = [
        _cfg(sc, st, ("lof", {}), seed, flat)
        for sc in ("concept_aware", "concept_incremental")
        for st in ("naive", "experts")
        for seed in (0, 1)
    ]
    keys = computation_keys(cfgs)
    naive = {keys[c.run_id] for c in cfgs if c.strategy.name == "naive"}
    experts = {keys[c.run_id] for c in cfgs if c.strategy.name == "experts"}
    assert len(naive) == 1 and len(experts) == 2 and not naive & experts
    assert len(set(computation_keys(cfgs, share=False).values())) == len(cfgs)


def _by_id(results):
    return {r.run_id: r for r in results}


def _assert_same_R(a, b):
    assert a.keys() == b.keys()
    for rid in a:
        assert a[rid].R.keys() == b[rid].R.keys()
        for m in a[rid].R:
            np.testing.assert_array_equal(a[rid].R[m], b[rid].R[m])  # exact, NaN == NaN


SMALL = {
    "seeds": 2,
    "strategies": ["naive", "balanced_replay"],
    "detectors": ["lof", "hbos"],
    "scenarios": ["concept_aware", "concept_incremental"],
    "datasets": [synthetic(random_state=5)],
}


@pytest.mark.slow
def test_sharing_is_exact_and_recorded(tmp_path):
    shared = run_spec(SMALL, tmp_path / "shared")
    alone = run_spec({**SMALL, "share": False}, tmp_path / "alone")
    assert shared.ok and alone.ok and len(shared.runs) == len(alone.runs) == 16
    # naive: 2 detectors, one computation each (scenario and seed do not matter with fixed data);
    # balanced_replay reads the id and draws: 2 detectors x 2 scenarios x 2 seeds
    assert shared.n_computed == 2 + 8 and alone.n_computed == 16 and shared.n_shared == 6
    _assert_same_R(_by_id(shared.runs), _by_id(alone.runs))
    copies = [r for r in shared.runs if r.shared_from]
    assert len(copies) == 6 and all(r.strategy == "naive" for r in copies)
    ids = {r.run_id for r in shared.runs}
    assert all(r.shared_from in ids and r.shared_from != r.run_id for r in copies)
    # visible in results.json and the database
    import json

    doc = json.loads((tmp_path / "shared" / "results.json").read_text())
    assert sum(r["shared_from"] is not None for r in doc["runs"]) == 6
    con = sqlite3.connect(tmp_path / "shared" / "results.sqlite")
    assert con.execute("SELECT COUNT(*) FROM runs WHERE shared_from IS NOT NULL").fetchone()[0] == 6
    con.close()
    # resumed: nothing to compute, the copies stay
    again = run_spec(SMALL, tmp_path / "shared")
    assert again.n_computed == 0 and sum(r.shared_from is not None for r in again.runs) == 6


def test_spec_key_share_is_checked():
    from clad.errors import SpecError

    with pytest.raises(SpecError, match="share"):
        parse_spec({**SMALL, "share": "yes"})


@pytest.mark.slow
@needs_data
def test_sharing_is_exact_on_the_pyclad_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    raw = tomllib.loads((ROOT / "scenarios" / "pyclad_nsl_kdd.toml").read_text())
    raw["detectors"] = [{"name": "iforest", "n_estimators": 20}, {"name": "lof"}]
    shared = run_spec(raw, tmp_path / "shared")
    alone = run_spec({**raw, "share": False}, tmp_path / "alone")
    assert shared.ok and alone.ok and len(shared.runs) == 16
    # iforest: 2 seeds, lof: 1 computation, for each of naive and cumulative
    assert shared.n_computed == 6 and alone.n_computed == 16
    _assert_same_R(_by_id(shared.runs), _by_id(alone.runs))


@pytest.mark.slow
def test_sharing_is_exact_on_the_quickstart(quickstart, tmp_path):
    from clad.results.reading import load_results

    alone = run_spec(
        {**tomllib.loads(quickstart.spec.read_text()), "share": False}, tmp_path / "alone"
    )
    shared = _by_id(load_results(quickstart.out))
    # concept_aware = concept_incremental for naive and cumulative: 2 strategies x 3 detectors x 3 seeds
    assert sum(r.shared_from is not None for r in shared.values()) == 18
    _assert_same_R(shared, _by_id(alone.runs))


@pytest.mark.slow
def test_shared_runs_are_logged_and_labelled(tmp_path, caplog):
    import logging

    from clad.engine.progress import ProgressEvents
    from clad.report import make_report, merge_shared
    from clad.results import load_results

    with caplog.at_level(logging.INFO, logger="clad.engine.progress"):
        done = run_spec(SMALL, tmp_path / "out", on_event=ProgressEvents(bar=False))
    lines = [r.getMessage() for r in caplog.records if "done" in r.getMessage()]
    total = len(done.runs)
    assert len(lines) == total and lines[0].startswith(
        f"run 1/{total} done"
    )  # every run logged, from the first
    shared = [line for line in lines if "same computation as run" in line]
    assert len(shared) == done.n_shared > 0
    assert "run 2/" in shared[0] and "(same computation as run 1)" in shared[0]
    results = load_results(tmp_path / "out")
    merged = merge_shared(results)
    # naive never reads the concept id: its concept_incremental runs are concept_aware's, shown once
    assert len(merged) == total - 4 and not any(
        r.scenario == "concept_incremental" and r.strategy == "naive" for r in merged
    )
    assert any(" = " in r.scenario for r in merged)  # labelled with every scenario it stands for
    page = make_report(results, tmp_path / "report").all_text()
    assert "concept_aware = concept_incremental" in page and "shared with run" in page
