"""RankSVM: the pairwise ranking SVM of Herbrich et al. and Joachims (2002), a competitor of TreeRank in depecker2010.

For a bipartite sample (positives i, negatives j) the ranker is the score s(x) = w·φ(x) solving (digest §2.14)

    minimise  ½‖w‖² + C Σ_{i ∈ +} Σ_{j ∈ −} ξ_ij   s.t.  w·(φ(x_i) − φ(x_j)) ≥ 1 − ξ_ij,  ξ_ij ≥ 0,

i.e. ½‖w‖² + C Σ_ij (1 − s_i + s_j)_+ over the n+ n− positive/negative pairs only. ``C`` multiplies the *sum* of the
pair slacks, as in the thesis. This is the problem ``svm_rank_learn -c C`` (T. Joachims's SVM^rank, the implementation
the thesis used) solves with every training point in one query and its default loss (``-l 1``, swapped pairs): SVM^rank
divides C by the number of queries (one here) and counts every pair once; SVM^light's ``-z p`` solves the same
problem.

Algorithm
---------
The pairs are never materialised. For scores s, with the positives' scores lowered by the margin (u_i = s_i − 1), a
pair is violated when u_i < s_j; after sorting, ``np.searchsorted`` gives for every positive the number c_i of its
violated pairs and for every negative the number c_j of its own, and

    Σ_ij (1 − s_i + s_j)_+ = Σ_j c_j s_j − Σ_i c_i u_i,   a subgradient in w: Σ_j c_j φ(x_j) − Σ_i c_i φ(x_i),

in O(n log n) (:func:`pairwise_hinge`). This is the separation oracle of the 1-slack cutting-plane method (Joachims
2006, "Training linear SVMs in linear time"; SVM^rank is an instance of it): the most violated joint constraint at w
is w·a ≥ b − ξ with b the fraction of violated pairs and a the mean of their differences φ(x_i) − φ(x_j), and the
mean pair hinge loss at w is exactly b − a·w. The working set of such cuts defines a small QP, solved in its dual
(one weight per cut on a simplex, the constraint ξ ≥ 0 being the cut a = 0, b = 0) by a primal active-set method,
exact on each face (Cholesky, or an eigendecomposition when the face's Hessian is singular): the late cuts are nearly
parallel, which stalls coordinate descent (SMO). Cuts unused for 50 iterations are dropped, as in SVM^struct.

The cuts are placed as in OCAS (Franc & Sonnenburg 2008, the "optimized cutting plane algorithm"), which solves the
same problem as SVM^rank's cutting-plane loop in far fewer iterations: the best point so far moves to the minimum of
the true objective on the line through the cutting-plane solution (an exact line search on the convex piecewise
quadratic, by bisection of its derivative, which the same sorted-score counts give), and the next cut is taken at
0.9 best + 0.1 cutting-plane solution. On a 1800-point training part of GaussEasy20d (C = 1, tol = 1e-3) it stops
after 58 (linear) and 77 (RBF) iterations where the plain cutting-plane loop takes 346 and 206.

Stopping: the dual value of the cut QP is a lower bound of the optimum, so the fit stops when the objective of the
best point is within ``C · tol · n+ n−`` of it, i.e. within ``tol`` in mean pair hinge loss (times C). That is
SVM^rank's criterion with its default epsilon 0.001: for the swapped-pairs loss it multiplies epsilon by the number
of pairs and stops when the most violated constraint exceeds the QP's slack by less than that, which bounds the
suboptimality by the same amount (with an exact QP the two gaps coincide at the cutting-plane solution; the best
point's can only be smaller). The returned w is that best point. The bound is absolute in mean hinge loss, so it is
loose when that loss is near 0 (RBF on a nearly separable training sample): on the same 1800 points the RBF fit stops
at an objective of 1848 where tol = 1e-5 reaches 1076 (in 5 times the time; the held-out AUC barely moves: 0.733 and
0.727).

No intercept: the objective sees only score differences, so an offset of the scores is irrelevant to the ranking.
The variables are used as given (no scaling inside).

Kernels
-------
``"linear"``: φ(x) = x; ``coef_`` is w. ``"rbf"``: k(x, x') = exp(−γ‖x − x'‖²), exactly, through the empirical kernel
map. The training kernel matrix K = V S Vᵀ is eigendecomposed, eigenvalues below ``EIGEN_RTOL`` (1e-10) times the
largest are dropped (they are within a few hundred times the rounding level of the decomposition, and the map of a
new point divides by their square roots), and the training points get the features Φ = V S^{1/2}, on which the
linear solver runs (the map of a new point is Φ(x) = k(x, X_train) V S^{-1/2}). By the
representer theorem the kernel RankSVM's optimum lies in the span of the training points' feature maps, whose
coordinates are these, so this is the kernel RankSVM (restricted to the retained eigendirections). A point x scores
Φ(x)·w = k(x, X_train) γ with γ = V S^{-1/2} w (``dual_coef_``), which equals Φ w on the training points. The kernel
matrix costs O(n²) memory and its eigendecomposition O(n³) time (about half a second at n = 1800).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, ClassVar

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import (
    BipartiteRankerMixin,
    IntNotBool,
    RunReportMixin,
    standardisation,
)
from forestlab.metrics import auc

__all__ = ["EIGEN_RTOL", "RankSVM", "pairwise_hinge"]

#: Eigenvalues of the RBF kernel matrix below this fraction of the largest are dropped from the kernel map.
EIGEN_RTOL = 1e-10
#: OCAS places each new cut at (1 − MU) best + MU cutting-plane solution (Franc & Sonnenburg's value).
_MU = 0.1
#: A cut whose dual weight stayed 0 this many iterations in a row leaves the working set (SVM^struct's rule).
_INACTIVE = 50
#: The cut QP is solved to a dual gap of this fraction of the outer tolerance.
_QP_TOL_SHARE = 0.01
_QP_MAX_STEPS = 100
_CHUNK = 4096


# ---------------------------------------------------------------------------------------------------------------
# The oracle: the pairwise hinge loss from sorted scores
# ---------------------------------------------------------------------------------------------------------------
def pairwise_hinge(s_pos: np.ndarray, s_neg: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The pairwise hinge loss Σ_ij (1 − s_pos[i] + s_neg[j])_+ over all positive/negative pairs, and each point's
    number of violated pairs (hinge > 0), in O(n log n) without forming the pairs.

    A pair is violated when ``s_pos[i] - 1 < s_neg[j]`` (strictly: a pair exactly at the margin has hinge 0 and is
    not counted); both counts use this one comparison, so they always sum to the same number of pairs.

    Parameters
    ----------
    s_pos, s_neg : ndarray of shape (n_pos,), (n_neg,)
        Scores of the positives and of the negatives.

    Returns
    -------
    loss : float
        The sum of the pair hinge losses.
    c_pos : ndarray of int64, shape (n_pos,)
        For each positive, the number of negatives it is not ranked above by the margin.
    c_neg : ndarray of int64, shape (n_neg,)
        For each negative, the number of positives not ranked above it by the margin.

    The pairs (2, 0) and (2, 1) are ranked by the margin (the second exactly: hinge 0), (0.5, 0) and (0.5, 1) are
    not (hinge 0.5 and 1.5):

    >>> loss, c_pos, c_neg = pairwise_hinge(np.array([2.0, 0.5]), np.array([0.0, 1.0]))
    >>> float(loss), c_pos.tolist(), c_neg.tolist()
    (2.0, [0, 2], [1, 1])
    """
    from forestlab.learners._ranksvm_kernels import violated_counts

    u = s_pos - 1.0
    # c_pos[i] = #{j : s_j > u_i}, c_neg[j] = #{i : u_i < s_j}: two sorts and two binary searches, compiled
    c_pos, c_neg = violated_counts(np.ascontiguousarray(u, dtype=np.float64),
                                   np.ascontiguousarray(s_neg, dtype=np.float64))
    loss = float(c_neg @ s_neg - c_pos @ u)
    return max(loss, 0.0), c_pos, c_neg


