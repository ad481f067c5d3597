"""The result key (clad.engine.result_key): what makes two runs one computation anywhere."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from clad.engine.settings import Execution
from clad._version import NUMBERS_DIGEST, NUMBERS_VERSION
from clad.core.concepts import Concept, ConceptDataset
from clad.datasets import save_clad_npz
from clad.engine.config import Component, RunConfig
from clad.engine.result_key import (
    LIBRARY_POLICY,
    differences,
    key_of,
    local_parts,
    r_digest,
    recorded_parts,
    uses_torch,
    with_result_key,
)
from clad.metrics.base import get_base_metric, register_base_metric
from clad.results.record import RunResult, versions
from clad.results.reading import load_results


def _record(config: RunConfig, inputs=None, **libs) -> RunResult:
    return RunResult(
        "d",
        "s",
        "st",
        "det",
        config.seed,
        config=config.to_dict(),
        inputs=dict(inputs or {}),
        versions={**versions(), **libs},
        run_id=config.run_id,
    )


def _cfg(
    dataset=Component("synthetic", {"n_concepts": 2}), detector="hbos", metrics=("roc_auc",), seed=0
):
    return RunConfig(
        dataset,
        Component("concept_incremental"),
        Component("naive"),
        Component(detector),
        seed=seed,
        base_metrics=tuple(metrics),
    )


def _key(result: RunResult) -> str:
    return with_result_key(result).result_key["key"]


@pytest.mark.slow
def test_quickstart_r_changes_only_with_a_numbers_version_bump(quickstart):
    installed = {lib: versions()[lib] for lib in NUMBERS_DIGEST["libraries"]}
    if installed != NUMBERS_DIGEST["libraries"]:
        pytest.skip(
            f"the digest was taken with {NUMBERS_DIGEST['libraries']}; installed: {installed}"
        )
    assert NUMBERS_DIGEST["numbers_version"] == NUMBERS_VERSION, (
        "update NUMBERS_DIGEST with NUMBERS_VERSION"
    )
    assert r_digest(load_results(quickstart.out)) == NUMBERS_DIGEST["quickstart_R"], (
        "the quickstart's R changed: raise NUMBERS_VERSION in clad/_version.py and record the new digest "
        "(CONTRIBUTING.md, 'The numbers-version')"
    )


def test_the_digest_sees_one_changed_bit():
    r = RunResult("d", "s", "st", "det", 0, R={"roc_auc": np.array([[0.5, 0.25]])})
    moved = dataclasses.replace(r, R={"roc_auc": np.array([[np.nextafter(0.5, 1), 0.25]])})
    assert r_digest([r]) != r_digest([moved])


def _npz(path, shift=0.0):
    rng = np.random.default_rng(0)
    train = [Concept(c, rng.normal(size=(30, 2)) + shift) for c in "ab"]
    test = [
        Concept(c, rng.normal(size=(20, 2)), np.r_[np.zeros(15), np.ones(5)].astype(int))
        for c in "ab"
    ]
    return save_clad_npz(ConceptDataset(train, test, name=path.stem), path)


def test_a_changed_data_byte_changes_exactly_that_datasets_keys(tmp_path):
    _npz(tmp_path / "one.npz"), _npz(tmp_path / "two.npz")
    one = Component("clad_npz", {"file": "one.npz", "data_dir": str(tmp_path)})
    two = Component("clad_npz", {"file": "two.npz", "data_dir": str(tmp_path)})
    configs = [_cfg(ds, seed=s) for ds in (one, two) for s in (0, 1)]
    before = {c.run_id: local_parts(c.to_dict()) for c in configs}
    assert all(len(p["data"]) == 1 for p in before.values())
    _npz(tmp_path / "one.npz", shift=1e-3)  # new bytes, same name (a loaded dataset is read again)
    after = {c.run_id: local_parts(c.to_dict()) for c in configs}
    changed = {
        c.dataset.params["file"]
        for c in configs
        if key_of(before[c.run_id]) != key_of(after[c.run_id])
    }
    assert changed == {"one.npz"}
    assert differences(before[configs[0].run_id], after[configs[0].run_id])[0].startswith(
        "data bytes: "
    )


def test_a_base_metric_version_changes_exactly_the_keys_of_runs_using_it():
    runs = [_record(_cfg(metrics=m)) for m in (("roc_auc",), ("f1",), ("roc_auc", "f1"))]
    before = [_key(r) for r in runs]
    old_parts = recorded_parts(runs[1])
    f1 = get_base_metric("f1")
    register_base_metric(dataclasses.replace(f1, version=f1.version + 1), replace=True)
    try:
        after = [_key(r) for r in runs]
        reasons = differences(old_parts, recorded_parts(runs[1]))
    finally:
        register_base_metric(f1, replace=True)
    assert [a != b for a, b in zip(before, after)] == [False, True, True]
    assert [_key(r) for r in runs] == before
    assert reasons == [f"base metric version: f1 {f1.version} -> {f1.version + 1}"]


def test_clad_release_python_and_labels_are_not_in_the_key():
    cfg = _cfg()
    labelled = dataclasses.replace(cfg, detector=Component("hbos", label="HBOS (mine)"))
    a = _record(cfg)
    b = dataclasses.replace(
        _record(labelled), versions={**a.versions, "clad": "99.0.0", "python": "3.99.0"}
    )
    assert _key(a) == _key(b)


def test_library_versions_enter_by_the_policy():
    assert LIBRARY_POLICY["scikit-learn"] == "exact" and LIBRARY_POLICY["numpy"] == "minor"
    base = _record(_cfg())
    assert _key(
        dataclasses.replace(base, versions={**base.versions, "scikit-learn": "0.0.1"})
    ) != _key(base)
    assert _key(dataclasses.replace(base, versions={**base.versions, "pyod": "0.0.1"})) != _key(
        base
    )
    major, minor = base.versions["numpy"].split(".")[:2]
    patched = dataclasses.replace(base, versions={**base.versions, "numpy": f"{major}.{minor}.999"})
    moved = dataclasses.replace(
        base, versions={**base.versions, "numpy": f"{major}.{int(minor) + 1}.0"}
    )
    assert _key(patched) == _key(base) and _key(moved) != _key(base)
    # torch decides only the numbers of runs whose detector is a PyTorch one
    assert _key(dataclasses.replace(base, versions={**base.versions, "torch": "0.0.1"})) == _key(
        base
    )
    ae = _record(_cfg(detector="autoencoder"))
    assert uses_torch(ae.config) and not uses_torch(base.config)
    assert _key(dataclasses.replace(ae, versions={**ae.versions, "torch": "0.0.1"})) != _key(ae)


def test_seed_configuration_and_plug_in_code_are_in_the_key():
    a, b = _record(_cfg(seed=0)), _record(_cfg(seed=1))
    assert _key(a) != _key(b)
    plugin = _record(_cfg(), inputs={"code my_plugin": "sha256:aa"})
    edited = _record(_cfg(), inputs={"code my_plugin": "sha256:bb"})
    assert _key(plugin) != _key(edited) != _key(a)
    assert differences(recorded_parts(plugin), recorded_parts(edited)) == [
        "plug-in code: code my_plugin sha256:aa -> sha256:bb"
    ]


def test_recorded_and_local_parts_agree_for_a_run_computed_here(tmp_path):
    from clad.engine.benchmark import run_spec
    from tests.runner_helpers import write_spec

    run_spec(write_spec(tmp_path, seeds=[0, 1]), tmp_path / "out")
    for r in load_results(tmp_path / "out"):
        assert r.result_key["key"] == key_of(local_parts(r.config))


@pytest.mark.slow
def test_jobs_executor_and_order_do_not_change_a_key(tmp_path):
    from clad.engine.benchmark import run_spec
    from tests.runner_helpers import SMALL, write_spec

    spec = write_spec(tmp_path, **SMALL)
    reversed_spec = write_spec(
        tmp_path,
        None,
        "reversed.toml",
        **{**SMALL, "detectors": SMALL["detectors"][::-1], "seeds": [1, 0]},
    )
    keys = []
    for out, path, jobs in (("one", spec, 1), ("two", spec, 2), ("rev", reversed_spec, 1)):
        run_spec(path, tmp_path / out, execution=Execution.of(path, jobs=jobs))
        keys.append({r.result_key["key"] for r in load_results(tmp_path / out)})
    assert keys[0] == keys[1] == keys[2] and len(keys[0]) == 8
