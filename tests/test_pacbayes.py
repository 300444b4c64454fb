"""PAC-Bayes reweighted forests: the SORF and MinCq QPs (optimality, forms, an independent solver, warm starts,
failures), the estimator (uniform == Breiman, selection, regimes, caching, determinism) and the diagnostics."""

from __future__ import annotations

import math

import numpy as np
import osqp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.datasets import make_classification

from forestlab.errors import ForestlabError
from forestlab.learners import REGISTRY, BreimanForestClassifier, PACBayesForestClassifier, _qp, get_learner
from forestlab.learners._bounds import (
    c_bound,
    c_bound_from_margins,
    disagreement,
    effective_number,
    gibbs_risk,
    kl_bernoulli,
    kl_inverse_upper,
    kl_to_uniform,
    seeger_xi,
    vote_margins,
)
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.learners._pacbayes import OOB_CERTIFICATE_KEYS, mixed_seeds, select_grid_point
from forestlab.learners._qp import (
    expand_group_weights,
    group_voters,
    mincq_matrices,
    mincq_max_margin,
    solve_mincq_path,
    solve_sorf_path,
    sorf_matrices,
    sorf_objective,
)

KKT_TOL = 1e-6


# ----------------------------------------------------------------------------------- reference forms of the QPs
def sorf_least_squares(Q, pred_idx, y_idx, n_classes: int, c: float) -> float:
    """SORF's loss computed directly from the one-hot codes (the thesis's definition), to check the matrix form.

    Returns (1/m) sum_k ||phi(y_k) - c sum_i Q_i phi(h_i(x_k))||^2.
    """
    pred_idx = np.asarray(pred_idx)
    n, m = pred_idx.shape
    phi_q = np.zeros((m, n_classes))
    for p in range(n_classes):
        phi_q[:, p] = np.asarray(Q, dtype=np.float64) @ (pred_idx == p)
    phi_y = np.eye(n_classes)[np.asarray(y_idx)]
    return float(np.sum((phi_y - c * phi_q) ** 2) / m)


def mincq_program1(M, margins, mu: float) -> dict:
    """Program 1 of MinCq in its original q form (the solver uses the scaled form), to check the solver against.

    Returns
    -------
    dict
        ``P`` (= 2M, so the objective is q^T P q / 2 + lin^T q = q^T M q - a^T q), ``lin`` (= -a = -M 1 / n),
        ``A_eq`` (m^T, shape (1, n)), ``b_eq`` (mu/2 + mean(m)/2), ``lower`` (0), ``upper`` (1/n), and
        ``objective`` (a function of q).
    """
    M = np.asarray(M, dtype=np.float64)
    n = M.shape[0]
    a = M.sum(axis=1) / n
    b = 0.5 * (mu + float(np.mean(margins)))

    def objective(q: np.ndarray) -> float:
        return float(q @ M @ q - a @ q)

    return {"P": 2.0 * M, "lin": -a, "A_eq": np.asarray(margins, dtype=np.float64)[None, :], "b_eq": b,
            "lower": np.zeros(n), "upper": np.full(n, 1.0 / n), "objective": objective}


# ---------------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=240, n_features=12, n_informative=5, flip_y=0.1, random_state=0)
    y = 2 * y - 1
    return X[:160], y[:160], X[160:], y[160:]


@pytest.fixture(scope="module")
def fitted(binary_data):
    """One fit per weighting on the binary data (20 trees, full depth)."""
    X, y, _, _ = binary_data
    return {w: PACBayesForestClassifier(weighting=w, n_estimators=20, random_state=0).fit(X, y)
            for w in ("uniform", "sorf", "mincq")}


def random_votes(seed: int, n: int = 12, m: int = 60, n_classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Predictions of n voters of accuracy 0.55-0.9 on m samples (class indices), and the labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=m)
    acc = rng.uniform(0.55, 0.9, size=n)
    right = rng.random((n, m)) < acc[:, None]
    wrong = (y[None, :] + rng.integers(1, max(n_classes, 2), size=(n, m))) % n_classes
    return np.where(right, y[None, :], wrong), y


