"""Breiman's random forest with the hard majority vote of the studies, on scikit-learn's public forest.

The trees are grown by a public :class:`sklearn.ensemble.RandomForestClassifier` (bootstrap, per-node feature
sampling, Gini, unpruned by default). Only the *vote* differs from scikit-learn's: each tree predicts a class and the
forest returns the majority class (zirakiza2013 §2.2), where scikit-learn averages leaf probabilities.
"""

from __future__ import annotations

import copy
import itertools
import math
import numbers
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions, validate_parameter_constraints
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import IntNotBool, RunReportMixin
from forestlab.learners._data_rules import count_exceeds, raise_data_problems
from forestlab.learners._vote import TreeVoteMixin, tree_prediction_indices, vote_counts, vote_error_curves

__all__ = ["BreimanForestClassifier", "FOREST_PARAMETER_CONSTRAINTS", "MAX_FEATURES_CONSTRAINTS", "MAX_FEATURES_RULES",
           "forest_data_problems", "forest_like", "resolve_max_features"]

#: Named rules for ``max_features``, as functions of the number of features d (by their definitions, in [1, d]).
MAX_FEATURES_RULES: dict[str, str] = {
    "breiman_log2": "floor(log2(d) + 1), Breiman's int(log2 M + 1) (zirakiza2013)",
    "log2": "floor(log2(d)), at least 1 (scikit-learn's 'log2')",
    "sqrt": "floor(sqrt(d)) (scikit-learn's 'sqrt')",
    "round_sqrt": "sqrt(d) rounded to the nearest integer (pisetta2010)",
    "all": "d, every feature (bagging); same as None",
}

#: The values ``max_features`` may take (scikit-learn's constraint format): an int >= 1 (not a bool), a float in
#: (0, 1], one of the named rules, or None (all features).
MAX_FEATURES_CONSTRAINTS: list[Any] = [
    IntNotBool(1, None, closed="left"),
    Interval(RealNotInt, 0.0, 1.0, closed="right"),
    StrOptions(set(MAX_FEATURES_RULES)),
    None,
]

_SKLEARN_FOREST = RandomForestClassifier._parameter_constraints
#: Constraints of the forest's parameters: scikit-learn's RandomForestClassifier's, to which they are passed, and
#: forestlab's rules for ``max_features``. Learners that grow a Breiman forest take theirs from here.
FOREST_PARAMETER_CONSTRAINTS: dict[str, list[Any]] = {
    "n_estimators": _SKLEARN_FOREST["n_estimators"],
    "max_features": MAX_FEATURES_CONSTRAINTS,
    "max_depth": _SKLEARN_FOREST["max_depth"],
    "min_samples_leaf": _SKLEARN_FOREST["min_samples_leaf"],
    "bootstrap": _SKLEARN_FOREST["bootstrap"],
    "criterion": _SKLEARN_FOREST["criterion"],
    "random_state": _SKLEARN_FOREST["random_state"],
    "n_jobs": _SKLEARN_FOREST["n_jobs"],
}


