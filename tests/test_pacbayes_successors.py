"""The PAC-Bayes successors of SORF and MinCq (fo, tnd, cctnd, ccpbb, cbound_joint) and the out-of-bag certificates
every weighting stores: statistics against a double loop, each bound against a hand computation, each optimum
against a generic solver, and the learners in the registry, the runner and scikit-learn's conventions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize
from sklearn.datasets import make_classification

from forestlab.learners import REGISTRY, PACBayesForestClassifier, get_learner, run_report
from forestlab.learners._bounds import kl_bernoulli, kl_inverse_lower, seeger_xi
from forestlab.learners._cache import FitCache
from forestlab.learners._pacbayes import OOB_CERTIFICATE_KEYS
from forestlab.learners._pacbayes_successors import (
    CCPBB_MU_GRID,
    SUCCESSOR_WEIGHTINGS,
    OOBStatistics,
    _cb,
    _joint_max,
    _kl_tri,
    _mu_tandem_matrices,
    cbound_joint_bound,
    cbound_seeger_bound,
    ccpbb_bound,
    cctnd_bound,
    certificates,
    fo_bound,
    learn_weights,
    objective,
    oob_statistics,
    tnd_bound,
)

DELTA = 0.05


def _indicators(m: int, N: int, n_classes: int, seed: int, error_rates=None, oob_rate: float = 0.37):
    """Random trees' predictions, labels and out-of-bag masks: tree h errs on a point with probability
    error_rates[h] (a wrong class drawn at random), each point out of a tree's bag with probability oob_rate."""
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=N)
    rates = rng.uniform(0.05, 0.3, size=m) if error_rates is None else np.asarray(error_rates)
    wrong = rng.random((m, N)) < rates[:, None]
    shift = rng.integers(1, n_classes, size=(m, N))
    pred = np.where(wrong, (y[None, :] + shift) % n_classes, y[None, :])
    oob = rng.random((m, N)) < oob_rate
    return pred, y, oob


@pytest.fixture(scope="module")
def stats() -> OOBStatistics:
    """15 trees with error rates 5-30% on 3000 points: every bound is non-vacuous for some rho."""
    pred, y, oob = _indicators(15, 3000, 2, seed=1, error_rates=np.linspace(0.05, 0.3, 15))
    return oob_statistics(pred, y, oob)


# ---------------------------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 4])
def test_oob_statistics_match_a_double_loop(n_classes):
    pred, y, oob = _indicators(7, 60, n_classes, seed=n_classes)
    st = oob_statistics(pred, y, oob)
    err = pred != y[None, :]
    for h in range(7):
        assert st.n_oob[h] == oob[h].sum()
        assert st.loss[h] == pytest.approx(err[h][oob[h]].mean())
        for g in range(7):
            both = oob[h] & oob[g]
            assert st.n_joint[h, g] == both.sum()
            assert st.tandem[h, g] == pytest.approx((err[h] & err[g])[both].mean())
            assert st.joint_loss[h, g] == pytest.approx(err[h][both].mean())
            assert st.one_error[h, g] == pytest.approx((err[h] != err[g])[both].mean())
    assert st.n == oob.sum(axis=1).min() and st.n2 == st.n_joint.min()
    rho = np.random.default_rng(0).dirichlet(np.ones(7))
    assert st.tandem_risk(rho) == pytest.approx(sum(rho[h] * rho[g] * st.tandem[h, g]
                                                    for h in range(7) for g in range(7)))


def test_self_complemented_statistics_are_those_of_the_negated_trees():
    pred, y, oob = _indicators(5, 80, 2, seed=3)
    both = oob_statistics(np.concatenate([pred, 1 - pred]), y, np.concatenate([oob, oob]))
    sc = oob_statistics(pred, y, oob).self_complemented()
    for name in ("loss", "n_oob", "tandem", "joint_loss", "n_joint"):
        np.testing.assert_allclose(getattr(sc, name), getattr(both, name), atol=1e-12, err_msg=name)


def test_a_tree_without_out_of_bag_points_makes_every_bound_vacuous():
    pred, y, oob = _indicators(4, 40, 2, seed=0)
    oob[2] = False
    st = oob_statistics(pred, y, oob)
    rho = np.full(4, 0.25)
    cert = certificates(st, rho)
    assert st.n == 0 and all(cert[k] == 1.0 for k in ("fo", "tnd", "cctnd", "ccpbb", "cbound", "cbound_joint"))
    for w in SUCCESSOR_WEIGHTINGS:
        weights, info = learn_weights(w, st)
        assert info["degenerate"] == 1.0 and np.array_equal(weights, rho)


