"""Bagged TreeRank and Ranking Forests (depecker2010 ch. 4, digest §2.10-2.12).

B :class:`~forestlab.learners._treerank.TreeRank` trees are grown on bootstrap samples of the training set, each with
its own seed; feature randomisation is TreeRank's own: ``max_features`` = q1 variables drawn at each master node
(RF1), ``leafrank_max_features`` = q2 variables drawn at each node of the LeafRank CART (RF2). With both left at None
the forest is *bagged TreeRank* (Bagg_CART, Bagg_SVM).

The thesis aggregates the B rankings **on the sample being scored** (its strategy (ii)): with Spearman's rho as the
distance between rankings, the median preorder is the order of the mean midranks (:func:`spearman_consensus`); the
footrule gives the median midrank. Those scores depend on the batch scored, so the Python default is the R package
``TreeRankForest``'s mean of the trees' normalised scores (a score of each point); every configured forest
(conf/algorithm/_ranking_forest.yaml) sets ``aggregation: mean_rank``, the thesis's, which its tables use.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab._values import is_int
from forestlab.learners._base import (
    BipartiteRankerMixin,
    IntNotBool,
    RunReportMixin,
    check_test_pair,
)
from forestlab.learners._data_rules import raise_data_problems
from forestlab.learners._treerank import TREERANK_PARAMS, TreeRank, treerank_data_problems
from forestlab.metrics import auc

__all__ = ["AGGREGATIONS", "TREERANK_PARAMS", "RankingForest", "aggregate_scores", "median_rank_consensus",
           "midranks", "spearman_consensus", "tree_seeds"]

#: The ways to aggregate the trees' scores of a batch into one score per point (higher = better).
AGGREGATIONS: dict[str, str] = {
    "mean_rank": "mean over the trees of each point's midrank among the points scored (Spearman rho consensus; "
                 "the thesis)",
    "median_rank": "median over the trees of each point's midrank among the points scored (footrule consensus)",
    "mean_score": "mean over the trees of each point's normalised leaf score (the R package TreeRankForest)",
}
#: Salt of the per-tree seeds (``SeedSequence([random_state, salt])``).
SEED_SALT = 2010
#: A bootstrap sample holding one class only is redrawn, from the same tree's generator, at most this many times.
MAX_REDRAWS = 100
#: joblib's backend preference for growing trees in parallel (measured: see RankingForest's notes).
PARALLEL_PREFER = "threads"


# ---------------------------------------------------------------------------------------------------------------
# Aggregation of rankings on the sample being scored
# ---------------------------------------------------------------------------------------------------------------
def _as_score_matrix(scores: Any) -> np.ndarray:
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim == 1:
        S = S[None, :]
    if S.ndim != 2 or S.shape[1] == 0:
        raise ValueError(f"scores must have shape (n_rankings, n_points) with n_points >= 1, got {np.shape(scores)}")
    if not np.all(np.isfinite(S)):
        raise ValueError("scores must be finite")
    return S


def _row_mean(S: np.ndarray) -> np.ndarray:
    """The mean of the rows, summed row after row: each column's sum is then the same whatever the other columns
    (NumPy's ``mean(axis=0)`` sums a single column pairwise, so a point scored alone could differ in the last bit
    from the same point in a batch)."""
    total = np.zeros(S.shape[1])
    for row in S:
        total += row
    return total / len(S)


def midranks(scores: Any) -> np.ndarray:
    """Each ranking's midranks: ``out[b, i]`` = 1 + #{j: s_b(j) < s_b(i)} + (#{j != i: s_b(j) = s_b(i)}) / 2.

    The rank of a point among the points of its row, ties sharing the average of their ranks (digest §2.10;
    ``scipy.stats.rankdata(method="average")``); the highest score gets the highest rank.

    Parameters
    ----------
    scores : array-like of shape (n_rankings, n_points) or (n_points,)
        Scores, higher = better; one row per ranking.

    Returns
    -------
    ndarray of float64, shape (n_rankings, n_points)
        Midranks in [1, n_points]; each row sums to n_points (n_points + 1) / 2.
    """
    return rankdata(_as_score_matrix(scores), method="average", axis=1).astype(np.float64, copy=False)


def spearman_consensus(scores: Any) -> np.ndarray:
    """The Spearman-rho consensus of B rankings of the same n points: each point's mean midrank over the rankings.

    Ordering the points by it gives a median preorder for Spearman's rho (digest §2.10, eq. 4.6): the thesis's
    aggregation of bagged trees and Ranking Forests, computed on the sample to be ranked. Ties stay ties.

    Parameters
    ----------
    scores : array-like of shape (B, n) or (n,)
        ``scores[b, i]``: the score ranking b gives point i (higher = better).

    Returns
    -------
    ndarray of float64, shape (n,)
        Mean midranks, in [1, n], higher = better; they sum to n (n + 1) / 2.

    Examples
    --------
    >>> spearman_consensus([[0.9, 0.1, 0.5], [0.2, 0.2, 0.7]])
    array([2.25, 1.25, 2.5 ])
    """
    return midranks(scores).mean(axis=0)


def median_rank_consensus(scores: Any) -> np.ndarray:
    """Each point's median midrank over B rankings (a median preorder for Spearman's footrule, digest §2.10).

    Parameters
    ----------
    scores : array-like of shape (B, n) or (n,)
        ``scores[b, i]``: the score ranking b gives point i (higher = better).

    Returns
    -------
    ndarray of float64, shape (n,)
        Median midranks, in [1, n], higher = better.
    """
    return np.median(midranks(scores), axis=0)


def aggregate_scores(scores: Any, aggregation: str = "mean_rank") -> np.ndarray:
    """Aggregate B trees' scores of the same n points into one score per point (higher = better).

    Parameters
    ----------
    scores : array-like of shape (B, n)
        The trees' scores, as :meth:`RankingForest.tree_scores` returns them.
    aggregation : {"mean_rank", "median_rank", "mean_score"}, default="mean_rank"
        See :data:`AGGREGATIONS`. ``"mean_score"`` is the plain mean of the rows
        (the same bits for a point whatever the batch).

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    if aggregation == "mean_rank":
        return spearman_consensus(scores)
    if aggregation == "median_rank":
        return median_rank_consensus(scores)
    if aggregation == "mean_score":
        return _row_mean(_as_score_matrix(scores))
    raise ValueError(f"unknown aggregation {aggregation!r}; valid: {', '.join(AGGREGATIONS)}")


