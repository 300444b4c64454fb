"""Cost-complexity pruning of a ranking tree by penalised AUC (depecker2010 §2.8, thesis Chapter 3.3).

A grown :class:`~forestlab.learners._treerank.TreeRank` tree T_max is pruned by maximising the penalised empirical
AUC ÂUC(T) - λ|T| (|T| = number of leaves) over its subtrees. As in CART (Breiman et al. 1984, transposed by the
thesis: Thms 7, 9, Props 15, 16), the smallest optimal subtree T(λ) is piecewise constant in λ: a finite sequence
0 = λ_0 < λ_1 < ... < λ_K and nested subtrees T_max ⊇ T^(0) ⊋ T^(1) ⊋ ... ⊋ T^(K) = root, with T(λ) = T^(k) for
λ in [λ_k, λ_{k+1}), are found by weakest-link pruning.

The pure functions work on a fitted TreeRank (or its ``tree_``): anything with the arrays ``children_left``,
``children_right`` (-1 at leaves) and the training counts ``n_pos``, ``n_neg`` of each node (node 0 = root, left
child = the better half). A **subtree** is a boolean *split mask* over the nodes of the full tree: True at the
internal nodes of the full tree that stay split. It must be hereditary (a node stays split only if its parent does);
the subtree's terminal nodes are the root if it is not split, and every child of a split node that is not split.

- :func:`split_gains`: ½Λ_u = ½[α̂(u)β̂(left(u)) - β̂(u)α̂(left(u))] with *global* rates α̂ = n_neg / n_neg[root],
  β̂ = n_pos / n_pos[root]: what splitting node u adds to the training ÂUC, whatever the rest of the tree
  (ÂUC(T) = ½ + Σ over the split nodes of T of ½Λ_u);
- :func:`branch_gains`: S(t), the sum of the split gains over the split nodes of the branch T_t, and |T_t| - 1;
  collapsing T_t into a leaf lowers ÂUC by exactly S(t) and removes |T_t| - 1 leaves;
- :func:`pruning_path`: the weakest-link sequence (λ_k, T^(k)); :func:`optimal_subtree`: T(λ) for any λ >= 0;
- :func:`subtree_scores`, :func:`pruned_decision_function`: the score of a subtree on new data (the full tree
  routes each point to a leaf; the leaf maps to its highest collapsed ancestor; the terminal nodes keep the
  tree's left-to-right order, best first).

:class:`PrunedTreeRank` is the ranker: it grows a TreeRank on all the data, builds the sequence, and picks λ either
fixed or by V-fold cross-validation evaluated on the held-out folds.

Exactness: with integer counts, 2 n_+ n_- ½Λ_u = n_neg(u) n_pos(left) - n_pos(u) n_neg(left) is an integer, so the
gains, the branch sums and the weakest-link ratios are compared exactly (ties are ties, not float accidents), and
the λ_k are kept as exact fractions beside their float values.
"""

from __future__ import annotations

import bisect
import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import BipartiteRankerMixin, IntNotBool, RunReportMixin
from forestlab.learners._data_rules import raise_data_problems
from forestlab.learners._kernel import derived_seeds
from forestlab.learners._treerank import TREERANK_PARAMS, TreeRank, scores_from_leaf_order, treerank_data_problems
from forestlab.metrics import roc_auc_from_sorted

__all__ = [
    "FoldsReducedWarning",
    "PrunedTreeRank",
    "PruningPath",
    "branch_gains",
    "cv_alphas",
    "full_split_mask",
    "optimal_subtree",
    "pruned_decision_function",
    "pruning_path",
    "split_gains",
    "subtree_auc",
    "subtree_scores",
    "terminal_nodes",
]


# ---------------------------------------------------------------------------------------------------------------
# The tree structure
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tree:
    """A validated ranking-tree structure with the traversal orders the pruning needs."""

    left: np.ndarray  # (n_nodes,) intp, -1 at leaves
    right: np.ndarray
    parent: np.ndarray  # -1 at the root
    preorder: np.ndarray  # node ids, parent before children, left branch before right branch
    start: np.ndarray  # start[u] = position of u in preorder; its branch is preorder[start[u]:stop[u]]
    stop: np.ndarray
    gain_units: np.ndarray  # (n_nodes,): 2 n_+ n_- ½Λ_u (0 at leaves); int64 if exact, else float64
    auc_unit: int | float  # 2 n_+ n_-: ÂUC = ½ + (sum of the gain units of the split nodes) / auc_unit
    exact: bool  # integer counts: every comparison is exact

    @property
    def n_nodes(self) -> int:
        return len(self.left)

    @property
    def is_internal(self) -> np.ndarray:
        return self.left >= 0

    def ratio(self, units: Any, n_splits: Any) -> Fraction:
        """units / n_splits as an exact fraction (of the float value when the counts are not integers)."""
        return Fraction(int(units), int(n_splits)) if self.exact else Fraction(float(units)) / int(n_splits)

    def tolerance(self) -> float:
        """Gain units below which a float sum counts as 0 (0 when exact)."""
        return 0.0 if self.exact else 1e-9 * float(self.auc_unit)


