"""scikit-learn's CART tree builder for classification, ported to numba: the same trees, bit for bit, faster.

What it ports: ``DepthFirstTreeBuilder`` with the dense ``BestSplitter`` and the ``Gini`` / ``Entropy`` criterion of
scikit-learn 1.9 (``sklearn/tree/_tree.pyx``, ``_splitter.pyx`` ``node_split_best``, ``_partitioner.pyx``
``DensePartitioner``, ``_criterion.pyx``, ``_utils.pyx``), in the case the forests of forestlab use: dense float32
X without NaN or infinity, one output, class codes 0..K-1, integer-valued sample weights (bootstrap counts) or none,
an integer ``max_features``, integer ``min_samples_leaf`` / ``min_samples_split``, ``max_depth``,
``min_impurity_decrease``, ``min_weight_leaf`` 0, no monotonic constraints. :func:`supported` says whether the
installed scikit-learn is a version the port was checked against, :meth:`CartGrower.covers` whether it applies
(also: x86-64 only, where it was verified; tests/test_cart.py compares every field of ``Tree.__getstate__`` with
scikit-learn's builder on hundreds of trees). Imported lazily (numba's import costs tenths of a second).

What is the same as scikit-learn's builder, exactly:

- the random stream: the splitter's ``rand_r_state`` drawn as ``random_state.randint(0, RAND_R_MAX)``, then one
  ``rand_int`` (xorshift ``our_rand_r``) per feature visited, with the ``features`` array shared by all nodes of a
  tree and permuted by each node's Fisher-Yates draws, and the constant-feature bookkeeping (known, found and drawn
  constants; the copies to and from ``constant_features`` at the end of a split search);
- the candidate splits of a feature (positions between sorted values more than ``FEATURE_THRESHOLD`` apart, in
  float32 arithmetic; a feature whose node values span at most that is constant), their order (features in drawn
  order, positions increasing) and the strict ``>`` on the proxy improvement, so ties keep the first;
- every stored or compared number, by the same floating-point operations in the same order: the impurities
  (``1.0 - sq / (w * w)``; ``-= p * (ln(p) / ln(2.0))``), the proxy ``-w_r * i_r - w_l * i_l``, the improvement,
  the threshold ``x_prev / 2.0 + x / 2.0`` in double, the node values ``count / weighted_n_node_samples``;
- the leaf rules (``max_depth``, ``min_samples_split``, ``2 * min_samples_leaf``, impurity ``<= EPSILON``, no
  valid split, ``improvement + EPSILON < min_impurity_decrease``), the depth-first order of the nodes (right child
  pushed before the left), what a leaf stores (children -1, feature and threshold -2, ``missing_go_to_left`` 0) and
  ``missing_go_to_left = n_left > n_right`` at a split.

What differs is how the sorted values of a feature in a node are found (the splits found are the same):

- presorted: each feature is sorted once per data set (:class:`CartGrower`); each tree keeps, per feature, its
  in-bag rows in that order (O(n) per feature), and a split partitions these lists stably into its children,
  skipping the features constant in the node (for scikit-learn or by their values): no node sorts. O(features x
  rows) per split whatever ``max_features``: the way when most features are drawn at each node (bagging).
- sort: as scikit-learn, each feature drawn is sorted in the node, by its values' dense ranks (precomputed): a
  histogram of the ranks when they span at most twice the node's rows (two classes), else the rows of the lowest
  value first (sparse data) and the others by an insertion sort for a few rows, a radix sort for more.
  O(max_features x rows) per split: the way when few are drawn (``"sqrt"``). With more than two classes it was
  measured slower than scikit-learn's builder, so :meth:`CartGrower.covers` leaves that case to it.

A grower uses one way for all its trees, the one estimated faster (:data:`SORT_COST`). Neither changes anything
that decides the tree: only the order of equal values within a node differs from scikit-learn's, and the class counts
left of a position are sums of integer weights, exact in double whatever their order; the sorted values, the
positions and the thresholds are the same. For Gini, a candidate split whose exact proxy (from the integer counts,
without division) is below the best one by far more than the rounding error of scikit-learn's formula is skipped
without evaluating that formula: it could not have won the strict ``>``.

Compiled code is cached on disk (``cache=True``): compiling takes 20-30 s once (after each change of this file),
loading it (and importing numba) about half a second per process. Compiled code does not check indices; to audit them
run the tests with ``NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(mktemp -d)``.
"""

from __future__ import annotations

import math
import platform
import sys

import numpy as np
from numba import njit

__all__ = ["CRITERIA", "MAX_BYTES", "SORT_COST", "CartGrower", "sorts", "supported", "warm_up"]

#: The criteria ported, by scikit-learn's names (``log_loss`` is scikit-learn's Entropy too).
CRITERIA: dict[str, int] = {"gini": 0, "entropy": 1, "log_loss": 1}
_ENTROPY = 1

#: scikit-learn versions (major, minor) whose builder the port reproduces (checked by tests/test_cart.py).
VERIFIED_VERSIONS = ((1, 9),)

