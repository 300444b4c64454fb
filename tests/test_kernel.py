"""The forest kernel (pisetta2010 §3.2), the forest-kernel SVM and the RBF SVM extension, and the pisetta2010_table1
experiment end to end.

scikit-learn's common estimator checks for these learners run in tests/test_learners_common.py (every registered
learner)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.svm import SVC

from forestlab.learners import RBFSVC, BreimanForestClassifier, ForestKernelSVC, forest_kernel, get_learner
from forestlab.learners._cache import FitCache
from forestlab.learners._kernel import (
    inner_split,
    kernel_target_alignment,
    leaf_indicators,
    leaf_kernel,
    select_by_validation,
)
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=160, n_features=8, n_informative=4, flip_y=0.05, random_state=1)
    return X, 2 * y - 1


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return BreimanForestClassifier(n_estimators=15, max_features="round_sqrt", random_state=0).fit(X[:120], y[:120])


def _brute_force(forest, A, B):
    la, lb = forest.forest_.apply(A), forest.forest_.apply(B)
    K = np.zeros((len(A), len(B)))
    for i in range(len(A)):
        for j in range(len(B)):
            K[i, j] = np.sum(la[i] == lb[j])
    return K


# ---------------------------------------------------------------------------------------------------------------
# the kernel
# ---------------------------------------------------------------------------------------------------------------
def test_kernel_equals_brute_force_pair_count(data, forest):
    X, _ = data
    A, B = X[:40], X[120:]
    np.testing.assert_array_equal(forest_kernel(forest, A, B), _brute_force(forest, A, B))
    np.testing.assert_array_equal(forest_kernel(forest, A), _brute_force(forest, A, A))


def test_kernel_is_symmetric_psd_with_diagonal_n_trees(data, forest):
    K = forest_kernel(forest, data[0])
    assert np.array_equal(K, K.T)
    assert np.all(K.diagonal() == 15)
    assert np.linalg.eigvalsh(K).min() > -1e-8 * K.shape[0] * 15
    assert K.min() >= 0 and K.max() <= 15 and np.all(K == np.round(K))


def test_normalised_kernel_is_breiman_proximity_in_unit_interval(data, forest):
    X, _ = data
    P = forest_kernel(forest, X, normalize=True)
    np.testing.assert_allclose(P, forest_kernel(forest, X) / 15)
    assert P.min() >= 0 and P.max() <= 1 and np.allclose(P.diagonal(), 1)


def test_leaf_indicators_are_one_hot_per_tree(data, forest):
    phi = leaf_indicators(forest, data[0][:10])
    assert phi.shape[0] == 10 and np.all(np.diff(phi.indptr) == 15)
    np.testing.assert_array_equal(leaf_kernel(phi), (phi @ phi.T).toarray())


def test_compiled_counts_are_the_sparse_product_bit_for_bit(data, forest):
    X, _ = data
    phi_a, phi_b = leaf_indicators(forest, X[:50]), leaf_indicators(forest, X[40:])
    for scale in ("count", "proximity"):
        want = (phi_a @ phi_b.T).toarray() / (15.0 if scale == "proximity" else 1.0)
        got = leaf_kernel(phi_a, phi_b, n_trees=15, scale=scale)
        assert got.dtype == np.float64 and np.array_equal(got, want)
    weighted = phi_a.multiply(0.5).tocsr()  # not 0/1: the sparse product
    np.testing.assert_array_equal(leaf_kernel(weighted, phi_b), (weighted @ phi_b.T).toarray())
    with pytest.raises(ValueError, match="different forests"):
        leaf_kernel(phi_a, phi_b[:, :-1])


def test_kernel_target_alignment_binary_and_multiclass():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(30, 5))
    K = F @ F.T
    y = rng.choice([-1, 1], size=30)
    expected = (y @ K @ y) / (30 * np.linalg.norm(K))  # pisetta2010 §2.2
    assert kernel_target_alignment(K, y) == pytest.approx(expected)
    assert kernel_target_alignment(7 * K, y) == pytest.approx(expected)  # scale invariant
    ideal = np.outer(y, y).astype(float)
    assert kernel_target_alignment(ideal, y) == pytest.approx(1.0)
    y3 = rng.integers(0, 3, size=30)
    T = (y3[:, None] == y3[None, :]).astype(float)
    assert kernel_target_alignment(K, y3) == pytest.approx(np.sum(K * T) / (np.linalg.norm(K) * np.linalg.norm(T)))
    assert kernel_target_alignment(T, y3) == pytest.approx(1.0)


def test_single_pure_tree_separates_the_training_set():
    """Prop. 1 (H004-2): one tree grown to pure leaves on all the points makes the classes linearly separable in
    its leaf space; an SVM with a large C on its kernel classifies the training set perfectly."""
    X, y = make_classification(n_samples=150, n_features=6, flip_y=0.2, random_state=3)
    tree = BreimanForestClassifier(n_estimators=1, bootstrap=False, max_features="all", random_state=0).fit(X, y)
    K = forest_kernel(tree, X)
    svc = SVC(C=1e6, kernel="precomputed").fit(K, y)
    assert np.all(svc.predict(K) == y)


def test_majority_vote_is_a_hyperplane_in_leaf_space(data, forest):
    """Prop. 3 (H004-3): the hard vote is sign(sum_j alpha_j T_j(x)), alpha = +1 / -1 from each leaf's majority."""
    X, _ = data
    sk = forest.forest_
    alpha = np.concatenate([np.where(est.tree_.value[:, 0, :].argmax(axis=1) == 1, 1.0, -1.0)
                            for est in sk.estimators_])
    score = leaf_indicators(forest, X[120:]) @ alpha
    vote = np.where(score > 0, 1, -1)  # ties go to -1, as BreimanForestClassifier.predict
    np.testing.assert_array_equal(vote, forest.predict(X[120:]))