def thesis_L(pred: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The thesis's L and L' summed over the samples, written case by case (eq. 6.9 / 6.11)."""
    n, m = pred.shape
    L = np.zeros((n, n))
    Lp = np.zeros((n, n))
    for k in range(m):
        for i in range(n):
            for j in range(n):
                hi, hj, yk = pred[i, k], pred[j, k], y[k]
                if hi == hj == yk:
                    L[i, j] += (1 - c) ** 2
                    Lp[i, j] += c - 1
                elif hi == hj:
                    L[i, j] += c * c + 1
                    Lp[i, j] += c + 1
                elif hi == yk or hj == yk:
                    L[i, j] += 1 - c
                else:
                    L[i, j] += 1
                    Lp[i, j] += 1
    return L, Lp


def sorf_kkt_violation(Q: np.ndarray, S: np.ndarray, a: np.ndarray, m: int, c: float) -> float:
    """Largest violation of the simplex KKT conditions of min Q'(S/m)Q - (2/c)(a/m)'Q: the gradient equals the
    simplex multiplier lambda on the support and is >= lambda off it."""
    g = 2.0 * (S / m) @ Q - (2.0 / c) * a / m
    support = Q > 1e-9
    lam = float(np.mean(g[support]))
    return max(float(np.max(np.abs(g[support] - lam))), float(max(0.0, -np.min(g[~support] - lam, initial=0.0))))


# ---------------------------------------------------------------------------------------------------- SORF forms
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.sampled_from([2, 3, 5]), c=st.floats(0.5, 2.5))
def test_sorf_least_squares_form_equals_quadratic_form(seed, n_classes, c):
    pred, y = random_votes(seed, n=5, m=15, n_classes=n_classes)
    rng = np.random.default_rng(seed + 1)
    Q = rng.dirichlet(np.ones(pred.shape[0]))
    S, a = sorf_matrices(pred, y, n_classes)
    m = pred.shape[1]
    direct = sorf_least_squares(Q, pred, y, n_classes, c)
    assert sorf_objective(Q, S, a, m, c) == pytest.approx(direct, rel=1e-12, abs=1e-12)
    L, Lp = thesis_L(pred, y, c)
    assert Q @ L @ Q / m == pytest.approx(direct, rel=1e-10, abs=1e-12)  # eq. 6.7: sum_ij Q_i Q_j L_ij
    assert Q @ Lp @ Q == pytest.approx((Q @ L @ Q - m * (1 - c)) / c, rel=1e-9, abs=1e-9)  # L' = (L - (1-c))/c


@pytest.mark.parametrize("n_classes", [2, 4])
def test_sorf_agreement_matrix_is_the_one_hot_gram(n_classes):
    pred, y = random_votes(3, n=7, m=40, n_classes=n_classes)
    S, a = sorf_matrices(pred, y, n_classes)
    onehot = (pred[:, :, None] == np.arange(n_classes)).reshape(pred.shape[0], -1).astype(float)
    np.testing.assert_array_equal(S, onehot @ onehot.T)
    np.testing.assert_array_equal(a, (pred == y).sum(axis=1))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sorf_solutions_satisfy_kkt(n_classes):
    pred, y = random_votes(7, n=15, m=80, n_classes=n_classes)
    S, a = sorf_matrices(pred, y, n_classes)
    for res in solve_sorf_path(S, a, pred.shape[1], np.linspace(1, 2, 6)):
        assert res.solved and res.status == "solved"
        Q = res.weights
        assert Q.min() >= 0 and Q.sum() == pytest.approx(1.0, abs=1e-12)
        assert sorf_kkt_violation(Q, S, a, pred.shape[1], res.value) < KKT_TOL
        assert res.objective == pytest.approx(sorf_least_squares(Q, pred, y, n_classes, res.value), rel=1e-10)


# ---------------------------------------------------------------------------------------------------- MinCq
def mincq_problem(seed: int, n: int = 10, m: int = 60):
    pred, y = random_votes(seed, n=n, m=m)
    return mincq_matrices(2 * pred - 1, 2 * y - 1)


@pytest.mark.parametrize("frac", [0.05, 0.5, 0.95])
def test_mincq_solutions_satisfy_program1_kkt_and_margin(frac):
    M, marg = mincq_problem(11)
    n = len(marg)
    mu = frac * mincq_max_margin(marg)  # large fractions make box constraints active
    (res,) = solve_mincq_path(M, marg, [mu])
    assert res.solved
    w = res.weights
    q = (w + 1.0 / n) / 2.0
    prog = mincq_program1(M, marg, mu)
    assert np.all(q >= -1e-12) and np.all(q <= 1.0 / n + 1e-12)
    assert float(prog["A_eq"][0] @ q) == pytest.approx(prog["b_eq"], rel=1e-7)  # sum m_i q_i = mu/2 + mean(m)/2
    assert float(marg @ w) == pytest.approx(mu, rel=1e-6)  # the margin equality M_Q^S = mu
    g = prog["P"] @ q + prog["lin"]  # gradient of q'Mq - a'q, of order mu: compare after dividing by mu
    lower, upper = q < 1e-9, q > 1.0 / n - 1e-9
    free = ~(lower | upper)
    assert free.any()
    alpha = float(np.linalg.lstsq(marg[free, None], g[free], rcond=None)[0][0])
    r = (g - alpha * marg) / mu
    assert np.max(np.abs(r[free])) < KKT_TOL
    assert np.all(r[lower] > -KKT_TOL) and np.all(r[upper] < KKT_TOL)
    if frac > 0.9:
        assert (lower | upper).any()


def test_mincq_inactive_box_gives_the_closed_form():
    M, marg = mincq_problem(5, n=8, m=80)
    (res,) = solve_mincq_path(M, marg, [1e-3])
    v = res.weights / 1e-3
    expected = np.linalg.pinv(M) @ marg
    expected /= marg @ expected
    np.testing.assert_allclose(v, expected, rtol=1e-5, atol=1e-8)


def test_program1_objective_is_the_scaled_objective():
    M, marg = mincq_problem(2)
    n = len(marg)
    w = np.random.default_rng(0).uniform(-1.0 / n, 1.0 / n, n)
    q = (w + 1.0 / n) / 2.0
    prog = mincq_program1(M, marg, 0.1)
    assert prog["objective"](q) == pytest.approx(w @ M @ w / 4 - M.sum() / (4 * n * n), rel=1e-12)


# ------------------------------------------------------------------------------------------ independent solver
@pytest.mark.parametrize("c", [1.0, 1.6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sorf_matches_slsqp(seed, c):
    pred, y = random_votes(seed, n=8, m=50, n_classes=3)
    S, a = sorf_matrices(pred, y, 3)
    m, n = pred.shape[1], pred.shape[0]
    (res,) = solve_sorf_path(S, a, m, [c])
    ref = minimize(lambda Q: sorf_objective(Q, S, a, m, c), np.full(n, 1.0 / n),
                   jac=lambda Q: (-2 * c * a + 2 * c * c * S @ Q) / m, method="SLSQP", bounds=[(0, 1)] * n,
                   constraints=[{"type": "eq", "fun": lambda Q: Q.sum() - 1, "jac": lambda Q: np.ones(n)}],
                   options={"ftol": 1e-14, "maxiter": 1000})
    assert ref.success
    assert res.objective == pytest.approx(ref.fun, rel=1e-5)
    assert res.objective <= ref.fun + 1e-9


@pytest.mark.parametrize("frac", [0.2, 0.8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mincq_matches_slsqp_on_program1(seed, frac):
    M, marg = mincq_problem(seed, n=8, m=50)
    n = len(marg)
    mu = frac * mincq_max_margin(marg)
    (res,) = solve_mincq_path(M, marg, [mu])
    prog = mincq_program1(M, marg, mu)
    ref = minimize(prog["objective"], np.full(n, 0.5 / n), jac=lambda q: prog["P"] @ q + prog["lin"],
                   method="SLSQP", bounds=list(zip(prog["lower"], prog["upper"], strict=True)),
                   constraints=[{"type": "eq", "fun": lambda q: prog["A_eq"][0] @ q - prog["b_eq"],
                                 "jac": lambda q: prog["A_eq"][0]}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    assert ref.success
    w_ref = 2 * ref.x - 1.0 / n
    assert res.objective == pytest.approx(w_ref @ M @ w_ref, rel=1e-5)  # the mu-dependent part: w'Mw


# ------------------------------------------------------------------------------- degenerate MinCq: minimum norm
def dependent_votes(seed: int, m: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Signs of 6 voters on m samples whose patterns are linearly dependent without being duplicates
    (h_3 = h_0 + h_1 - h_2, h_5 = h_0 - h_1 + h_4), so M is singular with a 2-dimensional null space; labels y."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1, 1], size=m)
    h = np.empty((6, m), dtype=np.int64)
    h[0] = np.where(rng.random(m) < 0.85, y, -y)
    h[1] = np.where(rng.random(m) < 0.75, y, -y)
    h[2] = np.where(h[0] == h[1], h[0], np.where(rng.random(m) < 0.5, y, -y))  # never h_0 = h_1 = -h_2
    h[3] = h[0] + h[1] - h[2]
    h[4] = np.where(h[0] == -h[1], -h[0], np.where(rng.random(m) < 0.7, y, -y))  # never h_0 = -h_1 = h_4
    h[5] = h[0] - h[1] + h[4]
    assert set(np.unique(h)) == {-1, 1} and len({row.tobytes() for row in h}) == 6
    return h, y


def min_norm_optimum(H: np.ndarray, v_opt: np.ndarray, k: np.ndarray | None = None) -> np.ndarray:
    """Brute force: the least sum_i v_i^2 / k_i among the v with the same vote on S as the optimum v_opt
    (H^T v = H^T v_opt; the set of optima of min v^T M v, M = H H^T / m, when no box binds), by least squares."""
    k = np.ones(H.shape[0]) if k is None else np.asarray(k, dtype=np.float64)
    u, *_ = np.linalg.lstsq((H * np.sqrt(k)[:, None]).T.astype(np.float64), H.T @ v_opt, rcond=None)
    return u * np.sqrt(k)


def test_mincq_duplicate_voters_get_the_minimum_norm_optimum():
    pred, y = random_votes(3, n=5, m=60)
    H = (2 * pred - 1)[[0, 1, 1, 2, 3, 3, 3, 4]]  # duplicates, not grouped: M is singular
    M, marg = mincq_matrices(H, 2 * y - 1)
    mu = 0.01
    res = solve_mincq_path(M, marg, [mu])[0]
    assert res.solved and res.ridge > 0 and res.extra["null_dim"] == 3 and res.extra["min_norm"] == 1.0
    v = res.weights / mu
    expected = np.linalg.pinv(M) @ marg  # the pseudo-inverse solution: the minimum-norm optimum (no box)
    np.testing.assert_allclose(v, expected / (marg @ expected), rtol=1e-9, atol=1e-12)
    assert v[1] == pytest.approx(v[2], rel=1e-12) and v[4] == pytest.approx(v[6], rel=1e-12)  # equal split
    # the same weights as grouping the duplicates and splitting each group's weight equally
    reps, inverse, counts, flips = group_voters(H, fold_sign=True)
    Mg, mg = mincq_matrices(H[reps] * flips[reps, None], 2 * y - 1)
    grouped = solve_mincq_path(Mg, mg, [mu], multiplicity=counts, n_voters=len(H))[0]
    np.testing.assert_allclose(expand_group_weights(grouped.weights, inverse, counts, flips), res.weights,
                               rtol=1e-6, atol=1e-12)


def test_mincq_all_perfect_voters_share_the_weight_equally():
    y = np.random.default_rng(0).choice([-1, 1], size=50)
    H = np.tile(y, (7, 1))  # every voter is perfect on S: every w with sum w = mu is optimal
    M, marg = mincq_matrices(H, y)
    for mu in (1e-4, 0.05, 1.0):  # mu = 1: the largest margin, every |w_i| = 1/n exactly
        (res,) = solve_mincq_path(M, marg, [mu])
        assert res.solved and res.extra["null_dim"] == 6
        np.testing.assert_allclose(res.weights, np.full(7, mu / 7), rtol=1e-12)
        assert res.objective == pytest.approx(mu * mu, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mincq_dependent_voters_get_the_minimum_norm_optimum(seed):
    H, y = dependent_votes(seed)
    M, marg = mincq_matrices(H, y)
    assert np.linalg.matrix_rank(M) == 4
    grid = [1e-4, 1e-3, 1e-2]
    path = solve_mincq_path(M, marg, grid)
    for res in path:
        assert res.solved and res.extra["null_dim"] == 2 and res.iterations == 0  # closed form: the box is slack
        v = res.weights / res.value
        np.testing.assert_allclose(v, min_norm_optimum(H, v), rtol=1e-9, atol=1e-12)
        assert v @ M @ v == pytest.approx(1.0 / (marg @ np.linalg.pinv(M) @ marg), rel=1e-9)  # optimal
        np.testing.assert_allclose(v, path[0].weights / path[0].value, rtol=1e-14)  # one solution for the grid
    # deterministic: repeated, cold, or in another grid order, the weights are the same bits
    again = solve_mincq_path(M, marg, grid[::-1], warm_start=False)[::-1]
    for a, b in zip(path, again, strict=True):
        np.testing.assert_array_equal(a.weights, b.weights)
    # with group sizes, the norm is sum_g v_g^2 / k_g
    k = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 1.0])
    res = solve_mincq_path(M, marg, [1e-3], multiplicity=k, n_voters=int(k.sum()))[0]
    v = res.weights / 1e-3
    np.testing.assert_allclose(v, min_norm_optimum(H, v, k), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_mincq_degenerate_with_an_active_box_is_the_minimum_norm_optimum(seed):
    H, y = dependent_votes(seed)
    M, marg = mincq_matrices(H, y)
    n = len(marg)
    mu = 0.9 * mincq_max_margin(marg)
    bound = 1.0 / (n * mu)
    results = [solve_mincq_path(M, marg, [mu])[0] for _ in range(2)]
    res = results[0]
    assert res.solved and res.iterations > 0 and res.extra["min_norm"] == 1.0  # OSQP, then the face QP
    np.testing.assert_array_equal(res.weights, results[1].weights)  # repeated solves: the same point
    v = res.weights / mu
    assert np.max(np.abs(v)) == pytest.approx(bound, rel=1e-6)  # the box binds
    # brute force, independent of OSQP: SLSQP on Program 1 for the optimal value and vote, then the least-norm point
    # with that vote within the box
    prog = mincq_program1(M, marg, mu)
    ref = minimize(prog["objective"], np.full(n, 0.5 / n), jac=lambda q: prog["P"] @ q + prog["lin"],
                   method="SLSQP", bounds=list(zip(prog["lower"], prog["upper"], strict=True)),
                   constraints=[{"type": "eq", "fun": lambda q: prog["A_eq"][0] @ q - prog["b_eq"],
                                 "jac": lambda q: prog["A_eq"][0]}], options={"ftol": 1e-15, "maxiter": 1000})
    assert ref.success
    v_ref = (2 * ref.x - 1.0 / n) / mu
    assert v @ M @ v == pytest.approx(v_ref @ M @ v_ref, rel=1e-6)  # an optimum
    lam, vecs = np.linalg.eigh(M)
    U = vecs[:, lam > 1e-9]  # the vote H^T v is fixed by U^T v
    least = minimize(lambda x: x @ x, v_ref, jac=lambda x: 2 * x, method="SLSQP", bounds=[(-bound, bound)] * n,
                     constraints=[{"type": "eq", "fun": lambda x: U.T @ (x - v_ref), "jac": lambda x: U.T}],
                     options={"ftol": 1e-15, "maxiter": 1000})
    assert least.success
    np.testing.assert_allclose(v, least.x, atol=1e-5 * bound)
    assert v @ v <= least.x @ least.x + 1e-6 * bound * bound


def test_mincq_degenerate_forest_is_deterministic_and_minimum_norm():
    """Trees that are perfect or repeated on S (as on Mushroom) leave dependent vote patterns: the fit is the
    minimum-norm optimum, the out-of-bag curve is flat and the first mu is selected, the same on every fit."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(120, 4))
        y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
        clf = PACBayesForestClassifier(weighting="mincq", n_estimators=30, random_state=seed).fit(X, y)
        if clf.solver_[0].get("null_dim"):
            break
    else:
        pytest.fail("no degenerate MinCq problem among the seeds tried")
    again = PACBayesForestClassifier(weighting="mincq", n_estimators=30, random_state=seed).fit(X, y)
    np.testing.assert_array_equal(clf.weights_, again.weights_)
    assert all(r["min_norm"] == 1.0 for r in clf.solver_)
    slack = [i for i, r in enumerate(clf.solver_) if r["iterations"] == 0]  # the closed form: box slack
    assert slack and slack[0] == 0
    assert np.all(clf.selection_curve_[slack] == clf.selection_curve_[0])  # one vote for all those mu
    signs = (2 * clf._train_pred_idx.astype(np.int64) - 1)
    v = clf.weights_ / clf.selected_params_["mu"]
    np.testing.assert_allclose(v, min_norm_optimum(signs, v), rtol=1e-8, atol=1e-12)


# ------------------------------------------------------------------------------------------ warm start, groups
def test_warm_start_gives_the_cold_solutions():
    pred, y = random_votes(9, n=15, m=90, n_classes=3)
    S, a = sorf_matrices(pred, y, 3)
    grid = np.linspace(1, 2, 8)
    warm = solve_sorf_path(S, a, pred.shape[1], grid, warm_start=True)
    cold = solve_sorf_path(S, a, pred.shape[1], grid, warm_start=False)
    for w_, c_ in zip(warm, cold, strict=True):
        np.testing.assert_allclose(w_.weights, c_.weights, atol=1e-6)
        assert w_.objective == pytest.approx(c_.objective, rel=1e-9)
    M, marg = mincq_problem(4, n=15, m=90)
    grid = np.linspace(0.01, 0.9 * mincq_max_margin(marg), 8)
    warm = solve_mincq_path(M, marg, grid, warm_start=True)
    cold = solve_mincq_path(M, marg, grid, warm_start=False)
    for w_, c_ in zip(warm, cold, strict=True):
        np.testing.assert_allclose(w_.weights / w_.value, c_.weights / c_.value, atol=1e-6)
        assert w_.objective == pytest.approx(c_.objective, rel=1e-7)
    assert sum(r.iterations for r in warm) < sum(r.iterations for r in cold)


def test_grouping_identical_voters_changes_nothing_but_the_size():
    pred, y = random_votes(12, n=6, m=70)
    pred = pred[[0, 1, 2, 1, 3, 4, 1, 5, 0]]  # duplicates of voters 0 and 1
    n, m = pred.shape
    reps, inverse, counts, _ = group_voters(pred)
    assert len(reps) == 6 and sorted(counts.tolist()) == [1, 1, 1, 1, 2, 3]
    S, a = sorf_matrices(pred, y, 2)
    Sg, ag = sorf_matrices(pred[reps], y, 2)
    full = solve_sorf_path(S, a, m, [1.3])[0]
    grouped = solve_sorf_path(Sg, ag, m, [1.3], multiplicity=counts)[0]
    Q = expand_group_weights(grouped.weights, inverse, counts)
    assert full.ridge > 0 and grouped.ridge == 0  # duplicates make S singular; the groups do not
    assert sorf_objective(Q, S, a, m, 1.3) == pytest.approx(full.objective, rel=1e-7)
    assert Q[1] == Q[3] == Q[6] and Q[0] == Q[8]
    signs = 2 * pred - 1
    signs[4] = -signs[2]  # a complement of voter 2: merged with it by MinCq's sign folding
    reps, inverse, counts, flips = group_voters(signs, fold_sign=True)
    assert len(reps) == 5 and inverse[4] == inverse[2] and flips[4] * flips[2] == -1
    M, marg = mincq_matrices(signs, 2 * y - 1)
    Mg, mg = mincq_matrices(signs[reps] * flips[reps, None], 2 * y - 1)
    mu = 0.5 * mincq_max_margin(marg)
    full = solve_mincq_path(M, marg, [mu])[0]
    grouped = solve_mincq_path(Mg, mg, [mu], multiplicity=counts, n_voters=n)[0]
    w = expand_group_weights(grouped.weights, inverse, counts, flips)
    assert np.all(np.abs(w) <= 1.0 / n + 1e-12)
    assert float(marg @ w) == pytest.approx(mu, rel=1e-6)
    assert float(w @ M @ w) == pytest.approx(full.objective, rel=1e-6)


def test_failed_solves_are_reported_without_weights():
    pred, y = random_votes(1, n=10, m=50)
    S, a = sorf_matrices(pred, y, 2)
    results = solve_sorf_path(S, a, 50, [1.0, 1.5], settings={"max_iter": 1})
    assert all(not r.solved and r.weights is None for r in results)
    assert {r.status for r in results} == {"maximum iterations reached"}
    M, marg = mincq_matrices(2 * pred - 1, 2 * y - 1)
    top = mincq_max_margin(marg)
    ok, too_big = solve_mincq_path(M, marg, [0.5 * top, 1.5 * top])
    assert ok.solved and not too_big.solved and too_big.weights is None
    assert too_big.status == "mu not realisable" and too_big.extra["max_margin"] == pytest.approx(top)


# ---------------------------------------------------------------------------------------------------- estimator
def _assert_curves_equal(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.parametrize("regime", ["full", "stumps"])
@pytest.mark.parametrize("task", ["binary", "multi"])
def test_uniform_equals_breiman_exactly(regime, task, binary_data, multi_data):
    X, y, Xt, yt = binary_data if task == "binary" else multi_data
    rf = BreimanForestClassifier(n_estimators=15, max_depth=None if regime == "full" else 1, random_state=3).fit(X, y)
    pb = PACBayesForestClassifier(weighting="uniform", regime=regime, n_estimators=15, random_state=3).fit(X, y)
    for method in ("predict", "predict_proba", "decision_function", "tree_predictions"):
        np.testing.assert_array_equal(getattr(pb, method)(Xt), getattr(rf, method)(Xt), err_msg=method)
    assert pb.oob_error_ == rf.oob_error_
    assert pb.max_tree_depth_ == rf.max_tree_depth_
    _assert_curves_equal(pb.error_curves(Xt, yt), rf.error_curves(Xt, yt))
    np.testing.assert_array_equal(pb.weights_, np.full(15, 1 / 15))
    assert pb.selected_params_ == {} and pb.solver_ == [] and pb.selection_curve_.size == 0


@pytest.mark.parametrize("weighting", ["sorf", "mincq"])
def test_n_jobs_does_not_change_the_result(weighting, binary_data):
    X, y, Xt, _ = binary_data
    a = PACBayesForestClassifier(weighting=weighting, regime="mixed", n_estimators=12, random_state=5, n_jobs=1)
    b = PACBayesForestClassifier(weighting=weighting, regime="mixed", n_estimators=12, random_state=5, n_jobs=2)
    a.fit(X, y)
    b.fit(X, y)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.decision_function(Xt), b.decision_function(Xt))
    assert a.selected_params_ == b.selected_params_


@pytest.mark.parametrize("weighting", ["sorf", "mincq"])
def test_same_seed_same_fit(weighting, binary_data, fitted):
    X, y, Xt, _ = binary_data
    again = PACBayesForestClassifier(weighting=weighting, n_estimators=20, random_state=0).fit(X, y)
    first = fitted[weighting]
    np.testing.assert_array_equal(again.weights_, first.weights_)
    np.testing.assert_array_equal(again.selection_curve_, first.selection_curve_)
    np.testing.assert_array_equal(again.predict(Xt), first.predict(Xt))
    assert again.solver_ == first.solver_ and again.diagnostics_ == first.diagnostics_


def test_selected_value_minimises_the_oob_curve(fitted):
    for weighting, key in (("sorf", "c"), ("mincq", "mu")):
        est = fitted[weighting]
        curve = est.selection_curve_
        assert len(curve) == 20 and len(est.solver_) == 20
        assert est.selected_index_ == int(np.nanargmin(curve))
        assert est.selected_params_ == {key: float(est.grid_[est.selected_index_])}
        assert est.oob_error_ == curve[est.selected_index_]
        assert [r["oob_error"] for r in est.solver_] == pytest.approx(curve.tolist())


def test_selection_ties_go_to_the_first_grid_value(binary_data):
    assert select_grid_point([0.2, 0.1, 0.3, 0.1]) == 1
    assert select_grid_point([np.nan, 0.1, 0.1]) == 1
    assert select_grid_point([np.nan, np.nan]) is None
    X, y, _, _ = binary_data
    # MinCq's weights w = mu v* do not depend on mu while the box |v| <= 1/(n mu) is inactive: equal OOB errors.
    est = PACBayesForestClassifier(weighting="mincq", n_estimators=20, mu_grid=[0.003, 0.001, 0.002],
                                   random_state=0).fit(X, y)
    assert len(set(est.selection_curve_.tolist())) == 1
    assert est.selected_params_ == {"mu": 0.003} and est.selected_index_ == 0
    est = PACBayesForestClassifier(n_estimators=20, c_grid=[1.3, 1.3], random_state=0).fit(X, y)
    assert est.selection_curve_[0] == est.selection_curve_[1] and est.selected_index_ == 0


def test_a_failed_grid_point_is_reported_and_not_used(binary_data, monkeypatch):
    X, y, _, _ = binary_data
    original = osqp.OSQP.solve
    calls = {"n": 0}

    def solve_failing_second(self, raise_error=None):
        res = original(self, raise_error=raise_error)
        calls["n"] += 1
        if calls["n"] == 2:
            res.info.status = "maximum iterations reached"
            res.info.status_val = osqp.SolverStatus.OSQP_MAX_ITER_REACHED
        return res

    monkeypatch.setattr(osqp.OSQP, "solve", solve_failing_second)
    est = PACBayesForestClassifier(n_estimators=20, c_grid=[1.2, 1.0, 1.4], random_state=0).fit(X, y)
    assert [r["solved"] for r in est.solver_] == [True, False, True]
    assert est.solver_[1]["status"] == "maximum iterations reached" and math.isnan(est.solver_[1]["oob_error"])
    assert math.isnan(est.selection_curve_[1]) and est.selected_index_ in (0, 2)
    assert est.diagnostics_["grid_failures"] == 1.0


def test_every_grid_point_failing_raises_a_forestlab_error(binary_data, monkeypatch):
    X, y, _, _ = binary_data
    monkeypatch.setitem(_qp.OSQP_SETTINGS, "max_iter", 1)
    with pytest.raises(ForestlabError, match=r"every one of the 3 grid values \(3 x 'maximum iterations reached'\)"):
        PACBayesForestClassifier(n_estimators=10, c_grid=[1.0, 1.5, 2.0], random_state=0).fit(X, y)
    monkeypatch.undo()
    with pytest.raises(ForestlabError, match="largest realisable training margin") as info:
        PACBayesForestClassifier(weighting="mincq", n_estimators=10, mu_grid=[1.5, 2.0], random_state=0).fit(X, y)
    assert "\n" not in str(info.value)


def test_unrealisable_mu_is_skipped(binary_data):
    X, y, _, _ = binary_data
    est = PACBayesForestClassifier(weighting="mincq", n_estimators=10, mu_grid=[1.5, 0.01], random_state=0).fit(X, y)
    assert est.solver_[0]["status"] == "mu not realisable" and not est.solver_[0]["solved"]
    assert est.selected_params_ == {"mu": 0.01}


def test_mincq_is_binary_only(multi_data):
    X, y, _, _ = multi_data
    with pytest.raises(ValueError, match="MinCq is binary only"):
        PACBayesForestClassifier(weighting="mincq", n_estimators=5, random_state=0).fit(X, y)


def test_final_weights_solve_their_programs(fitted):
    sorf, mincq = fitted["sorf"], fitted["mincq"]
    assert sorf.weights_.min() >= 0 and sorf.weights_.sum() == pytest.approx(1.0, abs=1e-12)
    n = len(mincq.weights_)
    signs = 2 * mincq._train_pred_idx.astype(float) - 1
    ysign = 2 * mincq._train_y_idx - 1
    _, marg = mincq_matrices(signs, ysign)
    assert np.all(np.abs(mincq.weights_) <= 1.0 / n + 1e-12)
    assert float(marg @ mincq.weights_) == pytest.approx(mincq.selected_params_["mu"], rel=1e-6)
    S, a = sorf_matrices(sorf._train_pred_idx, sorf._train_y_idx, 2)
    m = len(sorf._train_y_idx)
    assert sorf_kkt_violation(sorf.weights_, S, a, m, sorf.selected_params_["c"]) < KKT_TOL


@pytest.mark.parametrize("weighting", ["sorf", "mincq"])
def test_vote_methods_agree(weighting, fitted, binary_data):
    _, _, Xt, yt = binary_data
    est = fitted[weighting]
    pred, dec, proba = est.predict(Xt), est.decision_function(Xt), est.predict_proba(Xt)
    np.testing.assert_array_equal(pred, est.classes_[(dec > 0).astype(int)])
    np.testing.assert_array_equal(pred, est.classes_[proba.argmax(axis=1)])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    labels = est.tree_predictions(Xt)
    margin = est.weights_ @ (labels == est.classes_[1]).astype(float) - est.weights_ @ (labels == est.classes_[0])
    np.testing.assert_allclose(dec, margin, atol=1e-12)  # sum_i w_i h_i(x)


@pytest.mark.parametrize("weighting", ["sorf", "mincq"])
def test_weighted_error_curves(weighting, fitted, binary_data):
    X, y, Xt, yt = binary_data
    est = fitted[weighting]
    curves = est.error_curves(Xt, yt)
    assert set(curves) == {"n_trees", "train_error", "oob_error", "oob_coverage", "test_error"}
    assert curves["train_error"][-1] == np.mean(est.predict(X) != y)
    assert curves["test_error"][-1] == np.mean(est.predict(Xt) != yt)
    cov = curves["oob_coverage"][-1]
    assert est.oob_error_ == pytest.approx(cov * curves["oob_error"][-1] + 1 - cov, abs=1e-12)


def test_zero_weight_oob_samples_count_as_errors():
    from forestlab.learners._pacbayes import oob_vote_errors

    pred = np.array([[1, 1, 0], [0, 1, 1]])
    mask = np.array([[True, False, True], [False, True, True]])
    y = np.array([1, 1, 1])
    # weights (0, 1): sample 0 only has tree 0 (weight 0) out of bag -> error; sample 1 right; sample 2 right.
    assert oob_vote_errors(pred, y, 2, mask, np.array([0.0, 1.0]))[0] == pytest.approx(1 / 3)
    # uniform weights: sample 2 is a tie (0 vs 1) -> class 0 -> error, as BreimanForestClassifier.
    assert oob_vote_errors(pred, y, 2, mask, np.array([1.0, 1.0]))[0] == pytest.approx(1 / 3)


def test_mixed_regime_interleaves_two_seeded_forests(binary_data):
    X, y, _, _ = binary_data
    est = PACBayesForestClassifier(weighting="uniform", regime="mixed", n_estimators=9, random_state=4).fit(X, y)
    full, stumps = est.forests_
    assert (len(full.estimators_), len(stumps.estimators_)) == (4, 5)
    assert (full.max_depth, stumps.max_depth) == (None, 1)
    assert (full.random_state, stumps.random_state) == mixed_seeds(4)
    assert len(set(mixed_seeds(4)) | {4}) == 3 and mixed_seeds(4) == mixed_seeds(4) != mixed_seeds(5)
    stump_positions = [1, 3, 5, 7, 8]
    assert np.all(est.tree_depths_[stump_positions] <= 1)
    assert np.all(np.delete(est.tree_depths_, stump_positions) > 1)
    assert est.max_tree_depth_ == full.max_tree_depth_
    with pytest.raises(ValueError, match="n_estimators"):
        PACBayesForestClassifier(regime="mixed", n_estimators=1).fit(X, y)


def test_shared_fit_cache_grows_the_forest_once(binary_data):
    X, y, _, _ = binary_data
    cache = FitCache()
    sorf = PACBayesForestClassifier(weighting="sorf", n_estimators=10, random_state=2).fit(X, y, fit_cache=cache)
    mincq = PACBayesForestClassifier(weighting="mincq", n_estimators=10, random_state=2).fit(X, y, fit_cache=cache)
    assert (cache.misses, cache.hits) == (1, 1)
    assert sorf.forests_[0] is mincq.forests_[0]
    rf = fit_with_cache(get_learner("rf")(n_estimators=10, random_state=2), X, y, cache)  # as the runner does
    assert rf is sorf.forests_[0] and (cache.misses, cache.hits) == (1, 2)
    alone = PACBayesForestClassifier(weighting="sorf", n_estimators=10, random_state=2).fit(X, y)
    np.testing.assert_array_equal(alone.weights_, sorf.weights_)


@pytest.mark.parametrize("bad", [{"weighting": "boost"}, {"regime": "deep"}, {"c_grid": []}, {"c_grid": [1.0, -1.0]},
                                 {"weighting": "mincq", "mu_grid": [0.0]}, {"n_estimators": 0}])
def test_invalid_parameters(bad, binary_data):
    X, y, _, _ = binary_data
    with pytest.raises(ValueError):
        PACBayesForestClassifier(**{"n_estimators": 5, **bad}).fit(X, y)


def test_registered():
    assert REGISTRY["pacbayes_forest"].cls is PACBayesForestClassifier
    assert get_learner("pacbayes_forest") is PACBayesForestClassifier
    assert PACBayesForestClassifier.version == 2  # 2: minimum-norm MinCq on degenerate programs


# ---------------------------------------------------------------------------------------------------- diagnostics
KEYS = {"gibbs_risk", "disagreement", "c_bound", "pac_bayes_bound", "gibbs_risk_bound", "kl_uniform",
        "effective_trees", "grid_failures"}
KEYS |= set(OOB_CERTIFICATE_KEYS.values())  # the out-of-bag certificates (tests/test_pacbayes_successors.py)


@pytest.mark.parametrize("weighting", ["uniform", "sorf", "mincq"])
def test_diagnostics_are_sane(weighting, fitted, binary_data):
    X, y, _, _ = binary_data
    est = fitted[weighting]
    d = est.diagnostics_
    n = len(est.weights_)
    assert set(d) == KEYS and all(isinstance(v, float) for v in d.values())
    assert 0 <= d["gibbs_risk"] <= 1 and 0 <= d["disagreement"] <= 1 and 0 <= d["c_bound"] <= 1
    train_error = float(np.mean(est.predict(X) != y))
    assert d["c_bound"] >= train_error  # Cantelli on the training sample
    assert train_error <= 2 * d["gibbs_risk"] + 1e-12  # Lemma 4 on the training sample
    assert d["gibbs_risk"] <= d["gibbs_risk_bound"] <= 1
    assert min(1.0, 2 * d["gibbs_risk"]) <= d["pac_bayes_bound"] <= 1
    assert 1 <= d["effective_trees"] <= n + 1e-9
    assert 0 <= d["kl_uniform"] <= (math.log(2) if weighting == "mincq" else math.log(n)) + 1e-12
    if weighting == "uniform":
        assert d["effective_trees"] == n and d["kl_uniform"] == 0.0
    if weighting == "mincq":  # self-complemented Q: R(G_Q) = (1 - mu) / 2
        assert d["gibbs_risk"] == pytest.approx((1 - est.selected_params_["mu"]) / 2, rel=1e-6)


@pytest.mark.parametrize("weighting", ["uniform", "sorf"])
def test_multiclass_diagnostics(weighting, multi_data):
    X, y, _, _ = multi_data
    est = PACBayesForestClassifier(weighting=weighting, n_estimators=15, random_state=0).fit(X, y)
    d = est.diagnostics_
    assert 0 <= d["gibbs_risk"] <= 1 and 0 <= d["disagreement"] <= 1
    assert d["c_bound"] >= float(np.mean(est.predict(X) != y))
    assert 1 <= d["effective_trees"] <= 15 + 1e-9


def test_bound_helpers():
    rng = np.random.default_rng(0)
    mass = rng.dirichlet(np.ones(2), size=50)
    y = rng.integers(2, size=50)
    r, d = gibbs_risk(mass, y), disagreement(mass)
    if r < 0.5:
        assert c_bound(r, d) == pytest.approx(c_bound_from_margins(vote_margins(mass, y)), abs=1e-12)
    assert c_bound(0.6, 0.1) == 1.0 and c_bound(0.1, 0.5) == 1.0
    for m in (8, 100, 1809):
        assert math.sqrt(m) <= seeger_xi(m) <= 2 * math.sqrt(m)
    p = kl_inverse_upper(0.1, 0.05)
    assert p > 0.1 and kl_bernoulli(0.1, p) == pytest.approx(0.05, abs=1e-9)
    assert kl_inverse_upper(0.3, 0.0) == 0.3 and kl_inverse_upper(0.0, 100.0) == 1.0
    assert kl_to_uniform(np.ones(7)) == 0.0 and kl_to_uniform(np.eye(5)[0]) == pytest.approx(math.log(5))
    assert effective_number(np.ones(9)) == 9.0 and effective_number(np.eye(4)[2]) == 1.0
    assert effective_number(np.array([0.5, -0.5])) == 2.0
