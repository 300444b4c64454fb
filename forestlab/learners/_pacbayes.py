"""PAC-Bayes reweighted forests: one Breiman forest, three ways to weigh its trees (zirakiza2013 ch. 5-7).

RF votes with uniform weights, SORF with the solution of a simplex-constrained least-squares QP (ch. 6), MinCq with
the solution of Program 1 (Roy, Laviolette and Marchand 2011). All three weigh *the same trees*: the forest is a
:class:`~forestlab.learners.BreimanForestClassifier`, grown through the runner's :class:`FitCache` when one is given,
so RF, SORF and MinCq on one split share one fit. The QPs live in :mod:`forestlab.learners._qp`, the PAC-Bayes
diagnostics in :mod:`forestlab.learners._bounds`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab._values import is_int
from forestlab.errors import SolverError
from forestlab.learners._base import PositiveGrid, RunReportMixin
from forestlab.learners._bounds import pac_bayes_diagnostics
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.learners._data_rules import raise_data_problems
from forestlab.learners._forest import (
    FOREST_PARAMETER_CONSTRAINTS,
    BreimanForestClassifier,
    forest_data_problems,
    forest_like,
)
from forestlab.learners._pacbayes_successors import OOBStatistics, certificates, oob_statistics
from forestlab.learners._qp import (
    QPResult,
    expand_group_weights,
    group_voters,
    mincq_matrices,
    solve_mincq_path,
    solve_sorf_path,
    sorf_matrices,
)
from forestlab.learners._vote import TIE_RTOL, TreeVoteMixin, class_scores, oob_vote_errors, vote_error_curves

__all__ = [
    "DEFAULT_C_GRID",
    "DEFAULT_MU_GRID",
    "PACBayesForestClassifier",
    "mixed_seeds",
    "select_grid_point",
]

WEIGHTINGS = ("uniform", "sorf", "mincq")
REGIMES = ("full", "stumps", "mixed")
#: zirakiza2013's grids: 20 values of c in [1, 2] and of mu in [1e-4, 0.05] (digest §3).
DEFAULT_C_GRID = np.linspace(1.0, 2.0, 20)
DEFAULT_MU_GRID = np.linspace(1e-4, 0.05, 20)
#: Confidence of the PAC-Bayes bound in ``diagnostics_``.
DELTA = 0.05
#: Name in ``diagnostics_`` of each value of ``_pacbayes_successors.certificates``.
OOB_CERTIFICATE_KEYS = {
    "fo": "oob_bound_fo", "tnd": "oob_bound_tnd", "cctnd": "oob_bound_cctnd", "ccpbb": "oob_bound_ccpbb",
    "cbound": "oob_bound_cbound", "cbound_joint": "oob_bound_cbound_joint", "cctnd_mu": "oob_cctnd_mu",
    "ccpbb_mu": "oob_ccpbb_mu", "gibbs": "oob_gibbs_risk", "tandem": "oob_tandem_risk",
    "disagreement": "oob_disagreement", "n": "oob_n", "n2": "oob_n2",
}
#: Salt of the seeds of the two forests of the mixed regime.
MIXED_SEED_SALT = 2013


# ---------------------------------------------------------------------------------------------------------------
# Seeds and selection (the vote itself, its out-of-bag error and its curves: forestlab.learners._vote)
# ---------------------------------------------------------------------------------------------------------------
def mixed_seeds(random_state: Any) -> tuple[int | None, int | None]:
    """Seeds of the fully grown forest and of the stump forest of the mixed regime.

    An int ``random_state`` s gives the first two words of ``numpy.random.SeedSequence([s, 2013])`` (31-bit), so the
    two forests differ from each other and from the regime-full forest seeded with s. A ``RandomState`` instance
    gives two draws of ``randint(2**31 - 1)`` from it; None leaves both forests unseeded.
    """
    if random_state is None:
        return None, None
    if is_int(random_state):
        words = np.random.SeedSequence([int(random_state), MIXED_SEED_SALT]).generate_state(2, dtype=np.uint32)
        return int(words[0]) & 0x7FFFFFFF, int(words[1]) & 0x7FFFFFFF
    rng = check_random_state(random_state)
    return int(rng.randint(np.iinfo(np.int32).max)), int(rng.randint(np.iinfo(np.int32).max))


def select_grid_point(errors: Sequence[float]) -> int | None:
    """Index of the lowest error among the finite ones (failed grid points are NaN), the first on ties."""
    errors = np.asarray(errors, dtype=np.float64)
    finite = np.isfinite(errors)
    if not finite.any():
        return None
    return int(np.flatnonzero(finite & (errors == errors[finite].min()))[0])


# ---------------------------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------------------------
class PACBayesForestClassifier(RunReportMixin, TreeVoteMixin, ClassifierMixin, BaseEstimator):
    """A Breiman forest whose trees vote with uniform (RF), SORF or MinCq weights (zirakiza2013).

    The trees are grown once (through ``fit_cache`` when given, so RF, SORF and MinCq on a split share them);
    then the weights are learned on the trees' predictions on the whole training set S (in-bag points included,
    the thesis's reading), for every value of the hyperparameter grid, and the value with the lowest out-of-bag
    risk is kept.

    Parameters
    ----------
    weighting : {"uniform", "sorf", "mincq"}, default="sorf"
        - ``"uniform"``: Breiman's vote; predictions, ``oob_error_`` and ``error_curves`` equal those of a
          :class:`BreimanForestClassifier` with the same parameters and ``random_state`` (regimes full and stumps).
        - ``"sorf"``: Q on the simplex minimising sum_k ||phi(y_k) - c phi_Q(x_k)||^2 (digest §2.5), binary or
          multiclass; c chosen in ``c_grid``.
        - ``"mincq"``: MinCq's Program 1 (digest §2.4), binary only: among quasi-uniform distributions on the
          self-complemented trees {h_i, -h_i} with training margin mu, the one of smallest second moment; mu chosen
          in ``mu_grid``. The weights w = 2q - 1/n may be negative and the vote is sgn(sum_i w_i h_i).
    regime : {"full", "stumps", "mixed"}, default="full"
        - ``"full"``: one forest of ``n_estimators`` fully grown trees, seeded with ``random_state``;
        - ``"stumps"``: the same with ``max_depth=1``;
        - ``"mixed"``: ``n_estimators // 2`` fully grown trees and the rest stumps, two forests with their own
          bootstraps and seeds (see :func:`mixed_seeds`: ``SeedSequence([random_state, 2013])``); the trees are
          interleaved (full, stump, full, stump, ...) so the error curves mix both kinds from the start.
    n_estimators : int, default=100
        Total number of trees.
    max_features : int, float, str or None, default="breiman_log2"
        Features drawn at each node (see ``resolve_max_features``).
    min_samples_leaf : int or float, default=1
        Minimum leaf size.
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Split criterion.
    c_grid : sequence of float, optional
        SORF's c values (> 0), default ``linspace(1, 2, 20)``.
    mu_grid : sequence of float, optional
        MinCq's mu values (> 0), default ``linspace(1e-4, 0.05, 20)``.
    n_jobs : int or None, default=None
        Threads for growing the trees and for their predictions (results do not depend on it).
    random_state : int, RandomState instance or None, default=None
        Seeds the forest(s).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels.
    forests_ : list of BreimanForestClassifier
        The fitted forest(s) (shared with other learners through the cache: read-only).
    estimators_ : list of DecisionTreeClassifier
        All trees, in vote order (interleaved for ``regime="mixed"``).
    tree_depths_ : ndarray of shape (n_trees,)
        Depth of each tree.
    max_tree_depth_ : int
        The largest tree depth ("profondeur max").
    oob_mask_ : ndarray of shape (n_trees, n_samples_train), bool
        True where a training sample is out-of-bag for a tree.
    weights_ : ndarray of shape (n_trees,)
        The final weights: 1/n (uniform), Q (SORF, on the simplex), or w = 2q - 1/n (MinCq, |w_i| <= 1/n, training
        margin sum_i w_i m_i = mu).
    selected_params_ : dict
        The selected hyperparameter, ``{"c": ...}`` or ``{"mu": ...}``; empty for uniform.
    selected_index_ : int or None
        Its index in ``grid_`` (None for uniform).
    grid_ : ndarray
        The grid searched (empty for uniform).
    selection_curve_ : ndarray of shape (len(grid_),)
        Out-of-bag error of the weighted vote at each grid value, NaN where the solve failed.
    solver_ : list of dict
        One record per grid value: ``value``, ``status``, ``solved``, ``prim_res``, ``dual_res``, ``iterations``,
        ``objective`` (see ``QPResult``), ``ridge``, ``oob_error`` (NaN if failed); MinCq adds ``max_margin``.
    oob_error_ : float
        Out-of-bag error of the final vote (the selected grid point's).
    diagnostics_ : dict of str to float
        PAC-Bayes quantities on the training set (see Notes), plus ``grid_failures`` (failed grid points).

    Notes
    -----
    **Selection rule.** For each grid value the training samples are voted on by their out-of-bag trees only, with
    the weights restricted to those trees; the value with the lowest such error wins, **the first in grid order on
    ties** (the thesis's c = 1.0 and mu = 1e-4 are chosen that way). A sample whose out-of-bag trees all have zero
    weight (or that has none) is **counted as an error**, as ``BreimanForestClassifier.oob_error_`` counts a sample
    without out-of-bag trees; SORF weights below 1e-7 are set to exactly 0 first. Vote ties (scores within 1e-9 of
    the voting weight) go to the lowest class index, i.e. sgn(0) = -1. A grid point whose solve failed (status not
    ``solved``, residuals above tolerance, MinCq mu above the largest realisable margin) is recorded in ``solver_``
    and skipped; if every point fails, ``fit`` raises :class:`~forestlab.errors.SolverError`.

    **Diagnostics** (training set, final weights). Q is the vote's distribution: 1/n on the trees (uniform), SORF's
    Q, or for MinCq the quasi-uniform distribution on the 2n self-complemented voters, Q(h_i) = (1/n + w_i)/2 and
    Q(-h_i) = (1/n - w_i)/2, whose Gibbs vote is exactly sgn(sum_i w_i h_i). Keys:

    - ``gibbs_risk``: empirical Gibbs risk R_S(G_Q) (for MinCq it is (1 - mu)/2, near 1/2 by construction);
    - ``disagreement``: expected disagreement d_Q of two voters drawn from Q (multiclass: pairwise disagreement);
    - ``c_bound``: empirical C-bound 1 - (1 - 2R)^2 / (1 - 2d) (1 when R >= 1/2 or 1 - 2d <= 0); with more than two
      classes, the same Cantelli bound 1 - E[M]^2 / E[M^2] on the multiclass margin. It bounds the training error
      of the vote;
    - ``pac_bayes_bound``: 2 x Seeger's (Langford-Seeger) kl bound on the Gibbs risk (thesis Cor. 6, exact xi(m)),
      prior uniform over the n trees (2n voters for MinCq), delta = 0.05, inverted by bisection, capped at 1; it
      bounds the vote's true risk by R(B_Q) <= 2 R(G_Q). **Indicative only**: the trees are grown on S, so the
      prior is not independent of the sample as the theorem requires. For MinCq it is vacuous (about 1) since its
      Gibbs risk is about 1/2; MinCq's own guarantee is the C-bound. ``gibbs_risk_bound`` is the undoubled bound;
    - ``kl_uniform``: KL(Q || uniform) (at most ln n; at most ln 2 for MinCq's quasi-uniform Q);
    - ``effective_trees``: the inverse Simpson index (sum_i |w_i|)^2 / sum_i w_i^2 of the trees' net weights,
      between 1 and n (n for uniform).

    **Out-of-bag certificates** (``oob_*``, delta = 0.05): the bounds of the PAC-Bayes successors (digest
    pacbayes-successors.md; :mod:`forestlab.learners._pacbayes_successors`) on the true risk of the final vote,
    computed from out-of-bag statistics as Masegosa et al. and Wu et al. compute them (each tree's loss on its
    out-of-bag points, each pair's on the points out of bag for both; n and n2 the smallest counts):
    ``oob_bound_fo``, ``oob_bound_tnd``, ``oob_bound_cctnd``, ``oob_bound_ccpbb``, ``oob_bound_cbound`` (the
    C-bound in Seeger's form), ``oob_bound_cbound_joint`` (Germain et al.'s PAC-Bound 2), with ``oob_cctnd_mu``,
    ``oob_ccpbb_mu``, ``oob_gibbs_risk``, ``oob_tandem_risk``, ``oob_disagreement`` (exactly one of two voters
    errs), ``oob_n`` and ``oob_n2``. For MinCq they are those of its self-complemented Q. Unlike
    ``pac_bayes_bound`` (whose trees have seen the whole sample) each tree is measured on points it was not grown
    on, the reading Masegosa et al. 2020 justify.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=200, n_features=8, random_state=0)
    >>> clf = PACBayesForestClassifier(weighting="sorf", n_estimators=20, random_state=0).fit(X, y)
    >>> sorted(clf.selected_params_), clf.weights_.shape, round(float(clf.weights_.sum()), 6)
    (['c'], (20,), 1.0)
    """

    version: ClassVar[int] = 2  # 2: degenerate MinCq programs return their minimum-norm optimum (_qp.py)
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "weighting": [StrOptions(set(WEIGHTINGS))],
        "regime": [StrOptions(set(REGIMES))],
        **{key: FOREST_PARAMETER_CONSTRAINTS[key] for key in
           ("n_estimators", "max_features", "min_samples_leaf", "criterion", "n_jobs", "random_state")},
        "c_grid": [PositiveGrid(), None],
        "mu_grid": [PositiveGrid(), None],
    }
    _data_problems = staticmethod(forest_data_problems)

    def __init__(
        self,
        *,
        weighting: str = "sorf",
        regime: str = "full",
        n_estimators: int = 100,
        max_features: int | float | str | None = "breiman_log2",
        min_samples_leaf: int | float = 1,
        criterion: str = "gini",
        c_grid: Sequence[float] | None = None,
        mu_grid: Sequence[float] | None = None,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.weighting = weighting
        self.regime = regime
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.c_grid = c_grid
        self.mu_grid = mu_grid
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------------------------
    def _grid(self) -> np.ndarray:
        if self.weighting == "uniform":
            return np.empty(0)
        name, given, default = (("c_grid", self.c_grid, DEFAULT_C_GRID) if self.weighting == "sorf"
                                else ("mu_grid", self.mu_grid, DEFAULT_MU_GRID))
        return np.asarray(default if given is None else given, dtype=np.float64).reshape(-1)

    def _check_params(self) -> np.ndarray:
        """Check the parameters (``_parameter_constraints``, and the mixed regime's two trees) and return the grid."""
        self._validate_params()
        if self.regime == "mixed" and self.n_estimators < 2:
            raise ValueError(f"n_estimators must be an int >= 2 with regime='mixed' (one fully grown tree and one "
                             f"stump at least), got {self.n_estimators!r}")
        return self._grid()

    def _grow(self, X: Any, y: Any, fit_cache: FitCache | None) -> tuple[list[BreimanForestClassifier], np.ndarray]:
        """The fitted forest(s) and the vote order of their concatenated trees."""
        n = int(self.n_estimators)
        if self.regime == "full":
            specs = [(n, None, self.random_state)]
        elif self.regime == "stumps":
            specs = [(n, 1, self.random_state)]
        else:
            seed_full, seed_stumps = mixed_seeds(self.random_state)
            specs = [(n // 2, None, seed_full), (n - n // 2, 1, seed_stumps)]
        forests = [fit_with_cache(forest_like(self, n_estimators=size, max_depth=depth, random_state=seed), X, y,
                                  fit_cache) for size, depth, seed in specs]
        sizes = [len(f.estimators_) for f in forests]
        rank = np.concatenate([np.arange(s) for s in sizes])
        which = np.repeat(np.arange(len(sizes)), sizes)
        order = np.lexsort((which, rank))  # by rank within its forest, then forest: full, stump, full, stump, ...
        return forests, order

    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> PACBayesForestClassifier:
        """Grow the forest(s), learn the weights at every grid value and keep the lowest out-of-bag error.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels (two classes for MinCq).
        fit_cache : FitCache, optional
            Grow the forest(s) through this cache (the runner's, shared by the runs of one split and seed tag).

        Returns
        -------
        self : PACBayesForestClassifier

        Raises
        ------
        ValueError
            Invalid parameters, or MinCq on labels that do not have exactly two classes.
        SolverError
            Every grid point's QP failed (the message lists the statuses).
        """
        grid = self._check_params()
        _, y_checked = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y_checked)
        classes, y_idx = np.unique(y_checked, return_inverse=True)
        n_classes = len(classes)
        raise_data_problems(self, len(y_checked), self.n_features_in_, n_classes)
        if self.weighting == "mincq" and n_classes != 2:
            raise ValueError(f"Only binary classification is supported: MinCq is binary only (zirakiza2013 §5.4), "
                             f"got {n_classes} classes; use weighting='sorf' or 'uniform' for multiclass problems")

        forests, order = self._grow(X, y, fit_cache)
        estimators = [tree for forest in forests for tree in forest.estimators_]
        pred_idx = np.concatenate([np.searchsorted(classes, f.train_tree_predictions_) for f in forests])[order]
        pred_idx = pred_idx.astype(np.min_scalar_type(max(n_classes - 1, 0)))
        oob_mask = np.concatenate([f.oob_mask_ for f in forests])[order]
        n_trees, n_samples = pred_idx.shape

        if self.weighting == "uniform":
            results: list[QPResult] = []
            candidates = np.ones((n_trees, 1))  # integer vote weights: exact counts, Breiman's vote bit for bit
        elif self.weighting == "sorf":
            reps, inverse, counts, _ = group_voters(pred_idx)
            S, a = sorf_matrices(pred_idx[reps], y_idx, n_classes)
            results = solve_sorf_path(S, a, n_samples, grid, multiplicity=counts)
        else:
            signs = 2 * pred_idx.astype(np.int8) - 1
            reps, inverse, counts, flips = group_voters(signs, fold_sign=True)
            M, margins = mincq_matrices(signs[reps] * flips[reps, None], 2 * y_idx - 1)
            results = solve_mincq_path(M, margins, grid, multiplicity=counts, n_voters=n_trees)

        curve = np.full(grid.size, np.nan)
        if self.weighting != "uniform":
            solved = [i for i, r in enumerate(results) if r.solved]
            if not solved:
                raise SolverError(self._failure_message(results))
            flip = flips if self.weighting == "mincq" else None
            candidates = np.column_stack([expand_group_weights(results[i].weights, inverse, counts, flip)
                                          for i in solved])
            curve[solved] = oob_vote_errors(pred_idx, y_idx, n_classes, oob_mask, candidates)
            best = select_grid_point(curve)
            vote_weights = candidates[:, solved.index(best)]
            oob_error = float(curve[best])
            weights = vote_weights
        else:
            best = None
            vote_weights = candidates[:, 0]
            oob_error = float(oob_vote_errors(pred_idx, y_idx, n_classes, oob_mask, vote_weights)[0])
            weights = np.full(n_trees, 1.0 / n_trees)

        self.classes_ = classes
        self.forests_ = forests
        self.estimators_ = [estimators[i] for i in order]
        self.tree_depths_ = np.concatenate([f.tree_depths_ for f in forests])[order]
        self.max_tree_depth_ = int(self.tree_depths_.max())
        self.oob_mask_ = oob_mask
        self.weights_ = weights
        self.grid_ = grid
        self.selected_index_ = best
        key = {"sorf": "c", "mincq": "mu"}.get(self.weighting)
        self.selected_params_ = {} if best is None else {key: float(grid[best])}
        self.selection_curve_ = curve
        self.solver_ = [{**r.as_dict(), "oob_error": float(curve[i])} for i, r in enumerate(results)]
        self.oob_error_ = oob_error
        self._vote_weights = vote_weights
        self._train_pred_idx = pred_idx
        self._train_y_idx = y_idx.astype(np.intp)
        self.diagnostics_ = self._diagnostics(pred_idx, y_idx)
        self.diagnostics_["grid_failures"] = float(sum(not r.solved for r in results))
        self.diagnostics_.update(self._oob_certificates(oob_statistics(pred_idx, y_idx, oob_mask)))
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.weighting != "mincq"  # MinCq is binary only
        return tags

    def _failure_message(self, results: list[QPResult]) -> str:
        statuses = Counter(r.status for r in results)
        summary = ", ".join(f"{count} x '{status}'" for status, count in statuses.items())
        msg = (f"PACBayesForestClassifier(weighting={self.weighting!r}): the QP failed at every one of the "
               f"{len(results)} grid values ({summary})")
        if self.weighting == "mincq" and results and "max_margin" in results[0].extra:
            msg += f"; the largest realisable training margin is mu = {results[0].extra['max_margin']:.4g}"
        return msg + "; no weights to use"

    # ------------------------------------------------------------------------------------------------------------
    def _mass(self, scores: np.ndarray) -> np.ndarray:
        """The vote's class mass (rows sum to 1) from class scores of shape (n_samples, K)."""
        w = self._vote_weights
        if self.weighting == "mincq":  # self-complemented Q: mass(+1) = (1 + f) / 2, f = sum_i w_i h_i
            f = scores[:, 1] - scores[:, 0]
            return np.column_stack([(1.0 - f) / 2.0, (1.0 + f) / 2.0])
        return scores / w.sum()

    def _scores(self, pred_idx: np.ndarray) -> np.ndarray:
        """Class scores of the weighted vote, shape (n_samples, K), from the trees' class indices."""
        return class_scores(pred_idx, len(self.classes_), self._vote_weights)[:, :, 0].T

    def _diagnostics(self, pred_idx: np.ndarray, y_idx: np.ndarray) -> dict[str, float]:
        mass = self._mass(self._scores(pred_idx))
        if self.weighting == "mincq":
            n = len(self.weights_)
            distribution = np.concatenate([(1.0 / n + self.weights_) / 2.0, (1.0 / n - self.weights_) / 2.0])
        else:
            distribution = self._vote_weights
        return pac_bayes_diagnostics(mass, y_idx, np.clip(distribution, 0.0, None), self._vote_weights, delta=DELTA)

    def _oob_certificates(self, stats: OOBStatistics) -> dict[str, float]:
        """The out-of-bag certificates of the final vote (``_pacbayes_successors.certificates``), keys ``oob_*``.

        For MinCq they are those of its self-complemented distribution over the 2n voters {h_i, -h_i} (the
        statistics of -h_i: ``OOBStatistics.self_complemented``), whose Gibbs vote is its vote."""
        if self.weighting == "mincq":
            n = len(self.weights_)
            stats = stats.self_complemented()
            rho = np.concatenate([(1.0 / n + self.weights_) / 2.0, (1.0 / n - self.weights_) / 2.0])
        else:
            rho = self.weights_
        rho = np.clip(rho, 0.0, None)
        return {OOB_CERTIFICATE_KEYS[k]: float(v) for k, v in certificates(stats, rho / rho.sum(), DELTA).items()}

    def _snapped_scores(self, X: Any) -> np.ndarray:
        """Class scores (n_samples, K) with scores within the tie tolerance of the best set equal to it."""
        scores = self._scores(self._tree_indices(X))  # checks that the estimator is fitted
        best = scores.max(axis=1, keepdims=True)
        return np.where(scores >= best - TIE_RTOL * np.abs(self._vote_weights).sum(), best, scores)

    def predict(self, X: Any) -> np.ndarray:
        """The weighted majority vote; ties go to the lowest class index (sgn(0) = -1 with labels {-1, +1}).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self._snapped_scores(X)  # checks that the estimator is fitted
        return self.classes_.take(np.argmax(scores, axis=1))

    def predict_proba(self, X: Any) -> np.ndarray:
        """The vote's class mass under Q (rows sum to 1; for MinCq, Q on the self-complemented trees).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Hard-vote shares, not calibrated probabilities; the argmax is ``predict``'s class.
        """
        return self._mass(self._snapped_scores(X))

    def decision_function(self, X: Any) -> np.ndarray:
        """The weighted vote margin (binary) or the class mass (multiclass).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: sum_i w_i h_i(x) with h_i = +1 for ``classes_[1]`` (uniform: (votes for ``classes_[1]`` -
            votes for ``classes_[0]``) / n, as ``BreimanForestClassifier``); positive means ``classes_[1]``, 0 is a
            tie, predicted ``classes_[0]``. Otherwise ``predict_proba``.
        """
        scores = self._snapped_scores(X)
        if len(self.classes_) != 2:
            return self._mass(scores)
        if self.weighting == "mincq":
            return scores[:, 1] - scores[:, 0]
        mass = self._mass(scores)
        return mass[:, 1] - mass[:, 0]

    def error_curves(self, X_test: Any = None, y_test: Any = None) -> dict[str, np.ndarray]:
        """Train, out-of-bag and test error of the weighted vote of the first t trees, t = 1..n_trees.

        The vote of the first t trees uses their weights (renormalising them would not change it). Same keys and
        conventions as ``BreimanForestClassifier.error_curves``: ``oob_error`` is over the samples with at least
        one out-of-bag tree of nonzero weight among the first t (``oob_coverage`` is their share), so
        ``oob_error_ == oob_coverage[-1] * oob_error[-1] + 1 - oob_coverage[-1]``. For uniform weights the curves
        equal the forest's exactly.

        Parameters
        ----------
        X_test, y_test : array-like, optional
            Test data; both or neither. Test labels absent from ``classes_`` count as errors.

        Returns
        -------
        dict of str to ndarray of shape (n_trees,)
            ``n_trees``, ``train_error``, ``oob_error``, ``oob_coverage`` and, with test data, ``test_error``.
        """
        check_is_fitted(self)
        return vote_error_curves(self._train_pred_idx, self._train_y_idx, self.classes_, self.oob_mask_,
                                 self._tree_indices, X_test, y_test, weights=self._vote_weights)