# ---------------------------------------------------------------------------------------------------------------
# ForestKernelSVC / RBFSVC
# ---------------------------------------------------------------------------------------------------------------
def test_forest_svm_shares_the_vote_forest_through_the_cache(data):
    X, y = data
    cache = FitCache()
    rf = cache.fit(BreimanForestClassifier(n_estimators=20, max_features="round_sqrt", random_state=7), X, y)
    svm = ForestKernelSVC(n_estimators=20, random_state=7).fit(X, y, fit_cache=cache)
    assert svm.forest_ is rf
    assert cache.misses == 2 and cache.hits == 1  # the inner forest, then the shared one
    assert svm.selected_params_ == {"C": svm.C_} and svm.C_ in (1, 10, 100, 10000)
    assert set(svm.diagnostics_) >= {"kta_forest", "kta_forest_val", "log10_C", "val_accuracy", "sv_fraction"}


def test_inner_forest_learns_from_the_inner_part_only(data):
    X, y = data
    cache = FitCache()
    svm = ForestKernelSVC(n_estimators=10, random_state=3).fit(X, y, fit_cache=cache)
    sizes = sorted(est.train_tree_predictions_.shape[1] for est in cache._fitted.values())
    learn, val = inner_split(np.unique(y, return_inverse=True)[1], 0.7, _split_seed(3))
    assert sizes == [len(learn), len(y)] and len(learn) + len(val) == len(y)
    assert np.isfinite(svm.validation_accuracy_).all()


def _split_seed(random_state: int) -> int:
    from forestlab.learners._kernel import derived_seeds

    return derived_seeds(random_state, 2)[1][0]