def _counts(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"the tree's {name} must be a 1-D array of non-negative training counts, one per node")
    return arr


def _as_tree(tree: Any) -> _Tree:
    """The structure of ``tree``: a fitted TreeRank, its ``tree_``, or any object with ``children_left``,
    ``children_right``, ``n_pos`` and ``n_neg``; ValueError if it is not a valid binary tree with consistent
    counts.

    Integer counts (float arrays of whole numbers included) are handled in exact integer arithmetic; weighted
    counts that are not whole numbers in float64, with a relative tolerance of 1e-9 for ties and sums.
    """
    if isinstance(tree, _Tree):
        return tree
    structure = getattr(tree, "tree_", tree)
    try:
        left = np.asarray(structure.children_left)
        right = np.asarray(structure.children_right)
        n_pos_raw, n_neg_raw = structure.n_pos, structure.n_neg
    except AttributeError as exc:
        raise ValueError("pruning needs a fitted TreeRank or a tree structure with children_left, children_right, "
                         f"n_pos and n_neg; {type(tree).__name__} has no {exc.name!r}") from None
    n_pos = _counts(n_pos_raw, "n_pos")
    n_neg = _counts(n_neg_raw, "n_neg")
    n = len(left)
    if n == 0 or left.ndim != 1 or left.shape != right.shape or n_pos.shape != left.shape or n_neg.shape != left.shape:
        raise ValueError("children_left, children_right, n_pos and n_neg must be 1-D arrays of one length >= 1")
    if left.dtype.kind not in "iu" or right.dtype.kind not in "iu":
        raise ValueError("children_left and children_right must hold integer node ids (-1 at leaves)")
    left = left.astype(np.intp)
    right = right.astype(np.intp)
    if np.any((left < 0) != (right < 0)):
        raise ValueError("every node of the tree must have two children or none")
    parent = np.full(n, -1, dtype=np.intp)
    internal = np.flatnonzero(left >= 0)
    children = np.concatenate([left[internal], right[internal]])
    if np.any(children >= n) or np.any(children <= 0) or len(np.unique(children)) != len(children):
        raise ValueError("children_left / children_right do not describe a tree rooted at node 0")
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    # preorder (left branch first) with branch intervals; also proves every node is reachable from the root
    preorder = np.empty(n, dtype=np.intp)
    start = np.full(n, -1, dtype=np.intp)
    stop = np.empty(n, dtype=np.intp)
    pos = 0
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        u, closing = stack.pop()
        if closing:
            stop[u] = pos
            continue
        if start[u] >= 0:
            raise ValueError("children_left / children_right do not describe a tree (a node is reached twice)")
        preorder[pos] = u
        start[u] = pos
        pos += 1
        stack.append((u, True))
        if left[u] >= 0:
            stack.append((int(right[u]), False))
            stack.append((int(left[u]), False))
    if pos != n:
        raise ValueError(f"{n - pos} node(s) of the tree are not reachable from the root (node 0)")
    exact = bool(np.all(n_pos == np.round(n_pos)) and np.all(n_neg == np.round(n_neg)))
    n_pos = n_pos.astype(np.int64 if exact else np.float64)
    n_neg = n_neg.astype(np.int64 if exact else np.float64)
    lo, ro = left[internal], right[internal]
    for counts, name in ((n_pos, "n_pos"), (n_neg, "n_neg")):
        sums = counts[lo] + counts[ro]
        if not (np.array_equal(counts[internal], sums) if exact
                else np.allclose(counts[internal], sums, rtol=1e-9, atol=0)):
            raise ValueError(f"the tree's counts are inconsistent: {name} of a node must be the sum of its "
                             "children's")
    if n_pos[0] == 0 or n_neg[0] == 0:
        raise ValueError("the tree's root must hold training samples of both classes (n_pos[0] > 0, n_neg[0] > 0)")
    gain = np.zeros(n, dtype=n_pos.dtype)
    gain[internal] = n_neg[internal] * n_pos[lo] - n_pos[internal] * n_neg[lo]
    unit = 2 * int(n_pos[0]) * int(n_neg[0]) if exact else 2.0 * float(n_pos[0]) * float(n_neg[0])
    return _Tree(left, right, parent, preorder, start, stop, gain, unit, exact)


def _depths(t: _Tree) -> np.ndarray:
    depth = np.zeros(t.n_nodes, dtype=np.intp)
    for u in t.preorder[1:]:  # parents first
        depth[u] = depth[t.parent[u]] + 1
    return depth


def _check_mask(t: _Tree, split_mask: Any) -> np.ndarray:
    if split_mask is None:
        return t.is_internal.copy()
    mask = np.asarray(split_mask)
    if mask.dtype != bool or mask.shape != (t.n_nodes,):
        raise ValueError(f"a split mask must be a boolean array of shape ({t.n_nodes},) (one entry per node of the "
                         f"full tree), got dtype {mask.dtype} and shape {mask.shape}")
    if np.any(mask & ~t.is_internal):
        raise ValueError("a split mask marks a leaf of the full tree as split")
    nodes = np.flatnonzero(mask)
    parents = t.parent[nodes]
    if np.any((parents >= 0) & ~mask[np.maximum(parents, 0)]):
        raise ValueError("a split mask must be hereditary: a node stays split only if its parent does")
    return mask


