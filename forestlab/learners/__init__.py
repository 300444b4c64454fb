"""Learners: scikit-learn estimators for the studies' algorithms, found by name.

``REGISTRY`` maps the name used in ``conf/algorithm/<name>.yaml`` (``estimator:``) and on the command line to a
:class:`LearnerEntry`: the class and its task (``classifier``, ``ranker`` or ``two_sample_test``), which says how the
runner evaluates it. :func:`register` adds a learner after checking that it has its task's methods;
:func:`get_learner` and :func:`get_entry` look a name up with a clear error.

>>> from forestlab.learners import get_entry, get_learner
>>> get_learner("rf").__name__
'BreimanForestClassifier'
>>> get_entry("rf").task
'classifier'

Every learner declares the valid values of its parameters in ``_parameter_constraints`` (scikit-learn's format),
which the config checks read, and reports what the runner stores beyond its predictions through
:func:`run_report`. A parameter that cannot apply to the data (``max_features=1000`` on 60 features) is a
ValueError of ``fit``, not a clipped value; :func:`check_params_for_data` applies the same rule before any run.
The vote of a forest's trees (:func:`tree_predictions`, :func:`weighted_vote`) is implemented once, in ``_vote``,
for every learner that weighs them (RF, SORF, MinCq, and their PAC-Bayes successors ``fo``, ``tnd``, ``cctnd``,
``ccpbb`` and ``cbound_joint``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forestlab.errors import ConfigError
from forestlab.learners._base import RunReportMixin, TestResult, run_report
from forestlab.learners._chreg import ChReg
from forestlab.learners._courses import ErrorEstimatesForest, GradientBoostingCurves, ImportanceForest
from forestlab.learners._data_rules import data_problems
from forestlab.learners._forest import BreimanForestClassifier, resolve_max_features
from forestlab.learners._kernel import RBFSVC, ForestKernelSVC, forest_kernel, kernel_target_alignment
from forestlab.learners._modern_rankers import (
    HistGradientBoostingRanker,
    LightGBMRanker,
    RandomForestRanker,
    XGBoostRanker,
)
from forestlab.learners._modern_tests import C2STTest, ClassifierWilcoxonTest, MMDAggTest
from forestlab.learners._pacbayes import PACBayesForestClassifier
from forestlab.learners._pruning import PrunedTreeRank
from forestlab.learners._rankboost import RankBoost
from forestlab.learners._ranking_forest import RankingForest
from forestlab.learners._rankrls import RankRLS
from forestlab.learners._ranksvm import RankSVM
from forestlab.learners._successor_forests import (
    CBoundJointForestClassifier,
    CCPBBForestClassifier,
    CCTNDForestClassifier,
    FOForestClassifier,
    TNDForestClassifier,
)
from forestlab.learners._treerank import TreeRank
from forestlab.learners._two_sample import MMDTest, TreeRankWilcoxonTest
from forestlab.learners._vote import (
    shared_tree_predictions,
    tree_prediction_indices,
    tree_predictions,
    vote_counts,
    vote_scores,
    weighted_vote,
)

#: The tasks a learner can have, and the methods each needs: a classifier predicts labels; a ranker scores points
#: (``decision_function``, higher = more likely positive) after fitting on labels in {-1, +1}; a two-sample test
#: compares two samples (``test(X_a, X_b) -> TestResult``) and is not fitted.
TASKS = ("classifier", "ranker", "two_sample_test")
_TASK_METHODS: dict[str, tuple[str, ...]] = {
    "classifier": ("fit", "predict"),
    "ranker": ("fit", "decision_function"),
    "two_sample_test": ("test",),
}


@dataclass(frozen=True)
class LearnerEntry:
    """A registered learner: its name, its class and its task (one of :data:`TASKS`)."""

    name: str
    cls: type
    task: str


#: Algorithm name -> registry entry (class and task).
REGISTRY: dict[str, LearnerEntry] = {}


def register(name: str, cls: type, task: str) -> LearnerEntry:
    """Register ``cls`` under ``name`` with its ``task`` (replacing any learner of that name).

    Raises
    ------
    ValueError
        If ``task`` is not one of :data:`TASKS`, or ``cls`` lacks a method the task needs (a classifier: ``fit`` and
        ``predict``; a ranker: ``fit`` and ``decision_function``; a two-sample test: ``test``).
    """
    if task not in _TASK_METHODS:
        raise ValueError(f"cannot register learner '{name}': unknown task {task!r}; valid tasks: {', '.join(TASKS)}")
    missing = [m for m in _TASK_METHODS[task] if not callable(getattr(cls, m, None))]
    if missing:
        raise ValueError(f"cannot register {getattr(cls, '__name__', cls)!r} as learner '{name}': a {task} needs "
                         f"the method(s) {', '.join(missing)}")
    entry = LearnerEntry(name=name, cls=cls, task=task)
    REGISTRY[name] = entry
    return entry


register("rf", BreimanForestClassifier, task="classifier")
register("forest_svm", ForestKernelSVC, task="classifier")
register("rbf_svm", RBFSVC, task="classifier")
register("gboost", GradientBoostingCurves, task="classifier")
register("rf_estimates", ErrorEstimatesForest, task="classifier")
register("rf_importance", ImportanceForest, task="classifier")
register("pacbayes_forest", PACBayesForestClassifier, task="classifier")
register("fo", FOForestClassifier, task="classifier")
register("tnd", TNDForestClassifier, task="classifier")
register("cctnd", CCTNDForestClassifier, task="classifier")
register("ccpbb", CCPBBForestClassifier, task="classifier")
register("cbound_joint", CBoundJointForestClassifier, task="classifier")
register("treerank", TreeRank, task="ranker")
register("ranking_forest", RankingForest, task="ranker")
register("pruned_treerank", PrunedTreeRank, task="ranker")
register("rankboost", RankBoost, task="ranker")
register("rankrls", RankRLS, task="ranker")
register("ranksvm", RankSVM, task="ranker")
register("chreg", ChReg, task="ranker")
# today's rankers (ours: not in depecker2010; forestlab/learners/_modern_rankers.py)
register("xgb_rank", XGBoostRanker, task="ranker")
register("lgbm_rank", LightGBMRanker, task="ranker")
register("hgb_rank", HistGradientBoostingRanker, task="ranker")
register("rf_rank", RandomForestRanker, task="ranker")
register("treerank_wilcoxon", TreeRankWilcoxonTest, task="two_sample_test")
register("mmd", MMDTest, task="two_sample_test")
register("c2st", C2STTest, task="two_sample_test")
register("c2st_wilcoxon", ClassifierWilcoxonTest, task="two_sample_test")
register("mmd_agg", MMDAggTest, task="two_sample_test")


def get_entry(name: str) -> LearnerEntry:
    """The registry entry of ``name`` (class and task); ConfigError listing the valid names if there is none."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown learner '{name}'; valid learners: {', '.join(sorted(REGISTRY))}") from None


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
    return get_entry(name).cls


