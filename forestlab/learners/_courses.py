"""Learners for the course experiments (RCP209 "Forêts aléatoires", Fromont's "Apprentissage statistique").

- :class:`GradientBoostingCurves`: scikit-learn's gradient boosting with its test error after every stage, for the
  Spambase figure (bagging, random forest and gradient boosting against the number of trees; bagging and the
  random forest are :class:`~forestlab.learners.BreimanForestClassifier` with ``max_features`` all or sqrt).
- :class:`ErrorEstimatesForest`: a random forest that, while fitting, estimates its own error from its training
  data by resubstitution, hold-out, K-fold cross-validation, out-of-bag, leave-one-out bootstrap, .632 and .632+
  (Fromont, slides on risk estimation), to set beside the error the runner measures on a large test set.
- :class:`ImportanceForest`: a random forest with the two variable importances of the courses: mean decrease of
  impurity (Gini importance) and Breiman's out-of-bag permutation importance computed tree by tree.

The runner stores what ``error_curves(X_test, y_test)`` returns as the run's arrays: "arrays for figures" (error
curves by number of trees, importances by feature), not only error curves.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, RealNotInt
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import RunReportMixin, check_test_pair, check_two_classes
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.learners._data_rules import count_exceeds, raise_data_problems
from forestlab.learners._forest import (
    FOREST_PARAMETER_CONSTRAINTS,
    BreimanForestClassifier,
    bootstrap_samples,
    forest_data_problems,
    forest_like,
    grow_trees,
    resolve_max_features,
)
from forestlab.learners._kernel import derived_seeds, inner_split

__all__ = [
    "ErrorEstimatesForest",
    "GradientBoostingCurves",
    "ImportanceForest",
    "oob_permutation_importance",
]


class _Delegating(RunReportMixin, ClassifierMixin, BaseEstimator):
    """predict / predict_proba / decision_function of the fitted model ``_inner()`` that does the work (the
    boosted trees, the forest), on the validated input as ``_transform`` prepares it."""

    def _inner(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return X

    def _X(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self._transform(validate_data(self, X, reset=False, dtype=np.float64))

    def predict(self, X: Any) -> np.ndarray:
        """Predicted labels (the boosted trees' or the forest's)."""
        X = self._X(X)
        return self._inner().predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns following ``classes_`` (a forest's: its vote fractions)."""
        X = self._X(X)
        return self._inner().predict_proba(X)

    def decision_function(self, X: Any) -> np.ndarray:
        """The score; binary: shape (n_samples,), positive means ``classes_[1]`` (a forest's: its vote margin)."""
        X = self._X(X)
        return self._inner().decision_function(X)


