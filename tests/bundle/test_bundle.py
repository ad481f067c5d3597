"""Bundles (clad.bundle): the exchange format, its sources, pull, run --from and verify-bundle."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from clad.bundle.format import MANIFEST, BundleError, export_bundle, read_bundle
from clad.results.reading import load_results
from tests.runner_helpers import run_clad, synthetic, write_spec

GRID = dict(
    name="bundled",
    base_metrics=["roc_auc", "f1"],
    seeds=[0, 1],
    strategies=["naive", "cumulative"],
    datasets=[synthetic(), synthetic(n_features=4, label="synthetic4")],
    scenarios=[{"name": "concept_incremental"}],
    detectors=[{"name": "hbos"}, {"name": "iforest", "n_estimators": 5}],
)


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A small grid's results folder (16 runs: 2 datasets, 2 detectors, 2 strategies, 2 seeds)."""
    from clad.engine.benchmark import run_spec

    folder = tmp_path_factory.mktemp("grid")
    spec = write_spec(folder, **GRID)
    run_spec(spec, folder / "out")
    return folder / "out"


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


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
    assert all(
        d["sha256"] == [] for d in manifest["datasets"]
    )  # generated data: its parameters say it all
    shards = {s["path"]: s for s in manifest["shards"]}
    assert sorted(shards) == [
        "runs/synthetic/hbos.jsonl",
        "runs/synthetic/iforest.jsonl",
        "runs/synthetic4/hbos.jsonl",
        "runs/synthetic4/iforest.jsonl",
    ]
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
            back = np.array(
                [[np.nan if v is None else v for v in line] for line in row["record"]["R"][metric]]
            )
            assert back.dtype == R.dtype and np.array_equal(back, R, equal_nan=True)
            assert back.tobytes() == R.tobytes() or np.isnan(R).any()


@pytest.mark.slow
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
    (tmp_path / "f" / MANIFEST).write_text(
        json.dumps({"format": "clad-bundle", "format_version": 7})
    )
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


# -- pull: the same computation here, or refused with its reason -----------------------------------
def _rewrite(folder, edit):
    """Apply ``edit(row)`` to every row of the bundle folder (True: it edited the row), giving each
    edited row the key of its new parts and the manifest the shards' new sha256 (a bundle made
    elsewhere, consistent in itself)."""
    import hashlib

    from clad.bundle.format import dumps
    from clad.engine.result_key import canonical_config, key_of

    manifest = json.loads((folder / MANIFEST).read_text())
    for shard in manifest["shards"]:
        path = folder / shard["path"]
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            if edit(row):
                row["key"] = key_of({**row["parts"], "config": canonical_config(row["config"])})
        path.write_text("".join(dumps(r) + "\n" for r in sorted(rows, key=lambda r: r["key"])))
        shard["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")


def test_export_pull_export_gives_the_same_bytes(grid, tmp_path):
    from clad.bundle.pull import pull

    first = export_bundle(grid, tmp_path / "first")
    done = pull(str(tmp_path / "first"), tmp_path / "pulled")
    assert len(done.imported) == 16 and not done.refused and done.already == 0
    assert {r.origin for r in load_results(tmp_path / "pulled")} == {
        f"bundle sha256:{first.sha256}"
    }
    again = export_bundle(tmp_path / "pulled", tmp_path / "again")
    assert _files(tmp_path / "first") == _files(tmp_path / "again") and again.sha256 == first.sha256
    assert (
        pull(str(tmp_path / "first"), tmp_path / "pulled").already == 16
    )  # a second pull adds nothing


def test_rows_of_another_library_or_numbers_version_are_refused_with_the_reason(grid, tmp_path):
    from clad.bundle.pull import pull

    export_bundle(grid, tmp_path / "b")

    def edit(row):
        if row["record"]["detector"] == "hbos" and row["record"]["seed"] == 0:
            row["parts"]["libraries"]["scikit-learn"] = "0.1.0"
            return True
        if row["record"]["detector"] == "iforest" and row["record"]["seed"] == 1:
            row["parts"]["numbers"] = 0
            return True
        return False

    _rewrite(tmp_path / "b", edit)
    done = pull(str(tmp_path / "b"), tmp_path / "out")
    assert len(done.imported) == 8 and len(done.refused) == 8
    assert sum("library version: scikit-learn 0.1.0 -> " in why for why in done.refused) == 4
    assert sum("numbers-version: 0 -> 1" in why for why in done.refused) == 4
    assert {(r.detector, r.seed) for r in load_results(tmp_path / "out")} == {
        ("hbos", 1),
        ("iforest", 0),
    }