def check_params_for_data(estimator: str, params: Mapping[str, Any], n_samples: int, n_features: int,
                          n_classes: int, grid: Mapping[str, Sequence[Any]] | None = None) -> list[str]:
    """One sentence per parameter that cannot apply to data of this shape; [] when every one can.

    The learner's own rule, the one its ``fit`` raises a ValueError with, applied before any run.

    Parameters
    ----------
    estimator : str
        The registry name (``estimator:`` of ``conf/algorithm/*.yaml``), e.g. ``"rf"``.
    params : mapping
        The algorithm's parameters as the runner passes them (the learner's defaults fill the others).
    n_samples : int
        The points a fit sees: the size of the training part of a split (a two-sample test: its pooled samples).
    n_features : int
        The data's features (columns).
    n_classes : int
        The data's classes.
    grid : mapping of str to sequence, optional
        A hyperparameter grid searched over ``params`` (pass it only when a selection searches it; a selection's
        ``proxy`` overrides can be passed as a grid of one value each): every grid point is checked, a problem
        that only a grid point has marked ``(grid)``.

    Returns
    -------
    list of str
        E.g. ``["max_features=1000 exceeds the 60 features of the data"]``.

    Raises
    ------
    ConfigError
        If ``estimator`` is not registered.
    """
    cls = get_entry(estimator).cls
    problems = data_problems(cls, params, n_samples, n_features, n_classes)
    seen = set(problems)
    if grid:
        from sklearn.model_selection import ParameterGrid

        for point in ParameterGrid({k: list(v) for k, v in grid.items()}):  # the points the selection fits
            for problem in data_problems(cls, {**params, **point}, n_samples, n_features, n_classes):
                if problem not in seen:
                    seen.add(problem)
                    problems.append(f"{problem} (grid)")
    return problems


__all__ = [
    "REGISTRY",
    "TASKS",
    "BreimanForestClassifier",
    "CBoundJointForestClassifier",
    "CCPBBForestClassifier",
    "CCTNDForestClassifier",
    "C2STTest",
    "ChReg",
    "ClassifierWilcoxonTest",
    "ErrorEstimatesForest",
    "FOForestClassifier",
    "ForestKernelSVC",
    "GradientBoostingCurves",
    "HistGradientBoostingRanker",
    "ImportanceForest",
    "LearnerEntry",
    "LightGBMRanker",
    "MMDAggTest",
    "MMDTest",
    "PACBayesForestClassifier",
    "PrunedTreeRank",
    "RBFSVC",
    "RandomForestRanker",
    "RankBoost",
    "RankRLS",
    "RankSVM",
    "RankingForest",
    "RunReportMixin",
    "TNDForestClassifier",
    "TestResult",
    "TreeRank",
    "TreeRankWilcoxonTest",
    "XGBoostRanker",
    "forest_kernel",
    "check_params_for_data",
    "get_entry",
    "get_learner",
    "kernel_target_alignment",
    "register",
    "resolve_max_features",
    "run_report",
    "shared_tree_predictions",
    "tree_prediction_indices",
    "tree_predictions",
    "vote_counts",
    "vote_scores",
    "weighted_vote",
]
