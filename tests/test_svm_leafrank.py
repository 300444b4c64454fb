"""The SVM LeafRank (depecker2010 §2.7) fits libsvm's model without SVC's wrapper (issue 24: the wrapper cost about
twice libsvm's own time on a forest's nodes), on a kernel matrix computed beforehand (``_svm_gram``: libsvm's per-pair
kernel calls were about half of its time), solved by libsvm's algorithm compiled (``_smo``: its scalar working-set
loop was most of the rest); these tests hold it to the same numbers as ``SVC``:

- the kernel matrix rounds to libsvm's single-precision entries, on data made to stress the bounds, and with the exact
  path forced everywhere; nodes too big for the matrix go through libsvm's own kernel to the same model;
- the model (support vectors, dual coefficients, intercept, linear coefficients) equals the one ``SVC`` fits on the
  same node problem, bit for bit, and so does the decision function on new points (against the expression the
  rule evaluated before it was computed in place);
- the compiled solver returns libsvm's own solution, bit for bit, on data made to tie (duplicated points, integer
  features), with few and many points at the bounds, and where ``max_iter`` stops it;
- trees and forests give the numbers pinned from main before the change (SVC's wrapper).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.svm import SVC

from forestlab.learners._ranking_forest import RankingForest
from forestlab.learners._treerank import TreeRank, _fit_libsvm, _svm_leafrank, _SVMRule


def gauss_easy(n: int, q: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """GaussEasy-like data: p = 1/2, positives N(mu+, I), negatives N(mu-, 10**0.1 I), |mu+ - mu-| = 1."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    shift = np.full(q, 0.5 / np.sqrt(q))
    X = np.where(y[:, None] == 1, rng.normal(size=(n, q)) + shift,
                 rng.normal(size=(n, q)) * np.sqrt(10 ** 0.1) - shift)
    return X, y


