"""TreeRank (depecker2010 §2.2–2.7): the ranking tree, its LeafRanks and their criteria.

- the split criterion is the cost-sensitive error (digest §7 item 1) and ``train_auc_`` is the AUC of the training
  scores;
- near-optimal ROC on Unif2d (E1);
- the LeafRank merge against brute force over unions of cells, the compiled CART's best splits against brute force
  over every variable and threshold, the CART LeafRank against one built on scikit-learn's tree;
- every LeafRank, RF1 / RF2 variable restrictions, depth truncation against refits, pruned-subtree scoring, sample
  weights as duplicate rows, determinism, input errors.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from forestlab.learners._treerank import LEAFRANKS, TreeRank, best_prefix, scores_from_leaf_order
from forestlab.learners._treerank_kernels import AUC, GINI, MISCLASSIFICATION, _best_split, best_prefix_mask


def gauss_easy(n: int, q: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """GaussEasy20d (digest E5, shift spread over all coordinates): p = 1/2, positives N(mu+, I), negatives
    N(mu-, 10**0.1 I), |mu+ - mu-| = 1."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    shift = np.full(q, 0.5 / np.sqrt(q))
    X = np.where(y[:, None] == 1, rng.normal(size=(n, q)) + shift,
                 rng.normal(size=(n, q)) * np.sqrt(10 ** 0.1) - shift)
    return X, y


def unif2d(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unif2d (digest E1): p = 1/2, quarters X1 = [0,½]², X2 = [½,1]×[0,½], X3 = [½,1]², X4 = [0,½]×[½,1];
    negatives 0.2/0.1/0.3/0.4 and positives 0.4/0.3/0.2/0.1 uniform on them. AUC* = 0.735."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    corners = np.array([[0.0, 0.0], [0.5, 0.0], [0.5, 0.5], [0.0, 0.5]])
    quarter = np.where(y == 1, rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1]), rng.choice(4, n, p=[0.2, 0.1, 0.3, 0.4]))
    return corners[quarter] + 0.5 * rng.random((n, 2)), y


# ---------------------------------------------------------------------------------------------------------------
# The criterion: local AUC = cost-sensitive error; the training AUC
# ---------------------------------------------------------------------------------------------------------------
def cost_sensitive_error(pos: np.ndarray, in_left: np.ndarray) -> float:
    """L̂_{C,p̂}(L) of digest §2.3: (2p̂/n) #{negatives in L} + (2(1 − p̂)/n) #{positives outside L}."""
    n, p_hat = len(pos), pos.mean()
    return 2 * p_hat / n * np.sum(~pos & in_left) + 2 * (1 - p_hat) / n * np.sum(pos & ~in_left)


