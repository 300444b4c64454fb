"""The two-sample tests (depecker2010 Chapter 6): the TreeRank–Wilcoxon test and the MMD tests (permutation and
Gamma nulls): their building blocks against brute force and scipy, their level under the null, their power on a
clear shift, determinism and input checks."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import pdist
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from forestlab.learners._base import TestResult
from forestlab.learners._two_sample import (
    TRK_CART_PARAMS,
    MMDTest,
    TreeRankWilcoxonTest,
    _relabellings,
    exact_rank_sum_distribution,
    gaussian_kernel_matrix,
    median_heuristic,
    mmd2_null_moments,
    mmd2_unbiased,
    rank_sum_test,
)
from tests.conftest import shifted_samples

CHEAP_RANKER = {"max_depth": 2}  # a small tree for the replicated level checks


def _brute_force_law(ranks, n):
    sums = Counter(sum(c) for c in itertools.combinations(ranks, n))
    total = sum(sums.values())
    values = np.array(sorted(sums))
    return values, np.array([sums[v] / total for v in values])


# ---------------------------------------------------------------------------------------------------------------
# The Wilcoxon rank-sum test
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_exact_rank_sum_law_with_ties_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(5, 11))
    ranks = stats.rankdata(rng.integers(0, 4, N))  # heavy ties: midranks
    assert np.any(ranks != np.round(ranks))  # some half-integer midranks
    for n in range(N + 1):  # both the direct and the complement tabulation
        values, probs = exact_rank_sum_distribution(ranks, n)
        ref_values, ref_probs = _brute_force_law(ranks, n)
        np.testing.assert_allclose(values, ref_values)
        np.testing.assert_allclose(probs, ref_probs, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_exact_p_value_matches_enumeration_with_ties(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 5, int(rng.integers(2, 7))), rng.integers(0, 4, int(rng.integers(2, 7)))
    result, used, _ = rank_sum_test(a, b, method="exact")
    ranks = stats.rankdata(np.concatenate([a, b]))
    W = ranks[: len(a)].sum()
    sums = [sum(c) for c in itertools.combinations(ranks, len(a))]
    assert used == "exact"
    assert result.statistic == W
    assert result.p_value == pytest.approx(np.mean(np.array(sums) >= W - 1e-9), rel=1e-10)


@pytest.mark.parametrize("sizes", [(5, 7), (20, 30), (3, 40), (40, 6)])
def test_exact_p_value_without_ties_is_scipys(sizes):
    rng = np.random.default_rng(sum(sizes))
    a, b = rng.normal(0.3, 1, sizes[0]), rng.normal(0, 1, sizes[1])
    ref = stats.mannwhitneyu(a, b, alternative="greater", method="exact").pvalue
    assert rank_sum_test(a, b, method="exact")[0].p_value == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("continuity", [True, False])
def test_asymptotic_p_value_is_scipys_with_tie_correction(continuity):
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 12, 300), rng.integers(0, 11, 260)  # tied scores, like a tree's
    result, used, _ = rank_sum_test(a, b, method="asymptotic", continuity=continuity)
    ref = stats.mannwhitneyu(a, b, alternative="greater", method="asymptotic", use_continuity=continuity)
    assert used == "asymptotic"
    assert result.statistic == pytest.approx(ref.statistic + 300 * 301 / 2)  # W = U + n1 (n1 + 1) / 2
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_permutation_p_value_and_auto_rule():
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 6, 30), rng.integers(0, 5, 40)
    exact, used, _ = rank_sum_test(a, b)
    assert used == "exact"  # 30 · 70 <= 5000
    perm, used, null = rank_sum_test(a, b, method="permutation", n_permutations=4000, random_state=0)
    assert used == "permutation" and null.shape == (4000,)
    assert perm.p_value == (1 + np.sum(null >= perm.statistic)) / 4001
    assert perm.p_value == pytest.approx(exact.p_value, abs=0.025)
    assert rank_sum_test(rng.normal(size=60), rng.normal(size=90))[1] == "asymptotic"  # 60 · 150 > 5000
    with pytest.raises(ValueError, match="too costly"):
        rank_sum_test(rng.normal(size=300), rng.normal(size=300), method="exact")


def test_all_scores_tied_gives_p_one():
    for method in ("exact", "asymptotic"):
        assert rank_sum_test(np.ones(5), np.ones(8), method=method)[0].p_value == pytest.approx(1.0)


def test_treerank_wilcoxon_split_ranker_and_auc():
    X_a, X_b = shifted_samples(0, 101, 80, shift=0.5)
    test = TreeRankWilcoxonTest(train_fraction=0.6, random_state=0)
    result = test.test(X_a, X_b)
    assert isinstance(result, TestResult)
    assert test.n_test_ == (101 - 61, 80 - 48)
    n1, m1 = test.n_test_
    assert test.auc_ == pytest.approx((result.statistic - n1 * (n1 + 1) / 2) / (n1 * m1))
    assert test.method_ == "exact"  # 40 · 72 <= 5000
    params = test.ranker_.get_params()
    assert {k: params[k] for k in TRK_CART_PARAMS} == TRK_CART_PARAMS
    assert TRK_CART_PARAMS["leafrank_criterion"] == "misclassification"
    # the ranker's parameters pass through, over the TRK_CART defaults
    test = TreeRankWilcoxonTest(ranker_params={"max_depth": 1}, method="asymptotic", random_state=0)
    test.test(X_a, X_b)
    assert test.ranker_.max_depth == 1 and test.ranker_.n_leaves_ <= 2 and test.method_ == "asymptotic"


def test_treerank_wilcoxon_auc_is_the_test_auc_of_the_score():
    X_a, X_b = shifted_samples(1, 60, 70, shift=0.7)
    test = TreeRankWilcoxonTest(random_state=5)
    test.test(X_a, X_b)
    # redo the split with the same draws: the AUC of the fitted ranker on the test parts
    rng = np.random.RandomState(5)
    test_a, test_b = rng.permutation(60)[30:], rng.permutation(70)[35:]
    scores = test.ranker_.decision_function(np.vstack([X_a[test_a], X_b[test_b]]))
    y = np.r_[np.ones(30), np.zeros(35)]
    assert test.auc_ == pytest.approx(roc_auc_score(y, scores))


# ---------------------------------------------------------------------------------------------------------------
# MMD
# ---------------------------------------------------------------------------------------------------------------
def _mmd2_u_double_loop(X, Y, sigma):
    def k(x, y):
        return np.exp(-np.sum((x - y) ** 2) / (2 * sigma ** 2))

    m, n = len(X), len(Y)
    xx = sum(k(X[i], X[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(k(Y[i], Y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    xy = sum(k(x, y) for x in X for y in Y) / (m * n)
    return xx + yy - 2 * xy


def test_unbiased_mmd_matches_double_loop():
    X, Y = shifted_samples(2, 9, 13, q=4, shift=0.3)
    sigma = 1.7
    K = gaussian_kernel_matrix(np.vstack([X, Y]), sigma)
    assert mmd2_unbiased(K, 9) == pytest.approx(_mmd2_u_double_loop(X, Y, sigma), rel=1e-10, abs=1e-13)
    test = MMDTest(bandwidth=sigma, n_permutations=9, random_state=0)
    assert test.test(X, Y).statistic == pytest.approx(_mmd2_u_double_loop(X, Y, sigma), rel=1e-10, abs=1e-13)
    assert test.bandwidth_ == sigma


def test_permutation_null_statistics_match_slow_recomputation():
    X, Y = shifted_samples(3, 11, 7, q=2)
    Z = np.vstack([X, Y])
    test = MMDTest(n_permutations=30, random_state=7)
    result = test.test(X, Y)
    sigma = median_heuristic(Z)
    assert test.bandwidth_ == sigma
    # the same relabellings, drawn from the same seed, recomputed one by one
    chosen = np.vstack([c for _, c in _relabellings(np.random.RandomState(7), 30, 18, 11)])
    for b in range(5):
        in_a = np.zeros(18, dtype=bool)
        in_a[chosen[b]] = True
        slow = _mmd2_u_double_loop(Z[in_a], Z[~in_a], sigma)
        assert test.null_statistics_[b] == pytest.approx(slow, rel=1e-9, abs=1e-12)
    assert result.p_value == (1 + np.sum(test.null_statistics_ >= result.statistic)) / 31


def test_median_heuristic():
    Z = np.random.default_rng(0).normal(size=(300, 5))
    assert median_heuristic(Z) == pytest.approx(np.median(pdist(Z)))
    # duplicates: zero distances are left out
    assert median_heuristic(np.array([[0.0], [0.0], [1.0], [3.0]])) == pytest.approx(np.median([1, 1, 3, 3, 2]))
    assert median_heuristic(np.zeros((4, 2))) == 1.0
    # above 2000 points: a random subset of 2000, reproducible, close to the full median
    big = np.random.default_rng(1).normal(size=(2600, 3))
    sub = median_heuristic(big, random_state=0)
    assert sub == median_heuristic(big, random_state=0)
    assert sub == pytest.approx(np.median(pdist(big)), rel=0.01)


def _scaled_biased_mmd_under_relabellings(K, m, B, seed):
    N = len(K)
    n = N - m
    W = np.full((B, N), -1.0 / n)
    for start, chosen in _relabellings(np.random.RandomState(seed), B, N, m):
        np.put_along_axis(W[start:start + len(chosen)], chosen, 1.0 / m, axis=1)
    return m * n / N * np.einsum("bi,bi->b", W @ K, W)


def test_gamma_null_moments_match_the_permutation_moments():
    X, Y = shifted_samples(4, 90, 130, q=4)
    K = gaussian_kernel_matrix(np.vstack([X, Y]), median_heuristic(np.vstack([X, Y])))
    mean, var = mmd2_null_moments(K, 90)
    T = _scaled_biased_mmd_under_relabellings(K, 90, 20000, seed=0)
    assert mean == pytest.approx(T.mean(), rel=0.01)  # in expectation exactly the permutation mean
    assert var == pytest.approx(T.var(), rel=0.05)    # Monte Carlo error ~1.5%
    test = MMDTest(null_distribution="gamma", random_state=0)
    result = test.test(X, Y)
    assert (test.null_mean_, test.null_var_) == (mean, var)
    shape, scale = mean ** 2 / var, var / mean
    assert result.p_value == pytest.approx(stats.gamma.sf(result.statistic, shape, scale=scale))
    w = np.r_[np.full(90, 1 / 90), np.full(130, -1 / 130)]
    assert result.statistic == pytest.approx(90 * 130 / 220 * w @ K @ w)


def test_gamma_moments_reduce_to_grettons_for_equal_sizes():
    X, Y = shifted_samples(5, 400, 400, q=3)
    m = 400
    K = gaussian_kernel_matrix(np.vstack([X, Y]), median_heuristic(np.vstack([X, Y])))
    mean, var = mmd2_null_moments(K, m)
    # Gretton's mmdTestGamma: moments of MMD²_b under H0
    Kxx, Kyy, Kxy = K[:m, :m], K[m:, m:], K[:m, m:]
    g_mean = 2 / m * (1 - np.mean(np.diag(Kxy)))
    H = Kxx + Kyy - Kxy - Kxy.T
    np.fill_diagonal(H, 0.0)
    g_var = 2 / (m * (m - 1)) ** 2 * np.sum(H ** 2)
    assert mean / (m / 2) == pytest.approx(g_mean, rel=0.05)
    assert var / (m / 2) ** 2 == pytest.approx(g_var, rel=0.05)


def test_mmd_timing_scale_uses_unequal_sizes():
    X, Y = shifted_samples(6, 37, 61, q=2, shift=0.1)
    test = MMDTest(n_permutations=50, random_state=0)
    test.test(X, Y)
    assert test.null_statistics_.shape == (50,)
    assert test.null_mean_ is None


# ---------------------------------------------------------------------------------------------------------------
# Level, power, determinism, input checks
# ---------------------------------------------------------------------------------------------------------------
def _make_tests(seed):
    return {
        "wmw_exact": TreeRankWilcoxonTest(ranker_params=CHEAP_RANKER, random_state=seed),
        "wmw_asymptotic": TreeRankWilcoxonTest(ranker_params=CHEAP_RANKER, method="asymptotic", random_state=seed),
        "mmd_permutation": MMDTest(n_permutations=200, random_state=seed),
        "mmd_gamma": MMDTest(null_distribution="gamma", random_state=seed),
    }


def test_level_under_the_null():
    n_rep = 200
    rejections = Counter()
    with threadpool_limits(1):  # small matrices: one BLAS thread is faster (and steadier on a busy machine)
        for rep in range(n_rep):
            X_a, X_b = shifted_samples(10_000 + rep, 100, 100, q=3)
            for name, test in _make_tests(rep).items():
                rejections[name] += test.test(X_a, X_b).p_value <= 0.05
    low, high = stats.binom.interval(0.99, n_rep, 0.05)
    for name in _make_tests(0):
        assert low <= rejections[name] <= high, (name, rejections[name], (low, high))


def test_power_on_a_clear_shift():
    X_a, X_b = shifted_samples(20, 100, 100, q=3, shift=0.8)
    for name, test in _make_tests(0).items():
        assert test.test(X_a, X_b).p_value < 0.01, name
    assert TreeRankWilcoxonTest(random_state=0).test(X_a, X_b).p_value < 0.01  # the full TRK_CART too


def test_deterministic_given_random_state():
    X_a, X_b = shifted_samples(21, 80, 90, q=3, shift=0.2)
    for make in (lambda s: TreeRankWilcoxonTest(random_state=s), lambda s: MMDTest(n_permutations=99, random_state=s),
                 lambda s: TreeRankWilcoxonTest(method="permutation", n_permutations=99, random_state=s)):
        assert make(3).test(X_a, X_b) == make(3).test(X_a, X_b)
    # another seed: another split of the samples
    a = TreeRankWilcoxonTest(random_state=1)
    b = TreeRankWilcoxonTest(random_state=2)
    assert (a.test(X_a, X_b), a.auc_) != (b.test(X_a, X_b), b.auc_)
    # the runner's call: parameters from the config, random_state as a keyword
    for cls in (TreeRankWilcoxonTest, MMDTest):
        assert isinstance(cls(**{}, random_state=0).test(X_a.tolist(), X_b), TestResult)


@pytest.mark.parametrize("cls", [TreeRankWilcoxonTest, MMDTest])
@pytest.mark.parametrize("X_a, X_b, message", [
    (np.zeros(5), np.zeros((5, 2)), "X_a must be a 2-D array"),
    (np.zeros((5, 2)), np.zeros((5, 2, 1)), "X_b must be a 2-D array"),
    (np.zeros((5, 2)), np.zeros((5, 3)), "same number of columns"),
    (np.zeros((1, 2)), np.zeros((5, 2)), "X_a holds 1 point"),
    (np.zeros((5, 2)), np.zeros((0, 2)), "X_b holds 0 point"),
    (np.array([[0.0, np.nan], [1, 2], [3, 4]]), np.zeros((5, 2)), "NaN or infinite"),
    (np.zeros((5, 2)), np.array([[0.0, np.inf], [1, 2], [3, 4]]), "NaN or infinite"),
    ([["a", "b"], ["c", "d"]], np.zeros((5, 2)), "could not convert"),
    (np.zeros((5, 0)), np.zeros((5, 0)), "no feature"),
])
def test_bad_input_gives_a_clear_error(cls, X_a, X_b, message):
    with pytest.raises(ValueError, match=message):
        cls(random_state=0).test(X_a, X_b)


def test_bad_parameters_give_a_clear_error():
    X_a, X_b = shifted_samples(22, 20, 20)
    with pytest.raises(ValueError, match="random_state"):
        TreeRankWilcoxonTest(ranker_params={"random_state": 1}).test(X_a, X_b)
    with pytest.raises(ValueError, match="max_dpth"):
        TreeRankWilcoxonTest(ranker_params={"max_dpth": 1}).test(X_a, X_b)
    for bad in (TreeRankWilcoxonTest(method="wald"), TreeRankWilcoxonTest(train_fraction=1.0),
                MMDTest(null_distribution="pearson"), MMDTest(bandwidth=-1.0), MMDTest(n_permutations=0)):
        with pytest.raises(ValueError):
            bad.test(X_a, X_b)


def test_smallest_samples_work():
    X_a, X_b = shifted_samples(23, 2, 2)
    for test in (TreeRankWilcoxonTest(random_state=0), MMDTest(random_state=0), MMDTest(null_distribution="gamma")):
        assert 0 < test.test(X_a, X_b).p_value <= 1


def test_the_linear_reference_score_is_near_optimal_on_a_mean_shift():
    """scorer="mean_difference": the two-stage test with the plug-in optimal score; on a shift the tree cannot
    follow it (spread over every coordinate) it rejects far more often than TreeRank's score does."""
    rng = np.random.default_rng(3)
    q, delta, rejections = 10, 0.4, {"treerank": 0, "mean_difference": 0}
    for rep in range(10):
        shift = delta / 2 / np.sqrt(q)
        A, B = rng.normal(shift, 1.0, (300, q)), rng.normal(-shift, 1.0, (300, q))
        for scorer in rejections:
            test = TreeRankWilcoxonTest(scorer=scorer, random_state=rep)
            rejections[scorer] += test.test(A, B).p_value < 0.05
    assert rejections["mean_difference"] >= 6 and rejections["mean_difference"] > rejections["treerank"]
    with pytest.raises(ValueError, match="no use with scorer='mean_difference'"):
        TreeRankWilcoxonTest(scorer="mean_difference", ranker_params={"max_depth": 2}).test(A, B)


