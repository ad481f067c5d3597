"""Bundles (clad.bundle): the exchange format, its sources, pull, run --from and verify-bundle."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clad.bundle.format import MANIFEST, BundleError, export_bundle, read_bundle
from clad.results.store import load_results
from tests.runner_helpers import run_clad, synthetic, write_spec

GRID = dict(name="bundled", base_metrics=["roc_auc", "f1"], seeds=[0, 1], strategies=["naive", "cumulative"],
            datasets=[synthetic(), synthetic(n_features=4, label="synthetic4")],
            scenarios=[{"name": "concept_incremental"}], detectors=[{"name": "hbos"}, {"name": "iforest", "n_estimators": 5}])


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A small grid's results folder (16 runs: 2 datasets, 2 detectors, 2 strategies, 2 seeds)."""
    from clad.engine.benchmark import run_spec

    folder = tmp_path_factory.mktemp("grid")
    spec = write_spec(folder, **GRID)
    run_spec(spec, folder / "out")
    return folder / "out"


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_runs_give_the_same_bytes(grid, tmp_path):
    a, b = export_bundle(grid, tmp_path / "a"), export_bundle(grid, tmp_path / "b")
    assert a.runs == 16 and a.shards == 4 and not a.left_out
    assert _files(tmp_path / "a") == _files(tmp_path / "b") and a.sha256 == b.sha256
    export_bundle(grid, tmp_path / "a.tar"), export_bundle(grid, tmp_path / "b.tar")
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()
    assert read_bundle(tmp_path / "a.tar").rows == read_bundle(tmp_path / "a").rows


def test_the_manifest_and_shards_describe_the_runs(grid, tmp_path):
    export_bundle(grid, tmp_path / "b")
    manifest = json.loads((tmp_path / "b" / MANIFEST).read_text())
    assert manifest["format"] == "clad-bundle" and manifest["format_version"] == 1
    assert manifest["numbers_version"] == 1 and manifest["runs"] == 16
    assert [d["label"] for d in manifest["datasets"]] == ["synthetic", "synthetic4"]
    assert all(d["sha256"] == [] for d in manifest["datasets"])  # generated data: its parameters say it all
    shards = {s["path"]: s for s in manifest["shards"]}
    assert sorted(shards) == ["runs/synthetic/hbos.jsonl", "runs/synthetic/iforest.jsonl",
                              "runs/synthetic4/hbos.jsonl", "runs/synthetic4/iforest.jsonl"]
    import hashlib

    for path, shard in shards.items():
        data = (tmp_path / "b" / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == shard["sha256"]
        keys = [json.loads(line)["key"] for line in data.decode().splitlines()]
        assert keys == sorted(keys) and len(keys) == shard["runs"] == 4


def test_floats_round_trip_exactly(grid, tmp_path):
    bundle = read_bundle(export_bundle(grid, tmp_path / "b").path)
    by_key = bundle.by_key
    for r in load_results(grid):
        row = by_key[r.result_key["key"]]
        for metric, R in r.R.items():
            back = np.array([[np.nan if v is None else v for v in line] for line in row["record"]["R"][metric]])
            assert back.dtype == R.dtype and np.array_equal(back, R, equal_nan=True)
            assert back.tobytes() == R.tobytes() or np.isnan(R).any()


def test_the_cli_writes_a_bundle(grid, tmp_path):
    proc = run_clad("export", grid, "--bundle", tmp_path / "cli.tar")
    assert proc.returncode == 0, proc.stderr
    bundle = read_bundle(tmp_path / "cli.tar")
    assert "16 runs in 4 shards" in proc.stdout and bundle.sha256 in proc.stdout


# -- bad bundles: a clear error, nothing read -----------------------------------------------------
def test_a_truncated_tar_is_refused(grid, tmp_path):
    export_bundle(grid, tmp_path / "b.tar")
    data = (tmp_path / "b.tar").read_bytes()
    (tmp_path / "t.tar").write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleError, match="truncated|sha256|missing"):
        read_bundle(tmp_path / "t.tar")


def test_an_altered_shard_is_refused(grid, tmp_path):
    export_bundle(grid, tmp_path / "b")
    shard = tmp_path / "b" / "runs" / "synthetic" / "hbos.jsonl"
    shard.write_text(shard.read_text().replace("0.", "0.9", 1))
    with pytest.raises(BundleError, match="hbos.jsonl' has sha256 .* the manifest says"):
        read_bundle(tmp_path / "b")


def test_a_row_whose_key_is_not_its_parts_is_refused(grid, tmp_path):
    import hashlib

    export_bundle(grid, tmp_path / "b")
    shard = tmp_path / "b" / "runs" / "synthetic" / "hbos.jsonl"
    rows = [json.loads(line) for line in shard.read_text().splitlines()]
    rows[0]["parts"]["numbers"] = 99
    shard.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((tmp_path / "b" / MANIFEST).read_text())
    for s in manifest["shards"]:
        if s["path"].endswith("synthetic/hbos.jsonl"):
            s["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
    (tmp_path / "b" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="line 1: key .* is not the key of its parts"):
        read_bundle(tmp_path / "b")


def test_a_foreign_or_newer_manifest_is_refused(tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / MANIFEST).write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(BundleError, match="not a clad bundle's"):
        read_bundle(tmp_path / "f")
    (tmp_path / "f" / MANIFEST).write_text(json.dumps({"format": "clad-bundle", "format_version": 7}))
    with pytest.raises(BundleError, match="format_version 7; this clad reads 1"):
        read_bundle(tmp_path / "f")
    (tmp_path / "g").mkdir()
    with pytest.raises(BundleError, match="no manifest.json"):
        read_bundle(tmp_path / "g")


def test_a_pinned_sha256_must_match(grid, tmp_path):
    done = export_bundle(grid, tmp_path / "b")
    assert read_bundle(tmp_path / "b", sha256=done.sha256).sha256 == done.sha256
    with pytest.raises(BundleError, match="expected 00+ \\(pinned\\)"):
        read_bundle(tmp_path / "b", sha256="0" * 64)
