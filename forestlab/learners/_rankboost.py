"""RankBoost.B: boosting for bipartite ranking (Freund, Iyer, Schapire & Singer 2003; depecker2010 §2.14).

RankBoost minimises the exponential pairwise loss Σ_{x+, x−} exp(−(s(x+) − s(x−))) of a score
s(x) = Σ_t α_t h_t(x) by boosting: round t keeps a distribution D_t over the (positive, negative) pairs, picks a
weak ranker h_t, a step α_t, and reweights D_{t+1}(x+, x−) ∝ D_t(x+, x−) exp(−α_t (h_t(x+) − h_t(x−))).

**Bipartite data (RankBoost.B, §3.3 of the paper).** The initial distribution is uniform over the n+ n− pairs,
D_1 = v(x+) v(x−) with v = 1/n+ on the positives and 1/n− on the negatives, and the update keeps the product form:
v(x+) ∝ v(x+) exp(−α h(x+)) over the positives, v(x−) ∝ v(x−) exp(+α h(x−)) over the negatives, each side
renormalised to sum 1 (the pair normaliser Z_t is the product of the two sides'). The pairs are never materialised:
a round costs O(n × n_features) after one sort of every feature in ``fit``. The weights are kept as logarithms, so a
long run on separable data does not underflow them.

**Weak rankers.** Threshold stumps on one variable, {0, 1}-valued: h(x) = 1[x_j > θ] (``sign_ = +1``) or the
reversed stump h(x) = 1[x_j ≤ θ] (``sign_ = −1``). With p = V+(h = 1), q = V−(h = 1) the shares of the positives' and
negatives' weights on the stump's upper side, the weight of the pairs it orders correctly is W+ = p (1 − q), of those
it orders wrongly W− = (1 − p) q, and r = Σ_pairs D (h(x+) − h(x−)) = W+ − W− = p − q. The reversed stump has −r.
Each round picks the stump maximising |r| (the weak learner of Freund et al. §4.2) and orients it so that r ≥ 0
(hence α ≥ 0). Ties of |r| (within 1e-12) go to the lowest variable index, then the lowest threshold.

**Threshold candidates** (digest §6 item 8): for each variable, the midpoints between consecutive distinct training
values (a variable with a single value offers none). Any θ between two consecutive values splits the training points
the same way; the midpoint only decides where new points fall.

**Step rule** (digest §6 item 8), ``step``:

- ``"exact"`` (default): the exact minimiser of Z(α) = W0 + W+ e^{−α} + W− e^{α} for {0, 1}-valued weak rankers
  (W0 = 1 − W+ − W−, the pairs the stump ties): α = ½ ln((W+ + ε) / (W− + ε)), smoothed with ε = 1/(n+ n−), the
  initial weight of one pair, so that a stump separating the training classes gets a finite step (about
  ½ ln(n+ n−));
- ``"approx"``: α = ½ ln((1 + r + ε) / (1 − r + ε)), the minimiser of the convexity bound
  Z ≤ ((1 − r)/2) e^{α} + ((1 + r)/2) e^{−α} (paper eq. (6)), same ε.

The thesis describes ±1-valued stumps g = 2h − 1; with the exact step the two forms give the same distributions and
scores up to a constant (a = α/2, Σ a g = Σ α h − Σ a), so the same ranking. The training ranking loss (the share
of (positive, negative) pairs with s(x+) ≤ s(x−)) is at most Π_t Z_t (paper Theorem 1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.metrics import roc_auc_score
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import BipartiteRankerMixin, IntNotBool, RunReportMixin

__all__ = ["RankBoost", "stump_candidates"]

#: Ties of |r| within this tolerance go to the first (variable, threshold) in index order.
TIE_TOL = 1e-12


def stump_candidates(X_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The threshold candidates of every variable: midpoints between consecutive distinct sorted values.

    Parameters
    ----------
    X_sorted : ndarray of shape (n_samples, n_features)
        Each column sorted increasingly.

    Returns
    -------
    valid : ndarray of bool, shape (n_samples − 1, n_features)
        Whether the gap between the k-th and (k+1)-th sorted values of a variable is a candidate (the values differ).
    thresholds : ndarray of float64, shape (n_samples − 1, n_features)
        The midpoints (the lower value where the midpoint rounds up to the upper one, so that 1[x > θ] still puts
        the upper value above θ); meaningful where ``valid``.

    >>> valid, thresholds = stump_candidates(np.array([[0.0], [0.0], [1.0], [3.0]]))
    >>> valid.ravel(), thresholds[valid]
    (array([False,  True,  True]), array([0.5, 2. ]))
    """
    lower, upper = X_sorted[:-1], X_sorted[1:]
    valid = upper > lower
    mid = lower / 2.0 + upper / 2.0
    thresholds = np.where(mid >= upper, lower, mid)
    return valid, thresholds


