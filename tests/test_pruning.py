"""Cost-complexity pruning of ranking trees (depecker2010 §2.8): the weakest-link sequence against brute force over
every subtree, the scores of pruned subtrees, and the cross-validated choice of PrunedTreeRank."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import forestlab.learners._pruning as pruning_module
from forestlab.learners._pruning import (
    FoldsReducedWarning,
    PrunedTreeRank,
    branch_gains,
    cv_alphas,
    full_split_mask,
    optimal_subtree,
    pruned_decision_function,
    pruning_path,
    split_gains,
    subtree_auc,
    subtree_scores,
    terminal_nodes,
)
from forestlab.learners._treerank import TreeRank


# ---------------------------------------------------------------------------------------------------------------
# Trees to prune
# ---------------------------------------------------------------------------------------------------------------
def random_structure(rng: np.random.Generator, n_internal: int, max_count: int = 3) -> SimpleNamespace:
    """A random binary tree (preorder ids) with random small integer counts at the leaves, summed upwards.

    The left child is not always the better half (negative gains) and small counts give many ties and zero gains.
    """
    left, right = [-1], [-1]
    leaves = [0]
    for _ in range(n_internal):
        node = leaves.pop(int(rng.integers(len(leaves))))
        left[node], right[node] = len(left), len(left) + 1
        left += [-1, -1]
        right += [-1, -1]
        leaves += [left[node], right[node]]
    n = len(left)
    n_pos = np.zeros(n, dtype=np.int64)
    n_neg = np.zeros(n, dtype=np.int64)
    for u in leaves:
        n_pos[u] = rng.integers(0, max_count + 1)
        n_neg[u] = rng.integers(0, max_count + 1)
    for u in range(n - 1, -1, -1):  # children have larger ids here
        if left[u] >= 0:
            n_pos[u] = n_pos[left[u]] + n_pos[right[u]]
            n_neg[u] = n_neg[left[u]] + n_neg[right[u]]
    if n_pos[0] == 0 or n_neg[0] == 0:
        return random_structure(rng, n_internal, max_count)
    return SimpleNamespace(children_left=np.array(left), children_right=np.array(right), n_pos=n_pos, n_neg=n_neg)


def small_treerank(seed: int, leafrank: str = "axis", n: int = 150,
                   max_depth: int = 4) -> tuple[TreeRank, np.ndarray, np.ndarray]:
    """A TreeRank grown on small noisy data (small trees for the brute force, with ties among the counts)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + X[:, 1] ** 2 + rng.normal(scale=1.0, size=n) > 0.8, 1, -1)
    if len(np.unique(y)) < 2:
        y[:2] = [-1, 1]
    tree = TreeRank(leafrank=leafrank, max_depth=max_depth, min_samples_split=4, leafrank_min_samples_split=4,
                    leafrank_max_depth=2, random_state=seed).fit(X, y)
    return tree, X, y


def all_subtrees(structure) -> list[frozenset[int]]:
    """Every pruned subtree of the tree, as the set of its split nodes."""
    left, right = np.asarray(structure.children_left), np.asarray(structure.children_right)

    def below(u: int) -> list[frozenset[int]]:
        if left[u] < 0:
            return [frozenset()]
        return [frozenset()] + [frozenset({u}) | a | b for a in below(int(left[u])) for b in below(int(right[u]))]

    return below(0)


def exact_auc(structure, splits: frozenset[int]) -> Fraction:
    """½ + Σ ½Λ_u over the split nodes, in exact arithmetic, straight from the definition (global rates)."""
    left = np.asarray(structure.children_left)
    P, N = int(structure.n_pos[0]), int(structure.n_neg[0])
    total = Fraction(1, 2)
    for u in splits:
        lo = int(left[u])
        alpha_u, beta_u = Fraction(int(structure.n_neg[u]), N), Fraction(int(structure.n_pos[u]), P)
        alpha_l, beta_l = Fraction(int(structure.n_neg[lo]), N), Fraction(int(structure.n_pos[lo]), P)
        total += (alpha_u * beta_l - beta_u * alpha_l) / 2
    return total