# ---------------------------------------------------------------------------------------------------------------
class GradientBoostingCurves(_Delegating):
    """Gradient boosting (scikit-learn's ``GradientBoostingClassifier``, log-loss) with its error by stage.

    The defaults follow ESL's Spambase comparison (HTF09 Fig. 15.1, the likely source of the RCP209 figure):
    trees with 5 leaves, grown best-first without a depth limit, shrinkage 0.1.

    Parameters
    ----------
    n_estimators : int, default=500
        Boosting stages (one tree per stage and class; one tree per stage when binary).
    learning_rate : float, default=0.1
    max_leaf_nodes : int or None, default=5
    max_depth : int or None, default=None
    subsample : float, default=1.0
    random_state : int, RandomState instance or None

    Attributes
    ----------
    classes_, n_features_in_
    model_ : GradientBoostingClassifier
    train_error_ : ndarray of shape (n_estimators,)
        Training error after each stage.
    """

    version: ClassVar[int] = 1
    #: scikit-learn's GradientBoostingClassifier's, to which the parameters are passed.
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        key: GradientBoostingClassifier._parameter_constraints[key]
        for key in ("n_estimators", "learning_rate", "max_leaf_nodes", "max_depth", "subsample", "random_state")}

    def __init__(self, *, n_estimators: int = 500, learning_rate: float = 0.1, max_leaf_nodes: int | None = 5,
                 max_depth: int | None = None, subsample: float = 1.0,
                 random_state: int | np.random.RandomState | None = None) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> GradientBoostingCurves:
        """Fit the boosted trees and record the training error after each stage."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_two_classes(y, "boosting")
        self.model_ = GradientBoostingClassifier(
            n_estimators=self.n_estimators, learning_rate=self.learning_rate, max_leaf_nodes=self.max_leaf_nodes,
            max_depth=self.max_depth, subsample=self.subsample, random_state=self.random_state).fit(X, y)
        self.classes_ = self.model_.classes_
        self.train_error_ = np.array([np.mean(p != y) for p in self.model_.staged_predict(X)])
        return self

    def _inner(self) -> GradientBoostingClassifier:
        return self.model_

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """``n_trees`` (stages 1..n_estimators), ``train_error`` and, with test data, ``test_error`` by stage."""
        check_is_fitted(self)
        out = {"n_trees": np.arange(1, len(self.train_error_) + 1), "train_error": self.train_error_.copy()}
        check_test_pair(X_test, y_test)
        if X_test is not None:
            y_test = np.asarray(y_test)
            out["test_error"] = np.array([np.mean(p != y_test) for p in self.model_.staged_predict(self._X(X_test))])
        return out


# ---------------------------------------------------------------------------------------------------------------
#: Constraints of the forest parameters of the course forests (bootstrap is always on: they need out-of-bag points).
_COURSE_FOREST_CONSTRAINTS: dict[str, list[Any]] = {
    key: FOREST_PARAMETER_CONSTRAINTS[key]
    for key in ("n_estimators", "max_features", "max_depth", "min_samples_leaf", "criterion", "random_state", "n_jobs")}


class _ForestWrapper(_Delegating):
    """predict / decision_function / error curves delegated to a fitted BreimanForestClassifier ``forest_``."""

    forest_: BreimanForestClassifier

    def _inner(self) -> BreimanForestClassifier:
        return self.forest_

    @property
    def oob_error_(self) -> float:
        """The forest's out-of-bag error."""
        check_is_fitted(self)
        return self.forest_.oob_error_

    @property
    def max_tree_depth_(self) -> int:
        check_is_fitted(self)
        return self.forest_.max_tree_depth_

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """The forest's train, out-of-bag and test error by number of trees (see BreimanForestClassifier)."""
        check_is_fitted(self)
        X_test = None if X_test is None else self._X(X_test)
        return self.forest_.error_curves(X_test, y_test)