def resolve_max_features(max_features: Any, n_features: int, *, name: str = "max_features",
                         of: str = "features of the data") -> int:
    """The number of features drawn at each node, as an integer in [1, n_features].

    Parameters
    ----------
    max_features : int, float, str or None
        - int >= 1: that many features, at most ``n_features`` (more is a ValueError, not clipped);
        - float in (0, 1]: that fraction of the features, ``max(1, int(max_features * n_features))``;
        - ``"breiman_log2"``: floor(log2 d + 1) (d=3 -> 2, 16 -> 5, 60 -> 6, 784 -> 10);
        - ``"log2"``: floor(log2 d), at least 1;
        - ``"sqrt"``: floor(sqrt d);
        - ``"round_sqrt"``: sqrt d rounded to the nearest integer (22 -> 5, 57 -> 8);
        - ``None`` or ``"all"``: all features (bagging).
    n_features : int
        Number of features d (>= 1).
    name, of : str
        The parameter's name and what the ``n_features`` are, for the message (TreeRank's
        ``leafrank_max_features`` draws among the variables of a master node).

    Returns
    -------
    int
        The resolved number of features, in [1, n_features].

    Raises
    ------
    ValueError
        If ``max_features`` is none of the above (e.g. 0, a negative int, a float outside (0, 1], an unknown string):
        the values :data:`MAX_FEATURES_CONSTRAINTS` declares are the ones this function accepts; or an int above
        ``n_features`` (:func:`~forestlab.learners._data_rules.count_exceeds`, the rule the plan checks too).

    >>> resolve_max_features(0.25, 20), resolve_max_features("sqrt", 60), resolve_max_features(5, 60)
    (5, 7, 5)
    >>> resolve_max_features(1000, 60)
    Traceback (most recent call last):
    ...
    ValueError: max_features=1000 exceeds the 60 features of the data
    """
    d = int(n_features)
    if d < 1:
        raise ValueError(f"n_features must be >= 1, got {n_features}")
    validate_parameter_constraints({name: MAX_FEATURES_CONSTRAINTS}, {name: max_features},
                                   caller_name="resolve_max_features")
    problem = count_exceeds(name, max_features, d, of)
    if problem is not None:
        raise ValueError(problem)
    if max_features is None or max_features == "all":
        k = d
    elif isinstance(max_features, str):
        k = {
            "breiman_log2": d.bit_length(),  # floor(log2 d) + 1, exact in integers
            "log2": d.bit_length() - 1,
            "sqrt": math.isqrt(d),
            "round_sqrt": round(math.sqrt(d)),  # sqrt(d) is never exactly k + 1/2 for an integer d
        }[max_features]
    elif isinstance(max_features, numbers.Integral):
        k = int(max_features)
    else:  # a float in (0, 1]
        k = int(float(max_features) * d)
    return min(max(k, 1), d)  # the rules' "at least 1" (a fraction of few features, log2 of 1); never above d


def forest_data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
    """A Breiman forest's parameters that data of this shape cannot take: a ``max_features`` count above its
    features (the rule :func:`resolve_max_features` raises with). Every learner that grows one declares it."""
    problem = count_exceeds("max_features", params.get("max_features"), n_features, "features of the data")
    return [] if problem is None else [problem]


