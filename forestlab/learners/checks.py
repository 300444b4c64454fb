"""The contracts of forestlab's learner families, as checks a user who registers a learner can run.

The runner treats a learner by its task (:data:`forestlab.learners.TASKS`): a classifier is fitted and predicts
labels, a ranker is fitted and scores points (higher = more likely positive), a two-sample test compares two
samples. Each check below fits or calls a clone of the given instance on small generated data and raises
AssertionError, naming the breach, on the first thing that does not hold; it returns None when all do. They are
the checks forestlab's own learners pass (``tests/test_learners_common.py`` runs them on every registered learner),
beside scikit-learn's common checks (:func:`sklearn.utils.estimator_checks.check_estimator`) for the fitted ones.

Examples
--------
>>> from sklearn.ensemble import RandomForestClassifier
>>> from forestlab.learners import register
>>> from forestlab.learners.checks import check_classifier, check_learner
>>> check_classifier(RandomForestClassifier(n_estimators=10, random_state=0))
>>> entry = register("my_rf", RandomForestClassifier, "classifier")   # doctest: +SKIP
>>> check_learner(RandomForestClassifier(n_estimators=10, random_state=0), entry.task)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score

from forestlab.learners._base import TestResult

__all__ = ["CHECKS", "check_classifier", "check_learner", "check_ranker", "check_two_sample_test"]


def _separable(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n points in 4 dimensions, labels in {-1, +1} (both present), the classes 6 apart on the first feature."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, 1, -1)
    rng.shuffle(y)
    X = rng.normal(size=(n, 4))
    X[:, 0] += 3.0 * y
    return X, y


def _raises(exc_type: type[Exception], call: Callable[[], Any], breach: str) -> None:
    """AssertionError(breach) unless ``call()`` raises ``exc_type``."""
    try:
        call()
    except exc_type:
        return
    raise AssertionError(breach)


def _fits_as_an_estimator(estimator: Any, method: str) -> tuple[Any, np.ndarray, np.ndarray]:
    """The checks a fitted learner of any family keeps: it clones, ``method`` before ``fit`` raises
    NotFittedError, ``fit`` returns self and leaves its inputs unchanged. Returns the fitted clone and test data."""
    X, y = _separable(90, 0)
    X_test, y_test = _separable(60, 1)
    unfitted = clone(estimator)
    assert unfitted.get_params() == estimator.get_params(), "clone must keep the parameters"
    _raises(NotFittedError, lambda: getattr(unfitted, method)(X_test), f"{method} before fit must raise NotFittedError")
    X_before, y_before = X.copy(), y.copy()
    fitted = clone(estimator)
    assert fitted.fit(X, y) is fitted, "fit must return self"
    assert np.array_equal(X, X_before) and np.array_equal(y, y_before), "fit must not change its inputs"
    return fitted, X_test, y_test


def _refuses_other_features(fitted: Any, method: str, X_test: np.ndarray) -> None:
    _raises(ValueError, lambda: getattr(fitted, method)(X_test[:, :3]),
            f"{method} on data with another number of features must raise ValueError")


def check_classifier(estimator: Any) -> None:
    """Check the classifier contract on ``estimator`` (an unfitted instance with a fixed ``random_state`` if it
    has one); raise AssertionError on the first breach.

    - it clones (scikit-learn conventions: parameters only in ``__init__``);
    - ``predict`` before ``fit`` raises NotFittedError;
    - ``fit(X, y)`` with y in {-1, +1} returns the estimator itself and leaves X and y unchanged;
    - ``predict(X)`` returns labels of the training set of shape (n_samples,), at least 90% right on separable
      data; a ``decision_function``, where there is one, gives finite scores with a test AUC of at least 0.9;
    - the same ``random_state`` gives the same predictions;
    - test data with another number of features is refused with a ValueError.
    """
    fitted, X_test, y_test = _fits_as_an_estimator(estimator, "predict")
    pred = np.asarray(fitted.predict(X_test))
    assert pred.shape == (len(X_test),), f"predictions of shape {pred.shape}"
    assert set(np.unique(pred)) <= {-1, 1}, f"predictions {sorted(set(np.unique(pred)))} are not training labels"
    accuracy = float(np.mean(pred == y_test))
    assert accuracy >= 0.9, f"test accuracy {accuracy:.3f} < 0.9 on separable data"
    if hasattr(fitted, "decision_function"):
        scores = np.asarray(fitted.decision_function(X_test))
        assert scores.shape == (len(X_test),) and np.all(np.isfinite(scores)), "scores must be finite, one a point"
        auc = roc_auc_score(y_test, scores)
        assert auc >= 0.9, f"test AUC {auc:.3f} < 0.9: higher decision_function must mean the positive class"
    again = clone(estimator).fit(*_separable(90, 0)).predict(X_test)
    assert np.array_equal(pred, np.asarray(again)), "the same random_state must give the same predictions"
    _refuses_other_features(fitted, "predict", X_test)


def check_ranker(estimator: Any) -> None:
    """Check the ranker contract on ``estimator`` (an unfitted instance with a fixed ``random_state`` if it has
    one); raise AssertionError on the first breach.

    - it clones (scikit-learn conventions: parameters only in ``__init__``);
    - ``decision_function`` before ``fit`` raises NotFittedError;
    - ``fit(X, y)`` with y in {-1, +1} returns the estimator itself and leaves X and y unchanged;
    - ``decision_function(X)`` returns finite floats of shape (n_samples,), higher meaning more likely positive:
      on separable data its test AUC is at least 0.9;
    - the same ``random_state`` gives the same scores, bit for bit;
    - the order of the training rows does not matter for the quality of the ranking (a forest's bootstrap may
      change the scores themselves): the AUC stays at least 0.9 after shuffling them;
    - labels of one class only, and test data with another number of features, are refused with a ValueError.
    """
    fitted, X_test, y_test = _fits_as_an_estimator(estimator, "decision_function")
    X, y = _separable(90, 0)
    scores = fitted.decision_function(X_test)
    assert isinstance(scores, np.ndarray) and scores.shape == (len(X_test),), f"scores of shape {np.shape(scores)}"
    assert scores.dtype.kind == "f" and np.all(np.isfinite(scores)), "scores must be finite floats"
    auc = roc_auc_score(y_test, scores)
    assert auc >= 0.9, f"test AUC {auc:.3f} < 0.9 on separable data: higher scores must mean positive"

    again = clone(estimator).fit(X, y).decision_function(X_test)
    assert np.array_equal(scores, again), "the same random_state must give the same scores"

    order = np.random.default_rng(2).permutation(len(y))
    shuffled = clone(estimator).fit(X[order], y[order]).decision_function(X_test)
    assert roc_auc_score(y_test, shuffled) >= 0.9, "the training rows' order must not spoil the ranking"
    for bad_y in (np.ones(len(y), dtype=int), -np.ones(len(y), dtype=int)):
        _raises(ValueError, lambda bad_y=bad_y: clone(estimator).fit(X, bad_y),
                "fit on labels of one class must raise ValueError")
    _refuses_other_features(fitted, "decision_function", X_test)


def check_two_sample_test(test: Any) -> None:
    """Check the two-sample test contract on ``test``; raise AssertionError on the first breach.

    It clones; ``test(X_a, X_b)`` returns a TestResult with a finite statistic and a p-value in (0, 1], small on
    two clearly different samples and not small on two halves of one sample, the same for the same
    ``random_state``, and leaves its inputs unchanged; bad samples (1-D, other column counts, NaN, a single point)
    are refused with a ValueError."""
    rng = np.random.default_rng(0)
    A, B = rng.normal(1.0, 1.0, (120, 3)), rng.normal(0.0, 1.0, (120, 3))
    same = np.random.default_rng(100).normal(0.0, 1.0, (240, 3))  # a typical null sample: p about 0.5 for each test
    unfitted = clone(test)
    assert unfitted.get_params() == test.get_params(), "clone must keep the parameters"
    before = A.copy()
    result = clone(test).test(A, B)
    assert isinstance(result, TestResult) and np.isfinite(result.statistic) and 0 < result.p_value <= 1, \
        f"test must return a TestResult with a finite statistic and a p-value in (0, 1], got {result!r}"
    assert result.p_value < 0.05, f"no rejection on a clear shift: p = {result.p_value}"
    assert np.array_equal(A, before), "test must not change its inputs"
    assert clone(test).test(A, B) == result, "the same random_state must give the same result"
    assert clone(test).test(same[:120], same[120:]).p_value > 0.05, "a rejection on two halves of one sample"
    for bad_a, bad_b in ((A[:, 0], B), (A, B[:, :2]), (np.where(A > 2, np.nan, A), B), (A[:1], B)):
        _raises(ValueError, lambda bad_a=bad_a, bad_b=bad_b: clone(test).test(bad_a, bad_b),
                f"samples of shapes {np.shape(bad_a)} and {np.shape(bad_b)} (or with NaN) must raise ValueError")


#: Task (:data:`forestlab.learners.TASKS`) -> the check of its contract.
CHECKS: dict[str, Callable[[Any], None]] = {"classifier": check_classifier, "ranker": check_ranker,
                                           "two_sample_test": check_two_sample_test}


def check_learner(learner: Any, task: str) -> None:
    """Check ``learner`` against the contract of ``task`` (what a registry entry names: ``classifier``,
    ``ranker`` or ``two_sample_test``); raise AssertionError on the first breach, ValueError for another task."""
    if task not in CHECKS:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(CHECKS)}")
    CHECKS[task](learner)
