"""Model selection: the single place where a learner's hyperparameter grid is searched.

A protocol's ``selection`` names how (:class:`forestlab.spec.Selection` declares and checks it):

``none``
    No search: the learner is fitted with its parameters (a grid, if any, is ignored).
``oob``
    Every point of the grid (scikit-learn's :class:`~sklearn.model_selection.ParameterGrid` order) is fitted on the
    training part and the one with the lowest out-of-bag error (``oob_error_``) is kept, the first on ties. Needs a
    bootstrap learner.
``cv``
    Inner stratified k-fold cross-validation on the training part only: each grid point is scored by the mean over
    the inner folds of ``metric``, the best is kept (honouring the metric's direction, the first on ties) and refitted
    on the whole training part. With ``proxy`` (parameter overrides), the inner folds score a cheaper stand-in of
    each grid point: ``proxy: {n_estimators: 1, bootstrap: false}`` chooses a ranking forest's SVM kernel by the
    inner AUC of one tree, as depecker2010 chooses it by TRK_SVM's, and only the chosen forest is grown.
``test``
    **Optimistic**: every grid point is fitted on the training part and scored on the *test* set, and the best test
    result is kept, as depecker2010 does for the SVM kernel and RankRLS's lambda ("best test result kept"). The test
    set then takes part in the choice, so the reported test metric is biased upwards: tables must label such cells
    (:func:`is_optimistic`; the run's arrays carry ``selection_optimistic``).

The spec is a mapping ``{kind: none|oob|cv|test, metric: <a name of forestlab.metrics.METRICS>, folds: 5}`` (and
``proxy`` for ``cv``); the
strings ``none`` and ``oob`` are accepted as shorthands (``cv`` and ``test`` need a metric, so they need a mapping).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from forestlab.errors import ConfigError, DatasetError
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.metrics import get_metric
from forestlab.seeds import derive_seed
from forestlab.spec import SELECTION_KINDS, Selection

__all__ = ["SELECTION_KINDS", "is_optimistic", "select_and_fit", "selection_spec"]

def selection_spec(selection: Mapping[str, Any] | str | Selection | None) -> dict[str, Any]:
    """The normalised selection spec ``{"kind", "metric", "folds"}`` (and ``proxy``), as the run keys hash it: the
    dict of :class:`forestlab.spec.Selection`, whose :meth:`~forestlab.spec.Selection.from_config` holds the rules
    (a one-line ConfigError when the value breaks one).

    Examples
    --------
    >>> selection_spec("oob")
    {'kind': 'oob', 'metric': 'risk', 'folds': None}
    >>> selection_spec({"kind": "cv", "metric": "auc"})
    {'kind': 'cv', 'metric': 'auc', 'folds': 5}
    """
    return Selection.from_config(selection).as_dict()


def is_optimistic(selection: Mapping[str, Any] | str | Selection | None) -> bool:
    """Whether the selection looked at the test set (kind ``test``), so its test metrics must be labelled
    optimistic in tables.

    >>> is_optimistic({"kind": "test", "metric": "auc"}), is_optimistic("oob"), is_optimistic(None)
    (True, False, False)
    """
    return Selection.from_config(selection).optimistic


def _evaluate(est: Any, metric_name: str, X: np.ndarray, y: np.ndarray) -> float:
    """``metric`` of a fitted estimator on (X, y): from ``decision_function`` for score metrics, ``predict`` for
    label metrics."""
    metric = get_metric(metric_name)
    if metric.kind == "score":
        if not hasattr(est, "decision_function"):
            raise ConfigError(f"{type(est).__name__} has no decision_function: selection on the score metric "
                              f"'{metric_name}' needs one; select on a label metric such as risk")
        values = np.asarray(est.decision_function(X))
        if values.ndim != 1:
            raise ConfigError(f"{type(est).__name__}.decision_function gives {values.ndim}-d scores: the score "
                              f"metric '{metric_name}' needs one score per point (a binary task)")
    else:
        if not hasattr(est, "predict"):
            raise ConfigError(f"{type(est).__name__} has no predict: selection on the label metric "
                              f"'{metric_name}' needs one; select on a score metric such as auc")
        values = est.predict(X)
    return metric(y, values)


def _staged_groups(cls: type, points: list[dict[str, Any]], proxy: Mapping[str, Any],
                   metric_kind: str) -> list[list[int]]:
    """Groups of grid points (indices) that differ only in ``cls.staged_param``, for a learner whose fit with a
    smaller value of that parameter is a prefix of its fit with a larger one (a booster's rounds without early
    stopping: ``staged_param = "max_iter"``). Each group is then fitted once per inner fold, at its largest value,
    and every value is scored from that fit (``staged_scores``): the same scores as separate fits, bit for bit
    (tests/test_selection.py), at a fraction of the rounds. No groups when the learner has no staged parameter, the
    metric is not a score metric, or the proxy sets the parameter."""
    param = getattr(cls, "staged_param", None)
    if param is None or metric_kind != "score" or param in proxy or not all(param in p for p in points):
        return []
    groups: dict[tuple, list[int]] = {}
    for j, point in enumerate(points):
        key = tuple(sorted((k, repr(v)) for k, v in point.items() if k != param))
        groups.setdefault(key, []).append(j)
    return [g for g in groups.values() if len(g) > 1]


def _best(scores: list[float], greater_is_better: bool) -> int:
    """Index of the best finite score (the first on ties); a ValueError when none is finite."""
    best, best_score = -1, np.nan
    for i, score in enumerate(scores):
        if not np.isfinite(score):
            continue
        if best < 0 or (score > best_score if greater_is_better else score < best_score):  # strict: first wins
            best, best_score = i, score
    if best < 0:
        raise ValueError(f"model selection: no grid point has a finite score ({scores})")
    return best


def select_and_fit(cls: type, params: Mapping[str, Any], grid: Mapping[str, Any] | None,
                   selection: Mapping[str, Any] | str | None, X_train: np.ndarray, y_train: np.ndarray, *,
                   random_state: int, cache: FitCache | None, X_test: np.ndarray | None = None,
                   y_test: np.ndarray | None = None,
                   task: str = "classifier") -> tuple[Any, dict[str, Any], dict[str, np.ndarray]]:
    """Search ``grid`` as ``selection`` says and return the estimator fitted on the whole training part.

    Every fit is ``fit_with_cache(cls(**params, **point, random_state=random_state), X, y, cache)``, so fits are
    shared through the job's cache.

    Parameters
    ----------
    cls : type
        The estimator class.
    params : mapping
        Its fixed parameters.
    grid : mapping of str to list, or None
        Hyperparameter values to search (scikit-learn :class:`~sklearn.model_selection.ParameterGrid` order).
    selection : mapping, str or None
        The selection (see :class:`forestlab.spec.Selection`): its dict, the value as written, or the object.
    X_train, y_train : ndarray
        The training part; ``cv`` splits it into inner folds, ``oob`` and ``test`` fit each grid point on it.
    random_state : int
        The learner's seed; ``cv`` derives its inner folds from it (``derive_seed("inner-cv", random_state)``).
    cache : FitCache or None
        The job's fit cache.
    X_test, y_test : ndarray, optional
        The test set, used by ``test`` selection only (which is then optimistic, see the module docstring).
    task : {"classifier", "ranker"}, default="classifier"
        A ranker has no ``predict``, so it can only be selected on a score metric (or ``oob``).

    Returns
    -------
    estimator
        The fitted estimator (shared with the cache: treat it as read-only).
    selected : dict
        The chosen grid point (``{}`` without a search).
    arrays : dict of str to ndarray
        ``{"selection_oob_error": per grid point}`` (oob), ``{"selection_cv_score": per-grid-point mean over the
        inner folds}`` (cv), ``{"selection_test_score": per grid point, "selection_optimistic": True}`` (test);
        ``{}`` without a search.

    Raises
    ------
    ConfigError
        Invalid spec, empty grid values, a learner without ``oob_error_`` under ``oob``, a metric the learner
        cannot be evaluated on, or ``test`` selection without a test set.
    DatasetError
        A class with fewer training points than the inner folds (``cv``).
    """
    from sklearn.model_selection import ParameterGrid, StratifiedKFold

    spec = Selection.from_config(selection)
    grid = dict(grid or {})
    params = dict(params)

    def fit(point: Mapping[str, Any], X: np.ndarray, y: np.ndarray) -> Any:
        return fit_with_cache(cls(**{**params, **point}, random_state=random_state), X, y, cache)

    if not grid or spec.kind == "none":
        return fit({}, X_train, y_train), {}, {}
    empty = [k for k, v in grid.items() if len(v) == 0]
    if empty:
        raise ConfigError(f"{cls.__name__}: grid parameter '{empty[0]}' has no values ({grid})")
    points = list(ParameterGrid(grid))
    kind = spec.kind
    if task == "ranker" and kind in ("cv", "test") and get_metric(spec.metric).kind == "label":
        raise ConfigError(f"{cls.__name__} is a ranker: it cannot be selected on the label metric "
                          f"'{spec.metric}'; use a score metric such as auc")

    if kind == "oob":
        # the runner's original loop, unchanged: same order, strict "<" so the first grid point wins ties
        best, best_err, best_params, errors = None, np.inf, {}, []
        for point in points:
            est = fit(point, X_train, y_train)
            err = getattr(est, "oob_error_", None)
            if err is None:
                raise ConfigError(f"{cls.__name__} has no out-of-bag error: protocol selection=oob needs "
                                  "a bootstrap learner")
            errors.append(float(err))
            if err < best_err:  # strict: the first grid point wins ties
                best, best_err, best_params = est, err, dict(point)
        return best, best_params, {"selection_oob_error": np.asarray(errors)}

    metric = get_metric(spec.metric)
    if kind == "cv":
        folds = spec.folds
        _, counts = np.unique(np.asarray(y_train), return_counts=True)
        if counts.min() < folds:
            raise DatasetError(f"model selection by {folds}-fold inner cross-validation: a class has "
                               f"{counts.min()} training points, fewer than the folds")
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=derive_seed("inner-cv", random_state))
        inner = list(splitter.split(np.zeros(len(y_train)), y_train))
        proxy = dict(spec.proxy or {})
        scores = np.full((len(points), len(inner)), np.nan)
        done = np.zeros(len(points), dtype=bool)
        for group in _staged_groups(cls, points, proxy, metric.kind):
            top = max(group, key=lambda j: points[j][cls.staged_param])
            for f, (tr, va) in enumerate(inner):
                est = fit({**points[top], **proxy}, X_train[tr], y_train[tr])
                staged = est.staged_scores(X_train[va], [points[j][cls.staged_param] for j in group])
                if staged is None:  # not exact for this learner's settings: each grid point fitted on its own
                    staged = [np.asarray(fit({**points[j], **proxy}, X_train[tr], y_train[tr])
                                         .decision_function(X_train[va])) for j in group]
                for j, values in zip(group, staged, strict=True):
                    scores[j, f] = metric(y_train[va], values)
            done[group] = True
        for j in np.flatnonzero(~done):  # grid points not in a staged group
            scores[j] = [_evaluate(fit({**points[j], **proxy}, X_train[tr], y_train[tr]), metric.name, X_train[va],
                                   y_train[va]) for tr, va in inner]
        means = [float(np.mean(row)) for row in scores]
        i = _best(means, metric.greater_is_better)
        return fit(points[i], X_train, y_train), dict(points[i]), {"selection_cv_score": np.asarray(means)}

    # kind == "test": optimistic, the test set chooses
    if X_test is None or y_test is None or len(y_test) == 0:
        raise ConfigError("protocol.selection kind test keeps the grid point with the best test result, but the "
                          "run has no test set")
    fitted: dict[int, Any] = {}
    scores: list[float] = []
    for j, point in enumerate(points):
        fitted[j] = fit(point, X_train, y_train)
        scores.append(_evaluate(fitted[j], metric.name, X_test, y_test))
        i = _best(scores, metric.greater_is_better) if np.isfinite(scores).any() else j
        fitted = {i: fitted[i]}  # keep only the best so far
    i = _best(scores, metric.greater_is_better)
    return fitted[i], dict(points[i]), {"selection_test_score": np.asarray(scores),
                                        "selection_optimistic": np.asarray(True)}
