"""ErrorEstimatesForest grows its helper forests (hold-out, CV folds, bootstrap) through a lean replay of
scikit-learn's forest (``_lean_forest_vote``): these tests pin that the numbers did not move.

``PINNED`` holds the estimates and curves computed by the code before that change (main at f0c8f7a, the helper
forests grown as BreimanForestClassifier), printed with repr: they must come back bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from forestlab.learners import BreimanForestClassifier
from forestlab.learners._courses import ErrorEstimatesForest, _lean_forest_vote


def _problem() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X, y = make_classification(n_samples=90, n_features=9, n_informative=4, flip_y=0.15, random_state=3)
    Xt, yt = make_classification(n_samples=200, n_features=9, n_informative=4, flip_y=0.15, random_state=4)
    return X, np.where(y == 1, 1, -1), Xt, np.where(yt == 1, 1, -1)


CASES = {
    "default": dict(n_estimators=15, cv_folds=5, n_bootstrap=6, random_state=7),
    "entropy_leaf": dict(n_estimators=11, criterion="entropy", min_samples_leaf=3, max_depth=4, max_features=0.5,
                         cv_folds=4, n_bootstrap=5, holdout_train_size=0.5, random_state=11),
    "frac_leaf_all": dict(n_estimators=9, min_samples_leaf=0.05, max_features="all", cv_folds=3, n_bootstrap=4,
                          random_state=2),
}

PINNED = {
    "default": (
        {"est_resub": 0.011111111111111112, "est_holdout": 0.26666666666666666, "est_cv": 0.25555555555555554,
            "est_oob": 0.3111111111111111, "est_loo_boot": 0.24900793650793648, "est_632": 0.16146190476190475,
            "est_632plus": 0.19466690751466514, "no_info_error": 0.4950617283950617},
        {
            "train_error": [0.08888888888888889, 0.12222222222222222, 0.05555555555555555, 0.044444444444444446,
                0.044444444444444446, 0.06666666666666667, 0.03333333333333333, 0.03333333333333333,
                0.011111111111111112, 0.0, 0.0, 0.011111111111111112, 0.011111111111111112, 0.011111111111111112,
                0.011111111111111112],
            "oob_error": [0.26666666666666666, 0.30612244897959184, 0.35384615384615387, 0.3783783783783784,
                0.3333333333333333, 0.30864197530864196, 0.3253012048192771, 0.34523809523809523, 0.3218390804597701,
                0.2988505747126437, 0.29213483146067415, 0.2808988764044944, 0.3258426966292135, 0.34831460674157305,
                0.30337078651685395],
            "oob_coverage": [0.3333333333333333, 0.5444444444444444, 0.7222222222222222, 0.8222222222222222,
                0.8666666666666667, 0.9, 0.9222222222222223, 0.9333333333333333, 0.9666666666666667,
                0.9666666666666667, 0.9888888888888889, 0.9888888888888889, 0.9888888888888889, 0.9888888888888889,
                0.9888888888888889],
            "test_error": [0.52, 0.515, 0.455, 0.535, 0.52, 0.55, 0.52, 0.56, 0.535, 0.525, 0.53, 0.545, 0.54, 0.54,
                0.535],
        }),
    "entropy_leaf": (
        {"est_resub": 0.1111111111111111, "est_holdout": 0.2, "est_cv": 0.26666666666666666, "est_oob":
            0.25555555555555554, "est_loo_boot": 0.22682926829268293, "est_632": 0.1842449864498645, "est_632plus":
            0.19334186761034694, "no_info_error": 0.49604938271604937},
        {
            "train_error": [0.2, 0.16666666666666666, 0.13333333333333333, 0.16666666666666666, 0.13333333333333333,
                0.12222222222222222, 0.1111111111111111, 0.1111111111111111, 0.1, 0.12222222222222222,
                0.1111111111111111],
            "oob_error": [0.3, 0.2413793103448276, 0.2318840579710145, 0.2, 0.19047619047619047, 0.19047619047619047,
                0.20238095238095238, 0.20930232558139536, 0.22988505747126436, 0.23863636363636365,
                0.24719101123595505],
            "oob_coverage": [0.3333333333333333, 0.6444444444444445, 0.7666666666666667, 0.8888888888888888,
                0.9333333333333333, 0.9333333333333333, 0.9333333333333333, 0.9555555555555556, 0.9666666666666667,
                0.9777777777777777, 0.9888888888888889],
            "test_error": [0.52, 0.515, 0.48, 0.535, 0.49, 0.495, 0.48, 0.51, 0.485, 0.5, 0.475],
        }),
    "frac_leaf_all": (
        {"est_resub": 0.1111111111111111, "est_holdout": 0.3, "est_cv": 0.24444444444444444, "est_oob":
            0.28888888888888886, "est_loo_boot": 0.2605633802816901, "est_632": 0.20556494522691704, "est_632plus":
            0.22121597271553994, "no_info_error": 0.49802469135802463},
        {
            "train_error": [0.16666666666666666, 0.17777777777777778, 0.17777777777777778, 0.15555555555555556,
                0.15555555555555556, 0.12222222222222222, 0.12222222222222222, 0.1, 0.1111111111111111],
            "oob_error": [0.20512820512820512, 0.36666666666666664, 0.3472222222222222, 0.3, 0.2839506172839506,
                0.29069767441860467, 0.2808988764044944, 0.30337078651685395, 0.2808988764044944],
            "oob_coverage": [0.43333333333333335, 0.6666666666666666, 0.8, 0.8888888888888888, 0.9,
                0.9555555555555556, 0.9888888888888889, 0.9888888888888889, 0.9888888888888889],
            "test_error": [0.65, 0.655, 0.675, 0.67, 0.675, 0.65, 0.64, 0.65, 0.66],
        }),
}


@pytest.mark.parametrize("name", list(CASES))
def test_error_estimates_match_the_numbers_before_the_lean_helpers(name):
    X, y, Xt, yt = _problem()
    model = ErrorEstimatesForest(**CASES[name]).fit(X, y)
    diag, curves = PINNED[name]
    assert model.diagnostics_ == diag  # exact float equality
    got = model.error_curves(Xt, yt)
    for key, values in curves.items():
        assert got[key].tolist() == values, key


@pytest.mark.parametrize("params", [
    dict(n_estimators=25, max_features="sqrt"),
    dict(n_estimators=20, max_features="all", criterion="entropy"),
    dict(n_estimators=20, max_features=3, criterion="log_loss", min_samples_leaf=4, max_depth=3),
    dict(n_estimators=15, max_features=0.3, min_samples_leaf=0.03),
])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_lean_vote_is_the_forest_vote(params, n_classes):
    """The lean replay votes exactly as BreimanForestClassifier(same params, same seed).predict, point by point
    (a scikit-learn upgrade that changes its forest's internals fails here)."""
    X, y = make_classification(n_samples=150, n_features=10, n_informative=5, n_classes=n_classes,
                               n_clusters_per_class=1, flip_y=0.2, random_state=n_classes)
    X_eval = make_classification(n_samples=400, n_features=10, random_state=9)[0]
    classes, codes = np.unique(y, return_inverse=True)
    for seed in (0, 12345):
        forest = BreimanForestClassifier(**params, random_state=seed).fit(X, y)
        lean = _lean_forest_vote(forest, np.ascontiguousarray(X, dtype=np.float32), codes, len(classes), seed,
                                 np.ascontiguousarray(X_eval, dtype=np.float32))
        np.testing.assert_array_equal(classes.take(lean), forest.predict(X_eval))


def test_error_estimates_do_not_depend_on_n_jobs():
    X, y, Xt, yt = _problem()
    one = ErrorEstimatesForest(**CASES["default"], n_jobs=1).fit(X, y)
    two = ErrorEstimatesForest(**CASES["default"], n_jobs=2).fit(X, y)
    assert one.diagnostics_ == two.diagnostics_ == PINNED["default"][0]
