"""RankRLS: pairwise regularised least squares ranking (Pahikkala et al. 2007; depecker2010 §2.14, criterion (5.2)).

The score is a kernel expansion f = Σ_i a_i K(·, x_i) over the training points, fitted to the label differences of
pairs with the squared loss d(u, v) = (u − v)², u = Y_i − Y_j ∈ {−2, 0, 2} (labels coded ±1):

    J(a) = Σ_{(i, j) ∈ pairs} ((y_i − y_j) − (f(x_i) − f(x_j)))² + λ aᵀ K a,        λ = ``alpha``.

**Normalisation.** This is RLScore's (the thesis's implementation, ``GlobalRankRLS``: A = (L K + λ I)⁻¹ L Y), so
``alpha`` is RLScore's ``regparam`` and the thesis's grid 2^-10 .. 2^10 reads the same. Criterion (5.2) divides the
pair sum by n(n − 1)/2: its λ is 2 ``alpha`` / (n (n − 1)).

**Closed form.** With the pair Laplacian L (uᵀ L u = Σ_pairs (u_i − u_j)²) the objective is
(y − K a)ᵀ L (y − K a) + λ aᵀ K a, and its stationarity condition K [L (y − K a) − λ a] = 0 holds for

    a(λ) = (L K + λ I)⁻¹ L y = L^{1/2} (L^{1/2} K L^{1/2} + λ I)⁻¹ L^{1/2} y

(the second form: (L K + λ I) L^{1/2} = L^{1/2} (L^{1/2} K L^{1/2} + λ I)). Any solution gives the same function f
(the objective is strictly convex in f ∈ H for λ > 0). ``pairs``:

- ``"all"``: every pair i < j (the thesis's (5.2)); L = n I − 11ᵀ = n H with H the centring matrix, so
  a = (n H K H + λ I)⁻¹ n H y: the centred kernel matrix;
- ``"bipartite"``: only the (positive, negative) pairs; L is the Laplacian of the complete bipartite graph, with
  eigenvalues 0 (on 1), n (on w = n− 1_+ − n+ 1_−), n− (vectors on the positives summing to 0) and n+ (vectors on
  the negatives summing to 0); L^{1/2} is applied through that structure in O(n) per vector.

**The expensive part is shared across λ.** The eigendecomposition L^{1/2} K L^{1/2} = V Λ Vᵀ (O(n³)) and
c = Vᵀ L^{1/2} y do not depend on λ; then a(λ) = L^{1/2} V (c / (Λ + λ)) costs O(n²). ``fit(X, y, fit_cache=)``
fetches the decomposition through a :class:`~forestlab.learners._cache.FitCache` (a private estimator keyed by
kernel, gamma, pairs, scale and the training data), so the runs of a λ grid on one training set decompose once.

**Linear kernel.** Solved in the primal, f(x) = wᵀx: w(λ) = (Xᵀ L X + λ I)⁻¹ Xᵀ L y (the same function as the dual
solution with K = X Xᵀ, by the push-through identity), with the d × d scatter Xᵀ L X = (L^{1/2} X)ᵀ (L^{1/2} X)
eigendecomposed once (O(n d²)). No intercept: a constant added to f (or to the kernel) changes no pair difference.

**Standardisation** (``scale=True``, the default): the variables are standardised on the training data (mean 0,
standard deviation 1; a constant variable keeps scale 1) before the kernel, as the SVM LeafRank of RF1_SVM does
(TreeRank's ``svm_scale``; depecker2010 gives RankRLS "the kernel of RF1_SVM"), so that ``gamma="scale"`` is
1 / d and the penalty weighs every variable alike. ``scale=False`` uses the variables as given.
"""

from __future__ import annotations

import hashlib
import numbers
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import BipartiteRankerMixin, RunReportMixin, standardisation
from forestlab.learners._cache import FitCache
from forestlab.metrics import auc

__all__ = ["RankRLS", "laplacian_power", "resolve_gamma"]

_CHUNK = 4096
_MEMO_ENTRIES = 1 << 23  # kernels up to 64 MB are kept for the next fit sharing the decomposition


