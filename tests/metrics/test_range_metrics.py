"""The range metrics of time series (clad.metrics.ranges): hand-computed cases on short series,
undefined cases, and TSB-AD's own values on seeded random series (stored by
benchmarks/tsb_ad_reference.py; TSB-AD itself is not needed here)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from clad.metrics import ranges as rm
from clad.metrics import vus as vus_module
from tests.range_series import (
    DEFECT_CASES,
    EDGE_METRICS,
    EDGE_PARAMS,
    PARAMS,
    make_edge_series,
    make_series,
    threshold_of,
)

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "tsb_ad_reference.json"
A = np.array


# -- hand-computed cases ------------------------------------------------------------------------

# a range at the start (points 0-1) and a one-point range (8); flags inside the first range (1)
# and on the point just before the second (7), touching it without overlap
Y_START = A([1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0])
P_START = A([0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0])


def test_pa_f1_by_hand():
    # first range adjusted to 2 true positives, the second missed (1 false negative), 1 false positive
    assert rm.pa_f1(Y_START, P_START) == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    # a range at the end, flagged on its last point only: wholly adjusted
    assert rm.pa_f1(A([0] * 10 + [1, 1]), A([0] * 11 + [1])) == 1.0
    # flagging everything: precision 3/12, recall 1
    assert rm.pa_f1(Y_START, np.ones(12)) == pytest.approx(2 * 3 / (2 * 3 + 9))


def test_event_f1_by_hand():
    # one range of two hit (recall 1/2), one flag of two on an anomaly (precision 1/2)
    assert rm.event_f1(Y_START, P_START) == pytest.approx(0.5)
    # the one-point range at the very end is hit by a flag on it
    assert rm.event_f1(A([0] * 11 + [1]), A([0] * 11 + [1])) == 1.0
    assert rm.event_f1(Y_START, np.zeros(12)) == 0.0


def test_range_f1_by_hand():
    # recall: range 1 = 0.2 * 1 + 0.8 * (1/2 overlap, one flagged range), range 2 = 0 -> 0.3;
    # precision: flagged range [1] all anomalous = 1, [7] = 0 -> 0.5
    recall, precision = (0.2 + 0.8 * 0.5) / 2, 0.5
    assert rm.range_f1(Y_START, P_START) == pytest.approx(
        2 * precision * recall / (precision + recall)
    )
    # alpha = 1: recall is existence only (1/2)
    assert rm.range_f1(Y_START, P_START, alpha=1.0) == pytest.approx(2 * 0.5 * 0.5 / 1.0)
    # a range split by two flagged ranges: cardinality factor 1/2 on the overlap 4/6
    y, p = A([0, 1, 1, 1, 1, 1, 1, 0, 0, 0]), A([0, 1, 1, 0, 0, 1, 1, 0, 0, 0])
    recall = 0.2 + 0.8 * (4 / 6) * 0.5
    assert rm.range_f1(y, p) == pytest.approx(2 * recall / (1 + recall))
    with pytest.raises(ValueError, match="alpha"):
        rm.range_f1(y, p, alpha=1.5)


def test_affiliation_f1_by_hand():
    # zones: [0, 5] for the range [0, 2) and [5, 12] for [8, 9) (midpoint of 2 and 8)
    # precision: the flag [1, 2) lies in its range (1); the flag [7, 8) at distance d in [0, 1] from
    # [8, 9) survives with (3 - d + 3 - d) / 7, mean 5/7 -> (1 + 5/7) / 2
    precision = (1 + 5 / 7) / 2
    # recall, zone 1: y in [0, .5] -> 1 - 1/5, y in [.5, 1] -> 1 - (2 - 2y)/5 (integral .45), [1, 2] -> 1
    # zone 2: y in [8, 9] -> 1 - (2y - 16)/7, integral 6/7
    recall = ((0.4 + 0.45 + 1) / 2 + 6 / 7) / 2
    assert rm.affiliation_f1(Y_START, P_START) == pytest.approx(
        2 * precision * recall / (precision + recall)
    )
    assert rm.affiliation_f1(Y_START, Y_START) == pytest.approx(1.0)
    assert rm.affiliation_f1(Y_START, np.zeros(12)) == 0.0


def test_vus_by_hand():
    # range [4, 5]; the highest score is on point 3, just before it
    y = A([0, 0, 0, 0, 1, 1, 0, 0, 0, 0])
    s = A([0, 0, 0, 1, 0.5, 0.5, 0, 0, 0, 0.0])
    # buffer width 0, 10 thresholds (1, .5, .5, 0 x 7): ROC (0,0) (1/8,0) (1/8,1) ... (1,1) -> 7/8;
    # AP: recall jumps to 1 at precision 2/3
    roc, pr = rm.vus(y, s, window=0, thresholds=10)
    assert (roc, pr) == (pytest.approx(7 / 8), pytest.approx(2 / 3))
    # widths 0, 1 (no buffer) and 2 (buffer points 3 and 6 weigh sqrt(1/2))
    b = math.sqrt(0.5)
    p_new = 2 + b / 2
    tpr1, fpr1, prec1 = b / p_new, (1 - b) / (10 - p_new), b
    prec2 = (2 + b) / 3
    fpr3 = (10 - 2 - 2 * b) / (10 - (2 + b))
    assert fpr3 < 1
    roc2 = fpr1 * tpr1 / 2 + (1 - fpr1)
    pr2 = tpr1 * prec1 + (1 - tpr1) * prec2
    roc, pr = rm.vus(y, s, window=2, thresholds=10)
    assert roc == pytest.approx((2 * 7 / 8 + roc2) / 3)
    assert pr == pytest.approx((2 * 2 / 3 + pr2) / 3)
    assert rm.vus_pr(y, s, 2, 10) == pr and rm.vus_roc(y, s, 2, 10) == roc
    # perfect scores: 1 at every width
    assert rm.vus(y, y.astype(float), window=4, thresholds=10) == (
        pytest.approx(1.0),
        pytest.approx(1.0),
    )


@pytest.mark.parametrize("width", [7, 50, 301, 5000])
def test_buffer_weights_equal_every_range_buffer_summed_and_clipped(width):
    """VUS's soft labels as TSB-AD builds them (each range adds sqrt(1 - d / w) to the normal points
    within w // 2 of it, the sum clipped to 1) equal the weights read from a point's two nearest
    ranges: two buffers always sum past 1. Dense ranges, so buffers overlap many times over."""
    rng = np.random.default_rng(width)
    y = rng.random(1500) < 0.04
    ranges, half = rm.anomaly_ranges(y), width // 2
    soft = np.zeros(y.size)
    for start, end in ranges:
        for d in range(1, half + 1):
            for point in (start - d, end + d):
                if 0 <= point < y.size:
                    soft[point] += math.sqrt(1 - d / width)
    soft = np.where(y, 0.0, np.minimum(soft, 1.0))
    points, nearest, second = vus_module._buffer_distances(y, ranges, half)
    weight = np.where(second <= half, 1.0, np.sqrt(1 - nearest / width))
    assert np.array_equal(soft[points], weight)
    assert not np.delete(soft, points).any()


def test_two_ranges_one_point_apart_under_one_flagged_range():
    # true ranges [1, 2] and [4, 5]; one flagged range [1, 5] covers both and the point between
    y, p = A([0, 1, 1, 0, 1, 1, 0, 0, 0, 0]), A([0, 1, 1, 1, 1, 1, 0, 0, 0, 0])
    # range F1: each true range wholly overlapped by one flagged range (recall 1); the flagged range
    # is 4/5 anomalous and overlaps two true ranges (cardinality 1/2): precision 0.4
    assert rm.range_f1(y, p) == pytest.approx(2 * 0.4 / 1.4)
    # event F1: both ranges hit, 4 of 5 flags on anomalies; PA-F1: 4 true positives, 1 false
    assert rm.event_f1(y, p) == pytest.approx(2 * 0.8 / 1.8)
    assert rm.pa_f1(y, p) == pytest.approx(8 / 9)


def test_all_anomalous():
    y, p = np.ones(10, dtype=int), np.zeros(10, dtype=int)
    p[3] = 1
    assert rm.pa_f1(y, p) == 1.0 and rm.event_f1(y, p) == 1.0
    recall = 0.2 + 0.8 * 0.1
    assert rm.range_f1(y, p) == pytest.approx(2 * recall / (1 + recall))
    # one zone [0, 10]; recall integral 1.05 + 1.275 + 1 + 2.1 + 1.2 over 10
    recall = 6.625 / 10
    assert rm.affiliation_f1(y, p) == pytest.approx(2 * recall / (1 + recall))
    with pytest.warns(rm.RangeMetricWarning, match="no normal point"):
        assert math.isnan(rm.vus_pr(y, np.arange(10.0)))


@pytest.mark.parametrize("fn", [rm.pa_f1, rm.event_f1, rm.range_f1, rm.affiliation_f1])
def test_no_anomaly_is_nan_with_a_reason(fn):
    with pytest.warns(rm.RangeMetricWarning, match="no anomaly"):
        assert math.isnan(fn(np.zeros(12), np.ones(12)))


def test_no_anomaly_vus_and_oracle():
    with pytest.warns(rm.RangeMetricWarning, match="no anomaly"):
        assert math.isnan(rm.vus_roc(np.zeros(12), np.arange(12.0)))
    with pytest.warns(rm.RangeMetricWarning, match="no anomaly"):
        assert math.isnan(rm.oracle("range_f1", np.zeros(12), np.arange(12.0)))


def test_oracle_takes_the_best_threshold():
    y = A([0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    s = A([0.1, 0.2, 0.9, 0.8, 0.1, 0.7, 0.3, 0.1, 0.1, 0.2, 0.1, 0.1])
    grid = rm.oracle_thresholds(s, 20)
    for name, fn in rm.THRESHOLD_METRICS.items():
        best = max(fn(y, (s > t).astype(int)) for t in grid)
        assert rm.oracle(name, y, s, n_thresholds=20) == pytest.approx(best)
    assert rm.oracle("event_f1", y, s, n_thresholds=20) == 1.0


def test_chance_levels():
    y = A([0, 0, 0, 1, 1, 0, 0, 0, 0, 0])
    # flagging every point: precision 2/10, recall 1
    assert rm.chance_level("pa_f1", y) == pytest.approx(2 * 0.2 / 1.2)
    assert rm.chance_level("event_f1_oracle", y) == pytest.approx(2 * 0.2 / 1.2)
    # range F1: one flagged range covering all, 2/10 of it anomalous; recall 1
    assert rm.chance_level("range_f1", y) == pytest.approx(2 * 0.2 / 1.2)
    # one threshold flags every point: without buffer ROC (0,0) (1,1) (1,1) -> 0.5, AP = the anomaly rate
    assert rm.chance_level("vus_roc", y, window=0) == pytest.approx(0.5)
    assert rm.chance_level("vus_pr", y, window=0) == pytest.approx(0.2)
    # with buffers, the buffered normal points count partly as true positives: above 0.5
    assert rm.chance_level("vus_roc", y) > 0.5
    with pytest.raises(ValueError, match="chance_level"):
        rm.chance_level("roc", y)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="predictions"):
        rm.pa_f1(A([0, 1, 0]), A([0, 2, 0]))
    with pytest.raises(ValueError, match="one per point"):
        rm.event_f1(A([0, 1, 0]), A([0, 1]))
    with pytest.raises(ValueError, match="finite"):
        rm.vus_pr(A([0, 1, 0]), A([0, np.nan, 0]))
    with pytest.raises(ValueError, match="window"):
        rm.vus_pr(A([0, 1, 0]), A([0, 1, 0.0]), window=-1)
    with pytest.raises(ValueError, match="metric"):
        rm.oracle("f1", A([0, 1, 0]), A([0, 1, 0.0]))


# -- TSB-AD's values ------------------------------------------------------------------------------


def _reference() -> dict:
    doc = json.loads(REFERENCE.read_text())
    assert doc["params"] == PARAMS and doc["edge_params"] == EDGE_PARAMS, (
        "tests/range_series.py changed: run benchmarks/tsb_ad_reference.py again"
    )
    return doc


def _clad_values(y, scores, window) -> dict:
    roc, pr = rm.vus(y, scores, window, 250)
    pred = (scores > threshold_of(scores)).astype(int)
    out = {"vus_roc": roc, "vus_pr": pr}
    for name, fn in rm.THRESHOLD_METRICS.items():
        out[f"{name}_oracle"] = rm.oracle(name, y, scores)
        out[name] = fn(y, pred)
    return out


def _check_series(entry: dict) -> float:
    y, scores, window = make_series(entry["seed"])
    assert (y.size, window) == (entry["n"], entry["window"])
    ours = _clad_values(y, scores, window)
    assert set(ours) == set(entry["values"])
    return max(abs(ours[k] - v) for k, v in entry["values"].items())


def test_reference_covers_what_was_asked():
    doc = _reference()
    assert len(doc["series"]) >= 30
    assert len({s["window"] for s in doc["series"]}) >= 3
    sizes = [s["n"] for s in doc["series"]]
    assert min(sizes) >= 400 and max(sizes) <= 8000


def test_equal_to_tsb_ad_on_small_series():
    doc = _reference()
    small = sorted(doc["series"], key=lambda s: s["n"])[:3]
    assert max(_check_series(s) for s in small) <= 1e-9


@pytest.mark.slow
def test_equal_to_tsb_ad_on_every_series():
    doc = _reference()
    assert max(_check_series(s) for s in doc["series"]) <= 1e-9


def test_equal_to_tsb_ad_with_ranges_at_both_ends():
    # VUS, range F1 and affiliation F1 agree with TSB-AD also where ranges touch the series' ends
    for entry in _reference()["edge_series"]:
        y, scores, window = make_edge_series(entry["seed"])
        assert y[0] == 1 and y[-1] == 1 and (y.size, window) == (entry["n"], entry["window"])
        ours = _clad_values(y, scores, window)
        assert set(entry["values"]) == set(EDGE_METRICS)
        assert max(abs(ours[k] - v) for k, v in entry["values"].items()) <= 1e-9


def test_tsb_ad_defects_differ_as_documented():
    doc = _reference()["defect_cases"]
    # a range from the first point, flagged at point 1: clad adjusts points 0-2 (TP 3 + 2, FN 0,
    # FP 0 -> 1.0); TSB-AD's walk back stops before index 0 (TP 4, FN 1)
    y, pred = map(np.array, DEFECT_CASES["pa_f1_first_point"])
    assert rm.pa_f1(y, pred) == 1.0
    assert doc["pa_f1_first_point"] == pytest.approx(2 * 4 / (2 * 4 + 1))
    # a one-point range at the last point, flagged: clad counts it hit (recall 1, precision 1);
    # TSB-AD's event ends one point before, so it is missed (recall 1/2)
    y, pred = map(np.array, DEFECT_CASES["event_f1_last_point"])
    assert rm.event_f1(y, pred) == 1.0
    assert doc["event_f1_last_point"] == pytest.approx(2 * 0.5 * 1 / 1.5)