def test_cost_sensitive_error_is_one_minus_the_local_auc():
    """L̂_{C,p̂}(L) = 4 p̂ (1 − p̂) (1 − ÂUC_C(s_L)) for any cell and any set L (digest §7 item 1)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 300))
        pos = rng.random(n) < rng.uniform(0.05, 0.95)
        pos[:2] = [True, False]
        in_left = rng.random(n) < rng.uniform(0, 1)
        p_hat = pos.mean()
        local_auc = roc_auc_score(pos, np.where(in_left, 1.0, -1.0))
        assert cost_sensitive_error(pos, in_left) == pytest.approx(4 * p_hat * (1 - p_hat) * (1 - local_auc),
                                                                   abs=1e-12)


def test_the_axis_split_minimises_the_cost_sensitive_error_over_all_cuts():
    X, y = gauss_easy(300, q=3, seed=1)
    pos = y == 1
    ranker = TreeRank(leafrank="axis", max_depth=1).fit(X, y)
    in_left = ranker.apply(X) == ranker.tree_.children_left[0]
    # the root's local AUC is the depth-1 training AUC, ½ + ½ Λ
    assert roc_auc_score(y, ranker.decision_function(X, depth=1)) == pytest.approx(ranker.train_auc_, abs=1e-12)
    p_hat = pos.mean()
    assert cost_sensitive_error(pos, in_left) == pytest.approx(
        4 * p_hat * (1 - p_hat) * (1 - ranker.train_auc_), abs=1e-12)
    best = min(cost_sensitive_error(pos, side(X[:, j] <= u))
               for j in range(X.shape[1]) for u in np.unique(X[:, j])[:-1] for side in (np.asarray, np.logical_not))
    assert cost_sensitive_error(pos, in_left) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("leafrank", LEAFRANKS)
def test_train_auc_is_the_auc_of_the_training_scores(leafrank):
    X, y = gauss_easy(400, q=4)
    ranker = TreeRank(leafrank=leafrank, max_depth=4, min_samples_split=20, random_state=0).fit(X, y)
    assert ranker.train_auc_ == pytest.approx(roc_auc_score(y, ranker.decision_function(X)), abs=1e-12)
    assert ranker.n_leaves_ == len(ranker.leaves_) == int(ranker.tree_.is_leaf.sum()) > 1
    tree = ranker.tree_
    # the training counts of the leaves are those of the points apply() sends there
    leaf = ranker.apply(X)
    np.testing.assert_array_equal(np.bincount(leaf, weights=y == 1, minlength=tree.node_count)[tree.is_leaf],
                                  tree.n_pos[tree.is_leaf])
    np.testing.assert_array_equal(np.bincount(leaf, weights=y == -1, minlength=tree.node_count)[tree.is_leaf],
                                  tree.n_neg[tree.is_leaf])
    internal = ~tree.is_leaf
    assert np.all(tree.gain[internal] > 0) and np.all(tree.gain[tree.is_leaf] == 0)
    np.testing.assert_array_equal(tree.n_pos[internal], tree.n_pos[tree.children_left[internal]]
                                  + tree.n_pos[tree.children_right[internal]])


@pytest.mark.parametrize("params", [{"leafrank": "cart", "leafrank_max_depth": 1},
                                    {"leafrank": "axis", "max_features": 2}])
def test_a_large_tree_keeps_its_invariants(params):
    """Hundreds of master nodes (the compiled grower's arrays are reallocated several times on the way)."""
    X, y = gauss_easy(3000, q=4, seed=20)
    ranker = TreeRank(max_depth=None, min_samples_split=2, random_state=0, **params).fit(X, y)
    tree = ranker.tree_
    assert tree.node_count > 256  # the node arrays start with room for 64
    assert ranker.train_auc_ == pytest.approx(roc_auc_score(y, ranker.decision_function(X)), abs=1e-12)
    internal = np.flatnonzero(~tree.is_leaf)
    np.testing.assert_array_equal(tree.parent[tree.children_left[internal]], internal)
    np.testing.assert_array_equal(tree.parent[tree.children_right[internal]], internal)
    np.testing.assert_array_equal(tree.depth[tree.children_left[internal]], tree.depth[internal] + 1)
    assert all(len(tree.features[m]) == (2 if "max_features" in params else 4) for m in internal)
    np.testing.assert_array_equal(np.sort(ranker.leaves_), np.flatnonzero(tree.is_leaf))


@pytest.mark.parametrize("leafrank", ["cart", "axis"])
def test_train_auc_with_randomisation_and_sample_weights(leafrank):
    X, y = gauss_easy(500, q=6, seed=2)
    weight = np.random.default_rng(3).integers(0, 4, len(y)).astype(float)
    ranker = TreeRank(leafrank=leafrank, max_features=3, leafrank_max_features=2, random_state=5)
    ranker.fit(X, y, sample_weight=weight)
    assert ranker.train_auc_ == pytest.approx(roc_auc_score(y, ranker.decision_function(X), sample_weight=weight),
                                              abs=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Near-optimal ROC on Unif2d (E1)
# ---------------------------------------------------------------------------------------------------------------
def test_depth_two_axis_tree_is_near_optimal_on_unif2d():
    X, y = unif2d(2000, seed=0)
    X_test, y_test = unif2d(40000, seed=1)
    ranker = TreeRank(leafrank="axis", max_depth=2).fit(X, y)
    assert ranker.n_leaves_ == 4
    assert roc_auc_score(y_test, ranker.decision_function(X_test)) == pytest.approx(0.735, abs=0.012)
    # the four quarters, best (X2: β/α = 3) to worst (X4)
    centres = np.array([[0.75, 0.25], [0.25, 0.25], [0.75, 0.75], [0.25, 0.75]])
    np.testing.assert_array_equal(ranker.apply(centres), ranker.leaves_)


# ---------------------------------------------------------------------------------------------------------------
# The LeafRank merge and the compiled CART against brute force
# ---------------------------------------------------------------------------------------------------------------
def test_best_prefix_is_the_best_union_of_cells():
    rng = np.random.default_rng(4)
    for _ in range(100):
        n_cells = int(rng.integers(1, 8))
        n_pos = rng.integers(0, 6, n_cells).astype(float)
        n_neg = rng.integers(0, 6, n_cells).astype(float)
        n_pos[0] += 1
        n_neg[-1] += 1

        def value(mask: np.ndarray, n_pos: np.ndarray = n_pos, n_neg: np.ndarray = n_neg) -> float:
            return float(n_neg.sum() * n_pos[mask].sum() - n_pos.sum() * n_neg[mask].sum())  # (β̂ − α̂) n+ n-

        best = max(value(np.array(m, dtype=bool)) for m in itertools.product([0, 1], repeat=n_cells))
        for chosen in (best_prefix(n_pos, n_neg), best_prefix_mask(n_pos, n_neg)):
            assert value(chosen) == best
            # the best union holds the cells with β̂/α̂ above the cell's, and only those
            np.testing.assert_array_equal(chosen, n_pos * n_neg.sum() > n_neg * n_pos.sum())


def _brute_force_best(X, pos, w, criterion, min_leaf):
    """The best value of the split criterion over every variable and threshold (numpy, no presorting)."""
    P, N = w[pos].sum(), w[~pos].sum()
    a, b = N / (P + N), P / (P + N)
    best = -np.inf
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for u in (values[:-1] + values[1:]) / 2:
            left = X[:, j] <= u
            lp, ln = w[left & pos].sum(), w[left & ~pos].sum()
            rp, rn = P - lp, N - ln
            if lp + ln < min_leaf or rp + rn < min_leaf:
                continue
            best = max(best, _criterion(criterion, lp, ln, rp, rn, a, b))
    return best


def _criterion(criterion, lp, ln, rp, rn, a, b):
    if criterion == GINI:
        return ((a * lp) ** 2 + (b * ln) ** 2) / (a * lp + b * ln) + ((a * rp) ** 2 + (b * rn) ** 2) / (a * rp + b * rn)
    if criterion == MISCLASSIFICATION:
        return -(min(a * lp, b * ln) + min(a * rp, b * rn))
    return abs((ln + rn) * lp - (lp + rp) * ln)


@pytest.mark.parametrize("criterion", [GINI, MISCLASSIFICATION, AUC])
@pytest.mark.parametrize("min_leaf", [1.0, 7.0])
def test_compiled_best_split_is_the_brute_force_best(criterion, min_leaf):
    rng = np.random.default_rng(criterion * 10 + int(min_leaf))
    for _ in range(10):
        n, q = int(rng.integers(20, 120)), int(rng.integers(1, 5))
        X = np.round(rng.normal(size=(n, q)), 1)  # ties within a variable
        pos = rng.random(n) < 0.4 + 0.3 * (X[:, 0] > 0)
        pos[:2] = [True, False]
        w = rng.integers(1, 4, n).astype(float)
        order = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T, dtype=np.int32)
        P, N = w[pos].sum(), w[~pos].sum()
        row, threshold = _best_split(np.asfortranarray(X), pos, w, order, q, np.arange(q), 0, n, P, N, min_leaf, q,
                                     criterion, N / (P + N), P / (P + N), np.zeros(1, np.uint64),
                                     np.empty(q, np.int64))
        best = _brute_force_best(X, pos, w, criterion, min_leaf)
        if row < 0:  # no split improves on the node
            parent = {GINI: (N * N * P * P / (P + N) ** 2 * 2) / (2 * P * N / (P + N)),
                      MISCLASSIFICATION: -min(N * P, P * N) / (P + N), AUC: 0.0}[criterion]
            assert best <= parent + 1e-9 * max(1.0, abs(parent))
            continue
        left = X[:, row] <= threshold
        lp, ln = w[left & pos].sum(), w[left & ~pos].sum()
        got = _criterion(criterion, lp, ln, P - lp, N - ln, N / (P + N), P / (P + N))
        assert got == pytest.approx(best, rel=1e-12)
        assert X[left, row].max() < threshold < X[~left, row].min()


def _sklearn_cart_side(X, pos, max_depth, min_split, min_leaf, seed):
    """The CART LeafRank built on scikit-learn's tree: weighted CART, leaves merged by the best prefix."""
    p_hat = pos.mean()
    cart = DecisionTreeClassifier(max_depth=max_depth, min_samples_split=min_split, min_samples_leaf=min_leaf,
                                  random_state=seed)
    cart.fit(X, pos, sample_weight=np.where(pos, 1 - p_hat, p_hat))
    leaf = cart.apply(X)
    leaves = np.unique(leaf)
    chosen = best_prefix(np.array([pos[leaf == k].sum() for k in leaves], dtype=float),
                         np.array([(~pos)[leaf == k].sum() for k in leaves], dtype=float))
    return np.isin(leaf, leaves[chosen])


@pytest.mark.parametrize("seed", range(4))
def test_cart_leafrank_splits_the_root_as_a_scikit_learn_cart_does(seed):
    X, y = gauss_easy(300, q=4, seed=seed)
    X = X.astype(np.float32).astype(np.float64)  # scikit-learn's trees compare in float32
    ranker = TreeRank(leafrank="cart", max_depth=1, leafrank_max_depth=4, leafrank_min_samples_split=20,
                      leafrank_min_samples_leaf=3).fit(X, y)
    in_left = ranker.apply(X) == ranker.tree_.children_left[0]
    # Exact ties of the criterion happen (two variables cutting off the same class counts): scikit-learn breaks
    # them by its random order of the variables, TreeRank takes the first variable; some order agrees.
    assert any(np.array_equal(in_left, _sklearn_cart_side(X, y == 1, 4, 20, 3, seed=s)) for s in range(20))


# ---------------------------------------------------------------------------------------------------------------
# LeafRanks, randomisation, truncation, weights
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params", [
    {"leafrank": "cart"},
    {"leafrank": "cart", "leafrank_criterion": "misclassification"},
    {"leafrank": "axis"},
    {"leafrank": "svm", "svm_kernel": "rbf"},
    {"leafrank": "svm", "svm_kernel": "linear", "svm_C": 0.5},
    {"leafrank": "dyadic", "dyadic_resolution": 1},
])
def test_every_leafrank_ranks_better_than_chance(params):
    X, y = gauss_easy(600, q=4, seed=6)
    X_test, y_test = gauss_easy(2000, q=4, seed=7)
    ranker = TreeRank(max_depth=4, random_state=0, **params).fit(X, y)
    scores = ranker.decision_function(X_test)
    assert scores.dtype == np.float64 and np.all(np.isfinite(scores))
    assert np.all(np.isin(scores, scores_from_leaf_order(ranker.leaves_, ranker.tree_.node_count)[ranker.leaves_]))
    assert roc_auc_score(y_test, scores) > 0.62


