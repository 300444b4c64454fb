"""PAC-Bayes quantities of a weighted majority vote, computed on a sample (zirakiza2013 digest §2.3, §2.4).

Everything is expressed through the vote's *class mass*: for a distribution Q over voters,
``mass[k, p] = sum_h Q(h) 1{h(x_k) = p}`` (rows sum to 1). From it:

- Gibbs risk R(G_Q) = E_{h~Q} 1{h(x) != y} = 1 - mean_k mass[k, y_k];
- expected disagreement d_Q = E_{(h,h')~Q^2} 1{h(x) != h'(x)} = 1 - mean_k sum_p mass[k, p]^2 (binary: the usual
  disagreement; multiclass: the expected pairwise disagreement);
- margin M_Q(x, y) = mass[y] - max_{p != y} mass[p] (eq. 2.3), whose sign decides the vote.

Bounds:

- C-bound (Cantelli-Chebyshev, eq. 4.13-4.15): R(B_Q) <= 1 - E[M]^2 / E[M^2] when E[M] > 0. In the binary case
  E[M] = 1 - 2 R(G_Q) and E[M^2] = 1 - 2 d_Q, giving 1 - (1 - 2R)^2 / (1 - 2d) (:func:`c_bound`). On the sample it
  bounds the sample's vote error (Cantelli holds for the empirical distribution), ties counted as errors.
- Seeger's (Langford-Seeger) PAC-Bayes bound (Cor. 6): with probability >= 1 - delta,
  kl(R_S(G_Q) || R(G_Q)) <= [KL(Q || P) + ln(xi(m) / delta)] / m, with the exact xi(m); inverted by bisection.
  Doubled (Lemma 4, R(B_Q) <= 2 R(G_Q)) it bounds the vote's true risk (``pac_bayes_bound`` of
  :func:`pac_bayes_diagnostics`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln, logsumexp, xlogy

__all__ = [
    "c_bound",
    "c_bound_from_margins",
    "disagreement",
    "effective_number",
    "gibbs_risk",
    "kl_bernoulli",
    "kl_inverse_lower",
    "kl_inverse_upper",
    "kl_to_uniform",
    "pac_bayes_diagnostics",
    "seeger_gibbs_bound",
    "seeger_xi",
    "vote_margins",
]


def gibbs_risk(mass: np.ndarray, y_idx: np.ndarray) -> float:
    """Empirical Gibbs risk 1 - mean_k mass[k, y_k]."""
    mass = np.asarray(mass, dtype=np.float64)
    return float(1.0 - np.mean(mass[np.arange(mass.shape[0]), np.asarray(y_idx)]))


def disagreement(mass: np.ndarray) -> float:
    """Empirical expected disagreement 1 - mean_k sum_p mass[k, p]^2 of two voters drawn from Q."""
    mass = np.asarray(mass, dtype=np.float64)
    return float(1.0 - np.mean(np.sum(mass * mass, axis=1)))


def vote_margins(mass: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
    """Margins mass[k, y_k] - max_{p != y_k} mass[k, p] (the largest other mass is 0 with a single class)."""
    mass = np.asarray(mass, dtype=np.float64)
    rows = np.arange(mass.shape[0])
    y_idx = np.asarray(y_idx)
    right = mass[rows, y_idx]
    others = mass.copy()
    others[rows, y_idx] = -np.inf
    best_other = others.max(axis=1) if mass.shape[1] > 1 else np.zeros(mass.shape[0])
    return right - best_other


def c_bound(gibbs: float, disagree: float) -> float:
    """Binary C-bound 1 - (1 - 2R)^2 / (1 - 2d), in [0, 1].

    Guards: 1 (vacuous) when R >= 1/2 (the margin's mean is not positive) or when 1 - 2d <= 0.
    """
    first = 1.0 - 2.0 * gibbs
    second = 1.0 - 2.0 * disagree
    if first <= 0.0 or second <= 0.0:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - first * first / second)))


def c_bound_from_margins(margins: np.ndarray) -> float:
    """C-bound 1 - E[M]^2 / E[M^2] from margins (any number of classes), in [0, 1]; 1 when E[M] <= 0."""
    margins = np.asarray(margins, dtype=np.float64)
    first = float(np.mean(margins))
    second = float(np.mean(margins * margins))
    if first <= 0.0 or second <= 0.0:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - first * first / second)))


def kl_bernoulli(q: float, p: float) -> float:
    """kl(q || p) = q ln(q/p) + (1-q) ln((1-q)/(1-p)) between Bernoulli laws (inf when p is 0 or 1 and q is not)."""
    q = min(max(float(q), 0.0), 1.0)
    p = min(max(float(p), 0.0), 1.0)
    with np.errstate(divide="ignore"):
        return float(xlogy(q, q) - xlogy(q, p) + xlogy(1.0 - q, 1.0 - q) - xlogy(1.0 - q, 1.0 - p))


def _kl_boundary(q: float, bound: float, inside: float, outside: float, tol: float) -> float:
    """Bisection for the end of {p : kl(q || p) <= bound} between ``inside`` (in the set) and ``outside`` (not in
    it; kl(q || .) is monotone between them): the last point found outside, within ``tol`` of the boundary."""
    while abs(outside - inside) > tol:
        mid = 0.5 * (inside + outside)
        if kl_bernoulli(q, mid) <= bound:
            inside = mid
        else:
            outside = mid
    return outside


def kl_inverse_upper(q: float, bound: float, *, tol: float = 1e-12) -> float:
    """sup {p in [q, 1] : kl(q || p) <= bound}, by bisection (kl(q || .) increases on [q, 1])."""
    q = min(max(float(q), 0.0), 1.0)
    if bound <= 0.0:
        return q
    if kl_bernoulli(q, 1.0) <= bound:
        return 1.0
    return _kl_boundary(q, bound, q, 1.0, tol)


def kl_inverse_lower(q: float, bound: float, *, tol: float = 1e-12) -> float:
    """inf {p in [0, q] : kl(q || p) <= bound}, by bisection (kl(q || .) decreases on [0, q])."""
    q = min(max(float(q), 0.0), 1.0)
    if bound <= 0.0:
        return q
    if kl_bernoulli(q, 0.0) <= bound:
        return 0.0
    return _kl_boundary(q, bound, q, 0.0, tol)


@lru_cache(maxsize=64)
def seeger_xi(m: int) -> float:
    """xi(m) = sum_{k=0}^{m} C(m, k) (k/m)^k (1 - k/m)^(m-k) (sqrt(m) <= xi(m) <= 2 sqrt(m) for m >= 8)."""
    m = int(m)
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    k = np.arange(m + 1, dtype=np.float64)
    log_terms = (gammaln(m + 1.0) - gammaln(k + 1.0) - gammaln(m - k + 1.0) + xlogy(k, k / m)
                 + xlogy(m - k, 1.0 - k / m))
    return float(np.exp(logsumexp(log_terms)))


def seeger_gibbs_bound(empirical_gibbs: float, kl: float, m: int, delta: float = 0.05) -> float:
    """Seeger's upper bound on the true Gibbs risk: kl^{-1}(R_S, [KL(Q||P) + ln(xi(m)/delta)] / m)."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    rhs = (max(float(kl), 0.0) + math.log(seeger_xi(m) / delta)) / m
    return kl_inverse_upper(empirical_gibbs, rhs)


def kl_to_uniform(distribution: np.ndarray) -> float:
    """KL(Q || uniform) = sum_i Q_i ln(N Q_i) over the N entries of ``distribution`` (normalised here)."""
    q = np.asarray(distribution, dtype=np.float64)
    q = q / q.sum()
    return float(max(0.0, np.sum(xlogy(q, q * q.size))))


def effective_number(weights: np.ndarray) -> float:
    """Inverse Simpson index (sum_i |w_i|)^2 / sum_i w_i^2: N for N equal weights, 1 for a single nonzero one."""
    w = np.abs(np.asarray(weights, dtype=np.float64))
    total = float(w.sum())
    return float(total * total / np.sum(w * w)) if total > 0 else float("nan")


def pac_bayes_diagnostics(mass: np.ndarray, y_idx: np.ndarray, distribution: np.ndarray,
                          tree_weights: np.ndarray, *, delta: float = 0.05) -> dict[str, float]:
    """The diagnostics of a weighted vote on its training sample.

    Parameters
    ----------
    mass : ndarray of shape (m, n_classes)
        The vote's class mass on the training sample (rows sum to 1).
    y_idx : ndarray of shape (m,)
        Training labels as class indices.
    distribution : ndarray
        Q over the prior's voters (the prior is uniform over these voters): the n trees, or the 2n voters
        {h_i, -h_i} of a self-complemented vote.
    tree_weights : ndarray of shape (n_trees,)
        Each tree's net weight in the vote (for the effective number of trees).
    delta : float, default=0.05
        Confidence parameter of the PAC-Bayes bound.

    Returns
    -------
    dict of str to float
        ``gibbs_risk``, ``disagreement``, ``c_bound`` (binary formula with two classes, margin form otherwise),
        ``kl_uniform``, ``gibbs_risk_bound`` (Seeger), ``pac_bayes_bound`` (2 x Seeger, capped at 1),
        ``effective_trees`` (inverse Simpson index of the trees' |net weights|).
    """
    mass = np.asarray(mass, dtype=np.float64)
    m, n_classes = mass.shape
    gibbs = gibbs_risk(mass, y_idx)
    disagree = disagreement(mass)
    if n_classes == 2:
        cb = c_bound(gibbs, disagree)
    else:
        cb = c_bound_from_margins(vote_margins(mass, y_idx))
    kl = kl_to_uniform(distribution)
    gibbs_bound = seeger_gibbs_bound(gibbs, kl, m, delta)
    return {
        "gibbs_risk": gibbs,
        "disagreement": disagree,
        "c_bound": cb,
        "kl_uniform": kl,
        "gibbs_risk_bound": gibbs_bound,
        "pac_bayes_bound": float(min(1.0, 2.0 * gibbs_bound)),
        "effective_trees": effective_number(tree_weights),
    }
