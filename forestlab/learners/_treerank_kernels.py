"""Compiled (numba) kernels of :class:`~forestlab.learners.TreeRank` for the CART and axis LeafRanks.

Imported lazily by ``_treerank`` (numba's import and the load of the cached machine code cost a few tenths of a
second that a process not growing ranking trees should not pay). Compiled code is cached on disk (``cache=True``).

One call of :func:`grow` grows a whole master tree. The training points are sorted once per variable (``order``,
done by the caller); every node, of the master tree and of the LeafRank CARTs, owns a segment of each sorted row, and a
split partitions the rows of its segment stably, so no node sorts again (the presorted CART of Breiman et al.). A
LeafRank CART works on a copy of its master node's rows; its leaves are merged by the best-prefix rule and the
master node's segment is then partitioned by the chosen side.

Counts are weighted by the sample weights (multiplicities: an integer weight k is k copies of the row, exactly, as
sums of small integers are exact in float64). The cost-sensitive weights of a master cell (positives 1 − p̂,
negatives p̂) are constants of the cell, applied in the impurity formulas to the class counts.

Random draws (RF1 at master nodes, RF2 at CART nodes) come from a splitmix64 generator whose state is seeded by the
caller: the same seed gives the same tree whatever the process or thread. :func:`grow` and :func:`route` release the
GIL, so trees can be grown in threads.

Compiled code does not check indices. To audit them, run the tests with bounds checking, compiled afresh:
``NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(mktemp -d) pytest tests/test_treerank.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Split criteria of the LeafRank CART.
GINI, MISCLASSIFICATION, AUC = 0, 1, 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_REL_EPS = 1e-12


@njit(cache=True)
def _next_int(state: np.ndarray, bound: int) -> int:
    """A pseudo-random integer in [0, bound) (splitmix64; ``state`` is a one-element uint64 array)."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return int(z >> _S11) % bound


@njit(cache=True)
def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a``, or a copy with room for at least ``need`` entries (capacity doubled)."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    for k in range(a.shape[0]):
        b[k] = a[k]
    return b


@njit(cache=True)
def _stable_argsort(keys: np.ndarray) -> np.ndarray:
    """Indices sorting ``keys`` increasingly, equal keys in index order (a bottom-up merge sort: numba's own
    ``np.argsort`` costs seconds of compilation)."""
    m = keys.shape[0]
    idx = np.empty(m, dtype=np.int64)
    buf = np.empty(m, dtype=np.int64)
    for k in range(m):
        idx[k] = k
    width = 1
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            i, j, t = lo, mid, lo
            while i < mid and j < hi:
                if keys[idx[j]] < keys[idx[i]]:
                    buf[t] = idx[j]
                    j += 1
                else:
                    buf[t] = idx[i]
                    i += 1
                t += 1
            while i < mid:
                buf[t] = idx[i]
                i += 1
                t += 1
            while j < hi:
                buf[t] = idx[j]
                j += 1
                t += 1
        idx, buf = buf, idx
        width *= 2
    return idx


@njit(cache=True)
def _partition(rows: np.ndarray, n_rows: int, start: int, end: int, goes_left: np.ndarray,
               tmp: np.ndarray) -> int:
    """Stably move the points with ``goes_left`` to the front of each row's segment; the first right position."""
    mid = start
    for j in range(n_rows):
        n_left = start
        n_right = 0
        for t in range(start, end):
            i = rows[j, t]
            if goes_left[i]:
                rows[j, n_left] = i
                n_left += 1
            else:
                tmp[n_right] = i
                n_right += 1
        for t in range(n_right):
            rows[j, n_left + t] = tmp[t]
        mid = n_left
    return mid


