"""The standard benchmark's published bundle (``scenarios/standard/clad-standard-1.bundle``): it is
the bundle its card pins (manifest and every shard by sha256, every row's key its parts'), it holds
every run of the spec, and a stratified sample of it recomputed here agrees bit for bit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clad.bundle.format import MANIFEST, read_bundle
from tests.runner_helpers import run_clad

STANDARD = Path(__file__).resolve().parents[2] / "scenarios" / "standard"
BUNDLE = STANDARD / "clad-standard-1.bundle"
DATA = STANDARD.parents[1].parent / "shared" / "datasets"


def _pinned() -> str:
    """The bundle's sha256 as its card states it."""
    card = (STANDARD / "clad-standard-1.md").read_text()
    found = re.search(r"published bundle[^.]*?has sha256\s+([0-9a-f]{64})", card, re.S)
    assert found, "the card pins its published bundle by sha256"
    return found.group(1)


def test_the_published_bundle_is_the_one_its_card_pins():
    bundle = read_bundle(BUNDLE, sha256=_pinned())  # every shard's sha256 and every row's key
    card = (STANDARD / "clad-standard-1.md").read_text()
    assert f"**Size.** {len(bundle.rows)} runs" in card
    shards = bundle.manifest["shards"]
    assert sum(s["runs"] for s in shards) == len(bundle.rows) == bundle.manifest["runs"]
    assert {(s["dataset"], s["detector"]) for s in shards} == {
        (r["record"]["dataset"], r["record"]["detector"]) for r in bundle.rows
    }
    size = sum(p.stat().st_size for p in BUNDLE.rglob("*") if p.is_file())
    assert f"{size / 1e6:.1f} MB" in card and (BUNDLE / MANIFEST).is_file()


@pytest.mark.slow
def test_the_published_bundle_holds_every_run_of_the_spec():
    from clad.engine.config import canonical
    from clad.engine.result_key import canonical_config
    from clad.engine.spec import load_spec

    if not DATA.is_dir():
        pytest.skip("the shared data sets are not beside the repository")
    spec = load_spec(STANDARD / "clad-standard-1.toml")
    held = {canonical(canonical_config(r["config"])) for r in read_bundle(BUNDLE).rows}
    wanted = {canonical(canonical_config(c.to_dict())) for c in spec.configs}
    assert wanted == held


@pytest.mark.slow
def test_a_stratified_sample_of_the_published_bundle_recomputes_bit_for_bit():
    """``clad verify-bundle --sample 3``: each sampled run computed here again gives the bundle's R,
    bit for bit (skipped where this machine's data or libraries make them other computations)."""
    if not DATA.is_dir():
        pytest.skip("the shared data sets are not beside the repository")
    proc = run_clad(
        "verify-bundle", BUNDLE, "--sample", "3", "--seed", "1", "--sha256", _pinned(), timeout=120
    )
    lines = proc.stdout.splitlines()
    if "bundle not verified (no sampled run could be recomputed here)" in lines:
        pytest.skip("not the same computations here: " + "; ".join(lines[:3]))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ", 0 disagree, " in proc.stdout and lines[-1] == "bundle verified"
    if "3 of 840 runs recomputed (bit for bit): 3 agree" not in proc.stdout:
        pytest.skip("some sampled runs are other computations here: " + "; ".join(lines[:3]))