# ---------------------------------------------------------------------------------------------------------------
# The cut QP: minimise ½ βᵀQβ − bᵀβ over the simplex (primal active set)
# ---------------------------------------------------------------------------------------------------------------
def _face_step(hessian: np.ndarray, gradient: np.ndarray, slope_tol: float) -> tuple[np.ndarray, bool]:
    """The step y minimising ½ yᵀHy + gᵀy, or, if that is unbounded below, a descent direction of zero curvature
    (second value True).

    A Cholesky factorisation when H is numerically positive definite (−H⁻¹g is then a descent direction whose
    minimum along the ray is at step 1, whatever the conditioning); otherwise an eigendecomposition: curvatures up to
    1e-12 times the largest count as 0, and a slope above ``slope_tol`` along them makes the problem unbounded.
    """
    # scipy's cho_factor and cho_solve (check_finite=False) without their wrappers' argument checks and batching
    # (a third of the cut QP's time): the same two LAPACK calls with the same arguments, so the same numbers
    factor, info = dpotrf(hessian, lower=False, overwrite_a=False, clean=False)
    if info < 0:
        raise ValueError(f'LAPACK reported an illegal value in {-info}-th argument on entry to "POTRF".')
    if info == 0:  # > 0: not numerically positive definite (cho_factor's LinAlgError)
        y, info = dpotrs(factor, gradient, lower=False, overwrite_b=False)
        if info != 0:
            raise ValueError(f"illegal value in {-info}th argument of internal potrs")
        y = -y
        if np.all(np.isfinite(y)):
            return y, False
    curvature, U = np.linalg.eigh(hessian)
    flat = curvature <= 1e-12 * max(curvature[-1], 0.0)
    slope = U.T @ gradient
    sloped = flat & (np.abs(slope) > slope_tol)
    if sloped.any():
        return -(U[:, sloped] @ slope[sloped]), True
    return -(U[:, ~flat] @ (slope[~flat] / curvature[~flat])), False


