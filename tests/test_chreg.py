"""ChReg (depecker2010 §2.14; Germain 2007b/2009): LASSO logistic path, BIC, unpenalised refit. Recovery of the
informative variables of a sparse logistic model, the BIC choice against a brute force over the path (an independent
refit of every active set), the intercept-only edge cases, separable data, determinism, the ranker contract and
input errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score

from forestlab.learners._chreg import REFIT_C, ChReg, log_likelihood
from forestlab.learners.checks import check_ranker


def sparse_logistic(n: int, seed: int, beta: tuple[float, ...] = (1.5, -1.0, 0.8), q: int = 8,
                    intercept: float = -0.5) -> tuple[np.ndarray, np.ndarray]:
    """X ~ N(0, I_q) on unequal scales, P(y = +1 | x) = logistic(intercept + Σ_j beta_j x_j) on the first variables."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, q))
    z = intercept + X[:, :len(beta)] @ np.asarray(beta)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1, -1)
    return X * np.linspace(0.5, 3.0, q) + 1.0, y


def brute_force_refit_loglik(Xs: np.ndarray, y01: np.ndarray) -> float:
    """log L of Σ logloss + ‖β‖² / (2 REFIT_C) minimised by BFGS (not scikit-learn)."""
    def objective(theta):
        z = theta[0] + Xs @ theta[1:]
        p = 1 / (1 + np.exp(-z))
        value = -log_likelihood(z, y01) + theta[1:] @ theta[1:] / (2 * REFIT_C)
        grad = np.concatenate([[np.sum(p - y01)], Xs.T @ (p - y01) + theta[1:] / REFIT_C])
        return value, grad

    theta = minimize(objective, np.zeros(Xs.shape[1] + 1), jac=True, method="BFGS", options={"gtol": 1e-9}).x
    return log_likelihood(theta[0] + Xs @ theta[1:], y01)


def test_recovers_the_informative_variables():
    X, y = sparse_logistic(600, seed=0)
    model = ChReg(random_state=0).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(model.support_), [0, 1, 2])
    assert set(model.entry_order_[:3]) == {0, 1, 2}
    assert model.selected_params_ == {"n_selected": 3}
    assert model.run_report()["selected"] == {"n_selected": 3}
    X_test, y_test = sparse_logistic(2000, seed=1)
    assert roc_auc_score(y_test, model.decision_function(X_test)) > 0.8
    # the score is the refit's linear predictor; predict_proba is its logistic transform
    proba = model.predict_proba(X_test)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-model.decision_function(X_test))))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("bic_on", ["refit", "penalized"])
def test_bic_choice_equals_the_brute_force_minimum_over_the_path(bic_on):
    X, y = sparse_logistic(300, seed=2, beta=(1.0, -0.6, 0.3, 0.2))
    model = ChReg(n_alphas=20, bic_on=bic_on, random_state=0).fit(X, y)
    y01 = (y == 1).astype(float)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    n = len(y)
    want = []
    for k, active in enumerate(model.path_active_):
        if bic_on == "refit":
            loglik = brute_force_refit_loglik(Xs[:, active], y01)
        else:
            loglik = log_likelihood(model.path_intercept_[k] + Xs @ model.path_coef_[k], y01)
        want.append(-2 * loglik + (active.sum() + 1) * np.log(n))
    np.testing.assert_allclose(model.bic_, want, rtol=1e-7)
    assert model.best_index_ == int(np.argmin(want))
    np.testing.assert_array_equal(model.support_, model.path_active_[model.best_index_])
    assert len({a.tobytes() for a in model.path_active_}) >= 4  # the path visits several active sets
    assert not model.path_active_[0].any()  # C_min: the intercept-only model


def test_the_path_grid_starts_where_the_first_variable_enters():
    X, y = sparse_logistic(200, seed=3)
    model = ChReg(n_alphas=10, random_state=0).fit(X, y)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    c_min = 1 / np.abs(Xs.T @ ((y == 1) - (y == 1).mean())).max()
    assert model.path_C_[0] == pytest.approx(c_min)
    np.testing.assert_allclose(np.diff(np.log(model.path_C_)), np.log(1e4) / 9)
    # variables enter in the order of the path; the first is the one most correlated with the labels
    assert model.entry_order_[0] == np.argmax(np.abs(Xs.T @ ((y == 1) - (y == 1).mean())))


def test_intercept_only_model_gives_constant_scores():
    # no variable varies: nothing can enter
    X = np.ones((30, 3))
    y = np.where(np.arange(30) < 10, 1, -1)
    model = ChReg(random_state=0).fit(X, y)
    assert not model.support_.any() and np.all(np.isinf(model.path_C_))
    scores = model.decision_function(np.random.default_rng(0).normal(size=(5, 3)))
    np.testing.assert_allclose(scores, np.log(10 / 20))
    # pure noise: BIC prefers the intercept alone
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = np.where(rng.random(80) < 0.5, 1, -1)
    model = ChReg(random_state=0).fit(X, y)
    assert model.best_index_ == 0 and not model.support_.any() and model.selected_params_ == {"n_selected": 0}
    scores = model.decision_function(X)
    assert np.all(scores == scores[0])
    p = (y == 1).mean()
    assert scores[0] == pytest.approx(np.log(p / (1 - p)))


def test_separable_data_fit_without_warnings():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 4))
    y = np.where(X[:, 1] > 0.2, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = ChReg(random_state=0).fit(X, y)
        scores = model.decision_function(X)
    np.testing.assert_array_equal(np.flatnonzero(model.support_), [1])
    assert np.all(np.isfinite(model.coef_)) and roc_auc_score(y, scores) == 1.0
    assert len(model.path_C_) < 50  # the path stopped once the classes were separated
    assert model.diagnostics_["not_converged"] == 0


def test_deterministic_for_a_fixed_random_state():
    X, y = sparse_logistic(200, seed=6)
    X_test, _ = sparse_logistic(50, seed=7)
    first = ChReg(n_alphas=15, random_state=3).fit(X, y)
    second = ChReg(n_alphas=15, random_state=3).fit(X, y)
    assert np.array_equal(first.decision_function(X_test), second.decision_function(X_test))
    assert np.array_equal(first.path_coef_, second.path_coef_)


def test_any_two_labels_the_greater_positive():
    X, y = sparse_logistic(150, seed=8)
    base = ChReg(n_alphas=10, random_state=0).fit(X, y)
    other = ChReg(n_alphas=10, random_state=0).fit(X, np.where(y == 1, 5, 0))
    np.testing.assert_array_equal(other.classes_, [0, 5])
    np.testing.assert_array_equal(base.decision_function(X), other.decision_function(X))


@pytest.mark.parametrize("bic_on", ["refit", "penalized"])
def test_ranker_contract(bic_on):
    check_ranker(ChReg(n_alphas=10, bic_on=bic_on, random_state=0))


def test_input_errors():
    X, y = sparse_logistic(40, seed=9)
    with pytest.raises(NotFittedError):
        ChReg().decision_function(X)
    with pytest.raises(ValueError, match="only one class"):
        ChReg().fit(X, np.ones(40))
    with pytest.raises(ValueError, match="2 classes"):
        ChReg().fit(X, np.arange(40) % 3)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ChReg().fit(X_nan, y)
    model = ChReg(n_alphas=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="n_alphas"):
        ChReg(n_alphas=1).fit(X, y)
    with pytest.raises(ValueError, match="bic_on"):
        ChReg(bic_on="aic").fit(X, y)