# ---------------------------------------------------------------------------------------------------------------
# Gains
# ---------------------------------------------------------------------------------------------------------------
def full_split_mask(tree: Any) -> np.ndarray:
    """The split mask of the full tree: True at every internal node.

    Parameters
    ----------
    tree : TreeRank or tree structure
        A fitted TreeRank, its ``tree_``, or anything with ``children_left``, ``children_right``, ``n_pos``,
        ``n_neg``.

    Returns
    -------
    ndarray of shape (n_nodes,), bool
    """
    return _as_tree(tree).is_internal.copy()


def split_gains(tree: Any) -> np.ndarray:
    """The AUC gain ½Λ_u of each node's split, with global rates (0 at leaves).

    ½Λ_u = ½[α̂(u)β̂(left(u)) - β̂(u)α̂(left(u))], α̂ = n_neg / n_neg[0], β̂ = n_pos / n_pos[0]. Splitting a terminal
    node u of any subtree into its two children raises that subtree's training ÂUC by exactly ½Λ_u (it depends on
    u's counts only), so ÂUC(T) = ½ + Σ_{u split in T} ½Λ_u. Negative when the left child is the worse half.

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.

    Returns
    -------
    ndarray of shape (n_nodes,)
        The gains, in AUC units.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> tree = SimpleNamespace(children_left=[1, -1, -1], children_right=[2, -1, -1],
    ...                        n_pos=[6, 5, 1], n_neg=[4, 1, 3])
    >>> split_gains(tree)  # ½(1 · 5/6 - 1 · 1/4)
    array([0.29166667, 0.        , 0.        ])
    """
    t = _as_tree(tree)
    return t.gain_units / t.auc_unit