_RAND_R_MAX = 2147483647  # sklearn.utils._random.RAND_R_MAX
_MASK32 = 0xFFFFFFFF
_ROW_BITS = np.uint64(0xFFFFFFFF)  # the row of a (value, row) entry
_HIGH = np.uint64(32)
_INSERTION_SORT = 16  # sort mode: nodes of at most this many rows are insertion-sorted
_HIST_SPAN = 2  # sort mode: a histogram of ranks replaces the sort when the ranks span at most this times the rows
_MASK21 = (1 << 21) - 1
# sort mode: where the ranks (4 bytes each) are more than this many, a node whose rows have at most this many gathers
# them by row (its rows stay in cache from one feature to the next), else by feature (a feature's ranks are contiguous)
_ROW_GATHER = 1 << 18
_EPSILON = float(np.finfo(np.float64).eps)  # sklearn.tree._tree.EPSILON
_FEATURE_THRESHOLD = np.float32(1e-7)  # sklearn.tree._partitioner.FEATURE_THRESHOLD, a float32
_LN2 = math.log(2.0)  # the ln(2.0) of sklearn.tree._utils.log
# Gini candidates below the best proxy by more than this times the node weight are skipped: the two formulas of the
# proxy differ by a few ulps of the node weight (about 1e-15 of it), so none of them could win.
_FILTER_MARGIN = 1e-10
#: Sorting a node's entries of one feature costs about this many times partitioning them: the trees sort (sort mode)
#: where ``SORT_COST * max_features < n_features``, else they partition presorted lists (their speed, not the trees;
#: tuned on Spambase-sized forests: max_features 1 to 57 of 57).
SORT_COST = 3.0
#: The port is used where its arrays take at most this many bytes (24 per value of X presorted, 12 sorting), else
#: scikit-learn's builder grows the trees (e.g. full MNIST, 70000 x 784).
MAX_BYTES = 2**28


#: Where the port was verified: x86-64, whose scikit-learn wheels compute without fused multiply-adds (compilers
#: fuse a * b + c by default on other machines, e.g. aarch64, changing the last bits), little-endian (the entries).
_VERIFIED_MACHINE = platform.machine().lower() in ("x86_64", "amd64") and sys.byteorder == "little"


def sorts(max_features: int, n_features: int) -> bool:
    """Whether the trees find sorted values by sorting in each node (sort mode) rather than by partitioning presorted
    lists: where ``SORT_COST * max_features < n_features``."""
    return SORT_COST * min(max_features, n_features) < n_features


def supported() -> bool:
    """Whether the installed scikit-learn's tree builder is one the port reproduces (version 1.9.x)."""
    import sklearn

    try:
        major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) in VERIFIED_VERSIONS


@njit(cache=True, error_model="numpy")
def _rand_int(low: int, high: int, state: np.ndarray) -> int:
    """``sklearn.tree._utils.rand_int``: ``low + our_rand_r(state) % (high - low)`` (uint32 xorshift)."""
    s = state[0]
    if s == 0:
        s = 1  # DEFAULT_SEED
    s ^= (s << 13) & _MASK32
    s ^= s >> 17
    s ^= (s << 5) & _MASK32
    state[0] = s
    return low + (s & _RAND_R_MAX) % (high - low)


@njit(cache=True, error_model="numpy", inline="always")
def _entropy_term(count: float, w: float) -> float:
    """``p * log2(p)`` of a class of weight ``count`` among ``w`` (``p = count / w``), 0 for an empty class, as
    scikit-learn's Entropy computes each term (subtracting the 0 of an empty class leaves a sum unchanged)."""
    if count > 0.0:
        p = count / w
        return p * (math.log(p) / _LN2)
    return 0.0


@njit(cache=True, error_model="numpy")
def _impurities(criterion: int, left: np.ndarray, total: np.ndarray, wl: float, wr: float) -> tuple[float, float]:
    """``children_impurity`` of Gini or Entropy: (left, right) impurity from the left class counts and the node's."""
    n_classes = total.shape[0]
    if criterion == _ENTROPY:
        el = 0.0
        er = 0.0
        for c in range(n_classes):
            el -= _entropy_term(left[c], wl)
            er -= _entropy_term(total[c] - left[c], wr)
        return el, er
    sql = 0.0
    sqr = 0.0
    for c in range(n_classes):
        ck = left[c]
        sql += ck * ck
        ck = total[c] - left[c]
        sqr += ck * ck
    return 1.0 - sql / (wl * wl), 1.0 - sqr / (wr * wr)


@njit(cache=True, error_model="numpy")
def _node_impurity(criterion: int, total: np.ndarray, w: float) -> float:
    """``node_impurity`` of Gini or Entropy."""
    n_classes = total.shape[0]
    if criterion == _ENTROPY:
        e = 0.0
        for c in range(n_classes):
            e -= _entropy_term(total[c], w)
        return e
    sq = 0.0
    for c in range(n_classes):
        ck = total[c]
        sq += ck * ck
    return 1.0 - sq / (w * w)


@njit(cache=True, error_model="numpy")
def _in_bag(entries: np.ndarray, keep: np.ndarray, buf: np.ndarray) -> int:
    """Each feature's in-bag entries (``keep``: the rows of weight > 0) in the presorted order, into buffer 0;
    the number of them."""
    d, n = entries.shape
    m = 0
    for f in range(d):
        src = entries[f]
        dst = buf[0, f]
        m = 0
        for k in range(n):
            e = src[k]
            dst[m] = e
            m += keep[e & _ROW_BITS]
    return m


@njit(cache=True, error_model="numpy", inline="always")
def _two_class_candidate(criterion: int, fl: float, a1: float, wnode: float, total: np.ndarray, bound: float,
                         best_proxy: float, left: np.ndarray, best_left: np.ndarray) -> float:
    """The proxy improvement ``-fr * impurity_right - fl * impurity_left`` of a two-class candidate split with left
    weight fl, of which a1 of class 1, in a node of weight ``wnode``; -inf where Gini's exact proxy is below ``bound``
    (:func:`_scan`: it cannot beat the best). When it beats ``best_proxy``, its left counts go to ``best_left``.
    Inlined into both scans, the port's hot loops."""
    fr = wnode - fl
    a0 = fl - a1
    if criterion != _ENTROPY:
        b0 = total[0] - a0
        b1 = total[1] - a1
        if (a0 * a0 + a1 * a1) * fr + (b0 * b0 + b1 * b1) * fl < bound * fl * fr:
            return -np.inf
    left[0] = a0
    left[1] = a1
    il, ir = _impurities(criterion, left, total, fl, fr)
    proxy = -fr * ir - fl * il
    if proxy > best_proxy:
        best_left[0] = a0
        best_left[1] = a1
    return proxy


