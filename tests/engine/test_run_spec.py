"""Spec files: execution keys, concept orders, and every mistake reported before anything runs."""

from __future__ import annotations

import pytest

from clad.errors import SpecError
from clad.engine.spec import load_spec, parse_spec

from tests.runner_helpers import SMALL, SMALL_SPEC, run_main, write_spec


def test_three_mistakes_are_all_reported_and_nothing_is_created(tmp_path, capsys, caplog):
    spec = write_spec(
        tmp_path,
        **{
            **SMALL,
            "jobz": 2,
            "scenarios": [{"name": "concept_agnostic", "batch_sise": 50}],
            "detectors": [SMALL["detectors"][0], {"name": "hbso"}],
        },
    )
    out = tmp_path / "out"
    rc, stdout, err = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 2 and stdout == ""
    assert "3 problems" in err and str(spec) in err
    assert "jobz: unknown key (did you mean 'jobs'?)" in err
    assert "detectors[1].name" in err and "'hbso'" in err and "did you mean 'hbos'?" in err
    assert "scenarios[0]" in err and "'batch_sise'" in err and "did you mean 'batch_size'?" in err
    assert not out.exists()


def test_execution_keys_are_read_and_checked():
    raw = {
        "datasets": ["synthetic"],
        "scenarios": ["concept_aware"],
        "strategies": ["naive"],
        "detectors": ["hbos"],
    }
    spec = parse_spec({**raw, "jobs": 3, "threads": 2, "dask": "tcp://sched:8786", "timeout": 90})
    assert (spec.jobs, spec.threads, spec.dask, spec.timeout) == (3, 2, "tcp://sched:8786", 90.0)
    assert (parse_spec(raw).jobs, parse_spec(raw).dask, parse_spec(raw).timeout) == (
        None,
        None,
        None,
    )
    with pytest.raises(SpecError) as exc:
        parse_spec({**raw, "jobs": 0, "threads": "many", "dask": 7, "timeout": -1})
    assert len(exc.value.problems) == 4
    assert [p.split(":")[0] for p in exc.value.problems] == ["jobs", "threads", "dask", "timeout"]


def test_orders_are_passed_to_loaders_that_take_them():
    raw = {
        "datasets": [{"name": "tests.plugins:ordered_synthetic", "n_concepts": 3}],
        "scenarios": ["concept_aware"],
        "strategies": ["naive"],
        "detectors": ["hbos"],
        "orders": ["given", "reversed"],
        "seeds": 2,
    }
    spec = parse_spec(raw)
    assert len(spec) == 4
    assert sorted({c.dataset.params["order"] for c in spec.configs}) == ["given", "reversed"]
    assert {c.dataset.display for c in spec.configs} == {
        "tests.plugins:ordered_synthetic[order=given]",
        "tests.plugins:ordered_synthetic[order=reversed]",
    }
    assert len({c.run_id for c in spec.configs}) == 4
    # the order reaches the loader: R's rows follow it
    from clad.engine.run import run_config

    rev = next(c for c in spec.configs if c.dataset.params["order"] == "reversed")
    result = run_config(rev)
    assert result.concepts == ("C2", "C1", "C0") and result.test_concepts == ("C0", "C1", "C2")
    assert result.dataset == "tests.plugins:ordered_synthetic[order=reversed]"


def test_orders_a_loader_cannot_take_are_refused_with_the_other_problems():
    plain = {
        "name": "tests.plugins:logged_synthetic",
        "log": "unused.log",
    }  # a loader without an order
    raw = {
        "datasets": [plain, {"name": "tests.plugins:ordered_synthetic", "order": "random"}],
        "scenarios": ["concept_aware"],
        "strategies": ["naive"],
        "detectors": ["hbos"],
        "orders": ["given", "random"],
        "seeds": [1, 1],
    }
    with pytest.raises(SpecError) as exc:
        parse_spec(raw)
    text = str(exc.value)
    assert (
        "dataset 'tests.plugins:logged_synthetic' cannot be given order 'random'" in text
        and "no 'order' parameter" in text
    )
    assert "either here or in the top-level 'orders' list" in text
    assert "seeds:" in text
    # "given" alone needs no support from the loader
    ok = parse_spec({**raw, "datasets": [plain], "orders": ["given"], "seeds": 1})
    assert len(ok) == 1 and "order" not in ok.configs[0].dataset.params


def test_dry_run_prints_the_grid_and_its_size(tmp_path, capsys, caplog):
    spec = write_spec(tmp_path, SMALL_SPEC)
    rc, stdout, err = run_main(capsys, caplog, "run", spec, "--dry-run", "--jobs", "2")
    assert rc == 0, err
    lines = stdout.strip().splitlines()
    assert lines[0] == "small: 8 runs (2 processes)"
    ids = {ln.split()[0] for ln in lines[1:]}
    assert ids == {c.run_id for c in load_spec(spec).configs}