class RankBoost(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """RankBoost.B with threshold stumps (Freund et al. 2003); a bipartite ranker.

    See the module docstring for the pair distribution, the weak rankers, the threshold candidates and the step rule.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of boosting rounds T (T = 100 in depecker2010). Fewer stumps are kept only if no variable offers a
        threshold (every variable constant), in which case there are none and every score is 0.
    step : {"exact", "approx"}, default="exact"
        The step rule: the exact minimiser of Z for {0, 1}-valued stumps, α = ½ ln((W+ + ε)/(W− + ε)), or
        α = ½ ln((1 + r + ε)/(1 − r + ε)); ε = 1/(n+ n−).
    random_state : int, RandomState instance or None, default=None
        Unused (RankBoost is deterministic); accepted because the runner passes one to every learner.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1) is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_ : ndarray of int64, shape (n_stumps,)
        The variable of each round's stump.
    threshold_ : ndarray of float64, shape (n_stumps,)
        Its threshold θ.
    sign_ : ndarray of int64, shape (n_stumps,)
        +1 for h(x) = 1[x_j > θ], −1 for h(x) = 1[x_j ≤ θ].
    alpha_ : ndarray of float64, shape (n_stumps,)
        The steps (≥ 0). The score is s(x) = Σ_t alpha_[t] h_t(x).
    r_ : ndarray of float64, shape (n_stumps,)
        r = W+ − W− of each chosen stump under that round's distribution (≥ 0).
    Z_ : ndarray of float64, shape (n_stumps,)
        The pair normaliser of each round, W0 + W+ e^{−α} + W− e^{α}; 1 − AUC on the training data is at most
        their product.
    train_auc_ : float
        AUC of the training scores.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    >>> ranker = RankBoost(n_estimators=20).fit(X, 2 * y - 1)
    >>> len(ranker.alpha_), round(ranker.train_auc_, 2) > 0.9
    (20, True)
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_estimators": [IntNotBool(1, None, closed="left")],
        "step": [StrOptions({"exact", "approx"})],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_estimators: int = 100, step: str = "exact",
                 random_state: int | np.random.RandomState | None = None) -> None:
        self.n_estimators = n_estimators
        self.step = step
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> RankBoost:
        """Run the boosting rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (+1 = positive), both present. Any two labels are accepted, the greater one being
            the positive class (``classes_[1]``).

        Returns
        -------
        self : RankBoost
            The fitted ranker.

        Raises
        ------
        ValueError
            If the labels are not exactly two classes.
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "RankBoost")
        self.classes_ = classes
        pos = codes == 1
        n_pos, n_neg = int(pos.sum()), int((~pos).sum())
        eps = 1.0 / (n_pos * n_neg)

        n_samples, n_features = X.shape
        order = np.argsort(X, axis=0, kind="stable")  # the one sort per variable
        valid, thresholds = stump_candidates(np.take_along_axis(X, order, axis=0))
        any_candidate = bool(valid.any())
        n_gaps = n_samples - 1
        # feature-major flat index over (variable, gap): the first maximum is the lowest variable, lowest threshold
        valid_flat = valid.T.ravel()

        log_v = np.where(pos, -np.log(n_pos), -np.log(n_neg))
        features, thetas, signs, alphas, rs, zs = [], [], [], [], [], []
        for _ in range(self.n_estimators if any_candidate else 0):
            v = np.exp(log_v)
            signed = np.where(pos, v, -v)[order]  # (n, p): +v(x+), −v(x−) in each variable's sorted order
            # r of 1[x_j > θ_k] = Σ of the signed weights above gap k: reversed cumulative sums
            above = np.cumsum(signed[::-1], axis=0)[::-1][1:]
            abs_r = np.where(valid, np.abs(above), -1.0).T.ravel()
            best = abs_r.max()
            flat = int(np.argmax(valid_flat & (abs_r >= best - TIE_TOL)))
            j, k = divmod(flat, n_gaps)
            theta = float(thresholds[k, j])
            sign = 1 if above[k, j] >= 0 else -1
            h = X[:, j] > theta if sign > 0 else X[:, j] <= theta
            alpha, r, z = _step(v, pos, h, eps, self.step)
            features.append(j)
            thetas.append(theta)
            signs.append(sign)
            alphas.append(alpha)
            rs.append(r)
            zs.append(z)
            # D_{t+1}(x+, x−) ∝ D_t exp(−α (h(x+) − h(x−))): each side reweighted and renormalised on its own
            log_v = log_v + np.where(pos, -alpha, alpha) * h
            log_v = np.where(pos, log_v - logsumexp(log_v[pos]), log_v - logsumexp(log_v[~pos]))

        self.feature_ = np.asarray(features, dtype=np.int64)
        self.threshold_ = np.asarray(thetas, dtype=np.float64)
        self.sign_ = np.asarray(signs, dtype=np.int64)
        self.alpha_ = np.asarray(alphas, dtype=np.float64)
        self.r_ = np.asarray(rs, dtype=np.float64)
        self.Z_ = np.asarray(zs, dtype=np.float64)
        self.train_auc_ = float(roc_auc_score(pos, self._scores(X)))
        return self

    # ------------------------------------------------------------------------------------------------------------
    def _weak_outputs(self, X: np.ndarray) -> np.ndarray:
        """h_t(x) of every stump, as an (n_samples, n_stumps) array of 0.0 / 1.0."""
        upper = X[:, self.feature_] > self.threshold_
        return np.where(self.sign_ > 0, upper, ~upper).astype(np.float64)

    def _scores(self, X: np.ndarray) -> np.ndarray:
        return self._weak_outputs(X) @ self.alpha_

    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores s(x) = Σ_t α_t h_t(x): higher = more likely positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
            The scores (0 for every point if no stump was fitted).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._scores(X)

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """The scores after each round: Σ_{t ≤ T'} α_t h_t(x) for T' = 1, ..., n_stumps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Yields
        ------
        ndarray of float64, shape (n_samples,)
            The scores of the first T' stumps.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        yield from np.cumsum(self._weak_outputs(X) * self.alpha_, axis=1).T

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: training AUC and the bound Π Z_t on the training ranking loss."""
        check_is_fitted(self)
        return {"train_auc": self.train_auc_, "rloss_bound": float(np.prod(self.Z_))}


def _step(v: np.ndarray, pos: np.ndarray, h: np.ndarray, eps: float, step: str) -> tuple[float, float, float]:
    """The step α of a {0, 1}-valued stump with outputs ``h`` under the pair distribution v(x+) v(x−), its r and the
    pair normaliser Z(α) = W0 + W+ e^{−α} + W− e^{α}."""
    p, p_bar = float(v[pos & h].sum()), float(v[pos & ~h].sum())  # positives' weight above / below
    q, q_bar = float(v[~pos & h].sum()), float(v[~pos & ~h].sum())  # negatives'
    w_plus, w_minus = p * q_bar, p_bar * q  # pairs ordered correctly / wrongly
    r = w_plus - w_minus
    if step == "exact":
        alpha = 0.5 * np.log((w_plus + eps) / (w_minus + eps))
    else:
        alpha = 0.5 * np.log((1.0 + r + eps) / (1.0 - r + eps))
    w_zero = p * q + p_bar * q_bar
    z = w_zero + w_plus * np.exp(-alpha) + w_minus * np.exp(alpha)
    return float(alpha), r, float(z)
