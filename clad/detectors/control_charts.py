"""Multivariate control charts: Hotelling's T² and the PCA-based T² + Q (squared prediction error).

:class:`HotellingT2` (``hotelling_t2``) learns the mean and covariance of its (standardised) training
rows and scores a row by its T² statistic, ``x' S⁻¹ x``. With ``pca=True`` it keeps the principal
components that explain ``explained_variance`` of the training variance and returns two statistics:
T² in that subspace and Q, the squared distance of the row to it (``x' (I - P P') x``). Each statistic
has its own upper control limit (UCL) at ``p_value``:

* T²: ``m (n - 1) (n + 1) / (n (n - m))`` times the ``p_value`` quantile of the F(m, n - m)
  distribution (``m`` the components or features, ``n`` the training rows);
* Q: Jackson and Mudholkar's limit from the residual eigenvalues ``λ`` of the training covariance,
  ``θ_i = Σ λ^i``, ``h0 = 1 - 2 θ1 θ3 / (3 θ2²)``, ``Q = θ1 (c h0 √(2 θ2) / θ1 + 1 + θ2 h0 (h0 - 1) / θ1²)^(1 / h0)``
  with ``c`` the ``p_value`` quantile of the standard normal.

``limits="skab"`` computes both limits the way SKAB's published control-chart code does, so that its
leaderboard rows are reproduced: each quantile is the largest of 10,000 evenly spaced points of
[0, 15] whose distribution function is below ``p_value``, and the Q limit takes ``θ_i`` as the
``i``-th power of the sum of the residual eigenvalues, in the order numpy's general eigen-solver
returns them. ``limit_scale`` multiplies every limit (SKAB's T² chart flags above twice its UCL).

Several statistics, one decision: :meth:`HotellingT2.statistics` returns each statistic and
``limits_`` its limit; the score is :func:`combine_statistics` of them under ``rule``: ``"any"``
flags a row when one statistic exceeds its limit (multivariate SPC's usual T² *or* Q), ``"all"``
when every one does. The score is the largest (``any``) or smallest (``all``) ratio of a statistic
to its limit, and ``threshold_`` is 1, so ``score > threshold_`` is exactly the rule.

Training columns that are constant are left out (they have no variance).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> det = HotellingT2().fit(rng.normal(size=(500, 3)))
>>> det.score(np.array([[0.0, 0.0, 0.0], [6.0, 6.0, 6.0]])) > det.threshold_
array([False,  True])
"""

from __future__ import annotations

from numbers import Real
from typing import Mapping

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import DetectorError
from ..validation import Interval, StrOptions
from .tabular import as_table

__all__ = ["HotellingT2", "combine_statistics", "RULES", "LIMITS"]

#: how several statistics make one decision
RULES = ("any", "all")
#: how the control limits are computed
LIMITS = ("exact", "skab")


def combine_statistics(
    statistics: Mapping[str, np.ndarray], limits: Mapping[str, float], rule: str = "any"
) -> np.ndarray:
    """One score from several statistics, each with its own limit: the largest (``"any"``) or the
    smallest (``"all"``) ratio ``statistic / limit``, so that ``score > 1`` exactly where the rule
    flags (a ratio that rounds to 1 is moved to the side its statistic lies on).

    >>> s = {"t2": np.array([1.0, 5.0, 5.0]), "q": np.array([1.0, 1.0, 9.0])}
    >>> L = {"t2": 4.0, "q": 3.0}
    >>> (combine_statistics(s, L, "any") > 1).tolist(), (combine_statistics(s, L, "all") > 1).tolist()
    ([False, True, True], [False, False, True])
    """
    if rule not in RULES:
        raise DetectorError(f"rule={rule!r}; expected one of {', '.join(RULES)}")
    if not statistics or set(statistics) != set(limits):
        raise DetectorError(
            f"statistics {sorted(statistics)} and limits {sorted(limits)} must name the same statistics"
        )
    above = np.nextafter(1.0, 2.0)
    ratios = []
    for name, values in statistics.items():
        limit = float(limits[name])
        if not np.isfinite(limit) or limit <= 0:
            raise DetectorError(
                f"statistic {name!r}: control limit {limit!r}; expected a positive finite number"
            )
        values = np.asarray(values, dtype=np.float64)
        r = values / limit
        ratios.append(np.where(values > limit, np.maximum(r, above), np.minimum(r, 1.0)))
    stacked = np.vstack(ratios)
    return stacked.max(axis=0) if rule == "any" else stacked.min(axis=0)


def _quantile(dist, p: float, limits: str) -> float:
    if limits == "exact":
        return float(dist.ppf(p))
    grid = np.linspace(0, 15, 10000)
    below = grid[dist.cdf(grid) < p]
    return float(below[-1]) if below.size else 0.0


def _inverse(cov: np.ndarray) -> np.ndarray:
    cov = np.atleast_2d(cov)
    try:
        return np.linalg.inv(cov)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(cov)


