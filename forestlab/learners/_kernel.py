"""The forest kernel of pisetta2010 and an SVM on it; an RBF-kernel SVM tuned the same way (an extension).

Pisetta, Jouve and Zighed (2010, §3.2) map a point x to the concatenated one-hot leaf indicators of the M trees of a
forest, Phi(x) in {0, 1}^D with D = the total number of leaves; the kernel is the number of trees in which two
points share a leaf,

    K(x, x') = <Phi(x), Phi(x')> = #{t : leaf_t(x) = leaf_t(x')}  in {0, ..., M},

positive semi-definite as a Gram matrix, with K(x, x) = M. Divided by M it is Breiman's (2001) proximity. Here it is
computed from the forest's leaf indices (``apply``) through sparse one-hot matrices and one sparse product, never a
loop over pairs: with n points and M trees, Phi has n*M non-zeros and K = Phi Phi^T.

:class:`ForestKernelSVC` grows the paper's forest (300 bootstrap trees, fully grown, round(sqrt d) features per
node) and fits a C-SVM (``SVC(kernel="precomputed")``) on its kernel, with C chosen on an inner 70/30 split of the
training part where the forest is regrown on the inner 70% (no leakage), then refits forest and SVM on the whole
training part. :class:`RBFSVC` is the Gaussian-kernel SVM baseline the paper does not have (an extension).

Beyond pisetta2010 (ours), two kernels of today read from the same trees, as ``forest_kernel`` options of
:class:`ForestKernelSVC`: Scornet's (2016) KeRF, Breiman's count normalised by the total size of the cells
(:func:`kerf_kernel`), and the RF-GAP proximities of Rhodes, Cutler and Moon (2023), built on the out-of-bag trees
and the in-bag multiplicities (:func:`rfgap_kernel`). Neither is symmetric nor positive semi-definite; the class
docstring says how the SVM receives them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab._values import is_int
from forestlab.learners._base import PositiveGrid, RunReportMixin, check_test_pair, check_two_classes
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.learners._data_rules import raise_data_problems
from forestlab.learners._forest import (
    FOREST_PARAMETER_CONSTRAINTS,
    BreimanForestClassifier,
    forest_data_problems,
    forest_like,
)

__all__ = [
    "FOREST_KERNELS",
    "ForestKernelSVC",
    "RBFSVC",
    "derived_seeds",
    "forest_kernel",
    "inbag_counts",
    "kerf_kernel",
    "kernel_target_alignment",
    "leaf_indicators",
    "leaf_kernel",
    "rfgap_kernel",
    "select_by_validation",
]

#: C values of pisetta2010 §5 ("C in {1, 10, 100, 10000}").
PAPER_C_GRID: tuple[float, ...] = (1, 10, 100, 10000)
#: RBF widths, as multiples of 1/d on standardised features (1 is scikit-learn's gamma="scale" there, e1071's default).
RBF_GAMMA_GRID: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0)
KERNEL_SCALES = ("count", "proximity")
#: The kernels ForestKernelSVC can read from its trees: Breiman's (pisetta2010's), Scornet's KeRF, RF-GAP.
FOREST_KERNELS = ("breiman", "kerf", "rfgap")


# ---------------------------------------------------------------------------------------------------------------
# The kernel
# ---------------------------------------------------------------------------------------------------------------
def _sk_forest(forest: Any) -> Any:
    """The scikit-learn forest behind ``forest`` (a BreimanForestClassifier's ``forest_``, or the forest itself)."""
    return getattr(forest, "forest_", forest)


def leaf_indicators(forest: Any, X: Any) -> sp.csr_matrix:
    """The one-hot leaf indicators Phi(X) of a fitted forest, as a sparse (n_samples, n_nodes_total) CSR matrix.

    Column ``offset_t + node`` of row i is 1 when sample i falls in leaf ``node`` of tree t (node ids are the trees'
    own; columns of internal nodes stay empty). Every row has exactly one non-zero per tree.

    Parameters
    ----------
    forest : fitted forest
        A :class:`~forestlab.learners.BreimanForestClassifier` or any scikit-learn tree ensemble with ``apply``.
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, sum of the trees' node counts), float64
    """
    sk = _sk_forest(forest)
    if hasattr(sk, "_validate_X_predict") and hasattr(sk, "estimators_"):
        # sk.apply(X), without dispatching every tree through joblib (a tenth of a millisecond a tree, several times
        # the lookup on small data): the input checked once as sk.apply checks it, then each tree's own lookup, as
        # tree.apply(X, check_input=False) does
        check_is_fitted(sk)
        X_checked = sk._validate_X_predict(X)
        leaves = np.column_stack([est.tree_.apply(X_checked) for est in sk.estimators_])
    else:
        leaves = np.asarray(sk.apply(X))  # (n, M) node ids; validates X
    if leaves.ndim == 1:
        leaves = leaves[:, None]
    counts = np.array([est.tree_.node_count for est in sk.estimators_], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    n, m = leaves.shape
    total = int(counts.sum())
    index_dtype = np.int32 if total < np.iinfo(np.int32).max and n * m < np.iinfo(np.int32).max else np.int64
    indices = (leaves + offsets[None, :]).ravel().astype(index_dtype)  # sorted within each row: offsets increase
    indptr = np.arange(0, n * m + 1, m, dtype=index_dtype)
    return sp.csr_matrix((np.ones(n * m), indices, indptr), shape=(n, total))


def leaf_kernel(phi_a: sp.spmatrix, phi_b: sp.spmatrix | None = None, *, n_trees: int | None = None,
                scale: str = "count") -> np.ndarray:
    """K = Phi_a Phi_b^T as a dense float64 array, from leaf indicators (one sparse product).

    Parameters
    ----------
    phi_a, phi_b : sparse matrices from :func:`leaf_indicators` (same forest); ``phi_b=None`` means ``phi_a``.
    n_trees : int, optional
        M, needed for ``scale="proximity"`` (default: the non-zeros of ``phi_a``'s first row).
    scale : {"count", "proximity"}
        ``"count"``: the number of trees where the points share a leaf (pisetta2010's K_ens, in {0..M});
        ``"proximity"``: that count / M (Breiman's proximity, in [0, 1]).
    """
    if scale not in KERNEL_SCALES:
        raise ValueError(f"scale must be one of {KERNEL_SCALES}, got {scale!r}")
    phi_a = sp.csr_matrix(phi_a)
    phi_b_t = phi_a.T.tocsr() if phi_b is None else sp.csr_matrix(phi_b).T.tocsr()
    if scale == "proximity" and n_trees is None:
        n_trees = int(phi_a.indptr[1] - phi_a.indptr[0]) if phi_a.shape[0] else 1
    return _gram(phi_a, phi_b_t, n_trees, scale)


def _gram(phi_a: sp.csr_matrix, phi_b_t: sp.csr_matrix, n_trees: int | None, scale: str) -> np.ndarray:
    """Phi_a Phi_b^T from Phi_a and the transpose of Phi_b, dense, divided by ``n_trees`` when ``scale`` is
    ``"proximity"``. Leaf indicators (0/1, as :func:`leaf_indicators` makes them) are counted by compiled code
    (:func:`~forestlab.learners._kernel_counts.shared_leaves`: the same counts, several times faster than the
    sparse product); other matrices go through the sparse product."""
    if phi_a.shape[1] != phi_b_t.shape[0]:
        raise ValueError(f"leaf indicators of different forests: {phi_a.shape[1]} and {phi_b_t.shape[0]} columns")
    if _zero_one(phi_a) and _zero_one(phi_b_t):
        from forestlab.learners._kernel_counts import shared_leaves

        K = shared_leaves(phi_a.indptr, phi_a.indices, phi_b_t.indptr, phi_b_t.indices, phi_b_t.shape[1])
    else:
        K = (phi_a @ phi_b_t).toarray()
    if scale == "proximity":
        K /= float(n_trees)
    return K


def _zero_one(phi: sp.csr_matrix) -> bool:
    """Whether a CSR matrix holds ones only, each at most once in a row (canonical format)."""
    return bool(phi.has_canonical_format and np.all(phi.data == 1.0))


def forest_kernel(forest: Any, X: Any, Y: Any = None, *, normalize: bool = False) -> np.ndarray:
    """The forest kernel between the rows of X and Y (Y=None: X), K[i, j] = #trees where X_i and Y_j share a leaf.

    Parameters
    ----------
    forest : fitted forest (see :func:`leaf_indicators`)
    X : array-like of shape (n_a, n_features)
    Y : array-like of shape (n_b, n_features), optional
    normalize : bool, default=False
        Divide by the number of trees (Breiman's proximity, in [0, 1]).

    Returns
    -------
    ndarray of shape (n_a, n_b), float64

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> rf = BreimanForestClassifier(n_estimators=7, random_state=0).fit(X, y)
    >>> K = forest_kernel(rf, X)
    >>> bool((K.diagonal() == 7).all()), bool((K == K.T).all())
    (True, True)
    """
    phi_a = leaf_indicators(forest, X)
    phi_b = None if Y is None else leaf_indicators(forest, Y)
    n_trees = len(_sk_forest(forest).estimators_)
    return leaf_kernel(phi_a, phi_b, n_trees=n_trees, scale="proximity" if normalize else "count")


# ---------------------------------------------------------------------------------------------------------------
# Forest kernels of today: KeRF and RF-GAP (ours: not in pisetta2010)
# ---------------------------------------------------------------------------------------------------------------
def inbag_counts(forest: Any, n_samples: int) -> np.ndarray:
    """c[t, j]: how many times training sample j was drawn into tree t's bootstrap sample (its in-bag
    multiplicity; 0 = out of bag), shape (n_trees, n_samples), from scikit-learn's ``estimators_samples_`` (the
    drawn indices, with their repeats). ValueError for a forest grown without bootstrap (no out-of-bag points)."""
    sk = _sk_forest(forest)
    if not getattr(sk, "bootstrap", False):
        raise ValueError("the RF-GAP kernel needs a forest grown on bootstrap samples (bootstrap=True): its "
                         "proximities are defined through the out-of-bag trees of each training point")
    return np.stack([np.bincount(np.asarray(idx), minlength=n_samples) for idx in sk.estimators_samples_])


def kerf_kernel(phi_q: sp.spmatrix, phi_train: sp.spmatrix) -> np.ndarray:
    """Scornet's (2016) KeRF kernel from the query points to the training points, in [0, 1]:

        K(x, x_j) = sum_t 1[x_j in A_t(x)] / sum_t N_t(x),

    A_t(x) the leaf of x in tree t and N_t(x) the number of training points (all of them, in-bag or not, each
    counted once) in it. The numerator is Breiman's count; the denominator is its row sum over the training
    points, so every row sums to 1 and the KeRF estimate of a regression function is K y. Not symmetric on the
    training points (each row has its own denominator) nor positive semi-definite in general.

    Parameters
    ----------
    phi_q, phi_train : sparse matrices from :func:`leaf_indicators` (same forest): the query and training points.

    Returns
    -------
    ndarray of shape (n_q, n_train), float64
    """
    phi_q = sp.csr_matrix(phi_q)
    phi_train = sp.csr_matrix(phi_train)
    K = (phi_q @ phi_train.T).toarray()
    cell_sizes = np.asarray(phi_train.sum(axis=0)).ravel()            # N_t(leaf) for every leaf column
    denom = phi_q @ cell_sizes                                        # sum_t N_t(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        K /= denom[:, None]
    K[denom == 0] = 0.0  # a query whose leaves hold no training point (impossible when the forest grew on them)
    return K


def rfgap_kernel(phi_q: sp.spmatrix, phi_train: sp.spmatrix, inbag: np.ndarray,
                 oob_of_train: bool = False) -> np.ndarray:
    """The RF-GAP proximities of Rhodes, Cutler and Moon (2023) from the query points to the training points:

        p(i, j) = (1 / |S_i|) sum_{t in S_i} c_j(t) 1[j in J_i(t)] / |M_i(t)|,

    S_i the trees where query i is out of bag (every tree for a point outside the training set), c_j(t) the
    in-bag multiplicity of training point j in tree t, J_i(t) the in-bag points in i's leaf and |M_i(t)| = the sum
    of their multiplicities (the leaf's in-bag multiset size). Each row sums to 1 (0 for a training point in
    every bootstrap sample, which has no out-of-bag tree) and the proximity-weighted vote of the training labels,
    sum_j p(i, j) 1[y_j = k], is the forest's out-of-bag class-k probability of i (the mean over the trees where i
    is out of bag of the in-bag class fraction of its leaf): RF-GAP's defining identity. p(i, i) = 0 on the
    training points; the matrix is neither symmetric nor positive semi-definite.

    Parameters
    ----------
    phi_q, phi_train : sparse matrices from :func:`leaf_indicators` (same forest).
    inbag : ndarray of shape (n_trees, n_train)
        The in-bag multiplicities (:func:`inbag_counts`).
    oob_of_train : bool, default=False
        The queries are the training points themselves (rows of ``phi_q`` = rows of ``phi_train``): S_i = the
        trees where i is out of bag. False: new points, S_i = every tree.

    Returns
    -------
    ndarray of shape (n_q, n_train), float64
    """
    phi_q = sp.csr_matrix(phi_q, dtype=np.float64, copy=True)
    W = sp.csr_matrix(phi_train, dtype=np.float64, copy=True)
    n_trees, n_train = inbag.shape
    if W.shape[0] != n_train or W.nnz != n_train * n_trees or phi_q.nnz != phi_q.shape[0] * n_trees:
        raise ValueError(f"rfgap_kernel needs leaf indicators of the {n_trees} trees of ``inbag`` (one leaf per "
                         f"tree and point) and {n_train} training points")
    # one non-zero per (row, tree), in the order of the trees (offsets increase): the data follow inbag's columns
    W.data = np.asarray(inbag, dtype=np.float64).T.ravel()
    leaf_mass = np.asarray(W.sum(axis=0)).ravel()                    # |M(t, leaf)| for every leaf column
    with np.errstate(divide="ignore"):
        inv_mass = np.where(leaf_mass > 0, 1.0 / leaf_mass, 0.0)
    if oob_of_train:
        if phi_q.shape[0] != n_train:
            raise ValueError("oob_of_train=True needs the training points themselves as queries")
        oob = (np.asarray(inbag) == 0).T                                # (n_train, n_trees)
        n_oob = oob.sum(axis=1)
        with np.errstate(divide="ignore"):
            row_weight = np.where(n_oob > 0, 1.0 / np.maximum(n_oob, 1), 0.0)
        phi_q.data = oob.ravel() * np.repeat(row_weight, n_trees)
    else:
        phi_q.data = np.full(phi_q.nnz, 1.0 / n_trees)
    phi_q.data *= inv_mass[phi_q.indices]
    W.eliminate_zeros()
    return (phi_q @ W.T).toarray()


def kernel_target_alignment(K: np.ndarray, y: Any) -> float:
    """Kernel-target alignment A(K, T) = <K, T>_F / (||K||_F ||T||_F) (Cristianini et al. 2002).

    Binary labels: T = y y^T with y in {-1, +1} (+1 for same-class pairs, -1 otherwise), pisetta2010 §2.2.
    More than two classes: T = the label-equality kernel, T_ij = 1{y_i = y_j} (the Gram matrix of one-hot labels,
    positive semi-definite), so the alignment is computed class by class without forming T. A is invariant to the
    scale of K (count or proximity give the same value). NaN for an all-zero K.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        A Gram matrix on the points labelled ``y``.
    y : array-like of shape (n,)
    """
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] != y.shape[0]:
        raise ValueError(f"K must be square with one row per label, got K {K.shape} and y {y.shape}")
    norm_k = float(np.linalg.norm(K))
    if norm_k == 0.0:
        return float("nan")
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) <= 2:
        s = np.where(codes == len(classes) - 1, 1.0, -1.0) if len(classes) == 2 else np.ones(len(y))
        return float(s @ K @ s / (norm_k * len(y)))
    onehot = np.zeros((len(y), len(classes)))
    onehot[np.arange(len(y)), codes] = 1.0
    num = float(np.sum(onehot * (K @ onehot)))
    norm_t = math.sqrt(float(np.sum(np.bincount(codes) ** 2)))
    return num / (norm_k * norm_t)