# ---------------------------------------------------------------------------------------------------------------
# Each bound against a hand computation
# ---------------------------------------------------------------------------------------------------------------
def _hand_stats() -> OOBStatistics:
    """Two trees: out-of-bag losses 0.1 and 0.2 on 400 and 500 points; 150 points out of bag for both, where they
    err on 12% and 22% of them and together on 6%."""
    return OOBStatistics(loss=np.array([0.1, 0.2]), n_oob=np.array([400, 500]),
                         tandem=np.array([[0.1, 0.06], [0.06, 0.2]]),
                         joint_loss=np.array([[0.1, 0.12], [0.22, 0.2]]),
                         n_joint=np.array([[400, 150], [150, 500]]))


def _kl_inv(q: float, eps: float, upper: bool = True) -> float:
    """kl^-1 by scipy's root finder, independent of the bisection under test."""
    f = lambda p: kl_bernoulli(q, p) - eps  # noqa: E731
    if upper:
        return 1.0 if f(1 - 1e-15) <= 0 else brentq(f, q, 1 - 1e-15, xtol=1e-15)
    return 0.0 if f(1e-300) <= 0 else brentq(f, 1e-300, q, xtol=1e-15)


def test_fo_and_tnd_bounds_by_hand():
    st = _hand_stats()
    # KL = 0; L(rho) = 0.15, n = 400; L(rho^2) = (0.1 + 0.2 + 2 * 0.06) / 4 = 0.105, n2 = 150
    rho = np.array([0.5, 0.5])
    assert fo_bound(st, rho) == pytest.approx(2 * _kl_inv(0.15, math.log(2 * 20 / DELTA) / 400), abs=1e-10)
    assert tnd_bound(st, rho) == pytest.approx(
        4 * _kl_inv(0.105, math.log(2 * math.sqrt(150) / DELTA) / 150), abs=1e-10)
    rho = np.array([0.8, 0.2])  # KL = 0.8 ln 1.6 + 0.2 ln 0.4
    kl = 0.8 * math.log(1.6) + 0.2 * math.log(0.4)
    gibbs, tandem = 0.8 * 0.1 + 0.2 * 0.2, 0.64 * 0.1 + 0.04 * 0.2 + 2 * 0.16 * 0.06
    assert fo_bound(st, rho) == pytest.approx(2 * _kl_inv(gibbs, (kl + math.log(40 / DELTA)) / 400), abs=1e-10)
    assert tnd_bound(st, rho) == pytest.approx(
        4 * _kl_inv(tandem, (2 * kl + math.log(2 * math.sqrt(150) / DELTA)) / 150), abs=1e-10)


def test_kl_inverse_lower_by_hand():
    assert kl_inverse_lower(0.3, 0.05) == pytest.approx(_kl_inv(0.3, 0.05, upper=False), abs=1e-10)
    assert kl_inverse_lower(0.3, 10.0) == 0.0 and kl_inverse_lower(0.3, 0.0) == 0.3


def test_cctnd_bound_by_hand():
    st = _hand_stats()
    rho = np.array([0.5, 0.5])
    U = _kl_inv(0.105, math.log(4 * math.sqrt(150) / DELTA) / 150)
    eps = math.log(4 * 20 / DELTA) / 400
    lo, hi = _kl_inv(0.15, eps, upper=False), _kl_inv(0.15, eps)
    mus = np.linspace(-3, 0.49, 349001)
    f = np.where(mus >= 0, (U - 2 * mus * lo + mus ** 2), (U - 2 * mus * hi + mus ** 2)) / (0.5 - mus) ** 2
    bound, mu = cctnd_bound(st, rho)
    assert bound == pytest.approx(f.min(), abs=1e-8)
    assert mu == pytest.approx(mus[np.argmin(f)], abs=2e-5)
    assert bound < tnd_bound(st, rho)  # mu = 0 is the tandem bound with a larger confidence term; mu* does better


def test_cbound_seeger_by_hand():
    st = _hand_stats()
    rho = np.array([0.5, 0.5])
    # disagreement (exactly one errs) per pair: 0.12 + 0.22 - 2 * 0.06 = 0.22; rho^2-mean = 0.22 / 2 = 0.11
    assert st.disagreement(rho) == pytest.approx(0.11)
    g = _kl_inv(0.15, math.log(2 * seeger_xi(400) / DELTA) / 400)
    d = _kl_inv(0.11, math.log(2 * seeger_xi(150) / DELTA) / 150, upper=False)
    assert cbound_seeger_bound(st, rho) == pytest.approx(1 - (1 - 2 * g) ** 2 / (1 - 2 * d), abs=1e-9)