@njit(cache=True)
def _proxy(criterion: int, lp: float, ln: float, rp: float, rn: float, a: float, b: float) -> float:
    """The value a split maximises, from the class counts of its sides (a, b: costs of a positive / negative)."""
    if criterion == GINI:
        wlp, wln, wrp, wrn = a * lp, b * ln, a * rp, b * rn
        return (wlp * wlp + wln * wln) / (wlp + wln) + (wrp * wrp + wrn * wrn) / (wrp + wrn)
    if criterion == MISCLASSIFICATION:
        return -(min(a * lp, b * ln) + min(a * rp, b * rn))
    # AUC: |Λ| of the left side up to the factor 1 / (n+ n-): |n-(C) n+(L) - n+(C) n-(L)|
    return abs((ln + rn) * lp - (lp + rp) * ln)


@njit(cache=True)
def _parent_proxy(criterion: int, p: float, n: float, a: float, b: float) -> float:
    if criterion == GINI:
        return (a * a * p * p + b * b * n * n) / (a * p + b * n)
    if criterion == MISCLASSIFICATION:
        return -min(a * p, b * n)
    return 0.0


@njit(cache=True)
def _best_split(X: np.ndarray, pos: np.ndarray, w: np.ndarray, rows: np.ndarray, n_rows: int, feats: np.ndarray,
                start: int, end: int, node_pos: float, node_neg: float, min_leaf: float, n_draw: int,
                criterion: int, a: float, b: float, state: np.ndarray, perm: np.ndarray) -> tuple[int, float]:
    """The best split of a CART node over ``n_draw`` drawn non-constant variables (RF2; all if n_draw >= n_rows):
    (row index, threshold), row −1 if no split improves the criterion."""
    parent = _parent_proxy(criterion, node_pos, node_neg, a, b)
    scale = a * node_pos + b * node_neg if criterion != AUC else node_pos * node_neg
    best = parent + _REL_EPS * scale
    best_row = -1
    best_threshold = 0.0
    for j in range(n_rows):
        perm[j] = j
    visited = 0
    remaining = n_rows
    while remaining > 0 and visited < n_draw:
        if n_draw >= n_rows:  # no draw: the variables in order
            j = perm[n_rows - remaining]
        else:
            k = _next_int(state, remaining)
            j = perm[k]
            perm[k] = perm[remaining - 1]
            perm[remaining - 1] = j
        remaining -= 1
        f = feats[j]
        if X[rows[j, start], f] >= X[rows[j, end - 1], f]:
            continue  # constant in the node: not counted as drawn
        visited += 1
        lp = 0.0
        ln = 0.0
        for t in range(start, end - 1):
            i = rows[j, t]
            if pos[i]:
                lp += w[i]
            else:
                ln += w[i]
            x = X[i, f]
            x_next = X[rows[j, t + 1], f]
            if x_next <= x:
                continue
            if lp + ln < min_leaf or node_pos + node_neg - lp - ln < min_leaf:
                continue
            value = _proxy(criterion, lp, ln, node_pos - lp, node_neg - ln, a, b)
            if value > best:
                best = value
                best_row = j
                mid = x / 2.0 + x_next / 2.0
                best_threshold = x if (mid >= x_next or mid < x) else mid
    return best_row, best_threshold