def brute_force_smallest_optimal(structure, subtrees, aucs, lam: Fraction) -> frozenset[int]:
    """The unique smallest maximiser of ÂUC - λ|T| (asserting it is unique among the smallest)."""
    crit = [auc - lam * (len(s) + 1) for s, auc in zip(subtrees, aucs, strict=True)]
    best = max(crit)
    winners = [s for s, c in zip(subtrees, crit, strict=True) if c == best]
    fewest = min(len(s) for s in winners)
    smallest = [s for s in winners if len(s) == fewest]
    assert len(smallest) == 1, "the smallest optimal subtree must be unique"
    return smallest[0]


def mask_set(mask: np.ndarray) -> frozenset[int]:
    return frozenset(int(u) for u in np.flatnonzero(mask))


def probe_penalties(path) -> list[Fraction]:
    """Every breakpoint λ_k exactly, a hair below and above it, the midpoints, and far beyond the last one."""
    exact = list(path.ccp_alphas_exact)
    eps = Fraction(1, 10**12)
    probes = {Fraction(0), exact[-1] * 2 + 1}
    for k, a in enumerate(exact):
        probes |= {a, a + eps}
        if a > 0:
            probes.add(a - eps)
        if k + 1 < len(exact):
            probes.add((a + exact[k + 1]) / 2)
    return sorted(probes)


# ---------------------------------------------------------------------------------------------------------------
# The sequence against brute force
# ---------------------------------------------------------------------------------------------------------------
def check_against_brute_force(structure) -> None:
    path = pruning_path(structure)
    subtrees = all_subtrees(structure)
    aucs = [exact_auc(structure, s) for s in subtrees]
    for lam in probe_penalties(path):
        expected = brute_force_smallest_optimal(structure, subtrees, aucs, lam)
        assert mask_set(optimal_subtree(structure, lam, path=path)) == expected, f"lambda = {lam}"
    # each λ_k (k >= 1) is exactly where the smallest optimal subtree changes from T^(k-1) to T^(k)
    for k in range(1, len(path.ccp_alphas_exact)):
        lam = path.ccp_alphas_exact[k]
        before = brute_force_smallest_optimal(structure, subtrees, aucs, lam - Fraction(1, 10**15))
        assert before == mask_set(path.split_masks[k - 1])
        assert brute_force_smallest_optimal(structure, subtrees, aucs, lam) == mask_set(path.split_masks[k])
    # the float λ_k, passed back, give T^(k)
    for k, lam in enumerate(path.ccp_alphas):
        assert np.array_equal(optimal_subtree(structure, float(lam), path=path), path.split_masks[k])


@pytest.mark.parametrize("seed", range(80))
def test_weakest_link_matches_brute_force_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    check_against_brute_force(random_structure(rng, int(rng.integers(1, 9))))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("leafrank", ["axis", "cart"])
def test_weakest_link_matches_brute_force_on_treerank_trees(seed, leafrank):
    tree, _, _ = small_treerank(seed, leafrank)
    assert len(all_subtrees(tree.tree_)) <= 50_000
    check_against_brute_force(tree.tree_)


def test_ties_are_pruned_together():
    # two symmetric branches with the same weakest-link value: they go in one step
    structure = SimpleNamespace(children_left=[1, 3, 5, -1, -1, -1, -1], children_right=[2, 4, 6, -1, -1, -1, -1],
                                n_pos=[8, 4, 4, 3, 1, 3, 1], n_neg=[8, 4, 4, 1, 3, 1, 3])
    path = pruning_path(structure)
    assert list(path.n_leaves) == [4, 1]  # the root split has gain 0: the whole tree goes with the branches
    check_against_brute_force(structure)


