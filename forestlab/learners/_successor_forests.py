"""The PAC-Bayes successors of SORF and MinCq as classifiers: the same Breiman forest as RF, SORF and MinCq, its
trees weighed by minimising a bound computed out of bag (``fo``, ``tnd``, ``cctnd``, ``ccpbb``, ``cbound_joint``).

Each is a :class:`~forestlab.learners.PACBayesForestClassifier` (same forest parameters, same regimes, grown through
the runner's :class:`FitCache`, so on a split every weighting weighs the same trees, grown once) whose weights come
from :func:`forestlab.learners._pacbayes_successors.learn_weights` instead of a QP. The bounds, their reading out of
bag and the optimisers are documented in :mod:`forestlab.learners._pacbayes_successors`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data
from threadpoolctl import threadpool_limits

from forestlab._values import is_int
from forestlab.learners._cache import FitCache
from forestlab.learners._forest import FOREST_PARAMETER_CONSTRAINTS
from forestlab.learners._pacbayes import DELTA, REGIMES, PACBayesForestClassifier
from forestlab.learners._pacbayes_successors import learn_weights, oob_statistics
from forestlab.learners._vote import oob_vote_errors, tree_prediction_indices

#: The samples rho is learnt (and the bounds computed) on: the out-of-bag points of the forest grown on the whole
#: training set, or the half of the training set the forest, grown on the other half, has not seen.
RHO_SAMPLES = ("oob", "half")
#: Salt of the seed of the split of ``rho_sample="half"``.
HALF_SEED_SALT = 2021


def half_split_seed(random_state: Any) -> int | None:
    """Seed of the prior/posterior split of ``rho_sample="half"``: from ``SeedSequence([random_state, 2021])`` for
    an int (so the split differs from the forest's own draws), a draw of a ``RandomState``, None for None."""
    if random_state is None:
        return None
    if is_int(random_state):
        return int(np.random.SeedSequence([int(random_state), HALF_SEED_SALT]).generate_state(1)[0]) & 0x7FFFFFFF
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))

__all__ = ["RHO_SAMPLES", "CBoundJointForestClassifier", "CCPBBForestClassifier", "CCTNDForestClassifier",
           "FOForestClassifier", "SuccessorForestClassifier", "TNDForestClassifier", "half_split_seed"]