def test_the_c_bound_on_one_error_disagreement_is_cantelli_in_any_number_of_classes():
    # (e - L^2) / (e - L + 1/4), the Cantelli bound on the rho-mass of the wrong voters, with d = 2 (L - e)
    for L, e in [(0.2, 0.1), (0.3, 0.2), (0.1, 0.02)]:
        d = 2 * (L - e)
        assert float(_cb(e, d)) == pytest.approx((e - L * L) / (e - L + 0.25), rel=1e-12)


def test_ccpbb_matrices_against_a_sample():
    pred, y, oob = _indicators(4, 200, 3, seed=5)
    st = oob_statistics(pred, y, oob)
    err = (pred != y[None, :]).astype(float)
    for mu in (-0.3, 0.0, 0.2):
        first, var = _mu_tandem_matrices(st, mu)
        for h in range(4):
            for g in range(4):
                both = oob[h] & oob[g]
                loss = (err[h][both] - mu) * (err[g][both] - mu)
                assert first[h, g] == pytest.approx(loss.mean(), abs=1e-12)
                assert var[h, g] == pytest.approx(loss.var(ddof=1), abs=1e-12)


def _ccpbb_by_hand(st: OOBStatistics, rho: np.ndarray, mu: float, delta: float) -> float:
    """Wu et al. 2021 Theorems 13-15 at one mu, lambda and gamma over their grids, written out from the paper's
    formulas (delta/2 each for the variance and the mu-tandem loss)."""
    n = st.n2
    d1 = d2 = delta / 2
    kl = float(np.sum(rho * np.log(rho * len(rho))))
    first, var = _mu_tandem_matrices(st, mu)
    loss, v = rho @ first @ rho, rho @ var @ rho
    K = max(1 - mu, 1 - 2 * mu)
    root = math.sqrt((n - 1) / math.log(1 / d1) + 1)
    k_lam = math.ceil(math.log((root + 1) / 2) / math.log(1.05))
    best_v = min(v / (1 - t) + K ** 2 * (2 * kl + math.log(k_lam / d1)) / (2 * (n - 1) * t * (1 - t))
                 for t in [1.05 ** i / (root + 1) for i in range(k_lam)] if t < 1)
    a = min(best_v, K ** 2 / 4)
    from scipy.special import lambertw
    c_min = (4 * (1 - mu) ** 4 / (n * K ** 2) * math.log(1 / d2) - 1) / math.e
    g_min = (1 + lambertw(c_min).real) / (1 - mu) ** 2
    alpha = 1 / (1 + (1 - mu) ** 4 / (2 * K ** 2 * math.log(1 / d1) / (n - 1)))
    g_max = -(lambertw(-alpha * math.exp(-alpha), k=-1).real + alpha) / (1 - mu) ** 2
    k_gam = math.ceil(math.log(g_max / g_min) / math.log(1.05))
    pbb = min(loss + (math.exp(g * (1 - mu) ** 2) - g * (1 - mu) ** 2 - 1) / (g * (1 - mu) ** 4) * a
              + (2 * kl + math.log(k_gam * k_lam / d2)) / (g * n)
              for g in [g_min * 1.05 ** i for i in range(k_gam)])
    return pbb / (0.5 - mu) ** 2


def test_ccpbb_bound_by_hand(stats):
    rho = np.random.default_rng(0).dirichlet(np.ones(15) * 5)
    by_hand = [_ccpbb_by_hand(stats, rho, float(mu), DELTA / len(CCPBB_MU_GRID)) for mu in CCPBB_MU_GRID]
    bound, mu = ccpbb_bound(stats, rho)
    assert bound == pytest.approx(min(by_hand), rel=1e-10)
    assert mu == CCPBB_MU_GRID[int(np.argmin(by_hand))]
    assert bound < 1


@pytest.mark.parametrize(("e", "d", "eps"), [(0.07, 0.21, 0.05), (0.02, 0.05, 0.02), (0.0, 0.0, 0.01),
                                             (0.1, 0.1, 0.001)])