@njit(cache=True, error_model="numpy")
def _scan(criterion: int, rows: np.ndarray, vals: np.ndarray, side: int, f: int, y: np.ndarray, weight: np.ndarray,
          pw: np.ndarray, start: int, end: int, min_leaf: int, total: np.ndarray, wnode: float, left: np.ndarray,
          best_left: np.ndarray, best_proxy: float) -> tuple[float, int, float]:
    """The best split of one feature of a node, if its proxy improvement beats ``best_proxy`` (strictly):
    (proxy, position, threshold), position -1 if none does; its left class counts in ``best_left``.

    ``rows[side, f, 2 p]`` and ``vals[side, f, 2 p + 1]`` are the row and the value at position p of the feature's
    sorted segment (``pw``: each row's (weight << 32) + class-1 weight; ``weight`` for more classes). The
    candidates are the positions p in [start + min_leaf, end - min_leaf] whose value exceeds the previous one by
    more than FEATURE_THRESHOLD (in float32), in increasing order, as scikit-learn's ``next_p`` gives them. The class
    counts left of p are sums of integer weights (exact). For Gini, a candidate whose exact proxy
    ``sq_l / w_l + sq_r / w_r - w`` (as ``(sq_l w_r + sq_r w_l) / (w_l w_r)``) is below the best proxy by more than a
    margin far above the rounding error of either formula cannot win and is skipped; scikit-learn's formula decides
    every other comparison.
    """
    n_classes = total.shape[0]
    lo = start + min_leaf  # the first position leaving min_leaf rows on the left
    hi = end - min_leaf  # the last position leaving min_leaf rows on the right
    best_pos = -1
    best_threshold = 0.0
    if lo > hi:
        return best_proxy, best_pos, best_threshold
    rv = rows[side, f]
    vv = vals[side, f]
    eps = _FEATURE_THRESHOLD
    margin = _FILTER_MARGIN * wnode
    bound = best_proxy + wnode - margin  # a Gini candidate needs (sq_l w_r + sq_r w_l) / (w_l w_r) > bound
    if n_classes == 2:
        acc = 0  # (left weight << 32) + left weight of class 1
        for p in range(start, lo - 1):
            acc += pw[rv[2 * p]]
        prev = vv[2 * lo - 1]
        for p in range(lo, hi + 1):
            acc += pw[rv[2 * p - 2]]
            x = vv[2 * p + 1]
            if x > prev + eps:  # float32, as next_p
                proxy = _two_class_candidate(criterion, float(acc >> 32), float(acc & _MASK32), wnode, total, bound,
                                             best_proxy, left, best_left)
                if proxy > best_proxy:
                    best_proxy, best_pos, best_threshold = proxy, p, prev / 2.0 + x / 2.0
                    bound = best_proxy + wnode - margin
            prev = x
        return best_proxy, best_pos, best_threshold
    left[:] = 0.0  # sums of integer weights: exact
    fl = 0.0
    for p in range(start, lo - 1):
        i = rv[2 * p]
        left[y[i]] += weight[i]
        fl += weight[i]
    prev = vv[2 * lo - 1]
    for p in range(lo, hi + 1):
        i = rv[2 * p - 2]
        left[y[i]] += weight[i]
        fl += weight[i]
        x = vv[2 * p + 1]
        if x <= prev + eps:
            prev = x
            continue
        fr = wnode - fl
        if criterion != _ENTROPY:
            sql = 0.0
            sqr = 0.0
            for c in range(n_classes):
                sql += left[c] * left[c]
                sqr += (total[c] - left[c]) * (total[c] - left[c])
            if sql * fr + sqr * fl < bound * fl * fr:
                prev = x
                continue
        il, ir = _impurities(criterion, left, total, fl, fr)
        proxy = -fr * ir - fl * il
        if proxy > best_proxy:
            best_proxy = proxy
            bound = best_proxy + wnode - margin
            best_pos = p
            best_threshold = prev / 2.0 + x / 2.0
            best_left[:] = left
        prev = x
    return best_proxy, best_pos, best_threshold


@njit(cache=True, error_model="numpy")
def _hist_scan(criterion: int, hist: np.ndarray, span: int, qmin: int, vtab: np.ndarray, f: int, start: int, end: int,
               min_leaf: int, total: np.ndarray, wnode: float, left: np.ndarray, best_left: np.ndarray,
               best_proxy: float) -> tuple[float, int, float]:
    """:func:`_scan` (two classes) over a node's histogram of a feature's ranks: ``hist[q]`` packs the rows (bits
    42-62), the weight (21-41) and the class-1 weight (0-20) of rank qmin + q, ``vtab[f]`` the value of each rank. The
    positions between consecutive ranks present are the positions between distinct values: the same candidates,
    in the same order, with the same counts, values and thresholds as on the sorted rows."""
    lo = start + min_leaf
    hi = end - min_leaf
    best_pos = -1
    best_threshold = 0.0
    if lo > hi:
        return best_proxy, best_pos, best_threshold
    eps = _FEATURE_THRESHOLD
    margin = _FILTER_MARGIN * wnode
    bound = best_proxy + wnode - margin
    vt = vtab[f]
    acc = 0
    prev = -1
    for q in range(span):
        h = hist[q]
        if h == 0:
            continue
        if prev >= 0:
            p = start + (acc >> 42)
            if p > hi:
                break
            xp = vt[qmin + prev]
            x = vt[qmin + q]
            if p >= lo and x > xp + eps:
                proxy = _two_class_candidate(criterion, float((acc >> 21) & _MASK21), float(acc & _MASK21), wnode,
                                             total, bound, best_proxy, left, best_left)
                if proxy > best_proxy:
                    best_proxy, best_pos, best_threshold = proxy, p, xp / 2.0 + x / 2.0
                    bound = best_proxy + wnode - margin
        acc += h
        prev = q
    return best_proxy, best_pos, best_threshold