def _lean_forest_vote(params: BaseEstimator, X: np.ndarray, codes: np.ndarray, n_classes: int, seed: int,
                      X_eval: np.ndarray) -> np.ndarray:
    """Class indices that ``forest_like(params, random_state=seed).fit(X, y).predict(X_eval)`` votes, without the
    forest: the same trees, grown as scikit-learn's tree builder grows them from the same seeds, only their vote kept.

    ErrorEstimatesForest grows 31 helper forests of ~300 points per fit; there the per-tree Python overhead of
    ``RandomForestClassifier.fit`` (cloning, target checks, a second pass for the out-of-bag samples, training
    predictions) costs several times the growing itself. This replays what ``RandomForestClassifier.fit`` and
    ``DecisionTreeClassifier._fit`` do for dense finite float32 X, encoded classification targets, bootstrap
    samples and no class or sample weights: one ``randint(2**31 - 1)`` per tree from ``RandomState(seed)``, its
    bootstrap sample as per-sample counts (:func:`~forestlab.learners._forest.bootstrap_samples`), and the trees
    grown by :func:`~forestlab.learners._forest.grow_trees` (hence the equality tests against
    :class:`BreimanForestClassifier` in tests/test_courses_speed.py). Ties go to the lowest class index, as
    ``predict``.

    ``X``, ``X_eval``: C-contiguous float32; ``codes``: class indices (every one of 0..n_classes-1 present).
    """
    n, d = X.shape
    max_depth = np.iinfo(np.int32).max if params.max_depth is None else int(params.max_depth)
    leaf = params.min_samples_leaf
    min_samples_leaf = int(leaf) if isinstance(leaf, Integral) else int(math.ceil(leaf * n))
    min_samples_split = max(2, 2 * min_samples_leaf)
    max_features = resolve_max_features(params.max_features, d)
    forest_rng = np.random.RandomState(seed)
    tree_seeds = [forest_rng.randint(np.iinfo(np.int32).max) for _ in range(int(params.n_estimators))]
    draws = ((np.bincount(sample, minlength=n).astype(np.float64), tree_seed)
             for sample, tree_seed in zip(bootstrap_samples(tree_seeds, n), tree_seeds, strict=True))
    counts = np.zeros((X_eval.shape[0], n_classes), dtype=np.int64)
    rows = np.arange(X_eval.shape[0])
    for tree in grow_trees(X, codes, n_classes, draws, criterion=params.criterion,
                           max_features=max_features, min_samples_leaf=min_samples_leaf,
                           min_samples_split=min_samples_split, max_depth=max_depth):
        leaf_class = tree.value[:, 0, :].argmax(axis=1)
        counts[rows, leaf_class.take(tree.apply(X_eval))] += 1
    return counts.argmax(axis=1)