def test_joint_c_bound_is_the_maximum_over_the_kl_ball(e, d, eps):
    value, e_star, d_star, _, _ = _joint_max(e, d, eps)
    E, D = np.meshgrid(np.linspace(0, 1, 2001), np.linspace(0, 0.5, 2001))
    feasible = (_kl_tri((e, d), E, D) <= eps) & ((E + D / 2) ** 2 <= E)
    grid_max = float(_cb(E[feasible], D[feasible]).max())
    assert grid_max - 1e-9 <= value <= grid_max + 2e-3  # the grid's best point is feasible: it can only be below
    assert float(_kl_tri((e, d), np.array(e_star), np.array(d_star))) <= eps + 1e-9
    assert value == pytest.approx(float(_cb(e_star, d_star)), abs=1e-12)


def test_joint_c_bound_of_a_vote_by_hand():
    st = _hand_stats()
    rho = np.array([0.5, 0.5])
    eps = math.log((2 * math.sqrt(150) + 150) / DELTA) / 150
    assert cbound_joint_bound(st, rho) == pytest.approx(_joint_max(0.105, 0.11, eps)[0], abs=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# The learners' optima
# ---------------------------------------------------------------------------------------------------------------
def _fixed_objective(weighting: str, st: OOBStatistics, info: dict):
    mu = info.get("mu") if weighting == "ccpbb" else None
    return objective(weighting, st, DELTA, mu=mu)


@pytest.mark.parametrize("weighting", SUCCESSOR_WEIGHTINGS)
def test_gradient_of_each_objective_matches_finite_differences(weighting, stats):
    rng = np.random.default_rng(1)
    rho = rng.dirichlet(np.ones(15) * 3)
    fun = objective(weighting, stats, DELTA, mu=-0.1 if weighting == "ccpbb" else None)
    value, grad, _ = fun(rho)
    assert value < 1.5
    for _ in range(3):  # directional derivatives along directions of the simplex
        v = rng.normal(size=15)
        v -= v.mean()
        h = 1e-6
        fd = (fun(rho + h * v)[0] - fun(rho - h * v)[0]) / (2 * h)
        assert grad @ v == pytest.approx(fd, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("weighting", SUCCESSOR_WEIGHTINGS)
def test_each_optimum_is_stationary_and_matches_a_generic_solver(weighting, stats):
    rho, info = learn_weights(weighting, stats)
    fun = _fixed_objective(weighting, stats, info)
    value = fun(rho)[0]
    assert value == pytest.approx(info["objective"], abs=1e-12)
    # a generic solver on the simplex, from another start, with finite-difference gradients
    m = stats.m
    res = minimize(lambda r: fun(np.clip(r, 1e-300, None) / np.clip(r, 1e-300, None).sum())[0],
                   np.random.default_rng(2).dirichlet(np.ones(m)), method="SLSQP", jac="3-point",
                   bounds=[(1e-10, 1)] * m, constraints=[{"type": "eq", "fun": lambda r: r.sum() - 1}],
                   options={"ftol": 1e-15, "maxiter": 2000})
    generic = fun(res.x / res.x.sum())[0]
    assert value <= generic + 1e-6 and generic <= value + 1e-6


@pytest.mark.parametrize("weighting", SUCCESSOR_WEIGHTINGS)
def test_each_learner_does_no_worse_than_the_uniform_vote(weighting, stats):
    uniform = np.full(stats.m, 1.0 / stats.m)
    rho, info = learn_weights(weighting, stats)
    if weighting == "ccpbb":  # its objective is a min over mu of the bound at mu: compare at the best mu of each
        at_uniform = min(objective("ccpbb", stats, DELTA, mu=float(mu))(uniform)[0] for mu in CCPBB_MU_GRID)
    else:
        at_uniform = objective(weighting, stats, DELTA)(uniform)[0]
    assert info["objective"] <= at_uniform + 1e-12
    # and the certificate it is named after (the kl-inverse form, reported in the tables)
    own = {"fo": "fo", "tnd": "tnd", "cctnd": "cctnd", "ccpbb": "ccpbb", "cbound_joint": "cbound_joint"}[weighting]
    assert certificates(stats, rho)[own] <= certificates(stats, uniform)[own] + 1e-12


def test_fo_weights_are_a_gibbs_distribution_of_the_oob_losses(stats):
    rho, _ = learn_weights("fo", stats)
    logs = np.log(rho)
    slope = np.polyfit(stats.loss, logs, 1)[0]  # rho(h) ~ exp(-lambda n L_h): log-linear in the losses
    np.testing.assert_allclose(logs - logs.mean(), slope * (stats.loss - stats.loss.mean()), atol=1e-9)
    assert slope < 0


# ---------------------------------------------------------------------------------------------------------------
# The classifiers
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=500, n_features=8, n_informative=5, flip_y=0.02, class_sep=1.5,
                               random_state=0)
    return X, 2 * y - 1


def test_the_five_weightings_are_registered_classifiers():
    for name in SUCCESSOR_WEIGHTINGS:
        entry = REGISTRY[name]
        assert entry.task == "classifier" and entry.cls.weighting == name


def test_every_weighting_weighs_the_same_trees_and_stores_its_certificates(binary_data):
    X, y = binary_data
    cache = FitCache()
    params = {"n_estimators": 30, "random_state": 0}
    rf = PACBayesForestClassifier(weighting="uniform", **params).fit(X, y, fit_cache=cache)
    fitted = {name: get_learner(name)(**params).fit(X, y, fit_cache=cache) for name in SUCCESSOR_WEIGHTINGS}
    assert cache.misses == 1 and cache.hits == len(SUCCESSOR_WEIGHTINGS)
    for est in fitted.values():
        assert all(a is b for a, b in zip(est.estimators_, rf.estimators_, strict=True))
        assert est.weights_.sum() == pytest.approx(1.0) and (est.weights_ > 0).all()
        assert set(OOB_CERTIFICATE_KEYS.values()) <= set(est.diagnostics_)
        values = run_report(est, X, y)["values"]
        assert all(0.0 <= values[key] <= 1.0 for key in OOB_CERTIFICATE_KEYS.values() if "bound" in key)
        assert values["objective"] == est.objective_["objective"]
        assert est.oob_error_ <= 0.5 and est.predict(X).shape == y.shape
    # the uniform vote's certificates are those of uniform rho on the same statistics
    st = oob_statistics(rf._train_pred_idx, rf._train_y_idx, rf.oob_mask_)
    want = certificates(st, np.full(30, 1 / 30))
    assert rf.diagnostics_["oob_bound_tnd"] == want["tnd"] and rf.diagnostics_["oob_bound_fo"] == want["fo"]


def test_mincq_certificates_are_those_of_its_self_complemented_distribution(binary_data):
    X, y = binary_data
    est = PACBayesForestClassifier(weighting="mincq", n_estimators=20, random_state=0).fit(X, y)
    n = 20
    rho = np.concatenate([(1 / n + est.weights_) / 2, (1 / n - est.weights_) / 2])
    st = oob_statistics(est._train_pred_idx, est._train_y_idx, est.oob_mask_).self_complemented()
    assert est.diagnostics_["oob_gibbs_risk"] == pytest.approx(st.gibbs(rho / rho.sum()), abs=1e-12)
    assert est.diagnostics_["oob_bound_cbound"] == pytest.approx(cbound_seeger_bound(st, rho / rho.sum()))


@pytest.mark.parametrize("name", SUCCESSOR_WEIGHTINGS)
def test_multiclass(name):
    X, y = make_classification(n_samples=300, n_features=8, n_informative=5, n_classes=3, random_state=1)
    est = get_learner(name)(n_estimators=15, random_state=0).fit(X, y)
    assert est.classes_.tolist() == [0, 1, 2] and est.predict_proba(X).shape == (300, 3)
    assert est.weights_.sum() == pytest.approx(1.0)
    again = get_learner(name)(n_estimators=15, random_state=0, n_jobs=2).fit(X, y)
    assert np.array_equal(est.weights_, again.weights_) and est.diagnostics_ == again.diagnostics_


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="regime"):
        get_learner("tnd")(regime="bogus").fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(TypeError):
        get_learner("tnd")(weighting="fo")  # the weighting is the learner's name, not a parameter