def test_validation_is_honest_on_random_labels():
    """With labels independent of X, the inner validation accuracy stays near chance: validation points never grew
    the trees that score them (reusing the full forest's Gram matrix would give ~0.8 here)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = rng.choice([-1, 1], size=300)
    svm = ForestKernelSVC(n_estimators=30, random_state=0).fit(X, y)
    assert np.all(svm.validation_accuracy_ < 0.65)


def test_selected_c_depends_only_on_the_training_part(data):
    X, y = data
    a = ForestKernelSVC(n_estimators=10, random_state=5).fit(X[:120], y[:120])
    b = ForestKernelSVC(n_estimators=10, random_state=5).fit(X[:120].copy(), y[:120].copy())
    a.predict(X[120:])
    b.predict(X[::-1])  # different test points: nothing in the fitted state changes
    assert a.C_ == b.C_ and np.array_equal(a.validation_accuracy_, b.validation_accuracy_)
    np.testing.assert_array_equal(a.decision_function(X[120:]), b.decision_function(X[120:]))


def test_forest_svm_is_deterministic_and_seeded(data):
    X, y = data
    p1 = ForestKernelSVC(n_estimators=10, random_state=11).fit(X, y).decision_function(X)
    p2 = ForestKernelSVC(n_estimators=10, random_state=11).fit(X, y).decision_function(X)
    p3 = ForestKernelSVC(n_estimators=10, random_state=12).fit(X, y).decision_function(X)
    np.testing.assert_array_equal(p1, p2)
    assert not np.array_equal(p1, p3)


def test_count_and_proximity_kernels_differ_only_by_c_scale(data):
    X, y = data
    count = ForestKernelSVC(n_estimators=10, C_grid=(30.0,), random_state=2).fit(X, y)
    prox = ForestKernelSVC(n_estimators=10, C_grid=(300.0,), kernel_scale="proximity", random_state=2).fit(X, y)
    np.testing.assert_array_equal(count.predict(X), prox.predict(X))
    np.testing.assert_allclose(count.decision_function(X), prox.decision_function(X), atol=1e-6)


def test_error_curves_give_accuracy_by_c(data):
    X, y = data
    svm = ForestKernelSVC(n_estimators=10, random_state=0).fit(X[:120], y[:120])
    out = svm.error_curves(X[120:], y[120:])
    assert out["C_grid"].tolist() == [1, 10, 100, 10000]
    chosen = out["test_accuracy_by_C"][out["C_grid"].tolist().index(svm.C_)]
    assert chosen == pytest.approx(np.mean(svm.predict(X[120:]) == y[120:]))


def test_multiclass_one_vs_one():
    X, y = load_iris(return_X_y=True)
    for est in (ForestKernelSVC(n_estimators=10, random_state=0), RBFSVC(random_state=0)):
        est.fit(X, y)
        assert est.decision_function(X).shape == (150, 3)
        assert np.mean(est.predict(X) == y) > 0.9
        assert np.isfinite(list(est.diagnostics_.values())).all()


def test_rbf_svm_selects_on_the_inner_split(data):
    X, y = data
    est = RBFSVC(C_grid=(1, 100), gamma_grid=(0.1, 1.0), random_state=0).fit(X, y)
    assert est.validation_accuracy_.shape == (2, 2)
    assert est.selected_params_["C"] in (1, 100) and est.selected_params_["gamma_factor"] in (0.1, 1.0)
    assert est.gamma_ == pytest.approx(est.selected_params_["gamma_factor"] / X.shape[1])
    assert -1 <= est.diagnostics_["kta_rbf"] <= 1


def test_select_by_validation_prefers_the_first_on_ties():
    assert select_by_validation([0.8, 0.9, 0.9, 0.7]) == 1
    assert select_by_validation([0.5, 0.5]) == 0


def test_bad_parameters_raise(data):
    X, y = data
    with pytest.raises(ValueError, match="kernel_scale"):
        ForestKernelSVC(kernel_scale="cosine").fit(X, y)
    with pytest.raises(ValueError, match="C_grid"):
        ForestKernelSVC(C_grid=(0,)).fit(X, y)
    with pytest.raises(ValueError, match="one class"):
        ForestKernelSVC(n_estimators=3).fit(X, np.ones(len(y)))


def test_registry_names():
    assert get_learner("forest_svm") is ForestKernelSVC
    assert get_learner("rbf_svm") is RBFSVC


# ---------------------------------------------------------------------------------------------------------------
# the experiment
# ---------------------------------------------------------------------------------------------------------------
def test_table1_config_composes_and_plans():
    from forestlab.config import compose
    from forestlab.runner import group_specs, plan

    cfg = compose(["experiment=pisetta2010_table1"])
    specs = plan(cfg)
    assert len(specs) == 12 * 4 * 20
    assert {s.algorithm for s in specs} == {"rf_pisetta", "forest_svm", "forest_svm_prox", "rbf_svm"}
    by_alg = {s.algorithm: s.identity["learner"] for s in specs}
    assert by_alg["rf_pisetta"]["seed_tag"] == by_alg["forest_svm"]["seed_tag"] == by_alg["forest_svm_prox"][
        "seed_tag"]
    forest_keys = ("n_estimators", "max_features", "max_depth", "min_samples_leaf", "bootstrap", "criterion")
    assert all(by_alg["forest_svm"]["params"][k] == by_alg["rf_pisetta"]["params"][k] for k in forest_keys)
    assert specs[0].identity["protocol"]["train_size"] == 0.7 and specs[0].identity["protocol"]["stratify"]
    # one job per split holds the vote and both forest-kernel SVMs (they share the trees)
    assert max(len(g) for g in group_specs(specs)) == 3


@pytest.mark.slow
def test_table1_smoke_end_to_end(workdir, mirror):
    """``forestlab run`` through the CLI (a subprocess), then tables, figures and compare in-process."""
    from typer.testing import CliRunner

    from forestlab.cli import app

    proc = run_cli("run", "experiment=pisetta2010_table1", "debug=smoke", "seeds=2", "--quiet")
    assert proc.returncode == 0, proc.stderr
    for cmd in ("tables", "figures", "compare"):
        res = CliRunner().invoke(app, [cmd, "pisetta2010_table1", "debug=smoke", "seeds=2"])
        assert res.exit_code == 0, res.output
    tables = workdir / "results" / "tables" / "pisetta2010_table1-smoke"  # apart from the real tables
    text = (tables / "table1.md").read_text()
    assert "SVM + forest kernel" in text and "paired two-sided t-test" in text
    assert (tables / "table1_extensions.md").exists() and (tables / "table1_by_C.md").exists()
    assert (workdir / "results" / "figures" / "pisetta2010_table1-smoke" / "table1_differences.png").stat().st_size > 0
    assert "pisetta_svm_significant_wins" in res.output and "published vs reproduced" in res.output