@njit(cache=True, error_model="numpy")
def _sort_keys(keys: np.ndarray, tmp: np.ndarray, lo: int, hi: int, counts: np.ndarray, span: int,
               vbits: np.ndarray, f: int, qmin: int, sbuf: np.ndarray, out: int) -> None:
    """The (rank - qmin) << 32 | row ``keys[lo:hi]`` (ranks - qmin at most ``span``) sorted by rank into
    ``sbuf[out:out + hi - lo]`` as (value bits << 32 | row) entries (``vbits[f]``: the value bits of each rank): an
    insertion sort for a few keys, else a least-significant-digit radix sort over the bits of ``span`` (digits of at
    most log2(keys) bits, 4 to 11; ``tmp`` the other buffer)."""
    n_keys = hi - lo
    bf = vbits[f]
    if n_keys <= _INSERTION_SORT:
        for k in range(lo + 1, hi):
            key = keys[k]
            j = k - 1
            while j >= lo and keys[j] > key:
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = key
        for k in range(n_keys):
            key = keys[lo + k]
            sbuf[out + k] = (np.uint64(bf[qmin + np.int64(key >> _HIGH)]) << _HIGH) | (key & _ROW_BITS)
        return
    n_bits = 0
    while span > 0:
        n_bits += 1
        span >>= 1
    width = 4
    while width < 11 and (2 << width) <= n_keys:
        width += 1
    n_passes = (n_bits + width - 1) // width
    width = (n_bits + n_passes - 1) // n_passes
    mask = np.uint64((1 << width) - 1)
    src = keys
    dst = tmp
    for step in range(n_passes):
        shift = np.uint64(32 + step * width)
        n_buckets = 1 << width
        for c in range(n_buckets):
            counts[c] = 0
        for k in range(lo, hi):
            counts[(src[k] >> shift) & mask] += 1
        position = 0
        for c in range(n_buckets):
            size = counts[c]
            counts[c] = position
            position += size
        if step < n_passes - 1:
            for k in range(lo, hi):
                key = src[k]
                digit = (key >> shift) & mask
                dst[lo + counts[digit]] = key
                counts[digit] += 1
            src, dst = dst, src
        else:
            for k in range(lo, hi):
                key = src[k]
                digit = (key >> shift) & mask
                sbuf[out + counts[digit]] = (np.uint64(bf[qmin + np.int64(key >> _HIGH)]) << _HIGH) | (key & _ROW_BITS)
                counts[digit] += 1


@njit(cache=True, error_model="numpy")
def _sorted_segment(f: int, start: int, end: int, samples: np.ndarray, vbits: np.ndarray, xrank: np.ndarray,
                    rrank: np.ndarray, vtab: np.ndarray, keys: np.ndarray, tmp: np.ndarray, counts: np.ndarray,
                    sbuf: np.ndarray, packed: np.ndarray, hist: np.ndarray, use_hist: bool) -> tuple[int, int, int]:
    """Sort mode: the rows ``samples[start:end]`` in the order of feature ``f``'s values. Returns (status, lowest
    rank, number of ranks spanned); status 0: the feature is constant there (max <= min + FEATURE_THRESHOLD in
    float32: scikit-learn's test on its sorted values), nothing done; 1: their (value, row) entries sorted into
    ``sbuf[start:end]``; 2: ``hist[q]`` holds the sum of ``packed`` over the rows of rank lowest + q (when
    ``use_hist`` and the ranks span at most a few times the rows).

    Sorted by the values' dense ranks (``xrank`` by feature, ``rrank`` the same by row; ``vtab`` the value of each
    rank, ``vbits`` its float32 bits): the rows of the lowest value first, then the others by :func:`_sort_keys`.
    Only the ranks are gathered: from ``rrank`` in a small node of large data (its rows' ranks stay in cache from
    one feature to the next, as scikit-learn's reads of X), else from ``xrank`` (a feature's ranks are contiguous).
    """
    n_node = end - start
    r = samples[start]
    qmin = xrank[f, r]
    qmax = qmin
    if rrank.size > _ROW_GATHER and n_node * rrank.shape[1] <= _ROW_GATHER:
        for k in range(start, end):
            r = samples[k]
            q = rrank[r, f]
            keys[k - start] = (np.uint64(q) << _HIGH) | np.uint64(r)
            qmin = min(qmin, q)
            qmax = max(qmax, q)
    else:
        rf = xrank[f]
        for k in range(start, end):
            r = samples[k]
            q = rf[r]
            keys[k - start] = (np.uint64(q) << _HIGH) | np.uint64(r)
            qmin = min(qmin, q)
            qmax = max(qmax, q)
    if vtab[f, qmax] <= vtab[f, qmin] + _FEATURE_THRESHOLD:  # the largest and smallest values
        return 0, qmin, 0
    span = qmax - qmin + 1
    if use_hist and span <= _HIST_SPAN * n_node:
        for q in range(span):
            hist[q] = 0
        for k in range(n_node):
            key = keys[k]
            hist[np.int64(key >> _HIGH) - qmin] += packed[key & _ROW_BITS]
        return 2, qmin, span
    # ranks from qmin, the keys of rank qmin first (sparse data: most values are the lowest, 0), then the others
    low = np.uint64(qmin) << _HIGH
    lowest = 0
    for k in range(n_node):
        key = keys[k] - low
        if key <= _ROW_BITS:  # rank qmin
            keys[k] = keys[lowest]
            keys[lowest] = key
            lowest += 1
        else:
            keys[k] = key
    low_bits = np.uint64(vbits[f, qmin]) << _HIGH
    for k in range(lowest):
        sbuf[start + k] = low_bits | (keys[k] & _ROW_BITS)
    _sort_keys(keys, tmp, lowest, n_node, counts, qmax - qmin, vbits, f, qmin, sbuf, start + lowest)
    return 1, qmin, span


