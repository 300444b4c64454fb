"""The two-sample tests of today (forestlab/learners/_modern_tests.py): C2ST, the two-stage test with a classifier's
score (c2st_wilcoxon) and MMDAgg: their nulls against brute force, their level on null samples, their power on a
shift, determinism. The two-sample-test contract itself is checked for every registered and configured test in
tests/test_learners_common.py."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from forestlab.learners import C2STTest, ClassifierWilcoxonTest, MMDAggTest, get_entry
from forestlab.learners._modern_tests import held_out_accuracy_test, mmdagg_bandwidths, mmdagg_weights
from forestlab.learners._two_sample import mmd2_unbiased, rank_sum_test
from tests.conftest import shifted_samples

SMALL_FOREST = {"n_estimators": 10}


def _make_tests(seed: int) -> dict[str, object]:
    return {
        "c2st": C2STTest(classifier_params=SMALL_FOREST, random_state=seed),
        "c2st_wilcoxon": ClassifierWilcoxonTest(classifier_params=SMALL_FOREST, random_state=seed),
        "mmd_agg": MMDAggTest(number_bandwidths=4, n_permutations=100, random_state=seed),
    }


def test_registered_under_their_names():
    assert get_entry("c2st").cls is C2STTest and get_entry("c2st_wilcoxon").cls is ClassifierWilcoxonTest
    assert get_entry("mmd_agg").cls is MMDAggTest
    assert {get_entry(n).task for n in ("c2st", "c2st_wilcoxon", "mmd_agg")} == {"two_sample_test"}


# ---------------------------------------------------------------------------------------------------------------
# C2ST's null: the permutation law of the held-out labels, by enumeration
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_exact_null_is_the_law_of_every_relabelling_of_the_held_out_points(seed):
    rng = np.random.default_rng(seed)
    n1, m1 = rng.integers(2, 7, size=2)
    pred = rng.random(n1 + m1) < rng.uniform(0.2, 0.8)
    observed = held_out_accuracy_test(pred[:n1], pred[n1:])
    accuracies = []
    for chosen in combinations(range(n1 + m1), n1):  # every relabelling: which held-out points are "a"
        is_a = np.zeros(n1 + m1, dtype=bool)
        is_a[list(chosen)] = True
        accuracies.append(np.mean(pred == is_a))
    accuracies = np.array(accuracies)
    assert observed.statistic == pytest.approx(np.mean(pred == np.r_[np.ones(n1), np.zeros(m1)].astype(bool)))
    assert observed.p_value == pytest.approx(np.mean(accuracies >= observed.statistic - 1e-12))


def test_binomial_null_is_the_papers():
    pred_a, pred_b = np.r_[np.ones(14, bool), np.zeros(6, bool)], np.r_[np.ones(5, bool), np.zeros(15, bool)]
    result = held_out_accuracy_test(pred_a, pred_b, "binomial")
    assert result.statistic == pytest.approx(29 / 40)
    assert result.p_value == pytest.approx(stats.binomtest(29, 40, 0.5, alternative="greater").pvalue)
    with pytest.raises(ValueError, match="null_distribution"):
        held_out_accuracy_test(pred_a, pred_b, "normal")


def test_the_exact_null_holds_its_level_where_the_binomial_one_does_not():
    """Unequal held-out sizes and a classifier that predicts the larger sample's label: under H0 it is right more
    than half the time, which the binomial null reads as evidence; the exact null does not."""
    pred_a, pred_b = np.r_[np.ones(57, bool), np.zeros(3, bool)], np.r_[np.ones(19, bool), np.zeros(1, bool)]
    assert held_out_accuracy_test(pred_a, pred_b, "binomial").p_value < 1e-4
    assert held_out_accuracy_test(pred_a, pred_b, "exact").p_value > 0.05


def test_c2st_and_c2st_wilcoxon_share_split_and_classifier():
    X_a, X_b = shifted_samples(1, 70, 60, shift=0.5)
    c2st = C2STTest(random_state=4)
    wmw = ClassifierWilcoxonTest(random_state=4)
    acc = c2st.test(X_a, X_b)
    w = wmw.test(X_a, X_b)
    assert c2st.n_test_ == wmw.n_test_ == (35, 30)
    assert c2st.auc_ == wmw.auc_
    for s, t in zip(c2st.held_out_scores_, wmw.held_out_scores_, strict=True):
        np.testing.assert_array_equal(s, t)
    # the second stages: accuracy at ½ of the scores, and the thesis's rank sum of the same scores
    score_a, score_b = wmw.held_out_scores_
    assert acc == held_out_accuracy_test(score_a > 0.5, score_b > 0.5)
    expected, used, _ = rank_sum_test(score_a, score_b)
    assert (w.statistic, w.p_value, wmw.method_) == (expected.statistic, expected.p_value, used)
    n1, m1 = wmw.n_test_
    assert wmw.auc_ == pytest.approx((w.statistic - n1 * (n1 + 1) / 2) / (n1 * m1))
    assert wmw.diagnostics_["held_out_auc"] == wmw.auc_ and c2st.diagnostics_["held_out_accuracy"] == acc.statistic


def test_classifier_options_and_bad_parameters():
    X_a, X_b = shifted_samples(2, 60, 60, shift=1.0)
    hgb = C2STTest(classifier="hist_gradient_boosting", classifier_params={"max_iter": 30, "min_samples_leaf": 5},
                   random_state=0)
    assert hgb.test(X_a, X_b).p_value < 0.05
    assert type(hgb.classifier_).__name__ == "HistGradientBoostingClassifier"
    for bad, message in [
        (C2STTest(classifier_params={"n_estimator": 5}), "classifier_params"),
        (C2STTest(classifier_params={"random_state": 1}), "classifier_params"),
        (C2STTest(classifier="hist_gradient_boosting", classifier_params={"n_estimators": 5}), "n_estimators"),
        (C2STTest(null_distribution="normal"), "null_distribution"),
        (C2STTest(train_fraction=1.0), "train_fraction"),
        (ClassifierWilcoxonTest(method="wald"), "method"),
        (MMDAggTest(number_bandwidths=1), "number_bandwidths"),
        (MMDAggTest(kernel="imq"), "kernel"),
        (MMDAggTest(weights_type="flat"), "weights_type"),
    ]:
        with pytest.raises(ValueError, match=message):
            bad.test(X_a, X_b)


def test_classifier_tests_share_one_fit_per_sample_and_seed():
    """c2st then c2st_wilcoxon on one sample with one integer random_state: one forest, the same as a fresh fit."""
    from forestlab.learners import _modern_tests

    X_a, X_b = shifted_samples(8, 60, 50, shift=0.5)
    _modern_tests._SHARED_FITS.clear()
    c2st, wmw = C2STTest(classifier_params=SMALL_FOREST, random_state=3), ClassifierWilcoxonTest(
        classifier_params=SMALL_FOREST, random_state=3, method="permutation", n_permutations=200)
    c2st.test(X_a, X_b)
    shared = wmw.test(X_a, X_b)
    assert wmw.classifier_ is c2st.classifier_ and len(_modern_tests._SHARED_FITS) == 1
    _modern_tests._SHARED_FITS.clear()
    fresh = ClassifierWilcoxonTest(classifier_params=SMALL_FOREST, random_state=3, method="permutation",
                                   n_permutations=200)
    assert fresh.test(X_a, X_b) == shared and fresh.auc_ == wmw.auc_  # same split, forest and relabellings
    # another sample, parameter or seed: another fit
    C2STTest(classifier_params={"n_estimators": 11}, random_state=3).test(X_a, X_b)
    C2STTest(classifier_params=SMALL_FOREST, random_state=3).test(X_a[1:], X_b)
    assert len(_modern_tests._SHARED_FITS) == _modern_tests._SHARED_FITS_SIZE


# ---------------------------------------------------------------------------------------------------------------
# MMDAgg's pieces
# ---------------------------------------------------------------------------------------------------------------
def test_bandwidth_collection_and_weights():
    lams = mmdagg_bandwidths([0.5, 1.0, 3.0], 5)
    assert lams[0] == pytest.approx(0.25) and lams[-1] == pytest.approx(6.0)
    assert np.allclose(np.diff(np.log(lams)), np.log(24) / 4)  # geometric
    # near-duplicates: half the 5 % quantile, at least 0.05
    d = np.r_[np.zeros(10), np.linspace(1.0, 2.0, 190)]
    assert mmdagg_bandwidths(d, 3)[0] == pytest.approx(max(np.sort(d)[10], 0.1) / 2)
    for kind in ("uniform", "decreasing", "increasing", "centred"):
        w = mmdagg_weights(6, kind)
        assert w.sum() == pytest.approx(1.0) and (w > 0).all()
    assert (np.diff(mmdagg_weights(6, "decreasing")) < 0).all() and (np.diff(mmdagg_weights(6, "increasing")) > 0).all()
    assert mmdagg_weights(5, "centred").argmax() == 2


def test_mmdagg_statistics_are_the_unbiased_mmd_of_each_kernel():
    X_a, X_b = shifted_samples(3, 25, 18, q=2, shift=0.4)
    test = MMDAggTest(number_bandwidths=3, n_permutations=50, random_state=0)
    result = test.test(X_a, X_b)
    Z = np.vstack([X_a, X_b])
    expected = []
    for family in ("laplace", "gaussian"):
        for lam in test.bandwidths_[family]:
            if family == "laplace":
                K = np.exp(-np.abs(Z[:, None, :] - Z[None, :, :]).sum(-1) / lam)
            else:
                K = np.exp(-((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1) / lam ** 2)
            expected.append(mmd2_unbiased(K, len(X_a)))
    np.testing.assert_allclose(test.statistics_, expected, rtol=1e-10, atol=1e-12)
    # the aggregate: T(0) = min over kernels of p / w, and its p-value counts T(0) itself
    assert result.statistic == pytest.approx(np.min(test.single_p_values_ / test.weights_))
    assert result.p_value == pytest.approx((1 + np.count_nonzero(test.null_statistics_ <= result.statistic)) / 51)
    assert test.weights_.sum() == pytest.approx(1.0) and test.diagnostics_["n_kernels"] == 6


def test_block_products_give_the_full_products_statistics():
    """The blocks on and below the diagonal (half the work) give every relabelling's MMD² of the full product."""
    from scipy.spatial.distance import cdist

    from forestlab.learners._modern_tests import _mmd2_u_kernels
    from forestlab.learners._two_sample import _mmd2_u_columns

    rng = np.random.default_rng(0)
    Z, m = rng.normal(size=(300, 3)), 130
    labels = np.zeros((300, 41))
    labels[:m, 0] = 1.0
    for c in range(1, 41):
        labels[rng.permutation(300)[:m], c] = 1.0
    for metric, squared in (("cityblock", False), ("euclidean", True)):
        lams = np.array([0.5, 2.0, 8.0])
        got = _mmd2_u_kernels(Z, m, labels, metric, squared, lams)
        D = cdist(Z, Z, metric) ** (2 if squared else 1)
        for k, lam in enumerate(lams):
            K = np.exp(-D / lam ** (2 if squared else 1))
            want = _mmd2_u_columns(K, K.sum(axis=1), float(K.sum()), labels, m, 300 - m)
            np.testing.assert_allclose(got[k], want, rtol=1e-9, atol=1e-13)