def test_zero_gain_splits_are_removed_at_lambda_zero():
    # node 2 splits into two children with the same class mix: gain 0, pruned in T^(0)
    structure = SimpleNamespace(children_left=[1, -1, 3, -1, -1], children_right=[2, -1, 4, -1, -1],
                                n_pos=[6, 4, 2, 1, 1], n_neg=[6, 2, 4, 2, 2])
    assert split_gains(structure)[2] == 0
    path = pruning_path(structure)
    assert mask_set(path.split_masks[0]) == {0}
    assert path.train_aucs[0] == pytest.approx(subtree_auc(structure))  # same ÂUC as the full tree, fewer leaves


def test_negative_gain_split_is_kept_when_its_branch_pays():
    # the root's left child is the worse half (negative gain) but its subtree more than makes up for it
    structure = SimpleNamespace(children_left=[1, 3, -1, -1, -1], children_right=[2, 4, -1, -1, -1],
                                n_pos=[5, 3, 2, 3, 0], n_neg=[5, 4, 1, 0, 4])
    gains = split_gains(structure)
    assert gains[0] < 0 < gains[0] + gains[1]
    assert mask_set(pruning_path(structure).split_masks[0]) == {0, 1}
    check_against_brute_force(structure)


@pytest.mark.parametrize("seed", range(5))
def test_sequence_is_nested_and_monotone(seed):
    tree, _, _ = small_treerank(seed, "cart", n=300, max_depth=6)
    path = pruning_path(tree)
    masks = path.split_masks
    assert path.ccp_alphas[0] == 0 and np.all(np.diff(path.ccp_alphas) > 0)
    assert all(np.all(masks[k + 1] <= masks[k]) for k in range(len(masks) - 1))  # nested
    assert np.all(np.diff(path.n_leaves) < 0) and path.n_leaves[-1] == 1 and not masks[-1].any()
    assert np.all(np.diff(path.train_aucs) < 0) and path.train_aucs[-1] == 0.5
    assert np.array_equal(path.n_leaves, masks.sum(axis=1) + 1)


def test_branch_gains_are_what_collapsing_loses():
    tree, _, _ = small_treerank(3, "cart", n=300, max_depth=5)
    gains, n_splits = branch_gains(tree)
    full = full_split_mask(tree)
    for t in np.flatnonzero(full):
        collapsed = full.copy()
        below = np.zeros_like(full)
        stack = [int(t)]
        while stack:  # the branch of t
            u = stack.pop()
            below[u] = True
            if tree.tree_.children_left[u] >= 0:
                stack += [int(tree.tree_.children_left[u]), int(tree.tree_.children_right[u])]
        collapsed[below] = False
        assert subtree_auc(tree) - subtree_auc(tree, collapsed) == pytest.approx(gains[t], abs=1e-12)
        assert n_splits[t] == full[below].sum()