@njit(cache=True, error_model="numpy", inline="always")
def _push(st_int: np.ndarray, st_impurity: np.ndarray, top: int, start: int, end: int, depth: int, parent: int,
          is_left: int, n_known: int, impurity: float) -> None:
    """Write entry ``top`` of the builder's stack (its class counts are written by the caller): the node's rows
    ``start:end``, depth, parent, side, the number of constant features known and its impurity, as scikit-learn's
    ``StackRecord``."""
    st_int[top, 0] = start
    st_int[top, 1] = end
    st_int[top, 2] = depth
    st_int[top, 3] = parent
    st_int[top, 4] = is_left
    st_int[top, 5] = n_known
    st_impurity[top] = impurity


@njit(cache=True, error_model="numpy")
def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` (2-d), or a copy with room for at least ``need`` rows (capacity doubled)."""
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, error_model="numpy")
def _grow_trees(entries: np.ndarray, x: np.ndarray, vbits: np.ndarray, xrank: np.ndarray, rrank: np.ndarray,
                vtab: np.ndarray,
                y: np.ndarray, weights: np.ndarray, seeds: np.ndarray, n_classes: int, criterion: int,
                max_features: int, min_samples_leaf: int, min_samples_split: int, max_depth: int,
                min_impurity_decrease: float, sorting: bool, buf: np.ndarray, goes_left: np.ndarray,
                samples: np.ndarray, keys: np.ndarray, tmp: np.ndarray, counts: np.ndarray, sbuf: np.ndarray,
                hist: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grow one tree per row of ``weights`` as ``DepthFirstTreeBuilder.build`` with a ``BestSplitter`` whose
    ``rand_r_state`` is the tree's entry of ``seeds``, all in one call.

    The trees find the sorted values of a feature in a node one of two ways (the split found is the same):

    - presorted: ``entries`` (d, n) uint64 holds each feature's (value, row) entries sorted by value (value bits
      high, row low); ``buf`` (2, d, n) two buffers of such entries (``rows``, ``vals``: its int32 and float32
      views). The segments of the nodes at depth k are in buffer k % 2: a split partitions the segment of every
      feature that is not constant in the node from its buffer into the other, the left rows first, each side in
      order. O(features * rows) per split, whatever ``max_features``.
    - sort: the node's rows are ``samples[start:end]``; the ranks of each feature drawn (``xrank``; ``vtab`` the
      value of each rank, ``vbits`` its float32 bits) are gathered and sorted into ``sbuf``
      (:func:`_sorted_segment`), or counted in a histogram (:func:`_hist_scan`); ``x`` (X, C-contiguous) routes
      the rows of a split.

    ``sorting`` says which (:data:`SORT_COST`).

    Returns (node counts, max depths, the node table): the rows of the table are the nodes of the trees one after
    another, its columns left child, right child, feature, threshold, impurity, n_node_samples,
    weighted_n_node_samples, missing_go_to_left, then the value of each class (integers are exact in float64).
    """
    d = entries.shape[0]
    n = y.shape[0]
    n_trees = weights.shape[0]
    rows = buf.view(np.int32)
    vals = buf.view(np.float32)
    srows = sbuf.view(np.int32).reshape(1, 1, 2 * n)  # sort mode's segment, as a buffer of one feature
    svals = sbuf.view(np.float32).reshape(1, 1, 2 * n)
    node_counts = np.empty(n_trees, dtype=np.int64)
    depths = np.empty(n_trees, dtype=np.int64)
    out = np.empty((256, 8 + n_classes))
    base = 0
    for tree in range(n_trees):
        weight = weights[tree]
        seed = seeds[tree]
        m = 0
        for i in range(n):
            if weight[i] != 0.0:
                samples[m] = i
                m += 1
        weighted_n_samples = 0.0
        for i in range(n):
            weighted_n_samples += weight[i]
        wt = np.empty(n, dtype=np.int64)  # the (integer) weights; (weight << 32) + weight if class 1
        pw = np.empty(n, dtype=np.int64)
        for i in range(n):
            wt[i] = np.int64(weight[i])
            pw[i] = (wt[i] << 32) + (wt[i] if y[i] == 1 else 0)
        total = np.zeros(n_classes)
        for i in range(n):
            total[y[i]] += weight[i]
        # sort mode's histograms pack (rows << 42) + (weight << 21) + class-1 weight: two classes, sums below 2**21
        use_hist = n_classes == 2 and n < (1 << 21) and weighted_n_samples < (1 << 21)
        packed = np.zeros(n, dtype=np.int64)
        if use_hist:
            for i in range(n):
                packed[i] = (1 << 42) + (wt[i] << 21) + (wt[i] if y[i] == 1 else 0)
        if not sorting:
            for i in range(n):
                goes_left[i] = weight[i] != 0.0
            _in_bag(entries, goes_left, buf)

        state = np.empty(1, dtype=np.int64)
        state[0] = seed
        features = np.arange(d)
        constant_features = np.empty(d, dtype=np.int64)
        is_const = np.zeros(d, dtype=np.bool_)
        to_partition = np.empty(d, dtype=np.int64)
        # a feature found constant (by its node values) at the presorted node [flat_start[f], flat_end[f]) is
        # constant in all its descendants: its segments are no longer partitioned there, and a draw there finds it
        # constant, as scikit-learn does from the node values
        flat_start = np.full(d, -1, dtype=np.int64)
        flat_end = np.full(d, -1, dtype=np.int64)

        # the nodes, rows base.. of the table `out` (grown if need be): left child, right child, feature, threshold,
        # impurity, n_node_samples, weighted_n_node_samples, missing_go_to_left, then the value of each class
        cap = 2 * m + 1
        out = _grown(out, base + cap)
        for k in range(base, base + cap):
            out[k, 0] = -1.0  # _TREE_LEAF
            out[k, 1] = -1.0
            out[k, 2] = -2.0  # _TREE_UNDEFINED
            out[k, 3] = -2.0
            out[k, 7] = 0.0

        # the stack of nodes to grow: start, end, depth, parent, is_left, n_constant_features; impurity; class counts
        st_int = np.empty((cap + 2, 6), dtype=np.int64)
        st_impurity = np.empty(cap + 2)
        st_counts = np.empty((cap + 2, n_classes))
        _push(st_int, st_impurity, 0, 0, m, 0, -2, 0, 0, np.inf)  # parent -2: _TREE_UNDEFINED
        st_counts[0, :] = total
        top = 1

        left = np.empty(n_classes)
        best_left = np.empty(n_classes)
        node_count = 0
        max_depth_seen = -1
        first = True
        while top > 0:
            top -= 1
            start = st_int[top, 0]
            end = st_int[top, 1]
            depth = st_int[top, 2]
            parent = st_int[top, 3]
            is_left = st_int[top, 4]
            n_known = st_int[top, 5]
            impurity = st_impurity[top]
            total[:] = st_counts[top]
            wnode = 0.0
            for c in range(n_classes):
                wnode += total[c]
            n_node = end - start
            side = depth % 2  # presorted: the buffer of this node's segments

            is_leaf = depth >= max_depth or n_node < min_samples_split or n_node < 2 * min_samples_leaf
            if first:
                impurity = _node_impurity(criterion, total, wnode)
                first = False
            is_leaf = is_leaf or impurity <= _EPSILON

            best_feature = 0
            best_pos = end
            best_threshold = 0.0
            n_total = n_known
            if not is_leaf:
                # node_split_best: draw features (Fisher-Yates on `features`) until max_features non-constant ones
                best_proxy = -np.inf
                f_i = d
                n_visited = 0
                n_found = 0
                n_drawn = 0
                while f_i > n_total and (n_visited < max_features or n_visited <= n_found + n_drawn):
                    n_visited += 1
                    f_j = _rand_int(n_drawn, f_i - n_found, state)
                    if f_j < n_known:
                        f = features[n_drawn]
                        features[n_drawn] = features[f_j]
                        features[f_j] = f
                        n_drawn += 1
                        continue
                    f_j += n_found
                    f = features[f_j]
                    if flat_start[f] <= start and end <= flat_end[f]:
                        constant = True
                    elif not sorting:
                        constant = vals[side, f, 2 * end - 1] <= vals[side, f, 2 * start + 1] + _FEATURE_THRESHOLD
                    else:
                        status, qmin, span = _sorted_segment(f, start, end, samples, vbits, xrank, rrank, vtab,
                                                             keys, tmp, counts, sbuf, packed, hist, use_hist)
                        constant = status == 0
                    if constant:
                        features[f_j] = features[n_total]
                        features[n_total] = f
                        n_found += 1
                        n_total += 1
                        continue
                    f_i -= 1
                    features[f_j] = features[f_i]
                    features[f_i] = f
                    if not sorting:
                        proxy, pos, thr = _scan(criterion, rows, vals, side, f, y, weight, pw, start, end,
                                                min_samples_leaf, total, wnode, left, best_left, best_proxy)
                    elif status == 1:
                        proxy, pos, thr = _scan(criterion, srows, svals, 0, 0, y, weight, pw, start, end,
                                                min_samples_leaf, total, wnode, left, best_left, best_proxy)
                    else:
                        proxy, pos, thr = _hist_scan(criterion, hist, span, qmin, vtab, f, start, end,
                                                     min_samples_leaf, total, wnode, left, best_left, best_proxy)
                    if pos >= 0:
                        best_proxy = proxy
                        best_feature = f
                        best_pos = pos
                        best_threshold = thr
                for k in range(n_known):
                    features[k] = constant_features[k]
                for k in range(n_known, n_total):
                    constant_features[k] = features[k]

                improvement = -np.inf
                impurity_left = np.inf
                impurity_right = np.inf
                if best_pos < end:
                    wl = 0.0
                    for c in range(n_classes):
                        wl += best_left[c]
                    wr = wnode - wl
                    impurity_left, impurity_right = _impurities(criterion, best_left, total, wl, wr)
                    improvement = ((wnode / weighted_n_samples)
                                   * (impurity - (wr / wnode * impurity_right) - (wl / wnode * impurity_left)))
                is_leaf = best_pos >= end or improvement + _EPSILON < min_impurity_decrease

            node_id = node_count
            node_count += 1
            row = base + node_id
            out[row, 4] = impurity
            out[row, 5] = n_node
            out[row, 6] = wnode
            if parent != -2:
                out[base + parent, 0 if is_left else 1] = node_id
            if not is_leaf:
                out[row, 2] = best_feature
                out[row, 3] = best_threshold
                out[row, 7] = 1.0 if (best_pos - start) > (end - best_pos) else 0.0
            for c in range(n_classes):
                out[row, 8 + c] = total[c] / wnode

            if not is_leaf:
                if not sorting:
                    # the features to partition: those that may still be drawn below (neither constant for scikit-learn
                    # in the children nor found constant here)
                    for k in range(n_total):
                        is_const[features[k]] = True
                    n_part = 0
                    for f in range(d):
                        if is_const[f] or (flat_start[f] <= start and end <= flat_end[f]):
                            continue
                        if vals[side, f, 2 * end - 1] <= vals[side, f, 2 * start + 1] + _FEATURE_THRESHOLD:
                            flat_start[f] = start
                            flat_end[f] = end
                            continue
                        to_partition[n_part] = f
                        n_part += 1
                    for k in range(n_total):
                        is_const[features[k]] = False
                    # the children: the rows left of best_pos in best_feature's order, each feature's segment
                    # partitioned stably into the other buffer
                    rb = rows[side, best_feature]
                    for k in range(start, best_pos):
                        goes_left[rb[2 * k]] = 1
                    for k in range(best_pos, end):
                        goes_left[rb[2 * k]] = 0
                    src = buf[side]
                    dst = buf[1 - side]
                    for j in range(n_part):
                        f = to_partition[j]
                        s = src[f]
                        t = dst[f]
                        if f == best_feature:
                            for k in range(start, end):
                                t[k] = s[k]
                            continue
                        a = start
                        b = best_pos
                        for k in range(start, end):
                            e = s[k]
                            g = goes_left[e & _ROW_BITS]
                            t[a if g else b] = e
                            a += g
                            b += 1 - g
                else:
                    # as partition_samples_final: X[row, feature] <= threshold goes left (in any order: the split
                    # found in a node does not depend on the order of its rows)
                    a = start
                    b = best_pos  # the first row of the right child, as scikit-learn's split position
                    for k in range(start, end):
                        r = samples[k]
                        g = x[r, best_feature] <= best_threshold
                        tmp[a if g else b] = r
                        a += g
                        b += 1 - g
                    for k in range(start, end):
                        samples[k] = tmp[k]

                # push the right child, then the left (grown first)
                _push(st_int, st_impurity, top, best_pos, end, depth + 1, node_id, 0, n_total, impurity_right)
                for c in range(n_classes):
                    st_counts[top, c] = total[c] - best_left[c]
                top += 1
                _push(st_int, st_impurity, top, start, best_pos, depth + 1, node_id, 1, n_total, impurity_left)
                st_counts[top, :] = best_left
                top += 1
            if depth > max_depth_seen:
                max_depth_seen = depth
        node_counts[tree] = node_count
        depths[tree] = max_depth_seen
        base += node_count
    return node_counts, depths, out[:base]


class CartGrower:
    """Grows scikit-learn classification trees on one data set with the port: ``grow`` gives the ``Tree`` that
    ``DepthFirstTreeBuilder(BestSplitter(criterion, max_features, min_samples_leaf, 0.0, random_state, None),
    min_samples_split, min_samples_leaf, 0.0, max_depth, min_impurity_decrease).build(tree, X, y, weight)`` builds.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32
        The data, finite (:meth:`covers`). Each feature is sorted once, here.
    y_codes : ndarray of shape (n_samples,)
        Class codes in 0..n_classes-1.
    n_classes : int
        Number of classes K of the trees (their ``value`` has K columns).
    criterion : {"gini", "entropy", "log_loss"}
    max_features, min_samples_leaf, min_samples_split, max_depth : int
        As the builder receives them (``max_depth`` int32 max for none, ``min_samples_split`` already at least
        ``2 * min_samples_leaf`` as DecisionTreeClassifier passes it, or not: the builder checks both).
    min_impurity_decrease : float
    """

    def __init__(self, X: np.ndarray, y_codes: np.ndarray, n_classes: int, *, criterion: str, max_features: int,
                 min_samples_leaf: int, min_samples_split: int, max_depth: int,
                 min_impurity_decrease: float = 0.0) -> None:
        from sklearn.tree._tree import NODE_DTYPE

        self._X = np.ascontiguousarray(X, dtype=np.float32)
        n, d = self._X.shape
        self.n_features, self.n_classes = d, int(n_classes)
        self._node_dtype = NODE_DTYPE
        self._y = np.ascontiguousarray(y_codes, dtype=np.int64)
        self._ones = np.ones(n, dtype=np.float64)
        self._criterion = CRITERIA[criterion]
        self._params = (int(max_features), int(min_samples_leaf), int(min_samples_split), int(max_depth),
                        float(min_impurity_decrease))
        self._goes_left = np.zeros(n, dtype=np.uint8)
        self._samples = np.empty(n, dtype=np.int32)
        self._keys = np.empty(n, dtype=np.uint64)
        self._tmp = np.empty(n, dtype=np.uint64)
        self._counts = np.empty(2048, dtype=np.int64)
        self._hist = np.empty(n, dtype=np.int64)
        self._sbuf = np.empty(n, dtype=np.uint64)
        #: sort mode (:data:`SORT_COST`) rather than presorted lists (either grows the same trees)
        self.sorting = sorts(int(max_features), d)
        self._presorted: tuple[np.ndarray, np.ndarray] | None = None
        self._sorted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _sorted_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Each feature's rows in increasing order of value (stable) and those values, shape (d, n) each."""
        order = np.argsort(self._X, axis=0, kind="stable").T
        return order, np.take_along_axis(self._X, order.T, axis=0).T

    def _presorted_lists(self) -> tuple[np.ndarray, np.ndarray]:
        """Presorted mode's arrays (made once): each feature's (value, row) entries in increasing order of value,
        value bits high and row low (little-endian: covers()), and two buffers of such entries, 24 bytes per value
        of X in all."""
        if self._presorted is None:
            n, d = self._X.shape
            order, values = self._sorted_columns()
            entries = np.ascontiguousarray((values.view(np.uint32).astype(np.uint64) << np.uint64(32))
                                           | order.astype(np.uint64))
            self._presorted = entries, np.empty((2, d, n), dtype=np.uint64)
        return self._presorted

    def _ranks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sort mode's arrays (made once): each value's dense rank among its feature's distinct values, by feature
        and by row, and the value of each rank; 12 bytes per value of X."""
        if self._sorted is None:
            n, d = self._X.shape
            order, values = self._sorted_columns()
            steps = np.ones(values.shape, dtype=np.int32)
            steps[:, 0] = 0
            steps[:, 1:] = values[:, 1:] != values[:, :-1]
            ranks = np.cumsum(steps, axis=1, dtype=np.int32)
            xrank = np.empty((d, n), dtype=np.int32)
            np.put_along_axis(xrank, order, ranks, axis=1)
            vtab = np.zeros((d, n), dtype=np.float32)
            np.put_along_axis(vtab, ranks, values, axis=1)
            self._sorted = xrank, np.ascontiguousarray(xrank.T), vtab
        return self._sorted

    @staticmethod
    def covers(X: np.ndarray, y_codes: np.ndarray, n_classes: int, *, criterion: str, max_features: int,
               sample_weight: np.ndarray | None = None) -> bool:
        """Whether the port grows scikit-learn's trees on these data, faster: a verified scikit-learn version
        (:func:`supported`) on x86-64 (where it was verified), a ported criterion, 2-d float32 finite X whose
        arrays for the port take at most :data:`MAX_BYTES`, class codes in 0..n_classes-1, integer sample weights
        (or none) summing to less than 2**31 (as the number of rows); and two classes where the trees would sort
        (:func:`sorts`: few features drawn), where the port was measured slower than scikit-learn with more classes
        (0.9x on letters' 26, 0.74x on MNIST's 10 digits; it grows the same trees)."""
        if not supported() or not _VERIFIED_MACHINE or criterion not in CRITERIA:
            return False
        if not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype != np.float32 or not 0 < X.shape[0] < 2**31:
            return False
        n, d = X.shape
        sorting = sorts(int(max_features), d)
        if sorting and n_classes > 2:  # sort mode is not faster than scikit-learn there (letters, MNIST's digits)
            return False
        if d == 0 or (12 if sorting else 24) * n * d > MAX_BYTES or not np.isfinite(X).all():
            return False
        y = np.asarray(y_codes)
        if y.shape != (n,) or y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= n_classes:
            return False
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            if (w.shape != y.shape or not np.isfinite(w).all() or (w < 0).any() or (w != np.rint(w)).any()
                    or w.sum() >= 2**31):
                return False
        return True

    @staticmethod
    def splitter_seed(random_state: np.random.RandomState) -> int:
        """The ``rand_r_state`` scikit-learn's ``Splitter.init`` draws from the tree's ``random_state``."""
        return int(random_state.randint(0, _RAND_R_MAX))

    def grow(self, sample_weight: np.ndarray | None, random_state: np.random.RandomState) -> object:
        """The tree (a ``sklearn.tree._tree.Tree``) grown on the rows with ``sample_weight`` (integer-valued
        counts; None: all rows, weight 1), its splitter seeded from ``random_state`` (:meth:`splitter_seed`)."""
        weights = self._ones[None, :] if sample_weight is None else np.asarray(sample_weight)[None, :]
        return self.grow_many(weights, [self.splitter_seed(random_state)])[0]

    def grow_many(self, weights: np.ndarray, seeds: list[int]) -> list[object]:
        """The trees (``sklearn.tree._tree.Tree``) grown on each row of ``weights`` (integer-valued counts, one row
        per tree, ones for no weights) with each splitter seed (:meth:`splitter_seed`), in one compiled call."""
        from sklearn.tree._tree import Tree

        weights = np.ascontiguousarray(weights, dtype=np.float64)
        sums = weights.sum(axis=1) if weights.ndim == 2 else None
        if (sums is None or weights.shape[1] != len(self._y) or (weights < 0).any()
                or (weights != np.rint(weights)).any() or (sums < 1).any() or (sums >= 2**31).any()):
            raise ValueError("weights must be rows of non-negative integer counts, one per row of X, summing to at "
                             "least 1 and less than 2**31")
        max_features, min_leaf, min_split, max_depth, min_decrease = self._params
        d = self.n_features
        if self.sorting:
            x, (xrank, rrank, vtab) = self._X, self._ranks()
            entries, buf = np.empty((d, 0), dtype=np.uint64), np.empty((2, d, 0), dtype=np.uint64)
        else:
            entries, buf = self._presorted_lists()
            x, rrank = np.empty((0, d), dtype=np.float32), np.empty((0, d), dtype=np.int32)
            xrank, vtab = np.empty((d, 0), dtype=np.int32), np.empty((d, 0), dtype=np.float32)
        node_counts, depths, table = _grow_trees(
            entries, x, vtab.view(np.uint32), xrank, rrank, vtab, self._y, weights,
            np.asarray(seeds, dtype=np.int64), self.n_classes, self._criterion, max_features, min_leaf, min_split,
            max_depth, min_decrease, bool(self.sorting), buf, self._goes_left, self._samples, self._keys,
            self._tmp, self._counts, self._sbuf, self._hist)
        nodes = np.zeros(len(table), dtype=self._node_dtype)
        for column, field in enumerate(("left_child", "right_child", "feature", "threshold", "impurity",
                                        "n_node_samples", "weighted_n_node_samples", "missing_go_to_left")):
            nodes[field] = table[:, column]  # integers are exact in float64
        values = np.ascontiguousarray(table[:, 8:]).reshape(len(table), 1, self.n_classes)
        n_classes = np.array([self.n_classes], dtype=np.intp)
        trees = []
        end = 0
        for count, depth in zip(node_counts.tolist(), depths.tolist(), strict=True):
            start, end = end, end + count
            tree = Tree(self.n_features, n_classes, 1)
            tree.__setstate__({"max_depth": depth, "node_count": count, "nodes": nodes[start:end],
                               "values": values[start:end]})
            trees.append(tree)
        return trees


def warm_up() -> None:
    """Compile the port once (numba writes the compiled code to its on-disk cache): about 20 s on a slow 2-core
    machine, which the first forest of a fresh installation would otherwise pay, in every worker process at once.
    ``make install`` calls it. Grows a few small trees in both modes (presorted, sorting) with both criteria, with
    and without weights."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(40, 6)).astype(np.float32)
    y = rng.randint(0, 2, size=40)
    for criterion in ("gini", "entropy"):
        for sorting in (False, True):
            grower = CartGrower(X, y, 2, criterion=criterion, max_features=6, min_samples_leaf=1,
                                min_samples_split=2, max_depth=2**31 - 1)
            grower.sorting = sorting
            grower.grow(None, np.random.RandomState(1))
            grower.grow(np.bincount(rng.randint(0, 40, 40), minlength=40).astype(np.float64),
                        np.random.RandomState(2))


if __name__ == "__main__":  # python -m forestlab.learners._cart: compile the port (make install)
    warm_up()
