"""The simulated problems of depecker2010 (the TreeRank thesis), with their optimal ROC curves and AUC*.

Every problem is bipartite: X in R^q, Y in {-1, +1}, +1 = the positives (law G), -1 = the negatives (law H). As in
:mod:`forestlab.datasets._synthetic` (ringnorm), each point's class is drawn with probability p = 1/2 (so a sample
of n holds Binomial(n, 1/2) positives, not exactly n/2), then its features from the class's law; the thesis states
p = 1/2 for every problem. Points come from ``numpy.random.default_rng(random_state)``: same seed, same arrays.

Generators (registered for ``source.kind: synthetic`` configs; ``source.n_features`` is the dimension q):

=================  ============  ====================================================================================
generator          thesis        law of X given Y
=================  ============  ====================================================================================
``unif2d``         E1, Fig 1.14  [0,1]^2 cut in quarters X1 = [0,1/2]^2, X2 = [1/2,1]x[0,1/2], X3 = [1/2,1]^2,
                                 X4 = [0,1/2]x[1/2,1]; H = .2 U(X1) + .1 U(X2) + .3 U(X3) + .4 U(X4),
                                 G = .4 U(X1) + .3 U(X2) + .2 U(X3) + .1 U(X4)
``gauss_croix2d``  E1, E2-E4     H = N((-1.79, .77), [[9.45, 5.91], [5.91, 3.94]]),
                                 G = N((-.75, -.60), [[7.41, 2.66], [2.66, 1.10]]) on R^2 (untruncated)
``gauss_lin2d``    E2, Fig 2.9   H = N((2, .5), [[1, .25], [.25, 1.15]]), G = N((-1, .5), [[1, .15], [.15, 1.25]]),
                                 conditioned on [0,1]^2 (``truncate=True``, the default) or on R^2
``gauss_quad2d``   E2, Fig 2.10  H = N((.64, .51), [[.063, .008], [.008, .07]]),
                                 G = N((.44, .47), [[.076, .002], [.002, .079]]), conditioned as gauss_lin2d
``gauss_shift``    E5, E9        G = N(mu+, I_q), H = N(mu-, sigma^2 I_q), sigma^2 = 10^log10_sigma2,
                                 mu+- = +-(delta / 2) v: v = (1, ..., 1) / sqrt(q) (``shift="spread"``, the default:
                                 delta / sqrt(q) per coordinate) or v = e_1 (``shift="axis"``)
=================  ============  ====================================================================================

The readings (digest §6 items 2-4): unif2d's eta on X1 is 2/3 (printed 0.7); gauss_lin2d and gauss_quad2d are
truncated to [0,1]^2 by default (the printed N_{[0,1]^2} and "data generated on X = [0,1]^2"), ``truncate=False``
is the "X = R^2" reading; gauss_shift spreads the mean shift over every coordinate (§8: with it a single CART
TreeRank tree and the gains of bagging match the thesis; along one axis the single tree is far better than
printed), with symmetric non-zero means +-delta/2 v, and gives the variance sigma^2 to the negatives. AUC* depends
on neither the direction nor the position of the shift (both covariances are multiples of I).

Optimal scores (any increasing transform of eta(x) = P(Y = +1 | X = x) is optimal): :func:`log_likelihood_ratio`
gives log dG/dH at X, :func:`eta` the posterior, :func:`level_sets` the index of the equal-mass level set of eta
holding each point (for 2-D level-set plots). :func:`optimal_roc` gives ROC* and AUC* of a problem without fitting
anything, by the best method available (:data:`OPTIMAL` says which):

- ``exact``: unif2d (ROC* through (0,0), (.1,.3), (.3,.7), (.6,.9), (1,1); AUC* = 0.735);
- ``closed_form``: gauss_shift. Equal covariances (sigma^2 = 1): AUC* = Phi(delta / sqrt 2), ROC* beta =
  Phi(Phi^-1(alpha) + delta). Otherwise the optimal score is -||x - m||^2 (m the centre of the quadratic
  log-likelihood ratio) whose laws are non-central chi-square, so ROC* is exact and AUC* = P(D+ < D-) a 1-D integral
  (numerical error < 1e-9);
- ``quadrature``: the 2-D Gaussian problems: both densities on a 1000 x 1000 midpoint grid (the square [0,1]^2 when
  truncated, else +-8 standard deviations), cells sorted by log-likelihood ratio; the stated error is the change from
  a 500 x 500 grid (about 1e-7);
- ``mc``: any problem, by Monte Carlo with a fixed seed (``n_mc`` points, AUC of the optimal score with its DeLong
  standard error: about 3e-4 for a million points), used to cross-check the others.

:func:`optimal_roc_for` reads a synthetic dataset config (``source.generator`` and parameters) and returns its ROC*.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from forestlab._values import is_number
from forestlab.datasets._generators import _RESERVED, register_generator, register_info
from forestlab.errors import DatasetError
from forestlab.metrics import ROC_GRID, tpr_at

__all__ = [
    "OPTIMAL",
    "P_POSITIVE",
    "OptimalROC",
    "RankingToy",
    "eta",
    "gauss_croix2d",
    "gauss_lin2d",
    "gauss_quad2d",
    "gauss_shift",
    "level_sets",
    "log_likelihood_ratio",
    "optimal_roc",
    "optimal_roc_for",
    "unif2d",
]

#: P(Y = +1) in every problem of the thesis.
P_POSITIVE = 0.5
DEFAULT_N_SAMPLES = 2000  # depecker2010 Table 5.1 and E1: 2000 training points


# ---------------------------------------------------------------------------------------------------------------
# The laws
# ---------------------------------------------------------------------------------------------------------------
#: unif2d: the lower-left corners of the quarters X1..X4 and the weights of G (positives) and H (negatives) on them.
UNIF2D_CORNERS = np.array([[0.0, 0.0], [0.5, 0.0], [0.5, 0.5], [0.0, 0.5]])
UNIF2D_G = np.array([0.4, 0.3, 0.2, 0.1])
UNIF2D_H = np.array([0.2, 0.1, 0.3, 0.4])


@dataclass(frozen=True)
class GaussPair:
    """Two bivariate Gaussian laws, G of the positives and H of the negatives, as printed in the thesis."""

    mean_pos: tuple[float, float]
    cov_pos: tuple[tuple[float, float], tuple[float, float]]
    mean_neg: tuple[float, float]
    cov_neg: tuple[tuple[float, float], tuple[float, float]]

    def law(self, positive: bool) -> tuple[np.ndarray, np.ndarray]:
        """(mean, covariance) of the positives' or the negatives' law."""
        if positive:
            return np.array(self.mean_pos), np.array(self.cov_pos)
        return np.array(self.mean_neg), np.array(self.cov_neg)


#: The 2-D Gaussian problems (E1, E2): digest §3.
GAUSS2D = {
    "gauss_croix2d": GaussPair((-0.75, -0.60), ((7.41, 2.66), (2.66, 1.10)),
                               (-1.79, 0.77), ((9.45, 5.91), (5.91, 3.94))),
    "gauss_lin2d": GaussPair((-1.0, 0.5), ((1.0, 0.15), (0.15, 1.25)),
                             (2.0, 0.5), ((1.0, 0.25), (0.25, 1.15))),
    "gauss_quad2d": GaussPair((0.44, 0.47), ((0.076, 0.002), (0.002, 0.079)),
                              (0.64, 0.51), ((0.063, 0.008), (0.008, 0.07))),
}
SHIFTS = ("spread", "axis")


# ---------------------------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------------------------
def _labels(rng: np.random.Generator, n: int) -> np.ndarray:
    """Each point positive with probability 1/2, as ringnorm and twonorm."""
    return rng.random(n) < P_POSITIVE


def _two_d(name: str, n_features: int) -> None:
    if n_features != 2:
        raise DatasetError(f"the {name} generator is 2-dimensional: set source.n_features to 2 "
                           f"(got {n_features}) and shape to [n_samples, 2]")


def _flag(name: str, key: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise DatasetError(f"the {name} generator: `source.{key}` must be true or false, got {value!r}")
    return bool(value)


def _affine(Z: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """mean + Z chol^T, column by column (a matrix product with a 2 x 2 factor is much slower on long arrays)."""
    out = np.broadcast_to(mean, Z.shape).copy()
    for j in range(chol.shape[1]):
        out += Z[:, j:j + 1] * chol[:, j]
    return out


def _gaussian_sample(rng: np.random.Generator, n: int, mean: np.ndarray, cov: np.ndarray,
                     truncate: bool) -> np.ndarray:
    """``n`` points of N(mean, cov), conditioned on [0,1]^2 by rejection when ``truncate``."""
    chol = np.linalg.cholesky(cov)
    if not truncate:
        return _affine(rng.standard_normal((n, mean.size)), mean, chol)
    kept: list[np.ndarray] = [np.empty((0, mean.size))]
    have, rate = 0, 1.0
    while have < n:
        batch = min(int(1.2 * (n - have) / rate) + 64, 2_000_000)  # bounded memory; the loop draws the rest
        Z = _affine(rng.standard_normal((batch, mean.size)), mean, chol)
        inside = Z[np.all((Z >= 0.0) & (Z <= 1.0), axis=1)]
        rate = max(inside.shape[0] / batch, 1e-3)
        kept.append(inside)
        have += inside.shape[0]
    return np.concatenate(kept)[:n]


def _gauss2d(name: str, n_samples: int, n_features: int, random_state: int | np.random.Generator,
             truncate: bool) -> tuple[np.ndarray, np.ndarray]:
    _two_d(name, n_features)
    rng = np.random.default_rng(random_state)
    positive = _labels(rng, n_samples)
    X = np.empty((n_samples, 2))
    for cls in (True, False):
        mean, cov = GAUSS2D[name].law(cls)
        X[positive == cls] = _gaussian_sample(rng, int(np.sum(positive == cls)), mean, cov, truncate)
    return X, np.where(positive, 1, -1).astype(np.int64)


def unif2d(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = 2,
           random_state: int | np.random.Generator = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unif2d (E1): uniform on the quarters of [0,1]^2 with class-dependent weights; eta = 2/3, 3/4, 2/5, 1/5 on
    X1..X4. X of shape (n_samples, 2), y in {-1, +1}."""
    _two_d("unif2d", n_features)
    rng = np.random.default_rng(random_state)
    positive = _labels(rng, n_samples)
    weights = np.where(positive[:, None], UNIF2D_G, UNIF2D_H)
    cell = (rng.random(n_samples)[:, None] >= np.cumsum(weights, axis=1)[:, :-1]).sum(axis=1)
    X = UNIF2D_CORNERS[cell] + 0.5 * rng.random((n_samples, 2))
    return X, np.where(positive, 1, -1).astype(np.int64)