# ---------------------------------------------------------------------------------------------------------------
# Scores of pruned subtrees
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("leafrank", ["cart", "axis", "svm"])
def test_counted_auc_is_the_auc_of_the_training_scores(seed, leafrank):
    tree, X, y = small_treerank(seed, leafrank, n=200, max_depth=5)
    path = pruning_path(tree)
    for mask, auc in zip(path.split_masks, path.train_aucs, strict=True):
        scores = pruned_decision_function(tree, mask, X)
        assert roc_auc_score(y, scores) == pytest.approx(auc, abs=1e-12)
        assert subtree_auc(tree, mask) == pytest.approx(auc, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_lambda_zero_keeps_the_full_trees_auc(seed):
    tree, X, y = small_treerank(seed, "cart", n=300, max_depth=6)
    t0 = optimal_subtree(tree, 0.0)
    assert subtree_auc(tree, t0) == pytest.approx(tree.train_auc_, abs=1e-12)
    assert np.all(t0 <= full_split_mask(tree))
    full_scores = pruned_decision_function(tree, None, X)
    assert np.array_equal(full_scores, tree.decision_function(X))


def test_subtree_scores_keep_the_left_right_order():
    tree, X, _ = small_treerank(1, "cart", n=300, max_depth=5)
    path = pruning_path(tree)
    for mask in path.split_masks:
        terminal_of, leaves = terminal_nodes(tree, mask)
        # the terminal nodes in order are the full tree's leaves in order, each mapped to its terminal node
        mapped = terminal_of[tree.leaves_]
        assert np.array_equal(mapped[np.sort(np.unique(mapped, return_index=True)[1])], leaves)
        scores = pruned_decision_function(tree, mask, X)
        assert np.array_equal(scores, tree.decision_function(X, leaves=leaves))  # TreeRank's own collapse
        n_leaves = len(leaves)
        assert np.array_equal(subtree_scores(tree, mask, leaves), (n_leaves - np.arange(n_leaves)) / n_leaves)


def test_weighted_counts_are_pruned_in_floats():
    tree, X, y = small_treerank(2, "cart", n=200, max_depth=4)
    weights = np.random.default_rng(0).uniform(0.5, 1.5, size=len(y))
    weighted = TreeRank(max_depth=4, min_samples_split=4, random_state=0).fit(X, y, sample_weight=weights)
    path = pruning_path(weighted)
    assert np.all(np.diff(path.ccp_alphas) > 0) and path.n_leaves[-1] == 1
    for mask, auc in zip(path.split_masks, path.train_aucs, strict=True):
        scores = pruned_decision_function(weighted, mask, X)
        assert roc_auc_score(y, scores, sample_weight=weights) == pytest.approx(auc, abs=1e-9)


def test_cv_alphas_are_geometric_means():
    assert np.array_equal(cv_alphas([0.0, 0.01, 0.04, 0.09]), [0.0, 0.02, 0.06, np.inf])
    assert np.array_equal(cv_alphas([0.0]), [np.inf])


def test_bad_structures_and_masks_are_refused():
    good = SimpleNamespace(children_left=[1, -1, -1], children_right=[2, -1, -1], n_pos=[3, 2, 1], n_neg=[2, 1, 1])
    with pytest.raises(ValueError, match="inconsistent"):
        pruning_path(SimpleNamespace(**{**vars(good), "n_pos": [3, 2, 2]}))
    with pytest.raises(ValueError, match="two children or none"):
        pruning_path(SimpleNamespace(**{**vars(good), "children_right": [-1, -1, -1]}))
    with pytest.raises(ValueError, match="both classes"):
        pruning_path(SimpleNamespace(**{**vars(good), "n_pos": [0, 0, 0]}))
    with pytest.raises(ValueError, match="children_left"):
        pruning_path(object())
    with pytest.raises(ValueError, match="hereditary"):
        deep = SimpleNamespace(children_left=[1, 3, -1, -1, -1], children_right=[2, 4, -1, -1, -1],
                               n_pos=[4, 3, 1, 2, 1], n_neg=[4, 1, 3, 0, 1])
        subtree_auc(deep, np.array([False, True, False, False, False]))
    with pytest.raises(ValueError, match="leaf of the full tree"):
        subtree_auc(good, np.array([True, True, False]))
    with pytest.raises(ValueError, match=">= 0"):
        optimal_subtree(good, -0.1)


# ---------------------------------------------------------------------------------------------------------------
# PrunedTreeRank
# ---------------------------------------------------------------------------------------------------------------
def unif2d(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unif2d of depecker2010 E1: p = 1/2, uniform mixtures on the four quarters of [0, 1]² (AUC* = 0.735)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    corners = np.array([[0.0, 0.0], [0.5, 0.0], [0.5, 0.5], [0.0, 0.5]])  # X1, X2, X3, X4
    weights = np.where(y[:, None] == 1, [0.4, 0.3, 0.2, 0.1], [0.2, 0.1, 0.3, 0.4])
    quarter = (rng.random(n)[:, None] > np.cumsum(weights, axis=1)).sum(axis=1)
    return corners[quarter] + 0.5 * rng.random((n, 2)), y


def test_unif2d_cv_choice_is_near_optimal():
    X, y = unif2d(2000, 10)
    X_test, y_test = unif2d(20000, 11)
    model = PrunedTreeRank(leafrank="axis", random_state=0).fit(X, y)
    test_auc = roc_auc_score(y_test, model.decision_function(X_test))
    along_path = [roc_auc_score(y_test, pruned_decision_function(model.tree_, mask, X_test))
                  for mask in model.pruning_path_.split_masks]
    assert test_auc >= 0.735 - 0.01 and test_auc >= max(along_path) - 0.005
    assert 4 <= model.n_leaves_ <= 16 < model.tree_.n_leaves_
    assert model.cv_scores_[model.best_index_] == model.cv_scores_.max()


@pytest.mark.parametrize("seed", range(3))
def test_pure_noise_gives_a_small_tree(seed):
    rng = np.random.default_rng(100 + seed)
    X = rng.normal(size=(400, 5))
    y = np.where(rng.random(400) < 0.5, 1, -1)
    model = PrunedTreeRank(random_state=seed).fit(X, y)
    assert model.tree_.n_leaves_ >= 8 and model.n_leaves_ <= 2
    assert model.cv_scores_[-1] == 0.5  # the root ties every point


def test_cv_scores_the_held_out_folds(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] + rng.normal(size=200) > 0, 1, -1)
    calls: list[int] = []

    held_out_auc = pruning_module._held_out_auc

    def recording_auc(n_pos, n_neg):
        calls.append(int(n_pos.sum() + n_neg.sum()))
        return held_out_auc(n_pos, n_neg)

    monkeypatch.setattr(pruning_module, "_held_out_auc", recording_auc)
    model = PrunedTreeRank(cv_folds=5, max_depth=4, min_samples_split=20, random_state=0).fit(X, y)
    assert calls and set(calls) == {40}  # every AUC of the selection is computed on a held-out fifth
    assert model.cv_fold_scores_.shape == (5, len(model.ccp_alphas_))
    assert np.allclose(model.cv_scores_, model.cv_fold_scores_.mean(axis=0))
    assert np.allclose(model.cv_scores_std_, model.cv_fold_scores_.std(axis=0))
    assert np.array_equal(model.cv_alphas_, cv_alphas(model.ccp_alphas_))
    best = model.best_index_
    assert model.ccp_alpha_ == model.ccp_alphas_[best] and model.n_leaves_ == model.subtree_sizes_[best]
    assert np.all(model.cv_scores_[best + 1:] < model.cv_scores_[best] - 1e-12)  # ties would go to the smaller tree


def test_fixed_penalty_and_its_fitted_attributes():
    X, y = unif2d(600, 3)
    grown = TreeRank(leafrank="axis", max_depth=5, random_state=4).fit(X, y)
    path = pruning_path(grown)
    for k in (0, len(path.ccp_alphas) // 2, len(path.ccp_alphas) - 1):
        model = PrunedTreeRank(leafrank="axis", max_depth=5, ccp_alpha=float(path.ccp_alphas[k]),
                               random_state=4).fit(X, y)
        assert np.array_equal(model.tree_.leaves_, grown.leaves_)  # T_max is the TreeRank of the same seed
        assert np.array_equal(model.split_mask_, path.split_masks[k])
        assert model.n_leaves_ == path.n_leaves[k] and model.train_auc_ == pytest.approx(path.train_aucs[k])
        assert roc_auc_score(y, model.decision_function(X)) == pytest.approx(model.train_auc_, abs=1e-12)
        assert not hasattr(model, "cv_scores_")
        assert model.run_report()["selected"] == {"ccp_alpha": float(path.ccp_alphas[k])}
    assert model.n_leaves_ == 1 and np.unique(model.decision_function(X)).size == 1
    assert np.array_equal(np.unique(model.apply(X)), [0])
    full = PrunedTreeRank(leafrank="axis", max_depth=5, ccp_alpha=0.0, random_state=4).fit(X, y)
    assert full.train_auc_ == pytest.approx(grown.train_auc_, abs=1e-12)


def test_same_seed_same_choice_and_scores():
    X, y = unif2d(500, 7)
    X_test, _ = unif2d(200, 8)
    params = {"cv_folds": 4, "max_depth": 5, "min_samples_split": 20, "max_features": 1, "random_state": 3}
    a = PrunedTreeRank(**params).fit(X, y)
    b = PrunedTreeRank(**params).fit(X, y)
    assert np.array_equal(a.cv_fold_scores_, b.cv_fold_scores_) and a.best_index_ == b.best_index_
    assert np.array_equal(a.decision_function(X_test), b.decision_function(X_test))


def test_parameters_mirror_treerank():
    mine, theirs = PrunedTreeRank().get_params(), TreeRank().get_params()
    assert {k: mine[k] for k in theirs} == theirs
    assert set(mine) - set(theirs) == {"ccp_alpha", "cv_folds"}


@pytest.mark.parametrize("params, match", [
    ({"cv_folds": 1}, "cv_folds"), ({"cv_folds": True}, "cv_folds"), ({"ccp_alpha": -0.1}, "ccp_alpha"),
    ({"ccp_alpha": "auto"}, "ccp_alpha"),
    ({"leafrank": "tree"}, "leafrank"), ({"max_depth": -1}, "max_depth"),
])
def test_bad_parameters_are_refused(params, match):
    X, y = unif2d(100, 0)
    with pytest.raises(ValueError, match=match):
        PrunedTreeRank(**params).fit(X, y)


def test_bad_data_is_refused():
    X, y = unif2d(100, 0)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        PrunedTreeRank().fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="one class"):
        PrunedTreeRank().fit(X, np.ones(len(y), dtype=int))
    one = np.where(np.arange(100) < 1, 1, -1)
    with pytest.raises(ValueError, match="at least 2 samples of each class"):
        PrunedTreeRank().fit(X, one)
    model = PrunedTreeRank(random_state=0, max_depth=3)
    assert model.fit(X, y).cv_folds_ == 10 and "cv_folds" not in model.diagnostics_
    assert PrunedTreeRank(ccp_alpha=0.0, max_depth=3).fit(X, y).cv_folds_ is None
    model = PrunedTreeRank(cv_folds=3, max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X[:, :1])


def test_a_class_smaller_than_the_folds_is_cross_validated_on_fewer_folds_and_says_so():
    """Not a silent reduction: a warning naming both numbers, ``cv_folds_`` and the stored diagnostic; the result
    is the one asked for with that many folds."""
    X, _ = unif2d(100, 0)
    few = np.where(np.arange(100) < 6, 1, -1)
    with pytest.warns(FoldsReducedWarning, match="cv_folds=10 .* the smaller class has 6: .* on 6 folds"):
        model = PrunedTreeRank(max_depth=3, random_state=0).fit(X, few)
    assert model.cv_folds_ == 6 and model.cv_fold_scores_.shape[0] == 6
    assert model.run_report()["values"]["cv_folds"] == 6.0
    same = PrunedTreeRank(max_depth=3, cv_folds=6, random_state=0).fit(X, few)
    np.testing.assert_array_equal(model.cv_fold_scores_, same.cv_fold_scores_)
    assert model.ccp_alpha_ == same.ccp_alpha_


def test_any_two_labels_the_greater_positive():
    X, y = unif2d(300, 4)
    params = {"leafrank": "axis", "cv_folds": 3, "max_depth": 4, "random_state": 0}
    signed = PrunedTreeRank(**params).fit(X, y)
    named = PrunedTreeRank(**params).fit(X, np.where(y > 0, "yes", "no"))
    assert list(named.classes_) == ["no", "yes"]
    assert np.array_equal(signed.decision_function(X), named.decision_function(X))