class BreimanForestClassifier(RunReportMixin, TreeVoteMixin, ClassifierMixin, BaseEstimator):
    """Breiman's random forest voting by hard majority (the forest of zirakiza2013 and pisetta2010).

    The trees come from a public :class:`sklearn.ensemble.RandomForestClassifier`; predictions are the majority
    vote of the trees' predicted classes (not the average of their leaf probabilities). Ties go to the lowest class
    index: with labels {-1, +1}, H(x) = sgn(sum_t h_t(x)) with sgn(0) = -1; with other binary labels a tie gives
    ``classes_[0]``.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees T.
    max_features : int, float, str or None, default="breiman_log2"
        Features drawn at each node; see :func:`resolve_max_features` (``"breiman_log2"`` = floor(log2 d + 1)).
    max_depth : int or None, default=None
        Maximum tree depth; None grows to purity, 1 gives decision stumps.
    min_samples_leaf : int or float, default=1
        Minimum number of samples in a leaf (as in scikit-learn).
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample. The out-of-bag attributes exist only when True.
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Split criterion.
    random_state : int, RandomState instance or None, default=None
        Seeds the forest. One seed per tree is drawn up front, so results do not depend on ``n_jobs``.
    n_jobs : int or None, default=None
        Threads for fitting and predicting (None means 1).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    max_features_ : int
        The resolved number of features drawn at each node.
    forest_ : sklearn.ensemble.RandomForestClassifier
        The fitted scikit-learn forest (its ``predict`` averages probabilities; use this class's ``predict``).
    estimators_ : list of DecisionTreeClassifier
        The trees (``forest_.estimators_``). They predict class *indices* into ``classes_``.
    tree_depths_ : ndarray of shape (n_estimators,)
        Depth of each tree (``tree_.max_depth``; a stump has depth 1, a single leaf 0).
    train_tree_predictions_ : ndarray of shape (n_estimators, n_samples_train)
        Labels each tree predicts on the training set (in-bag points included): the matrix weighted votes use.
    oob_mask_ : ndarray of shape (n_estimators, n_samples_train), bool
        True where training sample i is out-of-bag for tree t (the complement of ``forest_.estimators_samples_``).
        Only when ``bootstrap=True``, like every ``oob_*`` attribute.
    oob_n_trees_ : ndarray of shape (n_samples_train,)
        Number of trees for which each training sample is out-of-bag.
    oob_decision_ : ndarray of shape (n_samples_train,) or (n_samples_train, n_classes)
        The out-of-bag vote of each training sample: the margin (votes for ``classes_[1]`` minus votes for
        ``classes_[0]``) / (number of OOB trees) when binary, else the OOB vote fractions. NaN for a sample with no
        OOB tree.
    oob_prediction_ : ndarray of shape (n_samples_train,)
        The out-of-bag majority vote (same tie rule as ``predict``). A sample with no OOB tree gets ``classes_[0]``
        here, but is counted as an error in ``oob_error_`` whatever its label.
    oob_error_ : float
        Out-of-bag error (zirakiza2013 eq. 4.17): the fraction of training samples whose OOB vote is wrong, **a sample
        with no OOB tree counting as an error** (a conservative rule for OOB model selection; with T = 100 the chance
        that a sample is in every bootstrap is about 1e-20).

    Notes
    -----
    ``max_tree_depth_`` (property) is the largest tree depth, the "profondeur max" of zirakiza2013's tables.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, n_features=16, random_state=0)
    >>> rf = BreimanForestClassifier(n_estimators=25, random_state=0).fit(X, 2 * y - 1)
    >>> rf.max_features_, rf.train_tree_predictions_.shape
    (5, (25, 200))
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = dict(FOREST_PARAMETER_CONSTRAINTS)
    _data_problems = staticmethod(forest_data_problems)

    def __init__(
        self,
        *,
        n_estimators: int = 100,
        max_features: int | float | str | None = "breiman_log2",
        max_depth: int | None = None,
        min_samples_leaf: int | float = 1,
        bootstrap: bool = True,
        criterion: str = "gini",
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.criterion = criterion
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> BreimanForestClassifier:
        """Grow the forest, then record the trees' training predictions and the out-of-bag vote.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Class labels (binary {-1, +1} in the studies; any classification labels work).

        Returns
        -------
        self : BreimanForestClassifier
            The fitted forest.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        n_classes = len(classes)
        raise_data_problems(self, *X.shape, n_classes)
        max_features = resolve_max_features(self.max_features, X.shape[1])
        forest = RandomForestClassifier(
            n_estimators=self.n_estimators,
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            max_features=max_features,
            bootstrap=self.bootstrap,
            random_state=self.random_state,
            n_jobs=self._n_jobs(),
        )
        in_bag = None
        if self._n_jobs() in (None, 1):
            # the trees forest.fit(X, y) grows, without its per-tree overhead
            in_bag = grow_forest(forest, X, classes, y_idx)
        else:
            forest.fit(X, y)  # threads over the trees
        self.classes_ = classes
        self.max_features_ = max_features
        self.forest_ = forest
        self.estimators_ = forest.estimators_
        self.tree_depths_ = np.array([tree.tree_.max_depth for tree in self.estimators_], dtype=np.intp)

        X_c = np.ascontiguousarray(X)
        pred_idx = tree_prediction_indices(self.estimators_, X_c, np.arange(n_classes), n_jobs=self._n_jobs())
        small = np.min_scalar_type(max(n_classes - 1, 0))
        self._train_pred_idx = pred_idx.astype(small)
        self._train_y_idx = y_idx.astype(np.intp)
        self.train_tree_predictions_ = classes.take(pred_idx)

        for name in ("oob_mask_", "oob_n_trees_", "oob_decision_", "oob_prediction_", "oob_error_"):
            self.__dict__.pop(name, None)  # a refit with bootstrap=False must not keep stale OOB attributes
        if self.bootstrap:
            mask = np.ones(pred_idx.shape, dtype=bool)
            # forest.estimators_samples_ draws every tree's bootstrap again (a RandomState made per tree)
            for t, drawn in enumerate(forest.estimators_samples_ if in_bag is None else in_bag):
                mask[t, drawn] = False
            counts = vote_counts(pred_idx, n_classes, mask=mask)
            n_oob = mask.sum(axis=0)
            has_oob = n_oob > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                fractions = counts / n_oob[:, None]
            fractions[~has_oob] = np.nan
            self.oob_mask_ = mask
            self.oob_n_trees_ = n_oob
            self.oob_decision_ = fractions[:, 1] - fractions[:, 0] if n_classes == 2 else fractions
            oob_idx = counts.argmax(axis=1)
            self.oob_prediction_ = classes.take(oob_idx)
            self.oob_error_ = float(np.mean((oob_idx != y_idx) | ~has_oob))
        return self

    # ------------------------------------------------------------------------------------------------------------
    def _vote_counts(self, X: Any) -> np.ndarray:
        return vote_counts(self._tree_indices(X), len(self.classes_))

    def predict(self, X: Any) -> np.ndarray:
        """Majority vote of the trees; ties go to the lowest class index (sgn(0) = -1 for labels {-1, +1}).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels.
        """
        counts = self._vote_counts(X)  # checks that the forest is fitted
        return self.classes_.take(counts.argmax(axis=1))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Vote fractions: the share of trees predicting each class (hard votes, not leaf probabilities).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns follow ``classes_``.
        """
        return self._vote_counts(X) / len(self.estimators_)

    def decision_function(self, X: Any) -> np.ndarray:
        """The vote margin: (votes for ``classes_[1]`` - votes for ``classes_[0]``) / n_estimators when binary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: the margin in [-1, 1] (positive means ``classes_[1]``; 0 is a tie, predicted ``classes_[0]``).
            Otherwise: the vote fractions, as ``predict_proba``.
        """
        proba = self.predict_proba(X)
        return proba[:, 1] - proba[:, 0] if proba.shape[1] == 2 else proba

    @property
    def max_tree_depth_(self) -> int:
        """The largest depth over the trees (zirakiza2013's "profondeur max")."""
        check_is_fitted(self)
        return int(self.tree_depths_.max())

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """Train, out-of-bag and test error of the vote of the first k trees, k = 1..n_estimators.

        Computed from this one fitted forest by cumulative vote counts (no refitting), with the tie rule of
        ``predict``: the last point of ``train_error`` / ``test_error`` equals the error of ``predict``.

        Parameters
        ----------
        X_test, y_test : array-like of shape (n_test, n_features) and (n_test,), optional
            Test data; both or neither. Test labels absent from ``classes_`` count as errors.

        Returns
        -------
        dict of str to ndarray of shape (n_estimators,)
            - ``n_trees``: 1..n_estimators;
            - ``train_error``: error on the training set of the vote of the first k trees;
            - ``oob_error`` (bootstrap only): out-of-bag error of the first k trees, **over the training samples
              that have at least one OOB tree among them** (NaN if none has); unlike ``oob_error_``, samples with
              no OOB tree are left out rather than counted as errors, so the curve at small k estimates the
              k-tree forest's error instead of the share of uncovered samples;
            - ``oob_coverage`` (bootstrap only): the share of training samples with at least one OOB tree among the
              first k (about 1 - 0.632^k). ``oob_error[-1] == oob_error_`` whenever ``oob_coverage[-1] == 1``, and in
              general ``oob_error_ == oob_coverage[-1] * oob_error[-1] + 1 - oob_coverage[-1]``;
            - ``test_error`` (when test data are given).
        """
        check_is_fitted(self)
        return vote_error_curves(self._train_pred_idx, self._train_y_idx, self.classes_,
                                 self.oob_mask_ if self.bootstrap else None, self._tree_indices, X_test, y_test)


#: Trees grown by the port (forestlab.learners._cart) per compiled call in grow_trees.
_PORT_CHUNK = 64


def bootstrap_samples(tree_seeds: Iterable[int], n: int) -> list[np.ndarray]:
    """The rows each tree of a forest, of ``random_state`` each of ``tree_seeds``, draws (``RandomState(seed).randint(0,
    n, n)``, as scikit-learn's ``_generate_sample_indices``), int32. One generator, reseeded: ``RandomState(s)`` and
    ``.seed(s)`` start in the same state, and reseeding costs a few microseconds where constructing one costs ~150
    (it first draws OS entropy it then discards)."""
    rng = np.random.RandomState()
    samples = []
    for seed in tree_seeds:
        rng.seed(seed)
        samples.append(rng.randint(0, n, n).astype(np.int32))
    return samples


def grow_trees(X: np.ndarray, codes: np.ndarray, n_classes: int, draws: Iterable[tuple[np.ndarray | None, int]], *,
               criterion: str, max_features: int, min_samples_leaf: int, min_samples_split: int, max_depth: int,
               min_impurity_decrease: float = 0.0) -> Iterator[Any]:
    """The trees (``sklearn.tree._tree.Tree``) that ``DecisionTreeClassifier(random_state=seed).fit(X, codes,
    sample_weight=weight)`` grows for each ``(weight, seed)`` of ``draws``, lazily and in order: scikit-learn's
    ``DepthFirstTreeBuilder`` with the dense ``BestSplitter``, its splitter seeded from ``RandomState(seed)``, no
    minimum leaf weight, settings as ``DecisionTreeClassifier._fit`` derives them (``max_depth`` int32 max for none,
    ``min_samples_split`` at least ``2 * min_samples_leaf``).

    Where the port applies (:meth:`~forestlab.learners._cart.CartGrower.covers`) it grows them, :data:`_PORT_CHUNK`
    trees per compiled call, the same trees bit for bit (tests/test_cart.py); elsewhere scikit-learn's private
    builder does.

    ``X``: C-contiguous float32; ``codes``: class indices in 0..n_classes-1; ``weight``: integer counts per row (a
    bootstrap sample's), or None for every row once.
    """
    from forestlab.learners._cart import CartGrower  # numba: imported only when growing trees

    n, d = X.shape
    rng = np.random.RandomState()  # reseeded per tree (bootstrap_samples)
    if CartGrower.covers(X, codes, n_classes, criterion=criterion, max_features=max_features):
        grower = CartGrower(X, codes, n_classes, criterion=criterion, max_features=max_features,
                            min_samples_leaf=min_samples_leaf, min_samples_split=min_samples_split,
                            max_depth=max_depth, min_impurity_decrease=min_impurity_decrease)
        ones = np.ones(n)
        draws = iter(draws)
        while chunk := list(itertools.islice(draws, _PORT_CHUNK)):  # itertools.batched is Python 3.12
            weights = np.stack([ones if weight is None else weight for weight, _ in chunk])
            splitter_seeds = []
            for _, seed in chunk:
                rng.seed(seed)
                splitter_seeds.append(grower.splitter_seed(rng))
            yield from grower.grow_many(weights, splitter_seeds)
        return
    from sklearn.tree import _classes as tree_classes

    y = np.ascontiguousarray(codes, dtype=np.float64).reshape(-1, 1)
    n_classes_arr = np.array([n_classes], dtype=np.intp)
    for weight, seed in draws:
        rng.seed(seed)  # the splitter draws its own seed from it when the build starts
        criterion_ = tree_classes.CRITERIA_CLF[criterion](1, n_classes_arr)
        splitter = tree_classes.DENSE_SPLITTERS["best"](criterion_, max_features, min_samples_leaf, 0.0, rng, None)
        tree = tree_classes.Tree(d, n_classes_arr, 1)
        tree_classes.DepthFirstTreeBuilder(splitter, min_samples_split, min_samples_leaf, 0.0, max_depth,
                                           min_impurity_decrease).build(tree, X, y, weight, None)
        yield tree


def grow_forest(forest: RandomForestClassifier, X: np.ndarray, classes: np.ndarray,
                y_idx: np.ndarray) -> list[np.ndarray] | None:
    """``forest.fit(X, classes[y_idx])``, for dense finite float32 ``X``, no sample or class weights, ``max_samples``
    None, no ``max_leaf_nodes``, ``ccp_alpha`` 0, and ``max_features`` an int (what BreimanForestClassifier passes):
    the same trees, bit for bit, and the fitted attributes ``fit`` sets, faster.

    ``RandomForestClassifier.fit`` spends more on each tree than growing it when the data are small (a 300-tree
    forest on 150 points: ~90% of its time): cloning and configuring the tree, checking its targets and weights,
    dispatching it through joblib. This replays what ``fit`` and ``DecisionTreeClassifier._fit`` do in this case
    (the equality tests in tests/test_forest.py compare every tree, attribute and out-of-bag sample with ``fit``'s):
    one ``randint(2**31 - 1)`` per tree from ``check_random_state(forest.random_state)`` (the tree's
    ``random_state``), the bootstrap ``RandomState(seed).randint(0, n, n)`` as per-sample counts, and the splitter
    seeded by a fresh ``RandomState(seed)``. Anything outside that case is grown by ``forest.fit``.

    The trees are grown by :func:`grow_trees`: the port of scikit-learn 1.9's builder
    (:class:`~forestlab.learners._cart.CartGrower`) where it applies, the same trees bit for bit only found without
    sorting every feature at every node (Spambase, 1000 trees, fit + error curves: 3.4x faster with bagging, 1.6x
    with ``"sqrt"``; ``bench_courses.py --compare``), else scikit-learn's private builder, with the same draws.

    Returns each tree's bootstrap sample (``forest.estimators_samples_``, drawn once here rather than again by that
    property), or None: no bootstrap, or grown by ``forest.fit``.
    """
    from sklearn.base import clone
    from sklearn.utils import check_random_state

    params = forest.get_params()
    if (params["max_samples"] is not None or params["max_leaf_nodes"] is not None or params["ccp_alpha"] != 0.0
            or params["class_weight"] is not None or params["oob_score"] or params["warm_start"]
            or params["monotonic_cst"] is not None or not isinstance(params["max_features"], numbers.Integral)
            or params["min_weight_fraction_leaf"] != 0.0
            or X.dtype != np.float32 or X.ndim != 2):
        forest.fit(X, classes.take(y_idx))
        return None
    n, d = X.shape
    tree_codes = np.unique(y_idx).astype(np.float64)  # the trees' classes_: fit's encoded targets
    n_classes = np.array([len(tree_codes)], dtype=np.intp)
    # the forest's fitted attributes (RandomForestClassifier.fit on an ndarray)
    forest.n_features_in_ = d
    forest._n_samples, forest.n_outputs_ = n, 1
    forest.classes_, forest.n_classes_ = classes, len(classes)
    forest._sample_weight = None
    forest._n_samples_bootstrap = n if forest.bootstrap else None
    forest._validate_estimator()
    template = clone(forest.estimator_)
    template.set_params(**{p: getattr(forest, p) for p in forest.estimator_params})
    # the trees' settings, as DecisionTreeClassifier._fit derives them
    max_depth = np.iinfo(np.int32).max if template.max_depth is None else template.max_depth
    leaf = template.min_samples_leaf
    min_samples_leaf = leaf if isinstance(leaf, numbers.Integral) else math.ceil(leaf * n)
    split = template.min_samples_split
    min_samples_split = split if isinstance(split, numbers.Integral) else max(2, math.ceil(split * n))
    min_samples_split = max(min_samples_split, 2 * min_samples_leaf)
    seeds = check_random_state(forest.random_state)
    tree_seeds = [seeds.randint(np.iinfo(np.int32).max) for _ in range(forest.n_estimators)]
    samples = bootstrap_samples(tree_seeds, n) if forest.bootstrap else []
    weights = (np.bincount(sample, minlength=n).astype(np.float64) for sample in samples) if forest.bootstrap \
        else itertools.repeat(None)
    trees = []
    for seed, tree_ in zip(tree_seeds, grow_trees(
            X, y_idx, len(tree_codes), zip(weights, tree_seeds, strict=False), criterion=template.criterion,
            max_features=int(template.max_features), min_samples_leaf=min_samples_leaf,
            min_samples_split=min_samples_split, max_depth=max_depth,
            min_impurity_decrease=template.min_impurity_decrease), strict=True):
        tree = copy.copy(template)
        tree.random_state = seed
        tree.tree_ = tree_
        tree.n_features_in_, tree.n_outputs_ = d, 1
        tree.classes_, tree.n_classes_ = tree_codes, n_classes[0]
        tree.max_features_ = int(template.max_features)
        trees.append(tree)
    forest.estimators_ = trees
    return samples if forest.bootstrap else None


def forest_like(estimator: BaseEstimator, **overrides: Any) -> BreimanForestClassifier:
    """An unfitted :class:`BreimanForestClassifier` with ``estimator``'s values of the forest's parameters (those it
    has; the others keep their defaults), then ``overrides``.

    A learner that grows a forest grows it with this, so its forest has exactly the parameters of an RF run with the
    same settings, and a shared :class:`~forestlab.learners._cache.FitCache` grows it once for both.
    """
    own = estimator.get_params(deep=False)
    params = {key: own[key] for key in FOREST_PARAMETER_CONSTRAINTS if key in own}
    return BreimanForestClassifier(**{**params, **overrides})
