"""TreeRank: the ranking tree of depecker2010 (bipartite ranking by recursive local AUC maximisation).

TreeRank (Clémençon & Vayatis; depecker2010 §2.2) grows a binary, *left-to-right oriented* master tree: each
internal node C is split into a left child L (the "better" part) and a right child C \\ L chosen to maximise the
local AUC criterion

    Λ(L) = α̂(C) β̂(L) − β̂(C) α̂(L),

with α̂, β̂ the shares of the training negatives / positives in a set (global rates, §2.1). Its leaves read left to
right rank the input space from most to least likely positive; the score is any strictly decreasing function of a
leaf's position (here ``(n_leaves − i) / n_leaves`` for the i-th leaf, as in the R package). The training AUC is
``½ + ½ Σ Λ`` over the splits (§2.2).

Each split is made by a **LeafRank** (§2.3–2.7). Maximising Λ over L ⊂ C is weighted binary classification on C's
data with positives weighted 1 − p̂_C and negatives p̂_C (p̂_C the share of positives in C; digest Prop. 14):

- ``"axis"``: the chapter-1 rule, one axis-parallel cut X^j ≤ u or X^j > u (either side may be L), maximising Λ;
- ``"cart"``: a weighted CART grown on C's data; its leaves are sorted by β̂/α̂ (α̂ = 0 as +inf) and the best prefix
  union (the argmax of the within-cell β̂ − α̂) is L (the R package's ``LRCart`` + ``LRCartFusion``);
- ``"svm"``: a weighted soft-margin SVM (class weights 1 − p̂_C for +1, p̂_C for −1); L = its positive side;
- ``"dyadic"``: a fixed dyadic partition of C's bounding box (2**m bins per variable), cells sorted by β̂/α̂ and the
  best prefix union kept (§2.5).

The CART and axis splits are X^j ≤ u (CART left) at midpoints u between consecutive distinct values; an exact tie of
the criterion goes to the first variable (in increasing index order among those drawn) and the first threshold.

Randomisation for ranking forests (§2.11): ``max_features`` (RF1) draws variables without replacement at each master
node, ``leafrank_max_features`` (RF2) at each node of the LeafRank CART among the master node's variables.

The fitted tree is kept as arrays (:class:`RankingTree`, the pruning and forest code read them) plus a flattened
routing structure: for the CART and axis LeafRanks every master split is itself a small tree of axis-parallel tests,
and all of them are chained into one decision graph that a new point walks once. Those two LeafRanks are grown by
compiled code (numba, :mod:`forestlab.learners._treerank_kernels`): a presorted weighted CART that never re-sorts;
the SVM and dyadic LeafRanks run a Python loop over the master nodes (the SVM's: libsvm's algorithm, compiled,
:mod:`forestlab.learners._smo`, on a kernel matrix computed beforehand to libsvm's single-precision entries,
:mod:`forestlab.learners._svm_gram`: SVC's model, bit for bit, without the wrapper's per-node cost, libsvm's
per-pair kernel calls and its scalar working-set loop).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from forestlab.learners._base import (
    BipartiteRankerMixin,
    IntNotBool,
    RunReportMixin,
    check_test_pair,
)
from forestlab.learners._data_rules import count_exceeds, raise_data_problems
from forestlab.learners._forest import MAX_FEATURES_CONSTRAINTS, resolve_max_features
from forestlab.metrics import auc

__all__ = ["LEAFRANKS", "TREERANK_PARAMS", "RankingTree", "TreeRank", "best_prefix", "scores_from_leaf_order",
           "treerank_data_problems"]


def _master_variables(max_features: Any, n_master: int, n_features: int) -> str:
    """What RF2 draws among, for a message: the variables of a master node."""
    return (f"variables of a master node (max_features={max_features!r} draws {n_master} of the data's "
            f"{n_features} features)")


def treerank_data_problems(params: Mapping[str, Any], n_features: int, prefix: str = "") -> list[str]:
    """The RF1/RF2 counts of TreeRank's ``params`` (all of them) that data of ``n_features`` features cannot give
    (the rule its fit raises with; ``prefix`` goes before each parameter's name)."""
    problem = count_exceeds(f"{prefix}max_features", params.get("max_features"), n_features, "features of the data")
    if problem is not None:
        return [problem]
    if params.get("leafrank") != "cart":  # only the CART LeafRank draws RF2 variables
        return []
    try:
        n_master = resolve_max_features(params.get("max_features"), n_features)
    except (ValueError, TypeError):  # an invalid value: the parameter constraints name it
        return []
    problem = count_exceeds(f"{prefix}leafrank_max_features", params.get("leafrank_max_features"), n_master,
                            _master_variables(params.get("max_features"), n_master, n_features))
    return [] if problem is None else [problem]

#: The LeafRank rules (how each master node is split).
LEAFRANKS = ("cart", "axis", "svm", "dyadic")
_UNLIMITED = np.iinfo(np.int64).max


# ---------------------------------------------------------------------------------------------------------------
# The fitted master tree
# ---------------------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class RankingTree:
    """A fitted TreeRank master tree, as arrays indexed by node id (root 0, ids in depth-first pre-order, so a
    node's id is larger than its parent's).

    Attributes
    ----------
    children_left, children_right : ndarray of int64
        The left (better) and right child of each node; −1 at leaves.
    parent : ndarray of int64
        Each node's parent; −1 at the root.
    depth : ndarray of int64
        Each node's depth (root 0).
    n_pos, n_neg : ndarray of float64
        Training positives / negatives in each node (counted with their sample weights: duplicate rows and integer
        weights give the same numbers). Global rates: ``n_pos / n_pos[0]``, ``n_neg / n_neg[0]``.
    gain : ndarray of float64
        Λ = α̂(C) β̂(L) − β̂(C) α̂(L) of each node's split (global rates; 0 at leaves). Collapsing the subtree below a
        node lowers the training AUC by half the sum of the gains of its internal nodes.
    features : list of ndarray
        The variables (column indices) the LeafRank could use at each internal node (all of them unless RF1
        randomisation drew a subset); empty at leaves.
    """

    children_left: np.ndarray
    children_right: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    gain: np.ndarray
    features: list[np.ndarray]

    @property
    def node_count(self) -> int:
        """Number of nodes."""
        return len(self.children_left)

    @property
    def is_leaf(self) -> np.ndarray:
        """Boolean mask of the leaves."""
        return self.children_left < 0

    @property
    def max_depth(self) -> int:
        """Depth of the deepest leaf."""
        return int(self.depth.max())

    def leaves_in_order(self, depth: int | None = None) -> np.ndarray:
        """The leaves left to right (best to worst) of the tree, or of the tree truncated at ``depth`` (nodes at
        that depth become leaves).

        Parameters
        ----------
        depth : int or None
            Truncation depth (>= 0); None for the whole tree.

        Returns
        -------
        ndarray of int64
            Node ids.
        """
        limit = _UNLIMITED if depth is None else int(depth)
        out: list[int] = []
        stack = [0]
        while stack:
            node = stack.pop()
            if self.children_left[node] < 0 or self.depth[node] >= limit:
                out.append(node)
            else:
                stack.append(int(self.children_right[node]))
                stack.append(int(self.children_left[node]))
        return np.asarray(out, dtype=np.int64)

    def collapse(self, nodes: np.ndarray, leaves: np.ndarray) -> np.ndarray:
        """Map each node of ``nodes`` to the member of ``leaves`` that is the node itself or its ancestor.

        ``leaves`` must be the leaves of a subtree grown from the root (a pruned tree): every leaf of the full tree
        has exactly one of them as itself or ancestor.

        Raises
        ------
        ValueError
            If ``leaves`` is not such a set.
        """
        leaves = np.asarray(leaves, dtype=np.int64)
        n = self.node_count
        if leaves.ndim != 1 or len(leaves) == 0 or leaves.min() < 0 or leaves.max() >= n:
            raise ValueError(f"leaves must be a non-empty list of node ids in [0, {n})")
        owner = np.full(n, -1, dtype=np.int64)
        owner[leaves] = leaves
        for node in range(1, n):  # pre-order ids: a parent is processed before its children
            up = owner[self.parent[node]]
            if up >= 0:
                if owner[node] >= 0 and owner[node] != up:
                    raise ValueError(f"leaves hold node {node} and its ancestor {up}")
                owner[node] = up
        if len(np.unique(leaves)) != len(leaves) or np.any(owner[self.is_leaf] < 0):
            raise ValueError("leaves must cover every leaf of the tree exactly once (the leaves of a pruned tree)")
        return owner[np.asarray(nodes, dtype=np.int64)]


def scores_from_leaf_order(leaves: np.ndarray, n_nodes: int) -> np.ndarray:
    """Per-node scores of the leaves taken best first: ``(L − i) / L`` for the i-th of L leaves (the R package's),
    NaN for nodes not in ``leaves``.

    >>> scores_from_leaf_order(np.array([2, 3, 1]), 4)
    array([       nan, 0.33333333, 1.        , 0.66666667])
    """
    leaves = np.asarray(leaves, dtype=np.int64)
    scores = np.full(n_nodes, np.nan)
    n_leaves = len(leaves)
    scores[leaves] = (n_leaves - np.arange(n_leaves)) / n_leaves
    return scores


def best_prefix(n_pos: np.ndarray, n_neg: np.ndarray) -> np.ndarray:
    """The LeafRank merge of a partition's cells (§2.4): sort the cells by β̂/α̂ decreasing (α̂ = 0 as +inf, ties in
    cell order; an empty cell last) and keep the prefix union maximising β̂ − α̂ (within-cell rates; the empty union
    counts, value 0). It holds exactly the cells whose β̂/α̂ exceeds the whole partition's.

    Parameters
    ----------
    n_pos, n_neg : ndarray of shape (n_cells,)
        Positives and negatives (weighted counts) of each cell.

    Returns
    -------
    ndarray of bool, shape (n_cells,)
        True for the cells of the union L (the left child).

    >>> best_prefix(np.array([3., 1., 0.]), np.array([1., 1., 2.]))
    array([ True, False, False])
    """
    n_pos = np.asarray(n_pos, dtype=np.float64)
    n_neg = np.asarray(n_neg, dtype=np.float64)
    total_pos, total_neg = n_pos.sum(), n_neg.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(n_neg > 0, n_pos / np.where(n_neg > 0, n_neg, 1.0), np.where(n_pos > 0, np.inf, -np.inf))
    order = np.argsort(-ratio, kind="stable")
    # (β̂ − α̂) n+ n−, as sums of products of counts: exact for integer counts, so ties stay ties
    gain = np.concatenate([[0.0], np.cumsum(total_neg * n_pos[order] - total_pos * n_neg[order])])
    keep = int(np.argmax(gain))
    chosen = np.zeros(len(n_pos), dtype=bool)
    chosen[order[:keep]] = True
    return chosen


# ---------------------------------------------------------------------------------------------------------------
# LeafRanks: each returns the training points' side (True = left) and a rule that routes new points
# ---------------------------------------------------------------------------------------------------------------
class _SVMRule:
    """A fitted SVM LeafRank: its decision function, evaluated with numpy (BLAS) rather than libsvm's predictor,
    several times faster on the node's own points; L = the points where it is > 0.

    Built from libsvm's raw model (:func:`_fit_libsvm`): ``dual_coef`` and ``intercept`` are scikit-learn's
    ``SVC.dual_coef_[0]`` and ``SVC.intercept_[0]`` (libsvm's, sign flipped for a binary problem), ``coef`` its
    ``SVC.coef_`` (linear kernel)."""

    _CHUNK = 4096

    def __init__(self, support_vectors: np.ndarray, dual_coef: np.ndarray, intercept: float, linear: bool,
                 features: np.ndarray, gamma: float, center: np.ndarray | None = None,
                 scale_by: np.ndarray | None = None) -> None:
        self.features = features
        self.gamma = gamma
        self.center, self.scale_by = center, scale_by  # the node's standardisation (None: raw variables)
        self.intercept = float(intercept)
        if linear:  # SVC.coef_: its dual coefficients (a 1 x n_SV matrix) times the support vectors
            self.coef: np.ndarray | None = (dual_coef[None, :] @ support_vectors).ravel()
        else:
            self.coef = None
            self.support_vectors = np.ascontiguousarray(support_vectors)
            self.dual_coef = np.ascontiguousarray(dual_coef)
            self.sv_norms = np.einsum("ij,ij->i", self.support_vectors, self.support_vectors)

    def goes_left(self, X: np.ndarray) -> np.ndarray:
        return self.side(X[:, self.features])

    def decision(self, X_local: np.ndarray) -> np.ndarray:
        """The SVM's decision function on points given on the node's variables."""
        if self.center is not None:
            X_local = (X_local - self.center) / self.scale_by
        if self.coef is not None:
            return X_local @ self.coef + self.intercept
        out = np.empty(len(X_local))
        minus_gamma = -self.gamma
        for start in range(0, len(X_local), self._CHUNK):
            block = X_local[start:start + self._CHUNK]
            # exp(−γ max(‖x‖² − 2 x·s + ‖s‖², 0)), computed in place: the same operations, in the same order, as
            # the expression written out (a − 2b = a + (−2)b exactly), without its four temporaries
            k = block @ self.support_vectors.T
            k *= -2.0
            k += np.einsum("ij,ij->i", block, block)[:, None]
            k += self.sv_norms
            np.maximum(k, 0.0, out=k)
            k *= minus_gamma
            np.exp(k, out=k)
            out[start:start + self._CHUNK] = k @ self.dual_coef
        return out + self.intercept

    def side(self, X_local: np.ndarray) -> np.ndarray:
        """True for the points (on the node's variables) on the positive side of the SVM."""
        return self.decision(X_local) > 0


class _DyadicRule:
    def __init__(self, features: np.ndarray, low: np.ndarray, width: np.ndarray, n_bins: int,
                 cells: np.ndarray) -> None:
        self.features = features
        self.low = low
        self.width = width
        self.n_bins = n_bins
        self.cells = cells  # the cells of L, one row of bin indices each

    def goes_left(self, X: np.ndarray) -> np.ndarray:
        return self.side(X[:, self.features])

    def side(self, X_local: np.ndarray) -> np.ndarray:
        """True for the points (on the node's variables) in a cell of L."""
        bins = _dyadic_bins(X_local, self.low, self.width, self.n_bins)
        if len(self.cells) == 0 or len(bins) == 0:
            return np.zeros(len(bins), dtype=bool)
        _, inverse = np.unique(np.vstack([self.cells, bins]), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        return np.isin(inverse[len(self.cells):], inverse[:len(self.cells)])


def _dyadic_bins(X: np.ndarray, low: np.ndarray, width: np.ndarray, n_bins: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(width > 0, (X - low) / np.where(width > 0, width, 1.0), 0.0)
    return np.clip(np.floor(scaled * n_bins), 0, n_bins - 1).astype(np.int32)


def _svm_leafrank(X: np.ndarray, pos: np.ndarray, w: np.ndarray, features: np.ndarray, kernel: str, C: float,
                  gamma: str | float, scale: bool = True) -> _SVMRule:
    """The weighted SVM LeafRank (§2.7): libsvm's C-SVM with class weights 1 − p̂ for +1 and p̂ for −1 (and the
    sample weights); L = the positive side. With ``scale`` the node's variables are first standardised (weighted
    mean and standard deviation of its training points; a constant variable is left centred). ``gamma`` "scale" /
    "auto" are scikit-learn's, on the (standardised) node's data."""
    cell_pos = float(w[pos].sum())
    cell_neg = float(w[~pos].sum())
    p_hat = cell_pos / (cell_pos + cell_neg)
    center = scale_by = None
    if scale:
        # np.average(·, axis=0, weights=w), its operations without its argument checks (a tenth of a millisecond
        # a node): the weights as a column, their sum over it, the products summed over the rows, divided
        column = w.reshape(-1, 1)
        total = column.sum(axis=0)
        center = np.multiply(X, column).sum(axis=0) / total
        spread = np.sqrt(np.multiply((X - center) ** 2, column).sum(axis=0) / total)
        scale_by = np.where(spread > 0, spread, 1.0)
        X = (X - center) / scale_by
    if gamma == "scale":
        variance = float(X.var())
        gamma = 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
    elif gamma == "auto":
        gamma = 1.0 / X.shape[1]
    support_vectors, dual_coef, intercept = _fit_libsvm(X, pos, w, kernel, C, float(gamma), p_hat)
    return _SVMRule(support_vectors, dual_coef, intercept, kernel == "linear", features, float(gamma), center,
                    scale_by)


#: libsvm's settings in ``SVC()`` beyond kernel, C, gamma and the weights (read from scikit-learn's defaults).
_SVC_DEFAULTS = {name: getattr(SVC(), name) for name in ("degree", "coef0", "tol", "cache_size", "shrinking",
                                                         "max_iter")}


#: Largest node (points of positive weight) whose kernel matrix is computed whole (``_svm_gram``: 72 MB in float64)
#: and solved by libsvm's algorithm compiled (``_smo``); above it libsvm runs with its own kernel. Either way the
#: same model.
_GRAM_MAX_POINTS = 3000


def _fit_libsvm(X: np.ndarray, pos: np.ndarray, w: np.ndarray, kernel: str, C: float, gamma: float,
                p_hat: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``SVC(kernel, C, gamma, class_weight={1: 1 − p̂, −1: p̂}).fit(X, ±1, sample_weight=w)``'s model, bit for bit,
    without its wrapper (whose input validation, parameter checks and target encoding cost about twice libsvm's own
    time on a LeafRank's nodes; TreeRank has already checked the data). Returns SVC's ``support_vectors_``,
    ``dual_coef_[0]`` and ``intercept_[0]``.

    libsvm drops the points of zero weight before it solves (scikit-learn's ``remove_zero_weight``); they are
    dropped here first. A node of at most :data:`_GRAM_MAX_POINTS` such points with both classes is then grouped as
    libsvm groups it (class 0, i.e. −1, first), its kernel matrix computed whole by
    :func:`~forestlab.learners._svm_gram.libsvm_gram` (each entry the single-precision value libsvm's own kernel
    gives) and solved by :func:`~forestlab.learners._smo.fit_c_svc`, libsvm's solver step for step: the same model
    in about 0.4 (RBF) to 0.6 (linear) of libsvm's own time on Table A.1's nodes. Otherwise libsvm's trainer itself
    is called, as SVC calls it (classes −1, +1 coded 0, 1; its class weights in that order)."""
    keep = np.flatnonzero(w > 0)
    if len(keep) < len(w):
        X, pos, w = X[keep], pos[keep], w[keep]
    X = np.ascontiguousarray(X, dtype=np.float64)
    n_neg = len(pos) - int(np.count_nonzero(pos))
    if len(X) <= _GRAM_MAX_POINTS and 0 < n_neg < len(pos):
        from forestlab.learners._smo import fit_c_svc
        from forestlab.learners._svm_gram import libsvm_gram

        grouped = np.concatenate([np.flatnonzero(~pos), np.flatnonzero(pos)])
        K, _ = libsvm_gram(np.ascontiguousarray(X[grouped]), kernel, gamma)
        support, dual_coef, intercept, fit_status = fit_c_svc(
            K, n_neg, w[grouped], float(C), (p_hat, 1.0 - p_hat), _SVC_DEFAULTS["tol"], _SVC_DEFAULTS["shrinking"],
            _SVC_DEFAULTS["max_iter"])
        support_vectors = X[grouped[support]]
    else:
        from sklearn.svm import _libsvm

        _libsvm.set_verbosity_wrap(0)  # libsvm's global switch; SVC() sets it before each fit too
        (_, support_vectors, _, dual_coefs, intercepts, _, _, fit_status, _) = _libsvm.fit(
            X, pos.astype(np.float64), svm_type=0, sample_weight=np.ascontiguousarray(w, dtype=np.float64),
            class_weight=np.array([p_hat, 1.0 - p_hat]), kernel=kernel, C=float(C), nu=0.0, probability=False,
            epsilon=0.0, gamma=gamma, random_seed=0, **_SVC_DEFAULTS)
        dual_coef, intercept = dual_coefs[0], float(intercepts[0])
    if fit_status == 1:  # SVC's warning (max_iter reached; never with the default max_iter = −1)
        warnings.warn("Solver terminated early (max_iter reached).", ConvergenceWarning, stacklevel=3)
    # a binary SVC flips the signs of libsvm's dual coefficients and intercept (SVC.fit)
    return support_vectors, -dual_coef, -intercept


def _dyadic_leafrank(X: np.ndarray, pos: np.ndarray, w: np.ndarray, features: np.ndarray,
                     resolution: int) -> _DyadicRule:
    """The dyadic LeafRank (§2.5): the cells of the 2**m-per-variable grid on the node's bounding box, merged by
    :func:`best_prefix`."""
    low = X.min(axis=0)
    width = X.max(axis=0) - low
    n_bins = 2 ** resolution
    bins = _dyadic_bins(X, low, width, n_bins)
    cells, inverse = np.unique(bins, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    cell_pos = np.bincount(inverse, weights=np.where(pos, w, 0.0), minlength=len(cells))
    cell_neg = np.bincount(inverse, weights=np.where(pos, 0.0, w), minlength=len(cells))
    chosen = best_prefix(cell_pos, cell_neg)
    return _DyadicRule(features, low, width, n_bins, cells[chosen])


# ---------------------------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------------------------
class TreeRank(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """TreeRank ranking tree (depecker2010 §2.2) with a choice of LeafRank; a bipartite ranker.

    Parameters
    ----------
    leafrank : {"cart", "axis", "svm", "dyadic"}, default="cart"
        How each master node is split (see the module docstring): weighted CART (TRK_CART), one axis-parallel cut
        (chapter 1), weighted SVM (TRK_SVM), or a fixed dyadic partition of the node's bounding box.
    max_depth : int or None, default=10
        Depth of the master tree (root depth 0); None for no limit.
    min_samples_split : int, default=50
        A master node with fewer training points (counting sample weights) is a leaf. A node is also a leaf at
        ``max_depth``, when pure, or when the LeafRank leaves one side empty.
    max_features : int, float, str or None, default=None
        RF1: variables drawn without replacement at each master node for its LeafRank (int count, float fraction
        ``max(1, floor(f q))``, a rule of :func:`~forestlab.learners.resolve_max_features`; None = all). A count
        above the data's q features is a ValueError (not clipped).
    leafrank_max_depth : int or None, default=10
        Depth of each LeafRank CART (the R package's LRCart default).
    leafrank_min_samples_split : int, default=50
        A LeafRank CART node with fewer points is a leaf.
    leafrank_min_samples_leaf : int, default=1
        Fewest points in a LeafRank CART leaf (also bounds the sides of the ``"axis"`` cut).
    leafrank_max_features : int, float, str or None, default=None
        RF2: variables drawn at each node of the LeafRank CART among the master node's variables (count or fraction
        of those); None = all. A count above the master node's variables is a ValueError. Only the CART LeafRank
        reads it.
    leafrank_criterion : {"gini", "misclassification"}, default="gini"
        Impurity of the LeafRank CART, computed with the cost-sensitive weights (positives 1 − p̂_C, negatives
        p̂_C, which balance the two classes in every cell): weighted Gini, or the weighted misclassification error
        min(W+, W−) of the R package's LRCart (digest §6 item 6). A CART node is split only if the impurity
        decreases.
    svm_kernel : {"rbf", "linear"}, default="rbf"
        Kernel of the SVM LeafRank.
    svm_C : float, default=1.0
        Soft-margin constant of the SVM LeafRank (per-point costs C (1 − p̂_C) for positives, C p̂_C for negatives).
    svm_gamma : {"scale", "auto"} or float, default="scale"
        RBF width of the SVM LeafRank, as in :class:`sklearn.svm.SVC` (computed on each node's data, after the
        standardisation below when ``svm_scale``).
    svm_scale : bool, default=True
        Standardise the node's variables (weighted mean 0, variance 1 on the node's training points) before its SVM,
        as the R package's LeafRank ``LRsvm`` does through kernlab's ``ksvm(scaled = TRUE)``: the SVM's margin and
        gamma then mean the same on every variable whatever its unit. False: the raw variables.
    dyadic_resolution : int, default=2
        m of the dyadic LeafRank: the node's bounding box (of its training points, on its variables) is cut into
        2**m equal bins per variable; new points outside the box fall into the edge bins, points in cells that held
        no training point go right. The 2**(m q) cells make it a low-dimensional rule (§2.5): in 20 dimensions
        nearly every training point has a cell of its own.
    random_state : int, RandomState instance or None, default=None
        Seeds the RF1 / RF2 draws (a tree without randomisation does not depend on it).

    Attributes
    ----------
    max_features_ : int
        RF1 as applied: the variables drawn at each master node (``max_features`` resolved on the data's q).
    leafrank_max_features_ : int or None
        RF2 as applied: the variables drawn at each LeafRank CART node (None for the other LeafRanks).
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1) is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    tree_ : RankingTree
        The master tree (children, parents, depths, per-node training counts and split gains).
    n_leaves_ : int
        Number of leaves.
    leaves_ : ndarray of int64
        Leaf ids left to right (best to worst).
    train_auc_ : float
        Training AUC, ½ + ½ Σ Λ over the splits (equal to ``roc_auc_score`` of the training scores).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Relative importances of eqs 2.16–2.17 (squared AUC gains of the LeafRank CART splits per variable, weighted
        by the master cells' sizes), divided by their maximum (all 0 if no split). For ``"axis"`` each master split
        counts as a one-node CART. Not defined for ``"svm"`` and ``"dyadic"`` (AttributeError).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    >>> ranker = TreeRank(max_depth=3, random_state=0).fit(X, 2 * y - 1)
    >>> ranker.n_leaves_ <= 8, round(ranker.train_auc_, 3) > 0.9
    (True, True)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "leafrank": [StrOptions(set(LEAFRANKS))],
        "max_depth": [IntNotBool(0, None, closed="left"), None],
        "min_samples_split": [IntNotBool(2, None, closed="left")],
        "max_features": MAX_FEATURES_CONSTRAINTS,
        "leafrank_max_depth": [IntNotBool(1, None, closed="left"), None],
        "leafrank_min_samples_split": [IntNotBool(2, None, closed="left")],
        "leafrank_min_samples_leaf": [IntNotBool(1, None, closed="left")],
        "leafrank_max_features": MAX_FEATURES_CONSTRAINTS,
        "leafrank_criterion": [StrOptions({"gini", "misclassification"})],
        "svm_kernel": [StrOptions({"linear", "rbf"})],
        "svm_C": [Interval(numbers.Real, 0, None, closed="neither")],
        "svm_gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "svm_scale": ["boolean"],
        "dyadic_resolution": [IntNotBool(1, None, closed="left")],
        "random_state": ["random_state"],
    }

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """RF1 and RF2 counts that the data cannot give: ``max_features`` above the data's features, or (CART
        LeafRank, the one that reads it) ``leafrank_max_features`` above the variables of a master node."""
        return treerank_data_problems(params, n_features)

    def __init__(
        self,
        *,
        leafrank: str = "cart",
        max_depth: int | None = 10,
        min_samples_split: int = 50,
        max_features: int | float | str | None = None,
        leafrank_max_depth: int | None = 10,
        leafrank_min_samples_split: int = 50,
        leafrank_min_samples_leaf: int = 1,
        leafrank_max_features: int | float | str | None = None,
        leafrank_criterion: str = "gini",
        svm_kernel: str = "rbf",
        svm_C: float = 1.0,
        svm_gamma: str | float = "scale",
        svm_scale: bool = True,
        dyadic_resolution: int = 2,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.leafrank = leafrank
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.leafrank_max_depth = leafrank_max_depth
        self.leafrank_min_samples_split = leafrank_min_samples_split
        self.leafrank_min_samples_leaf = leafrank_min_samples_leaf
        self.leafrank_max_features = leafrank_max_features
        self.leafrank_criterion = leafrank_criterion
        self.svm_kernel = svm_kernel
        self.svm_C = svm_C
        self.svm_gamma = svm_gamma
        self.svm_scale = svm_scale
        self.dyadic_resolution = dyadic_resolution
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> TreeRank:
        """Grow the ranking tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (+1 = positive), both present. Any two labels are accepted, the greater one being
            the positive class (``classes_[1]``, scikit-learn's binary convention).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights; an integer weight k counts like k copies of the row (a bootstrap sample can be
            passed as counts). Rows of weight 0 are ignored.

        Returns
        -------
        self : TreeRank
            The fitted ranker.

        Raises
        ------
        ValueError
            If the labels are not exactly two classes, or the weights are invalid (negative, or zero for a whole
            class).
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "TreeRank")
        raise_data_problems(self, *X.shape, len(classes))
        weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        return self._fit_checked(X, classes, codes == 1, weight)

    def _fit_checked(self, X: np.ndarray, classes: np.ndarray, pos: np.ndarray, weight: np.ndarray) -> TreeRank:
        """``fit`` after its checks: X float64 and finite, ``classes`` the two sorted labels, ``pos`` the rows of
        the greater, ``weight`` float64 and non-negative. A ranking forest, which has checked its data and the
        trees' parameters once, grows each tree through it (the checks cost about a millisecond a tree)."""
        self.n_features_in_ = X.shape[1]
        keep = weight > 0
        if not (keep & pos).any() or not (keep & ~pos).any():
            raise ValueError("sample_weight is zero for every point of a class; TreeRank needs positives and "
                             "negatives of positive weight")
        if not keep.all():
            X, pos, weight = X[keep], pos[keep], weight[keep]
        self.classes_ = classes
        self._grow(X, pos, weight)
        return self

    def _grow(self, X: np.ndarray, pos: np.ndarray, weight: np.ndarray) -> None:
        n_features = X.shape[1]
        n_master = resolve_max_features(self.max_features, n_features)
        self.max_features_ = n_master
        self.leafrank_max_features_ = (
            resolve_max_features(self.leafrank_max_features, n_master, name="leafrank_max_features",
                                 of=_master_variables(self.max_features, n_master, n_features))
            if self.leafrank == "cart" else None)
        rng = check_random_state(self.random_state)
        if self.leafrank in ("cart", "axis"):
            self._grow_compiled(X, pos, weight, n_master, rng)
        else:
            self._grow_python(X, pos, weight, n_master, rng)
        self.leaves_ = self.tree_.leaves_in_order()
        self.n_leaves_ = len(self.leaves_)
        self.train_auc_ = float(0.5 + 0.5 * self.tree_.gain.sum())

    def _grow_compiled(self, X: np.ndarray, pos: np.ndarray, weight: np.ndarray, n_master: int,
                       rng: np.random.RandomState) -> None:
        """The CART and axis LeafRanks: the whole tree in one compiled call (``_treerank_kernels.grow``)."""
        from forestlab.learners import _treerank_kernels as kernels

        n_samples, n_features = X.shape
        index_type = np.int32 if n_samples < 2 ** 31 else np.int64
        order = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T, dtype=index_type)
        if self.leafrank == "axis":  # one cut maximising |Λ|: a one-node CART on the AUC criterion
            criterion, lr_depth, lr_split, lr_features = kernels.AUC, 1, 2.0, n_master
        else:
            criterion = {"gini": kernels.GINI, "misclassification": kernels.MISCLASSIFICATION}[
                self.leafrank_criterion]
            lr_depth = _UNLIMITED if self.leafrank_max_depth is None else self.leafrank_max_depth
            lr_split = float(self.leafrank_min_samples_split)
            lr_features = resolve_max_features(self.leafrank_max_features, n_master, name="leafrank_max_features",
                                               of=_master_variables(self.max_features, n_master, n_features))
        seed = int(rng.randint(0, np.iinfo(np.int64).max, dtype=np.int64))
        (left, right, parent, depth, n_pos, n_neg, gain, feat_start, feats, importance, *routing) = kernels.grow(
            np.asfortranarray(X), pos, weight, order, _UNLIMITED if self.max_depth is None else self.max_depth,
            float(self.min_samples_split), n_master, lr_depth, lr_split, float(self.leafrank_min_samples_leaf),
            lr_features, criterion, seed)
        if n_master < n_features:
            features = [feats[feat_start[m]:feat_start[m + 1]] for m in range(len(left))]
        else:
            every, none = np.arange(n_features), np.empty(0, dtype=np.int64)
            features = [none if child < 0 else every for child in left]
        self.tree_ = RankingTree(children_left=left, children_right=right, parent=parent, depth=depth, n_pos=n_pos,
                                 n_neg=n_neg, gain=gain, features=features)
        self._routing = tuple(routing)
        self._rules = None
        top = importance.max()
        self._importances = importance / top if top > 0 else importance

    def _grow_python(self, X: np.ndarray, pos: np.ndarray, weight: np.ndarray, n_master: int,
                     rng: np.random.RandomState) -> None:
        """The SVM and dyadic LeafRanks: a Python loop over the master nodes, a LeafRank object per split."""
        n_features = X.shape[1]
        max_depth = _UNLIMITED if self.max_depth is None else self.max_depth
        total_pos, total_neg = float(weight[pos].sum()), float(weight[~pos].sum())
        all_features = np.arange(n_features)
        left: list[int] = []
        right: list[int] = []
        parent: list[int] = []
        depth: list[int] = []
        n_pos: list[float] = []
        n_neg: list[float] = []
        gain: list[float] = []
        features: list[np.ndarray] = []
        rules: list[Any] = []
        # (sample indices, parent id, is the left child, depth): ids are given when popped (pre-order)
        stack: list[tuple[np.ndarray, int, bool, int]] = [(np.arange(len(pos)), -1, False, 0)]
        while stack:
            idx, par, is_left, d = stack.pop()
            node = len(left)
            left.append(-1)
            right.append(-1)
            parent.append(par)
            depth.append(d)
            if par >= 0:
                (left if is_left else right)[par] = node
            w = weight[idx]
            p = pos[idx]
            node_pos = float(w[p].sum())
            node_neg = float(w[~p].sum())
            n_pos.append(node_pos)
            n_neg.append(node_neg)
            gain.append(0.0)
            features.append(np.empty(0, dtype=np.int64))
            rules.append(None)
            if d >= max_depth or node_pos + node_neg < self.min_samples_split or node_pos == 0 or node_neg == 0:
                continue
            feats = all_features if n_master == n_features else np.sort(rng.choice(n_features, n_master,
                                                                                   replace=False))
            Xc = X[np.ix_(idx, feats)]
            if self.leafrank == "svm":
                rule: Any = _svm_leafrank(Xc, p, w, feats, self.svm_kernel, self.svm_C, self.svm_gamma,
                                          self.svm_scale)
            else:
                rule = _dyadic_leafrank(Xc, p, w, feats, self.dyadic_resolution)
            goes_left = rule.side(Xc)
            left_pos = float(w[goes_left & p].sum())
            left_neg = float(w[goes_left & ~p].sum())
            if left_pos + left_neg == 0 or left_pos + left_neg == node_pos + node_neg:
                continue
            gain[node] = (node_neg * left_pos - node_pos * left_neg) / (total_pos * total_neg)
            features[node] = feats
            rules[node] = rule
            stack.append((idx[~goes_left], node, False, d + 1))
            stack.append((idx[goes_left], node, True, d + 1))

        self.tree_ = RankingTree(children_left=np.asarray(left, dtype=np.int64),
                                 children_right=np.asarray(right, dtype=np.int64),
                                 parent=np.asarray(parent, dtype=np.int64), depth=np.asarray(depth, dtype=np.int64),
                                 n_pos=np.asarray(n_pos), n_neg=np.asarray(n_neg), gain=np.asarray(gain),
                                 features=features)
        self._rules = rules
        self._routing = None
        self._importances = None

    # ------------------------------------------------------------------------------------------------------------
    def _check_X(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def apply(self, X: Any, depth: int | None = None) -> np.ndarray:
        """The master-tree leaf each point falls into (of the tree truncated at ``depth`` if given).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        depth : int or None
            Truncation depth (>= 0); None for the whole tree.

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Node ids of ``tree_``.
        """
        X = self._check_X(X)
        return self._apply(X, depth)

    def _apply(self, X: np.ndarray, depth: int | None) -> np.ndarray:
        if depth is not None and (isinstance(depth, (bool, np.bool_)) or not isinstance(depth, numbers.Integral)
                                  or depth < 0):
            raise ValueError(f"depth must be an integer >= 0 or None, got {depth!r}")
        limit = _UNLIMITED if depth is None else int(depth)
        tree = self.tree_
        if self._routing is not None:
            from forestlab.learners._treerank_kernels import route

            return route(np.ascontiguousarray(X), *self._routing, tree.depth, limit)
        out = np.zeros(len(X), dtype=np.int64)
        stack = [(0, np.arange(len(X)))]
        while stack:
            m, rows = stack.pop()
            if tree.children_left[m] < 0 or tree.depth[m] >= limit or len(rows) == 0:
                out[rows] = m
                continue
            goes_left = self._rules[m].goes_left(X[rows])
            stack.append((int(tree.children_left[m]), rows[goes_left]))
            stack.append((int(tree.children_right[m]), rows[~goes_left]))
        return out

    def decision_function(self, X: Any, depth: int | None = None, leaves: Any = None) -> np.ndarray:
        """Ranking scores: higher = more likely positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        depth : int or None
            Score with the tree truncated at this depth; None for the whole tree. TreeRank grows greedily top-down,
            so this is the tree a fit with ``max_depth=depth`` grows (the same tree exactly without RF1/RF2
            randomisation; with it, one drawn from the same law, as the random draws come in another order).
        leaves : array-like of int, optional
            Score with the subtree (e.g. a pruned tree) whose leaves are these node ids, taken best first; each
            point goes to its leaf's member of ``leaves``. Exclusive with ``depth``.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
            ``(L − i) / L`` for a point in the i-th of the L leaves (i = 0 the leftmost).
        """
        return self._scores(self._check_X(X), depth, leaves)

    def _scores(self, X: np.ndarray, depth: int | None, leaves: Any) -> np.ndarray:
        if leaves is not None:
            if depth is not None:
                raise ValueError("give depth or leaves, not both")
            leaves = np.asarray(leaves, dtype=np.int64)
            nodes = self.tree_.collapse(self._apply(X, None), leaves)
        else:
            nodes = self._apply(X, depth)
            leaves = self.leaves_ if depth is None else self.tree_.leaves_in_order(depth)
        return scores_from_leaf_order(leaves, self.tree_.node_count)[nodes]

    @property
    def feature_importances_(self) -> np.ndarray:
        """Relative variable importances (eqs 2.16–2.17), max 1; CART and axis LeafRanks only."""
        check_is_fitted(self)
        if self._importances is None:
            raise AttributeError(f"feature_importances_ is defined for the 'cart' and 'axis' LeafRanks only, not "
                                 f"{self.leafrank!r}")
        return self._importances

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """Arrays for the report: AUC and scores against depth (from this one fit: the depth-d tree is the
        truncation, TreeRank being grown greedily top-down) and the feature importances.

        Depths run from 0 to ``max_depth`` (the parameter; the tree's own depth when it is None): a tree that
        stopped growing earlier gives its whole self at the depths past its own, so the curves of several runs
        line up.

        Parameters
        ----------
        X_test, y_test : array-like, optional
            Test data; both or neither. ``y_test`` is in the labels of ``classes_``.

        Returns
        -------
        dict of str to ndarray
            ``depth`` (0..max depth), ``train_auc`` (½ + ½ Σ Λ over the splits above each depth),
            ``feature_importance`` (CART and axis LeafRanks) and, with test data, ``test_auc`` by depth (NaN if the
            test set holds one class) and ``test_scores_by_depth`` (one row of test scores per depth). With test
            data of two variables (the 2-d toys), also the scores of the cut trees of depth 0 to 3 on a 64 x 64
            grid spanning the test data, ``grid_scores_by_depth``, ``grid_x`` and ``grid_y``, for the figures of
            the estimated cells.
        """
        check_is_fitted(self)
        check_test_pair(X_test, y_test)
        tree = self.tree_
        depths = np.arange((tree.max_depth if self.max_depth is None else max(self.max_depth, tree.max_depth)) + 1)
        internal = ~tree.is_leaf
        split_depth, split_gain = tree.depth[internal], tree.gain[internal]
        out = {"depth": depths,
               "train_auc": np.array([0.5 + 0.5 * split_gain[split_depth < d].sum() for d in depths])}
        if self._importances is not None:
            out["feature_importance"] = self._importances.copy()
        if X_test is not None:
            X_test = self._check_X(X_test)
            positive = np.asarray(y_test) == self.classes_[1]
            scores = np.vstack([self._scores(X_test, int(d), None) for d in depths])
            out["test_scores_by_depth"] = scores
            if positive.all() or not positive.any():
                out["test_auc"] = np.full(len(depths), np.nan)
            else:
                # roc_auc_score's value, bit for bit, without its input validation
                out["test_auc"] = np.array([auc(positive, row, pos_label=True) for row in scores])
            if X_test.shape[1] == 2 and len(X_test):
                gx = np.linspace(X_test[:, 0].min(), X_test[:, 0].max(), 64)
                gy = np.linspace(X_test[:, 1].min(), X_test[:, 1].max(), 64)
                grid = np.column_stack([np.tile(gx, len(gy)), np.repeat(gy, len(gx))])
                out["grid_x"], out["grid_y"] = gx, gy
                out["grid_scores_by_depth"] = np.vstack([self._scores(grid, int(d), None)
                                                         for d in depths[:4]]).astype(np.float32)
        return out

    @property
    def max_tree_depth_(self) -> int:
        """Depth of the master tree."""
        check_is_fitted(self)
        return self.tree_.max_depth

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: number of leaves and training AUC."""
        check_is_fitted(self)
        return {"n_leaves": float(self.n_leaves_), "train_auc": self.train_auc_}


#: TreeRank's parameters but ``random_state``: what the forest and the pruned tree pass through to their trees
#: under the same names (one list, read from TreeRank's signature).
TREERANK_PARAMS: tuple[str, ...] = tuple(name for name in TreeRank._get_param_names() if name != "random_state")
