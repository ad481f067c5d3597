"""Nothing hung, no unbounded memory: every size a spec implies is counted before a run (R's
evaluations, the range metrics' parameters, the concept orders), the range metrics' memory stays
near a fixed budget whatever the buffer width, and the exact Friedman test never holds k!
arrangements of one block at once. Memory is measured with tracemalloc (numpy's allocations are
traced), never timed."""

import tracemalloc

import numpy as np
import pytest

from clad.engine.spec import parse_spec
from clad.errors import SpecError
from clad.metrics import ranges, vus
from clad.report.exact import friedman_test

from tests.runner_helpers import small_spec, synthetic


def _peak_mb(fn, *args, **kwargs):
    tracemalloc.start()
    try:
        value = fn(*args, **kwargs)
        return value, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def test_r_evaluations_are_counted_with_the_other_sizes():
    with pytest.raises(
        SpecError,
        match=r"n_concepts: 20,000 training steps x 20,000 test concepts = 400,000,000 "
        r"evaluations of R per run, more than max_evaluations = 10,000",
    ):
        parse_spec(
            small_spec(datasets=[synthetic(n_concepts=20000, n_train=2, n_test=2, n_features=1)])
        )
    # lifted by the key the message names
    spec = parse_spec(
        small_spec(
            max_evaluations=400_000_000,
            datasets=[synthetic(n_concepts=20000, n_train=2, n_test=2, n_features=1)],
        )
    )
    assert len(spec) == 1


@pytest.mark.parametrize(
    "params,words",
    [
        ({"vus_pr": {"window": 20000}}, "window=20000; expected an integer from 0 to 5,000"),
        ({"vus_pr": {"window": 10**9}}, "expected an integer from 0 to 5,000"),
        (
            {"vus_roc": {"thresholds": 10**9}},
            "thresholds=1000000000; expected an integer from 2 to 10,000",
        ),
        (
            {"pa_f1_oracle": {"n_thresholds": 10**9}},
            "n_thresholds=1000000000; expected an integer from 1 to 10,000",
        ),
    ],
)
def test_range_metric_parameters_have_upper_bounds_at_spec_time(params, words):
    metric = next(iter(params))
    with pytest.raises(SpecError, match=words):
        parse_spec(small_spec(base_metrics=[metric], base_metric_params=params))
    with pytest.raises(ValueError, match="expected an integer from"):
        if metric == "pa_f1_oracle":
            ranges.oracle("pa_f1", [0, 1, 0], [0.1, 0.9, 0.2], n_thresholds=10**9)
        else:
            ranges.vus(np.r_[0, 1, 0], np.r_[0.1, 0.9, 0.2], **params[metric])


def _many_ranges(n=20_000, n_ranges=100, seed=0):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=int)
    for a in np.linspace(0, n - 100, n_ranges).astype(int):
        y[a : a + 20] = 1
    return y, rng.normal(size=n) + y


@pytest.mark.slow
def test_vus_memory_does_not_grow_with_ranges_times_window():
    """Before, the buffer weights were tiled per range: window=1000 on 20,000 points with 100
    ranges asked for (1001 x 100,000) doubles twice, 1.6 GB. Now a block of widths at a time."""
    y, s = _many_ranges()
    value, peak = _peak_mb(ranges.vus_pr, y, s, window=1000)
    assert 0 < value <= 1
    assert peak < 150, (
        f"vus_pr(window=1000) on 20,000 points with 100 ranges peaked at {peak:.0f} MB"
    )


def test_vus_memory_on_a_long_series_with_the_default_window():
    y, s = _many_ranges(n=200_000, n_ranges=50)
    value, peak = _peak_mb(ranges.vus_pr, y, s)
    assert 0 < value <= 1
    # the series itself (labels, scores, their sorted copies and ranks) is a few MB per 100,000 points
    assert peak < 120, f"vus_pr on 200,000 points peaked at {peak:.0f} MB"


def test_vus_in_blocks_equals_vus_at_once():
    """The block-by-block computation gives the values of the whole-array one (checked on a case
    that needs several blocks against a copy computed with the whole array: the same formula)."""
    y, s = _many_ranges(n=3000, n_ranges=30, seed=1)
    old = vus.CHUNK_CELLS
    try:
        vus.CHUNK_CELLS = 1 << 40  # one block
        whole = vus.vus_curves(y.astype(bool), s, 300, 250)
        vus.CHUNK_CELLS = 1 << 12  # many blocks
        blocks = vus.vus_curves(y.astype(bool), s, 300, 250)
    finally:
        vus.CHUNK_CELLS = old
    np.testing.assert_allclose(whole[0], blocks[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(whole[1], blocks[1], rtol=0, atol=1e-14)


def test_exact_friedman_on_one_block_of_eleven_methods_holds_no_arrangements():
    ranks = np.arange(1.0, 12.0)[None, :]  # 11! = 39,916,800 arrangements, 3.5 GB if held
    result, peak = _peak_mb(friedman_test, ranks)
    assert result.method == "exact" and result.pvalue == 1.0
    assert peak < 50, f"friedman_test on 1 x 11 peaked at {peak:.0f} MB"


def test_exact_friedman_counts_in_bounded_chunks_and_keeps_its_values():
    ranks = np.array(
        [[1, 2, 3, 4, 5, 6, 7], [2, 1, 3, 5, 4, 7, 6]], dtype=float
    )  # (7!)^2 = 25,401,600
    result, peak = _peak_mb(friedman_test, ranks)
    assert result.method == "exact"
    assert peak < 300, f"friedman_test on 2 x 7 peaked at {peak:.0f} MB"
    # the same p-value as counting every arrangement of the second block against the first
    import itertools

    from clad.report.exact import friedman_statistic

    observed = friedman_statistic(ranks)
    perms = list(itertools.permutations(range(7)))
    stats = [friedman_statistic(np.array([ranks[0], ranks[1][list(p)]])) for p in perms]
    assert result.pvalue == pytest.approx(np.mean(np.array(stats) >= observed - 1e-9), abs=1e-12)


def test_a_million_random_orders_are_refused_before_any_is_drawn():
    with pytest.raises(
        SpecError,
        match=r"orders.random: 1,000,000 orders, each at least one run: more than "
        r"max_runs = 100,000",
    ):
        parse_spec(small_spec(orders={"random": 1_000_000}))