def _branch_units(t: _Tree, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the sum of gain units over the split nodes of its branch in the subtree, and their number."""
    s = np.where(mask, t.gain_units, 0)
    m = mask.astype(np.int64)
    for u in t.preorder[::-1]:  # children before parents
        p = t.parent[u]
        if p >= 0 and mask[u]:
            s[p] += s[u]
            m[p] += m[u]
    return s, m


def branch_gains(tree: Any, split_mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """S(t), the AUC gain of each node's branch, and the number of its splits |T_t| - 1, in a subtree.

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.
    split_mask : ndarray of shape (n_nodes,), bool, optional
        The subtree (default: the full tree).

    Returns
    -------
    gains : ndarray of shape (n_nodes,)
        S(t) = Σ ½Λ_u over the split nodes u of the branch rooted at t (0 where t is not split): collapsing t into a
        leaf lowers the subtree's ÂUC by exactly S(t).
    n_splits : ndarray of shape (n_nodes,), int
        The number of split nodes of that branch, |T_t| - 1 (the leaves it removes when collapsed).
    """
    t = _as_tree(tree)
    s, m = _branch_units(t, _check_mask(t, split_mask))
    return s / t.auc_unit, m


def subtree_auc(tree: Any, split_mask: Any = None) -> float:
    """The training ÂUC of a subtree, from the counts: ½ + Σ_{u split} ½Λ_u.

    Equal to ``roc_auc_score`` of the subtree's scores on its training data (ties count ½).

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.
    split_mask : ndarray of shape (n_nodes,), bool, optional
        The subtree (default: the full tree).

    Returns
    -------
    float
    """
    t = _as_tree(tree)
    mask = _check_mask(t, split_mask)
    return 0.5 + t.gain_units[mask].sum().item() / t.auc_unit


# ---------------------------------------------------------------------------------------------------------------
# The weakest-link sequence
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PruningPath:
    """The cost-complexity sequence of a ranking tree: λ_0 = 0 < λ_1 < ... < λ_K and T^(0) ⊋ ... ⊋ T^(K) = root.

    T^(k) is the smallest subtree maximising ÂUC(T) - λ|T| for every λ in [λ_k, λ_{k+1}) (λ_{K+1} = +inf).

    Attributes
    ----------
    ccp_alphas : ndarray of shape (K + 1,)
        λ_0..λ_K as floats (AUC per leaf), each the smallest float >= the exact value, so that
        ``index(ccp_alphas[k]) == k``.
    ccp_alphas_exact : tuple of Fraction
        The same values exactly (ratios of integers when the counts are integers).
    split_masks : ndarray of shape (K + 1, n_nodes), bool
        The split mask of each T^(k).
    n_leaves : ndarray of shape (K + 1,), int
        |T^(k)|.
    train_aucs : ndarray of shape (K + 1,)
        Training ÂUC of each T^(k) (decreasing, down to 0.5 at the root).
    """

    ccp_alphas: np.ndarray
    ccp_alphas_exact: tuple[Fraction, ...]
    split_masks: np.ndarray
    n_leaves: np.ndarray
    train_aucs: np.ndarray

    def index(self, ccp_alpha: float | Fraction) -> int:
        """k such that T^(k) is the smallest optimal subtree for λ = ``ccp_alpha``: the largest k with
        λ_k <= ccp_alpha, compared exactly (a float is taken at its exact binary value)."""
        if isinstance(ccp_alpha, float) and math.isnan(ccp_alpha):
            raise ValueError("ccp_alpha must be a number >= 0, got nan")
        if ccp_alpha < 0:
            raise ValueError(f"ccp_alpha must be >= 0, got {ccp_alpha}")
        return bisect.bisect_right(self.ccp_alphas_exact, ccp_alpha) - 1


def _optimal_at_zero(t: _Tree) -> np.ndarray:
    """T^(0): the smallest subtree maximising ÂUC (no penalty), by dynamic programming from the leaves.

    W(u) = max(0, gain(u) + W(left) + W(right)) is the best gain a branch at u can add; u stays split only if that
    is > 0 (a zero-gain branch is pruned, giving the smallest maximiser), and only if its parent stays split.
    """
    best = np.zeros(t.n_nodes, dtype=t.gain_units.dtype)
    keep = np.zeros(t.n_nodes, dtype=bool)
    tol = t.tolerance()
    for u in t.preorder[::-1]:
        if t.left[u] >= 0:
            value = t.gain_units[u] + best[t.left[u]] + best[t.right[u]]
            if value > tol:
                best[u] = value
                keep[u] = True
    mask = np.zeros(t.n_nodes, dtype=bool)
    for u in t.preorder:  # parents before children: heredity
        p = t.parent[u]
        mask[u] = keep[u] and (p < 0 or mask[p])
    return mask


def pruning_path(tree: Any) -> PruningPath:
    """The weakest-link sequence of nested subtrees and penalties (depecker2010 §2.8).

    T^(0) is the smallest subtree maximising the training ÂUC (splits whose branch adds nothing are removed).
    Then, repeatedly, every split node t of the current subtree gets g(t) = S(t) / (|T_t| - 1), the AUC lost per
    leaf removed by collapsing its branch; the next penalty is λ_{k+1} = min g, and *every* node attaining it is
    collapsed at once (ties pruned together, compared exactly), until only the root is left.

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.

    Returns
    -------
    PruningPath

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> tree = SimpleNamespace(children_left=[1, 3, -1, -1, -1], children_right=[2, 4, -1, -1, -1],
    ...                        n_pos=[6, 5, 1, 4, 1], n_neg=[4, 1, 3, 0, 1])
    >>> path = pruning_path(tree)
    >>> path.ccp_alphas, path.n_leaves, path.train_aucs
    (array([0.        , 0.08333333, 0.29166667]), array([3, 2, 1]), array([0.875     , 0.79166667, 0.5       ]))
    """
    t = _as_tree(tree)
    unit = t.auc_unit
    mask = _optimal_at_zero(t)
    s, m = _branch_units(t, mask)
    alphas: list[Fraction] = [Fraction(0)]
    masks = [mask.copy()]
    while mask.any():
        nodes = np.flatnonzero(mask)
        ratio = s[nodes] / m[nodes]
        near = nodes[ratio <= ratio.min() * (1 + 1e-9) + 1e-300]
        if t.exact:  # the float ratios only shortlist: the tie is decided on the integers
            g_min = min(t.ratio(s[u], m[u]) for u in near)
            weakest = [int(u) for u in near if t.ratio(s[u], m[u]) == g_min]
        else:  # float counts: ratios within 1e-9 of the smallest are ties
            weakest = [int(u) for u in near]
            g_min = min(t.ratio(s[u], m[u]) for u in near)
        weakest.sort(key=lambda u: t.start[u])  # ancestors before their descendants
        for u in weakest:
            if not mask[u]:  # inside a branch collapsed just before
                continue
            mask[t.preorder[t.start[u]:t.stop[u]]] = False
            a = t.parent[u]
            while a >= 0:
                s[a] -= s[u]
                m[a] -= m[u]
                a = t.parent[a]
        alphas.append(g_min / (unit if t.exact else Fraction(unit)))
        masks.append(mask.copy())
    split_masks = np.array(masks)
    n_splits = split_masks.sum(axis=1)
    gains = np.array([t.gain_units[mk].sum().item() for mk in split_masks], dtype=np.float64)
    return PruningPath(
        ccp_alphas=np.array([_float_at_least(a) for a in alphas]),
        ccp_alphas_exact=tuple(alphas),
        split_masks=split_masks,
        n_leaves=n_splits + 1,
        train_aucs=0.5 + gains / unit,
    )


def _float_at_least(value: Fraction) -> float:
    """The smallest float >= ``value``, so that passing a reported λ_k back as ``ccp_alpha`` gives T^(k) again."""
    f = float(value)
    return math.nextafter(f, math.inf) if Fraction(f) < value else f


def optimal_subtree(tree: Any, ccp_alpha: float | Fraction, path: PruningPath | None = None) -> np.ndarray:
    """The smallest subtree maximising ÂUC(T) - ccp_alpha · |T|, as a split mask.

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.
    ccp_alpha : float or Fraction
        The penalty λ >= 0 per leaf, in AUC units (``inf`` gives the root).
    path : PruningPath, optional
        The tree's :func:`pruning_path`, if already computed.

    Returns
    -------
    ndarray of shape (n_nodes,), bool
        T^(k) for the largest k with λ_k <= ccp_alpha (compared exactly).
    """
    path = pruning_path(tree) if path is None else path
    return path.split_masks[path.index(ccp_alpha)].copy()


def cv_alphas(ccp_alphas: Any) -> np.ndarray:
    """The penalties cross-validation prunes the fold trees with: λ'_k = sqrt(λ_k λ_{k+1}), λ'_K = +inf.

    λ'_k is the geometric mean of the ends of [λ_k, λ_{k+1}), the interval where T^(k) is optimal on all the data
    (Breiman et al. 1984, §3.4.2; depecker2010 §2.8). λ'_0 = 0 (λ_0 = 0). For the last subtree (the root), optimal
    on [λ_K, +inf), λ'_K = +inf, as in CART: every fold tree is then pruned to its root, scoring AUC ½ (the R
    package uses 1, which has the same effect because no branch gains more than ½ AUC).

    Parameters
    ----------
    ccp_alphas : array-like of shape (K + 1,)
        λ_0..λ_K, increasing.

    Returns
    -------
    ndarray of shape (K + 1,)
    """
    a = np.asarray(ccp_alphas, dtype=np.float64)
    return np.append(np.sqrt(a[:-1] * a[1:]), np.inf)


# ---------------------------------------------------------------------------------------------------------------
# Scores of a subtree
# ---------------------------------------------------------------------------------------------------------------
def terminal_nodes(tree: Any, split_mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Where each node of the full tree ends up in a subtree, and the subtree's terminal nodes in order.

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.
    split_mask : ndarray of shape (n_nodes,), bool, optional
        The subtree (default: the full tree).

    Returns
    -------
    terminal_of : ndarray of shape (n_nodes,), int
        For each node of the full tree at or below a terminal node of the subtree, that terminal node (its highest
        collapsed ancestor, or itself); -1 for the subtree's split nodes.
    leaves : ndarray of shape (n_leaves,), int
        The subtree's terminal nodes from left to right: best to worst.
    """
    t = _as_tree(tree)
    mask = _check_mask(t, split_mask)
    terminal_of = np.full(t.n_nodes, -1, dtype=np.intp)
    for u in t.preorder:  # parents first
        p = t.parent[u]
        if p >= 0 and terminal_of[p] >= 0:
            terminal_of[u] = terminal_of[p]
        elif not mask[u]:
            terminal_of[u] = u
    leaves = t.preorder[terminal_of[t.preorder] == t.preorder]  # preorder lists left branches first
    return terminal_of, leaves


