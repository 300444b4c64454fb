"""PAC-Bayes weightings of a forest after zirakiza2013, and their certificates, from out-of-bag statistics.

The weightings (digest /work/shared/studies/pacbayes-successors.md) and what each minimises over rho, a
distribution on the m trees (pi uniform, delta = 0.05):

- ``fo`` (Thiemann et al. 2017): the first-order lambda-bound 2 [L(rho)/(1 - l/2) + (KL + ln(2 sqrt(n)/delta)) /
  (l (1 - l/2) n)], alternating the closed forms of lambda and of rho (a Gibbs distribution);
- ``tnd`` (Masegosa et al. 2020): the lambda-relaxation of the tandem bound 4 kl^-1(L(rho^2), ...);
- ``cctnd`` (Wu et al. 2021): the Chebyshev-Cantelli bound with the tandem loss, (U - 2 mu g + mu^2) / (1/2 - mu)^2,
  U a relaxed upper bound on the tandem loss and g a relaxed lower (mu >= 0) or upper (mu < 0) bound on the Gibbs
  loss, mu in closed form;
- ``ccpbb`` (Wu et al. 2021): Chebyshev-Cantelli with the PAC-Bayes-Bennett bound on the mu-tandem loss and the
  bound of their Theorem 13 on its variance (lambda and gamma in closed form, mu on a grid);
- ``cbound_joint`` (Viallard et al. 2021): the C-bound on the largest (joint error, disagreement) pair in the
  trinomial kl-ball of Germain et al. 2015's PAC-Bound 2, minimised directly.

Every statistic is read **out of bag**, as the reference code (StephanLorenzen/MajorityVoteBounds, ``mvbase.py``)
reads it: a tree's loss on the points out of its bootstrap (n_h points), a pair's tandem loss on the points out of
both bootstraps (n_hh' points), and the bounds use n = min_h n_h and n2 = min_{h,h'} n_hh'. The matrices are three
products of OOB indicator arrays (:func:`oob_statistics`).

The certificates (:func:`certificates`) are the bounds in their kl-inverse forms at delta = 0.05, computed for any
rho (the uniform vote, SORF, MinCq's self-complemented distribution and the five weightings above):

- ``fo``: 2 kl^-1+(L(rho), (KL + ln(2 sqrt(n)/delta)) / n);
- ``tnd``: 4 kl^-1+(L(rho^2), (2 KL + ln(2 sqrt(n2)/delta)) / n2);
- ``cctnd``: min over mu < 1/2 of (Ubar - 2 mu g + mu^2) / (1/2 - mu)^2, Ubar = kl^-1+(L(rho^2), (2 KL +
  ln(4 sqrt(n2)/delta)) / n2), g = kl^-1-(L(rho), (KL + ln(4 sqrt(n)/delta)) / n) when mu >= 0 and kl^-1+ when
  mu < 0 (every mu at once: both kl bounds hold for all rho together);
- ``ccpbb``: min over the 100 values mu = -0.5, -0.49, ..., 0.49 of the PAC-Bayes-Bennett bound on the mu-tandem
  loss over (1/2 - mu)^2, lambda and gamma on Wu et al.'s grids. **Unlike the reference code we pay for the mu grid**
  (a union bound: delta / 100 in place of delta), so the certificate holds for the selected mu; it is looser than
  the published numbers for that reason, by little when n2 is large (MNIST, n2 ~ 7,300: ours 0.3825 vs 0.3853
  published) and by much when the confidence term dominates (Mushroom, n2 ~ 800: 0.157 vs 0.112; 0.109 without the
  union; experiments/wu2021/README.md);
- ``cbound``: the C-bound 1 - (1 - 2 Lbar)^2 / (1 - 2 dlow), Lbar Seeger's upper bound on the Gibbs loss (exact
  xi(n), as ``_bounds.seeger_gibbs_bound``, delta/2) and dlow Seeger's lower bound on the disagreement (2 KL,
  xi(n2), delta/2); Germain et al. 2015's PAC-Bound 1 in Seeger's form;
- ``cbound_joint``: max of the C-bound over {(e, d) : kl((e_S, d_S) || (e, d)) <= (2 KL + ln((2 sqrt(n2) + n2) /
  delta)) / n2, (e + d/2)^2 <= e}, Germain et al.'s PAC-Bound 2 as Viallard et al. compute it.

Multiclass: the "disagreement" d used by the C-bounds is the probability that exactly one of two voters drawn from
rho errs, d = 2 (L(rho) - L(rho^2)); it is the usual disagreement for two classes, and with it the C-bound
1 - (1 - 2L)^2 / (1 - 2d) equals Cantelli's bound on the rho-mass of the wrong voters,
(L(rho^2) - L(rho)^2) / (L(rho^2) - L(rho) + 1/4), which holds for any number of classes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import minimize
from scipy.special import lambertw, logsumexp, xlogy

from forestlab.learners._bounds import c_bound, kl_inverse_lower, kl_inverse_upper, seeger_xi

__all__ = [
    "CCPBB_MU_GRID",
    "CERTIFICATES",
    "DELTA",
    "OOBStatistics",
    "SUCCESSOR_WEIGHTINGS",
    "cbound_joint_bound",
    "cbound_seeger_bound",
    "ccpbb_bound",
    "cctnd_bound",
    "certificates",
    "fo_bound",
    "learn_weights",
    "minimise_on_simplex",
    "objective",
    "oob_statistics",
    "tnd_bound",
]

DELTA = 0.05
SUCCESSOR_WEIGHTINGS = ("fo", "tnd", "cctnd", "ccpbb", "cbound_joint")
CERTIFICATES = ("fo", "tnd", "cctnd", "ccpbb", "cbound", "cbound_joint")
#: The mu values CCPBB searches (the reference's range [-0.5, 0.5), step 0.01); the certificate pays for them.
CCPBB_MU_GRID = np.round(np.arange(-0.5, 0.5, 0.01), 10)
#: Ratios of the lambda and gamma grids of CCPBB (Wu et al. 2021's c1, c2).
_C1 = _C2 = 1.05


# ---------------------------------------------------------------------------------------------------------------
# Out-of-bag statistics
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OOBStatistics:
    """The out-of-bag losses of m voters and of their pairs.

    Attributes
    ----------
    loss : ndarray of shape (m,)
        ``loss[h]``: the error rate of voter h on its out-of-bag points (0 where it has none).
    n_oob : ndarray of shape (m,), int
        Its number of out-of-bag points n_h.
    tandem : ndarray of shape (m, m)
        ``tandem[h, g]``: the rate of points where h and g both err, among the points out of bag for both.
    joint_loss : ndarray of shape (m, m)
        ``joint_loss[h, g]``: the error rate of h on the points out of bag for both h and g.
    n_joint : ndarray of shape (m, m), int
        The number n_hg of points out of bag for both (diagonal: n_h).
    """

    loss: np.ndarray
    n_oob: np.ndarray
    tandem: np.ndarray
    joint_loss: np.ndarray
    n_joint: np.ndarray

    @property
    def m(self) -> int:
        return int(self.loss.shape[0])

    @property
    def n(self) -> int:
        """min_h n_h, the sample size of the first-order bounds."""
        return int(self.n_oob.min()) if self.m else 0

    @property
    def n2(self) -> int:
        """min_{h,g} n_hg, the sample size of the second-order bounds."""
        return int(self.n_joint.min()) if self.m else 0

    @property
    def one_error(self) -> np.ndarray:
        """``[h, g]``: the rate of points (out of bag for both) where exactly one of h, g errs (the disagreement of
        two classes)."""
        return self.joint_loss + self.joint_loss.T - 2.0 * self.tandem

    def gibbs(self, rho: np.ndarray) -> float:
        return float(rho @ self.loss)

    def tandem_risk(self, rho: np.ndarray) -> float:
        return float(rho @ self.tandem @ rho)

    def disagreement(self, rho: np.ndarray) -> float:
        return float(rho @ self.one_error @ rho)

    def self_complemented(self) -> OOBStatistics:
        """The statistics of the 2m voters h_1..h_m, -h_1..-h_m of a binary vote (MinCq's): -h errs exactly where h
        is right, on the same out-of-bag points."""
        T, A = self.tandem, self.joint_loss
        # rates on the points out of bag for both: h errs and g is right = A[h, g] - T, both right = 1 - A - A' + T
        t_pn = A - T                       # (h, -g): h errs, g right
        t_nn = 1.0 - A - A.T + T           # (-h, -g)
        tandem = np.block([[T, t_pn], [t_pn.T, t_nn]])
        joint_loss = np.block([[A, A], [1.0 - A, 1.0 - A]])
        n_joint = np.tile(self.n_joint, (2, 2))
        # pairs without joint out-of-bag points carry zeros (their rates are undefined; n2 = 0 makes bounds vacuous)
        empty = n_joint == 0
        tandem[empty] = 0.0
        joint_loss[empty] = 0.0
        loss = np.concatenate([self.loss, np.where(self.n_oob > 0, 1.0 - self.loss, 0.0)])
        return OOBStatistics(loss, np.tile(self.n_oob, 2), tandem, joint_loss, n_joint)


def oob_statistics(pred_idx: np.ndarray, y_idx: np.ndarray, oob_mask: np.ndarray) -> OOBStatistics:
    """The out-of-bag statistics of m trees: three products of (m, N) indicator arrays.

    Parameters
    ----------
    pred_idx : ndarray of shape (m, N), integer
        Each tree's predicted class index on the N training points.
    y_idx : ndarray of shape (N,)
        The training labels as class indices.
    oob_mask : ndarray of shape (m, N), bool
        True where a point is out of a tree's bootstrap.

    Returns
    -------
    OOBStatistics
    """
    oob = np.asarray(oob_mask, dtype=bool)
    err = (np.asarray(pred_idx) != np.asarray(y_idx)[None, :]) & oob
    # counts are sums of 0/1 terms: exact in float32 below 2**24 points, in float64 otherwise
    dtype = np.float32 if err.shape[1] < 2 ** 24 else np.float64
    errs = err.astype(dtype)
    outs = oob.astype(dtype)
    both_err = np.rint(errs @ errs.T).astype(np.int64)
    n_joint = np.rint(outs @ outs.T).astype(np.int64)
    err_joint = np.rint(errs @ outs.T).astype(np.int64)
    n_oob = oob.sum(axis=1).astype(np.int64)
    denom = np.maximum(n_joint, 1)
    loss = err.sum(axis=1) / np.maximum(n_oob, 1)
    return OOBStatistics(loss=loss.astype(np.float64), n_oob=n_oob, tandem=both_err / denom,
                         joint_loss=err_joint / denom, n_joint=n_joint)


def _kl_uniform(rho: np.ndarray) -> float:
    """KL(rho || uniform) over the len(rho) voters."""
    return float(max(0.0, np.sum(xlogy(rho, rho * rho.size))))


def _kl_grad(rho: np.ndarray) -> np.ndarray:
    """Gradient of KL(rho || uniform) in rho (rho > 0)."""
    return np.log(rho * rho.size) + 1.0


# ---------------------------------------------------------------------------------------------------------------
# Certificates (kl-inverse forms)
# ---------------------------------------------------------------------------------------------------------------
def fo_bound(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA) -> float:
    """First-order bound 2 kl^-1+(L(rho), (KL + ln(2 sqrt(n)/delta)) / n), capped at 1."""
    n = stats.n
    if n < 1:
        return 1.0
    eps = (_kl_uniform(rho) + math.log(2.0 * math.sqrt(n) / delta)) / n
    return min(1.0, 2.0 * kl_inverse_upper(stats.gibbs(rho), eps))


def tnd_bound(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA) -> float:
    """Tandem bound 4 kl^-1+(L(rho^2), (2 KL + ln(2 sqrt(n2)/delta)) / n2), capped at 1."""
    n2 = stats.n2
    if n2 < 1:
        return 1.0
    eps = (2.0 * _kl_uniform(rho) + math.log(2.0 * math.sqrt(n2) / delta)) / n2
    return min(1.0, 4.0 * kl_inverse_upper(stats.tandem_risk(rho), eps))


def _cantelli_mu(upper_tandem: float, gibbs: float, sign: int) -> float:
    """min over mu (mu >= 0 for sign +1, mu <= 0 for sign -1, mu < 1/2) of (U - 2 mu g + mu^2) / (1/2 - mu)^2.

    The unconstrained minimiser is mu* = (g/2 - U) / (1/2 - g) when g < 1/2 (the function is unimodal on
    (-inf, 1/2)), clipped to the half-line; mu = 0 when g >= 1/2.
    """
    return _cantelli_value(upper_tandem, gibbs, _cantelli_argmin(upper_tandem, gibbs, sign))


def _cantelli_argmin(U: float, g: float, sign: int) -> float:
    if g >= 0.5:
        return 0.0
    mu = (0.5 * g - U) / (0.5 - g)
    return max(0.0, min(mu, 0.5 - 1e-12)) if sign > 0 else min(0.0, mu)


def _cantelli_value(U: float, g: float, mu: float) -> float:
    return (U - 2.0 * mu * g + mu * mu) / (0.5 - mu) ** 2


def cctnd_bound(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA) -> tuple[float, float]:
    """CCTND: (bound capped at 1, its mu). Both kl bounds at ln(4 sqrt(.)/delta) (delta/2 each)."""
    n, n2 = stats.n, stats.n2
    if n < 1 or n2 < 1:
        return 1.0, 0.0
    kl = _kl_uniform(rho)
    U = kl_inverse_upper(stats.tandem_risk(rho), (2.0 * kl + math.log(4.0 * math.sqrt(n2) / delta)) / n2)
    eps = (kl + math.log(4.0 * math.sqrt(n) / delta)) / n
    gibbs = stats.gibbs(rho)
    lo, hi = kl_inverse_lower(gibbs, eps), kl_inverse_upper(gibbs, eps)
    best = min((_cantelli_mu(U, lo, +1), _cantelli_argmin(U, lo, +1)),
               (_cantelli_mu(U, hi, -1), _cantelli_argmin(U, hi, -1)))
    # every mu < 1/2 gives a valid bound; on the event where the kl bounds hold the numerator is >= 0
    return min(1.0, max(0.0, best[0])), float(best[1])


def cbound_seeger_bound(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA) -> float:
    """C-bound from Seeger's upper bound on the Gibbs loss and lower bound on the disagreement (delta/2 each)."""
    n, n2 = stats.n, stats.n2
    if n < 1 or n2 < 1:
        return 1.0
    kl = _kl_uniform(rho)
    gibbs = kl_inverse_upper(stats.gibbs(rho), (kl + math.log(2.0 * seeger_xi(n) / delta)) / n)
    dis = kl_inverse_lower(stats.disagreement(rho), (2.0 * kl + math.log(2.0 * seeger_xi(n2) / delta)) / n2)
    return c_bound(gibbs, dis)


# --- CCPBB -----------------------------------------------------------------------------------------------------
def _mu_tandem_matrices(stats: OOBStatistics, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: the empirical mu-tandem loss E[(1[h errs] - mu)(1[g errs] - mu)] and its unbiased variance, on the
    points out of bag for both: with S = joint_loss + joint_loss^T,

    first = T - mu S + mu^2, second = (1 - 2 mu)^2 T + mu^2 (1 - 2 mu) S + mu^4,
    var = n_hg / (n_hg - 1) max(second - first^2, 0) where n_hg > 1, else 0,

    computed entry by entry by compiled code (:func:`~forestlab.learners._pacbayes_kernels.mu_tandem_matrices`,
    the numpy expressions' operations in their order, so the same matrices bit for bit)."""
    from forestlab.learners._pacbayes_kernels import mu_tandem_matrices

    mu = float(mu)
    return mu_tandem_matrices(np.ascontiguousarray(stats.tandem, dtype=np.float64),
                              np.ascontiguousarray(stats.joint_loss, dtype=np.float64),
                              np.ascontiguousarray(stats.n_joint), mu, mu * mu, (1.0 - 2.0 * mu) ** 2,
                              mu * mu * (1.0 - 2.0 * mu), mu ** 4)


@lru_cache(maxsize=4096)
def _ccpbb_grids(n2: int, mu: float, delta1: float, delta2: float) -> tuple[np.ndarray, float, np.ndarray, float]:
    """Wu et al. 2021's grids: t = lambda n2 / (2 (n2 - 1)) for the variance bound (k_lambda values) and gamma for
    PAC-Bayes-Bennett (k_gamma values), with ln(k_lambda) and ln(k_gamma k_lambda)."""
    K = max(1.0 - mu, 1.0 - 2.0 * mu)
    root = math.sqrt((n2 - 1.0) / math.log(1.0 / delta1) + 1.0)
    k_lam = max(1, math.ceil(math.log(0.5 * root + 0.5) / math.log(_C1)))
    t_grid = (1.0 / (root + 1.0)) * _C1 ** np.arange(k_lam)
    t_grid = t_grid[t_grid < 1.0]
    k4 = (1.0 - mu) ** 4
    c_min = (4.0 * k4 / (n2 * K * K) * math.log(1.0 / delta2) - 1.0) / math.e
    g_min = (1.0 + lambertw(c_min, k=0).real) / (1.0 - mu) ** 2
    ubar = 2.0 * K * K * math.log(1.0 / delta1) / (n2 - 1.0)
    alpha = 1.0 / (1.0 + k4 / ubar)
    g_max = -(lambertw(-alpha * math.exp(-alpha), k=-1).real + alpha) / (1.0 - mu) ** 2
    k_gam = max(1, math.ceil(math.log(max(g_max / g_min, 1.0 + 1e-12)) / math.log(_C2)))
    g_grid = g_min * _C2 ** np.arange(k_gam)
    return t_grid, math.log(k_lam), g_grid, math.log(k_gam * k_lam)


def _bennett_phi(gamma: np.ndarray | float, mu: float) -> np.ndarray | float:
    """phi(gamma (1 - mu)^2), phi(x) = e^x - x - 1 (PAC-Bayes-Bennett divides it by gamma (1 - mu)^4)."""
    x = np.asarray(gamma) * (1.0 - mu) ** 2
    return np.expm1(x) - x if np.ndim(x) else (math.expm1(float(x)) - float(x))


def _ccpbb_at_mu(stats: OOBStatistics, rho: np.ndarray, mu: float, kl: float, delta1: float,
                 delta2: float) -> float:
    """The CCPBB bound at one mu, lambda and gamma the best of their grids."""
    n2 = stats.n2
    first, var = _mu_tandem_matrices(stats, mu)
    loss_mu = float(rho @ first @ rho)
    var_hat = float(rho @ var @ rho)
    K = max(1.0 - mu, 1.0 - 2.0 * mu)
    t_grid, ln_kl, g_grid, ln_kgl = _ccpbb_grids(n2, float(mu), delta1, delta2)
    b_var = K * K * (2.0 * kl + ln_kl + math.log(1.0 / delta1)) / (2.0 * (n2 - 1.0))
    var_bound = float(np.min(var_hat / (1.0 - t_grid) + b_var / (t_grid * (1.0 - t_grid))))
    a = min(var_bound, K * K / 4.0)
    b = (2.0 * kl + ln_kgl + math.log(1.0 / delta2)) / n2
    coeff = _bennett_phi(g_grid, mu) / (g_grid * (1.0 - mu) ** 4)
    pbb = float(np.min(loss_mu + coeff * a + b / g_grid))
    return pbb / (0.5 - mu) ** 2


def ccpbb_bound(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA,
                mu_grid: np.ndarray = CCPBB_MU_GRID) -> tuple[float, float]:
    """CCPBB: (bound capped at 1, its mu), the min over ``mu_grid`` with a union bound over it (delta / |grid|,
    split in halves for the variance and the mu-tandem loss)."""
    n2 = stats.n2
    if n2 < 2:
        return 1.0, 0.0
    kl = _kl_uniform(rho)
    share = delta / (2.0 * len(mu_grid))
    values = [_ccpbb_at_mu(stats, rho, float(mu), kl, share, share) for mu in mu_grid]
    best = int(np.argmin(values))
    return min(1.0, float(values[best])), float(mu_grid[best])


# --- the joint C-bound -------------------------------------------------------------------------------------------
def _cb(e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The C-bound 1 - (1 - (2e + d))^2 / (1 - 2d) of a joint error e and a disagreement d; 1 where 2e + d >= 1 or
    d >= 1/2 (nothing certified), clipped to [0, 1]."""
    e, d = np.asarray(e, dtype=np.float64), np.asarray(d, dtype=np.float64)
    first = 1.0 - (2.0 * e + d)
    second = 1.0 - 2.0 * d
    with np.errstate(divide="ignore", invalid="ignore"):
        val = 1.0 - first * first / second
    return np.where((first <= 0.0) | (second <= 0.0), 1.0, np.clip(val, 0.0, 1.0))


def _kl_tri(q: tuple[float, float], e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """kl((q_e, q_d, 1 - q_e - q_d) || (e, d, 1 - e - d)), inf outside the simplex's support."""
    qe, qd = q
    qr = 1.0 - qe - qd
    r = 1.0 - e - d
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (xlogy(qe, qe) - xlogy(qe, e) + xlogy(qd, qd) - xlogy(qd, d) + xlogy(qr, qr) - xlogy(qr, r))
    return np.where((e < 0) | (d < 0) | (r < 0), np.inf, np.nan_to_num(out, nan=np.inf))


def _ray_limit(center: tuple[float, float], ue: np.ndarray, ud: np.ndarray, jensen: bool) -> np.ndarray:
    """Largest r >= 0 keeping (e, d) = center + r u in the simplex (and in {(e + d/2)^2 <= e} if ``jensen``)."""
    ce, cd = center
    big = np.full(ue.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(ue < 0, -ce / ue, big)
        r = np.minimum(r, np.where(ud < 0, -cd / ud, big))
        r = np.minimum(r, np.where(ue + ud > 0, (1.0 - ce - cd) / (ue + ud), big))
    r = np.maximum(r, 0.0)
    if jensen:  # (ce + r ul)^2 - (ce + r ue) <= 0 with l = e + d/2: a quadratic in r, negative at r = 0
        cl = ce + cd / 2.0
        ul = ue + ud / 2.0
        a, b, c = ul * ul, 2.0 * cl * ul - ue, cl * cl - ce
        with np.errstate(divide="ignore", invalid="ignore"):
            disc = np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))
            root = np.where(a > 1e-300, (-b + disc) / (2.0 * a), np.where(b > 0, -c / b, np.inf))
        r = np.minimum(r, np.maximum(root, 0.0))
    return r


def _ray_points(center: tuple[float, float], eps: float, theta: np.ndarray,
                jensen: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The farthest feasible point along each direction theta: (e, d, which) with which 1 where the kl-ball is the
    active constraint, 0 where the simplex or Jensen's constraint stops the ray first.

    kl(q || c + r u) is convex and increasing in r >= 0: 8 bisection steps bracket the crossing of eps, then Newton
    steps from the right end converge to it monotonically."""
    ue, ud = np.cos(theta), np.sin(theta)
    lim = _ray_limit(center, ue, ud, jensen)
    lim_fin = np.where(np.isfinite(lim), lim, 1.0)
    ce, cd = center
    qr = 1.0 - ce - cd
    const = float(xlogy(ce, ce) + xlogy(cd, cd) + xlogy(qr, qr))

    def f(r: np.ndarray) -> np.ndarray:  # kl(q || c + r u), inf outside the simplex
        e, d = ce + r * ue, cd + r * ud
        rest = 1.0 - e - d
        val = np.full(r.shape, const)
        if ce > 0:
            val -= ce * np.log(e)
        if cd > 0:
            val -= cd * np.log(d)
        if qr > 0:
            val -= qr * np.log(rest)
        return np.where((e < 0) | (d < 0) | (rest < 0) | np.isnan(val), np.inf, val)

    with np.errstate(divide="ignore", invalid="ignore"):
        inside = f(lim_fin) <= eps
        lo, hi = np.zeros_like(lim_fin), lim_fin.copy()
        for _ in range(8):
            mid = 0.5 * (lo + hi)
            ok = f(mid) <= eps
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        r = hi
        for _ in range(5):
            e, d = ce + r * ue, cd + r * ud
            slope = ((-ce * ue / e if ce > 0 else 0.0) + (-cd * ud / d if cd > 0 else 0.0)
                     + (qr * (ue + ud) / (1.0 - e - d) if qr > 0 else 0.0))
            step = (f(r) - eps) / slope
            step = np.where(np.isfinite(step) & (slope > 0), step, 0.0)
            r = np.clip(r - step, lo, hi)
    r = np.where(inside, lim_fin, r)
    return ce + r * ue, cd + r * ud, (~inside).astype(np.float64)


def _joint_max(e_hat: float, d_hat: float, eps: float) -> tuple[float, float, float, bool, bool]:
    """max of the C-bound over the trinomial kl-ball of radius eps around (e_hat, d_hat) intersected with Jensen's
    region {(e + d/2)^2 <= e} (dropped when the centre is outside it: a larger set, still a valid bound).

    The feasible set is convex and the C-bound quasi-concave, so its maximum lies on the boundary; the boundary is
    scanned along rays from the centre (90 directions), then refined around the best one (33 directions within
    4 degrees of it, then the vertex of the parabola through the best three).
    Returns (value, e*, d*, kl active, jensen used).
    """
    center = (float(e_hat), float(d_hat))
    jensen = (center[0] + center[1] / 2.0) ** 2 <= center[0] + 1e-15
    theta = np.linspace(0.0, 2.0 * np.pi, 90, endpoint=False)
    step = theta[1] - theta[0]
    for _ in range(2):
        e, d, active = _ray_points(center, eps, theta, jensen)
        vals = _cb(e, d)
        i = int(np.argmax(vals))
        best = (float(vals[i]), float(e[i]), float(d[i]), bool(active[i]))
        previous, theta = theta, theta[i] + np.linspace(-step, step, 33)
        step = theta[1] - theta[0]
    # the vertex of the parabola through the best direction and its neighbours (an angle error of step^3 or so)
    if 0 < i < len(previous) - 1:
        y0, y1, y2 = vals[i - 1], vals[i], vals[i + 1]
        curvature = y0 - 2.0 * y1 + y2
        if curvature < 0.0:
            h = previous[1] - previous[0]
            vertex = previous[i] + 0.5 * h * (y0 - y2) / curvature
            e, d, active = _ray_points(center, eps, np.array([vertex]), jensen)
            value = float(_cb(e, d)[0])
            if value > best[0]:
                best = (value, float(e[0]), float(d[0]), bool(active[0]))
    return (*best, jensen)


def cbound_joint_bound(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA) -> float:
    """Germain et al.'s PAC-Bound 2 (Viallard et al.'s joint C-bound) on the out-of-bag pairs (n2 points)."""
    n2 = stats.n2
    if n2 < 1:
        return 1.0
    eps = (2.0 * _kl_uniform(rho) + math.log((2.0 * math.sqrt(n2) + n2) / delta)) / n2
    return _joint_max(stats.tandem_risk(rho), stats.disagreement(rho), eps)[0]


def certificates(stats: OOBStatistics, rho: np.ndarray, delta: float = DELTA) -> dict[str, float]:
    """Every certificate of the vote of ``rho`` (see the module docstring), with the mu of CCTND and CCPBB, the
    out-of-bag Gibbs loss, tandem loss and disagreement, and n and n2."""
    rho = np.asarray(rho, dtype=np.float64)
    rho = rho / rho.sum()
    cctnd, mu_cctnd = cctnd_bound(stats, rho, delta)
    ccpbb, mu_ccpbb = ccpbb_bound(stats, rho, delta)
    return {
        "fo": fo_bound(stats, rho, delta),
        "tnd": tnd_bound(stats, rho, delta),
        "cctnd": cctnd,
        "ccpbb": ccpbb,
        "cbound": cbound_seeger_bound(stats, rho, delta),
        "cbound_joint": cbound_joint_bound(stats, rho, delta),
        "cctnd_mu": mu_cctnd,
        "ccpbb_mu": mu_ccpbb,
        "gibbs": stats.gibbs(rho),
        "tandem": stats.tandem_risk(rho),
        "disagreement": stats.disagreement(rho),
        "n": float(stats.n),
        "n2": float(stats.n2),
    }


# ---------------------------------------------------------------------------------------------------------------
# The learners' objectives (value and gradient in rho) and their minimisation
# ---------------------------------------------------------------------------------------------------------------
def _lambda_relaxation(a: float, b: float) -> tuple[float, float, float]:
    """min over lambda in (0, 2) of a / (1 - l/2) + b / (l (1 - l/2)), b > 0: (value, d/da, d/db), at
    l* = 2 / (sqrt(2a/b + 1) + 1)."""
    lam = 2.0 / (math.sqrt(2.0 * max(a, 0.0) / b + 1.0) + 1.0)
    da, db = 1.0 / (1.0 - lam / 2.0), 1.0 / (lam * (1.0 - lam / 2.0))
    return a * da + b * db, da, db


def _fo_objective(stats: OOBStatistics, rho: np.ndarray, delta: float) -> tuple[float, np.ndarray, dict]:
    n = stats.n
    v, da, db = _lambda_relaxation(stats.gibbs(rho), (_kl_uniform(rho) + math.log(2.0 * math.sqrt(n) / delta)) / n)
    return 2.0 * v, 2.0 * (da * stats.loss + db * _kl_grad(rho) / n), {}


def _tnd_objective(stats: OOBStatistics, rho: np.ndarray, delta: float) -> tuple[float, np.ndarray, dict]:
    n2 = stats.n2
    c = math.log(2.0 * math.sqrt(n2) / delta)
    v, da, db = _lambda_relaxation(stats.tandem_risk(rho), (2.0 * _kl_uniform(rho) + c) / n2)
    return 4.0 * v, 4.0 * (da * 2.0 * (stats.tandem @ rho) + db * 2.0 * _kl_grad(rho) / n2), {}


def _cctnd_objective(stats: OOBStatistics, rho: np.ndarray, delta: float) -> tuple[float, np.ndarray, dict]:
    n, n2 = stats.n, stats.n2
    kl = _kl_uniform(rho)
    kg = _kl_grad(rho)
    U, ua, ub = _lambda_relaxation(stats.tandem_risk(rho), (2.0 * kl + math.log(4.0 * math.sqrt(n2) / delta)) / n2)
    dU = ua * 2.0 * (stats.tandem @ rho) + ub * 2.0 * kg / n2
    gibbs = stats.gibbs(rho)
    c = (kl + math.log(4.0 * math.sqrt(n) / delta)) / n
    # relaxed lower bound max over gamma in (0, 2] of (1 - gamma/2) L - c / gamma, clipped at 0
    gamma = min(2.0, math.sqrt(2.0 * c / gibbs)) if gibbs > 0 else 2.0
    lo = (1.0 - gamma / 2.0) * gibbs - c / gamma
    dlo = ((1.0 - gamma / 2.0) * stats.loss - kg / (n * gamma)) if lo > 0 else np.zeros_like(rho)
    lo = max(lo, 0.0)
    hi, ha, hb = _lambda_relaxation(gibbs, c)
    dhi = ha * stats.loss + hb * kg / n
    options = []
    for g, dg, sign in ((lo, dlo, +1), (hi, dhi, -1)):
        mu = _cantelli_argmin(U, g, sign)
        value = _cantelli_value(U, g, mu)
        grad = (dU - 2.0 * mu * dg) / (0.5 - mu) ** 2
        options.append((value, grad, {"mu": mu}))
    best = min(options, key=lambda o: o[0])
    return best


def _ccpbb_objective_at(stats: OOBStatistics, mu: float, delta: float,
                        n_mu: int) -> Callable[[np.ndarray], tuple[float, np.ndarray, dict]]:
    """CCPBB at a fixed mu with lambda and gamma continuous (their closed forms), the constants of the certificate."""
    n2 = stats.n2
    share = delta / (2.0 * n_mu)
    first, var = _mu_tandem_matrices(stats, mu)
    K = max(1.0 - mu, 1.0 - 2.0 * mu)
    k4 = (1.0 - mu) ** 4
    _, ln_kl, _, ln_kgl = _ccpbb_grids(n2, float(mu), share, share)
    scale = 1.0 / (0.5 - mu) ** 2

    def fun(rho: np.ndarray) -> tuple[float, np.ndarray, dict]:
        kl = _kl_uniform(rho)
        kg = _kl_grad(rho)
        f_rho, v_rho = first @ rho, var @ rho
        loss_mu, var_hat = float(rho @ f_rho), float(rho @ v_rho)
        b_var = K * K * (2.0 * kl + ln_kl + math.log(1.0 / share)) / (2.0 * (n2 - 1.0))
        db_var = K * K * 2.0 * kg / (2.0 * (n2 - 1.0))
        t = 1.0 / (math.sqrt(max(var_hat, 0.0) / b_var + 1.0) + 1.0)
        vb = var_hat / (1.0 - t) + b_var / (t * (1.0 - t))
        dvb = 2.0 * v_rho / (1.0 - t) + db_var / (t * (1.0 - t))
        if vb >= K * K / 4.0:
            a, da = K * K / 4.0, np.zeros_like(rho)
        else:
            a, da = vb, dvb
        b = (2.0 * kl + ln_kgl + math.log(1.0 / share)) / n2
        db = 2.0 * kg / n2
        arg = (k4 * b / a - 1.0) / math.e
        gamma = (1.0 + lambertw(arg, k=0).real) / (1.0 - mu) ** 2
        coeff = _bennett_phi(gamma, mu) / (gamma * k4)
        value = (loss_mu + coeff * a + b / gamma) * scale
        grad = (2.0 * f_rho + coeff * da + db / gamma) * scale
        return value, grad, {"mu": mu, "gamma": gamma, "t": t}

    return fun


def _cbound_joint_objective(stats: OOBStatistics, rho: np.ndarray, delta: float) -> tuple[float, np.ndarray, dict]:
    """The joint C-bound and its gradient: by the envelope theorem, with the Lagrange multiplier(s) of the active
    constraint(s) at the maximiser (the kl-ball's depends on rho, Jensen's does not)."""
    n2 = stats.n2
    kl = _kl_uniform(rho)
    D = stats.one_error
    e_hat, d_hat = stats.tandem_risk(rho), stats.disagreement(rho)
    eps = (2.0 * kl + math.log((2.0 * math.sqrt(n2) + n2) / delta)) / n2
    value, e, d, kl_active, jensen = _joint_max(e_hat, d_hat, eps)
    zero = np.zeros_like(rho)
    if not kl_active or value >= 1.0 or value <= 0.0:
        return value, zero, {}
    # gradient of C at (e, d)
    first, second = 1.0 - 2.0 * e - d, 1.0 - 2.0 * d
    dC = np.array([4.0 * first / second, 2.0 * first / second - 2.0 * first * first / second ** 2])
    # gradient of k(q, p) = kl(q || p) in p, and in q
    r, q_r = 1.0 - e - d, 1.0 - e_hat - d_hat
    dk_p = np.array([-e_hat / e + q_r / r if e > 0 else q_r / r, -d_hat / d + q_r / r if d > 0 else q_r / r])

    def dlog(qi: float, pi: float) -> float:
        return math.log(qi / pi) if qi > 0 else 0.0

    tail = dlog(q_r, r)
    dk_q = np.array([dlog(e_hat, e) - tail, dlog(d_hat, d) - tail])
    lam = None
    if jensen:  # both constraints active? Jensen's g(p) = (e + d/2)^2 - e
        g = (e + d / 2.0) ** 2 - e
        if abs(g) < 1e-9:
            gibbs = e + d / 2.0
            dg = np.array([2.0 * gibbs - 1.0, gibbs])
            M = np.column_stack([dk_p, dg])
            if abs(np.linalg.det(M)) > 1e-14:
                lam = float(np.linalg.solve(M, dC)[0])
    if lam is None:
        lam = float(dC @ dk_p / (dk_p @ dk_p))
    lam = max(lam, 0.0)
    grad = -lam * (dk_q[0] * 2.0 * (stats.tandem @ rho) + dk_q[1] * 2.0 * (D @ rho)) + lam * 2.0 * _kl_grad(rho) / n2
    return value, grad, {}


def objective(weighting: str, stats: OOBStatistics, delta: float = DELTA,
              mu: float | None = None) -> Callable[[np.ndarray], tuple[float, np.ndarray, dict]]:
    """The function of rho that ``weighting`` minimises: rho -> (value, gradient in rho, auxiliary values).

    For ``ccpbb`` it is the bound at a fixed ``mu`` (required) with lambda and gamma continuous.
    """
    if weighting == "fo":
        return lambda rho: _fo_objective(stats, rho, delta)
    if weighting == "tnd":
        return lambda rho: _tnd_objective(stats, rho, delta)
    if weighting == "cctnd":
        return lambda rho: _cctnd_objective(stats, rho, delta)
    if weighting == "ccpbb":
        if mu is None:
            raise ValueError("the ccpbb objective needs mu")
        return _ccpbb_objective_at(stats, float(mu), delta, len(CCPBB_MU_GRID))
    if weighting == "cbound_joint":
        return lambda rho: _cbound_joint_objective(stats, rho, delta)
    raise ValueError(f"unknown weighting {weighting!r}; valid: {', '.join(SUCCESSOR_WEIGHTINGS)}")


def _softmax(theta: np.ndarray) -> np.ndarray:
    return np.exp(theta - logsumexp(theta))


#: L-BFGS stops when the objective fell by less than STALL_TOL over the last STALL_WINDOW iterations: with large
#: samples many trees end with weights near 1e-8, which softmax(theta) approaches only slowly, for gains far below
#: any digit a table shows (the bounds are in [0, 4]).
STALL_WINDOW, STALL_TOL = 10, 1e-9


def minimise_on_simplex(fun: Callable[[np.ndarray], tuple[float, np.ndarray, dict]], rho0: np.ndarray, *,
                        max_iter: int = 1000) -> tuple[np.ndarray, int]:
    """Minimise fun(rho) over the open simplex, rho = softmax(theta), by L-BFGS on theta; (rho, iterations).

    Stops at L-BFGS's own tolerances or when the objective stalls (``STALL_WINDOW``, ``STALL_TOL``)."""
    def f(theta: np.ndarray) -> tuple[float, np.ndarray]:
        rho = _softmax(theta)
        value, grad, _ = fun(rho)
        return value, rho * (grad - rho @ grad)

    history: list[float] = []
    best: list[np.ndarray] = [np.log(rho0)]

    def stalled(intermediate_result) -> None:  # noqa: ANN001 - scipy's OptimizeResult
        history.append(float(intermediate_result.fun))
        best[0] = np.array(intermediate_result.x)
        if len(history) > STALL_WINDOW and (
                history[-1 - STALL_WINDOW] - history[-1] <= STALL_TOL):
            raise StopIteration

    res = minimize(f, np.log(rho0), jac=True, method="L-BFGS-B", callback=stalled,
                   options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 20})
    rho = _softmax(res.x)
    start = fun(rho0)[0]
    # never worse than the start (L-BFGS returns its best point, but a flat objective may leave it in place)
    return (rho if fun(rho)[0] <= start else rho0), int(res.nit)


def _fo_weights(stats: OOBStatistics, delta: float, max_iter: int = 1000) -> tuple[np.ndarray, int]:
    """Thiemann et al.'s alternation: lambda* given rho, then the Gibbs rho ~ exp(-lambda n L_h), until the bound
    stops decreasing (by more than 1e-12)."""
    m, n = stats.m, stats.n
    rho = np.full(m, 1.0 / m)
    value = _fo_objective(stats, rho, delta)[0]
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        kl = _kl_uniform(rho)
        c = kl + math.log(2.0 * math.sqrt(n) / delta)
        lam = 2.0 / (math.sqrt(2.0 * n * stats.gibbs(rho) / c + 1.0) + 1.0)
        new = _softmax(-lam * n * stats.loss)
        new_value = _fo_objective(stats, new, delta)[0]
        if new_value > value - 1e-12:
            if new_value < value:
                rho, value = new, new_value
            break
        rho, value = new, new_value
    return rho, it


def learn_weights(weighting: str, stats: OOBStatistics, delta: float = DELTA) -> tuple[np.ndarray, dict[str, float]]:
    """rho minimising ``weighting``'s objective on the out-of-bag statistics, and facts about the fit
    (``objective``: its value; ``iterations``; ``mu`` for cctnd and ccpbb; ``degenerate``: 1 when the statistics
    cannot support a bound (a tree or a pair of trees without out-of-bag points) and rho is left uniform)."""
    m = stats.m
    uniform = np.full(m, 1.0 / m)
    if stats.n < 1 or stats.n2 < 2:
        return uniform, {"objective": 1.0, "iterations": 0.0, "degenerate": 1.0}
    if weighting == "fo":
        rho, it = _fo_weights(stats, delta)
        return rho, {"objective": _fo_objective(stats, rho, delta)[0], "iterations": float(it), "degenerate": 0.0}
    if weighting == "ccpbb":
        # alternate: rho optimal at mu, then mu the best of the grid at rho, until the objective stops decreasing
        def best_mu(rho: np.ndarray) -> tuple[float, float]:
            vals = [objective("ccpbb", stats, delta, mu=float(mu))(rho)[0] for mu in CCPBB_MU_GRID]
            i = int(np.argmin(vals))
            return float(CCPBB_MU_GRID[i]), float(vals[i])

        rho = uniform
        mu, value = best_mu(rho)
        total = 0
        for _ in range(20):
            new, it = minimise_on_simplex(objective("ccpbb", stats, delta, mu=mu), rho)
            total += it
            new_mu, new_value = best_mu(new)
            if new_value > value - 1e-12 or new_mu == mu:  # no gain, or rho is already optimal at the best mu
                if new_value < value:
                    rho, mu, value = new, new_mu, new_value
                break
            rho, mu, value = new, new_mu, new_value
        return rho, {"objective": value, "iterations": float(total), "mu": mu, "degenerate": 0.0}
    fun = objective(weighting, stats, delta)
    rho, it = minimise_on_simplex(fun, uniform)
    value, _, aux = fun(rho)
    return rho, {"objective": float(value), "iterations": float(it), "degenerate": 0.0,
                 **{k: float(v) for k, v in aux.items()}}
