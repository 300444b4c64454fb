"""The rankers a practitioner would try first today (ours: not in depecker2010): gradient boosting from XGBoost and
LightGBM, scikit-learn's histogram gradient boosting and random forest, each a thin bipartite ranker.

They answer the question of the study digest studies/modern-competitors.md ("bipartite ranking"): do
depecker2010's conclusions on TreeRank and its forests survive the standard tools of 2026? Each wrapper fits labels
in {-1, +1} and scores with ``decision_function`` (higher = more likely positive):

- :class:`XGBoostRanker`: XGBoost's ``rank:pairwise`` objective, the RankNet (pairwise logistic) loss
  Σ log(1 + exp(−(s(x_i) − s(x_j)))) over (positive, negative) pairs, with the whole training set as **one query
  group** and ``lambdarank_pair_method="mean"``: every round, each point draws ``pairs_per_sample`` = k partners
  of the other class uniformly from the *whole* set. A pair (i, j), i positive, is then drawn k / n− times by i and
  k / n+ times by j on average: every (positive, negative) pair carries the same expected weight, so the expected
  gradient is the all-pairs gradient whatever k, and k only lowers its noise (XGBoost divides the gradients by k,
  which keeps a point's hessian near 1 and ``min_child_weight`` meaningful). XGBoost's default pair method since
  2.0, ``"topk"``, keeps only the pairs with one of the top k of the ranked list (an NDCG@k criterion, not the
  AUC; dmlc/xgboost #10097, #10098). The weighting of each pair by its score gap (``lambdarank_score_normalization``,
  on by default since 2.0) is switched off, so the loss is RankNet's. Early stopping reads the binary AUC of the
  held-out scores: XGBoost's own ``auc`` on a ranking task is another quantity (0.71 where the binary AUC is 0.93
  on the benchmark's problem).
- :class:`LightGBMRanker`: LightGBM's binary log-loss booster scored by its raw margin (LightGBM's ``lambdarank``
  and ``rank_xendcg`` objectives optimise NDCG, not the AUC).
- :class:`HistGradientBoostingRanker`, :class:`RandomForestRanker`: scikit-learn's
  ``HistGradientBoostingClassifier`` scored by its decision function (the log-odds) and ``RandomForestClassifier``
  scored by its probability of the positive class (the share of the trees' leaf frequencies).

**Rounds.** With ``early_stopping=False`` (the configs) a booster grows exactly ``max_iter`` rounds on all the data
it is given, and the rounds are chosen with the other parameters by the runner's inner cross-validation (``max_iter``
is in each config's grid). Early stopping is not used in the experiments: it holds out a stratified
``validation_fraction`` of the data it is given, inside an inner fold a handful of points on the small datasets (about
10 points, 2 of them positive, on Hepatitis), and the round it picks follows the noise of that handful: XGBoost stopped
at round 1 there, and its test AUC over seeds was 0.865 ± 0.114 against 0.950 with 100 fixed rounds.

``early_stopping=True`` remains available (for large training sets: a hold-out of at least a few tens of points of
each class): the boosters hold out the stratified share (at least one point of each class; a class of fewer than 2
points is refused) and grow at most ``max_iter`` rounds on the rest. XGBoost and LightGBM stop when the held-out AUC
has not improved for ``n_iter_no_change`` rounds and keep the best round. scikit-learn's booster holds out as many
points by its own stratified split and stops on the held-out log-loss (its default, computed incrementally), keeping
the last round. Only the data passed to ``fit`` are seen.

**Tuning** is not in the estimators: ``conf/algorithm/{xgb_rank,lgbm_rank,hgb_rank}.yaml`` give each booster a grid
of 8 points (depth or leaves, learning rate, rounds) chosen by the runner's inner 5-fold cross-validation on the
training part, on the AUC (:mod:`forestlab.selection`, ``selection: {kind: cv, metric: auc}``), as for ranksvm_cv and
rankrls_cv; ``rf_rank.yaml`` chooses the forest's ``max_features`` and ``min_samples_leaf`` by the out-of-bag AUC
(``selection: oob``, :attr:`RandomForestRanker.oob_error_`), an honest estimate from the training part alone.

**Determinism.** Every library runs on one thread (``n_jobs=1``; LightGBM's ``deterministic``; scikit-learn's
booster under an OpenMP limit of one thread), since the runner parallelises across runs: the same ``random_state``
gives the same scores bit for bit, whatever ``launcher.n_jobs``. An integer seed for the held-out split and one for
the library are drawn from ``random_state``.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import BipartiteRankerMixin, IntNotBool, RunReportMixin

__all__ = ["HistGradientBoostingRanker", "LightGBMRanker", "RandomForestRanker", "XGBoostRanker", "binary_auc",
           "stratified_holdout"]

_SEED_HIGH = 2**31 - 1


def stratified_holdout(codes: np.ndarray, fraction: float, rng: np.random.RandomState,
                       learner: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, validation) of a stratified random split of 0/1 ``codes``: ``round(fraction * n_c)`` points of
    each class, at least one, held out; ValueError (naming ``learner``) if a class has fewer than 2 points.

    >>> train, val = stratified_holdout(np.array([0] * 8 + [1] * 4), 0.25, np.random.RandomState(0), "x")
    >>> len(val), int(np.array([0] * 8 + [1] * 4)[val].sum())
    (3, 1)
    """
    val = []
    for c in (0, 1):
        members = np.flatnonzero(codes == c)
        if len(members) < 2:
            raise ValueError(f"{learner}: early stopping holds out points of each class, but class "
                             f"{'+1' if c else '-1'} has {len(members)} point(s) (at least 2 needed); set "
                             "early_stopping=False")
        size = min(max(1, int(round(fraction * len(members)))), len(members) - 1)
        val.append(rng.permutation(members)[:size])
    val_idx = np.sort(np.concatenate(val))
    train_idx = np.setdiff1d(np.arange(len(codes)), val_idx, assume_unique=True)
    return train_idx, val_idx


