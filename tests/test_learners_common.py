"""scikit-learn's common estimator checks for every learner in ``forestlab.learners.REGISTRY``.

Instances are test-sized (as sklearn's INIT_PARAMS: a few trees, a fixed seed); a check a learner is known to fail
is listed in EXPECTED_FAILED_CHECKS with the reason.
"""

from __future__ import annotations

from typing import Any

from sklearn.utils.estimator_checks import parametrize_with_checks

from forestlab.learners import REGISTRY

#: Registry name -> constructor parameters for the checks (small and seeded, so the suite stays fast).
INIT_PARAMS: dict[str, dict[str, Any]] = {
    "rf": {"n_estimators": 5, "random_state": 0},
    "pacbayes_forest": {"n_estimators": 5, "random_state": 0},  # SORF (the default weighting), fully grown trees
    "forest_svm": {"n_estimators": 5, "random_state": 0},
    "rbf_svm": {"C_grid": (1, 100), "gamma_grid": (1.0,), "random_state": 0},
    "gboost": {"n_estimators": 5, "random_state": 0},
    "rf_estimates": {"n_estimators": 5, "cv_folds": 2, "n_bootstrap": 2, "random_state": 0},
    "rf_importance": {"n_estimators": 5, "n_noise_features": 2, "random_state": 0},
}

#: Registry name -> {check name: reason}.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "rf": {},
    "pacbayes_forest": {},
}


def _instances() -> list[Any]:
    out = []
    for name, cls in REGISTRY.items():
        params = INIT_PARAMS.get(name)
        if params is None:  # a learner added without test-sized params: shrink what can be shrunk
            defaults = cls().get_params()
            params = {k: v for k, v in {"n_estimators": 5, "random_state": 0}.items() if k in defaults}
        out.append(cls(**params))
    return out


def _name_of(estimator: Any) -> str:
    return next(name for name, cls in REGISTRY.items() if isinstance(estimator, cls))


def _expected_failed_checks(estimator: Any) -> dict[str, str]:
    return EXPECTED_FAILED_CHECKS.get(_name_of(estimator), {})


def test_every_registered_learner_has_test_params():
    assert set(INIT_PARAMS) == set(REGISTRY)


@parametrize_with_checks(_instances(), expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_learner(estimator, check):
    check(estimator)
