"""What every learner shares, whatever its task: the report the runner stores, parameter constraints that
scikit-learn does not have, and the result of a two-sample test.

- :class:`RunReportMixin` gives a learner ``run_report(X_test, y_test)``: the learner-specific values, chosen
  hyperparameters and arrays the runner stores beside the metrics it computes itself; :func:`run_report` asks any
  estimator for it (nothing for an estimator without the method).
- :class:`IntNotBool` and :class:`PositiveGrid` are constraints in the format of
  ``sklearn.utils._param_validation`` (``_parameter_constraints``), for forestlab's parameters.
- :class:`TestResult` is what a two-sample test's ``test(X_a, X_b)`` returns.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils import ClassifierTags
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

__all__ = ["BipartiteRankerMixin", "IntNotBool", "PositiveGrid", "RunReportMixin", "TestResult", "check_test_pair",
           "check_two_classes", "run_report", "standardisation"]


@dataclass(frozen=True)
class TestResult:
    """The outcome of a two-sample test: its statistic, p-value (small p: the samples differ) and what the
    statistic is (``statistic_name``: two tests, or two modes of one test, may compute different statistics, e.g.
    MMDTest's ``"MMD2_u"`` under its permutation null and ``"T = mn/(m+n) MMD2_b"`` under its Gamma null)."""

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    statistic_name: str = "statistic"


# ---------------------------------------------------------------------------------------------------------------
# The run report
# ---------------------------------------------------------------------------------------------------------------
def _empty_report() -> dict[str, dict[str, Any]]:
    return {"values": {}, "selected": {}, "arrays": {}}


class RunReportMixin:
    """``run_report``: what the runner stores about a fitted learner besides the metrics of its predictions.

    Read from the learner's own attributes, each optional: ``oob_error_`` (value ``oob_risk``),
    ``max_tree_depth_`` (value ``max_depth``), every entry of ``diagnostics_`` (values under their own names),
    ``selected_params_`` (the chosen hyperparameters) and the arrays of ``error_curves(X_test, y_test)``.
    """

    def run_report(self, X_test: Any = None, y_test: Any = None) -> dict[str, dict[str, Any]]:
        """The fitted learner's report: ``{"values": {name: float}, "selected": {name: value},
        "arrays": {name: ndarray}}``.

        Parameters
        ----------
        X_test, y_test : array-like, optional
            Test data for the arrays that need it (``error_curves``); both or neither.

        Returns
        -------
        dict
            ``values`` (oob_risk, max_depth, the diagnostics), ``selected`` (chosen hyperparameters) and
            ``arrays`` (curves by number of trees, accuracies by C, importances, ...).
        """
        report = _empty_report()
        values = report["values"]
        oob_error = getattr(self, "oob_error_", None)
        if oob_error is not None:
            values["oob_risk"] = float(oob_error)
        max_depth = getattr(self, "max_tree_depth_", None)
        if max_depth is not None:
            values["max_depth"] = float(max_depth)
        diagnostics = getattr(self, "diagnostics_", None)
        if isinstance(diagnostics, Mapping):
            values.update({k: float(v) for k, v in diagnostics.items()})
        report["selected"].update(getattr(self, "selected_params_", None) or {})
        error_curves = getattr(self, "error_curves", None)
        if error_curves is not None:
            report["arrays"].update({k: np.asarray(v) for k, v in error_curves(X_test, y_test).items()})
        return report


def run_report(estimator: Any, X_test: Any = None, y_test: Any = None) -> dict[str, dict[str, Any]]:
    """``estimator.run_report(X_test, y_test)``, or empty ``values``, ``selected`` and ``arrays`` for an estimator
    without that method (a third-party one)."""
    method = getattr(estimator, "run_report", None)
    return method(X_test, y_test) if method is not None else _empty_report()


# ---------------------------------------------------------------------------------------------------------------
# Parameter constraints (scikit-learn's format; only its own classes pass its validation, hence the subclasses)
# ---------------------------------------------------------------------------------------------------------------
class IntNotBool(Interval):
    """``Interval(Integral, ...)`` that refuses booleans (``max_features=True`` is a mistake, not 1 feature)."""

    def __init__(self, left: int | None, right: int | None, *, closed: str) -> None:
        super().__init__(numbers.Integral, left, right, closed=closed)

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class PositiveGrid(Interval):
    """A hyperparameter grid: a non-empty list, tuple or 1-D array of finite numbers > 0."""

    def __init__(self) -> None:
        super().__init__(numbers.Real, 0, None, closed="neither")

    def is_satisfied_by(self, val: Any) -> bool:
        if not isinstance(val, (list, tuple, np.ndarray)) or np.ndim(val) != 1 or len(val) == 0:
            return False
        return all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and math.isfinite(v)
                   and super(PositiveGrid, self).is_satisfied_by(v) for v in val)

    def __str__(self) -> str:
        return "a non-empty list of finite numbers > 0"


def check_two_classes(y: np.ndarray, learner: str) -> tuple[np.ndarray, np.ndarray]:
    """The sorted classes of classification labels ``y`` and each label's index; ValueError unless there are at
    least two classes (``learner`` names who needs them, for the message)."""
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"the training data hold only one class ({classes[0]!r}); {learner} needs samples of at "
                         "least 2 classes")
    return classes, codes


def check_test_pair(X_test: Any, y_test: Any) -> None:
    """ValueError unless test data come whole: both ``X_test`` and ``y_test``, or neither."""
    if (X_test is None) != (y_test is None):
        raise ValueError("error_curves needs both X_test and y_test, or neither")


def standardisation(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean and standard deviation of each column (1 for a constant column).

    >>> standardisation(np.array([[0.0, 5.0], [2.0, 5.0]]))
    (array([1., 5.]), array([1., 1.]))
    """
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    return mean, np.where(std > 1e-12 * np.maximum(1.0, np.abs(mean)), std, 1.0)


class BipartiteRankerMixin:
    """What every bipartite ranker shares (TreeRank, its forests and pruned tree, RankBoost, RankSVM, RankRLS, ChReg):
    scikit-learn tags saying it fits binary labels (its checks then give it two classes, never more), and the check
    of its training data. Put it before ``BaseEstimator`` in the bases."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.target_tags.required = True
        return tags

    def _validate_bipartite(self, X: Any, y: Any, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``validate_data`` (float64, finite) and exactly two classes: (X, classes, codes), codes 1 = positive
        (the greater label); ValueError naming the learner (``name``) otherwise."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, codes = check_two_classes(y, name)
        if len(classes) != 2:
            raise ValueError(f"{name} is a bipartite ranker: it needs exactly 2 classes (-1 and +1), got "
                             f"{len(classes)}: {list(classes)!r}")
        return X, classes, codes