class ErrorEstimatesForest(_ForestWrapper):
    """A random forest that estimates its own error from its training data, seven ways.

    ``fit`` grows the forest on all of (X, y) (through ``fit_cache`` when given) and computes, from (X, y) only:

    - ``est_resub``: resubstitution (apparent) error of the forest on its training data;
    - ``est_holdout``: a forest grown on ``holdout_train_size`` of the data (stratified), scored on the rest;
    - ``est_cv``: ``cv_folds``-fold cross-validation (stratified when every class has ``cv_folds`` points);
    - ``est_oob``: the forest's out-of-bag error (Breiman; a point with no out-of-bag tree counts as an error);
    - ``est_loo_boot``: the leave-one-out bootstrap R* (Efron 1983; Fromont's Monte-Carlo version):
      ``n_bootstrap`` forests, each on a bootstrap sample of the data, each point scored by the forests whose
      sample misses it, R* = mean over points of their mean error (points never left out are skipped);
    - ``est_632``: 0.368 est_resub + 0.632 R*;
    - ``est_632plus``: Efron & Tibshirani (1997): w = 0.632 / (1 - 0.368 r), r = (R*' - resub) / (gamma - resub)
      clipped to [0, 1], R*' = min(R*, gamma), gamma = the no-information error sum_k p_k (1 - q_k) (p: label
      shares, q: shares of the forest's training predictions); est = (1 - w) resub + w R*'.

    These land in ``diagnostics_`` (the runner stores them as metrics beside ``test_risk``). Every helper forest
    has the forest's parameters and a seed derived from ``random_state``.

    Parameters
    ----------
    n_estimators, max_features, max_depth, min_samples_leaf, criterion : as BreimanForestClassifier
        (``max_features="sqrt"``: floor(sqrt d), the courses' and R randomForest's default).
    holdout_train_size : float, default=2/3
    cv_folds : int, default=10
        Folds of ``est_cv``, at most the training points (more is a ValueError). Stratified when every class has
        ``cv_folds`` points, else plain shuffled folds (``cv_stratified_`` says which).
    n_bootstrap : int, default=20
    random_state : int, RandomState instance or None
    n_jobs : int or None
        Threads of the main forest; the helper forests grow one tree after another (:func:`_lean_forest_vote`).
        The numbers never depend on it.
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_COURSE_FOREST_CONSTRAINTS,
        "holdout_train_size": [Interval(RealNotInt, 0.0, 1.0, closed="neither")],
        "cv_folds": [Interval(Integral, 2, None, closed="left")],
        "n_bootstrap": [Interval(Integral, 1, None, closed="left")],
    }

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """The forest's ``max_features`` above the data's features; more folds than training points."""
        problems = forest_data_problems(params, n_samples, n_features, n_classes)
        problem = count_exceeds("cv_folds", params.get("cv_folds"), n_samples, "training points of the data")
        return problems if problem is None else [*problems, problem]

    def __init__(self, *, n_estimators: int = 200, max_features: int | float | str | None = "sqrt",
                 max_depth: int | None = None, min_samples_leaf: int | float = 1, criterion: str = "gini",
                 holdout_train_size: float = 2 / 3, cv_folds: int = 10, n_bootstrap: int = 20,
                 random_state: int | np.random.RandomState | None = None, n_jobs: int | None = None) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.holdout_train_size = holdout_train_size
        self.cv_folds = cv_folds
        self.n_bootstrap = n_bootstrap
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> ErrorEstimatesForest:
        """Grow the forest and compute the error estimates (see the class docstring)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, codes = check_two_classes(y, "a random forest that estimates its error")
        raise_data_problems(self, *X.shape, len(classes))
        n = len(y)
        base, seeds = derived_seeds(self.random_state, 4)
        self.forest_ = fit_with_cache(forest_like(self, random_state=base), X, y, fit_cache)
        self.classes_ = classes
        train_pred = self.forest_.predict(X)
        resub = float(np.mean(train_pred != y))

        X32 = np.ascontiguousarray(X, dtype=np.float32)
        n_classes = len(classes)

        def vote(idx: np.ndarray, seed: int, where: np.ndarray) -> np.ndarray | None:
            # the labels that forest_like(self, random_state=seed).fit(X[idx], y[idx]).predict(X[where]) gives
            if len(np.unique(y[idx])) < 2:
                return None
            return classes.take(_lean_forest_vote(self, X32[idx], codes[idx], n_classes, seed, X32[where]))

        # hold-out
        holdout = float("nan")
        split = inner_split(codes, float(self.holdout_train_size), seeds[0])
        if split is not None:
            learn, val = split
            pred = vote(learn, seeds[1], val)
            if pred is not None:
                holdout = float(np.mean(pred != y[val]))
        # K-fold cross-validation
        k = int(self.cv_folds)  # at most n (raise_data_problems)
        counts = np.bincount(codes)
        self.cv_stratified_ = bool(counts.min() >= k)
        splitter = (StratifiedKFold(k, shuffle=True, random_state=seeds[2]) if self.cv_stratified_
                    else KFold(k, shuffle=True, random_state=seeds[2]))
        wrong, scored = 0, 0
        fold_seeds = np.random.SeedSequence([seeds[2], 1]).generate_state(k)
        for f, (tr, te) in enumerate(splitter.split(X, codes)):
            pred = vote(tr, int(fold_seeds[f]) & 0x7FFFFFFF, te)
            if pred is not None:
                wrong += int(np.sum(pred != y[te]))
                scored += len(te)
        cv = wrong / scored if scored else float("nan")
        # leave-one-out bootstrap
        rng = np.random.default_rng(seeds[3])
        err_sum, n_out = np.zeros(n), np.zeros(n)
        for _ in range(int(self.n_bootstrap)):
            idx = rng.integers(0, n, n)
            out = np.ones(n, dtype=bool)
            out[idx] = False
            seed = int(rng.integers(np.iinfo(np.int32).max))
            if not out.any():  # the seed is drawn (and the forest skipped) as before: the stream stays the same
                continue
            pred = vote(idx, seed, out)
            if pred is None:
                continue
            err_sum[out] += pred != y[out]
            n_out[out] += 1
        seen = n_out > 0
        loo_boot = float(np.mean(err_sum[seen] / n_out[seen])) if seen.any() else float("nan")
        est_632 = 0.368 * resub + 0.632 * loo_boot
        p = counts / n
        q = np.bincount(np.searchsorted(classes, train_pred), minlength=len(classes)) / n
        gamma = float(np.sum(p * (1 - q)))
        r_prime = min(loo_boot, gamma)
        r = (r_prime - resub) / (gamma - resub) if (loo_boot > resub and gamma > resub) else 0.0
        r = min(max(r, 0.0), 1.0)
        w = 0.632 / (1 - 0.368 * r)
        est_632plus = (1 - w) * resub + w * r_prime
        self.diagnostics_ = {
            "est_resub": resub, "est_holdout": holdout, "est_cv": cv, "est_oob": float(self.forest_.oob_error_),
            "est_loo_boot": loo_boot, "est_632": est_632, "est_632plus": est_632plus, "no_info_error": gamma,
        }
        return self