def binary_auc(codes: np.ndarray, scores: np.ndarray) -> float:
    """The AUC of ``scores`` for 0/1 ``codes`` (ties count one half), by the Mann-Whitney rank sum: the same value
    as ``roc_auc_score`` without its input checks, which cost more than the sum itself once per boosting round.

    >>> binary_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.5, 0.5, 0.9]))
    0.875
    """
    from scipy.stats import rankdata

    pos = codes == 1
    n_pos = int(pos.sum())
    n_neg = len(codes) - n_pos
    ranks = rankdata(scores)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


class _ModernRanker(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """What the four wrappers share: the check of the training data, two seeds drawn from ``random_state``, the
    scores and the report (``diagnostics_``)."""

    version: ClassVar[int] = 1
    _name: ClassVar[str] = "ranker"

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, int, int]:
        """(X, 0/1 codes, seed of the held-out split, seed of the library), ``classes_`` set."""
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, self._name)
        self.classes_ = classes
        rng = check_random_state(self.random_state)
        split_seed, library_seed = (int(s) for s in rng.randint(_SEED_HIGH, size=2))
        return X, codes.astype(np.int64), split_seed, library_seed

    def _scores(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores: higher = more likely positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.asarray(self._scores(X), dtype=np.float64).reshape(-1)


_EARLY_STOPPING_CONSTRAINTS: dict[str, list[Any]] = {
    "max_iter": [IntNotBool(1, None, closed="left")],
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(RealNotInt, 0.0, 1.0, closed="neither")],
    "n_iter_no_change": [IntNotBool(1, None, closed="left")],
    "random_state": ["random_state"],
}


