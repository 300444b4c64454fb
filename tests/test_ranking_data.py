"""depecker2010's simulated problems (forestlab.datasets._ranking_toys): seeded generators, their laws as printed in
the thesis, the optimal scores and ROC*/AUC* (exact, closed form or quadrature) checked against Monte Carlo, and the
dataset configs that name them."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy.stats import norm

from forestlab.config import load_group_option, to_container
from forestlab.datasets import load_dataset
from forestlab.datasets._ranking_toys import (
    GAUSS2D,
    OPTIMAL,
    eta,
    level_sets,
    log_likelihood_ratio,
    optimal_roc,
    optimal_roc_for,
)
from forestlab.datasets._synthetic import GENERATORS, sample_synthetic
from forestlab.errors import DatasetError
from forestlab.metrics import auc

# (generator, parameters): every problem of the thesis and the other reading of each ambiguous one.
PROBLEMS = [
    ("unif2d", {}),
    ("gauss_croix2d", {}),
    ("gauss_lin2d", {}),
    ("gauss_lin2d", {"truncate": False}),
    ("gauss_quad2d", {}),
    ("gauss_quad2d", {"truncate": False}),
    ("gauss_shift", {"n_features": 20, "delta": 1.0, "log10_sigma2": 0.1}),
    ("gauss_shift", {"n_features": 20, "delta": 0.4, "log10_sigma2": 0.04, "shift": "axis"}),
    ("gauss_shift", {"n_features": 10, "delta": 0.2}),
]
PROBLEM_IDS = [f"{g}-{'-'.join(f'{k}={v}' for k, v in p.items())}" for g, p in PROBLEMS]

# The dataset configs of the thesis's simulated problems.
CONFIGS = ["unif2d", "gauss_croix2d", "gauss_lin2d", "gauss_quad2d", "gauss_easy20d", "gauss_med20d",
           "gauss_hard20d"] + [f"gauss_shift_q{q}_d{d}" for q in (10, 30) for d in ("020", "010", "008", "005")]


def draw(name: str, params: dict, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    params = dict(params)
    d = params.pop("n_features", 2 if name != "gauss_shift" else 20)
    return GENERATORS[name](n, d, seed, **params)


def llr_params(params: dict) -> dict:
    return {k: v for k, v in params.items() if k != "n_features"}


# ---------------------------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------------------------
def test_every_problem_is_registered():
    assert set(OPTIMAL) == {"unif2d", "gauss_croix2d", "gauss_lin2d", "gauss_quad2d", "gauss_shift"}
    for name, problem in OPTIMAL.items():
        assert GENERATORS[name] is problem.generator


@pytest.mark.parametrize(("name", "params"), PROBLEMS, ids=PROBLEM_IDS)
def test_generators_are_seeded_and_balanced(name, params):
    X, y = draw(name, params, 20000, 3)
    d = params.get("n_features", 2)
    assert X.shape == (20000, d) and X.dtype == np.float64 and y.dtype == np.int64
    assert set(np.unique(y)) == {-1, 1}
    assert abs((y == 1).mean() - 0.5) < 4 * math.sqrt(0.25 / 20000)  # each point positive with probability 1/2
    X2, y2 = draw(name, params, 20000, 3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, draw(name, params, 20000, 4)[0])
    assert draw(name, params, 0, 3)[0].shape == (0, d)


def test_supports():
    for name, params in [("unif2d", {}), ("gauss_lin2d", {}), ("gauss_quad2d", {})]:
        X, _ = draw(name, params, 5000, 0)
        assert X.min() >= 0 and X.max() <= 1, name
    X, _ = draw("gauss_lin2d", {"truncate": False}, 5000, 0)
    assert np.mean(np.all((X >= 0) & (X <= 1), axis=1)) < 0.1  # untruncated: about 5% inside [0,1]^2


def test_unif2d_follows_the_printed_weights():
    X, y = draw("unif2d", {}, 40000, 1)
    cell = np.where(X[:, 1] >= 0.5, np.where(X[:, 0] >= 0.5, 2, 3), np.where(X[:, 0] >= 0.5, 1, 0))
    for cls, weights in ((1, [0.4, 0.3, 0.2, 0.1]), (-1, [0.2, 0.1, 0.3, 0.4])):
        share = np.bincount(cell[y == cls], minlength=4) / np.sum(y == cls)
        np.testing.assert_allclose(share, weights, atol=0.015)
    # eta = 2/3, 3/4, 2/5, 1/5 on X1..X4 (the thesis prints 0.7 on X1)
    np.testing.assert_allclose(eta("unif2d", [[0.2, 0.2], [0.7, 0.2], [0.7, 0.7], [0.2, 0.7]]),
                               [2 / 3, 3 / 4, 2 / 5, 1 / 5])


@pytest.mark.parametrize("name", ["gauss_croix2d", "gauss_lin2d", "gauss_quad2d"])
def test_untruncated_gaussians_have_the_printed_moments(name):
    X, y = draw(name, {} if name == "gauss_croix2d" else {"truncate": False}, 40000, 2)
    for cls in (True, False):
        mean, cov = GAUSS2D[name].law(cls)
        sample = X[y == (1 if cls else -1)]
        scale = np.sqrt(np.diag(cov))
        np.testing.assert_allclose(sample.mean(axis=0), mean, atol=float(5 * scale.max() / math.sqrt(len(sample))))
        np.testing.assert_allclose(np.cov(sample.T), cov, atol=float(0.05 * scale.max() ** 2))


@pytest.mark.parametrize("shift", ["spread", "axis"])
def test_gauss_shift_means_and_variances(shift):
    q, delta, log10_sigma2 = 20, 1.0, 0.1
    X, y = draw("gauss_shift", {"n_features": q, "delta": delta, "log10_sigma2": log10_sigma2, "shift": shift},
                40000, 5)
    v = np.full(q, 1 / math.sqrt(q)) if shift == "spread" else np.eye(q)[0]
    tol = 5 * math.sqrt(10 ** log10_sigma2 / 20000)
    np.testing.assert_allclose(X[y == 1].mean(axis=0), delta / 2 * v, atol=tol)
    np.testing.assert_allclose(X[y == -1].mean(axis=0), -delta / 2 * v, atol=tol)
    assert np.linalg.norm(X[y == 1].mean(axis=0) - X[y == -1].mean(axis=0)) == pytest.approx(delta, abs=0.06)
    np.testing.assert_allclose(X[y == 1].var(axis=0), 1.0, rtol=0.06)
    np.testing.assert_allclose(X[y == -1].var(axis=0), 10 ** log10_sigma2, rtol=0.06)  # sigma^2 on the negatives


def test_bad_parameters_are_clear_errors():
    with pytest.raises(DatasetError, match="unif2d generator is 2-dimensional: set source.n_features to 2"):
        GENERATORS["unif2d"](10, 3, 0)
    with pytest.raises(DatasetError, match=r"`source.shift` must be one of spread, axis, got 'diagonal'"):
        GENERATORS["gauss_shift"](10, 5, 0, shift="diagonal")
    with pytest.raises(DatasetError, match="`source.truncate` must be true or false"):
        GENERATORS["gauss_lin2d"](10, 2, 0, truncate="yes")
    with pytest.raises(DatasetError, match="`source.delta` must be"):
        GENERATORS["gauss_shift"](10, 5, 0, delta=-1.0)
    cfg = to_container(load_group_option("dataset", "gauss_easy20d"))
    cfg["source"]["sigma"] = 2.0
    with pytest.raises(DatasetError, match="`source.sigma` is not a parameter of the gauss_shift generator"):
        sample_synthetic(cfg, 10, 0)


# ---------------------------------------------------------------------------------------------------------------
# Optimal scores and the printed logits
# ---------------------------------------------------------------------------------------------------------------
def quadratic_coefficients(name: str, **params) -> dict[str, float]:
    """The coefficients of the log-likelihood ratio, a quadratic in (x1, x2), read off the implementation by an exact
    least-squares fit on a few points."""
    pts = np.array([[0.1, 0.2], [0.9, 0.3], [0.4, 0.8], [0.7, 0.6], [0.2, 0.5], [0.6, 0.1], [0.3, 0.3], [0.8, 0.9]])
    x1, x2 = pts.T
    design = np.c_[x1**2, x2**2, x1 * x2, x1, x2, np.ones(len(pts))]
    coef, residual, *_ = np.linalg.lstsq(design, log_likelihood_ratio(name, pts, **params), rcond=None)
    assert np.allclose(design @ coef, log_likelihood_ratio(name, pts, **params))
    return dict(zip(["x1^2", "x2^2", "x1x2", "x1", "x2", "1"], coef, strict=True))


# logit eta = log-likelihood ratio (p = 1/2): the thesis's printed coefficients, and the values the printed means and
# covariances give (digest E1/E2), reproduced here to 2 decimals. The printed inputs are themselves rounded (means
# and GaussCroix2d/GaussLin2d covariances to 2 decimals, GaussQuad2d covariances to 3), which moves the coefficients
# by up to 0.05 (0.4 for constants): the printed coefficients are checked within that.
LOGITS = {
    "gauss_croix2d": ({"x1^2": 0.35, "x2^2": -1.4, "x1x2": -0.1, "x1": 5.74, "x2": -10.01, "1": 7.71},
                      {"x1^2": 0.343, "x2^2": -1.395, "x1x2": -0.091, "x1": 5.751, "x2": -10.026, "1": 7.454}),
    "gauss_lin2d": ({"x1^2": 0.02, "x2^2": 0.05, "x1x2": -0.11, "x1": -3.08, "x2": 0.53, "1": 1.32},
                    {"x1^2": 0.020, "x2^2": 0.052, "x1x2": -0.108, "x1": -3.079, "x2": 0.530, "1": 1.267}),
    "gauss_quad2d": ({"x1^2": 1.43, "x2^2": 0.92, "x1x2": -1.51, "x1": -3.70, "x2": -0.40, "1": 1.77},
                     {"x1^2": 1.470, "x2^2": 0.915, "x1x2": -1.507, "x1": -3.733, "x2": -0.408, "1": 1.817}),
}


@pytest.mark.parametrize("name", list(LOGITS))
def test_the_printed_logits_are_reproduced(name):
    printed, digest = LOGITS[name]
    params = {} if name == "gauss_croix2d" else {"truncate": False}
    coef = quadratic_coefficients(name, **params)
    for key in printed:
        assert coef[key] == pytest.approx(digest[key], abs=0.005), key
        assert coef[key] == pytest.approx(printed[key], abs=0.4 if key == "1" else 0.05), key
    if name != "gauss_croix2d":  # truncation to [0,1]^2 only moves the constant (the laws' masses there)
        truncated = quadratic_coefficients(name)
        for key in printed:
            assert truncated[key] == pytest.approx(coef[key], abs=1e-9 if key != "1" else 0.05), key


def test_eta_and_level_sets():
    X, _ = draw("gauss_croix2d", {}, 40000, 7)
    e = eta("gauss_croix2d", X)
    assert np.all((e >= 0) & (e <= 1))
    levels = level_sets("gauss_croix2d", X)
    np.testing.assert_allclose(np.bincount(levels, minlength=8) / len(X), 1 / 8, atol=0.01)  # equal masses
    for k in range(7):  # level 0 is the top: eta decreases from one level to the next
        assert e[levels == k].min() >= e[levels == k + 1].max() - 1e-12
    U, _ = draw("unif2d", {}, 4000, 7)
    assert len(np.unique(level_sets("unif2d", U))) == 4  # piecewise-constant eta: only its 4 cells remain
    assert level_sets("gauss_lin2d", [[1.5, 0.5], [0.5, 0.5]]).tolist()[0] == -1  # outside the support
    assert np.isnan(log_likelihood_ratio("gauss_lin2d", [[1.5, 0.5]]))[0]
    assert not np.isnan(log_likelihood_ratio("gauss_lin2d", [[1.5, 0.5]], truncate=False))[0]
    for name, bounds in (("unif2d", ((0, 1), (0, 1))), ("gauss_lin2d", ((0, 1), (0, 1)))):
        assert OPTIMAL[name].bounds() == bounds
    (lo1, hi1), (lo2, hi2) = OPTIMAL["gauss_croix2d"].bounds()
    assert lo1 < -1.79 - 9 < 0 < hi1 and lo2 < -0.6 < 0.77 < hi2


# ---------------------------------------------------------------------------------------------------------------
# ROC* and AUC*
# ---------------------------------------------------------------------------------------------------------------
def test_unif2d_roc_is_exact():
    fpr, tpr, auc_star, stderr = optimal_roc("unif2d")
    np.testing.assert_allclose(np.c_[fpr, tpr], [[0, 0], [0.1, 0.3], [0.3, 0.7], [0.6, 0.9], [1, 1]])
    assert auc_star == pytest.approx(0.735, abs=1e-12) and stderr == 0.0


def test_closed_form_auc_star_of_the_gaussian_shifts():
    # E5: digest §6 item 19 (its Monte Carlo, +-0.002); the thesis prints 0.806 / 0.742 / 0.632
    problems = [(1.0, 0.1), (0.8, 0.08), (0.4, 0.04)]
    for (delta, log10_sigma2), expected in zip(problems, [0.797, 0.749, 0.635], strict=True):
        for shift in ("spread", "axis"):  # AUC* does not depend on the direction of the shift
            res = optimal_roc("gauss_shift", {"n_features": 20, "delta": delta, "log10_sigma2": log10_sigma2,
                                              "shift": shift})
            assert res.auc == pytest.approx(expected, abs=0.002) and res.stderr < 1e-8
    # E9: Phi(delta / sqrt 2) for q = 10 and 30 (digest E9: 0.557, 0.528, 0.523, 0.514 by Monte Carlo)
    for q in (10, 30):
        for delta, expected in zip([0.2, 0.1, 0.08, 0.05], [0.557, 0.528, 0.523, 0.514], strict=True):
            res = optimal_roc("gauss_shift", {"n_features": q, "delta": delta})
            assert res.auc == pytest.approx(norm.cdf(delta / math.sqrt(2)), abs=1e-12) and res.stderr == 0.0
            assert res.auc == pytest.approx(expected, abs=0.001)
            # ROC*: beta = Phi(Phi^-1(alpha) + delta)
            inner = (res.fpr > 0) & (res.fpr < 1)
            np.testing.assert_allclose(res.tpr[inner], norm.cdf(norm.ppf(res.fpr[inner]) + delta), atol=1e-12)


def test_quadrature_auc_star_of_the_2d_gaussians():
    # digest E1/E2 Monte Carlo: GaussCroix2d 0.993; GaussQuad2d 0.683 truncated / 0.708 not; GaussLin2d 0.74 / 0.98
    for (name, params), expected, tol in [
        (("gauss_croix2d", {}), 0.993, 0.001),
        (("gauss_quad2d", {}), 0.683, 0.001), (("gauss_quad2d", {"truncate": False}), 0.708, 0.001),
        (("gauss_lin2d", {}), 0.74, 0.005), (("gauss_lin2d", {"truncate": False}), 0.98, 0.005),
    ]:
        res = optimal_roc(name, params)
        assert res.auc == pytest.approx(expected, abs=tol) and res.stderr < 1e-6, (name, params)


@pytest.mark.parametrize(("name", "params"), PROBLEMS, ids=PROBLEM_IDS)
def test_optimal_roc_is_a_curve_with_area_auc_star(name, params):
    fpr, tpr, auc_star, _ = optimal_roc(name, params)
    assert fpr[0] == 0 and tpr[0] == 0 and fpr[-1] == pytest.approx(1) and tpr[-1] == pytest.approx(1)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert np.trapezoid(tpr, fpr) == pytest.approx(auc_star, abs=5e-4)  # the curve's points are thinned
    assert not fpr.flags.writeable  # cached and shared


@pytest.mark.parametrize(("name", "params"), PROBLEMS, ids=PROBLEM_IDS)
def test_the_optimal_score_reaches_auc_star_on_a_big_sample(name, params):
    """The generator and the AUC* computation agree: the empirical AUC of the log-likelihood ratio on a fresh
    sample is AUC* up to its sampling error (DeLong standard error, method="mc") and the stated precision."""
    res = optimal_roc(name, params)
    mc = optimal_roc(name, params, method="mc", n_mc=100_000, seed=11)
    assert 0 < mc.stderr < 0.002
    assert abs(mc.auc - res.auc) < 4 * mc.stderr + res.stderr
    X, y = draw(name, params, 20000, 12)  # the same as metrics.auc on the generator's own sample
    se = 4 * math.sqrt(0.25 / 20000)
    assert auc(y, log_likelihood_ratio(name, X, **llr_params(params))) == pytest.approx(res.auc, abs=2 * se)


def test_monte_carlo_agrees_with_the_closed_form_when_the_negatives_vary_less():
    params = {"n_features": 5, "delta": 1.0, "log10_sigma2": -0.3}  # sigma^2 < 1: the optimal score is +||x - m||^2
    res = optimal_roc("gauss_shift", params)
    mc = optimal_roc("gauss_shift", params, method="mc", n_mc=100_000, seed=1)
    assert abs(mc.auc - res.auc) < 4 * mc.stderr
    with pytest.raises(ValueError, match="method 'quadrature' is not available for gauss_shift"):
        optimal_roc("gauss_shift", params, method="quadrature")
    with pytest.raises(DatasetError, match="no optimal score for generator 'ringnorm'"):
        optimal_roc("ringnorm")


# ---------------------------------------------------------------------------------------------------------------
# The dataset configs
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", CONFIGS)
def test_configs_load_and_state_their_auc_star(key, tmp_path):
    cfg = to_container(load_group_option("dataset", key))
    assert cfg["studies"] == ["depecker2010"] and cfg["source"]["kind"] == "synthetic"
    assert cfg["shape"][0] == 2000 and cfg["source"]["n_samples"] == 2000
    ds = load_dataset(cfg, data_dir=tmp_path)
    assert (ds.n_samples, ds.n_features) == tuple(cfg["shape"])
    stated = re.search(r"AUC\* (0\.\d+)", cfg["description"]).group(1)
    assert round(optimal_roc_for(cfg).auc, len(stated) - 2) == pytest.approx(float(stated))


def test_config_readings():
    def source(key):
        return to_container(load_group_option("dataset", key))["source"]

    assert source("gauss_lin2d")["truncate"] is True and source("gauss_quad2d")["truncate"] is True
    for key, (delta, log10_sigma2) in {"gauss_easy20d": (1.0, 0.1), "gauss_med20d": (0.8, 0.08),
                                       "gauss_hard20d": (0.4, 0.04)}.items():
        src = source(key)
        assert (src["n_features"], src["delta"], src["log10_sigma2"], src["shift"]) == (20, delta, log10_sigma2,
                                                                                        "spread")
    for q in (10, 30):
        for tag, delta in (("020", 0.2), ("010", 0.1), ("008", 0.08), ("005", 0.05)):
            src = source(f"gauss_shift_q{q}_d{tag}")
            assert (src["n_features"], src["delta"], src["log10_sigma2"]) == (q, delta, 0.0)
    with pytest.raises(DatasetError, match="has no known optimal ROC curve"):
        optimal_roc_for(to_container(load_group_option("dataset", "ringnorm")))