# ---------------------------------------------------------------------------------------------------------------
# Shared machinery
# ---------------------------------------------------------------------------------------------------------------
def derived_seeds(random_state: Any, n: int) -> tuple[int, list[int]]:
    """A base seed and ``n`` independent 31-bit seeds derived from it (deterministic for an int random_state).

    The base is ``random_state`` itself when it is an int, so a forest grown with it is the forest another learner
    grows with the same ``random_state`` (the runner's ``seed_tag``); the others come from NumPy's SeedSequence.
    """
    if is_int(random_state):
        base = int(random_state)
    else:
        base = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    children = np.random.SeedSequence([base, 20100101]).generate_state(max(n, 1), dtype=np.uint32)
    return base, [int(s) & 0x7FFFFFFF for s in children[:n]]


def inner_learn_size(n: int, train_size: float) -> int | None:
    """The learning part of an inner split of ``n`` points, ``round(train_size n)``; None when the sizes allow no
    split (fewer than 4 points, fewer than 2 to learn from or none to validate on)."""
    n_learn = int(round(train_size * n))
    if n < 4 or n_learn < 2 or n - n_learn < 1:
        return None
    return n_learn


def svm_grid_problems(params: Mapping[str, Any], n_samples: int, grids: Sequence[str]) -> list[str]:
    """The candidates of an SVM's grids (``grids``: the parameter names) that ``n_samples`` training points cannot
    compare: more than one candidate and no inner split of that size (:func:`inner_learn_size`). Once refused,
    never replaced by the first candidate without a word."""
    sizes = [len(_grid_values(params[g])) for g in grids]
    n_candidates = int(np.prod(sizes))
    if n_candidates > 1 and inner_learn_size(n_samples, float(params["inner_train_size"])) is None:
        given = ", ".join(f"{g} of {k} value{'s' if k > 1 else ''}" for g, k in zip(grids, sizes, strict=True))
        return [f"{given}: {n_candidates} candidates to compare on an inner split, but the {n_samples} training "
                f"points of the data cannot be split into a learning and a validation part "
                f"(inner_train_size={params['inner_train_size']}; at least 4 points); give one value"]
    return []