def _split_variables(ranker: TreeRank) -> dict[int, set[int]]:
    """Master node -> the variables its LeafRank's tests use (CART and axis: read from the routing graph)."""
    feature, _, _, _, master = ranker._routing
    entries = np.flatnonzero(master >= 0)
    owner = master[entries][np.searchsorted(entries, np.arange(len(master)), side="right") - 1]
    return {int(m): set(feature[(owner == m) & (feature >= 0)].tolist()) for m in np.unique(owner)}


@pytest.mark.parametrize("leafrank", ["cart", "axis"])
def test_rf1_draws_the_variables_of_each_master_node(leafrank):
    X, y = gauss_easy(800, q=8, seed=8)
    ranker = TreeRank(leafrank=leafrank, max_features=3, random_state=1).fit(X, y)
    tree = ranker.tree_
    used = _split_variables(ranker)
    drawn = set()
    for m in np.flatnonzero(~tree.is_leaf):
        assert len(tree.features[m]) == 3 and len(set(tree.features[m].tolist())) == 3
        assert used[m] and used[m] <= set(tree.features[m].tolist())
        drawn |= set(tree.features[m].tolist())
    assert len(drawn) > 3  # drawn afresh at each node
    assert all(len(tree.features[m]) == 0 for m in np.flatnonzero(tree.is_leaf))
    full = TreeRank(leafrank=leafrank, max_features=None).fit(X, y)
    assert all(len(full.tree_.features[m]) == 8 for m in np.flatnonzero(~full.tree_.is_leaf))
    assert TreeRank(leafrank=leafrank, max_features=0.25).fit(X, y).tree_.features[0].shape == (2,)