# ---------------------------------------------------------------------------------------------------------------
# Seeds and samples
# ---------------------------------------------------------------------------------------------------------------
def tree_seeds(random_state: Any, n_trees: int) -> np.ndarray:
    """The seeds of ``n_trees`` trees, drawn up front: ``out[b] = (sample seed, tree seed)``, 31-bit ints.

    An int ``random_state`` s gives the words of ``numpy.random.SeedSequence([s, 2010])``, so the seeds of the first
    k trees do not depend on ``n_trees`` (a forest of 50 trees is the first half of the forest of 100 with the same
    ``random_state``); a ``RandomState`` instance or None gives one draw of a base seed from it.
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        base = int(random_state)
    else:
        base = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    words = np.random.SeedSequence([base, SEED_SALT]).generate_state(2 * n_trees, dtype=np.uint32)
    return (words & 0x7FFFFFFF).astype(np.int64).reshape(n_trees, 2)


def _draw(rng: np.random.RandomState, n: int, n_draw: int, bootstrap: bool) -> np.ndarray:
    if bootstrap:
        return np.sort(rng.randint(0, n, n_draw))
    if n_draw == n:
        return np.arange(n)
    return np.sort(rng.permutation(n)[:n_draw])


def _sample_indices(seed: int, n: int, n_draw: int, bootstrap: bool, codes: np.ndarray | None = None,
                    n_redraws: int = 0) -> tuple[np.ndarray, int]:
    """The training rows of one tree and the number of draws discarded for holding one class only.

    Given ``codes`` (class index of each row), draws until both classes are present (at most MAX_REDRAWS + 1
    draws); without them, replays a fit's draw by discarding ``n_redraws`` draws.
    """
    rng = np.random.RandomState(seed)
    if codes is None:
        for _ in range(n_redraws):
            _draw(rng, n, n_draw, bootstrap)
        return _draw(rng, n, n_draw, bootstrap), n_redraws
    for attempt in range(MAX_REDRAWS + 1):
        idx = _draw(rng, n, n_draw, bootstrap)
        first = codes[idx[0]]
        if np.any(codes[idx] != first):
            return idx, attempt
    raise ValueError(f"{MAX_REDRAWS + 1} samples of {n_draw} rows drawn from the training set all held one class "
                     "only; a ranking forest needs both classes in every tree's sample (use a larger max_samples)")


def _grow_tree(params: dict[str, Any], X: np.ndarray, y: np.ndarray, idx: np.ndarray, seed: int) -> TreeRank:
    """One tree on the rows ``idx`` (repeats allowed), passed as multiplicities: TreeRank counts an integer weight k
    as k copies of the row, so the sample's repeated rows are never materialised. ``X`` and ``y`` (in {-1, +1}) are
    the forest's checked data and the forest has checked the trees' parameters: the tree skips ``fit``'s checks."""
    counts = np.bincount(idx, minlength=len(y)).astype(np.float64)
    return TreeRank(**params, random_state=seed)._fit_checked(X, _PM_CLASSES.copy(), y == 1, counts)


