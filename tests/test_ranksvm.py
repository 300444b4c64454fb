"""RankSVM: the sorted-score oracle against brute force over all pairs, the fit against direct solves of the pairwise
problem with every pair materialised (linear and RBF), the C normalisation, determinism and the ranker contract."""

from __future__ import annotations

import numpy as np
import osqp
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from forestlab.learners._ranksvm import RankSVM, _simplex_qp, pairwise_hinge
from tests.test_learners_common import check_ranker


def _problem(n: int = 30, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping classes: positives shifted by 0.8 on every axis."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1, -1)
    X = rng.normal(size=(n, d)) + 0.4 * y[:, None]
    return X, y


def _pairs(y: np.ndarray) -> np.ndarray:
    """The (positive, negative) index pairs."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    return np.array([(i, j) for i in pos for j in neg])


def _explicit_pair_dual(K: np.ndarray, pairs: np.ndarray, C: float) -> tuple[np.ndarray, float]:
    """The RankSVM with every pair materialised, solved in its dual by OSQP: max 1ᵀα − ½ αᵀHα, 0 ≤ α ≤ C, with
    H = D K Dᵀ (D the pair-difference operator). Returns the coefficients γ = Dᵀα of the score Kγ and the dual value
    (a lower bound of the optimum)."""
    n, n_pairs = len(K), len(pairs)
    D = np.zeros((n_pairs, n))
    D[np.arange(n_pairs), pairs[:, 0]] = 1.0
    D[np.arange(n_pairs), pairs[:, 1]] = -1.0
    H = D @ K @ D.T
    solver = osqp.OSQP()
    # moderate ADMM accuracy, then OSQP's polishing (a solve on the guessed active set) makes it exact: asking ADMM
    # itself for 1e-10 runs out of iterations on these degenerate duals (rank of H <= n, n_pairs variables)
    solver.setup(P=sp.csc_matrix(np.triu(H)), q=-np.ones(n_pairs), A=sp.identity(n_pairs, format="csc"),
                 l=np.zeros(n_pairs), u=np.full(n_pairs, C), eps_abs=1e-7, eps_rel=1e-7, max_iter=100_000,
                 polishing=True, polish_refine_iter=10, verbose=False)
    result = solver.solve(raise_error=False)
    assert result.info.status == "solved"
    alpha = np.clip(result.x, 0.0, C)
    return D.T @ alpha, float(alpha.sum() - 0.5 * alpha @ H @ alpha)


def _objective(K: np.ndarray, gamma: np.ndarray, y: np.ndarray, C: float) -> float:
    """½‖f‖² + C Σ pair hinge losses of f = Σ γ_i k(·, x_i)."""
    scores = K @ gamma
    return 0.5 * float(gamma @ scores) + C * pairwise_hinge(scores[y == 1], scores[y != 1])[0]


# ---------------------------------------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("grid", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_pairwise_hinge_equals_brute_force(grid, seed):
    rng = np.random.default_rng(seed)
    n_pos, n_neg = rng.integers(1, 40, size=2)
    if grid:  # multiples of 1/2: tied scores and pairs exactly at the margin
        s_pos, s_neg = rng.integers(-4, 5, n_pos) / 2.0, rng.integers(-4, 5, n_neg) / 2.0
    else:
        s_pos, s_neg = rng.normal(size=n_pos), rng.normal(size=n_neg)
    margins = 1.0 - s_pos[:, None] + s_neg[None, :]
    violated = margins > 0
    loss, c_pos, c_neg = pairwise_hinge(s_pos, s_neg)
    assert loss == pytest.approx(margins[violated].sum(), rel=1e-12, abs=1e-12)
    assert np.array_equal(c_pos, violated.sum(axis=1)) and np.array_equal(c_neg, violated.sum(axis=0))
    if grid:
        assert np.any(margins == 0)  # the boundary case is exercised: not violated


def _numpy_counts(s_pos: np.ndarray, s_neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counts as numpy computed them before they were compiled (pairwise_hinge's two sorts and searches)."""
    u = s_pos - 1.0
    c_pos = len(s_neg) - np.searchsorted(np.sort(s_neg), u, side="right")
    c_neg = np.searchsorted(np.sort(u), s_neg, side="left")
    return c_pos.astype(np.int64), c_neg.astype(np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_compiled_counts_on_a_line_are_numpys(seed):
    """The line search's counts at s + t d, compiled, equal numpy's on the arrays numpy forms (s + t * d): the
    same scores bit for bit (no fused multiply-add), hence the same counts, and the slope computed from them in
    numpy is unchanged."""
    from forestlab.learners._ranksvm_kernels import violated_counts_on_line

    rng = np.random.default_rng(seed)
    n_pos, n_neg = rng.integers(1, 300, size=2)
    if seed % 3 == 0:  # ties and pairs exactly at the margin, signed zeros
        s_pos, s_neg = rng.integers(-4, 5, n_pos) / 2.0, rng.integers(-4, 5, n_neg) / 2.0
        d_pos, d_neg = rng.choice([-0.0, 0.0, 0.5, -1.0], n_pos), rng.choice([-0.0, 0.0, 0.5, 1.0], n_neg)
    else:
        s_pos, s_neg = rng.normal(size=n_pos), rng.normal(size=n_neg)
        d_pos, d_neg = rng.normal(size=n_pos), rng.normal(size=n_neg)
    order_pos, order_neg = np.arange(n_pos), rng.permutation(n_neg)  # any order at first; kept from t to t
    for t in (0.0, 1.0, float(rng.uniform(0, 3)), float(rng.uniform(0, 1e-6)), 0.1, 1e30, 0.1 + 1e-12):
        expected = _numpy_counts(s_pos + t * d_pos, s_neg + t * d_neg)
        got = violated_counts_on_line(s_pos, s_neg, d_pos, d_neg, t, order_pos, order_neg)
        assert all(g.dtype == np.int64 for g in got)
        u = s_pos + t * d_pos - 1.0
        assert np.all(np.diff(u[order_pos]) >= 0) and np.all(np.diff((s_neg + t * d_neg)[order_neg]) >= 0)
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    loss, c_pos, c_neg = pairwise_hinge(s_pos, s_neg)
    expected = _numpy_counts(s_pos, s_neg)
    assert np.array_equal(c_pos, expected[0]) and np.array_equal(c_neg, expected[1])
    assert loss == max(float(expected[1] @ s_neg - expected[0] @ (s_pos - 1.0)), 0.0)


def test_cut_is_the_brute_force_most_violated_constraint():
    """The joint constraint built from the counts is the sum over the violated pairs of their differences, and it is
    tight at w: b − a·w is the mean pair hinge loss."""
    rng = np.random.default_rng(3)
    Z = rng.integers(-2, 3, size=(25, 4)).astype(float)
    pos = rng.random(25) < 0.4
    w = rng.integers(-2, 3, size=4) / 2.0
    s = Z @ w
    loss, c_pos, c_neg = pairwise_hinge(s[pos], s[~pos])
    a = Z[pos].T @ c_pos - Z[~pos].T @ c_neg
    diffs = Z[pos][:, None, :] - Z[~pos][None, :, :]
    violated = 1.0 - (s[pos][:, None] - s[~pos][None, :]) > 0
    assert np.allclose(a, diffs[violated].sum(axis=0))
    assert c_pos.sum() - a @ w == pytest.approx(loss)


@pytest.mark.parametrize("seed", range(3))
def test_cut_qp_is_exact_on_nearly_parallel_cuts(seed):
    """The dual of the cut QP, min ½ βᵀQβ − bᵀβ on the simplex, Q = C n+ n− A Aᵀ, with the cuts (a, b) of the mean
    pair hinge loss taken at points scattered around the optimum (10^-4 to 10^-1 away), as late iterations make
    them: 60 nearly parallel cuts of rank 5, Q's condition number beyond 1e20. The active-set solver reaches a
    certified gap of 1e-12, matches OSQP's polished solution, and its w = C n+ n− Aᵀβ is the optimum."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(200, 5))
    pos = rng.random(200) < 0.5
    Z[pos] += 0.3
    n_pairs = pos.sum() * (~pos).sum()
    w_star = RankSVM(scale=False, C=1.0, tol=1e-10).fit(Z, np.where(pos, 1, -1)).coef_
    A, b = np.zeros((60, 5)), np.zeros(60)  # cut 0 = (0, 0): ξ >= 0
    for k in range(1, 60):
        s = Z @ (w_star + 10.0 ** rng.uniform(-4, -1) * rng.normal(size=5))
        _, c_pos, c_neg = pairwise_hinge(s[pos], s[~pos])
        A[k], b[k] = (Z[pos].T @ c_pos - Z[~pos].T @ c_neg) / n_pairs, c_pos.sum() / n_pairs
    Q = n_pairs * A @ A.T
    beta = np.zeros(60)
    beta[0] = 1.0
    _, gap = _simplex_qp(Q, b, beta, 1e-12, 1000)
    g = Q @ beta - b
    assert np.all(beta >= 0) and beta.sum() == pytest.approx(1.0, abs=1e-14) and (beta > 0).sum() > 3
    assert gap == pytest.approx(beta @ g - g.min(), abs=1e-15) and gap <= 1e-12  # f(β) − min f <= gap
    solver = osqp.OSQP()
    solver.setup(P=sp.csc_matrix(np.triu(Q)), q=-b, A=sp.csc_matrix(np.vstack([np.ones(60), np.eye(60)])),
                 l=np.r_[1.0, np.zeros(60)], u=np.r_[1.0, np.full(60, np.inf)], eps_abs=1e-9, eps_rel=1e-9,
                 max_iter=100_000, polishing=True, verbose=False)
    x = np.maximum(solver.solve(raise_error=False).x, 0.0)
    x /= x.sum()
    assert 0.5 * beta @ Q @ beta - b @ beta <= 0.5 * x @ Q @ x - b @ x + 1e-12
    assert np.linalg.norm(n_pairs * A.T @ beta - w_star) <= 1e-2 * np.linalg.norm(w_star)


# ---------------------------------------------------------------------------------------------------------------
# The fit against direct solves with every pair
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("C", [0.05, 1.0])
def test_linear_matches_the_explicit_pair_problem(C):
    X, y = _problem()
    X_test, _ = _problem(seed=1)
    ranker = RankSVM(scale=False, C=C, tol=1e-9).fit(X, y)
    gamma, lower = _explicit_pair_dual(X @ X.T, _pairs(y), C)
    w_direct = X.T @ gamma
    j_direct = _objective(X @ X.T, gamma, y, C)
    assert j_direct - lower <= 1e-6 * j_direct  # the direct solve is exact (polished)
    assert ranker.objective_ == pytest.approx(j_direct, rel=1e-6)
    assert ranker.objective_ >= lower - 1e-9 * j_direct
    # strong convexity: ½‖w − w*‖² <= J(w) − J* <= J(w) − lower, for both solutions
    radius = np.sqrt(2 * max(ranker.objective_ - lower, 0)) + np.sqrt(2 * max(j_direct - lower, 0))
    assert np.linalg.norm(ranker.coef_ - w_direct) <= radius + 1e-6
    scores, direct = ranker.decision_function(X_test), X_test @ w_direct
    assert np.max(np.abs(scores - direct)) <= radius * np.linalg.norm(X_test, axis=1).max() + 1e-6
    assert np.array_equal(np.argsort(scores), np.argsort(direct))


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_linear_C_multiplies_the_sum_of_pair_slacks(C):
    """LinearSVC on the pair differences, each pair twice (x_i − x_j labelled +1, x_j − x_i labelled −1), minimises
    ½‖w‖² + C' · 2 Σ hinge: C' = C/2 is RankSVM's C on the sum of the pair slacks."""
    X, y = _problem()
    pairs = _pairs(y)
    diffs = X[pairs[:, 0]] - X[pairs[:, 1]]
    svc = LinearSVC(loss="hinge", fit_intercept=False, C=C / 2, tol=1e-10, max_iter=1_000_000)
    svc.fit(np.vstack([diffs, -diffs]), np.r_[np.ones(len(diffs)), -np.ones(len(diffs))])
    ranker = RankSVM(scale=False, C=C, tol=1e-9).fit(X, y)
    assert np.allclose(ranker.coef_, svc.coef_.ravel(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_rbf_matches_the_kernelised_explicit_pair_problem(C):
    X, y = _problem(d=2)
    X_test, _ = _problem(d=2, seed=1)
    ranker = RankSVM(scale=False, kernel="rbf", C=C, tol=1e-9).fit(X, y)
    gamma_ = 1.0 / (X.shape[1] * X.var())
    assert ranker.gamma_ == pytest.approx(gamma_)
    K = np.exp(-gamma_ * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    coef, lower = _explicit_pair_dual(K, _pairs(y), C)
    j_direct = _objective(K, coef, y, C)
    assert j_direct - lower <= 1e-6 * j_direct
    assert ranker.objective_ == pytest.approx(j_direct, rel=1e-6)
    # in the RKHS, |f(x) − f*(x)| <= ‖f − f*‖ sqrt(k(x, x)) = ‖f − f*‖ and ½‖f − f*‖² <= J(f) − lower
    radius = np.sqrt(2 * max(ranker.objective_ - lower, 0)) + np.sqrt(2 * max(j_direct - lower, 0))
    K_test = np.exp(-gamma_ * ((X_test[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    scores, direct = ranker.decision_function(X_test), K_test @ coef
    assert np.max(np.abs(scores - direct)) <= radius + 1e-6
    assert np.corrcoef(scores, direct)[0, 1] > 0.9999


def test_rbf_kernel_map_scores_the_training_points_as_the_solver_did():
    """decision_function (k(x, X) γ) on the training points gives back the solver's scores Φw: same mean pair
    hinge loss, same training AUC."""
    from sklearn.metrics import roc_auc_score

    X, y = _problem(n=60, d=4)
    ranker = RankSVM(scale=False, kernel="rbf", C=0.1, gamma=0.5).fit(X, y)
    scores = ranker.decision_function(X)
    loss = pairwise_hinge(scores[y == 1], scores[y != 1])[0]
    assert loss / (30 * 30) == pytest.approx(ranker.diagnostics_["mean_pair_hinge"], rel=1e-8, abs=1e-12)
    assert roc_auc_score(y, scores) == pytest.approx(ranker.diagnostics_["train_auc"])
    assert ranker.gamma_ == 0.5 and ranker.n_components_ <= 60


# ---------------------------------------------------------------------------------------------------------------
# Fitting behaviour
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_fit_is_deterministic_and_row_order_only_moves_within_tolerance(kernel):
    X, y = _problem(n=80, d=5)
    X_test, _ = _problem(n=40, d=5, seed=1)
    first = RankSVM(scale=False, kernel=kernel, C=0.5).fit(X, y)
    again = RankSVM(scale=False, kernel=kernel, C=0.5).fit(X, y)
    assert np.array_equal(first.decision_function(X_test), again.decision_function(X_test))
    assert first.diagnostics_ == again.diagnostics_
    order = np.random.default_rng(0).permutation(len(y))
    shuffled = RankSVM(scale=False, kernel=kernel, C=0.5).fit(X[order], y[order])
    n_pairs = 40 * 40
    assert abs(shuffled.objective_ - first.objective_) <= 2 * 0.5 * 1e-3 * n_pairs


def test_stopping_rule_certifies_the_gap():
    X, y = _problem(n=100, d=5)
    for tol in (1e-2, 1e-4):
        ranker = RankSVM(scale=False, C=1.0, tol=tol).fit(X, y)
        assert 0 <= ranker.diagnostics_["duality_gap"] <= 1.0 * tol * 50 * 50
    tight = RankSVM(scale=False, C=1.0, tol=1e-9).fit(X, y)
    assert tight.objective_ <= ranker.objective_ <= tight.objective_ + 1e-4 * 50 * 50


def test_max_iter_warns_and_keeps_the_best_point():
    X, y = _problem(n=100, d=5)
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=1"):
        ranker = RankSVM(scale=False, tol=1e-9, max_iter=1).fit(X, y)
    assert ranker.n_iter_ == 1 and np.all(np.isfinite(ranker.coef_))
    assert ranker.objective_ <= 1.0 * 50 * 50  # no worse than w = 0 (every pair's hinge is 1)


def test_labels_any_two_classes_the_greater_positive():
    X, y = _problem()
    reference = RankSVM(scale=False).fit(X, y).decision_function(X)
    for labels in ((0, 1), ("a", "b"), (-1, 1)):
        y_named = np.where(y == 1, labels[1], labels[0])
        ranker = RankSVM(scale=False).fit(X, y_named)
        assert list(ranker.classes_) == list(labels)
        assert np.allclose(ranker.decision_function(X), reference)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        RankSVM(scale=False).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="one class"):
        RankSVM(scale=False).fit(X, np.ones(len(y)))


@pytest.mark.parametrize("params", [{"C": 0}, {"C": -1.0}, {"kernel": "poly"}, {"gamma": "auto"}, {"gamma": 0.0},
                                    {"tol": 0}, {"max_iter": 0}, {"max_iter": True}])
def test_invalid_parameters_are_refused(params):
    X, y = _problem()
    with pytest.raises(InvalidParameterError):
        RankSVM(scale=False, **params).fit(X, y)


def test_linear_scores_are_X_coef_and_translation_invariant():
    X, y = _problem(n=50)
    ranker = RankSVM(scale=False, C=0.2, tol=1e-8).fit(X, y)
    assert np.allclose(ranker.decision_function(X), X @ ranker.coef_)
    moved = RankSVM(scale=False, C=0.2, tol=1e-8).fit(X + 5.0, y)  # no intercept is needed: only differences count
    assert moved.objective_ == pytest.approx(ranker.objective_, rel=1e-6)
    assert np.allclose(moved.coef_, ranker.coef_, atol=1e-3)


def test_run_report_holds_the_diagnostics():
    X, y = _problem()
    report = RankSVM(scale=False, kernel="rbf").fit(X, y).run_report()
    assert set(report["values"]) == {"n_iter", "objective", "duality_gap", "mean_pair_hinge", "train_auc",
                                     "n_components"}
    assert all(isinstance(v, float) for v in report["values"].values())


def test_refit_with_another_kernel_drops_the_old_solution():
    X, y = _problem()
    ranker = RankSVM(scale=False).fit(X, y)
    ranker.set_params(kernel="rbf").fit(X, y)
    assert not hasattr(ranker, "coef_") and hasattr(ranker, "dual_coef_")
    ranker.set_params(kernel="linear").fit(X, y)
    assert hasattr(ranker, "coef_") and not hasattr(ranker, "dual_coef_") and not hasattr(ranker, "gamma_")


# ---------------------------------------------------------------------------------------------------------------
# Contracts
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_ranker_contract(kernel):
    check_ranker(RankSVM(scale=False, kernel=kernel, random_state=0))


@parametrize_with_checks([RankSVM(scale=False, random_state=0), RankSVM(scale=False, kernel="rbf", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_scale_fits_on_the_standardised_variables():
    """scale=True (the default) is the same ranker fitted on the variables standardised on the training data: the
    units of a variable no longer matter."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 3)) * np.array([1.0, 100.0, 0.01]) + np.array([5.0, -3.0, 0.0])
    y = np.where(X[:, 0] - 5 + (X[:, 1] + 3) / 100 + rng.normal(size=80) > 0, 1, -1)
    mean, std = X.mean(axis=0), X.std(axis=0)
    for kernel in ("linear", "rbf"):
        scaled = RankSVM(kernel=kernel).fit(X, y)
        by_hand = RankSVM(kernel=kernel, scale=False).fit((X - mean) / std, y)
        np.testing.assert_allclose(scaled.decision_function(X), by_hand.decision_function((X - mean) / std),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(scaled.mean_, mean) and np.testing.assert_allclose(scaled.scale_, std)


def _numpy_line_minimum(s_pos, s_neg, d_pos, d_neg, order_pos, order_neg, wd, dd, cp, n_pairs):
    """The line search's bisection as it was written in Python and numpy before it was compiled (6c3011a)."""
    from forestlab.learners._ranksvm_kernels import violated_counts_on_line

    def slope(t):
        c_pos, c_neg = violated_counts_on_line(s_pos, s_neg, d_pos, d_neg, t, order_pos, order_neg)
        return wd + t * dd + cp * float(c_neg @ d_neg - c_pos @ d_pos) / n_pairs

    if slope(0.0) >= 0.0:
        return 0.0
    lo, hi = 0.0, 1.0
    while slope(hi) < 0.0 and hi < 1e30:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if slope(mid) < 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("seed", range(60))
def test_compiled_line_search_is_the_numpy_one_bit_for_bit(seed):
    """The compiled bisection (learners/_ranksvm_kernels.line_minimum) returns the step the Python and numpy loop
    returned, bit for bit, on lines like the solver's (scores of a linear model, a direction between two models,
    the weight cp of the mean pair loss from C = 1e-3 to 1e3), ties and exact margins included."""
    from forestlab.learners._ranksvm_kernels import line_minimum

    rng = np.random.default_rng(seed)
    n_pos, n_neg = rng.integers(2, 400, size=2)
    q = int(rng.integers(1, 30))
    Z_pos, Z_neg = rng.normal(size=(n_pos, q)) + 0.3, rng.normal(size=(n_neg, q))
    if seed % 4 == 0:  # ties and pairs exactly at the margin
        Z_pos, Z_neg = np.round(Z_pos), np.round(Z_neg)
    w = rng.normal(size=q) * (0.0 if seed % 5 == 0 else 10 ** rng.uniform(-3, 1))
    delta = rng.normal(size=q) * 10 ** rng.uniform(-3, 1) - (w if seed % 3 == 0 else 0.0)
    n_pairs = float(n_pos) * float(n_neg)
    cp = 10 ** rng.uniform(-3, 3) * n_pairs
    s_pos, s_neg, d_pos, d_neg = Z_pos @ w, Z_neg @ w, Z_pos @ delta, Z_neg @ delta
    wd, dd = float(w @ delta), float(delta @ delta)
    orders = [(np.argsort(s_pos), np.argsort(s_neg)) for _ in range(2)]
    expected = _numpy_line_minimum(s_pos, s_neg, d_pos, d_neg, *orders[0], wd, dd, cp, n_pairs)
    got = line_minimum(s_pos, s_neg, d_pos, d_neg, *orders[1], wd, dd, cp, n_pairs)
    assert got.hex() == expected.hex()
    assert np.array_equal(orders[0][0], orders[1][0]) and np.array_equal(orders[0][1], orders[1][1])