def _node_problem(seed: int, n: int, q: int, p: float, counts: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A node's data: points, positive mask and weights (bootstrap counts, or positive reals)."""
    rng = np.random.default_rng(seed)
    pos = rng.random(n) < p
    pos[:2] = [True, False]
    X = rng.normal(size=(n, q)) + 0.7 * pos[:, None] * (np.arange(q) % 2 == 0)
    if counts == "zeros":  # a bootstrap's multiplicities: about a third of the points drawn 0 times
        w = rng.poisson(1.0, n).astype(float)
        w[:2] = 1.0
    else:
        w = rng.integers(1, 4, n).astype(float) if counts else rng.uniform(0.2, 2.0, n)
    return X, pos, w


def assert_svcs_model(svm: SVC, support_vectors: np.ndarray, dual_coef: np.ndarray, intercept: float) -> None:
    """SVC's support vectors, dual coefficients and intercept, bit for bit (zeros' signs included)."""
    assert support_vectors.tobytes() == np.ascontiguousarray(svm.support_vectors_).tobytes()
    assert dual_coef.tobytes() == np.ascontiguousarray(svm.dual_coef_[0]).tobytes()
    assert np.float64(intercept).tobytes() == np.float64(svm.intercept_[0]).tobytes()


def _reference_decision(svm: SVC, X: np.ndarray) -> np.ndarray:
    """The decision function as the rule computed it from an ``SVC`` before (the expression written out)."""
    if svm.kernel == "linear":
        return X @ np.asarray(svm.coef_).ravel() + float(svm.intercept_[0])
    sv = np.ascontiguousarray(svm.support_vectors_)
    sv_norms = np.einsum("ij,ij->i", sv, sv)
    out = np.empty(len(X))
    for start in range(0, len(X), _SVMRule._CHUNK):  # in blocks, as the rule evaluated it
        block = X[start:start + _SVMRule._CHUNK]
        sq = np.einsum("ij,ij->i", block, block)[:, None] - 2.0 * (block @ sv.T) + sv_norms
        out[start:start + _SVMRule._CHUNK] = np.exp(-svm._gamma * np.maximum(sq, 0.0)) @ np.ascontiguousarray(
            svm.dual_coef_[0])
    return out + float(svm.intercept_[0])


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize(("seed", "n", "q", "p", "counts", "C", "gamma"), [
    (0, 150, 3, 0.5, True, 1.0, 0.3),
    (1, 400, 8, 0.2, False, 0.5, 0.05),
    (2, 60, 12, 0.7, True, 2.0, 1.0),
    (4, 700, 30, 0.4, "zeros", 1.0, 1 / 30),
])
def test_the_direct_libsvm_call_fits_svcs_model_bit_for_bit(kernel, seed, n, q, p, counts, C, gamma):
    X, pos, w = _node_problem(seed, n, q, p, counts)
    p_hat = float(w[pos].sum() / w.sum())
    svm = SVC(kernel=kernel, C=C, gamma=gamma, class_weight={1: 1.0 - p_hat, -1: p_hat})
    svm.fit(X, np.where(pos, 1, -1), sample_weight=w)
    support_vectors, dual_coef, intercept = _fit_libsvm(X, pos, w, kernel, C, gamma, p_hat)
    assert_svcs_model(svm, support_vectors, dual_coef, intercept)
    rule = _SVMRule(support_vectors, dual_coef, intercept, kernel == "linear", np.arange(q), gamma)
    if kernel == "linear":
        assert np.array_equal(rule.coef, np.asarray(svm.coef_).ravel())
    X_new = np.random.default_rng(seed + 100).normal(size=(300, q)) * 1.5
    for points in (X, X_new):
        assert np.array_equal(rule.decision(points), _reference_decision(svm, points))


def test_the_rbf_decision_is_the_same_in_blocks():
    """Points past one block of the in-place computation get the numbers the written-out expression gives."""
    X, pos, w = _node_problem(3, 200, 4, 0.5, True)
    p_hat = float(w[pos].sum() / w.sum())
    svm = SVC(kernel="rbf", gamma=0.25, class_weight={1: 1.0 - p_hat, -1: p_hat}).fit(X, np.where(pos, 1, -1),
                                                                                        sample_weight=w)
    rule = _SVMRule(*_fit_libsvm(X, pos, w, "rbf", 1.0, 0.25, p_hat), False, np.arange(4), 0.25)
    X_new = np.random.default_rng(4).normal(size=(2 * rule._CHUNK + 17, 4))
    assert np.array_equal(rule.decision(X_new), _reference_decision(svm, X_new))


def test_the_leafrank_standardises_then_fits_as_svc_on_the_standardised_node():
    X, pos, w = _node_problem(5, 250, 5, 0.4, True)
    rule = _svm_leafrank(X, pos, w, np.arange(5), "rbf", 1.0, "scale", scale=True)
    Z = (X - rule.center) / rule.scale_by
    p_hat = float(w[pos].sum() / w.sum())
    svm = SVC(kernel="rbf", gamma="scale", class_weight={1: 1.0 - p_hat, -1: p_hat}).fit(
        Z, np.where(pos, 1, -1), sample_weight=w)
    assert rule.gamma == svm._gamma
    assert np.array_equal(rule.support_vectors, svm.support_vectors_)
    assert np.array_equal(rule.side(X), svm.decision_function(Z) > 0)


#: Computed on main before the change (SVC's wrapper): TreeRank(leafrank="svm", max_depth=6, min_samples_split=30,
#: random_state=3, **params) on gauss_easy(400, q=6, seed=11): node count, leaves, train AUC, test AUC on
#: gauss_easy(300, q=6, seed=12) (12 digits).
PINNED_TREES = [
    ({"svm_kernel": "rbf"}, 33, 17, 0.8502243169674363, 0.64814979541),
    ({"svm_kernel": "linear"}, 39, 20, 0.7321302550660349, 0.727228251201),
    ({"svm_kernel": "rbf", "max_features": 3, "svm_gamma": "auto", "svm_C": 2.0}, 39, 20, 0.7764391571731022,
     0.65657801103),
    ({"svm_kernel": "linear", "svm_scale": False, "svm_C": 0.5}, 43, 22, 0.7297484625466277, 0.73527842021),
]
#: RankingForest(n_estimators=6, leafrank="svm", aggregation="mean_rank", min_samples_split=50, random_state=5,
#: **params), same data: leaves per tree, sha1 of the test scores rounded to 9 decimals, test AUC.
PINNED_FORESTS = [
    ({"svm_kernel": "rbf", "max_features": 0.25}, [11, 13, 13, 12, 15, 14], "4ad0144493c575ac", 0.682129514321),
    ({"svm_kernel": "linear"}, [12, 12, 11, 13, 13, 13], "bf1b1ae6bea02aab", 0.737235367372),
]


@pytest.fixture(scope="module")
def data():
    return gauss_easy(400, q=6, seed=11) + gauss_easy(300, q=6, seed=12)


@pytest.mark.parametrize(("params", "n_nodes", "n_leaves", "train_auc", "test_auc"), PINNED_TREES)
def test_svm_trees_keep_the_numbers_of_main(data, params, n_nodes, n_leaves, train_auc, test_auc):
    X, y, X_test, y_test = data
    tree = TreeRank(leafrank="svm", max_depth=6, min_samples_split=30, random_state=3, **params).fit(X, y)
    assert (tree.tree_.node_count, tree.n_leaves_, tree.train_auc_) == (n_nodes, n_leaves, train_auc)
    assert round(roc_auc_score(y_test, tree.decision_function(X_test)), 12) == test_auc


@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize(("params", "leaves", "digest", "test_auc"), PINNED_FORESTS)
def test_svm_forests_keep_the_numbers_of_main(data, params, leaves, digest, test_auc, n_jobs):
    X, y, X_test, y_test = data
    forest = RankingForest(n_estimators=6, leafrank="svm", aggregation="mean_rank", min_samples_split=50,
                           random_state=5, n_jobs=n_jobs, **params).fit(X, y)
    scores = forest.decision_function(X_test)
    assert forest.tree_n_leaves_.tolist() == leaves
    assert hashlib.sha1(np.round(scores, 9).tobytes()).hexdigest()[:16] == digest
    assert round(roc_auc_score(y_test, scores), 12) == test_auc


def _stress_points(seed: int, n: int, q: int) -> np.ndarray:
    """Rows of very different norms, near-duplicates and near-orthogonal pairs: where a dot product's rounding is
    largest against its value."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, q)) * rng.choice([1e-3, 1.0, 30.0], size=(n, 1))
    X[1::7] = X[::7][: len(X[1::7])] + 1e-9 * rng.normal(size=(len(X[1::7]), q))
    X[3] = 1.0
    X[4::11, 0] = -X[4::11, 1:].sum(axis=1)  # nearly orthogonal to the all-ones row X[3]
    return X


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize(("seed", "n", "q", "gamma"), [(0, 300, 5, 0.2), (1, 250, 40, 1 / 40), (2, 120, 1, 3.0)])
def test_the_kernel_matrix_rounds_to_libsvms_entries(kernel, seed, n, q, gamma):
    """Every off-diagonal entry rounds to the same float32 as libsvm's own kernel's (computed here entry by entry
    libsvm's way, by forcing the exact path with a huge slack), and the diagonal is libsvm's in float64."""
    from forestlab.learners._svm_gram import _bound, _dot_terms, libsvm_gram

    X = _stress_points(seed, n, q)
    fast, n_exact = libsvm_gram(X, kernel, gamma)
    exact, n_all = libsvm_gram(X, kernel, gamma, slack=1e250)
    off_diagonal = ~np.eye(n, dtype=bool)
    # the forced path computed every entry libsvm's way but those that round to a float32 0 (0 either way)
    assert n_all >= np.count_nonzero(exact[off_diagonal].astype(np.float32)) > n_exact
    assert np.array_equal(fast.astype(np.float32), exact.astype(np.float32))
    assert np.array_equal(np.diag(fast), np.diag(exact))
    # the bound itself, without the default's doubling, holds the product's distance to libsvm's values
    raw, _ = libsvm_gram(X, kernel, gamma, slack=0.0)  # nothing computed libsvm's way but the diagonal
    sq = np.diag(exact) if kernel == "linear" else np.einsum("ij,ij->i", X, X)
    c_dot, norms = _dot_terms(sq, q)
    pairs = np.random.default_rng(seed).integers(0, n, size=(3000, 2))
    for i, j in pairs[pairs[:, 0] != pairs[:, 1]]:
        bound = _bound(kernel == "rbf", raw[i, j], gamma, sq[i], sq[j], norms[i] * norms[j], c_dot, 1.0)
        assert abs(raw[i, j] - exact[i, j]) <= bound
    if kernel == "rbf":
        assert np.all(np.diag(fast) == 1.0)


def test_the_kernel_matrix_refuses_a_kernel_its_bounds_do_not_cover():
    from forestlab.learners._svm_gram import libsvm_gram

    with pytest.raises(ValueError, match="rbf or linear only"):
        libsvm_gram(np.ones((3, 2)), "poly", 1.0)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_the_kernel_matrix_gives_svcs_model_on_the_exact_path_and_past_the_size_limit(kernel, monkeypatch):
    """The same model as SVC's with every entry computed libsvm's way, and for a node above the matrix's size limit
    (libsvm's own kernel)."""
    from forestlab.learners import _svm_gram, _treerank

    X, pos, w = _node_problem(6, 300, 7, 0.5, "zeros")
    p_hat = float(w[pos].sum() / w.sum())
    svm = SVC(kernel=kernel, gamma=0.1, class_weight={1: 1.0 - p_hat, -1: p_hat}).fit(X, np.where(pos, 1, -1),
                                                                                       sample_weight=w)
    for patch in ((_svm_gram, "SLACK", 1e250), (_treerank, "_GRAM_MAX_POINTS", 100)):
        with monkeypatch.context() as m:
            m.setattr(*patch)
            support_vectors, dual_coef, intercept = _fit_libsvm(X, pos, w, kernel, 1.0, 0.1, p_hat)
        assert_svcs_model(svm, support_vectors, dual_coef, intercept)


def _libsvm_on_matrix(K, pos, w, C, p_hat, max_iter=-1):
    """libsvm's trainer itself on a precomputed kernel matrix (SVC's call): support, dual coefficients, intercept,
    fit status."""
    from sklearn.svm import _libsvm

    from forestlab.learners._treerank import _SVC_DEFAULTS

    _libsvm.set_verbosity_wrap(0)
    settings = {**_SVC_DEFAULTS, "max_iter": max_iter}
    (support, _, _, dual_coef, intercept, _, _, status, _) = _libsvm.fit(
        K, pos.astype(np.float64), svm_type=0, sample_weight=w, class_weight=np.array([p_hat, 1.0 - p_hat]),
        kernel="precomputed", C=C, nu=0.0, probability=False, epsilon=0.0, gamma=0.0, random_seed=0, **settings)
    return support, dual_coef[0], float(intercept[0]), status


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize(("case", "C", "max_iter"), [
    ("ties", 1.0, -1), ("ties", 50.0, -1), ("node", 0.05, -1), ("node", 20.0, -1), ("big", 1.0, -1),
    ("node", 1.0, 7), ("big", 1.0, 150),
])
def test_the_compiled_solver_is_libsvms_step_for_step(kernel, case, C, max_iter):
    """``_smo.fit_c_svc`` against libsvm on the same single-precision matrix: the same support, dual coefficients
    and intercept, bit for bit, and the same status where ``max_iter`` stops both. "ties": every point three times,
    integer features (equal gradients and equal candidate values everywhere: libsvm's last-index rule decides);
    small and large C (every point at the bound, most free); "big": 900 points, many shrinkings and gradient
    reconstructions."""
    from forestlab.learners._smo import fit_c_svc
    from forestlab.learners._svm_gram import libsvm_gram

    rng = np.random.default_rng({"ties": 1, "node": 2, "big": 3}[case])
    if case == "ties":
        base = rng.integers(-3, 4, size=(40, 4)).astype(float)
        X = np.repeat(base, 3, axis=0)
        pos = np.repeat(rng.random(40) < 0.5, 3)
        pos[:2] = [True, False]
        w = np.repeat(rng.integers(1, 3, 40).astype(float), 3)
    else:
        X, pos, w = _node_problem(7, 900 if case == "big" else 250, 9, 0.4, True)
    p_hat = float(w[pos].sum() / w.sum())
    grouped = np.concatenate([np.flatnonzero(~pos), np.flatnonzero(pos)])
    K, _ = libsvm_gram(np.ascontiguousarray(X[grouped]), kernel, 0.2)
    support, dual_coef, intercept, status = fit_c_svc(K, int((~pos).sum()), w[grouped], C, (p_hat, 1.0 - p_hat),
                                                      1e-3, True, max_iter)
    ref_support, ref_dual, ref_intercept, ref_status = _libsvm_on_matrix(K, pos[grouped], w[grouped], C, p_hat,
                                                                         max_iter)
    assert np.array_equal(support, ref_support)
    assert dual_coef.tobytes() == ref_dual.tobytes()
    assert np.float64(intercept).tobytes() == np.float64(ref_intercept).tobytes()
    assert status == ref_status == (max_iter != -1)
    assert len(support) > 0
