"""Model selection (forestlab.selection): oob as the runner did it, inner cross-validation against a hand-written
loop, the optimistic test-set selection, and the spec's validation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import ParameterGrid, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from forestlab.errors import ConfigError, DatasetError
from forestlab.learners import BreimanForestClassifier
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.metrics import METRICS, auc, risk
from forestlab.seeds import derive_seed
from forestlab.selection import SELECTION_KINDS, is_optimistic, select_and_fit, selection_spec


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    y = np.where(y == 1, 1, -1)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))[:300]
    X, y = X[idx], y[idx]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X[:200], y[:200], X[200:], y[200:]


def old_runner_fit(cls, params, grid, X, y, random_state, cache):
    """forestlab/runner.py ``_fit`` before the selection module, verbatim but for the payload unpacking."""
    if not grid:
        return fit_with_cache(cls(**params, random_state=random_state), X, y, cache), {}, {}
    best, best_err, best_params, errors = None, np.inf, {}, []
    for point in ParameterGrid(grid):
        est = fit_with_cache(cls(**{**params, **point}, random_state=random_state), X, y, cache)
        err = getattr(est, "oob_error_", None)
        if err is None:
            raise ConfigError(f"{cls.__name__} has no out-of-bag error: protocol selection=oob needs "
                              "a bootstrap learner")
        errors.append(float(err))
        if err < best_err:  # strict: the first grid point wins ties
            best, best_err, best_params = est, err, dict(point)
    return best, best_params, {"selection_oob_error": np.asarray(errors)}


def hand_cv(make, grid, metric, X, y, random_state, folds=5):
    """Inner stratified k-fold written out: the mean fold score of each grid point."""
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=derive_seed("inner-cv", random_state))
    means = []
    for point in ParameterGrid(grid):
        scores = []
        for tr, va in skf.split(X, y):
            est = make(**point).fit(X[tr], y[tr])
            values = est.decision_function(X[va]) if metric.kind == "score" else est.predict(X[va])
            scores.append(metric(y[va], values))
        means.append(np.mean(scores))
    return means


# ---------------------------------------------------------------------------------------------------------------
# oob: identical to the old runner code
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("with_cache", [False, True])
def test_oob_is_the_old_runner_loop(data, with_cache):
    X, y, X_test, _ = data
    params = {"n_estimators": 15}
    grid = {"max_features": [3, 30, 1, 8]}
    old = old_runner_fit(BreimanForestClassifier, params, grid, X, y, 11, FitCache() if with_cache else None)
    cache = FitCache() if with_cache else None
    new = select_and_fit(BreimanForestClassifier, params, grid, "oob", X, y, random_state=11, cache=cache)
    assert new[1] == old[1] and set(new[2]) == {"selection_oob_error"}
    np.testing.assert_array_equal(new[2]["selection_oob_error"], old[2]["selection_oob_error"])
    assert new[0].oob_error_ == old[0].oob_error_
    np.testing.assert_array_equal(new[0].predict(X_test), old[0].predict(X_test))
    np.testing.assert_array_equal(new[0].decision_function(X_test), old[0].decision_function(X_test))
    if with_cache:
        assert cache.misses == 4
    # the spec's mapping form is the same selection
    mapped = select_and_fit(BreimanForestClassifier, params, grid, {"kind": "oob"}, X, y, random_state=11,
                            cache=None)
    assert mapped[1] == old[1]


def test_oob_first_grid_point_wins_ties(data):
    X, y, _, _ = data
    # max_features 30 and None both mean every feature: identical forests, identical OOB errors
    grid = {"max_features": [None, 30]}
    est, selected, arrays = select_and_fit(BreimanForestClassifier, {"n_estimators": 10}, grid, "oob", X, y,
                                           random_state=0, cache=None)
    assert arrays["selection_oob_error"][0] == arrays["selection_oob_error"][1]
    assert selected == {"max_features": None}


def test_oob_needs_a_bootstrap_learner(data):
    X, y, _, _ = data
    with pytest.raises(ConfigError, match="DecisionTreeClassifier has no out-of-bag error"):
        select_and_fit(DecisionTreeClassifier, {}, {"max_depth": [1, 2]}, "oob", X, y, random_state=0, cache=None)


# ---------------------------------------------------------------------------------------------------------------
# none, or no grid: just the fit
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("grid", "selection"), [
    ({}, {"kind": "cv", "metric": "auc"}), (None, "oob"), ({"C": [0.01, 1.0]}, "none"), ({"C": [0.01]}, None),
])
def test_no_search(data, grid, selection):
    X, y, X_test, _ = data
    est, selected, arrays = select_and_fit(LogisticRegression, {"C": 0.5}, grid, selection, X, y, random_state=0,
                                           cache=None)
    assert selected == {} and arrays == {} and est.C == 0.5
    ref = LogisticRegression(C=0.5, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X_test), ref.decision_function(X_test))


# ---------------------------------------------------------------------------------------------------------------
# cv
# ---------------------------------------------------------------------------------------------------------------
def test_cv_picks_what_a_hand_written_inner_cv_picks_auc(data):
    X, y, X_test, _ = data
    grid = {"C": [0.002, 10.0, 0.0005, 0.01, 0.1]}
    cache = FitCache()
    est, selected, arrays = select_and_fit(LogisticRegression, {"max_iter": 1000}, grid,
                                           {"kind": "cv", "metric": "auc", "folds": 5}, X, y, random_state=7,
                                           cache=cache)
    means = hand_cv(lambda **p: LogisticRegression(max_iter=1000, random_state=7, **p), grid, METRICS["auc"],
                    X, y, 7)
    np.testing.assert_allclose(arrays["selection_cv_score"], means)
    best = int(np.argmax(means))
    assert selected == {"C": grid["C"][best]}
    assert len(set(np.round(means, 12))) > 1  # the grid points differ, so the choice means something
    ref = LogisticRegression(max_iter=1000, random_state=7, C=grid["C"][best]).fit(X, y)  # refit on all of X
    np.testing.assert_allclose(est.decision_function(X_test), ref.decision_function(X_test))
    assert cache.misses == 5 * 5 + 1


def test_cv_risk_picks_the_minimum(data):
    X, y, _, _ = data
    grid = {"max_depth": [1, 2, 3, 6], "min_samples_leaf": [1, 20]}
    spec = {"kind": "cv", "metric": "risk", "folds": 4}
    est, selected, arrays = select_and_fit(DecisionTreeClassifier, {}, grid, spec, X, y, random_state=3,
                                           cache=None)
    means = hand_cv(lambda **p: DecisionTreeClassifier(random_state=3, **p), grid, METRICS["risk"], X, y, 3, 4)
    np.testing.assert_allclose(arrays["selection_cv_score"], means)
    points = list(ParameterGrid(grid))
    assert selected == points[int(np.argmin(means))]  # argmin: the first minimum
    assert max(means) > min(means)
    # accuracy = 1 - risk, greater is better: the same choice, from the other direction
    _, selected_acc, arrays_acc = select_and_fit(DecisionTreeClassifier, {}, grid, {**spec, "metric": "accuracy"},
                                                 X, y, random_state=3, cache=None)
    assert selected_acc == selected
    np.testing.assert_allclose(arrays_acc["selection_cv_score"], 1 - np.asarray(means))
    assert est.get_params()["max_depth"] == selected["max_depth"]


def test_cv_first_grid_point_wins_ties(data):
    X, y, _, _ = data
    # depth 40 and 50 both grow the full tree: identical scores, the first is kept in either direction
    for metric in ("risk", "accuracy"):
        _, selected, arrays = select_and_fit(DecisionTreeClassifier, {}, {"max_depth": [40, 50]},
                                             {"kind": "cv", "metric": metric}, X, y, random_state=0, cache=None)
        assert arrays["selection_cv_score"][0] == arrays["selection_cv_score"][1]
        assert selected == {"max_depth": 40}


def test_cv_errors(data):
    X, y, _, _ = data
    with pytest.raises(ConfigError, match="has no decision_function"):
        select_and_fit(DecisionTreeClassifier, {}, {"max_depth": [1, 2]}, {"kind": "cv", "metric": "auc"}, X, y,
                       random_state=0, cache=None)
    few = np.r_[np.ones(3, int), -np.ones(20, int)]
    with pytest.raises(DatasetError, match="a class has 3 training points, fewer than the folds"):
        select_and_fit(DecisionTreeClassifier, {}, {"max_depth": [1, 2]}, {"kind": "cv", "metric": "risk"},
                       X[:23], few, random_state=0, cache=None)
    with pytest.raises(ConfigError, match="is a ranker"):
        select_and_fit(LogisticRegression, {}, {"C": [1.0, 2.0]}, {"kind": "cv", "metric": "risk"}, X, y,
                       random_state=0, cache=None, task="ranker")
    with pytest.raises(ConfigError, match="grid parameter 'C' has no values"):
        select_and_fit(LogisticRegression, {}, {"C": []}, {"kind": "cv", "metric": "auc"}, X, y, random_state=0,
                       cache=None)


# ---------------------------------------------------------------------------------------------------------------
# test: optimistic
# ---------------------------------------------------------------------------------------------------------------
def test_test_selection_keeps_the_best_test_result(data):
    X, y, X_test, y_test = data
    grid = {"C": [0.002, 10.0, 0.0005, 0.01, 0.1]}
    spec = {"kind": "test", "metric": "auc"}
    est, selected, arrays = select_and_fit(LogisticRegression, {"max_iter": 1000}, grid, spec, X, y,
                                           random_state=0, cache=None, X_test=X_test, y_test=y_test)
    by_hand = [auc(y_test, LogisticRegression(max_iter=1000, C=c, random_state=0).fit(X, y).decision_function(X_test))
               for c in grid["C"]]
    np.testing.assert_allclose(arrays["selection_test_score"], by_hand)
    assert selected == {"C": grid["C"][int(np.argmax(by_hand))]}
    assert auc(y_test, est.decision_function(X_test)) == max(by_hand)
    assert bool(arrays["selection_optimistic"]) and is_optimistic(spec)


def test_test_selection_with_risk_takes_the_minimum(data):
    X, y, X_test, y_test = data
    grid = {"max_depth": [1, 2, 3, 5, 8]}
    est, selected, arrays = select_and_fit(DecisionTreeClassifier, {}, grid, {"kind": "test", "metric": "risk"},
                                           X, y, random_state=1, cache=None, X_test=X_test, y_test=y_test)
    by_hand = [risk(y_test, DecisionTreeClassifier(max_depth=d, random_state=1).fit(X, y).predict(X_test))
               for d in grid["max_depth"]]
    np.testing.assert_allclose(arrays["selection_test_score"], by_hand)
    assert selected == {"max_depth": grid["max_depth"][int(np.argmin(by_hand))]}
    assert risk(y_test, est.predict(X_test)) == min(by_hand)


def test_test_selection_needs_a_test_set(data):
    X, y, _, _ = data
    for X_test, y_test in ((None, None), (X[:0], y[:0])):
        with pytest.raises(ConfigError, match="has no test set"):
            select_and_fit(DecisionTreeClassifier, {}, {"max_depth": [1, 2]}, {"kind": "test", "metric": "risk"},
                           X, y, random_state=0, cache=None, X_test=X_test, y_test=y_test)


# ---------------------------------------------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------------------------------------------
def test_selection_spec_normalises():
    assert SELECTION_KINDS == ("none", "oob", "cv", "test")
    assert selection_spec(None) == selection_spec("none") == selection_spec({}) == {"kind": "none", "metric": None,
                                                                                     "folds": None}
    assert selection_spec({"kind": "none", "metric": "auc", "folds": 3})["kind"] == "none"
    assert selection_spec("oob") == {"kind": "oob", "metric": "risk", "folds": None}
    assert selection_spec({"kind": "cv", "metric": "truncated_auc_05"}) == {"kind": "cv",
                                                                            "metric": "truncated_auc_05", "folds": 5}
    assert selection_spec({"kind": "cv", "metric": "risk", "folds": 10})["folds"] == 10
    assert selection_spec({"kind": "test", "metric": "auc", "folds": 5}) == {"kind": "test", "metric": "auc",
                                                                             "folds": None}
    assert not any(is_optimistic(s) for s in (None, "none", "oob", {"kind": "cv", "metric": "auc"}))


@pytest.mark.parametrize(("selection", "message"), [
    ("grid", "kind must be one of none, oob, cv, test"),
    (3, "must be a kind"),
    ({"kind": "test"}, "kind test needs a metric"),
    ({"kind": "cv", "metric": "f1"}, "'f1' cannot select a model; valid metrics: accuracy, auc"),
    ({"kind": "cv", "metric": "auc", "folds": True}, "folds must be an integer >= 2"),
    ({"kind": "oob", "metric": "accuracy"}, "oob compares out-of-bag errors"),
    ({"kind": "cv", "metric": "auc", "inner": 3}, "selection.inner is not a selection setting"),
])
def test_selection_spec_rejects(selection, message):
    with pytest.raises(ConfigError, match=message):
        selection_spec(selection)


def test_cv_selection_with_a_proxy_scores_a_stand_in_and_fits_only_the_choice():
    from forestlab.learners import RankingForest
    from forestlab.learners._cache import FitCache

    X, y = make_classification(n_samples=120, n_features=4, random_state=0)
    y = np.where(y == 1, 1, -1)
    cache = FitCache()
    spec = {"kind": "cv", "metric": "auc", "folds": 3, "proxy": {"n_estimators": 1, "bootstrap": False}}
    est, chosen, arrays = select_and_fit(RankingForest, {"n_estimators": 3, "min_samples_split": 10},
                                         {"max_depth": [1, 3]}, spec, X, y, random_state=0, cache=cache,
                                         task="ranker")
    sizes = sorted(e.n_estimators for e in cache._fitted.values())
    assert sizes == [1] * 6 + [3]  # 2 grid points x 3 inner folds of one tree, then the chosen forest only
    assert est.n_estimators == 3 and est.max_depth == chosen["max_depth"]
    assert arrays["selection_cv_score"].shape == (2,)


def test_selection_proxy_errors():
    assert "proxy" not in selection_spec({"kind": "cv", "metric": "auc"})
    with pytest.raises(ConfigError, match="proxy is for kind cv"):
        selection_spec({"kind": "test", "metric": "auc", "proxy": {"n_estimators": 1}})
    with pytest.raises(ConfigError, match="non-empty mapping"):
        selection_spec({"kind": "cv", "metric": "auc", "proxy": []})


# ---------------------------------------------------------------------------------------------------------------
# cv over a booster's rounds: one fit per inner fold and other parameters, every round count scored from it
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["XGBoostRanker", "LightGBMRanker", "HistGradientBoostingRanker"])
def test_cv_over_rounds_scores_each_count_as_its_own_fit_would(data, name):
    import forestlab.learners._modern_rankers as mr

    cls = getattr(mr, name)
    X, y, X_test, _ = data
    size = {"XGBoostRanker": "max_depth", "LightGBMRanker": "num_leaves", "HistGradientBoostingRanker":
            "max_leaf_nodes"}[name]
    grid = {size: [3, 7], "max_iter": [30, 5, 12]}  # rounds out of order: the largest is found, not assumed last
    params = {"early_stopping": False, "learning_rate": 0.3}
    cache = FitCache()
    est, selected, arrays = select_and_fit(cls, params, grid, {"kind": "cv", "metric": "auc", "folds": 3}, X, y,
                                           random_state=5, cache=cache, task="ranker")
    means = hand_cv(lambda **p: cls(**params, random_state=5, **p), grid, METRICS["auc"], X, y, 5, folds=3)
    np.testing.assert_array_equal(arrays["selection_cv_score"], means)  # bit for bit, not merely close
    assert len(set(np.round(means, 12))) > 2
    assert selected == dict(list(ParameterGrid(grid))[int(np.argmax(means))])
    assert cache.misses == 2 * 3 + 1  # one fit per (size, inner fold), at 30 rounds, and the refit
    assert est.n_iter_ == selected["max_iter"]


def test_cv_over_rounds_with_early_stopping_fits_each_grid_point(data):
    from forestlab.learners._modern_rankers import LightGBMRanker

    X, y, _, _ = data
    grid = {"max_iter": [10, 20]}
    params = {"early_stopping": True, "n_iter_no_change": 3, "validation_fraction": 0.2}
    cache = FitCache()
    _, _, arrays = select_and_fit(LightGBMRanker, params, grid, {"kind": "cv", "metric": "auc", "folds": 3}, X,
                                  y, random_state=5, cache=cache, task="ranker")
    means = hand_cv(lambda **p: LightGBMRanker(**params, random_state=5, **p), grid, METRICS["auc"], X, y, 5,
                    folds=3)
    np.testing.assert_array_equal(arrays["selection_cv_score"], means)
    assert cache.misses == 2 * 3 + 1  # not exact with early stopping: each point fitted (the largest once, cached)


def test_staged_scores_refuses_rounds_beyond_the_fit(data):
    from forestlab.learners._modern_rankers import HistGradientBoostingRanker

    X, y, _, _ = data
    est = HistGradientBoostingRanker(max_iter=5, early_stopping=False, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="outside 1..5"):
        est.staged_scores(X, [6])
