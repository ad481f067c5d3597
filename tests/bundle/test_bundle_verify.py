"""clad verify-bundle: a stratified sample recomputed, and how often an altered bundle is caught."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from clad.bundle.format import Bundle, export_bundle, read_bundle
from clad.bundle.verify import catch_probability, compare_row, recompute, stratified_sample, verify
from tests.runner_helpers import run_clad, synthetic, write_spec


def _rows(strata: dict) -> list[dict]:
    return [
        {"record": {"dataset": d, "detector": det}}
        for (d, det), n in strata.items()
        for _ in range(n)
    ]


def test_the_sample_gives_each_dataset_and_detector_its_share():
    rows = _rows({("a", "x"): 50, ("a", "y"): 30, ("b", "x"): 20})
    picked = stratified_sample(rows, 10, seed=3)
    got = {}
    for i in picked:
        key = (rows[i]["record"]["dataset"], rows[i]["record"]["detector"])
        got[key] = got.get(key, 0) + 1
    assert got == {("a", "x"): 5, ("a", "y"): 3, ("b", "x"): 2}
    assert picked == stratified_sample(rows, 10, seed=3) != stratified_sample(rows, 10, seed=4)
    assert len(set(picked)) == 10
    # a small stratum still gets one run while the sample allows it
    few = stratified_sample(_rows({("a", "x"): 98, ("b", "x"): 2}), 3, seed=0)
    assert sum(i >= 98 for i in few) == 1 and len(few) == 3
    assert stratified_sample(rows, 500, seed=0) == list(range(100))


def test_the_catch_probability_is_hypergeometric():
    # one altered run of 20, 5 sampled: caught when it is one of the 5
    assert catch_probability(20, 5, 0.05) == pytest.approx(5 / 20)
    # 5 altered of 100, 10 sampled: missed when all 10 come from the 95 others
    missed = math.prod((95 - i) / (100 - i) for i in range(10))
    assert catch_probability(100, 10, 0.05) == pytest.approx(1 - missed)
    assert catch_probability(100, 96, 0.05) == 1.0


def test_compare_row_is_bit_for_bit_or_within_a_tolerance():
    row = {"record": {"R": {"roc_auc": [[0.5, None], [0.25, 0.75]]}}}
    here = {"roc_auc": np.array([[0.5, np.nan], [0.25, 0.75]])}
    assert compare_row(row, here) == []
    near = {"roc_auc": np.array([[np.nextafter(0.5, 1), np.nan], [0.25, 0.75]])}
    assert compare_row(row, near) == [f"roc_auc[0, 0]: 0.5 != {float(np.nextafter(0.5, 1))!r}"]
    assert compare_row(row, near, tolerance=1e-12) == []
    assert compare_row(row, {"roc_auc": np.array([[0.5, 0.5], [0.25, 0.75]])}) == [
        "roc_auc[0, 1]: nan != 0.5"
    ]


@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory):
    from clad.engine.benchmark import run_spec

    folder = tmp_path_factory.mktemp("verify")
    run_spec(
        write_spec(folder, seeds=[0, 1, 2], detectors=[{"name": "hbos"}, {"name": "ecod"}]),
        folder / "out",
    )
    export_bundle(folder / "out", folder / "b")
    return folder / "b"


def test_a_faithful_bundle_verifies_and_an_altered_run_is_caught(small_bundle):
    bundle = read_bundle(small_bundle)
    verdict = verify(bundle, 6, seed=0)
    assert verdict.ok and verdict.agreed == 6 and verdict.sampled == 6 and not verdict.unchecked
    rows = copy.deepcopy(list(bundle.rows))
    rows[2]["record"]["R"]["roc_auc"][0][0] += 0.01
    altered = verify(Bundle(bundle.manifest, tuple(rows), bundle.sha256), 6, seed=0)
    assert (
        altered.rejected and len(altered.disagreed) == 1 and "roc_auc[0, 0]" in altered.disagreed[0]
    )


def test_a_run_of_another_library_version_is_not_checked_here(small_bundle):
    from clad.engine.result_key import canonical_config, key_of

    bundle = read_bundle(small_bundle)
    row = copy.deepcopy(bundle.rows[0])
    row["parts"]["libraries"]["pyod"] = "0.0.1"
    row["key"] = key_of({**row["parts"], "config": canonical_config(row["config"])})
    R, why = recompute(row)
    assert R is None and why.startswith(
        "not the same computation here: library version: pyod 0.0.1 -> "
    )


@pytest.mark.slow
def test_the_cli_prints_the_verdict_and_the_catch_probabilities(small_bundle):
    proc = run_clad("verify-bundle", small_bundle, "--sample", "4", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert (
        lines[-3] == "4 of 6 runs recomputed (bit for bit): 4 agree, 0 disagree, 0 not checked here"
    )
    p1, p5 = catch_probability(6, 4, 0.01), catch_probability(6, 4, 0.05)
    assert lines[-2] == (
        f"a sample of 4: 1% of the runs altered: caught with probability {p1:.4f}, "
        f"5% of the runs altered: caught with probability {p5:.4f}"
    )
    assert lines[-1] == "bundle verified"


@pytest.mark.slow
def test_five_percent_altered_runs_are_caught_by_a_sample_of_100(tmp_path):
    """200 runs, 10 of them altered by 0.01 in one cell: --sample 100 rejects in at least 99 of 100
    seeded trials; unaltered, never. Every run is recomputed once; the trials reuse it."""
    from clad.engine.benchmark import run_spec

    grid = dict(
        seeds=list(range(25)),
        strategies=["naive", "cumulative"],
        detectors=[{"name": "hbos"}, {"name": "ecod"}],
        datasets=[synthetic(), synthetic(n_features=4, label="synthetic4")],
    )
    run_spec(write_spec(tmp_path, **grid), tmp_path / "out")
    bundle = read_bundle(export_bundle(tmp_path / "out", tmp_path / "b").path)
    assert len(bundle.rows) == 200
    here = {row["key"]: recompute(row) for row in bundle.rows}
    assert all(R is not None for R, _ in here.values())
    again = lambda row: here[row["key"]]  # noqa: E731 - the one recomputation of every run
    rejected = clean_rejected = 0
    for trial in range(100):
        rng = np.random.default_rng(1000 + trial)
        rows = copy.deepcopy(list(bundle.rows))
        for i in rng.choice(len(rows), size=10, replace=False):
            R = rows[i]["record"]["R"]["roc_auc"]
            cells = [
                (a, b) for a, line in enumerate(R) for b, v in enumerate(line) if v is not None
            ]
            a, b = cells[rng.integers(len(cells))]
            R[a][b] += 0.01 if R[a][b] <= 0.99 else -0.01
        rejected += verify(
            Bundle(bundle.manifest, tuple(rows), bundle.sha256), 100, trial, recomputed=again
        ).rejected
        clean_rejected += verify(bundle, 100, trial, recomputed=again).rejected
    assert rejected >= 99 and clean_rejected == 0
    assert catch_probability(200, 100, 0.05) > 0.999