def subtree_scores(tree: Any, split_mask: Any, leaf_ids: Any) -> np.ndarray:
    """The scores a subtree gives to points the full tree routed to ``leaf_ids``.

    The i-th terminal node from the left (i = 0, 1, ...) of a subtree with N terminal nodes scores (N - i) / N:
    the R package's leaf scores; only their order matters (ties within a terminal node).

    Parameters
    ----------
    tree : TreeRank or tree structure
        See :func:`full_split_mask`.
    split_mask : ndarray of shape (n_nodes,), bool or None
        The subtree (None: the full tree).
    leaf_ids : array-like of shape (n_samples,), int
        The full tree's leaf of each point (``TreeRank.apply(X)``).

    Returns
    -------
    ndarray of shape (n_samples,)
        Scores in (0, 1], higher = better ranked.
    """
    terminal_of, leaves = terminal_nodes(tree, split_mask)
    ids = np.asarray(leaf_ids)
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or np.any(ids < 0) or np.any(ids >= len(terminal_of)):
        raise ValueError("leaf_ids must be a 1-D array of node ids of the full tree")
    term = terminal_of[ids]
    if np.any(term < 0):
        raise ValueError("leaf_ids must be leaves of the full tree (a point was routed to a split node)")
    return scores_from_leaf_order(leaves, len(terminal_of))[term]  # TreeRank's own leaf scores