def test_a_changed_data_byte_refuses_exactly_that_datasets_rows(tmp_path):
    from clad.bundle.pull import pull
    from clad.engine.benchmark import run_spec
    from tests.bundle.test_result_key import _npz

    data = tmp_path / "data"
    data.mkdir()
    _npz(data / "one.npz"), _npz(data / "two.npz")
    datasets = [
        {"name": "clad_npz", "file": f, "data_dir": str(data), "label": f[:3]}
        for f in ("one.npz", "two.npz")
    ]
    run_spec(write_spec(tmp_path, datasets=datasets, seeds=[0, 1]), tmp_path / "grid")
    done = export_bundle(tmp_path / "grid", tmp_path / "b")
    manifest = json.loads((tmp_path / "b" / MANIFEST).read_text())
    assert [len(d["sha256"]) for d in manifest["datasets"]] == [1, 1] and done.runs == 4
    moved = tmp_path / "elsewhere"  # the same bytes in another data folder: the same computation
    moved.mkdir()
    for f in ("one.npz", "two.npz"):
        (moved / f).write_bytes((data / f).read_bytes())
    spec = write_spec(
        tmp_path,
        None,
        "moved.toml",
        datasets=[{**d, "data_dir": str(moved)} for d in datasets],
        seeds=[0, 1],
    )
    from clad.engine.spec import load_spec

    assert (
        len(pull(str(tmp_path / "b"), tmp_path / "moved", configs=load_spec(spec).configs).imported)
        == 4
    )
    _npz(data / "one.npz", shift=1e-3)
    pulled = pull(str(tmp_path / "b"), tmp_path / "out")
    assert {r.dataset for r in pulled.imported} == {"two"} and len(pulled.imported) == 2
    assert len(pulled.refused) == 2 and all(
        w.startswith("one / ") and "data bytes: " in w for w in pulled.refused
    )


@pytest.mark.slow
def test_run_from_a_bundle_computes_only_the_new_detectors_runs(grid, tmp_path):
    """Adding a detector to a bundled grid: its runs are computed, every other one is imported,
    bit-identical to the grid's own computation."""
    export_bundle(grid, tmp_path / "b")
    spec = write_spec(tmp_path, **{**GRID, "detectors": [*GRID["detectors"], {"name": "ecod"}]})
    proc = run_clad("run", spec, "--out", tmp_path / "out", "--from", tmp_path / "b", "--quiet")
    assert proc.returncode == 0, proc.stderr
    end = proc.stdout.strip().splitlines()[-1]
    assert end.startswith("16 runs imported from bundle sha256:") and ", 8 computed here" in end, (
        end
    )
    runs = load_results(tmp_path / "out")
    computed = {r.result_key["key"]: r for r in load_results(grid)}
    imported = [r for r in runs if r.origin]
    assert (
        len(runs) == 24
        and len(imported) == 16
        and {r.detector for r in runs if not r.origin} == {"ecod"}
    )
    for r in imported:
        mine = computed[r.result_key["key"]]
        assert all(r.R[m].tobytes() == mine.R[m].tobytes() for m in mine.R)
    again = run_clad("run", spec, "--out", tmp_path / "out", "--from", tmp_path / "b", "--quiet")
    assert again.returncode == 0 and ", 0 computed here" in again.stdout.strip().splitlines()[-1]


# -- sources: a folder, a git repository at a commit, a URL pinned by sha256 -----------------------
def _git(*args, cwd):
    import subprocess

    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_a_bundle_from_a_bare_git_repository_at_a_commit(grid, tmp_path):
    import subprocess

    from clad.bundle.format import BundleError
    from clad.bundle.pull import pull

    work = tmp_path / "work"
    export_bundle(grid, work / "published")
    _git("init", "-q", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-qm", "bundle", cwd=work)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
    ).stdout.strip()
    _git("clone", "-q", "--bare", str(work), str(tmp_path / "bare.git"), cwd=tmp_path)
    done = pull(f"git+{tmp_path / 'bare.git'}@{commit}#path=published", tmp_path / "out")
    assert len(done.imported) == 16 and not done.refused
    with pytest.raises(BundleError, match="full 40-digit commit"):
        pull(f"git+{tmp_path / 'bare.git'}@main", tmp_path / "never")
    with pytest.raises(BundleError, match="git checkout failed"):
        pull(f"git+{tmp_path / 'bare.git'}@{'1' * 40}", tmp_path / "never")
    assert not (tmp_path / "never").exists()