def resolve_gamma(gamma: str | float, X: np.ndarray) -> float:
    """The RBF width: a float as given, ``"scale"`` as :class:`sklearn.svm.SVC`'s 1 / (d · X.var()) (1.0 if X has
    no variance).

    >>> resolve_gamma("scale", np.array([[0.0, 2.0], [2.0, 0.0]]))
    0.5
    """
    if gamma == "scale":
        var = float(X.var())
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return float(gamma)


def laplacian_power(M: np.ndarray, pos: np.ndarray, pairs: str, power: float) -> np.ndarray:
    """L^power M for the pair Laplacian L (``power`` 0.5, or −0.5 for the pseudo-inverse square root).

    Parameters
    ----------
    M : ndarray of shape (n,) or (n, k)
        Vector or matrix (rows indexed by the training points).
    pos : ndarray of bool, shape (n,)
        The positives.
    pairs : {"all", "bipartite"}
        All pairs (L = n I − 11ᵀ) or the (positive, negative) pairs (the complete bipartite graph's Laplacian).
    power : float
        The exponent, applied to L's non-zero eigenvalues (the null space, spanned by 1, maps to 0).

    Returns
    -------
    ndarray of the shape of ``M``

    >>> pos = np.array([True, False, False])
    >>> L = np.array([[2., -1., -1.], [-1., 1., 0.], [-1., 0., 1.]])  # pairs (0, 1) and (0, 2)
    >>> half = laplacian_power(np.eye(3), pos, "bipartite", 0.5)
    >>> bool(np.allclose(half @ half, L))
    True
    """
    n = len(pos)
    if pairs == "all":  # L = n H
        return n ** power * (M - M.mean(axis=0))
    n_pos, n_neg = int(pos.sum()), n - int(pos.sum())
    mean_pos, mean_neg = M[pos].mean(axis=0), M[~pos].mean(axis=0)
    col = (slice(None),) + (None,) * (M.ndim - 1)
    within = M - np.where(pos[col], mean_pos, mean_neg)  # the parts summing to 0 on each class
    scale = np.where(pos, float(n_neg) ** power, float(n_pos) ** power)[col]
    # the direction w = n− 1_+ − n+ 1_−, unit-normed: its coordinate is (n+ n− (mean_+ − mean_−)) / |w|
    w = np.where(pos, n_neg, -n_pos).astype(np.float64) / np.sqrt(float(n_pos) * n_neg * n)
    along = w[col] * (np.sqrt(float(n_pos) * n_neg / n) * (mean_pos - mean_neg))
    return scale * within + float(n) ** power * along