# ---------------------------------------------------------------------------------------------------------------
def _row_noise(X: np.ndarray, k: int, seed: int) -> np.ndarray:
    """``k`` standard-normal probe features per row, a pseudo-random function of the row's values and ``seed``:
    the same row always gets the same probes (so predictions do not depend on the batch), and the probes carry no
    information about the label."""
    out = np.empty((X.shape[0], k))
    rows = np.ascontiguousarray(X, dtype=np.float64)
    for i in range(rows.shape[0]):
        digest = hashlib.blake2b(rows[i].tobytes(), digest_size=8, key=seed.to_bytes(8, "little")).digest()
        out[i] = np.random.default_rng(int.from_bytes(digest, "little")).standard_normal(k)
    return out


def oob_permutation_importance(forest: BreimanForestClassifier, X: Any, y: Any, *, n_repeats: int = 1,
                               random_state: int | None = None) -> np.ndarray:
    """Breiman's out-of-bag permutation importance, tree by tree (Fromont's slides; RCP209).

    For each tree b: OOB_b = its error rate on its out-of-bag points; for each feature j, permute column j among
    those points and take the error again, OOB_b^j; the importance of j is (1/B) sum_b (OOB_b^j - OOB_b), B = the
    trees that have out-of-bag points. A feature a tree never splits on changes nothing for that tree (its term is
    exactly 0, so it is not recomputed).

    Parameters
    ----------
    forest : BreimanForestClassifier fitted with bootstrap=True on (X, y)
    X, y : the forest's training data
    n_repeats : int, default=1
        Permutations per tree and feature (their errors are averaged).
    random_state : int or None
        Seeds the permutations.

    Returns
    -------
    ndarray of shape (n_features,)
        Mean increase of the trees' out-of-bag error rate; about 0 for a useless feature (can be negative).
    """
    check_is_fitted(forest, "oob_mask_")
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    y_idx = np.searchsorted(forest.classes_, np.asarray(y))
    rng = np.random.default_rng(random_state)
    d = X32.shape[1]
    total = np.zeros(d)
    n_trees = 0
    for t, tree in enumerate(forest.estimators_):
        oob = np.flatnonzero(forest.oob_mask_[t])
        if oob.size == 0:
            continue
        n_trees += 1
        Xo = X32[oob]
        yo = y_idx[oob]
        leaf_class = tree.tree_.value[:, 0, :].argmax(axis=1)
        base = float(np.mean(leaf_class.take(tree.apply(Xo, check_input=False)) != yo))
        used = np.unique(tree.tree_.feature[tree.tree_.feature >= 0])
        for j in used:
            col = Xo[:, j].copy()
            err = 0.0
            for _ in range(int(n_repeats)):
                Xo[:, j] = col[rng.permutation(col.size)]
                err += float(np.mean(leaf_class.take(tree.apply(Xo, check_input=False)) != yo))
            Xo[:, j] = col
            total[j] += err / int(n_repeats) - base
    return total / max(n_trees, 1)