@njit(cache=True)
def _cart(X: np.ndarray, pos: np.ndarray, w: np.ndarray, rows: np.ndarray, n_rows: int, feats: np.ndarray,
          n_cell: int, cell_pos: float, cell_neg: float, max_depth: int, min_split: float, min_leaf: float,
          n_draw: int, criterion: int, state: np.ndarray, goes_left: np.ndarray, leaf_of: np.ndarray,
          tmp: np.ndarray, perm: np.ndarray, c_feature: np.ndarray, c_threshold: np.ndarray, c_left: np.ndarray,
          c_right: np.ndarray, c_pos: np.ndarray, c_neg: np.ndarray, st_start: np.ndarray, st_end: np.ndarray,
          st_depth: np.ndarray, st_parent: np.ndarray, st_is_left: np.ndarray) -> int:
    """Grow the weighted CART of one master cell on ``rows[:n_rows, :n_cell]``; fill the node arrays (local ids in
    pre-order, feature −1 at leaves, variables as column indices of X) and ``leaf_of``; return the node count."""
    total = cell_pos + cell_neg
    a = cell_neg / total  # cost of a positive, 1 - p̂
    b = cell_pos / total  # cost of a negative, p̂
    top = 0
    st_start[0], st_end[0], st_depth[0], st_parent[0], st_is_left[0] = 0, n_cell, 0, -1, 0
    top = 1
    count = 0
    while top > 0:
        top -= 1
        start, end, depth = st_start[top], st_end[top], st_depth[top]
        node = count
        count += 1
        par = st_parent[top]
        if par >= 0:
            if st_is_left[top]:
                c_left[par] = node
            else:
                c_right[par] = node
        node_pos = 0.0
        node_neg = 0.0
        for t in range(start, end):
            i = rows[0, t]
            if pos[i]:
                node_pos += w[i]
            else:
                node_neg += w[i]
        c_pos[node] = node_pos
        c_neg[node] = node_neg
        c_feature[node] = -1
        c_threshold[node] = 0.0
        c_left[node] = -1
        c_right[node] = -1
        if depth < max_depth and node_pos + node_neg >= min_split and node_pos > 0 and node_neg > 0:
            j, threshold = _best_split(X, pos, w, rows, n_rows, feats, start, end, node_pos, node_neg, min_leaf,
                                       n_draw, criterion, a, b, state, perm)
            if j >= 0:
                f = feats[j]
                for t in range(start, end):
                    i = rows[0, t]
                    goes_left[i] = X[i, f] <= threshold
                mid = _partition(rows, n_rows, start, end, goes_left, tmp)
                c_feature[node] = f
                c_threshold[node] = threshold
                st_start[top], st_end[top], st_depth[top], st_parent[top], st_is_left[top] = mid, end, depth + 1, \
                    node, 0
                st_start[top + 1], st_end[top + 1], st_depth[top + 1], st_parent[top + 1], st_is_left[top + 1] = \
                    start, mid, depth + 1, node, 1
                top += 2
                continue
        for t in range(start, end):
            leaf_of[rows[0, t]] = node
    return count


@njit(cache=True)
def best_prefix_mask(n_pos: np.ndarray, n_neg: np.ndarray) -> np.ndarray:
    """LeafRank merge (digest §2.4): cells sorted by n_pos / n_neg decreasing (n_neg = 0 as +inf, ties in cell
    order); the prefix maximising β̂ − α̂ (the empty prefix counts) is L. Compared as N n_pos − P n_neg sums, exact
    for integer counts."""
    m = n_pos.shape[0]
    ratio = np.empty(m)
    total_pos = 0.0
    total_neg = 0.0
    for k in range(m):
        if n_neg[k] > 0:
            ratio[k] = -n_pos[k] / n_neg[k]
        else:
            ratio[k] = -np.inf if n_pos[k] > 0 else np.inf  # an empty cell last
        total_pos += n_pos[k]
        total_neg += n_neg[k]
    order = _stable_argsort(ratio)
    best = 0.0
    best_len = 0
    value = 0.0
    for k in range(m):
        c = order[k]
        value += total_neg * n_pos[c] - total_pos * n_neg[c]
        if value > best:
            best = value
            best_len = k + 1
    chosen = np.zeros(m, dtype=np.bool_)
    for k in range(best_len):
        chosen[order[k]] = True
    return chosen


