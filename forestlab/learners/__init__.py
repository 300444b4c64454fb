"""Learners: scikit-learn estimators for the studies' algorithms, found by name.

``REGISTRY`` maps the name used in ``conf/algorithm/<name>.yaml`` (``estimator:``) and on the command line to the
class; :func:`get_learner` looks a name up with a clear error.

>>> from forestlab.learners import get_learner
>>> get_learner("rf").__name__
'BreimanForestClassifier'

The hard-vote helpers :func:`tree_predictions` and :func:`weighted_vote` are shared by every learner that weighs
a forest's trees (RF, SORF, MinCq).
"""

from __future__ import annotations

from forestlab.errors import ConfigError
from forestlab.learners._courses import ErrorEstimatesForest, GradientBoostingCurves, ImportanceForest
from forestlab.learners._forest import BreimanForestClassifier, resolve_max_features
from forestlab.learners._kernel import RBFSVC, ForestKernelSVC, forest_kernel, kernel_target_alignment
from forestlab.learners._pacbayes import PACBayesForestClassifier
from forestlab.learners._vote import (
    shared_tree_predictions,
    tree_prediction_indices,
    tree_predictions,
    vote_counts,
    vote_scores,
    weighted_vote,
)

#: Algorithm name -> estimator class.
REGISTRY: dict[str, type] = {
    "rf": BreimanForestClassifier,
    "forest_svm": ForestKernelSVC,
    "rbf_svm": RBFSVC,
    "gboost": GradientBoostingCurves,
    "rf_estimates": ErrorEstimatesForest,
    "rf_importance": ImportanceForest,
    "pacbayes_forest": PACBayesForestClassifier,
}


def get_learner(name: str) -> type:
    """The estimator class registered under ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`, e.g. ``"rf"``.

    Returns
    -------
    type
        The estimator class (not an instance).

    Raises
    ------
    ConfigError
        If ``name`` is not registered; the message lists the valid names.
    """
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown learner '{name}'; valid learners: {', '.join(sorted(REGISTRY))}") from None


__all__ = [
    "REGISTRY",
    "BreimanForestClassifier",
    "ErrorEstimatesForest",
    "ForestKernelSVC",
    "GradientBoostingCurves",
    "ImportanceForest",
    "PACBayesForestClassifier",
    "RBFSVC",
    "forest_kernel",
    "get_learner",
    "kernel_target_alignment",
    "resolve_max_features",
    "shared_tree_predictions",
    "tree_prediction_indices",
    "tree_predictions",
    "vote_counts",
    "vote_scores",
    "weighted_vote",
]