class ImportanceForest(_ForestWrapper):
    """A random forest and the courses' two variable importances, with optional pure-noise probe features.

    - ``importance_mdi``: mean decrease of impurity (Gini importance), scikit-learn's ``feature_importances_``
      (impurity decrease at the nodes splitting on the feature, weighted by the node's share of the in-bag sample,
      averaged over trees, normalised to sum to 1);
    - ``importance_oob_perm``: Breiman's out-of-bag permutation importance, tree by tree
      (:func:`oob_permutation_importance`), in units of error rate.

    With ``n_noise_features = k > 0`` the forest also sees k standard-normal probe features appended to X (a
    pseudo-random function of each row, so a row always gets the same probes; see :func:`_row_noise`): an
    importance measure should rank them below the informative features. They change the forest (d + k features,
    max_features resolved on d + k), and are listed last in the importance arrays.

    ``error_curves`` returns the importances (length d + k) with the forest's error curves: arrays for figures.

    Parameters
    ----------
    n_estimators, max_features, max_depth, min_samples_leaf, criterion : as BreimanForestClassifier
    n_noise_features : int, default=0
    n_repeats : int, default=1
        Permutations per tree and feature.
    random_state, n_jobs
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_COURSE_FOREST_CONSTRAINTS,
        "n_noise_features": [Interval(Integral, 0, None, closed="left")],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
    }

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """A ``max_features`` count above the forest's features: the data's d and the k probes."""
        k = int(params.get("n_noise_features") or 0)
        what = f"features of the data and its {k} noise features" if k else "features of the data"
        problem = count_exceeds("max_features", params.get("max_features"), n_features + k, what)
        return [] if problem is None else [problem]

    def __init__(self, *, n_estimators: int = 300, max_features: int | float | str | None = "sqrt",
                 max_depth: int | None = None, min_samples_leaf: int | float = 1, criterion: str = "gini",
                 n_noise_features: int = 0, n_repeats: int = 1,
                 random_state: int | np.random.RandomState | None = None, n_jobs: int | None = None) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.n_noise_features = n_noise_features
        self.n_repeats = n_repeats
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _transform(self, X: np.ndarray) -> np.ndarray:
        k = int(self.n_noise_features)
        return np.hstack([X, _row_noise(X, k, self._noise_seed)]) if k > 0 else X

    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> ImportanceForest:
        """Grow the forest (on X and the probes) and compute both importances."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, _ = check_two_classes(y, "a random forest with importances")
        raise_data_problems(self, *X.shape, len(classes))
        base, (noise_seed, perm_seed) = derived_seeds(self.random_state, 2)
        self._noise_seed = noise_seed
        Xa = self._transform(X)
        self.forest_ = fit_with_cache(forest_like(self, random_state=base), Xa, y, fit_cache)
        self.classes_ = classes
        self.importance_mdi_ = np.asarray(self.forest_.forest_.feature_importances_, dtype=float)
        self.importance_oob_perm_ = oob_permutation_importance(self.forest_, Xa, y, n_repeats=int(self.n_repeats),
                                                               random_state=perm_seed)
        d = X.shape[1]
        k = int(self.n_noise_features)
        self.diagnostics_: dict[str, float] = {}
        if k:
            for name, imp in (("mdi", self.importance_mdi_), ("oob_perm", self.importance_oob_perm_)):
                # rank 1 = most important; the best-ranked probe says how many real features beat every probe
                ranks = np.empty(d + k, dtype=int)
                ranks[np.argsort(-imp, kind="stable")] = np.arange(1, d + k + 1)
                self.diagnostics_[f"best_noise_rank_{name}"] = float(ranks[d:].min())
        return self

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """``importance_mdi`` and ``importance_oob_perm`` (length d + n_noise_features) and the forest's curves."""
        out = super().error_curves(X_test, y_test)
        out["importance_mdi"] = self.importance_mdi_.copy()
        out["importance_oob_perm"] = self.importance_oob_perm_.copy()
        return out