def _simplex_qp(Q: np.ndarray, b: np.ndarray, beta: np.ndarray, tol: float, max_steps: int) -> tuple[int, float]:
    """Minimise ½ βᵀQβ − bᵀβ s.t. β ≥ 0, Σβ = 1 (Q symmetric positive semi-definite) by a primal active-set method
    from the feasible ``beta`` (updated in place).

    On the face of the free coordinates F the problem is solved exactly in the coordinates y of the steps
    p = (y, −Σy) (the last free coordinate takes up the sum) by :func:`_face_step`: a Newton step, or, along a
    direction of zero curvature on which f still slopes (near-parallel cuts make Q singular), a move to the face's
    boundary. A step that would leave β ≥ 0 stops at the
    first coordinate reaching 0, which leaves F; at the optimum of a face the coordinate of least gradient enters F.
    Stops when the duality gap Σ β_k g_k − min_k g_k (g = Qβ − b; an upper bound of f(β) − min f) is at most
    ``tol``. Coordinate descent (SMO) is hopeless here: the cuts of the late iterations are nearly parallel, so Q is
    ill-conditioned (condition numbers of 1e7 with ten cuts).

    Returns
    -------
    steps : int
        Active-set steps.
    gap : float
        The duality gap reached.
    """
    free = beta > 0.0
    gap = np.inf
    steps = max_steps
    for step in range(max_steps):
        F = np.flatnonzero(free)
        g = Q @ beta - b
        if len(F) > 1:
            g_free = g[F]
            Q_free = Q[np.ix_(F, F)]
            last = Q_free[-1]
            hessian = Q_free[:-1, :-1] - last[:-1, None] - last[None, :-1] + last[-1]
            gradient = g_free[:-1] - g_free[-1]
            y, unbounded = _face_step(hessian, gradient, 1e-12 * (np.abs(g_free).max() + 1.0))
            p = np.append(y, -y.sum())
            shrinking = np.flatnonzero(p < 0.0)
            ratios = beta[F[shrinking]] / -p[shrinking]
            j = int(np.argmin(ratios)) if len(ratios) else -1
            if unbounded and j < 0:  # rounding only: a nonzero step summing to 0 has a negative coordinate
                steps = step
                break
            if unbounded or (j >= 0 and ratios[j] < 1.0):
                beta[F] = np.maximum(beta[F] + ratios[j] * p, 0.0)
                beta[F[shrinking[j]]] = 0.0
                free[F[shrinking[j]]] = False
                continue
            beta[F] = np.maximum(beta[F] + p, 0.0)
            g = Q @ beta - b
        gap = float(beta @ g - g.min())
        enter = int(np.argmin(np.where(free, np.inf, g)))
        if gap <= tol or free[enter]:  # (every coordinate free and still a gap: rounding only)
            steps = step
            break
        free[enter] = True
    beta /= beta.sum()  # rounding in the steps must not let Σβ drift from 1 over the iterations
    return steps, gap


