"""Parameters that cannot apply to the data: refused by fit (not clipped) and, with the same rule, before any run by
``check_params_for_data``; values derived from the data by their definition (fractions, named rules) are fine."""

from __future__ import annotations

import numpy as np
import pytest

from forestlab.config import group_options, load_group_option, to_container
from forestlab.errors import ConfigError
from forestlab.learners import REGISTRY, check_params_for_data, get_entry

N, D = 60, 6


def _data(n: int = N, d: int = D) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X[y == 1] += 0.5
    return X, y


def _fit_error(name: str, params: dict, n: int = N, d: int = D) -> str:
    """The ValueError of the learner's fit (a two-sample test: its test) on data of that shape."""
    X, y = _data(n, d)
    est = get_entry(name).cls(**params, random_state=0)
    with pytest.raises(ValueError) as info:
        if get_entry(name).task == "two_sample_test":
            est.test(X[y == 1], X[y == -1])
        else:
            est.fit(X, y)
    return str(info.value)


#: (registry name, parameters, n_samples, the problem check_params_for_data and fit both name).
CASES = [
    ("rf", {"max_features": 1000}, N, "max_features=1000 exceeds the 6 features of the data"),
    ("pacbayes_forest", {"n_estimators": 4, "max_features": 7}, N,
     "max_features=7 exceeds the 6 features of the data"),
    ("forest_svm", {"n_estimators": 4, "max_features": 7}, N, "max_features=7 exceeds the 6 features of the data"),
    ("rf_estimates", {"n_estimators": 4, "max_features": 7, "cv_folds": 2, "n_bootstrap": 1}, N,
     "max_features=7 exceeds the 6 features of the data"),
    ("rf_estimates", {"n_estimators": 4, "cv_folds": 61, "n_bootstrap": 1}, N,
     "cv_folds=61 exceeds the 60 training points of the data"),
    ("rf_importance", {"n_estimators": 4, "max_features": 9, "n_noise_features": 2}, N,
     "max_features=9 exceeds the 8 features of the data and its 2 noise features"),
    ("treerank", {"max_features": 7}, N, "max_features=7 exceeds the 6 features of the data"),
    ("treerank", {"max_features": 3, "leafrank_max_features": 4}, N,
     "leafrank_max_features=4 exceeds the 3 variables of a master node (max_features=3 draws 3 of the data's 6 "
     "features)"),
    ("treerank", {"max_features": 0.5, "leafrank_max_features": 4}, N,
     "leafrank_max_features=4 exceeds the 3 variables of a master node (max_features=0.5 draws 3 of the data's 6 "
     "features)"),
    ("ranking_forest", {"n_estimators": 2, "max_features": 1000}, N,
     "max_features=1000 exceeds the 6 features of the data"),
    ("ranking_forest", {"n_estimators": 2, "max_samples": 61, "bootstrap": False}, N,
     "max_samples=61 distinct rows cannot be drawn from the 60 training points of the data"),
    ("pruned_treerank", {"cv_folds": 2, "leafrank_max_features": 7}, N,
     "leafrank_max_features=7 exceeds the 6 variables of a master node (max_features=None draws 6 of the data's 6 "
     "features)"),
    ("treerank_wilcoxon", {"ranker_params": {"max_features": 8}}, N,
     "ranker_params.max_features=8 exceeds the 6 features of the data"),
    ("rbf_svm", {"C_grid": (1, 10), "gamma_grid": (1.0,)}, 3,
     "C_grid of 2 values, gamma_grid of 1 value: 2 candidates to compare on an inner split, but the 3 training "
     "points of the data cannot be split"),
    ("forest_svm", {"n_estimators": 4, "C_grid": (1, 10)}, 3,
     "C_grid of 2 values: 2 candidates to compare on an inner split, but the 3 training points"),
]