def inner_split(y: np.ndarray, train_size: float, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Indices of an inner learn/validation split of the training part: stratified when every class has at least
    two points, else plain. None when no split with both parts non-empty and two classes to learn from exists."""
    n = len(y)
    n_learn = inner_learn_size(n, train_size)
    if n_learn is None:
        return None
    _, counts = np.unique(y, return_counts=True)
    stratify = y if counts.min() >= 2 and n - n_learn >= len(counts) and n_learn >= len(counts) else None
    idx = np.arange(n)
    learn, val = train_test_split(idx, train_size=n_learn, random_state=seed, stratify=stratify)
    if len(np.unique(y[learn])) < 2:
        return None
    return np.sort(learn), np.sort(val)


def select_by_validation(scores: Sequence[float]) -> int:
    """Index of the best validation score, the first on ties (grids are ordered most regularised first)."""
    arr = np.asarray(scores, dtype=float)
    return int(np.flatnonzero(arr == np.nanmax(arr))[0])


def _grid_values(values: Any) -> list[float]:
    """A grid parameter (checked by its ``PositiveGrid`` constraint) as sorted distinct floats."""
    return sorted({float(v) for v in np.atleast_1d(np.asarray(values, dtype=float))})


#: Constraints of the parameters both SVMs have.
_SVM_PARAMETER_CONSTRAINTS: dict[str, list[Any]] = {
    "C_grid": [PositiveGrid()],
    "inner_train_size": [Interval(RealNotInt, 0.0, 1.0, closed="neither")],
    "tol": [Interval(Real, 0.0, None, closed="neither")],
    "cache_size": [Interval(Real, 0.0, None, closed="neither")],
    "random_state": ["random_state"],
}


class _SVMBase(RunReportMixin, ClassifierMixin, BaseEstimator):
    """predict / decision_function for an SVC on a kernel ``self._kernel(X)`` against the training points."""

    svc_: SVC

    def _kernel(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_X_predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def decision_function(self, X: Any) -> np.ndarray:
        """The SVM's decision values; binary: shape (n_samples,), positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes) (one-vs-one votes shaped one-vs-rest)
        """
        K = self._kernel(self._validate_X_predict(X))
        return self.svc_.decision_function(K)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels (one-vs-one voting with more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        K = self._kernel(self._validate_X_predict(X))
        return self.classes_.take(self.svc_.predict(K))


def _symmetric(K: np.ndarray) -> np.ndarray:
    """(K + K^T) / 2: the matrix whose quadratic form is K's (what an SVM's dual sees of K)."""
    K = K + K.T
    K *= 0.5
    return K


class _TrainKernel:
    """What KeRF or RF-GAP needs of a fitted forest and its training points to give kernel rows: the training leaf
    indicators and, for RF-GAP, the in-bag multiplicities. ``scale="count"`` multiplies by the number of trees."""

    def __init__(self, kind: str, scale: str, forest: Any, phi_train: sp.csr_matrix) -> None:
        self.kind = kind
        self.phi_train = phi_train
        self.n_trees = len(_sk_forest(forest).estimators_)
        self.factor = float(self.n_trees) if scale == "count" else 1.0
        self.inbag = inbag_counts(forest, phi_train.shape[0]) if kind == "rfgap" else None

    def _scaled(self, K: np.ndarray) -> np.ndarray:
        if self.factor != 1.0:
            K *= self.factor
        return K

    def rows(self, phi_q: sp.csr_matrix) -> np.ndarray:
        """K(new points, training points)."""
        if self.kind == "kerf":
            return self._scaled(kerf_kernel(phi_q, self.phi_train))
        return self._scaled(rfgap_kernel(phi_q, self.phi_train, self.inbag))

    def gram(self) -> np.ndarray:
        """K(training points, training points), not symmetrised (RF-GAP: each row from its out-of-bag trees)."""
        if self.kind == "kerf":
            return self._scaled(kerf_kernel(self.phi_train, self.phi_train))
        return self._scaled(rfgap_kernel(self.phi_train, self.phi_train, self.inbag, oob_of_train=True))


# ---------------------------------------------------------------------------------------------------------------
# The forest-kernel SVM
# ---------------------------------------------------------------------------------------------------------------
class ForestKernelSVC(_SVMBase):
    """C-SVM on the forest kernel of pisetta2010 (Table 1, "SVM + Noyau Forêt").

    Fit: (1) split the training part 70/30 (stratified, seeded from ``random_state``); grow the forest on the inner
    70%, compute the kernel among those points and from the inner 30% to them, fit an SVM for every C of ``C_grid``
    and keep the best validation accuracy (ties: the smallest C); (2) grow the forest on the whole training part
    with ``random_state`` itself, which is the forest an :class:`~forestlab.learners.BreimanForestClassifier` with
    the same parameters and seed grows (the majority vote of Table 1); refit the SVM with the chosen C on its
    kernel. Validation points never take part in growing the trees used to score them.

    ``forest_kernel`` chooses the kernel read from the trees (the same trees whichever it is): Breiman's count
    (the paper's), or, beyond pisetta2010, Scornet's KeRF (:func:`kerf_kernel`) or the RF-GAP proximities of
    Rhodes et al. (:func:`rfgap_kernel`). How the SVM receives them: Breiman's kernel is a Gram matrix (Phi
    Phi^T, positive semi-definite) and goes to libsvm as it is. KeRF and RF-GAP are neither symmetric nor
    positive semi-definite (RF-GAP's training diagonal is even 0). The SVM is fitted on the symmetric part
    (K + K^T) / 2 of the training kernel, which leaves the dual objective unchanged (a quadratic form only sees
    the symmetric part), and libsvm's SMO solves that dual as it is: with an indefinite matrix it still
    converges, to a stationary point of a non-convex problem (Lin & Lin 2003; libsvm's working-set selection
    replaces a non-positive curvature by a small tau, Fan, Chen & Lin 2005), with no eigenvalue clipping or
    shifting, so that the kernel of a new point to the training points, K(x, x_j), enters the decision
    function f(x) = sum_j alpha_j y_j K(x, x_j) + b exactly as defined. For RF-GAP a training point's row uses
    its out-of-bag trees only and a new point's row every tree: both are proximities of a point that did not
    grow the trees it is read from.

    Parameters
    ----------
    n_estimators : int, default=300
        Number of trees M (pisetta2010 §5: 300).
    max_features : int, float, str or None, default="round_sqrt"
        Features drawn at each node (:func:`~forestlab.learners.resolve_max_features`; the paper: nearest integer
        to sqrt d).
    max_depth : int or None, default=None
        None grows the trees to pure leaves, as the paper.
    min_samples_leaf : int, default=1
    bootstrap : bool, default=True
    criterion : str, default="gini"
    kernel_scale : {"count", "proximity"}, default="count"
        ``"count"``: K in {0..M}, the paper's K_ens (§3.2), on which its C grid acts; ``"proximity"``: K / M
        (Breiman's proximity; equivalent to dividing every C by M). For KeRF and RF-GAP, ``"proximity"`` is the
        kernel as its paper defines it (rows summing to 1) and ``"count"`` that kernel times M (so that the C grid
        acts on every kernel as on the paper's count).
    forest_kernel : {"breiman", "kerf", "rfgap"}, default="breiman"
        The kernel read from the trees (above). ``"rfgap"`` needs ``bootstrap=True``.
    C_grid : sequence of float, default=(1, 10, 100, 10000)
        Candidate C values (pisetta2010 §5). A single value skips the inner split. Several values on fewer than 4
        training points (no inner split) are a ValueError; an inner learning part that drew one class only (tiny
        or very unbalanced data) compares nothing and keeps the smallest C, with ``validation_accuracy_`` and the
        diagnostic ``val_accuracy`` NaN to say so.
    inner_train_size : float, default=0.7
        Share of the training part the inner forest and SVMs learn from; the rest validates C.
    tol : float, default=1e-3
        SVC stopping tolerance.
    cache_size : float, default=200
        SVC kernel cache (MB).
    random_state : int, RandomState instance or None, default=None
        Seeds the final forest (an int is passed through unchanged) and, through derived seeds, the inner split and
        the inner forest.
    n_jobs : int or None, default=None
        Threads for growing and applying the forests.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    forest_ : BreimanForestClassifier
        The forest grown on the whole training part (shared, read-only, when fitted through a FitCache).
    svc_ : sklearn.svm.SVC
        The SVM on the precomputed kernel, fitted with the chosen C.
    C_ : float
        The chosen C.
    selected_params_ : dict
        ``{"C": C_}`` (stored by the runner as the run's selected hyperparameters).
    validation_accuracy_ : ndarray of shape (len(C_grid),)
        Inner validation accuracy of each C (NaN when no inner split was possible).
    diagnostics_ : dict of str to float
        ``kta_forest``: kernel-target alignment of the training Gram matrix (optimistic: in-bag points of one class
        share pure leaves); ``kta_forest_val``: alignment of the inner validation points' Gram matrix under the
        inner forest (honest: none of them grew those trees); ``log10_C``; ``val_accuracy`` (at the chosen C);
        ``sv_fraction`` (support vectors / training points); ``forest_oob_risk``. For KeRF and RF-GAP,
        ``kernel_asymmetry`` = ||K − K^T||_F / ||K||_F of the training kernel before symmetrisation, and
        ``kta_forest_val`` is NaN for RF-GAP (its proximities between two points outside the training set are
        not defined).

    Notes
    -----
    With more than two classes the SVC votes one-vs-one. ``fit`` accepts ``fit_cache`` (see
    :mod:`forestlab.learners._cache`): both forests are grown through it, so a vote and one or more SVMs on the
    same split and seed share their trees.
    """

    forest_: BreimanForestClassifier
    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **FOREST_PARAMETER_CONSTRAINTS,
        **_SVM_PARAMETER_CONSTRAINTS,
        "kernel_scale": [StrOptions(set(KERNEL_SCALES))],
        "forest_kernel": [StrOptions(set(FOREST_KERNELS))],
    }

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """The forest's ``max_features`` above the data's features; a C grid that the data cannot search."""
        return [*forest_data_problems(params, n_samples, n_features, n_classes),
                *svm_grid_problems(params, n_samples, ("C_grid",))]

    def __init__(
        self,
        *,
        n_estimators: int = 300,
        max_features: int | float | str | None = "round_sqrt",
        max_depth: int | None = None,
        min_samples_leaf: int | float = 1,
        bootstrap: bool = True,
        criterion: str = "gini",
        kernel_scale: str = "count",
        forest_kernel: str = "breiman",
        C_grid: Sequence[float] = PAPER_C_GRID,
        inner_train_size: float = 0.7,
        tol: float = 1e-3,
        cache_size: float = 200,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.criterion = criterion
        self.kernel_scale = kernel_scale
        self.forest_kernel = forest_kernel
        self.C_grid = C_grid
        self.inner_train_size = inner_train_size
        self.tol = tol
        self.cache_size = cache_size
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------------------------------------------------
    def _svc(self, C: float) -> SVC:
        return SVC(C=C, kernel="precomputed", tol=self.tol, cache_size=self.cache_size)

    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> ForestKernelSVC:
        """Choose C on an inner split (forest regrown there), then fit forest and SVM on all of (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        fit_cache : FitCache, optional
            Grow the forests through this cache (shared with the runs of the same split and seed tag).

        Returns
        -------
        self : ForestKernelSVC
        """
        self._validate_params()
        if self.forest_kernel == "rfgap" and not self.bootstrap:
            raise ValueError("forest_kernel='rfgap' needs bootstrap=True: RF-GAP's proximities are defined through "
                             "the out-of-bag trees of each training point")
        grid = _grid_values(self.C_grid)
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, codes = check_two_classes(y, "an SVM")
        raise_data_problems(self, *X.shape, len(classes))
        base, (split_seed, inner_seed) = derived_seeds(self.random_state, 2)

        scores = np.full(len(grid), np.nan)
        kta_val = float("nan")
        split = inner_split(codes, float(self.inner_train_size), split_seed) if len(grid) > 1 else None
        if split is not None:
            learn, val = split
            inner = fit_with_cache(forest_like(self, random_state=inner_seed), X[learn], y[learn], fit_cache)
            phi_learn, phi_val = leaf_indicators(inner, X[learn]), leaf_indicators(inner, X[val])
            if self.forest_kernel == "breiman":
                K_learn = leaf_kernel(phi_learn, n_trees=self.n_estimators, scale=self.kernel_scale)
                K_val = leaf_kernel(phi_val, phi_learn, n_trees=self.n_estimators, scale=self.kernel_scale)
                kta_val = kernel_target_alignment(leaf_kernel(phi_val, scale="count"), codes[val])
            else:
                state = _TrainKernel(self.forest_kernel, self.kernel_scale, inner, phi_learn)
                K_learn = _symmetric(state.gram())
                K_val = state.rows(phi_val)
                if self.forest_kernel == "kerf":
                    kta_val = kernel_target_alignment(_symmetric(kerf_kernel(phi_val, phi_val)), codes[val])
            for i, C in enumerate(grid):
                svc = self._svc(C).fit(K_learn, codes[learn])
                scores[i] = float(np.mean(svc.predict(K_val) == codes[val]))
        best = select_by_validation(scores) if split is not None else 0

        forest = fit_with_cache(forest_like(self, random_state=base), X, y, fit_cache)
        phi = leaf_indicators(forest, X)
        asymmetry = None
        if self.forest_kernel == "breiman":
            K = leaf_kernel(phi, n_trees=self.n_estimators, scale=self.kernel_scale)
            self._state = None
        else:
            self._state = _TrainKernel(self.forest_kernel, self.kernel_scale, forest, phi)
            K_raw = self._state.gram()
            norm = float(np.linalg.norm(K_raw))
            asymmetry = float(np.linalg.norm(K_raw - K_raw.T) / norm) if norm > 0 else 0.0
            K = _symmetric(K_raw)
            del K_raw
        C = grid[best]
        self.svc_ = self._svc(C).fit(K, codes)
        self.classes_ = classes
        self.forest_ = forest
        self._phi_train_t = phi.T.tocsr()
        self._train_codes = codes
        self.C_ = C
        self.C_grid_ = np.asarray(grid)
        self.validation_accuracy_ = scores
        self.selected_params_ = {"C": C}
        self.diagnostics_ = {
            "kta_forest": kernel_target_alignment(K, codes),
            "kta_forest_val": kta_val,
            "log10_C": math.log10(C),
            "val_accuracy": float(scores[best]),
            "sv_fraction": float(self.svc_.support_.size / len(codes)),
        }
        if asymmetry is not None:
            self.diagnostics_["kernel_asymmetry"] = asymmetry
        if getattr(forest, "oob_error_", None) is not None:
            self.diagnostics_["forest_oob_risk"] = float(forest.oob_error_)
        return self

    def _kernel(self, X: np.ndarray) -> np.ndarray:
        if getattr(self, "_state", None) is not None:
            return self._state.rows(leaf_indicators(self.forest_, X))
        return _gram(leaf_indicators(self.forest_, X), self._phi_train_t, self.n_estimators, self.kernel_scale)

    def _train_gram(self) -> np.ndarray:
        """The training kernel the SVM was fitted on (symmetrised for KeRF and RF-GAP)."""
        if getattr(self, "_state", None) is not None:
            return _symmetric(self._state.gram())
        phi_t = self._phi_train_t
        return _gram(phi_t.T.tocsr(), phi_t, self.n_estimators, self.kernel_scale)

    def kernel(self, X: Any, Y: Any = None) -> np.ndarray:
        """The fitted forest's kernel (in this estimator's ``kernel_scale``) between X and Y (default X).

        With ``forest_kernel="kerf"`` or ``"rfgap"`` the kernel is defined from points to the training points
        (it is normalised by the training points' cells): ``kernel(X)`` gives K(X, training points), as a new point
        (RF-GAP: every tree), and Y must be None.
        """
        check_is_fitted(self)
        if self.forest_kernel != "breiman":
            if Y is not None:
                raise ValueError(f"forest_kernel={self.forest_kernel!r} is a kernel to the training points: "
                                 "call kernel(X) without Y")
            return self._kernel(self._validate_X_predict(X))
        return forest_kernel(self.forest_, X, Y, normalize=self.kernel_scale == "proximity")

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """Arrays for figures and tables (the runner stores them beside the run): accuracy by C.

        Returns ``C_grid``, ``val_accuracy_by_C`` (inner validation) and, with test data, ``test_accuracy_by_C``:
        the test accuracy of the SVM refitted with each C on the final forest's kernel (pisetta2010's remark that
        C matters little, H004-7). Each extra C costs one SVM fit on the stored training kernel.
        """
        check_is_fitted(self)
        out = {"C_grid": self.C_grid_.copy(), "val_accuracy_by_C": self.validation_accuracy_.copy()}
        check_test_pair(X_test, y_test)
        if X_test is not None:
            X_test = self._validate_X_predict(X_test)
            y_test = np.asarray(y_test)
            K_test = self._kernel(X_test)
            K = self._train_gram()
            acc = []
            for C in self.C_grid_:
                svc = self.svc_ if C == self.C_ else self._svc(float(C)).fit(K, self._train_codes)
                acc.append(float(np.mean(self.classes_.take(svc.predict(K_test)) == y_test)))
            out["test_accuracy_by_C"] = np.asarray(acc)
        return out


# ---------------------------------------------------------------------------------------------------------------
# The RBF-kernel SVM (extension)
# ---------------------------------------------------------------------------------------------------------------
class RBFSVC(_SVMBase):
    """Gaussian-kernel C-SVM on standardised features, C and gamma chosen on an inner 70/30 split (an extension:
    pisetta2010 has no RBF baseline).

    The features are standardised with the mean and standard deviation of the data the SVM learns from (the inner
    70% during selection, the whole training part for the final model). ``gamma = g / d`` for g in
    ``gamma_grid`` (d = number of features; g = 1 is scikit-learn's ``gamma="scale"`` on standardised data and
    e1071's default). Candidates are tried C-major from the smallest C and the smallest gamma; ties keep the first
    (the most regularised, the smoothest).

    Parameters
    ----------
    C_grid : sequence of float, default=(1, 10, 100, 10000)
        As :class:`ForestKernelSVC`.
    gamma_grid : sequence of float, default=(0.01, 0.1, 1, 10)
        Kernel widths as multiples of 1/d.
    inner_train_size : float, default=0.7
    tol, cache_size : SVC settings.
    random_state : int, RandomState instance or None
        Seeds the inner split (the SVM itself is deterministic).

    Attributes
    ----------
    classes_, n_features_in_, svc_
    scaler_ : StandardScaler
    C_, gamma_ : float
        Chosen values (gamma in absolute units).
    selected_params_ : dict
        ``{"C": C_, "gamma_factor": g}`` (gamma = g / d).
    validation_accuracy_ : ndarray of shape (len(C_grid), len(gamma_grid))
    diagnostics_ : dict of str to float
        ``kta_rbf`` (training Gram matrix at the chosen gamma), ``kta_rbf_val`` (the inner validation points'
        Gram matrix, inner scaler, chosen gamma), ``log10_C``, ``log10_gamma_factor``, ``val_accuracy``,
        ``sv_fraction``.
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {**_SVM_PARAMETER_CONSTRAINTS,
                                                               "gamma_grid": [PositiveGrid()]}

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """A (C, gamma) grid that the data cannot search."""
        return svm_grid_problems(params, n_samples, ("C_grid", "gamma_grid"))

    def __init__(
        self,
        *,
        C_grid: Sequence[float] = PAPER_C_GRID,
        gamma_grid: Sequence[float] = RBF_GAMMA_GRID,
        inner_train_size: float = 0.7,
        tol: float = 1e-3,
        cache_size: float = 200,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.C_grid = C_grid
        self.gamma_grid = gamma_grid
        self.inner_train_size = inner_train_size
        self.tol = tol
        self.cache_size = cache_size
        self.random_state = random_state

    def _svc(self, C: float, gamma: float) -> SVC:
        return SVC(C=C, kernel="rbf", gamma=gamma, tol=self.tol, cache_size=self.cache_size)

    def fit(self, X: Any, y: Any) -> RBFSVC:
        """Choose (C, gamma) on an inner split, then fit the scaler and the SVM on all of (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : RBFSVC
        """
        self._validate_params()
        c_grid = _grid_values(self.C_grid)
        g_grid = _grid_values(self.gamma_grid)
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, codes = check_two_classes(y, "an SVM")
        raise_data_problems(self, *X.shape, len(classes))
        _, (split_seed,) = derived_seeds(self.random_state, 1)
        d = X.shape[1]
        scores = np.full((len(c_grid), len(g_grid)), np.nan)
        kta_val = float("nan")
        n_candidates = len(c_grid) * len(g_grid)
        split = inner_split(codes, float(self.inner_train_size), split_seed) if n_candidates > 1 else None
        if split is not None:
            learn, val = split
            scaler = StandardScaler().fit(X[learn])
            Xl, Xv = scaler.transform(X[learn]), scaler.transform(X[val])
            for i, C in enumerate(c_grid):
                for j, g in enumerate(g_grid):
                    svc = self._svc(C, g / d).fit(Xl, codes[learn])
                    scores[i, j] = float(np.mean(svc.predict(Xv) == codes[val]))
        best = select_by_validation(scores.ravel()) if split is not None else 0
        bi, bj = divmod(best, len(g_grid))
        C, g = c_grid[bi], g_grid[bj]
        if split is not None:
            kta_val = kernel_target_alignment(_rbf_gram(Xv, g / d), codes[val])
        self.scaler_ = StandardScaler().fit(X)
        Xs = self.scaler_.transform(X)
        self.svc_ = self._svc(C, g / d).fit(Xs, codes)
        self.classes_ = classes
        self.C_, self.gamma_ = C, g / d
        self.validation_accuracy_ = scores
        self.selected_params_ = {"C": C, "gamma_factor": g}
        self.diagnostics_ = {
            "kta_rbf": kernel_target_alignment(_rbf_gram(Xs, g / d), codes),
            "kta_rbf_val": kta_val,
            "log10_C": math.log10(C),
            "log10_gamma_factor": math.log10(g),
            "val_accuracy": float(scores[bi, bj]),
            "sv_fraction": float(self.svc_.support_.size / len(codes)),
        }
        return self

    def _kernel(self, X: np.ndarray) -> np.ndarray:
        return self.scaler_.transform(X)  # the SVC computes the RBF kernel itself


def _rbf_gram(X: np.ndarray, gamma: float) -> np.ndarray:
    sq = np.einsum("ij,ij->i", X, X)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (X @ X.T), 0.0)
    return np.exp(-gamma * D)