def test_rf2_draws_variables_at_each_cart_node_among_the_master_nodes():
    X, y = gauss_easy(800, q=8, seed=9)
    base = dict(leafrank="cart", max_features=4, leafrank_min_samples_split=10)
    plain = TreeRank(**base, random_state=2).fit(X, y)
    rf2 = TreeRank(**base, leafrank_max_features=1, random_state=2).fit(X, y)
    for ranker in (plain, rf2):
        for m, variables in _split_variables(ranker).items():
            assert variables <= set(ranker.tree_.features[m].tolist())
    # same master draws (RF1 comes first at each node), but one variable per CART node spreads the splits wider
    np.testing.assert_array_equal(plain.tree_.features[0], rf2.tree_.features[0])
    assert len(_split_variables(rf2)[0]) >= len(_split_variables(plain)[0])
    assert not np.array_equal(plain.decision_function(X), rf2.decision_function(X))


@pytest.mark.parametrize("leafrank", LEAFRANKS)
def test_depth_truncation_is_the_tree_grown_to_that_depth(leafrank):
    X, y = gauss_easy(300, q=3, seed=10)
    X_test, _ = gauss_easy(200, q=3, seed=11)
    params = dict(leafrank=leafrank, min_samples_split=20, dyadic_resolution=1)
    full = TreeRank(max_depth=5, **params).fit(X, y)
    for depth in range(6):
        refit = TreeRank(max_depth=depth, **params).fit(X, y)
        np.testing.assert_array_equal(full.decision_function(X_test, depth=depth), refit.decision_function(X_test))
        for counts in ("n_pos", "n_neg"):  # the same leaves, in the same order
            np.testing.assert_array_equal(getattr(full.tree_, counts)[full.tree_.leaves_in_order(depth)],
                                          getattr(refit.tree_, counts)[refit.leaves_])
        truncated = full.decision_function(X, depth=depth)
        assert roc_auc_score(y, truncated) == pytest.approx(refit.train_auc_, abs=1e-12)
        np.testing.assert_array_equal(full.decision_function(X_test, leaves=full.tree_.leaves_in_order(depth)),
                                      refit.decision_function(X_test))
    np.testing.assert_array_equal(full.decision_function(X_test, depth=99), full.decision_function(X_test))
    assert full.decision_function(X_test, depth=0).tolist() == [1.0] * len(X_test)