def gauss_croix2d(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = 2,
                  random_state: int | np.random.Generator = 0) -> tuple[np.ndarray, np.ndarray]:
    """GaussCroix2d (E1, E2): two crossing bivariate Gaussians on R^2 (untruncated, as the thesis states)."""
    return _gauss2d("gauss_croix2d", n_samples, n_features, random_state, False)


def gauss_lin2d(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = 2,
                random_state: int | np.random.Generator = 0,
                truncate: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """GaussLin2d (E2): nearly linear level sets; conditioned on [0,1]^2 unless ``truncate=False``."""
    return _gauss2d("gauss_lin2d", n_samples, n_features, random_state, _flag("gauss_lin2d", "truncate", truncate))


def gauss_quad2d(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = 2,
                 random_state: int | np.random.Generator = 0,
                 truncate: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """GaussQuad2d (E2): quadratic level sets; conditioned on [0,1]^2 unless ``truncate=False``."""
    return _gauss2d("gauss_quad2d", n_samples, n_features, random_state,
                    _flag("gauss_quad2d", "truncate", truncate))


def _shift_params(n_features: int, delta: Any, log10_sigma2: Any, shift: Any) -> tuple[np.ndarray, float]:
    """(the unit direction v, sigma) of gauss_shift, checked."""
    for key, value in (("delta", delta), ("log10_sigma2", log10_sigma2)):
        if not is_number(value) or not math.isfinite(value):
            raise DatasetError(f"the gauss_shift generator: `source.{key}` must be a number, got {value!r}")
    if delta < 0:
        raise DatasetError(f"the gauss_shift generator: `source.delta` must be >= 0, got {delta!r}")
    if shift not in SHIFTS:
        raise DatasetError(f"the gauss_shift generator: `source.shift` must be one of {', '.join(SHIFTS)}, "
                           f"got {shift!r}")
    v = np.full(n_features, 1.0 / math.sqrt(n_features)) if shift == "spread" else np.eye(n_features)[0]
    return v, math.sqrt(10.0 ** float(log10_sigma2))


def gauss_shift(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = 20,
                random_state: int | np.random.Generator = 0, delta: float = 1.0, log10_sigma2: float = 0.0,
                shift: str = "spread") -> tuple[np.ndarray, np.ndarray]:
    """Gaussian mean shift (E5 with sigma^2 != 1, E9 with sigma^2 = 1): positives N(+delta/2 v, I_q), negatives
    N(-delta/2 v, sigma^2 I_q), q = ``n_features``, ||mu+ - mu-|| = ``delta``, sigma^2 = 10^``log10_sigma2``, v
    spread over every coordinate (``shift="spread"``) or the first axis (``"axis"``)."""
    v, sigma = _shift_params(n_features, delta, log10_sigma2, shift)
    rng = np.random.default_rng(random_state)
    positive = _labels(rng, n_samples)
    Z = rng.standard_normal((n_samples, n_features))
    half = 0.5 * float(delta) * v
    X = np.where(positive[:, None], half + Z, -half + sigma * Z)
    return X, np.where(positive, 1, -1).astype(np.int64)


for _generator in (unif2d, gauss_croix2d, gauss_lin2d, gauss_quad2d, gauss_shift):
    register_generator(_generator.__name__, _generator)


# ---------------------------------------------------------------------------------------------------------------
# Optimal scores
# ---------------------------------------------------------------------------------------------------------------
def _gauss_logpdf(X: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    inv = np.linalg.inv(cov)
    d = X - mean
    quadratic = sum(inv[a, b] * d[:, a] * d[:, b] for a in range(mean.size) for b in range(mean.size))
    return -0.5 * quadratic - 0.5 * math.log(np.linalg.det(cov)) - 0.5 * mean.size * math.log(2.0 * math.pi)


@functools.lru_cache(maxsize=16)
def _box_mass(name: str, positive: bool) -> float:
    """P(Z in [0,1]^2) for the Gaussian Z of the class (the normaliser of the truncated law), by 1-D quadrature of
    the first coordinate's density times the conditional probability of the second."""
    from scipy import integrate, stats

    mean, cov = GAUSS2D[name].law(positive)
    s1 = math.sqrt(cov[0, 0])
    slope = cov[0, 1] / cov[0, 0]
    s21 = math.sqrt(cov[1, 1] - cov[0, 1] ** 2 / cov[0, 0])

    def inner(x1: float) -> float:
        m21 = mean[1] + slope * (x1 - mean[0])
        return stats.norm.pdf(x1, mean[0], s1) * (stats.norm.cdf((1 - m21) / s21) - stats.norm.cdf(-m21 / s21))

    value, _ = integrate.quad(inner, 0.0, 1.0, epsabs=1e-13, epsrel=1e-12)
    return float(value)


def _shift_centre(delta: float, sigma: float, v: np.ndarray) -> np.ndarray:
    """m with log dG/dH(x) = -(1 - 1/sigma^2) ||x - m||^2 / 2 + const (sigma != 1)."""
    mu_pos, mu_neg = 0.5 * delta * v, -0.5 * delta * v
    return (mu_pos - mu_neg / sigma**2) / (1.0 - 1.0 / sigma**2)


def _llr_unif2d(X: np.ndarray) -> np.ndarray:
    inside = np.all((X >= 0.0) & (X <= 1.0), axis=1)
    right, top = X[:, 0] >= 0.5, X[:, 1] >= 0.5
    cell = np.where(top, np.where(right, 2, 3), np.where(right, 1, 0))
    out = np.log(UNIF2D_G / UNIF2D_H)[cell]
    return np.where(inside, out, np.nan)


def _llr_gauss2d(name: str, X: np.ndarray, truncate: bool) -> np.ndarray:
    pair = GAUSS2D[name]
    out = _gauss_logpdf(X, *pair.law(True)) - _gauss_logpdf(X, *pair.law(False))
    if truncate:
        out = out + math.log(_box_mass(name, False) / _box_mass(name, True))
        out = np.where(np.all((X >= 0.0) & (X <= 1.0), axis=1), out, np.nan)
    return out


def _llr_shift(X: np.ndarray, delta: float = 1.0, log10_sigma2: float = 0.0, shift: str = "spread") -> np.ndarray:
    q = X.shape[1]
    v, sigma = _shift_params(q, delta, log10_sigma2, shift)
    half = 0.5 * float(delta) * v
    return (-0.5 * np.sum((X - half) ** 2, axis=1) + 0.5 * np.sum((X + half) ** 2, axis=1) / sigma**2
            + q * math.log(sigma))


class OptimalROC(NamedTuple):
    """ROC* and AUC* of a problem: ``fpr, tpr, auc, stderr = optimal_roc(...)``.

    ``fpr``, ``tpr``: the optimal ROC curve's points from (0, 0) to (1, 1), to be joined by segments; ``auc``:
    AUC*; ``stderr``: its precision (0 when exact; the numerical error of a quadrature or integral; the standard
    error of a Monte Carlo estimate).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    auc: float
    stderr: float


@dataclass(frozen=True)
class RankingToy:
    """A simulated problem of the thesis: its generator, optimal score and how its ROC* is computed.

    ``llr(X, **params)`` is log dG/dH at X (NaN outside the support); ``method`` is ``"exact"``,
    ``"closed_form"`` or ``"quadrature"``, the default of :func:`optimal_roc`; ``bounds(**params)`` a box holding
    the support (2-D problems, for level-set plots) or None.
    """

    name: str
    generator: Callable[..., tuple[np.ndarray, np.ndarray]]
    llr: Callable[..., np.ndarray]
    method: str
    bounds: Callable[..., tuple[tuple[float, float], tuple[float, float]] | None]
    dimension: int | None  # 2 for the 2-D problems, None when ``n_features`` is free


def _gauss2d_bounds(name: str) -> Callable[..., tuple[tuple[float, float], tuple[float, float]]]:
    def bounds(truncate: bool = name != "gauss_croix2d") -> tuple[tuple[float, float], tuple[float, float]]:
        if truncate:
            return (0.0, 1.0), (0.0, 1.0)
        lo, hi = _gauss_box(name, 3.0)
        return (float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1]))

    return bounds


def _gauss_box(name: str, width: float) -> tuple[np.ndarray, np.ndarray]:
    """The box of ``width`` standard deviations around both laws."""
    pair = GAUSS2D[name]
    (m1, c1), (m0, c0) = pair.law(True), pair.law(False)
    sd = np.sqrt(np.maximum(np.diag(c1), np.diag(c0)))
    return np.minimum(m1, m0) - width * sd, np.maximum(m1, m0) + width * sd


#: Generator name -> problem. The keys are the generator names of the dataset configs (``source.generator``).
OPTIMAL: dict[str, RankingToy] = {
    "unif2d": RankingToy("unif2d", unif2d, lambda X: _llr_unif2d(X), "exact",
                         lambda: ((0.0, 1.0), (0.0, 1.0)), 2),
    "gauss_croix2d": RankingToy("gauss_croix2d", gauss_croix2d,
                                lambda X: _llr_gauss2d("gauss_croix2d", X, False), "quadrature",
                                lambda: _gauss2d_bounds("gauss_croix2d")(False), 2),
    "gauss_lin2d": RankingToy("gauss_lin2d", gauss_lin2d,
                              lambda X, truncate=True: _llr_gauss2d("gauss_lin2d", X, truncate), "quadrature",
                              _gauss2d_bounds("gauss_lin2d"), 2),
    "gauss_quad2d": RankingToy("gauss_quad2d", gauss_quad2d,
                               lambda X, truncate=True: _llr_gauss2d("gauss_quad2d", X, truncate), "quadrature",
                               _gauss2d_bounds("gauss_quad2d"), 2),
    "gauss_shift": RankingToy("gauss_shift", gauss_shift, _llr_shift, "closed_form", lambda **_: None, None),
}


def _problem(name: str) -> RankingToy:
    try:
        return OPTIMAL[name]
    except (KeyError, TypeError):
        raise DatasetError(f"no optimal score for generator {name!r}; known: {', '.join(OPTIMAL)}") from None


def _split_params(problem: RankingToy, params: Mapping[str, Any] | None) -> tuple[int, dict[str, Any]]:
    """(n_features, the generator's keyword parameters) from ``params`` (which may hold ``n_features``)."""
    params = dict(params or {})
    default = 20 if problem.dimension is None else problem.dimension
    n_features = params.pop("n_features", default)
    if problem.dimension is not None:
        _two_d(problem.name, n_features)
    return int(n_features), params


def log_likelihood_ratio(name: str, X: Any, **params: Any) -> np.ndarray:
    """log dG/dH(x) (positives' over negatives' density) of generator ``name`` at the rows of ``X``: an optimal
    score. NaN outside the support ([0,1]^2 for unif2d and the truncated problems)."""
    problem = _problem(name)
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    params = {k: v for k, v in params.items() if k != "n_features"}
    if problem.dimension is not None:
        _two_d(name, X.shape[1])
    return problem.llr(X, **params)


def eta(name: str, X: Any, p: float = P_POSITIVE, **params: Any) -> np.ndarray:
    """eta(x) = P(Y = +1 | X = x) = 1 / (1 + (1 - p) / p * exp(-llr(x))) for generator ``name`` (p = 1/2 in the
    thesis); NaN outside the support."""
    llr = log_likelihood_ratio(name, X, **params)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + (1.0 - p) / p * np.exp(-llr))


@functools.lru_cache(maxsize=32)
def _level_thresholds(name: str, frozen: tuple[tuple[str, Any], ...], n_levels: int) -> np.ndarray:
    problem = _problem(name)
    n_features, params = _split_params(problem, dict(frozen))
    X, _ = problem.generator(200_000, n_features, 12345, **params)
    llr = problem.llr(X, **params)
    return np.quantile(llr, 1.0 - np.arange(1, n_levels) / n_levels)


def level_sets(name: str, X: Any, n_levels: int = 8, **params: Any) -> np.ndarray:
    """The level set of eta holding each row of ``X``: 0 for the top (highest eta) ... n_levels - 1 for the bottom,
    the n_levels sets having equal mass under the marginal law of X (thresholds = quantiles of eta on 200,000
    points drawn with a fixed seed: each set's mass is right to about +-0.002). With a piecewise-constant eta
    (unif2d) several levels coincide and only its cells remain. -1 outside the support. The thesis's Figs 1.14a,
    1.15a, 2.9a-2.11a show 8 level sets (their exact levels are not stated)."""
    frozen = tuple(sorted(params.items()))
    thresholds = _level_thresholds(name, frozen, int(n_levels))
    llr = log_likelihood_ratio(name, X, **params)
    index = np.searchsorted(-thresholds, -llr, side="right")
    return np.where(np.isnan(llr), -1, index)


# ---------------------------------------------------------------------------------------------------------------
# ROC* and AUC*
# ---------------------------------------------------------------------------------------------------------------
def _thin(fpr: np.ndarray, tpr: np.ndarray, points: int = 2001) -> tuple[np.ndarray, np.ndarray]:
    """About ``points`` points of a long monotone curve, evenly spaced along fpr + tpr (keeps vertical parts)."""
    if fpr.size <= points:
        return fpr, tpr
    arc = fpr + tpr
    idx = np.unique(np.r_[0, np.searchsorted(arc, np.linspace(0.0, arc[-1], points)), fpr.size - 1])
    idx = idx[idx < fpr.size]
    return fpr[idx], tpr[idx]


def _exact_unif2d() -> OptimalROC:
    order = np.argsort(-(UNIF2D_G / UNIF2D_H))
    fpr = np.r_[0.0, np.cumsum(UNIF2D_H[order])]
    tpr = np.r_[0.0, np.cumsum(UNIF2D_G[order])]
    return OptimalROC(fpr, tpr, float(np.trapezoid(tpr, fpr)), 0.0)


def _grid_roc(name: str, truncate: bool, n_grid: int) -> tuple[np.ndarray, np.ndarray, float]:
    """ROC* of a 2-D Gaussian problem from its densities on an n_grid^2 midpoint grid."""
    if truncate:
        lo, hi = np.zeros(2), np.ones(2)
    else:
        lo, hi = _gauss_box(name, 8.0)
    axes = [lo[i] + (np.arange(n_grid) + 0.5) * (hi[i] - lo[i]) / n_grid for i in range(2)]
    X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    pair = GAUSS2D[name]
    log_g, log_h = _gauss_logpdf(X, *pair.law(True)), _gauss_logpdf(X, *pair.law(False))
    g, h = np.exp(log_g), np.exp(log_h)
    order = np.argsort(log_h - log_g, kind="stable")  # decreasing log-likelihood ratio
    tpr = np.r_[0.0, np.cumsum(g[order])]
    fpr = np.r_[0.0, np.cumsum(h[order])]
    tpr, fpr = tpr / tpr[-1], fpr / fpr[-1]  # the grid's masses: the truncated law's normaliser on [0,1]^2
    return fpr, tpr, float(np.trapezoid(tpr, fpr))


def _quadrature_gauss2d(name: str, truncate: bool = True) -> OptimalROC:
    fpr, tpr, value = _grid_roc(name, truncate, 1000)
    _, _, coarse = _grid_roc(name, truncate, 500)
    fpr, tpr = _thin(fpr, tpr)
    return OptimalROC(fpr, tpr, value, abs(value - coarse))


def _closed_form_shift(n_features: int, delta: float = 1.0, log10_sigma2: float = 0.0,
                       shift: str = "spread") -> OptimalROC:
    from scipy import integrate, stats

    v, sigma = _shift_params(n_features, delta, log10_sigma2, shift)
    alpha = np.unique(np.r_[0.0, np.logspace(-8, 0, 400), np.linspace(0.0, 1.0, 1601)])
    inner = alpha[1:-1]
    if sigma == 1.0:
        beta = stats.norm.cdf(stats.norm.ppf(inner) + delta)
        return OptimalROC(alpha, np.r_[0.0, beta, 1.0], float(stats.norm.cdf(delta / math.sqrt(2.0))), 0.0)
    s2 = sigma**2
    m = _shift_centre(float(delta), sigma, v)
    lam_pos = float(np.sum((0.5 * delta * v - m) ** 2))
    lam_neg = float(np.sum((-0.5 * delta * v - m) ** 2)) / s2
    q = n_features
    # D = ||X - m||^2: D+ ~ ncx2(q, lam_pos), D- ~ s2 ncx2(q, lam_neg); the optimal score is -D when s2 > 1
    # (the log-likelihood ratio decreases with D), +D when s2 < 1.
    if s2 > 1.0:
        t = s2 * stats.ncx2.ppf(inner, q, lam_neg)
        beta = stats.ncx2.cdf(t, q, lam_pos)
    else:
        t = s2 * stats.ncx2.isf(inner, q, lam_neg)
        beta = stats.ncx2.sf(t, q, lam_pos)

    def integrand(x: float) -> float:  # P(D+ < s2 x) times the density of D- / s2 at x
        return float(stats.ncx2.cdf(s2 * x, q, lam_pos) * stats.ncx2.pdf(x, q, lam_neg))

    top = float(stats.ncx2.isf(1e-15, q, lam_neg))
    below, err = integrate.quad(integrand, 0.0, top, limit=500, epsabs=1e-12, epsrel=1e-12)
    value = below if s2 > 1.0 else 1.0 - below
    return OptimalROC(alpha, np.r_[0.0, beta, 1.0], float(value), float(err + 1e-12))


def _delong(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """AUC of the scores ``pos`` against ``neg`` (ties 1/2) and DeLong's standard error."""
    from scipy.stats import rankdata

    n1, n0 = pos.size, neg.size
    ranks = rankdata(np.r_[pos, neg])
    within_pos, within_neg = rankdata(pos), rankdata(neg)
    v10 = (ranks[:n1] - within_pos) / n0  # each positive's share of negatives below it
    v01 = 1.0 - (ranks[n1:] - within_neg) / n1  # each negative's share of positives above it
    value = float(v10.mean())
    return value, float(math.sqrt(v10.var(ddof=1) / n1 + v01.var(ddof=1) / n0))


def _monte_carlo(problem: RankingToy, n_features: int, params: dict[str, Any], n_mc: int,
                 seed: int) -> OptimalROC:
    from forestlab.metrics import roc_curve  # local: metrics loads scikit-learn, only the Monte Carlo path needs it

    X, y = problem.generator(n_mc, n_features, seed, **params)
    score = problem.llr(X, **params)
    value, stderr = _delong(score[y == 1], score[y == -1])
    fpr, tpr = roc_curve(y, score)
    fpr, tpr = _thin(fpr, tpr)
    return OptimalROC(fpr, tpr, value, stderr)


@functools.lru_cache(maxsize=64)
def _optimal(name: str, frozen: tuple[tuple[str, Any], ...], method: str, n_mc: int, seed: int) -> OptimalROC:
    problem = _problem(name)
    n_features, params = _split_params(problem, dict(frozen))
    if method == "mc":
        result = _monte_carlo(problem, n_features, params, n_mc, seed)
    elif method != problem.method:
        raise ValueError(f"optimal_roc: method {method!r} is not available for {name} "
                         f"(use {problem.method!r} or 'mc')")
    elif name == "unif2d":
        result = _exact_unif2d()
    elif name == "gauss_shift":
        result = _closed_form_shift(n_features, **params)
    else:
        truncate = _flag(name, "truncate", params.get("truncate", name != "gauss_croix2d"))
        result = _quadrature_gauss2d(name, truncate)
    for array in (result.fpr, result.tpr):
        array.setflags(write=False)  # cached: shared by every caller
    return result


def optimal_roc(name: str, params: Mapping[str, Any] | None = None, *, n_mc: int = 1_000_000, seed: int = 0,
                method: str | None = None) -> OptimalROC:
    """ROC* and AUC* of generator ``name`` with parameters ``params``, computed once per process and cached.

    Parameters
    ----------
    name : str
        A generator of :data:`OPTIMAL` (``unif2d``, ``gauss_croix2d``, ``gauss_lin2d``, ``gauss_quad2d``,
        ``gauss_shift``).
    params : mapping, optional
        The generator's parameters as in a dataset config's ``source`` (e.g. ``{"n_features": 20, "delta": 1.0,
        "log10_sigma2": 0.1}``, ``{"truncate": False}``); the generator's defaults otherwise.
    n_mc, seed : int
        Size and seed of the Monte Carlo sample (``method="mc"`` only).
    method : {"exact", "closed_form", "quadrature", "mc"}, optional
        Default: the problem's own (:attr:`RankingToy.method`); ``"mc"`` works for every problem.

    Returns
    -------
    OptimalROC
        ``(fpr, tpr, auc, stderr)``: the curve's points (read-only arrays), AUC* and its precision.
    """
    problem = _problem(name)
    frozen = tuple(sorted((params or {}).items()))
    return _optimal(name, frozen, method or problem.method, int(n_mc), int(seed))


def optimal_roc_for(ds_cfg: Mapping[str, Any], **kwargs: Any) -> OptimalROC:
    """ROC* and AUC* of a synthetic dataset config (``source.generator`` and its parameters, ``n_features``
    included), for reports and figures: nothing is fitted or sampled unless ``method="mc"``."""
    source = ds_cfg.get("source") or {}
    if source.get("kind") != "synthetic" or source.get("generator") not in OPTIMAL:
        name = ds_cfg.get("name", "<unnamed>")
        raise DatasetError(f"dataset '{name}' has no known optimal ROC curve (it is not generated by one of "
                           f"{', '.join(OPTIMAL)})")
    params = {k: v for k, v in source.items() if k not in _RESERVED}
    if "n_features" in source:
        params["n_features"] = source["n_features"]
    return optimal_roc(source["generator"], params, **kwargs)


# ---------------------------------------------------------------------------------------------------------------
# What the runs store with each problem's dataset info
# ---------------------------------------------------------------------------------------------------------------
def oracle_info(ds_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """For a dataset generated by one of :data:`OPTIMAL`: its AUC* (and the standard error of that value) and its
    ROC* as true positive rates on :data:`forestlab.metrics.ROC_GRID`, and for a 2-d problem its level sets
    (:func:`_level_sets_info`), stored with the dataset's info so that tables and figures set results beside the
    optimum without recomputing it. Registered for each generator of :data:`OPTIMAL`."""
    fpr, tpr, auc_star, stderr = optimal_roc_for(ds_cfg)
    roc = tpr_at(np.asarray(fpr, dtype=float), np.asarray(tpr, dtype=float), ROC_GRID)
    info: dict[str, Any] = {"auc_star": float(auc_star), "auc_star_stderr": float(stderr),
                            "roc_star_tpr": [round(float(v), 6) for v in roc]}
    info.update(_level_sets_info(ds_cfg))
    return info


def _level_sets_info(ds_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """For a 2-d generated problem: its 8 equal-mass level sets of eta (0 = top) on a 64 x 64 grid over its support
    (depecker2010 Figs 1.14a, 1.15a, 2.9a-2.11a), as lists for the dataset's stored info."""
    source = ds_cfg["source"]
    toy = OPTIMAL[source["generator"]]
    if toy.dimension != 2:
        return {}
    params = {k: v for k, v in source.items() if k not in _RESERVED}
    try:
        box = toy.bounds(**params)
    except TypeError:  # a problem whose support does not depend on its parameters
        box = toy.bounds()
    if box is None:
        return {}
    (x0, x1), (y0, y1) = box
    gx, gy = np.linspace(x0, x1, 64), np.linspace(y0, y1, 64)
    grid = np.column_stack([np.tile(gx, len(gy)), np.repeat(gy, len(gx))])
    levels = level_sets(source["generator"], grid, 8, **params)
    return {"eta_grid_x": [float(v) for v in gx], "eta_grid_y": [float(v) for v in gy],
            "eta_level_sets": [int(v) for v in levels]}


for _name in OPTIMAL:
    register_info(_name, oracle_info)