def test_the_runner_grows_one_forest_for_rf_and_the_successors_and_stores_every_certificate(workdir):
    """rf, tnd and cbound_joint on the first WDBC split of the quickstart experiment: one job, one forest, rf's
    golden numbers unchanged, every run's certificates stored as metrics."""
    from forestlab.config import load_experiment
    from forestlab.runner import execute_group, group_specs, plan

    exp = load_experiment(["experiment=quickstart", "seeds=1", "limits.max_datasets=1",
                           "experiment.algorithms=[rf,tnd,cbound_joint]"])
    specs = plan(exp)
    assert len(group_specs(specs)) == 1
    cache = FitCache()
    records = {s.algorithm: r for s, r in
               zip(specs, execute_group([s.payload for s in specs], cache=cache), strict=True)}
    assert {a: r["status"] for a, r in records.items()} == {"rf": "done", "tnd": "done", "cbound_joint": "done"}
    assert cache.misses == 1
    assert records["rf"]["metrics"]["test_risk"] == 0.07719298245614035  # tests/test_golden.py
    for record in records.values():
        m = record["metrics"]
        assert all(0.0 <= m[k] <= 1.0 for k in ("oob_bound_fo", "oob_bound_tnd", "oob_bound_cctnd",
                                                "oob_bound_ccpbb", "oob_bound_cbound", "oob_bound_cbound_joint"))
    rf, tnd, joint = (records[a]["metrics"] for a in ("rf", "tnd", "cbound_joint"))
    assert tnd["oob_bound_tnd"] <= rf["oob_bound_tnd"] and joint["oob_bound_cbound_joint"] <= rf[
        "oob_bound_cbound_joint"]