@pytest.mark.parametrize("leafrank", ["cart", "axis"])
def test_integer_weights_are_duplicate_rows(leafrank):
    X, y = gauss_easy(400, q=5, seed=12)
    X_test, _ = gauss_easy(300, q=5, seed=13)
    idx = np.random.default_rng(14).integers(0, len(y), len(y))  # a bootstrap sample
    params = dict(leafrank=leafrank, max_features=3, leafrank_max_features=2, leafrank_min_samples_leaf=2,
                  min_samples_split=30, random_state=7)
    dup = TreeRank(**params).fit(X[idx], y[idx])
    weighted = TreeRank(**params).fit(X, y, sample_weight=np.bincount(idx, minlength=len(y)))
    np.testing.assert_array_equal(dup.decision_function(X_test), weighted.decision_function(X_test))
    for name in ("children_left", "children_right", "parent", "depth", "n_pos", "n_neg", "gain"):
        np.testing.assert_array_equal(getattr(dup.tree_, name), getattr(weighted.tree_, name), err_msg=name)
    assert dup.train_auc_ == weighted.train_auc_
    np.testing.assert_array_equal(dup.feature_importances_, weighted.feature_importances_)


@pytest.mark.parametrize("params", [
    {"leafrank": "cart", "max_features": 2, "leafrank_max_features": 1},
    {"leafrank": "axis", "max_features": 0.5},
    {"leafrank": "svm", "max_features": 2},
    {"leafrank": "dyadic", "max_features": 2},
])
def test_a_seed_gives_the_same_tree_and_seeds_differ(params):
    X, y = gauss_easy(500, q=5, seed=15)
    first = TreeRank(random_state=3, **params).fit(X, y).decision_function(X)
    np.testing.assert_array_equal(first, TreeRank(random_state=3, **params).fit(X, y).decision_function(X))
    others = [TreeRank(random_state=s, **params).fit(X, y).decision_function(X) for s in (4, 5)]
    assert any(not np.array_equal(first, other) for other in others)