class SuccessorForestClassifier(PACBayesForestClassifier):
    """A Breiman forest whose trees vote with the distribution rho minimising a PAC-Bayes bound read out of bag.

    Subclasses fix the bound (``weighting``); see :mod:`forestlab.learners._pacbayes_successors`.

    Parameters
    ----------
    regime, n_estimators, max_features, min_samples_leaf, criterion, n_jobs, random_state
        As :class:`PACBayesForestClassifier`: with the same values (and ``rho_sample="oob"``) these weigh the very
        trees RF, SORF and MinCq weigh.
    rho_sample : {"oob", "half"}, default="oob"
        - ``"oob"``: the forest is grown on the whole training set and rho learnt on its out-of-bag statistics
          (Masegosa et al.'s and Wu et al.'s reading; n and n2 the smallest out-of-bag counts);
        - ``"half"``: Viallard et al.'s protocol: a stratified half of the training set (seeded from
          ``random_state``, :func:`half_split_seed`) grows the forest, the other half, which no tree has seen,
          gives the statistics (n = n2 = its size). Not the trees of ``rf``: a forest of its own, grown on half the
          points. ``oob_error_`` and the error curves count the held-out half as out of every bag.

    Attributes
    ----------
    weights_ : ndarray of shape (n_trees,)
        rho, on the simplex.
    objective_ : dict of str to float
        The minimised objective's value (``objective``), the optimiser's ``iterations``, ``degenerate`` (1 when a
        tree or a pair of trees has no out-of-bag point: no bound can be computed and rho is left uniform) and, for
        ``cctnd`` and ``ccpbb``, the ``mu`` reached.
    diagnostics_ : dict of str to float
        Those of :class:`PACBayesForestClassifier` (the ``oob_bound_*`` certificates of the vote included; with
        ``rho_sample="half"`` they are computed on the held-out half, ``oob_n = oob_n2`` its size), the minimised
        ``objective`` and the other entries of ``objective_`` prefixed ``objective_``.

    The other attributes are those of :class:`PACBayesForestClassifier` (``grid_`` and ``selection_curve_`` empty,
    ``selected_params_`` empty: nothing is selected on a grid).
    """

    version: ClassVar[int] = 1
    weighting: ClassVar[str]  # fixed by each subclass (a class attribute, not a parameter)
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "regime": [StrOptions(set(REGIMES))],
        "rho_sample": [StrOptions(set(RHO_SAMPLES))],
        **{key: FOREST_PARAMETER_CONSTRAINTS[key] for key in
           ("n_estimators", "max_features", "min_samples_leaf", "criterion", "n_jobs", "random_state")},
    }

    def __init__(
        self,
        *,
        regime: str = "full",
        n_estimators: int = 100,
        max_features: int | float | str | None = "breiman_log2",
        min_samples_leaf: int | float = 1,
        criterion: str = "gini",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        rho_sample: str = "oob",
    ) -> None:
        self.regime = regime
        self.rho_sample = rho_sample
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _grid(self) -> np.ndarray:
        return np.empty(0)

    def _halves(self, y_idx: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the prior half (grows the forest) and of the held-out half (learns rho), stratified; a
        ValueError when a class has fewer than 2 points (it could not be in both halves)."""
        counts = np.bincount(y_idx, minlength=n_classes)
        if counts.min() < 2:
            raise ValueError(f"rho_sample='half' splits the training set in two stratified halves: every class needs "
                             f"at least 2 points, got {counts.min()} for one; use rho_sample='oob'")
        prior, post = train_test_split(np.arange(len(y_idx)), train_size=0.5, stratify=y_idx,
                                       random_state=half_split_seed(self.random_state))
        return np.sort(prior), np.sort(post)

    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> SuccessorForestClassifier:
        """Grow the forest (through ``fit_cache`` when given) and learn rho on its out-of-bag statistics (on the
        held-out half with ``rho_sample="half"``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).
        fit_cache : FitCache, optional
            Grow the forest(s) through this cache (the runner's, shared by the runs of one split and seed tag).

        Returns
        -------
        self
        """
        self._check_params()
        X_checked, y_checked = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y_checked)
        classes, y_idx = np.unique(y_checked, return_inverse=True)
        n_classes = len(classes)
        if self.rho_sample == "half":
            prior, post = self._halves(y_idx, n_classes)
            forests, order = self._grow(X_checked[prior], y_checked[prior], fit_cache)
        else:
            prior = post = None
            forests, order = self._grow(X, y, fit_cache)
        estimators = [tree for forest in forests for tree in forest.estimators_]
        pred_idx = np.concatenate([np.searchsorted(classes, f.train_tree_predictions_) for f in forests])[order]
        pred_idx = pred_idx.astype(np.min_scalar_type(max(n_classes - 1, 0)))
        oob_mask = np.concatenate([f.oob_mask_ for f in forests])[order]
        if post is None:
            stats = oob_statistics(pred_idx, y_idx, oob_mask)
        else:  # the held-out half: out of every bag; the training arrays cover both halves, in the input's order
            ordered = [estimators[i] for i in order]
            held = tree_prediction_indices(ordered, np.ascontiguousarray(X_checked[post]), np.arange(n_classes),
                                           n_jobs=self._n_jobs()).astype(pred_idx.dtype)
            stats = oob_statistics(held, y_idx[post], np.ones(held.shape, dtype=bool))
            full_pred = np.empty((len(ordered), len(y_idx)), dtype=pred_idx.dtype)
            full_mask = np.ones((len(ordered), len(y_idx)), dtype=bool)
            full_pred[:, prior], full_pred[:, post] = pred_idx, held
            full_mask[:, prior] = oob_mask
            pred_idx, oob_mask = full_pred, full_mask
        with threadpool_limits(1):  # 100-variable problems: BLAS threads only add overhead (and noise in timings)
            rho, info = learn_weights(self.weighting, stats, DELTA)

        self.classes_ = classes
        self.forests_ = forests
        self.estimators_ = [estimators[i] for i in order]
        self.tree_depths_ = np.concatenate([f.tree_depths_ for f in forests])[order]
        self.max_tree_depth_ = int(self.tree_depths_.max())
        self.oob_mask_ = oob_mask
        self.weights_ = rho
        self.grid_ = np.empty(0)
        self.selected_index_ = None
        self.selected_params_ = {}
        self.selection_curve_ = np.empty(0)
        self.solver_ = [dict(info)]
        self.objective_ = {k: float(v) for k, v in info.items()}
        self.oob_error_ = float(oob_vote_errors(pred_idx, y_idx, n_classes, oob_mask, rho)[0])
        self._vote_weights = rho
        self._train_pred_idx = pred_idx
        self._train_y_idx = y_idx.astype(np.intp)
        self.diagnostics_ = self._diagnostics(pred_idx, y_idx)
        self.diagnostics_.update(self._oob_certificates(stats))
        self.diagnostics_.update({k if k == "objective" else f"objective_{k}": v for k, v in self.objective_.items()})
        return self


class FOForestClassifier(SuccessorForestClassifier):
    """rho minimising the first-order lambda-bound (Thiemann et al. 2017), by alternating closed forms."""

    weighting = "fo"


class TNDForestClassifier(SuccessorForestClassifier):
    """rho minimising the tandem bound's lambda-relaxation (Masegosa et al. 2020)."""

    weighting = "tnd"


class CCTNDForestClassifier(SuccessorForestClassifier):
    """rho minimising the Chebyshev-Cantelli tandem bound's relaxation (Wu et al. 2021), mu in closed form."""

    weighting = "cctnd"


class CCPBBForestClassifier(SuccessorForestClassifier):
    """rho minimising Chebyshev-Cantelli with PAC-Bayes-Bennett (Wu et al. 2021), alternating rho and mu."""

    weighting = "ccpbb"


class CBoundJointForestClassifier(SuccessorForestClassifier):
    """rho minimising the joint C-bound (Germain et al.'s PAC-Bound 2) directly (Viallard et al. 2021), on the
    out-of-bag pairs (not on a held-out half as the authors do)."""

    weighting = "cbound_joint"