def pruned_decision_function(treerank: Any, split_mask: Any, X: Any) -> np.ndarray:
    """The scores of a fitted TreeRank's subtree on ``X``: :func:`subtree_scores` of ``treerank.apply(X)``.

    Parameters
    ----------
    treerank : TreeRank
        The fitted full tree.
    split_mask : ndarray of shape (n_nodes,), bool or None
        The subtree (None: the full tree).
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    return subtree_scores(treerank.tree_, split_mask, np.asarray(treerank.apply(X), dtype=np.intp))


def _held_out_auc(n_pos: np.ndarray, n_neg: np.ndarray) -> float:
    """``roc_auc_score`` of a ranking into ordered cells, from the cells' class counts (best cell first): see
    :func:`forestlab.metrics.roc_auc_from_sorted` (identical, bit for bit, without the input validation and the
    rescoring that made nine tenths of a pruned tree's cross-validation). Both classes must be present."""
    return roc_auc_from_sorted(n_pos, n_neg)


# ---------------------------------------------------------------------------------------------------------------
# The pruned ranker
# ---------------------------------------------------------------------------------------------------------------
_TREERANK_PARAMS = TREERANK_PARAMS


class FoldsReducedWarning(UserWarning):
    """PrunedTreeRank cross-validated its penalty on fewer folds than ``cv_folds``: a class had fewer points."""


class PrunedTreeRank(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """TreeRank pruned by penalised AUC, the penalty fixed or chosen by V-fold cross-validation (depecker2010 §2.8).

    ``fit`` grows a :class:`~forestlab.learners._treerank.TreeRank` T_max on all the data (the TreeRank parameters
    below are passed through unchanged, ``random_state`` included), computes its weakest-link sequence
    0 = λ_0 < ... < λ_K with nested subtrees T^(0) ⊋ ... ⊋ T^(K) = root (:func:`pruning_path`), and keeps T^(k*):

    - ``ccp_alpha`` given: k* is the largest k with λ_k <= ccp_alpha (the smallest subtree maximising
      ÂUC - ccp_alpha·|T|);
    - ``ccp_alpha=None`` (default): V-fold cross-validation, ``cv_folds`` stratified folds shuffled with a seed
      derived from ``random_state``. For each fold v a TreeRank is grown on the other folds, pruned with
      λ'_k = sqrt(λ_k λ_{k+1}) (:func:`cv_alphas`; λ'_K = +inf, the root), and the AUC of each pruned fold tree is
      computed **on the held-out fold v** (the thesis' procedure; the R package's ``pruneCV`` scores the training
      part of each fold instead, digest §6 item 16). k* maximises the mean held-out AUC over the folds; ties (equal
      means within 1e-12) go to the larger k, the smaller tree (as the R package does).

    Parameters
    ----------
    leafrank, max_depth, min_samples_split, max_features, leafrank_max_depth, leafrank_min_samples_split, \
leafrank_min_samples_leaf, leafrank_max_features, leafrank_criterion, svm_kernel, svm_C, svm_gamma, svm_scale, \
dyadic_resolution :
        As :class:`~forestlab.learners._treerank.TreeRank`, for T_max and for the fold trees.
    ccp_alpha : float >= 0 or None, default=None
        The penalty per leaf, in AUC units; None chooses it by cross-validation.
    cv_folds : int >= 2, default=10
        Number of folds V when ``ccp_alpha`` is None (10, as CART and the thesis' benchmark protocol; the thesis
        does not give V for its pruning figure). Stratified folds need ``cv_folds`` points of each class: when the
        smaller class has fewer (but at least 2), the penalty is cross-validated on as many folds as it has points,
        with a :class:`FoldsReducedWarning`, the folds used in ``cv_folds_`` and the diagnostic ``cv_folds`` (the
        most folds the data allow, rather than a refusal of data that scikit-learn's checks and small samples
        bring); a class of one point is a ValueError.
    random_state : int, RandomState instance or None, default=None
        Seeds T_max (an int is passed to it unchanged, so T_max is the TreeRank of that seed), the folds and the
        fold trees (seeds derived from it). A fixed int gives the same tree and scores on every run.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1) is the positive class.
    n_features_in_ : int
    tree_ : TreeRank
        The full fitted tree T_max (on all the data).
    pruning_path_ : PruningPath
        Its weakest-link sequence.
    ccp_alphas_ : ndarray of shape (K + 1,)
        λ_0..λ_K.
    subtree_sizes_ : ndarray of shape (K + 1,), int
        Number of leaves of each T^(k).
    train_aucs_ : ndarray of shape (K + 1,)
        Training ÂUC of each T^(k).
    cv_alphas_ : ndarray of shape (K + 1,)
        λ'_k, the penalties of the fold trees (cross-validation only).
    cv_fold_scores_ : ndarray of shape (cv_folds, K + 1)
        Held-out AUC of each fold's tree pruned with λ'_k (cross-validation only).
    cv_scores_, cv_scores_std_ : ndarray of shape (K + 1,)
        Mean and standard deviation over the folds of the held-out AUC (cross-validation only). With K = 0 (T^(0) is
        the root) there is nothing to choose and no fold tree is grown: the scores are those of the root (0.5, 0).
    cv_folds_ : int or None
        The folds the penalty was cross-validated on: ``cv_folds``, or fewer on a small class (above); None with a
        fixed ``ccp_alpha``.
    best_index_ : int
        k*.
    ccp_alpha_ : float
        The chosen penalty: λ_{k*} with cross-validation (the lower end of T^(k*)'s interval), else ``ccp_alpha``.
    split_mask_ : ndarray of shape (n_nodes,), bool
        The kept subtree T^(k*) as a split mask over ``tree_``'s nodes.
    leaves_ : ndarray of shape (n_leaves_,), int
        Its terminal nodes (node ids of ``tree_``), left to right = best to worst.
    n_leaves_ : int
        |T^(k*)|.
    max_tree_depth_ : int
        Depth of the deepest terminal node of T^(k*) (root 0; stored by the runner as ``max_depth``).
    train_auc_ : float
        Training ÂUC of T^(k*).
    selected_params_ : dict
        ``{"ccp_alpha": ccp_alpha_}`` (stored by the runner).
    diagnostics_ : dict of str to float
        ``n_leaves``, ``full_n_leaves``, ``train_auc``, ``full_train_auc`` and, with cross-validation, ``cv_auc``
        (the chosen mean held-out AUC).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2))
    >>> y = np.where(rng.uniform(size=400) < np.where(X[:, 0] < 0.5, 0.8, 0.3), 1, -1)
    >>> model = PrunedTreeRank(leafrank="axis", max_depth=4, min_samples_split=10, cv_folds=5,
    ...                        random_state=0).fit(X, y)
    >>> model.n_leaves_ < model.tree_.n_leaves_, model.ccp_alpha_ == float(model.ccp_alphas_[model.best_index_])
    (True, True)
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **{key: TreeRank._parameter_constraints[key] for key in (*_TREERANK_PARAMS, "random_state")},
        "ccp_alpha": [Interval(numbers.Real, 0, None, closed="left"), None],
        "cv_folds": [IntNotBool(2, None, closed="left")],
    }

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """The tree's RF1/RF2 counts the data cannot give (TreeRank's rule). A class smaller than ``cv_folds`` is
        not one: fewer folds are used, with a warning (see ``cv_folds``)."""
        return treerank_data_problems(params, n_features)

    def __init__(
        self,
        *,
        leafrank: str = "cart",
        max_depth: int | None = 10,
        min_samples_split: int = 50,
        max_features: int | float | str | None = None,
        leafrank_max_depth: int | None = 10,
        leafrank_min_samples_split: int = 50,
        leafrank_min_samples_leaf: int = 1,
        leafrank_max_features: int | float | str | None = None,
        leafrank_criterion: str = "gini",
        svm_kernel: str = "rbf",
        svm_C: float = 1.0,
        svm_gamma: str | float = "scale",
        svm_scale: bool = True,
        dyadic_resolution: int = 2,
        ccp_alpha: float | None = None,
        cv_folds: int = 10,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.leafrank = leafrank
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.leafrank_max_depth = leafrank_max_depth
        self.leafrank_min_samples_split = leafrank_min_samples_split
        self.leafrank_min_samples_leaf = leafrank_min_samples_leaf
        self.leafrank_max_features = leafrank_max_features
        self.leafrank_criterion = leafrank_criterion
        self.svm_kernel = svm_kernel
        self.svm_C = svm_C
        self.svm_gamma = svm_gamma
        self.svm_scale = svm_scale
        self.dyadic_resolution = dyadic_resolution
        self.ccp_alpha = ccp_alpha
        self.cv_folds = cv_folds
        self.random_state = random_state

    def _treerank(self, random_state: Any) -> TreeRank:
        return TreeRank(**{key: getattr(self, key) for key in _TREERANK_PARAMS}, random_state=random_state)

    def fit(self, X: Any, y: Any) -> PrunedTreeRank:
        """Grow T_max on all the data, build its pruning sequence and keep the subtree of the chosen penalty.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (+1 = positive), both present. As in TreeRank, any two labels are accepted, the
            greater one being the positive class (``classes_[1]``).

        Returns
        -------
        self : PrunedTreeRank
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "PrunedTreeRank")
        raise_data_problems(self, *X.shape, len(classes))
        n_folds = self._n_folds(codes)
        base, seeds = derived_seeds(self.random_state, 2)
        labels = np.where(codes == 1, 1, -1)  # the greater label is the positive class, as in TreeRank
        full = self._treerank(base).fit(X, labels)
        path = pruning_path(full)
        for name in ("cv_alphas_", "cv_fold_scores_", "cv_scores_", "cv_scores_std_"):
            self.__dict__.pop(name, None)  # a refit with a fixed ccp_alpha must not keep stale CV attributes
        if self.ccp_alpha is None:
            alphas = cv_alphas(path.ccp_alphas)
            if len(alphas) == 1:  # T^(0) is the root: nothing to choose
                fold_scores = np.full((n_folds, 1), 0.5)
            else:
                folds = StratifiedKFold(n_folds, shuffle=True, random_state=seeds[0]).split(X, codes)
                fold_seeds = np.random.SeedSequence([seeds[1], 2010]).generate_state(n_folds)
                fold_scores = np.array([
                    self._fold_scores(X[train], labels[train], X[test], labels[test], alphas,
                                      int(fold_seeds[v]) & 0x7FFFFFFF)
                    for v, (train, test) in enumerate(folds)])
            means = fold_scores.mean(axis=0)
            best = int(np.flatnonzero(means >= means.max() - 1e-12)[-1])
            self.cv_alphas_ = alphas
            self.cv_fold_scores_ = fold_scores
            self.cv_scores_ = means
            self.cv_scores_std_ = fold_scores.std(axis=0)
            chosen_alpha = float(path.ccp_alphas[best])
        else:
            best = path.index(float(self.ccp_alpha))
            chosen_alpha = float(self.ccp_alpha)
        self.classes_ = classes
        self.cv_folds_ = n_folds
        self.tree_ = full
        self.pruning_path_ = path
        self.ccp_alphas_ = path.ccp_alphas
        self.subtree_sizes_ = path.n_leaves
        self.train_aucs_ = path.train_aucs
        self.best_index_ = best
        self.ccp_alpha_ = chosen_alpha
        self.split_mask_ = path.split_masks[best].copy()
        self.leaves_ = terminal_nodes(full, self.split_mask_)[1]
        self.n_leaves_ = int(path.n_leaves[best])
        self.max_tree_depth_ = int(_depths(_as_tree(full))[self.leaves_].max())
        self.train_auc_ = float(path.train_aucs[best])
        self.selected_params_ = {"ccp_alpha": chosen_alpha}
        self.diagnostics_ = {"n_leaves": float(self.n_leaves_), "full_n_leaves": float(full_split_mask(full).sum() + 1),
                             "train_auc": self.train_auc_, "full_train_auc": subtree_auc(full)}
        if self.ccp_alpha is None:
            self.diagnostics_["cv_auc"] = float(self.cv_scores_[best])
            if n_folds != self.cv_folds:  # recorded where it applied (a full-size run's report is unchanged)
                self.diagnostics_["cv_folds"] = float(n_folds)
        return self

    def _n_folds(self, codes: np.ndarray) -> int | None:
        """The folds the penalty is cross-validated on: ``cv_folds``, or the smaller class's size when it has fewer
        points (with a warning; ``cv_folds_`` records it); None with a fixed ``ccp_alpha``. ValueError when a class
        has a single point (no two folds can both hold it)."""
        if self.ccp_alpha is not None:
            return None
        smallest = int(np.bincount(codes).min())
        if smallest < 2:
            raise ValueError(f"cross-validating the pruning penalty needs at least 2 samples of each class (the "
                             f"smaller class has {smallest}); fix ccp_alpha instead")
        if smallest < self.cv_folds:
            warnings.warn(f"PrunedTreeRank: cv_folds={self.cv_folds} stratified folds need at least {self.cv_folds} "
                          f"samples of each class and the smaller class has {smallest}: the pruning penalty is "
                          f"cross-validated on {smallest} folds instead (cv_folds_={smallest}, reported as the "
                          "diagnostic cv_folds)", FoldsReducedWarning, stacklevel=3)
            return smallest
        return int(self.cv_folds)

    def _fold_scores(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                     alphas: np.ndarray, seed: int) -> np.ndarray:
        """Held-out AUC of one fold's tree pruned with each penalty of ``alphas``.

        The fold tree routes the held-out points once; each pruned subtree's AUC is then read from the held-out
        class counts of its terminal nodes in their left-to-right order (:func:`_held_out_auc`), the numbers
        ``roc_auc_score`` gives on the subtree's scores, bit for bit, without scoring the points again."""
        tree = self._treerank(seed).fit(X_train, y_train)
        path = pruning_path(tree)
        t = _as_tree(tree)
        leaf_ids = np.asarray(tree.apply(X_test), dtype=np.intp)
        positive = y_test == 1
        # held-out counts of each branch, from prefix sums over the preorder (a branch is a preorder interval)
        cum_pos = np.concatenate([[0], np.cumsum(np.bincount(t.start[leaf_ids[positive]], minlength=t.n_nodes))])
        cum_neg = np.concatenate([[0], np.cumsum(np.bincount(t.start[leaf_ids[~positive]], minlength=t.n_nodes))])
        by_index: dict[int, float] = {}
        out = np.empty(len(alphas))
        for k, alpha in enumerate(alphas):
            j = path.index(float(alpha))
            if j not in by_index:
                mask = path.split_masks[j]
                terminal = ~mask & ((t.parent < 0) | mask[np.maximum(t.parent, 0)])
                leaves = t.preorder[terminal[t.preorder]]  # left to right: best to worst
                by_index[j] = _held_out_auc(cum_pos[t.stop[leaves]] - cum_pos[t.start[leaves]],
                                            cum_neg[t.stop[leaves]] - cum_neg[t.start[leaves]])
            out[k] = by_index[j]
        return out

    def apply(self, X: Any) -> np.ndarray:
        """The terminal node of the pruned tree (a node id of ``tree_``) each sample falls in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), int
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        terminal_of, _ = terminal_nodes(self.tree_, self.split_mask_)
        return terminal_of[np.asarray(self.tree_.apply(X), dtype=np.intp)]

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores of the pruned tree: (N - i) / N in the i-th terminal node from the left (N terminal nodes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Higher = more likely positive; ties within a terminal node.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.tree_.decision_function(X, leaves=self.leaves_)  # the full tree scoring its pruned subtree