def _quadratic(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``x' M x`` of every row."""
    return np.einsum("ij,jk,ik->i", X, M, X)


class HotellingT2(BaseEstimator):
    """Hotelling's T² control chart, or with ``pca=True`` the PCA-based T² + Q chart (module docstring).

    Parameters
    ----------
    pca : bool, default False
        T² in the principal subspace and Q in its complement, instead of T² of every feature.
    explained_variance : float in (0, 1), default 0.85
        The share of the training variance the kept components explain (``pca=True``).
    p_value : float in (0, 1), default 0.999
        The share of in-control rows under each control limit.
    scale : bool, default True
        Standardise every feature on the training rows first.
    limit_scale : float > 0, default 1.0
        Multiplies every control limit.
    rule : {"any", "all"}, default "any"
        Flag a row when any statistic exceeds its limit, or only when all of them do.
    limits : {"exact", "skab"}, default "exact"
        Exact quantiles and Jackson–Mudholkar's Q limit, or SKAB's published computation of both.
    """

    _parameter_constraints = {
        "pca": ["boolean"],
        "explained_variance": [Interval(Real, 0.0, 1.0, closed="neither")],
        "p_value": [Interval(Real, 0.0, 1.0, closed="neither")],
        "scale": ["boolean"],
        "limit_scale": [Interval(Real, 0.0, None, closed="neither")],
        "rule": [StrOptions(set(RULES))],
        "limits": [StrOptions(set(LIMITS))],
    }

    def __init__(
        self,
        pca: bool = False,
        explained_variance: float = 0.85,
        p_value: float = 0.999,
        scale: bool = True,
        limit_scale: float = 1.0,
        rule: str = "any",
        limits: str = "exact",
    ):
        self.pca = pca
        self.explained_variance = explained_variance
        self.p_value = p_value
        self.scale = scale
        self.limit_scale = limit_scale
        self.rule = rule
        self.limits = limits

    def _prepare(self, X) -> np.ndarray:
        X = np.asarray(as_table(X), dtype=np.float64)[:, self.columns_]
        return (X - self.mean_) / self.std_ if self.scale else X

    def fit(self, X, y=None):
        import scipy.stats as st

        if self.rule not in RULES or self.limits not in LIMITS:
            raise DetectorError(
                f"detector HotellingT2: rule={self.rule!r}, limits={self.limits!r}; expected rule "
                f"in {', '.join(RULES)} and limits in {', '.join(LIMITS)}"
            )
        X = np.asarray(as_table(X), dtype=np.float64)
        n = X.shape[0]
        self.columns_ = np.flatnonzero((X != X[0]).any(axis=0))
        if self.columns_.size == 0:
            self.columns_ = np.arange(X.shape[1])
        self.mean_, self.std_ = X[:, self.columns_].mean(axis=0), X[:, self.columns_].std(axis=0)
        self.std_ = np.where(self.std_ > 0, self.std_, 1.0)
        Z = self._prepare(X)
        d = Z.shape[1]
        self.pca_ = None
        if self.pca:
            from sklearn.decomposition import PCA

            pca = PCA(n_components=self.explained_variance).fit(Z)
            if pca.n_components_ < d:
                self.pca_ = pca
        m = self.pca_.n_components_ if self.pca_ is not None else d
        if n <= m + 1:
            raise DetectorError(
                f"detector HotellingT2: {n} training rows for {m} dimensions; its T² limit needs more "
                f"rows than dimensions + 1 (at least {m + 2})"
            )
        space = self.pca_.transform(Z) if self.pca_ is not None else Z
        self.inv_cov_ = _inverse(np.cov(space.T))
        f_quantile = _quantile(st.f(m, n - m), self.p_value, self.limits)
        t2 = m * (n - 1) * (n + 1) / (n * (n - m)) * f_quantile
        self.limits_ = {"t2": float(self.limit_scale * t2)}
        if self.pca_ is not None:
            P = self.pca_.components_.T
            self.residual_ = np.eye(d) - P @ P.T
            self.limits_["q"] = float(self.limit_scale * self._q_limit(np.cov(Z.T), m))
        self.threshold_ = 1.0
        return self

    def _q_limit(self, cov: np.ndarray, k: int) -> float:
        import scipy.stats as st

        if self.limits == "skab":
            lam = np.linalg.eig(cov)[0].real[k:]
            theta = [float(np.sum(lam)) ** i for i in (1, 2, 3)]
        else:
            lam = np.sort(np.linalg.eigvalsh(cov))[::-1][k:]
            theta = [float(np.sum(lam**i)) for i in (1, 2, 3)]
        if theta[0] <= 0:
            return float(np.finfo(np.float64).tiny)
        h0 = 1 - 2 * theta[0] * theta[2] / (3 * theta[1] ** 2)
        c = _quantile(st.norm(), self.p_value, self.limits)
        return theta[0] * (
            c * h0 * np.sqrt(2 * theta[1]) / theta[0] + 1 + theta[1] * h0 * (h0 - 1) / theta[0] ** 2
        ) ** (1 / h0)

    def statistics(self, X) -> dict[str, np.ndarray]:
        """Each statistic of every row: ``{"t2": ...}``, and ``"q"`` with ``pca=True``."""
        if not hasattr(self, "limits_"):
            raise DetectorError("detector HotellingT2: statistics() called before fit()")
        Z = self._prepare(X)
        if self.pca_ is None:
            return {"t2": _quadratic(Z, self.inv_cov_)}
        return {
            "t2": _quadratic(self.pca_.transform(Z), self.inv_cov_),
            "q": _quadratic(Z, self.residual_),
        }

    def score(self, X) -> np.ndarray:
        """:func:`combine_statistics` of :meth:`statistics` under ``rule`` (``> threshold_ = 1``: flagged)."""
        return combine_statistics(self.statistics(X), self.limits_, self.rule)