@njit(cache=True, nogil=True)
def grow(X: np.ndarray, pos: np.ndarray, w: np.ndarray, order: np.ndarray, max_depth: int, min_split: float,
         n_master_features: int, lr_max_depth: int, lr_min_split: float, lr_min_leaf: float, lr_n_features: int,
         criterion: int, seed: int) -> tuple:
    """Grow a TreeRank master tree with the CART (``criterion`` GINI or MISCLASSIFICATION) or axis (AUC, with
    ``lr_max_depth`` 1) LeafRank.

    ``order[f]`` lists the points sorted by X[:, f] (it is overwritten). Returns the master arrays (left, right,
    parent, depth, n_pos, n_neg, gain), the variables drawn at each master node (``m_feat_start`` offsets into
    ``m_feats``), the variable importances (unnormalised) and the routing graph (feature, threshold, left, right,
    master) in which a new point walks from node 0.
    """
    n, q = X.shape
    state = np.empty(1, dtype=np.uint64)
    state[0] = np.uint64(seed)
    rf1 = n_master_features < q

    cap = 64
    m_left = np.empty(cap, dtype=np.int64)
    m_right = np.empty(cap, dtype=np.int64)
    m_parent = np.empty(cap, dtype=np.int64)
    m_depth = np.empty(cap, dtype=np.int64)
    m_pos = np.empty(cap)
    m_neg = np.empty(cap)
    m_gain = np.empty(cap)
    m_cart_start = np.empty(cap, dtype=np.int64)
    m_cart_count = np.empty(cap, dtype=np.int64)
    m_feat_start = np.empty(cap + 1, dtype=np.int64)
    m_feats = np.empty(cap, dtype=np.int64)
    n_feats = 0

    g_cap = 256
    g_feature = np.empty(g_cap, dtype=np.int64)
    g_threshold = np.empty(g_cap)
    g_left = np.empty(g_cap, dtype=np.int64)
    g_right = np.empty(g_cap, dtype=np.int64)
    g_in_left = np.empty(g_cap, dtype=np.bool_)
    n_cart = 0

    importance = np.zeros(q)
    rows = np.empty((n_master_features, n), dtype=order.dtype)
    tmp = np.empty(n, dtype=order.dtype)
    goes_left = np.zeros(n, dtype=np.bool_)
    leaf_of = np.zeros(n, dtype=np.int64)
    perm = np.empty(q, dtype=np.int64)
    all_perm = np.empty(q, dtype=np.int64)
    feats = np.empty(n_master_features, dtype=np.int64)
    c_size = 2 * n + 1
    c_feature = np.empty(c_size, dtype=np.int64)
    c_threshold = np.empty(c_size)
    c_left = np.empty(c_size, dtype=np.int64)
    c_right = np.empty(c_size, dtype=np.int64)
    c_pos = np.empty(c_size)
    c_neg = np.empty(c_size)
    st_start = np.empty(c_size, dtype=np.int64)
    st_end = np.empty(c_size, dtype=np.int64)
    st_depth = np.empty(c_size, dtype=np.int64)
    st_parent = np.empty(c_size, dtype=np.int64)
    st_is_left = np.empty(c_size, dtype=np.int64)
    leaf_chosen = np.zeros(c_size, dtype=np.bool_)
    leaf_ids = np.empty(c_size, dtype=np.int64)
    leaf_pos = np.empty(c_size)
    leaf_neg = np.empty(c_size)

    total_pos = 0.0
    total_neg = 0.0
    for i in range(n):
        if pos[i]:
            total_pos += w[i]
        else:
            total_neg += w[i]

    ms_start = np.empty(2 * n + 1, dtype=np.int64)
    ms_end = np.empty(2 * n + 1, dtype=np.int64)
    ms_depth = np.empty(2 * n + 1, dtype=np.int64)
    ms_parent = np.empty(2 * n + 1, dtype=np.int64)
    ms_is_left = np.empty(2 * n + 1, dtype=np.int64)
    ms_start[0], ms_end[0], ms_depth[0], ms_parent[0], ms_is_left[0] = 0, n, 0, -1, 0
    top = 1
    count = 0
    m_feat_start[0] = 0
    while top > 0:
        top -= 1
        start, end, depth, par = ms_start[top], ms_end[top], ms_depth[top], ms_parent[top]
        node = count
        count += 1
        if count > m_left.shape[0]:
            m_left = _grown(m_left, count)
            m_right = _grown(m_right, count)
            m_parent = _grown(m_parent, count)
            m_depth = _grown(m_depth, count)
            m_pos = _grown(m_pos, count)
            m_neg = _grown(m_neg, count)
            m_gain = _grown(m_gain, count)
            m_cart_start = _grown(m_cart_start, count)
            m_cart_count = _grown(m_cart_count, count)
        m_feat_start = _grown(m_feat_start, count + 1)  # its own capacity (one more entry than the others)
        if par >= 0:
            if ms_is_left[top]:
                m_left[par] = node
            else:
                m_right[par] = node
        m_left[node] = -1
        m_right[node] = -1
        m_parent[node] = par
        m_depth[node] = depth
        m_gain[node] = 0.0
        m_cart_start[node] = n_cart
        m_cart_count[node] = 0
        m_feat_start[node + 1] = n_feats
        node_pos = 0.0
        node_neg = 0.0
        for t in range(start, end):
            i = order[0, t]
            if pos[i]:
                node_pos += w[i]
            else:
                node_neg += w[i]
        m_pos[node] = node_pos
        m_neg[node] = node_neg
        if depth >= max_depth or node_pos + node_neg < min_split or node_pos == 0 or node_neg == 0:
            continue

        # RF1: the master node's variables
        if rf1:
            for f in range(q):
                all_perm[f] = f
            for k in range(n_master_features):
                r = k + _next_int(state, q - k)
                f = all_perm[r]
                all_perm[r] = all_perm[k]
                all_perm[k] = f
            for k in range(n_master_features):  # the drawn variables in increasing order (insertion sort)
                f = all_perm[k]
                t = k
                while t > 0 and feats[t - 1] > f:
                    feats[t] = feats[t - 1]
                    t -= 1
                feats[t] = f
        else:
            for f in range(q):
                feats[f] = f
        n_cell = end - start
        for j in range(n_master_features):
            f = feats[j]
            for t in range(n_cell):
                rows[j, t] = order[f, start + t]

        n_nodes = _cart(X, pos, w, rows, n_master_features, feats, n_cell, node_pos, node_neg, lr_max_depth,
                        lr_min_split, lr_min_leaf, lr_n_features, criterion, state, goes_left, leaf_of, tmp, perm,
                        c_feature, c_threshold, c_left, c_right, c_pos, c_neg, st_start, st_end, st_depth,
                        st_parent, st_is_left)
        n_leaves = 0
        for k in range(n_nodes):
            if c_feature[k] < 0:
                leaf_ids[n_leaves] = k
                leaf_pos[n_leaves] = c_pos[k]
                leaf_neg[n_leaves] = c_neg[k]
                n_leaves += 1
        chosen = best_prefix_mask(leaf_pos[:n_leaves], leaf_neg[:n_leaves])
        left_pos = 0.0
        left_neg = 0.0
        for k in range(n_nodes):
            leaf_chosen[k] = False
        for k in range(n_leaves):
            if chosen[k]:
                leaf_chosen[leaf_ids[k]] = True
                left_pos += leaf_pos[k]
                left_neg += leaf_neg[k]
        if left_pos + left_neg == 0 or left_pos + left_neg == node_pos + node_neg:
            continue  # the LeafRank leaves one side empty: a leaf

        # accept the split
        m_gain[node] = (node_neg * left_pos - node_pos * left_neg) / (total_pos * total_neg)
        if rf1:
            m_feats = _grown(m_feats, n_feats + n_master_features)
            for k in range(n_master_features):
                m_feats[n_feats + k] = feats[k]
            n_feats += n_master_features
            m_feat_start[node + 1] = n_feats
        for k in range(n_nodes):
            if c_feature[k] >= 0:
                lk = c_left[k]
                half_gain = (c_neg[k] * c_pos[lk] - c_pos[k] * c_neg[lk]) / (2.0 * total_pos * total_neg)
                importance[c_feature[k]] += half_gain * half_gain
        need = n_cart + n_nodes
        if need > g_feature.shape[0]:
            g_feature = _grown(g_feature, need)
            g_threshold = _grown(g_threshold, need)
            g_left = _grown(g_left, need)
            g_right = _grown(g_right, need)
            g_in_left = _grown(g_in_left, need)
        for k in range(n_nodes):
            g_feature[n_cart + k] = c_feature[k]
            g_threshold[n_cart + k] = c_threshold[k]
            g_left[n_cart + k] = c_left[k]
            g_right[n_cart + k] = c_right[k]
            g_in_left[n_cart + k] = leaf_chosen[k]
        m_cart_count[node] = n_nodes
        n_cart = need

        for t in range(start, end):
            i = order[0, t]
            goes_left[i] = leaf_chosen[leaf_of[i]]
        mid = _partition(order, q, start, end, goes_left, tmp)
        if top + 2 > ms_start.shape[0]:
            raise RuntimeError("TreeRank: master stack overflow")
        ms_start[top], ms_end[top], ms_depth[top], ms_parent[top], ms_is_left[top] = mid, end, depth + 1, node, 0
        ms_start[top + 1], ms_end[top + 1], ms_depth[top + 1], ms_parent[top + 1], ms_is_left[top + 1] = \
            start, mid, depth + 1, node, 1
        top += 2

    # the routing graph: one terminal node per master leaf, the CART's internal nodes for a master split
    entry = np.empty(count, dtype=np.int64)
    n_route = 0
    for m in range(count):
        entry[m] = n_route
        if m_left[m] < 0:
            n_route += 1
        else:
            s = m_cart_start[m]
            for k in range(m_cart_count[m]):
                if g_feature[s + k] >= 0:
                    n_route += 1
    r_feature = np.empty(n_route, dtype=np.int64)
    r_threshold = np.zeros(n_route)
    r_left = np.empty(n_route, dtype=np.int64)
    r_right = np.empty(n_route, dtype=np.int64)
    r_master = np.empty(n_route, dtype=np.int64)
    for r in range(n_route):
        r_feature[r] = -1
        r_left[r] = -1
        r_right[r] = -1
        r_master[r] = -1
    local = np.empty(c_size, dtype=np.int64)
    for m in range(count):
        r_master[entry[m]] = m
        if m_left[m] < 0:
            continue
        s = m_cart_start[m]
        nxt = entry[m]
        for k in range(m_cart_count[m]):
            if g_feature[s + k] >= 0:
                local[k] = nxt
                nxt += 1
            elif g_in_left[s + k]:
                local[k] = entry[m_left[m]]
            else:
                local[k] = entry[m_right[m]]
        for k in range(m_cart_count[m]):
            if g_feature[s + k] >= 0:
                r = local[k]
                r_feature[r] = g_feature[s + k]
                r_threshold[r] = g_threshold[s + k]
                r_left[r] = local[g_left[s + k]]
                r_right[r] = local[g_right[s + k]]
    return (m_left[:count], m_right[:count], m_parent[:count], m_depth[:count], m_pos[:count], m_neg[:count],
            m_gain[:count], m_feat_start[:count + 1], m_feats[:n_feats], importance, r_feature, r_threshold, r_left,
            r_right, r_master)


@njit(cache=True, nogil=True)
def route(X: np.ndarray, r_feature: np.ndarray, r_threshold: np.ndarray, r_left: np.ndarray, r_right: np.ndarray,
          r_master: np.ndarray, m_depth: np.ndarray, limit: int) -> np.ndarray:
    """The master node each row of X reaches: a leaf, or a node at depth ``limit`` (truncation)."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        node = 0
        while True:
            m = r_master[node]
            if m >= 0 and (r_feature[node] < 0 or m_depth[m] >= limit):
                out[i] = m
                break
            if X[i, r_feature[node]] <= r_threshold[node]:
                node = r_left[node]
            else:
                node = r_right[node]
    return out