# ---------------------------------------------------------------------------------------------------------------
# The solver on explicit features
# ---------------------------------------------------------------------------------------------------------------
class _Cuts:
    """The working set: cut k says mean pair hinge(w) ≥ b[k] − a[k]·w; cut 0 is (0, 0), i.e. ξ ≥ 0. Arrays grow
    by doubling; ``gram`` holds a[k]·a[l]."""

    def __init__(self, n_features: int) -> None:
        cap = 64
        self.a = np.zeros((cap, n_features))
        self.b = np.zeros(cap)
        self.gram = np.zeros((cap, cap))
        self.beta = np.zeros(cap)
        self.beta[0] = 1.0
        self.idle = np.zeros(cap, dtype=np.int64)
        self.size = 1

    def add(self, a: np.ndarray, b: float) -> None:
        k = self.size
        if k == len(self.b):
            cap = 2 * k
            grown_a = np.zeros((cap, self.a.shape[1]))
            grown_a[:k] = self.a
            grown_gram = np.zeros((cap, cap))
            grown_gram[:k, :k] = self.gram[:k, :k]
            self.a, self.gram = grown_a, grown_gram
            self.b = np.concatenate([self.b, np.zeros(k)])
            self.beta = np.concatenate([self.beta, np.zeros(k)])
            self.idle = np.concatenate([self.idle, np.zeros(k, dtype=np.int64)])
        self.a[k] = a
        self.b[k] = b
        row = self.a[:k + 1] @ a
        self.gram[k, :k + 1] = row
        self.gram[:k + 1, k] = row
        self.beta[k] = 0.0
        self.idle[k] = 0
        self.size = k + 1

    def drop_idle(self) -> None:
        k = self.size
        self.idle[:k] = np.where(self.beta[:k] > 0.0, 0, self.idle[:k] + 1)
        keep = self.idle[:k] < _INACTIVE
        keep[0] = True
        if keep.all():
            return
        idx = np.flatnonzero(keep)
        m = len(idx)
        self.a[:m] = self.a[idx]
        self.b[:m] = self.b[idx]
        self.gram[:m, :m] = self.gram[np.ix_(idx, idx)]
        self.beta[:m] = self.beta[idx]
        self.idle[:m] = self.idle[idx]
        self.size = m


def _ranksvm_solve(Z: np.ndarray, pos: np.ndarray, C: float, tol: float, max_iter: int) -> dict[str, Any]:
    """Minimise ½‖w‖² + C Σ_{i ∈ pos, j ∉ pos} (1 − Z_i·w + Z_j·w)_+ (see the module docstring).

    Returns a dict: ``w``, ``objective`` (at w), ``lower_bound``, ``n_iter`` (cuts added), ``converged``.
    """
    from forestlab.learners._ranksvm_kernels import line_minimum

    Z_pos = np.ascontiguousarray(Z[pos])
    Z_neg = np.ascontiguousarray(Z[~pos])
    n_pairs = float(len(Z_pos)) * float(len(Z_neg))
    cp = C * n_pairs  # the weight of the mean pair hinge loss
    target = cp * tol  # allowed objective gap

    def oracle(w: np.ndarray) -> tuple[float, np.ndarray, float]:
        """The objective at w and the most violated joint constraint there: mean hinge(v) ≥ b − a·v, tight at w."""
        loss, c_pos, c_neg = pairwise_hinge(Z_pos @ w, Z_neg @ w)
        a = (Z_pos.T @ c_pos.astype(np.float64) - Z_neg.T @ c_neg.astype(np.float64)) / n_pairs
        return 0.5 * float(w @ w) + cp * loss / n_pairs, a, float(c_pos.sum()) / n_pairs

    def objective(w: np.ndarray) -> float:
        return 0.5 * float(w @ w) + C * pairwise_hinge(Z_pos @ w, Z_neg @ w)[0]

    def line_search(w: np.ndarray, delta: np.ndarray) -> float:
        """argmin_{t >= 0} of the objective on w + t delta (bisection of the derivative of a convex function)."""
        dd = float(delta @ delta)
        if dd == 0.0:
            return 0.0
        wd = float(w @ delta)
        s_pos, s_neg = Z_pos @ w, Z_neg @ w
        d_pos, d_neg = Z_pos @ delta, Z_neg @ delta
        # the points in score order at the last t evaluated: the bisection's next t re-sorts them by insertion
        order_pos, order_neg = np.argsort(s_pos), np.argsort(s_neg)
        return line_minimum(s_pos, s_neg, d_pos, d_neg, order_pos, order_neg, wd, dd, cp, n_pairs)

    cuts = _Cuts(Z.shape[1])
    w_best = np.zeros(Z.shape[1])
    j_best, a, b = oracle(w_best)
    cuts.add(a, b)
    lower = 0.0
    n_iter, converged = 0, False
    while n_iter < max_iter:
        n_iter += 1
        k = cuts.size
        beta = cuts.beta[:k]  # a view: the QP updates it in place
        _simplex_qp(cp * cuts.gram[:k, :k], cuts.b[:k], beta, _QP_TOL_SHARE * tol, _QP_MAX_STEPS + 10 * k)
        w_cut = cp * (cuts.a[:k].T @ beta)
        lower = max(lower, cp * float(cuts.b[:k] @ beta) - 0.5 * float(w_cut @ w_cut))
        t = line_search(w_best, w_cut - w_best)
        if t > 0.0:
            candidate = w_best + t * (w_cut - w_best)
            j_candidate = objective(candidate)
            if j_candidate < j_best:
                w_best, j_best = candidate, j_candidate
        if j_best - lower <= target:
            converged = True
            break
        cuts.drop_idle()
        w_new = (1.0 - _MU) * w_best + _MU * w_cut
        j_new, a, b = oracle(w_new)
        if j_new < j_best:
            w_best, j_best = w_new, j_new
        cuts.add(a, b)
    return {"w": w_best, "objective": j_best, "lower_bound": lower, "n_iter": n_iter, "converged": converged}