@pytest.mark.parametrize("name", ["tnd", "cbound_joint"])
def test_rho_learnt_on_a_held_out_half(name, binary_data):
    """Viallard et al.'s protocol: the forest grows on a stratified half, rho and the bounds use the other half,
    which every tree predicts out of bag (n = n2 = its size)."""
    X, y = binary_data
    est = get_learner(name)(n_estimators=20, random_state=0, rho_sample="half").fit(X, y)
    assert est.diagnostics_["oob_n"] == est.diagnostics_["oob_n2"] == 250
    held = est.oob_mask_.all(axis=0)
    # the forest saw the other 250 points (none of which is out of all 20 bags, for this seed)
    assert held.sum() == 250 and len(est.forests_[0].oob_mask_[0]) == 250
    st = oob_statistics(est._train_pred_idx[:, held], est._train_y_idx[held], np.ones((20, 250), bool))
    assert est.diagnostics_[f"oob_bound_{name}"] == pytest.approx(certificates(st, est.weights_)[name])
    assert np.mean(est.predict(X) != y) < 0.2
    again = get_learner(name)(n_estimators=20, random_state=0, rho_sample="half").fit(X, y)
    assert np.array_equal(est.weights_, again.weights_)
    rf = PACBayesForestClassifier(weighting="uniform", n_estimators=20, random_state=0).fit(X, y)
    assert not np.array_equal(rf.estimators_[0].tree_.threshold, est.estimators_[0].tree_.threshold)


def test_a_half_split_needs_two_points_per_class():
    X = np.arange(20, dtype=float).reshape(10, 2)
    y = np.array([0] * 9 + [1])
    with pytest.raises(ValueError, match="at least 2 points"):
        get_learner("tnd")(n_estimators=3, rho_sample="half").fit(X, y)


def _mu_tandem_numpy(stats, mu):
    """The mu-tandem matrices as numpy expressions (what the compiled kernel must equal bit for bit)."""
    T = stats.tandem
    S = stats.joint_loss + stats.joint_loss.T
    first = T - mu * S + mu * mu
    second = (1.0 - 2.0 * mu) ** 2 * T + mu * mu * (1.0 - 2.0 * mu) * S + mu ** 4
    nj = stats.n_joint.astype(np.float64)
    var = np.where(nj > 1, nj / np.maximum(nj - 1.0, 1.0) * np.maximum(second - first * first, 0.0), 0.0)
    return first, var


def test_mu_tandem_matrices_are_the_numpy_expressions_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(40):
        m, n = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        errs, oob = rng.random((m, n)) < rng.random(), rng.random((m, n)) < 0.4
        nj = (oob[:, None, :] & oob[None, :, :]).sum(-1)
        both = np.maximum(nj, 1)
        T = np.where(nj > 0, ((errs & oob)[:, None, :] & (errs & oob)[None, :, :]).sum(-1) / both, 0.0)
        A = np.where(nj > 0, ((errs & oob)[:, None, :] & oob[None, :, :]).sum(-1) / both, 0.0)
        stats = OOBStatistics(np.zeros(m), nj.diagonal().copy(), T, A, nj)
        for mu in [0.0, -0.25, *rng.uniform(-0.5, 0.5, 3)]:
            got, want = _mu_tandem_matrices(stats, mu), _mu_tandem_numpy(stats, mu)
            for g, w in zip(got, want, strict=True):
                assert np.array_equal(g, w) and np.array_equal(np.signbit(g), np.signbit(w))
