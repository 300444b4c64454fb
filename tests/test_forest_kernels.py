"""The forest kernels of today beside Breiman's (forestlab/learners/_kernel.py): KeRF and RF-GAP from the same trees,
checked against brute force, RF-GAP's defining identity (its proximity-weighted vote is the forest's out-of-bag
vote), and the forest-kernel SVM on them (forest_svm_kerf, forest_svm_rfgap)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from forestlab.config import compose, to_container
from forestlab.learners import BreimanForestClassifier, ForestKernelSVC
from forestlab.learners._kernel import inbag_counts, kerf_kernel, leaf_indicators, rfgap_kernel


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=160, n_features=6, n_informative=3, random_state=0)
    return X[:120], y[:120], X[120:], y[120:]


def _brute_leaves(forest, X):
    return np.stack([est.apply(X.astype(np.float32)) for est in forest.estimators_], axis=1)  # (n, M)


# ---------------------------------------------------------------------------------------------------------------
# RF-GAP
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("min_samples_leaf", [1, 5])
def test_rfgap_vote_is_the_forests_oob_prediction(data, min_samples_leaf):
    """RF-GAP's defining identity, with the trees of scikit-learn's forest: sum_j p(i, j) 1[y_j = k] is the forest's
    out-of-bag probability of class k (scikit-learn's oob_decision_function_, computed by its own code)."""
    X, y, _, _ = data
    rf = RandomForestClassifier(n_estimators=60, min_samples_leaf=min_samples_leaf, oob_score=True,
                                random_state=1).fit(X, y)
    phi = leaf_indicators(rf, X)
    P = rfgap_kernel(phi, phi, inbag_counts(rf, len(X)), oob_of_train=True)
    vote = P @ np.eye(2)[y]
    np.testing.assert_allclose(vote, rf.oob_decision_function_, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert (np.diag(P) == 0).all()


def test_rfgap_vote_is_the_oob_vote_of_the_svms_forest(data):
    """The same with the forest ForestKernelSVC grows (BreimanForestClassifier, trees to pure leaves: a leaf's
    class fraction is its class, so the proximity-weighted vote is the hard out-of-bag vote share)."""
    X, y, _, _ = data
    rf = BreimanForestClassifier(n_estimators=50, max_features="round_sqrt", random_state=3).fit(X, y)
    phi = leaf_indicators(rf, X)
    P = rfgap_kernel(phi, phi, inbag_counts(rf, len(X)), oob_of_train=True)
    vote = P @ np.eye(2)[y]
    np.testing.assert_allclose(vote[:, 1] - vote[:, 0], rf.oob_decision_, atol=1e-12)


def test_rfgap_matches_its_definition_by_brute_force(data):
    X, y, X_new, _ = data
    rf = BreimanForestClassifier(n_estimators=15, min_samples_leaf=3, random_state=2).fit(X, y)
    c = inbag_counts(rf, len(X))
    assert (c.sum(axis=1) == len(X)).all()  # bootstrap samples of n draws
    leaves, leaves_new = _brute_leaves(rf, X), _brute_leaves(rf, X_new)
    M, n = c.shape

    def brute(q_leaves, trees_of):
        P = np.zeros((len(q_leaves), n))
        for i, row in enumerate(q_leaves):
            S = trees_of(i)
            for t in S:
                mates = leaves[:, t] == row[t]
                P[i] += c[t] * mates / (c[t] * mates).sum()
            P[i] /= max(len(S), 1)
        return P

    phi, phi_new = leaf_indicators(rf, X), leaf_indicators(rf, X_new)
    np.testing.assert_allclose(rfgap_kernel(phi, phi, c, oob_of_train=True),
                               brute(leaves, lambda i: np.flatnonzero(c[:, i] == 0)), atol=1e-12)
    np.testing.assert_allclose(rfgap_kernel(phi_new, phi, c), brute(leaves_new, lambda i: np.arange(M)), atol=1e-12)


def test_rfgap_needs_bootstrap(data):
    X, y, _, _ = data
    with pytest.raises(ValueError, match="bootstrap=True"):
        ForestKernelSVC(n_estimators=5, bootstrap=False, forest_kernel="rfgap", random_state=0).fit(X, y)
    rf = BreimanForestClassifier(n_estimators=5, bootstrap=False, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="bootstrap"):
        inbag_counts(rf, len(X))


# ---------------------------------------------------------------------------------------------------------------
# KeRF
# ---------------------------------------------------------------------------------------------------------------
def test_kerf_matches_its_formula_by_brute_force(data):
    """K(x, x_j) = sum_t 1[x_j in A_t(x)] / sum_t N_t(x), N_t(x) = the training points in x's leaf of tree t."""
    X, y, X_new, _ = data
    rf = BreimanForestClassifier(n_estimators=12, min_samples_leaf=2, random_state=5).fit(X, y)
    leaves = _brute_leaves(rf, X)
    for Q in (X, X_new):
        q_leaves = _brute_leaves(rf, Q)
        expected = np.zeros((len(Q), len(X)))
        for i in range(len(Q)):
            same = leaves == q_leaves[i]                         # (n, M): x_j in A_t(x_i)
            cells = sum(same[:, t].sum() for t in range(same.shape[1]))
            expected[i] = same.sum(axis=1) / cells
        K = kerf_kernel(leaf_indicators(rf, Q), leaf_indicators(rf, X))
        np.testing.assert_allclose(K, expected, atol=1e-14)
        np.testing.assert_allclose(K.sum(axis=1), 1.0)


# ---------------------------------------------------------------------------------------------------------------
# The SVM on them
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["kerf", "rfgap"])
@pytest.mark.parametrize("scale", ["count", "proximity"])
def test_svm_reads_the_kernel_from_the_same_trees(data, kind, scale):
    X, y, X_new, y_new = data
    svm = ForestKernelSVC(n_estimators=40, forest_kernel=kind, kernel_scale=scale, C_grid=(1, 100),
                          random_state=4).fit(X, y)
    breiman = ForestKernelSVC(n_estimators=40, C_grid=(1, 100), random_state=4).fit(X, y)
    np.testing.assert_array_equal(svm.forest_.forest_.apply(X_new.astype(np.float32)),
                                  breiman.forest_.forest_.apply(X_new.astype(np.float32)))
    phi, phi_new = leaf_indicators(svm.forest_, X), leaf_indicators(svm.forest_, X_new)
    if kind == "kerf":
        K_new, K_train = kerf_kernel(phi_new, phi), kerf_kernel(phi, phi)
    else:
        c = inbag_counts(svm.forest_, len(X))
        K_new, K_train = rfgap_kernel(phi_new, phi, c), rfgap_kernel(phi, phi, c, oob_of_train=True)
    factor = 40.0 if scale == "count" else 1.0
    # a new point's kernel row enters the decision function as defined; the SVM learnt on the symmetric part
    np.testing.assert_allclose(svm.kernel(X_new), factor * K_new)
    np.testing.assert_allclose(svm.decision_function(X_new), svm.svc_.decision_function(factor * K_new))
    np.testing.assert_allclose(svm._train_gram(), factor * (K_train + K_train.T) / 2)
    assert svm.diagnostics_["kernel_asymmetry"] > 0
    assert svm.score(X_new, y_new) >= 0.75
    curves = svm.error_curves(X_new, y_new)
    assert curves["test_accuracy_by_C"].shape == (2,)
    assert curves["test_accuracy_by_C"][list(curves["C_grid"]).index(svm.C_)] == svm.score(X_new, y_new)
    with pytest.raises(ValueError, match="without Y"):
        svm.kernel(X_new, X)


def test_svm_on_the_new_kernels_is_deterministic(data):
    X, y, X_new, _ = data
    for kind in ("kerf", "rfgap"):
        a = ForestKernelSVC(n_estimators=20, forest_kernel=kind, random_state=9).fit(X, y)
        b = ForestKernelSVC(n_estimators=20, forest_kernel=kind, random_state=9, n_jobs=2).fit(X, y)
        np.testing.assert_array_equal(a.decision_function(X_new), b.decision_function(X_new))
        assert a.C_ == b.C_


def test_the_default_kernel_is_breimans_and_old_configs_keep_their_params():
    """forest_kernel defaults to Breiman's, so forest_svm and forest_svm_prox (which do not set it) keep their
    parameters, hence their run keys; the new configs differ from forest_svm by forest_kernel only."""
    assert ForestKernelSVC().forest_kernel == "breiman"

    def params(name):
        return to_container(compose(["experiment=single", f"algorithm={name}"]).algorithm)

    old = params("forest_svm")
    assert "forest_kernel" not in old["params"] and "forest_kernel" not in params("forest_svm_prox")["params"]
    for kind in ("kerf", "rfgap"):
        new = params(f"forest_svm_{kind}")
        assert new["estimator"] == old["estimator"] and new["seed_tag"] == old["seed_tag"]
        assert {k: v for k, v in new["params"].items() if k != "forest_kernel"} == old["params"]
        assert new["params"]["forest_kernel"] == kind