def _rbf(A: np.ndarray, B: np.ndarray, gamma: float, b_norms: np.ndarray | None = None) -> np.ndarray:
    """exp(−gamma ‖a − b‖²) for the rows of A and B."""
    if b_norms is None:
        b_norms = np.einsum("ij,ij->i", B, B)
    sq = np.einsum("ij,ij->i", A, A)[:, None] - 2.0 * (A @ B.T) + b_norms[None, :]
    return np.exp(-gamma * np.maximum(sq, 0.0))


# ---------------------------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------------------------
class RankSVM(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """The pairwise ranking SVM (RankSVM, Joachims 2002; SVM^rank) on positive/negative pairs; a bipartite ranker.

    Minimises ½‖w‖² + C Σ_{i ∈ +, j ∈ −} (1 − s(x_i) + s(x_j))_+ with s = w·φ (depecker2010 §2.14), by the 1-slack
    cutting-plane method with OCAS line searches, never forming the pairs (see the module docstring).

    Parameters
    ----------
    C : float, default=1.0
        Weight of the *sum* of the n+ n− pair slacks (the thesis's c; ``svm_rank_learn -c C`` with all points in one
        query). The mean pair hinge loss thus weighs C n+ n−.
    kernel : {"linear", "rbf"}, default="linear"
        φ(x) = x, or the Gaussian kernel exp(−gamma ‖x − x'‖²) (exact, through the empirical kernel map).
    gamma : "scale" or float, default="scale"
        RBF width; "scale" is :class:`sklearn.svm.SVC`'s ``1 / (n_features X.var())`` on the training data (1 if
        that variance is 0). Not used by the linear kernel.
    tol : float, default=1e-3
        Stop when the objective is within ``C · tol · n+ n−`` of the optimum (a certified bound from the dual of the
        cutting-plane QP): ``tol`` bounds the excess mean pair hinge loss. SVM^rank's default epsilon is 0.001.
    max_iter : int, default=1000
        Most cutting-plane iterations (cuts added). A fit that stops there warns (ConvergenceWarning) and keeps the
        best point found.
    scale : bool, default=True
        Standardise the variables on the training data (mean 0, standard deviation 1; a constant variable keeps
        scale 1) before the kernel, as RF1_SVM's SVM LeafRank (TreeRank's ``svm_scale``) and RankRLS do, so that the
        penalty and ``gamma="scale"`` (then 1 / n_features) weigh every variable alike whatever its unit.
        False: the variables as given (SVM^rank's own behaviour).
    random_state : int, RandomState instance or None, default=None
        Not used: the fit is deterministic. Accepted for the rankers' common interface.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1) is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The standardisation applied to every X (zeros and ones when ``scale=False``).
    coef_ : ndarray of shape (n_features_in_,)
        w (linear kernel only): the score is ``((X - mean_) / scale_) @ coef_``.
    dual_coef_ : ndarray of shape (n_samples,)
        γ (RBF kernel only): the score of x is Σ_i γ_i k(x, X_fit_[i]).
    X_fit_ : ndarray of shape (n_samples, n_features_in_)
        The training points, standardised when ``scale`` (RBF kernel only).
    gamma_ : float
        The RBF width used (RBF kernel only).
    n_components_ : int
        Dimension of the kernel map: eigenvalues of the kernel matrix kept (RBF), n_features_in_ (linear).
    objective_ : float
        ½‖w‖² + C Σ pair hinge losses at the returned solution.
    n_iter_ : int
        Cutting-plane iterations.
    diagnostics_ : dict of str to float
        ``n_iter``, ``objective``, ``duality_gap`` (objective minus the certified lower bound), ``mean_pair_hinge``,
        ``train_auc`` and ``n_components``; stored by the runner (``run_report``).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> ranker = RankSVM(C=0.01).fit(X, 2 * y - 1)
    >>> ranker.diagnostics_["train_auc"] > 0.9, ranker.decision_function(X[:3]).shape
    (True, (3,))
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"linear", "rbf"})],
        "gamma": [StrOptions({"scale"}), Interval(numbers.Real, 0, None, closed="neither")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [IntNotBool(1, None, closed="left")],
        "scale": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        C: float = 1.0,
        kernel: str = "linear",
        gamma: str | float = "scale",
        tol: float = 1e-3,
        max_iter: int = 1000,
        scale: bool = True,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.scale = scale
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> RankSVM:
        """Fit the ranking SVM on the positive/negative pairs of the training sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (+1 = positive), both present. Any two labels are accepted, the greater one being
            the positive class (``classes_[1]``, scikit-learn's binary convention).

        Returns
        -------
        self : RankSVM
            The fitted ranker.

        Raises
        ------
        ValueError
            If the labels are not exactly two classes.
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "RankSVM")
        pos = codes == 1
        for name in ("coef_", "dual_coef_", "X_fit_", "gamma_"):  # a refit with another kernel
            self.__dict__.pop(name, None)
        if self.scale:
            self.mean_, self.scale_ = standardisation(X)
            X = (X - self.mean_) / self.scale_
        else:
            self.mean_, self.scale_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
        if self.kernel == "linear":
            Z = X
        else:
            variance = X.var()
            self.gamma_ = float(1.0 / (X.shape[1] * variance) if variance != 0 else 1.0) \
                if self.gamma == "scale" else float(self.gamma)
            values, vectors = np.linalg.eigh(_rbf(X, X, self.gamma_))
            keep = values > EIGEN_RTOL * values[-1]
            values, vectors = values[keep], vectors[:, keep]
            Z = vectors * np.sqrt(values)
        result = _ranksvm_solve(Z, pos, float(self.C), float(self.tol), int(self.max_iter))
        w = result["w"]
        if self.kernel == "linear":
            self.coef_ = w
        else:
            self.dual_coef_ = vectors @ (w / np.sqrt(values))
            self.X_fit_ = X.copy()
            self._fit_norms = np.einsum("ij,ij->i", X, X)
        scores = Z @ w
        n_pairs = float(pos.sum()) * float((~pos).sum())
        self.classes_ = classes
        self.n_components_ = int(Z.shape[1])
        self.n_iter_ = int(result["n_iter"])
        self.objective_ = float(result["objective"])
        self.diagnostics_ = {
            "n_iter": float(self.n_iter_),
            "objective": self.objective_,
            "duality_gap": float(result["objective"] - result["lower_bound"]),
            "mean_pair_hinge": pairwise_hinge(scores[pos], scores[~pos])[0] / n_pairs,
            "train_auc": auc(pos, scores, pos_label=True),  # roc_auc_score's value, bit for bit
            "n_components": float(self.n_components_),
        }
        if not result["converged"]:
            warnings.warn(f"RankSVM did not converge in max_iter={self.max_iter} iterations: the objective is within "
                          f"{self.diagnostics_['duality_gap']:.4g} of the optimum (target "
                          f"{self.C * self.tol * n_pairs:.4g}); increase max_iter or tol", ConvergenceWarning,
                          stacklevel=2)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores: higher = more likely positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
            w·φ(x) of the (standardised) x: ``x @ coef_`` (linear), Σ_i γ_i k(x, x_i) (RBF).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.scale:
            X = (X - self.mean_) / self.scale_
        coef = getattr(self, "coef_", None)
        if coef is not None:
            return X @ coef
        out = np.empty(len(X))
        for start in range(0, len(X), _CHUNK):
            block = X[start:start + _CHUNK]
            out[start:start + _CHUNK] = _rbf(block, self.X_fit_, self.gamma_, self._fit_norms) @ self.dual_coef_
        return out