@pytest.fixture
def http_folder(tmp_path):
    """A folder served over HTTP on 127.0.0.1 (python's http.server in a thread): ``(folder, url)``."""
    import functools
    import http.server
    import threading

    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_bundle_over_http_and_file_urls_pinned_by_sha256(grid, tmp_path, http_folder):
    import hashlib

    from clad.bundle.format import BundleError
    from clad.bundle.pull import pull

    served, url = http_folder
    export_bundle(grid, served / "b.tar")
    data = (served / "b.tar").read_bytes()
    pin = hashlib.sha256(data).hexdigest()
    assert len(pull(f"{url}/b.tar#sha256={pin}", tmp_path / "out").imported) == 16
    assert len(pull((served / "b.tar").as_uri(), tmp_path / "out2", sha256=pin).imported) == 16
    (served / "cut.tar").write_bytes(data[: len(data) // 2])
    (served / "junk.tar").write_bytes(b"\0not a tar" * 100)
    for source, pinned, match in (
        (f"{url}/b.tar", "0" * 64, "does not match|expected"),
        (f"{url}/b.tar", None, "must be pinned"),
        (
            f"{url}/cut.tar",
            hashlib.sha256(data[: len(data) // 2]).hexdigest(),
            "truncated|missing|sha256",
        ),
        (
            f"{url}/junk.tar",
            hashlib.sha256((served / "junk.tar").read_bytes()).hexdigest(),
            "not a readable tar",
        ),
        (f"{url}/absent.tar", "0" * 64, "could not be downloaded"),
    ):
        with pytest.raises(BundleError, match=match):
            pull(source, tmp_path / "never", sha256=pinned)
    assert not (tmp_path / "never").exists()


@pytest.mark.slow
def test_the_cli_pull_lists_refusals_and_writes_nothing_from_a_bad_bundle(grid, tmp_path):
    export_bundle(grid, tmp_path / "b")
    (tmp_path / "b" / "runs" / "synthetic" / "hbos.jsonl").write_text("")
    proc = run_clad("pull", tmp_path / "b", "--out", tmp_path / "out")
    assert proc.returncode != 0 and "hbos.jsonl' has sha256" in proc.stderr
    assert not (tmp_path / "out").exists()
    export_bundle(grid, tmp_path / "c")
    proc = run_clad("pull", tmp_path / "c", "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("16 runs imported into ")


def test_a_new_clad_release_without_a_numbers_version_change_keeps_a_bundle_importable(
    grid, tmp_path, monkeypatch
):
    import clad.engine.config as config_module
    import clad.results.record as record_module
    from clad.bundle.pull import pull

    export_bundle(grid, tmp_path / "b")
    old_ids = {r.run_id for r in load_results(grid)}
    monkeypatch.setattr(config_module, "__version__", "99.0.0")  # the release in every run_id
    monkeypatch.setattr(record_module, "__version__", "99.0.0")
    record_module._versions.cache_clear()
    try:
        done = pull(str(tmp_path / "b"), tmp_path / "out")
    finally:
        record_module._versions.cache_clear()
    assert len(done.imported) == 16 and not done.refused
    assert (
        not {r.run_id for r in done.imported} & old_ids
    )  # run ids name the release's runs; keys did not move


def test_the_report_says_which_runs_were_imported(grid, tmp_path):
    from clad.bundle.pull import pull
    from clad.report import make_report

    export_bundle(grid, tmp_path / "b")
    done = pull(str(tmp_path / "b"), tmp_path / "out")
    html = make_report(load_results(tmp_path / "out"), tmp_path / "report").all_text()
    assert (
        f"Origin: 0 runs computed here, 16 imported from bundle sha256:{done.sha256[:12]}…" in html
    )
    assert "Origin:" not in make_report(load_results(grid), tmp_path / "here").all_text()


PLUGIN = '''
import numpy as np


class MeanDistance:
    """A detector plug-in: the distance to the training rows' mean."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X):
        self.mean_ = np.asarray(X, dtype=float).mean(axis=0)
        self.threshold_ = float(np.quantile(self.score(X), 0.95))
        return self

    def score(self, X):
        return self.scale * np.linalg.norm(np.asarray(X, dtype=float) - self.mean_, axis=1)

    def get_params(self, deep=True):
        return {"scale": self.scale}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self
'''


def test_adding_a_detector_plug_in_with_from_computes_only_its_runs(grid, tmp_path, monkeypatch):
    """A plug-in detector (an import path outside clad) added to the bundled grid: pull imports the
    16 bundled runs, run_spec then computes exactly the plug-in's 8; an edit of the plug-in changes
    only its own runs' keys."""
    from clad.bundle.pull import pull
    from clad.engine.benchmark import run_spec
    from clad.engine.spec import parse_spec

    (tmp_path / "mean_distance_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    export_bundle(grid, tmp_path / "b")
    spec = parse_spec(
        {**GRID, "detectors": [*GRID["detectors"], {"name": "mean_distance_plugin:MeanDistance"}]}
    )
    pulled = pull(str(tmp_path / "b"), tmp_path / "out", configs=spec.configs)
    done = run_spec(spec, tmp_path / "out")
    assert len(pulled.imported) == 16 and not pulled.refused
    assert done.n_resumed == 16 and done.n_computed + done.n_shared == 8 and done.n_ok == 24
    mine = [r for r in load_results(tmp_path / "out") if not r.origin]
    assert {r.detector for r in mine} == {"mean_distance_plugin:MeanDistance"}
    code = {k for r in mine for k in r.result_key["parts"]["code"]}
    assert code == {"code mean_distance_plugin"}
    export_bundle(tmp_path / "out", tmp_path / "b2")
    (tmp_path / "mean_distance_plugin.py").write_text(PLUGIN + "\n# edited\n")
    again = pull(str(tmp_path / "b2"), tmp_path / "again")
    assert len(again.imported) == 16 and len(again.refused) == 8
    assert all(
        "MeanDistance" in why and "plug-in code: code mean_distance_plugin sha256:" in why
        for why in again.refused
    )


@pytest.mark.slow
def test_a_leaderboard_of_two_bundles_with_the_changes_against_a_previous_one(grid, tmp_path):
    import csv

    from clad.bundle.format import read_bundle as read

    export_bundle(grid, tmp_path / "base")
    rows = read(tmp_path / "base").rows
    (tmp_path / "prev").mkdir()
    export_bundle(grid, tmp_path / "prev")

    def edit(
        row,
    ):  # the previous bundle: iforest computed with another scikit-learn, one value of R apart
        if row["record"]["detector"] == "iforest":
            row["parts"]["libraries"]["scikit-learn"] = "0.1.0"
            row["record"]["R"]["roc_auc"][0][0] = 0.125
            return True
        return False

    _rewrite(tmp_path / "prev", edit)
    proc = run_clad(
        "leaderboard",
        tmp_path / "base",
        tmp_path / "base",
        "-o",
        tmp_path / "site",
        "--previous",
        tmp_path / "prev",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(
        "against the previous bundle: 0 new, 0 gone, 8 moved (changes.csv)"
    )
    assert f"leaderboard of {len(rows)} runs from 2 bundles" in proc.stdout
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    text = "".join(p.read_text() for p in site.glob("*.html"))
    assert "Origin: 0 runs computed here, 16 imported from bundle sha256:" in text
    changes = list(csv.DictReader((site / "changes.csv").open()))
    assert {c["detector"] for c in changes} == {"iforest"} and all(
        "libraries changed" in c["detail"] for c in changes
    )
    assert all(
        c["detail"].endswith(
            "largest change of R " + format(abs(0.125 - r["record"]["R"]["roc_auc"][0][0]), ".6g")
        )
        for c in changes
        for r in rows
        if r["record"]["detector"] == "iforest"
        and r["record"]["seed"] == int(c["seed"])
        and r["record"]["strategy"] == c["strategy"]
        and r["record"]["dataset"] == c["dataset"]
    )
    bundles = list(csv.DictReader((site / "bundles.csv").open()))
    assert len(bundles) == 2 and bundles[0]["runs"] == "16" and bundles[0]["numbers_version"] == "1"


def test_the_standard_benchmark_spec_is_valid_and_its_card_states_its_size():
    from pathlib import Path

    from clad.engine.spec import load_spec

    folder = Path(__file__).resolve().parents[2] / "scenarios" / "standard"
    if not (folder.parents[1].parent / "shared" / "datasets").is_dir():
        pytest.skip("the shared data sets are not beside the repository")
    spec = load_spec(folder / "clad-standard-1.toml")
    card = (folder / "clad-standard-1.md").read_text()
    assert f"**Size.** {len(spec.configs)} runs" in card and spec.name == "clad-standard-1"


@pytest.fixture(scope="module")
def plugin_bundle(tmp_path_factory):
    """A bundle of a detector plug-in's 8 runs on the bundled grid; then the plug-in's code is gone."""
    import importlib
    import sys

    from clad.engine.benchmark import run_spec
    from clad.engine.spec import parse_spec

    folder = tmp_path_factory.mktemp("plugin")
    (folder / "gone_plugin.py").write_text(PLUGIN)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        spec = parse_spec({**GRID, "detectors": [{"name": "gone_plugin:MeanDistance"}]})
        run_spec(spec, folder / "out")
        export_bundle(folder / "out", folder / "b")
    (folder / "gone_plugin.py").unlink()
    sys.modules.pop("gone_plugin", None)
    importlib.invalidate_caches()
    return folder / "b"


@pytest.mark.slow
def test_runs_whose_plug_in_code_is_missing_are_importable_only_as_unverified(
    plugin_bundle, tmp_path
):
    from clad.bundle.format import UNVERIFIED, unverified
    from clad.bundle.pull import pull
    from clad.report import make_report

    refused = pull(str(plugin_bundle), tmp_path / "out")
    assert not refused.imported and len(refused.refused) == 8
    assert all(
        "plug-in code: code gone_plugin sha256:" in why
        and "-> missing" in why
        and why.endswith("importable as unverified (--unverified)")
        for why in refused.refused
    )
    done = pull(str(plugin_bundle), tmp_path / "out", unverified=True)
    assert len(done.imported) == 8 and not done.refused
    runs = load_results(tmp_path / "out")
    assert len(runs) == 8 and all(unverified(r) for r in runs)
    assert {r.scenario for r in runs} == {"concept_incremental" + UNVERIFIED}
    assert {r.origin for r in runs} == {f"bundle sha256:{done.sha256}{UNVERIFIED}"}
    assert {r.result_key["key"] for r in runs} == {
        r["key"] for r in read_bundle(plugin_bundle).rows
    }
    left = export_bundle(tmp_path / "out", tmp_path / "again")
    assert left.runs == 0 and all("imported unverified" in why for why in left.left_out)
    # the report of verified and unverified runs together: a group of its own in every table
    html = make_report(runs, tmp_path / "report").all_text()
    assert "concept_incremental (unverified)" in html
    # and the details page says of each imported run whether it was verified
    assert re.search(r"bundle sha256:[0-9a-f]{12} \(unverified\)", html)


@pytest.mark.slow
def test_a_leaderboard_keeps_unverified_runs_apart(grid, plugin_bundle, tmp_path):
    import csv

    from clad.bundle.leaderboard import leaderboard

    export_bundle(grid, tmp_path / "base")
    done = leaderboard([str(tmp_path / "base"), str(plugin_bundle)], tmp_path / "site")
    assert done.runs == 24 and done.unverified == 8
    bundles = list(csv.DictReader((tmp_path / "site" / "bundles.csv").open()))
    assert [b["unverified runs"] for b in bundles] == ["0", "8"]
    table = list(csv.DictReader((tmp_path / "site" / "leaderboard.csv").open()))
    scenario = {row["detector"]: row["scenario"] for row in table}
    assert set(scenario.values()) == {"concept_incremental", "concept_incremental (unverified)"}
    assert all(
        (s == "concept_incremental (unverified)") == (d == "gone_plugin:MeanDistance")
        for d, s in scenario.items()
    )
    # the headline ranks each scenario group apart: the verified group names no unverified run
    import html
    import re

    page = re.sub(r"<[^>]+>", " ", html.unescape((tmp_path / "site" / "index.html").read_text()))
    groups = re.findall(
        r"(concept_incremental(?: \(unverified\))? \(\d blocks[^\n]*?)(?=concept_incremental|Do the statistics)",
        re.sub(r"\s+", " ", page),
    )
    verified = [g for g in groups if not g.startswith("concept_incremental (unverified)")]
    apart = [g for g in groups if g.startswith("concept_incremental (unverified)")]
    assert verified and apart, groups
    assert all("gone_plugin" not in g for g in verified) and all("gone_plugin" in g for g in apart)


def test_a_derived_parquet_index_beside_the_manifest_leaves_the_bundle_unchanged(grid, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from clad.bundle.index import INDEX, write_index

    done = export_bundle(grid, tmp_path / "b")
    frame = pd.read_parquet(write_index(tmp_path / "b"))
    bundle = read_bundle(tmp_path / "b", sha256=done.sha256)  # still the same bundle
    assert list(frame["key"]) == [r["key"] for r in bundle.rows]
    assert set(frame["bundle_sha256"]) == {done.sha256}
    assert list(frame["roc_auc/final_average"]) == [
        r["record"]["metrics"]["roc_auc"]["final_average"] for r in bundle.rows
    ]
    assert (tmp_path / "b" / INDEX).is_file()
    export_bundle(grid, tmp_path / "b.tar")
    with pytest.raises(Exception, match="not a bundle folder"):
        write_index(tmp_path / "b.tar")