def test_feature_importances():
    rng = np.random.default_rng(16)
    X = rng.normal(size=(600, 4))
    y = np.where(rng.random(600) < 1 / (1 + np.exp(-3 * X[:, 2])), 1, -1)
    for leafrank in ("cart", "axis"):
        importances = TreeRank(leafrank=leafrank, max_depth=3).fit(X, y).feature_importances_
        assert importances.shape == (4,) and importances.max() == 1.0 and np.argmax(importances) == 2
    # axis: each master split is a one-node CART, its importance (½ Λ)²
    stump = TreeRank(leafrank="axis", max_depth=1).fit(X, y)
    assert stump.feature_importances_.tolist() == [0.0, 0.0, 1.0, 0.0]
    for leafrank in ("svm", "dyadic"):
        ranker = TreeRank(leafrank=leafrank, max_depth=2).fit(X, y)
        with pytest.raises(AttributeError, match="'cart' and 'axis' LeafRanks only"):
            ranker.feature_importances_  # noqa: B018
        assert not hasattr(ranker, "feature_importances_")


def test_pruned_subtree_scores_and_run_report():
    X, y = gauss_easy(400, q=3, seed=17)
    ranker = TreeRank(max_depth=3, min_samples_split=20).fit(X, y)
    tree = ranker.tree_
    node = int(tree.children_left[0])  # collapse the root's left branch
    leaves = [node] + [int(m) for m in ranker.leaves_ if not _descends(tree, int(m), node)]
    scores = ranker.decision_function(X, leaves=leaves)
    assert len(np.unique(scores)) == len(leaves)
    np.testing.assert_array_equal(scores[ranker.apply(X, depth=1) == node], 1.0)
    with pytest.raises(ValueError, match="ancestor"):
        ranker.decision_function(X, leaves=[0, node])
    with pytest.raises(ValueError, match="cover every leaf"):
        ranker.decision_function(X, leaves=[node])
    with pytest.raises(ValueError, match="depth or leaves"):
        ranker.decision_function(X, depth=1, leaves=leaves)
    report = ranker.run_report()
    assert report["values"] == {"max_depth": float(tree.max_depth), "n_leaves": float(ranker.n_leaves_),
                                "train_auc": ranker.train_auc_}


@pytest.mark.parametrize("leafrank", ["cart", "svm"])
def test_auc_by_depth_curves(leafrank):
    X, y = gauss_easy(400, q=3, seed=18)
    X_test, y_test = gauss_easy(300, q=3, seed=19)
    ranker = TreeRank(leafrank=leafrank, max_depth=4, min_samples_split=20).fit(X, y)
    curves = ranker.run_report(X_test, y_test)["arrays"]
    np.testing.assert_array_equal(curves["depth"], np.arange(ranker.tree_.max_depth + 1))
    for depth in curves["depth"]:
        assert curves["train_auc"][depth] == pytest.approx(
            roc_auc_score(y, ranker.decision_function(X, depth=int(depth))), abs=1e-12)
        assert curves["test_auc"][depth] == roc_auc_score(y_test, ranker.decision_function(X_test, depth=int(depth)))
    assert curves["train_auc"][0] == 0.5 and curves["train_auc"][-1] == pytest.approx(ranker.train_auc_, abs=1e-12)
    assert ("feature_importance" in curves) == (leafrank == "cart")
    assert "test_auc" not in ranker.run_report()["arrays"]
    assert np.isnan(ranker.error_curves(X_test, np.ones(len(X_test)))["test_auc"]).all()


def _descends(tree, node: int, ancestor: int) -> bool:
    while node >= 0:
        if node == ancestor:
            return True
        node = int(tree.parent[node])
    return False


# ---------------------------------------------------------------------------------------------------------------
# Input errors
# ---------------------------------------------------------------------------------------------------------------
def test_input_errors():
    X, y = gauss_easy(100, q=3)
    with pytest.raises(ValueError, match="only one class"):
        TreeRank().fit(X, np.ones(100))
    with pytest.raises(ValueError, match="exactly 2 classes"):
        TreeRank().fit(X, np.arange(100) % 3)
    with pytest.raises(ValueError, match="NaN"):
        TreeRank().fit(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="zero for every point of a class"):
        TreeRank().fit(X, y, sample_weight=(y == 1).astype(float))
    with pytest.raises(ValueError, match="(?i)negative"):
        TreeRank().fit(X, y, sample_weight=-np.ones(100))
    ranker = TreeRank(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        ranker.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="depth must be an integer >= 0"):
        ranker.decision_function(X, depth=-1)
    with pytest.raises(ValueError, match="depth must be an integer >= 0"):
        ranker.apply(X, depth=1.5)
    # labels other than -1/+1: the greater is the positive class
    np.testing.assert_array_equal(TreeRank(max_depth=2).fit(X, (y + 1) // 2).decision_function(X),
                                  ranker.decision_function(X))