@pytest.mark.parametrize(("name", "params", "n", "problem"), CASES)
def test_the_plan_and_fit_refuse_a_parameter_the_data_cannot_take_with_one_message(name, params, n, problem):
    found = check_params_for_data(name, params, n_samples=n, n_features=D, n_classes=2)
    assert len(found) == 1 and found[0].startswith(problem), found
    assert found[0] in _fit_error(name, params, n=n)  # fit raises the very sentence the plan gives


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_defaults_fit_ordinary_data(name):
    assert check_params_for_data(name, {}, n_samples=200, n_features=20, n_classes=2) == []


@pytest.mark.parametrize("name", group_options("algorithm"))
def test_every_configured_algorithm_fits_a_table_sized_dataset(name):
    """The configs as the studies run them raise nothing on their datasets' shapes (here: 20 features, as
    GaussEasy20d, or 8, the smallest of zirakiza2013's, and 100 training points). Each config is read as its file
    merged with its bases (``load_group_option``, what Hydra composes for it: tests/test_fast_cli.py checks that),
    without a Hydra composition per config."""
    alg = to_container(load_group_option("algorithm", name))
    for d in (8, 20):
        assert check_params_for_data(alg["estimator"], alg.get("params") or {}, 100, d, 2,
                                     grid=alg.get("grid") or {}) == [], (name, d)


def test_derived_values_are_no_problem_and_behave_as_before():
    """Fractions and named rules resolve within the data by their definitions: no problem, the same forest as the
    resolved count (max_features=0.5 of 6 features is 3, "sqrt" of 6 is 2)."""
    X, y = _data()
    for value, count in ((0.5, 3), ("sqrt", 2), (0.01, 1), ("log2", 2)):
        assert check_params_for_data("rf", {"max_features": value}, N, D, 2) == []
        a = get_entry("rf").cls(n_estimators=5, max_features=value, random_state=0).fit(X, y)
        b = get_entry("rf").cls(n_estimators=5, max_features=count, random_state=0).fit(X, y)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_a_grid_value_the_data_cannot_take_is_named_with_grid():
    found = check_params_for_data("treerank", {"max_features": 2}, N, D, 2,
                                  grid={"leafrank_max_features": [1, 2, 3], "svm_C": [1.0, 2.0]})
    assert found == ["leafrank_max_features=3 exceeds the 2 variables of a master node (max_features=2 draws 2 of "
                     "the data's 6 features) (grid)"]
    assert check_params_for_data("rf", {}, N, D, 2, grid={"max_features": [2, 6]}) == []
    assert check_params_for_data("rf", {}, N, D, 2, grid={"max_features": [2, 7, 8]}) == [
        "max_features=7 exceeds the 6 features of the data (grid)",
        "max_features=8 exceeds the 6 features of the data (grid)"]


def test_several_problems_are_all_named_and_an_unknown_learner_is_a_config_error():
    found = check_params_for_data("rf_estimates", {"max_features": 9, "cv_folds": 50}, 40, D, 2)
    assert found == ["max_features=9 exceeds the 6 features of the data",
                     "cv_folds=50 exceeds the 40 training points of the data"]
    message = _fit_error("rf_estimates", {"n_estimators": 2, "max_features": 9, "cv_folds": 50}, n=40)
    assert all(p in message for p in found)
    with pytest.raises(ConfigError, match="unknown learner 'nope'"):
        check_params_for_data("nope", {}, N, D, 2)


def test_a_leafrank_that_does_not_draw_rf2_variables_is_not_checked_against_them():
    """leafrank_max_features is read by the CART LeafRank only (the axis, SVM and dyadic ones ignore it)."""
    for leafrank in ("axis", "svm"):
        assert check_params_for_data("treerank", {"leafrank": leafrank, "leafrank_max_features": 40}, N, D, 2) == []


def test_treerank_reports_the_counts_it_applied():
    X, y = _data(200, 20)
    tree = get_entry("treerank").cls(max_features=0.25, leafrank_max_features=0.5, random_state=0).fit(X, y)
    assert (tree.max_features_, tree.leafrank_max_features_) == (5, 2)
    axis = get_entry("treerank").cls(leafrank="axis", leafrank_max_features=0.5, random_state=0).fit(X, y)
    assert (axis.max_features_, axis.leafrank_max_features_) == (20, None)
