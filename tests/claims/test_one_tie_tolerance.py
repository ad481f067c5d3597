"""One tie tolerance for every test: float noise (A = B + 1e-13) is never ranked or counted as a
difference, by the Friedman and Nemenyi ranks as by the Wilcoxon signed-rank test."""

import numpy as np
import pandas as pd

from clad.report.exact import TIE_TOLERANCE, tied_ranks
from clad.report.stats import compare_methods, comparison_verdict


def _noise_scores(n=15, seed=0):
    rng = np.random.default_rng(seed)
    b = rng.uniform(0.5, 0.9, size=n)
    return pd.DataFrame({"A": b + 1e-13, "B": b, "C": b - 0.2 - rng.uniform(0, 0.05, size=n)})


def test_float_noise_is_a_tie_for_the_ranks_of_every_test():
    c = compare_methods(_noise_scores(), by="detector")
    v = comparison_verdict(c)
    assert c.average_ranks["A"] == c.average_ranks["B"] == 1.5
    assert c.nemenyi.loc["A", "B"] == 1.0 and c.wilcoxon_holm.loc["A", "B"] == 1.0
    assert ("A", "B") not in set(v.differing)
    assert {("A", "C"), ("B", "C")} <= set(v.differing)  # the real differences are still found


def test_tied_ranks_merges_within_the_tolerance_only():
    assert tied_ranks([[0.5, 0.5 + 1e-13, 0.7]]).tolist() == [[1.5, 1.5, 3.0]]
    assert tied_ranks([[0.5, 0.5 + 1e-9, 0.7]]).tolist() == [[1.0, 2.0, 3.0]]
    assert tied_ranks([[1000.0, 1000.0 + 1e-10, 1.0]]).tolist() == [
        [2.5, 2.5, 1.0]
    ]  # relative to the block
    assert np.isnan(tied_ranks([[0.5, np.nan]])).all()
    assert TIE_TOLERANCE == 1e-12