class _BoostingRanker(_ModernRanker):
    """A booster with early stopping on a held-out share (see the module docstring)."""

    #: The parameter whose smaller values are prefixes of a larger fit: without early stopping, a booster of ``m``
    #: rounds is the first ``m`` rounds of one of ``M > m`` rounds (same seed, same data; no subsampling), bit for
    #: bit. Selection by inner cross-validation (:mod:`forestlab.selection`) then fits the largest value once per
    #: inner fold and other parameters, and scores every value of ``max_iter`` from it (:meth:`staged_scores`).
    staged_param: ClassVar[str] = "max_iter"

    def staged_scores(self, X: Any, stages: list[int]) -> list[np.ndarray] | None:
        """The scores of the first ``s`` rounds, for each ``s`` in ``stages``; None where they would not be those of
        a booster grown with ``max_iter = s`` (early stopping: the rounds kept depend on the held-out share).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.
        stages : list of int
            Round counts, each at most ``n_iter_``.

        Returns
        -------
        list of ndarray of float64, shape (n_samples,), or None
        """
        check_is_fitted(self)
        if self.early_stopping:
            return None
        if any(not 1 <= int(s) <= self.n_iter_ for s in stages):
            raise ValueError(f"{self._name}: stages {stages} outside 1..{self.n_iter_} rounds")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return [np.asarray(v, dtype=np.float64).reshape(-1) for v in self._staged(X, [int(s) for s in stages])]

    def _staged(self, X: np.ndarray, stages: list[int]) -> list[np.ndarray]:
        return [self._scores_at(X, s) for s in stages]

    def _scores_at(self, X: np.ndarray, n_iter: int) -> np.ndarray:  # pragma: no cover - each booster has its own
        raise NotImplementedError

    def _scores(self, X: np.ndarray) -> np.ndarray:
        return self._scores_at(X, self.n_iter_)

    def _split(self, X: np.ndarray, codes: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        if not self.early_stopping:
            return np.arange(len(codes)), np.arange(0)
        return stratified_holdout(codes, self.validation_fraction, np.random.RandomState(seed), self._name)

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: the rounds kept and the held-out AUC (NaN without early stopping)."""
        check_is_fitted(self)
        return {"n_rounds": float(self.n_iter_), "validation_auc": float(self.validation_auc_)}


# ---------------------------------------------------------------------------------------------------------------
# XGBoost
# ---------------------------------------------------------------------------------------------------------------
class XGBoostRanker(_BoostingRanker):
    """XGBoost's pairwise ranking objective over the whole training set (one query group); a bipartite ranker.

    See the module docstring for the pairs and the early stopping.

    Parameters
    ----------
    max_depth : int, default=6
        Depth of each tree.
    learning_rate : float, default=0.1
        Shrinkage of each round.
    min_child_weight : float, default=1.0
        Least hessian sum in a leaf (each point's is about 1 at the start under the ``mean`` pair normalisation).
    reg_lambda : float, default=1.0
        L2 penalty on the leaf values.
    pairs_per_sample : int, default=64
        Partners of the other class drawn for each point each round (``lambdarank_num_pair_per_sample``).
    max_iter : int, default=500
        At most this many rounds.
    early_stopping : bool, default=True
        Stop on the held-out AUC (else grow ``max_iter`` rounds on all the data). The configs switch it off and
        tune ``max_iter`` by inner CV: on small data the hold-out is too small to choose the rounds (module docstring).
    validation_fraction : float, default=0.1
        Share of each class held out for early stopping.
    n_iter_no_change : int, default=30
        Rounds without a better held-out AUC before stopping.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split and XGBoost's pair sampling.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    booster_ : xgboost.Booster
        The fitted booster.
    n_iter_ : int
        Rounds kept (the best held-out round with early stopping).
    validation_auc_ : float
        Held-out AUC of the rounds kept (NaN without early stopping).
    """

    _name: ClassVar[str] = "XGBoostRanker"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "max_depth": [IntNotBool(1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "min_child_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "reg_lambda": [Interval(numbers.Real, 0, None, closed="left")],
        "pairs_per_sample": [IntNotBool(1, None, closed="left")],
        **_EARLY_STOPPING_CONSTRAINTS,
    }

    def __init__(self, *, max_depth: int = 6, learning_rate: float = 0.1, min_child_weight: float = 1.0,
                 reg_lambda: float = 1.0, pairs_per_sample: int = 64, max_iter: int = 500,
                 early_stopping: bool = True, validation_fraction: float = 0.1, n_iter_no_change: int = 30,
                 random_state: int | np.random.RandomState | None = None) -> None:
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.min_child_weight = min_child_weight
        self.reg_lambda = reg_lambda
        self.pairs_per_sample = pairs_per_sample
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state

    def xgb_params(self, seed: int) -> dict[str, Any]:
        """The parameters handed to ``xgboost.train``."""
        return {"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
                "lambdarank_num_pair_per_sample": int(self.pairs_per_sample),
                "lambdarank_score_normalization": False, "disable_default_eval_metric": True, "tree_method": "hist",
                "max_depth": int(self.max_depth), "eta": float(self.learning_rate),
                "min_child_weight": float(self.min_child_weight), "lambda": float(self.reg_lambda),
                "nthread": 1, "seed": seed, "verbosity": 0}

    def fit(self, X: Any, y: Any) -> XGBoostRanker:
        """Boost on the pairs of the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (any two labels: the greater is positive).

        Returns
        -------
        self : XGBoostRanker

        Raises
        ------
        ValueError
            Not exactly two classes, or (early stopping) a class of fewer than 2 points.
        """
        import xgboost as xgb

        X, codes, split_seed, seed = self._prepare(X, y)
        train, val = self._split(X, codes, split_seed)

        def matrix(idx: np.ndarray) -> Any:  # one query group: every pair of the set is a candidate
            return xgb.DMatrix(X[idx], label=codes[idx], qid=np.zeros(len(idx), dtype=np.int64), nthread=1)

        dtrain = matrix(train)
        if self.early_stopping:
            # the binary AUC of the held-out scores (XGBoost's own "auc" on a ranking task is another quantity)
            held_out = codes[val]

            def auc(predt: np.ndarray, _: Any) -> tuple[str, float]:
                return "auc", binary_auc(held_out, predt)

            booster = xgb.train(self.xgb_params(seed), dtrain, num_boost_round=self.max_iter,
                                evals=[(matrix(val), "validation")], early_stopping_rounds=self.n_iter_no_change,
                                custom_metric=auc, maximize=True, verbose_eval=False)
            self.n_iter_ = int(booster.best_iteration) + 1
            self.validation_auc_ = float(booster.best_score)
        else:
            booster = xgb.train(self.xgb_params(seed), dtrain, num_boost_round=self.max_iter, verbose_eval=False)
            self.n_iter_ = int(self.max_iter)
            self.validation_auc_ = float("nan")
        self.booster_ = booster
        return self

    def _staged(self, X: np.ndarray, stages: list[int]) -> list[np.ndarray]:
        import xgboost as xgb

        data = xgb.DMatrix(X, nthread=1)
        return [self.booster_.predict(data, iteration_range=(0, s), output_margin=True) for s in stages]

    def _scores_at(self, X: np.ndarray, n_iter: int) -> np.ndarray:
        return self._staged(X, [n_iter])[0]


# ---------------------------------------------------------------------------------------------------------------
# LightGBM
# ---------------------------------------------------------------------------------------------------------------
class LightGBMRanker(_BoostingRanker):
    """LightGBM's binary log-loss booster scored by its raw margin; a bipartite ranker.

    Parameters
    ----------
    num_leaves : int, default=31
        Leaves of each tree (grown leaf-wise).
    learning_rate : float, default=0.1
        Shrinkage of each round.
    min_child_samples : int, default=20
        Least points in a leaf.
    reg_lambda : float, default=0.0
        L2 penalty on the leaf values.
    max_iter : int, default=500
        At most this many rounds.
    early_stopping : bool, default=True
        Stop on the held-out AUC (else grow ``max_iter`` rounds on all the data). The configs switch it off and
        tune ``max_iter`` by inner CV: on small data the hold-out is too small to choose the rounds (module docstring).
    validation_fraction : float, default=0.1
        Share of each class held out for early stopping.
    n_iter_no_change : int, default=30
        Rounds without a better held-out AUC before stopping.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split and LightGBM.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    booster_ : lightgbm.Booster
    n_iter_ : int
        Rounds kept.
    validation_auc_ : float
        Held-out AUC of the rounds kept (NaN without early stopping).
    """

    _name: ClassVar[str] = "LightGBMRanker"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "num_leaves": [IntNotBool(2, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "min_child_samples": [IntNotBool(1, None, closed="left")],
        "reg_lambda": [Interval(numbers.Real, 0, None, closed="left")],
        **_EARLY_STOPPING_CONSTRAINTS,
    }

    def __init__(self, *, num_leaves: int = 31, learning_rate: float = 0.1, min_child_samples: int = 20,
                 reg_lambda: float = 0.0, max_iter: int = 500, early_stopping: bool = True,
                 validation_fraction: float = 0.1, n_iter_no_change: int = 30,
                 random_state: int | np.random.RandomState | None = None) -> None:
        self.num_leaves = num_leaves
        self.learning_rate = learning_rate
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state

    def lgb_params(self, seed: int) -> dict[str, Any]:
        """The parameters handed to ``lightgbm.train``."""
        return {"objective": "binary", "metric": "auc", "num_leaves": int(self.num_leaves),
                "learning_rate": float(self.learning_rate), "min_child_samples": int(self.min_child_samples),
                "lambda_l2": float(self.reg_lambda), "num_threads": 1, "deterministic": True,
                "force_col_wise": True, "seed": seed, "verbosity": -1}

    def fit(self, X: Any, y: Any) -> LightGBMRanker:
        """Boost the log-loss on the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (any two labels: the greater is positive).

        Returns
        -------
        self : LightGBMRanker

        Raises
        ------
        ValueError
            Not exactly two classes, or (early stopping) a class of fewer than 2 points.
        """
        import lightgbm as lgb

        X, codes, split_seed, seed = self._prepare(X, y)
        train, val = self._split(X, codes, split_seed)
        params = self.lgb_params(seed)
        dtrain = lgb.Dataset(X[train], label=codes[train], params={"verbosity": -1}, free_raw_data=True)
        if self.early_stopping:
            dval = lgb.Dataset(X[val], label=codes[val], reference=dtrain)
            booster = lgb.train(params, dtrain, num_boost_round=self.max_iter, valid_sets=[dval],
                                valid_names=["validation"],
                                callbacks=[lgb.early_stopping(self.n_iter_no_change, verbose=False)])
            self.n_iter_ = int(booster.best_iteration) or int(booster.current_iteration())
            self.validation_auc_ = float(booster.best_score["validation"]["auc"])
        else:
            booster = lgb.train(params, dtrain, num_boost_round=self.max_iter)
            self.n_iter_ = int(self.max_iter)
            self.validation_auc_ = float("nan")
        self.booster_ = booster
        return self

    def _scores_at(self, X: np.ndarray, n_iter: int) -> np.ndarray:
        return self.booster_.predict(X, raw_score=True, num_iteration=n_iter, num_threads=1)


# ---------------------------------------------------------------------------------------------------------------
# scikit-learn
# ---------------------------------------------------------------------------------------------------------------
class HistGradientBoostingRanker(_BoostingRanker):
    """scikit-learn's ``HistGradientBoostingClassifier`` (log-loss) scored by its decision function; a bipartite
    ranker.

    Parameters
    ----------
    max_leaf_nodes : int, default=31
        Leaves of each tree.
    learning_rate : float, default=0.1
        Shrinkage of each round.
    min_samples_leaf : int, default=20
        Least points in a leaf.
    l2_regularization : float, default=0.0
        L2 penalty on the leaf values.
    max_iter : int, default=500
        At most this many rounds.
    early_stopping : bool, default=True
        scikit-learn's early stopping on the held-out log-loss (``scoring="loss"``; it keeps the last round). The
        configs switch it off and tune ``max_iter`` by inner CV (module docstring).
    validation_fraction : float, default=0.1
        Share held out (stratified) for early stopping.
    n_iter_no_change : int, default=30
        Rounds without a better held-out log-loss before stopping.
    random_state : int, RandomState instance or None, default=None
        Seeds the held-out split and the booster.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimator_ : HistGradientBoostingClassifier
        The fitted booster (on 0/1 codes).
    n_iter_ : int
        Rounds grown.
    validation_loss_ : float
        Held-out log-loss of the last round (NaN without early stopping).
    """

    _name: ClassVar[str] = "HistGradientBoostingRanker"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "max_leaf_nodes": [IntNotBool(2, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "min_samples_leaf": [IntNotBool(1, None, closed="left")],
        "l2_regularization": [Interval(numbers.Real, 0, None, closed="left")],
        **_EARLY_STOPPING_CONSTRAINTS,
    }

    def __init__(self, *, max_leaf_nodes: int = 31, learning_rate: float = 0.1, min_samples_leaf: int = 20,
                 l2_regularization: float = 0.0, max_iter: int = 500, early_stopping: bool = True,
                 validation_fraction: float = 0.1, n_iter_no_change: int = 30,
                 random_state: int | np.random.RandomState | None = None) -> None:
        self.max_leaf_nodes = max_leaf_nodes
        self.learning_rate = learning_rate
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> HistGradientBoostingRanker:
        """Boost the log-loss on the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (any two labels: the greater is positive).

        Returns
        -------
        self : HistGradientBoostingRanker

        Raises
        ------
        ValueError
            Not exactly two classes, or (early stopping) a class of fewer than 2 points.
        """
        from sklearn.ensemble import HistGradientBoostingClassifier
        from threadpoolctl import threadpool_limits

        X, codes, split_seed, seed = self._prepare(X, y)
        # as many held-out points as the other boosters hold out (at least one of each class; the same refusal of
        # a class of fewer than 2 points), drawn by scikit-learn's own stratified split
        n_val = len(self._split(X, codes, split_seed)[1]) if self.early_stopping else None
        est = HistGradientBoostingClassifier(
            learning_rate=self.learning_rate, max_iter=self.max_iter, max_leaf_nodes=self.max_leaf_nodes,
            min_samples_leaf=self.min_samples_leaf, l2_regularization=self.l2_regularization,
            early_stopping=self.early_stopping, scoring="loss", validation_fraction=n_val,
            n_iter_no_change=self.n_iter_no_change, tol=0.0, random_state=seed)
        with threadpool_limits(1, user_api="openmp"):  # results must not depend on the machine's thread count
            est.fit(X, codes)
        self.estimator_ = est
        self.n_iter_ = int(est.n_iter_)
        # validation_score_ holds the held-out negative log-loss of every round (and of the constant start)
        self.validation_loss_ = float(-est.validation_score_[-1]) if self.early_stopping else float("nan")
        return self

    def _scores_at(self, X: np.ndarray, n_iter: int) -> np.ndarray:
        return self._staged(X, [n_iter])[0]

    def _staged(self, X: np.ndarray, stages: list[int]) -> list[np.ndarray]:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, user_api="openmp"):
            if stages == [self.n_iter_]:
                return [self.estimator_.decision_function(X)]
            # the same additions in the same order as decision_function's, stopped after each stage
            wanted, out = set(stages), {}
            for i, values in enumerate(self.estimator_.staged_decision_function(X), start=1):
                if i in wanted:
                    out[i] = np.array(values, copy=True)
                if i >= max(stages):
                    break
            return [out[s] for s in stages]

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: the rounds grown and the held-out log-loss (NaN without early stopping)."""
        check_is_fitted(self)
        return {"n_rounds": float(self.n_iter_), "validation_loss": float(self.validation_loss_)}


class RandomForestRanker(_ModernRanker):
    """scikit-learn's ``RandomForestClassifier`` scored by its probability of the positive class; a bipartite
    ranker.

    Parameters
    ----------
    n_estimators : int, default=300
        Trees.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Variables drawn at each node (scikit-learn's meaning).
    min_samples_leaf : int, default=1
        Least points in a leaf.
    random_state : int, RandomState instance or None, default=None
        Seeds the bootstrap samples and the variables drawn.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimator_ : RandomForestClassifier
        The fitted forest (on 0/1 codes, with out-of-bag predictions).
    oob_auc_ : float
        AUC of the out-of-bag probabilities on the training points that are out of bag somewhere (NaN if they do
        not hold both classes).
    oob_error_ : float
        1 − ``oob_auc_`` (1.0 when NaN): what ``selection: oob`` minimises over the grid. Each point is scored by
        the trees that did not see it, so the OOB AUC is an honest estimate of the AUC on new points, as an inner
        cross-validation's is, from the forest already grown on the whole training part (one forest per grid point
        instead of one per grid point and inner fold, plus the refit).
    """

    _name: ClassVar[str] = "RandomForestRanker"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_estimators": [IntNotBool(1, None, closed="left")],
        "max_features": [IntNotBool(1, None, closed="left"), Interval(RealNotInt, 0.0, 1.0, closed="right"),
                         StrOptions({"sqrt", "log2"}), None],
        "min_samples_leaf": [IntNotBool(1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_estimators: int = 300, max_features: int | float | str | None = "sqrt",
                 min_samples_leaf: int = 1, random_state: int | np.random.RandomState | None = None) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> RandomForestRanker:
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (any two labels: the greater is positive).

        Returns
        -------
        self : RandomForestRanker

        Raises
        ------
        ValueError
            Not exactly two classes.
        """
        import warnings

        from sklearn.ensemble import RandomForestClassifier

        X, codes, _, seed = self._prepare(X, y)
        est = RandomForestClassifier(n_estimators=self.n_estimators, max_features=self.max_features,
                                     min_samples_leaf=self.min_samples_leaf, oob_score=True, n_jobs=1,
                                     random_state=seed)
        with warnings.catch_warnings():  # a few trees: some points never out of bag (their oob rows are NaN)
            warnings.filterwarnings("ignore", message="Some inputs do not have OOB scores", category=UserWarning)
            est.fit(X, codes)
        oob = est.oob_decision_function_[:, 1]
        seen = np.isfinite(oob)
        both = len(np.unique(codes[seen])) == 2
        self.oob_auc_ = float(roc_auc_score(codes[seen], oob[seen])) if both else float("nan")
        # what selection kind "oob" minimises (forestlab/selection.py): 1 - OOB AUC; 1.0 (no information) when
        # the out-of-bag points do not hold both classes
        self.oob_error_ = 1.0 - self.oob_auc_ if both else 1.0
        self.estimator_ = est
        return self

    def _scores(self, X: np.ndarray) -> np.ndarray:
        return self.estimator_.predict_proba(X)[:, 1]

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: the out-of-bag AUC."""
        check_is_fitted(self)
        return {"oob_auc": self.oob_auc_}
