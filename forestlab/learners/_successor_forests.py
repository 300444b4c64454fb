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
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data
from threadpoolctl import threadpool_limits

from forestlab.learners._cache import FitCache
from forestlab.learners._forest import FOREST_PARAMETER_CONSTRAINTS
from forestlab.learners._pacbayes import DELTA, REGIMES, PACBayesForestClassifier
from forestlab.learners._pacbayes_successors import learn_weights, oob_statistics
from forestlab.learners._vote import oob_vote_errors

__all__ = ["CBoundJointForestClassifier", "CCPBBForestClassifier", "CCTNDForestClassifier", "FOForestClassifier",
           "SuccessorForestClassifier", "TNDForestClassifier"]


class SuccessorForestClassifier(PACBayesForestClassifier):
    """A Breiman forest whose trees vote with the distribution rho minimising a PAC-Bayes bound read out of bag.

    Subclasses fix the bound (``weighting``); see :mod:`forestlab.learners._pacbayes_successors`.

    Parameters
    ----------
    regime, n_estimators, max_features, min_samples_leaf, criterion, n_jobs, random_state
        As :class:`PACBayesForestClassifier`: with the same values these weigh the very trees RF, SORF and MinCq
        weigh.

    Attributes
    ----------
    weights_ : ndarray of shape (n_trees,)
        rho, on the simplex.
    objective_ : dict of str to float
        The minimised objective's value (``objective``), the optimiser's ``iterations``, ``degenerate`` (1 when a
        tree or a pair of trees has no out-of-bag point: no bound can be computed and rho is left uniform) and, for
        ``cctnd`` and ``ccpbb``, the ``mu`` reached.
    diagnostics_ : dict of str to float
        Those of :class:`PACBayesForestClassifier` (the ``oob_bound_*`` certificates of the vote included), the
        minimised ``objective`` and the other entries of ``objective_`` prefixed ``objective_``.

    The other attributes are those of :class:`PACBayesForestClassifier` (``grid_`` and ``selection_curve_`` empty,
    ``selected_params_`` empty: nothing is selected on a grid).
    """

    version: ClassVar[int] = 1
    weighting: ClassVar[str]  # fixed by each subclass (a class attribute, not a parameter)
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "regime": [StrOptions(set(REGIMES))],
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
    ) -> None:
        self.regime = regime
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _grid(self) -> np.ndarray:
        return np.empty(0)

    def fit(self, X: Any, y: Any, fit_cache: FitCache | None = None) -> SuccessorForestClassifier:
        """Grow the forest (through ``fit_cache`` when given) and learn rho on its out-of-bag statistics.

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
        _, y_checked = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y_checked)
        classes, y_idx = np.unique(y_checked, return_inverse=True)
        n_classes = len(classes)
        forests, order = self._grow(X, y, fit_cache)
        estimators = [tree for forest in forests for tree in forest.estimators_]
        pred_idx = np.concatenate([np.searchsorted(classes, f.train_tree_predictions_) for f in forests])[order]
        pred_idx = pred_idx.astype(np.min_scalar_type(max(n_classes - 1, 0)))
        oob_mask = np.concatenate([f.oob_mask_ for f in forests])[order]

        stats = oob_statistics(pred_idx, y_idx, oob_mask)
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