# ---------------------------------------------------------------------------------------------------------------
# Level, power, determinism
# ---------------------------------------------------------------------------------------------------------------
def test_level_under_the_null():
    """200 null samples (40 + 40 points, unequal 50 + 30 for half of them): each test's rejection count at 5 % is
    inside the 99 % binomial band around 10."""
    n_rep = 200
    rejections = dict.fromkeys(_make_tests(0), 0)
    with threadpool_limits(1):
        for rep in range(n_rep):
            X_a, X_b = shifted_samples(30_000 + rep, 40, 40) if rep % 2 else shifted_samples(30_000 + rep, 50, 30)
            for name, test in _make_tests(rep).items():
                rejections[name] += test.test(X_a, X_b).p_value <= 0.05
    low, high = stats.binom.interval(0.99, n_rep, 0.05)
    for name, count in rejections.items():
        assert low <= count <= high, (name, count, (low, high))


def test_power_above_the_level_on_a_shift():
    n_rep = 20
    rejections = dict.fromkeys(_make_tests(0), 0)
    with threadpool_limits(1):
        for rep in range(n_rep):
            X_a, X_b = shifted_samples(40_000 + rep, 60, 60, shift=0.6)
            for name, test in _make_tests(rep).items():
                rejections[name] += test.test(X_a, X_b).p_value <= 0.05
    for name, count in rejections.items():
        assert count / n_rep >= 0.5, (name, count)


def test_deterministic_given_random_state():
    X_a, X_b = shifted_samples(5, 50, 45, shift=0.3)
    for name, test in _make_tests(7).items():
        again = _make_tests(7)[name]
        assert test.test(X_a, X_b) == again.test(X_a, X_b), name
    # another seed: another split, other relabellings
    a, b = C2STTest(random_state=1), C2STTest(random_state=2)
    a.test(X_a, X_b)
    b.test(X_a, X_b)
    assert a.auc_ != b.auc_
    m1, m2 = MMDAggTest(n_permutations=50, random_state=1), MMDAggTest(n_permutations=50, random_state=2)
    m1.test(X_a, X_b)
    m2.test(X_a, X_b)
    assert not np.array_equal(m1.null_statistics_, m2.null_statistics_)


def test_smallest_samples_work():
    X_a, X_b = shifted_samples(6, 2, 2)
    for test in _make_tests(0).values():
        assert 0 < test.test(X_a, X_b).p_value <= 1