class _RankRLSDecomposition(BaseEstimator):
    """The λ-free part of a RankRLS fit, fitted once per (kernel, gamma, pairs, scale, training data) and shared
    through a FitCache: the standardisation, the eigendecomposition of L^{1/2} K L^{1/2} (RBF) or of Xᵀ L X
    (linear), and the target projected on its eigenvectors. ``y`` holds 0/1 class codes (1 = positive). Read-only
    once fitted."""

    def __init__(self, kernel: str = "rbf", gamma: str | float = "scale", pairs: str = "all",
                 scale: bool = True) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.pairs = pairs
        self.scale = scale

    def fit(self, X: Any, y: Any) -> _RankRLSDecomposition:
        X = np.array(X, dtype=np.float64, order="C")  # a copy: the RBF predictions keep the training points
        if self.scale:
            self.mean_, self.scale_ = standardisation(X)
            X = (X - self.mean_) / self.scale_
        else:
            self.mean_, self.scale_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
        pos = np.asarray(y) == 1
        target = np.where(pos, 1.0, -1.0)
        self.pos_ = pos
        if self.kernel == "linear":
            Z = laplacian_power(X, pos, self.pairs, 0.5)
            evals, vecs = np.linalg.eigh(Z.T @ Z)
            self.projected_ = vecs.T @ (Z.T @ laplacian_power(target, pos, self.pairs, 0.5))
        else:
            self.gamma_ = resolve_gamma(self.gamma, X)
            self.X_fit_ = X
            self.kernel_memo_: dict[bytes, list[np.ndarray]] = {}  # see RankRLS.decision_function
            K = rbf_kernel(X, X, gamma=self.gamma_)
            B = laplacian_power(laplacian_power(K, pos, self.pairs, 0.5).T, pos, self.pairs, 0.5)
            evals, vecs = np.linalg.eigh(0.5 * (B + B.T))
            self.projected_ = vecs.T @ laplacian_power(target, pos, self.pairs, 0.5)
        self.eigenvalues_ = np.maximum(evals, 0.0)  # PSD: round-off negatives to 0
        self.eigenvectors_ = vecs
        return self

    def solve(self, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """The coefficients for λ = ``lam`` (w on the standardised variables for the linear kernel, a for the RBF
        one) and the training scores (RBF; up to a constant, which no pair difference sees)."""
        g = self.projected_ / (self.eigenvalues_ + lam)
        if self.kernel == "linear":
            return self.eigenvectors_ @ g, np.empty(0)
        coef = laplacian_power(self.eigenvectors_ @ g, self.pos_, self.pairs, 0.5)
        # K a = K L^{1/2} V g; its part orthogonal to 1 is L^{+1/2} (L^{1/2} K L^{1/2}) V g = L^{+1/2} V Λ g
        train = laplacian_power(self.eigenvectors_ @ (self.eigenvalues_ * g), self.pos_, self.pairs, -0.5)
        return coef, train


class RankRLS(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """RankRLS, pairwise regularised least squares (Pahikkala et al. 2007); a bipartite ranker.

    See the module docstring for the objective, its normalisation (RLScore's), the closed form and the reuse of the
    decomposition across λ.

    Parameters
    ----------
    alpha : float, default=1.0
        λ > 0, the weight of aᵀ K a (‖w‖² for the linear kernel) against the unnormalised pair sum; RLScore's
        ``regparam`` (criterion (5.2)'s λ is 2 alpha / (n (n − 1))).
    kernel : {"rbf", "linear"}, default="rbf"
        K(x, x') = exp(−gamma ‖x − x'‖²), or x·x' (solved in the primal).
    gamma : "scale" or float, default="scale"
        RBF width: a float > 0, or ``"scale"``: 1 / (d · X.var()) on the training data (:class:`sklearn.svm.SVC`'s).
        Ignored by the linear kernel.
    pairs : {"all", "bipartite"}, default="all"
        The pairs of the loss: all pairs i < j (criterion (5.2); pairs of the same class pull their scores
        together), or only the (positive, negative) pairs.
    scale : bool, default=True
        Standardise the variables on the training data before the kernel (RF1_SVM's SVM LeafRank does); False:
        the raw variables.
    random_state : int, RandomState instance or None, default=None
        Unused (RankRLS is deterministic); accepted because the runner passes one to every learner.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1) is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The standardisation (zeros and ones with ``scale=False``).
    coef_ : ndarray of shape (n_features_in_,)
        The linear kernel's w on the original variables (score = X @ coef_; the standardisation's offset is a
        constant, dropped). Only with ``kernel="linear"``.
    dual_coef_ : ndarray of shape (n_samples,)
        The RBF kernel's a (score = Σ_i a_i K(x̃, x̃_i) on standardised points x̃, Σ_i a_i = 0). Only with
        ``kernel="rbf"``.
    X_fit_ : ndarray of shape (n_samples, n_features_in_)
        The (standardised) training points of the RBF expansion, shared with the cached decomposition. Only with
        ``"rbf"``.
    gamma_ : float
        The RBF width used. Only with ``"rbf"``.
    train_auc_ : float
        AUC of the training scores.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> cache = FitCache()
    >>> aucs = [RankRLS(alpha=lam).fit(X, 2 * y - 1, fit_cache=cache).train_auc_ for lam in (0.1, 1.0, 10.0)]
    >>> cache.misses, cache.hits, min(aucs) > 0.9
    (1, 2, True)
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"rbf", "linear"})],
        "gamma": [StrOptions({"scale"}), Interval(numbers.Real, 0, None, closed="neither")],
        "pairs": [StrOptions({"all", "bipartite"})],
        "scale": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, alpha: float = 1.0, kernel: str = "rbf", gamma: str | float = "scale", pairs: str = "all",
                 scale: bool = True, random_state: int | np.random.RandomState | None = None) -> None:
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.pairs = pairs
        self.scale = scale
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> RankRLS:
        """Solve the pairwise least-squares problem for λ = ``alpha``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (+1 = positive), both present. Any two labels are accepted, the greater one being
            the positive class (``classes_[1]``).
        fit_cache : FitCache, optional
            Where to fetch (or store) the λ-free eigendecomposition, shared by the fits that differ only in
            ``alpha``; a cached decomposition gives bit-for-bit the scores of a fresh one.

        Returns
        -------
        self : RankRLS
            The fitted ranker.

        Raises
        ------
        ValueError
            If the labels are not exactly two classes.
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "RankRLS")
        self.classes_ = classes
        decomposition = _RankRLSDecomposition(kernel=self.kernel, gamma=self.gamma, pairs=self.pairs,
                                              scale=self.scale)
        if fit_cache is None:
            decomposition.fit(X, codes)
        else:
            decomposition = fit_cache.fit(decomposition, X, codes)
        coef, train_scores = decomposition.solve(float(self.alpha))
        for name in ("coef_", "dual_coef_", "X_fit_", "gamma_", "_kernel_memo"):  # a refit with another kernel
            self.__dict__.pop(name, None)
        self.mean_, self.scale_ = decomposition.mean_, decomposition.scale_
        if self.kernel == "linear":
            self.coef_ = coef / self.scale_
            train_scores = X @ self.coef_
        else:
            self.dual_coef_ = coef
            self.X_fit_ = decomposition.X_fit_
            self.gamma_ = decomposition.gamma_
            self._kernel_memo = decomposition.kernel_memo_
        self.train_auc_ = auc(codes, train_scores, pos_label=1)  # roc_auc_score's value, bit for bit
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores f(x): higher = more likely positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
            wᵀx (linear kernel) or Σ_i a_i K(x, x_i) (RBF).
        """
        check_is_fitted(self, "train_auc_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if hasattr(self, "coef_"):  # the fitted kernel (a later set_params does not change the fitted model)
            return X @ self.coef_
        X = (X - self.mean_) / self.scale_
        blocks = self._kernel_blocks(X)
        out = np.empty(len(X))
        for start, K in zip(range(0, len(X), _CHUNK), blocks, strict=True):
            out[start:start + _CHUNK] = K @ self.dual_coef_
        return out

    def _kernel_blocks(self, X: np.ndarray) -> list[np.ndarray]:
        """K(X, X_fit_) by blocks of ``_CHUNK`` rows. The fits that share a cached decomposition (inner
        cross-validation: one per λ) share the last such kernel of a small X too, so scoring one validation fold
        for every λ computes it once (the same matrix: the same scores, bit for bit)."""
        memo = getattr(self, "_kernel_memo", None)
        small = len(X) * len(self.X_fit_) <= _MEMO_ENTRIES
        key = hashlib.blake2b(np.ascontiguousarray(X).tobytes(), digest_size=16).digest() + repr(X.shape).encode()
        if memo is not None and small and key in memo:
            return memo[key]
        blocks = [rbf_kernel(X[start:start + _CHUNK], self.X_fit_, gamma=self.gamma_)
                  for start in range(0, len(X), _CHUNK)]
        if memo is not None and small:
            memo.clear()  # one kernel per decomposition: the memory stays that of one validation fold's kernel
            memo[key] = blocks
        return blocks

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: training AUC (and log10 of the RBF width)."""
        check_is_fitted(self, "train_auc_")
        out = {"train_auc": self.train_auc_}
        if hasattr(self, "gamma_"):
            out["log10_gamma"] = float(np.log10(self.gamma_))
        return out