def _tree_scores(trees: list[TreeRank], X: np.ndarray, depth: int | None) -> np.ndarray:
    """Every tree's scores of the forest's checked ``X`` (float64, the trees' variables)."""
    return np.stack([tree._scores(X, depth, None) for tree in trees])


#: The trees' labels: the forest recodes its two classes to -1 and +1 (TreeRank's ``classes_`` of such labels).
_PM_CLASSES = np.array([-1, 1])


# ---------------------------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------------------------
class RankingForest(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """Bagged TreeRank and Ranking Forests: B TreeRank trees on bootstrap samples, their rankings aggregated.

    Each tree b is a :class:`~forestlab.learners._treerank.TreeRank` grown on its own sample of N rows (drawn with
    replacement when ``bootstrap``) with its own seed; the forest's score of a batch of points aggregates the trees'
    scores of that batch (digest §2.11):

    - ``"mean_score"`` (default; the R package ``TreeRankForest``): the mean of the trees' normalised leaf scores
      ``(L - i) / L``: a score of each point, whatever else is scored with it;
    - ``"mean_rank"`` (the thesis, Tables 4.2 and A.1-A.4, and every configured forest): each tree ranks the batch
      (midranks, ties averaged) and a point's score is its mean rank over the trees: the Spearman-rho consensus
      (:func:`spearman_consensus`);
    - ``"median_rank"``: the median of those ranks (Spearman-footrule consensus).

    **The rank aggregations depend on the batch being scored.** A point's mean rank in a batch Z is
    ``1/2 + sum over z in Z of w(x, z)``, where ``w(x, z)`` is the share of trees scoring x above z, ties counting
    1/2 (z = x included): adding a point z to the batch raises every other point's score by its w(x, z), and
    removing points can reorder the others (Borda's count is not independent of irrelevant alternatives). A point
    scored alone gets 1. What holds for every batch: the scores are equivariant under a permutation of the rows, and
    a point that every tree scores at least as high as another (higher for one tree at least) keeps the higher
    score. With them, score the whole sample to be ranked in one call, as the thesis does (a test set or fold);
    the default ``"mean_score"`` scores points one by one. scikit-learn's ``check_methods_subset_invariance``
    (which scores the batch, then each row alone) is a documented expected failure of the rank aggregations.

    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees B (the thesis: 50 in ch. 4, 100 in ch. 5, 30 for brio).
    max_samples : int or float, default=1.0
        Size N of each tree's sample: an int >= 2, or a float in (0, 1], ``round(max_samples * n)`` (at least 2)
        of the n training rows. The thesis's bagging: N = n with replacement (digest §6 item 9); the R package's
        default is 0.5 n.
    bootstrap : bool, default=True
        Draw with replacement; otherwise draw N distinct rows (N <= n; N = n grows every tree on all the data, so
        the trees differ only by their RF1/RF2 draws).
    aggregation : {"mean_score", "mean_rank", "median_rank"}, default="mean_score"
        How the trees' scores of a batch become the forest's scores (above); ``"mean_rank"`` is the thesis's
        (batch-dependent) consensus. Read when scoring, not when fitting:
        ``set_params(aggregation=...)`` on a fitted forest rescores with the same trees (one fit serves the three).
    leafrank, max_depth, min_samples_split, max_features, leafrank_max_depth, leafrank_min_samples_split, \
leafrank_min_samples_leaf, leafrank_max_features, leafrank_criterion, svm_kernel, svm_C, svm_gamma, svm_scale, \
dyadic_resolution
        Passed to every tree: see :class:`~forestlab.learners._treerank.TreeRank` (same names, defaults and valid
        values). ``max_features`` is RF1 (q1 variables drawn at each master node), ``leafrank_max_features`` is RF2
        (q2 variables drawn at each node of the LeafRank CART, among the master node's); None for both gives
        bagged TreeRank. The trees are not pruned.
    n_jobs : int or None, default=None
        Threads growing the trees (None means 1: the runner already runs one fit per worker process). The result
        does not depend on it: every tree's seeds are drawn up front.
    random_state : int, RandomState instance or None, default=None
        Seeds the samples and the trees (:func:`tree_seeds`).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1 for labels {-1, +1}) is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    estimators_ : list of TreeRank
        The B fitted trees.
    n_samples_bootstrap_ : int
        N, the size of each tree's sample.
    seeds_ : ndarray of shape (n_estimators, 2)
        Each tree's (sample seed, tree seed).
    n_redraws_ : ndarray of shape (n_estimators,)
        How many samples were drawn and discarded for each tree because they held one class only (a small training
        set or a rare class): a tree's sample is the first draw from its own generator that holds both classes
        (at most 100 redraws, then ValueError), so the forest stays deterministic and every tree has B's weight.
    tree_n_leaves_ : ndarray of shape (n_estimators,)
        Number of leaves of each tree.
    feature_importances_ : ndarray of shape (n_features,)
        The mean over the trees of their relative importances (each tree's divided by its maximum, digest §2.6;
        Fig. 5.10). CART and axis LeafRanks only (AttributeError otherwise, as for TreeRank).
    diagnostics_ : dict of str to float
        ``mean_tree_leaves`` and ``n_redrawn_samples`` (the runner stores them with the metrics).

    Notes
    -----
    Table 4.1's settings (q = 20), all with ``aggregation="mean_rank"``: Bagg_CART = the other defaults; RF1_CART =
    ``max_features=5``; RF3_CART = ``leafrank_max_features=5``; RF6_CART = ``max_features=5,
    leafrank_max_features=1``.

    Each tree is fitted on the training set with its sample's multiplicities as ``sample_weight`` (TreeRank counts
    an integer weight k as k copies of a row: the same tree as on the repeated rows for the CART and axis
    LeafRanks), so no sample is kept and repeated rows are never materialised; the SVM LeafRank then solves its
    weighted problem on the distinct rows (about 0.63 n), its ``gamma="scale"`` computed on those rows.

    ``n_jobs > 1`` grows the trees in threads. Measured on 2 cores (B = 50, n = 2000, q = 20, CART LeafRank), a
    forest takes about a second; loky processes were slower than one thread (starting the workers and loading
    TreeRank's compiled kernels in each cost more than the forest), threads slightly faster (the kernels hold
    the GIL; only the NumPy work around them overlaps).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    >>> forest = RankingForest(n_estimators=5, random_state=0).fit(X, 2 * y - 1)
    >>> forest.tree_scores(X[:4]).shape  # 5 trees, 4 points
    (5, 4)
    >>> bool(forest.decision_function(X[:1])[0] == forest.decision_function(X[:4])[0])  # a score of each point
    True
    >>> float(forest.set_params(aggregation="mean_rank").decision_function(X[:4]).sum())  # ranks among 4: 1+2+3+4
    10.0
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_estimators": [IntNotBool(1, None, closed="left")],
        "max_samples": [IntNotBool(2, None, closed="left"), Interval(RealNotInt, 0.0, 1.0, closed="right")],
        "bootstrap": ["boolean"],
        "aggregation": [StrOptions(set(AGGREGATIONS))],
        **{name: TreeRank._parameter_constraints[name] for name in TREERANK_PARAMS},
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
    }

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """The trees' RF1/RF2 counts the data cannot give (TreeRank's rule), and more distinct rows per tree than
        the training points (``bootstrap=False``)."""
        problems = treerank_data_problems(params, n_features)
        max_samples = params.get("max_samples")
        if not params.get("bootstrap", True) and is_int(max_samples) and int(max_samples) > n_samples:
            problems.append(f"max_samples={int(max_samples)} distinct rows cannot be drawn from the {n_samples} "
                            "training points of the data (bootstrap=False): give at most n, or a fraction")
        return problems

    def __init__(
        self,
        *,
        n_estimators: int = 50,
        max_samples: int | float = 1.0,
        bootstrap: bool = True,
        aggregation: str = "mean_score",
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
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.aggregation = aggregation
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
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------------------------
    def _n_draw(self, n: int) -> int:
        if isinstance(self.max_samples, numbers.Integral):
            return int(self.max_samples)  # at most n without replacement (_data_problems, checked by fit)
        return min(max(round(float(self.max_samples) * n), 2), n)  # the documented "at least 2"; f <= 1: <= n

    def fit(self, X: Any, y: Any) -> RankingForest:
        """Grow the B trees, each on its own sample with its own seed.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Two labels, {-1, +1} in the studies; the greater one (``classes_[1]``) is the positive class.

        Returns
        -------
        self : RankingForest
            The fitted forest.

        Raises
        ------
        ValueError
            If the labels are not exactly two classes, or ``max_samples`` cannot be drawn (see ``n_redraws_``).
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "a ranking forest")
        raise_data_problems(self, *X.shape, len(classes))
        y_pm = np.where(codes == 1, 1, -1)
        n = len(y_pm)
        n_draw = self._n_draw(n)
        seeds = tree_seeds(self.random_state, self.n_estimators)
        samples = [_sample_indices(int(s), n, n_draw, self.bootstrap, codes) for s in seeds[:, 0]]
        params = {name: getattr(self, name) for name in TREERANK_PARAMS}
        jobs = [(idx, int(seed)) for (idx, _), seed in zip(samples, seeds[:, 1], strict=True)]
        n_jobs = 1 if self.n_jobs is None else int(self.n_jobs)
        if n_jobs == 1:
            trees = [_grow_tree(params, X, y_pm, idx, seed) for idx, seed in jobs]
        else:
            trees = Parallel(n_jobs=n_jobs, prefer=PARALLEL_PREFER)(
                delayed(_grow_tree)(params, X, y_pm, idx, seed) for idx, seed in jobs)
        self.classes_ = classes
        self.estimators_ = list(trees)
        self.n_samples_bootstrap_ = n_draw
        self.seeds_ = seeds
        self.n_redraws_ = np.array([r for _, r in samples], dtype=np.intp)
        self.tree_n_leaves_ = np.array([tree.n_leaves_ for tree in trees], dtype=np.intp)
        self._importances = (np.mean([tree.feature_importances_ for tree in trees], axis=0)
                             if self.leafrank in ("cart", "axis") else None)
        self.diagnostics_ = {"mean_tree_leaves": float(self.tree_n_leaves_.mean()),
                             "n_redrawn_samples": float(self.n_redraws_.sum())}
        self._n_train = n
        return self

    @property
    def feature_importances_(self) -> np.ndarray:
        """The mean of the trees' relative importances; CART and axis LeafRanks only."""
        check_is_fitted(self)
        if self._importances is None:
            raise AttributeError(f"feature_importances_ is defined for the 'cart' and 'axis' LeafRanks only, not "
                                 f"{self.leafrank!r}")
        return self._importances

    @property
    def max_tree_depth_(self) -> int:
        """The largest depth of a tree (master tree, root depth 0)."""
        check_is_fitted(self)
        return max(tree.max_tree_depth_ for tree in self.estimators_)

    @property
    def estimators_samples_(self) -> list[np.ndarray]:
        """Each tree's training rows (sorted indices into the training set, a row drawn k times appearing k times),
        replayed from the seeds: nothing per tree is stored."""
        check_is_fitted(self)
        return [_sample_indices(int(seed), self._n_train, self.n_samples_bootstrap_, self.bootstrap,
                                n_redraws=int(r))[0]
                for seed, r in zip(self.seeds_[:, 0], self.n_redraws_, strict=True)]

    # ------------------------------------------------------------------------------------------------------------
    def tree_scores(self, X: Any, depth: int | None = None) -> np.ndarray:
        """Every tree's score of every point: the matrix the aggregations reduce (and instability is measured on).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to score.
        depth : int or None, default=None
            Score with every tree truncated at this depth (TreeRank's ``decision_function(X, depth)``).

        Returns
        -------
        ndarray of float64, shape (n_estimators, n_samples)
            ``out[b, i]``: tree b's normalised leaf score ``(L - j) / L`` of point i (in its j-th leaf of L, best
            first), higher = better. It does not depend on the other points.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return _tree_scores(self.estimators_, X, depth)

    def decision_function(self, X: Any, depth: int | None = None) -> np.ndarray:
        """The forest's score of each point of the batch ``X`` (higher = more likely positive).

        With the default ``aggregation="mean_score"`` each point's score is its own (the mean of the trees'
        normalised leaf scores). With ``"mean_rank"`` or ``"median_rank"`` the scores are ranks among the points
        of ``X``: they depend on the batch (see the class notes); score the whole sample to be ranked in one call.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The sample to rank.
        depth : int or None, default=None
            Aggregate the trees truncated at this depth.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
            Mean or median midranks in [1, n_samples], or mean normalised scores in (0, 1].
        """
        return aggregate_scores(self.tree_scores(X, depth), self.aggregation)

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """Arrays for the report: each tree's number of leaves, the mean feature importances (CART and axis
        LeafRanks) and, with test data, the test AUC of the aggregation of the first k trees, k = 1..B, each
        computed on the whole test set.

        Parameters
        ----------
        X_test, y_test : array-like, optional
            Test data; both or neither. ``y_test`` is in the labels of ``classes_``.

        Returns
        -------
        dict of str to ndarray
            ``tree_n_leaves`` (B,), ``feature_importance`` (n_features,) and, with test data, ``n_trees`` and
            ``test_auc`` (B,; NaN if the test set holds one class). ``test_auc[-1]`` is the AUC of
            ``decision_function(X_test)``.
        """
        check_is_fitted(self)
        check_test_pair(X_test, y_test)
        out = {"tree_n_leaves": self.tree_n_leaves_.copy()}
        if self._importances is not None:
            out["feature_importance"] = self._importances.copy()
        if X_test is None:
            return out
        positive = np.asarray(y_test) == self.classes_[1]
        S = self.tree_scores(X_test)
        k = np.arange(1, len(S) + 1)
        if self.aggregation == "mean_score":
            running = np.cumsum(S, axis=0) / k[:, None]
        elif self.aggregation == "mean_rank":
            running = np.cumsum(midranks(S), axis=0) / k[:, None]
        else:
            R = midranks(S)
            running = np.stack([np.median(R[:t], axis=0) for t in k])
        test_auc = np.full(len(k), np.nan)
        if 0 < positive.sum() < len(positive):
            # roc_auc_score's value, bit for bit, without its input validation (B calls a run: most of their cost)
            test_auc = np.array([auc(positive, row, pos_label=True) for row in running])
        out["n_trees"] = k
        out["test_auc"] = test_auc
        return out