def test_the_pruned_tree_reading_scores_with_a_cross_validated_subtree():
    from forestlab.learners import PrunedTreeRank

    rng = np.random.default_rng(5)
    A, B = rng.normal(0.5, 1.0, (150, 3)), rng.normal(0.0, 1.0, (150, 3))
    pruned = TreeRankWilcoxonTest(scorer="pruned_treerank", random_state=0)
    full = TreeRankWilcoxonTest(random_state=0)
    assert pruned.test(A, B).p_value < 0.05 and isinstance(pruned.ranker_, PrunedTreeRank)
    full.test(A, B)
    assert pruned.ranker_.n_leaves_ <= full.ranker_.n_leaves_


def test_mmd_each_null_names_its_statistic_and_both_share_one_mmd2():
    """The issue's 5.16 against 0.0318 on the same data: the Gamma null's statistic is T = mn/(m+n) MMD²_b, the
    permutation null's MMD²_u; each result says which, both tests expose the same MMD²_u, and the statistics and
    p-values are those the stored runs carry (pinned before the names were added)."""
    rng = np.random.default_rng(0)
    X_a, X_b = rng.normal(0.3, 1, (300, 5)), rng.normal(0.0, 1, (300, 5))
    perm, gamma = MMDTest(random_state=0), MMDTest(null_distribution="gamma", random_state=0)
    r_perm, r_gamma = perm.test(X_a, X_b), gamma.test(X_a, X_b)
    assert r_perm.statistic_name == "MMD2_u" and r_gamma.statistic_name == "T = mn/(m+n) MMD2_b"
    assert perm.mmd2_u_ == gamma.mmd2_u_ == r_perm.statistic
    assert perm.mmd2_b_ == gamma.mmd2_b_
    assert r_gamma.statistic == pytest.approx(300 * 300 / 600 * gamma.mmd2_b_, rel=1e-12)
    assert (r_perm.statistic, r_perm.p_value) == pytest.approx((0.03178172984576855, 0.001996007984031936), rel=1e-9)
    assert (r_gamma.statistic, r_gamma.p_value) == pytest.approx((5.162047621079106, 2.0436675720104976e-21),
                                                                 rel=1e-9)
    assert TreeRankWilcoxonTest(random_state=0).test(X_a, X_b).statistic_name == "W"


def test_a_pruned_scorer_on_a_small_learning_part_says_it_used_fewer_folds():
    rng = np.random.default_rng(0)
    X_a, X_b = rng.normal(1.0, 1.0, (12, 2)), rng.normal(0.0, 1.0, (12, 2))
    test = TreeRankWilcoxonTest(scorer="pruned_treerank", random_state=0)
    with pytest.warns(UserWarning, match="cv_folds=10 .* the smaller class has 6"):
        test.test(X_a, X_b)
    assert test.diagnostics_["ranker_cv_folds"] == 6.0 and test.ranker_.cv_folds_ == 6
    big_a, big_b = rng.normal(1.0, 1.0, (60, 2)), rng.normal(0.0, 1.0, (60, 2))
    test.test(big_a, big_b)
    assert "ranker_cv_folds" not in test.diagnostics_
