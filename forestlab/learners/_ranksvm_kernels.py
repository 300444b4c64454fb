"""Compiled (numba) counts of RankSVM's pairwise hinge loss: for each point, how many pairs it violates.

Imported lazily by ``_ranksvm`` (numba's import and the load of the cached machine code are paid only by a process
that fits a RankSVM). Compiled code is cached on disk (``cache=True``).

:func:`pairwise_hinge <forestlab.learners._ranksvm.pairwise_hinge>` and the slope of the solver's line search
count, for each positive, the negatives it is not ranked above by the margin, and for each negative, the positives
not ranked above it. numpy did it with two sorts and two binary searches, a dozen calls on a few hundred points,
and the line search's bisection makes about 40 of them per step. Here, on a line, the points are kept in the order
of their scores from one call to the next (:class:`LineOrder`) and re-sorted by insertion, which costs little when
the bisection moves t by little (its last steps, most of them), and the counts are read in one merge of the two
sorted lists. The counts are integers, the same whatever computes them, as long as the scores compared are the same
numbers: the scores on the line, ``s + t * d``, are computed as numpy computes them (the product rounded, then the
sum; numba fuses nothing into a multiply-add without ``fastmath``), so the counts are numpy's, and what the callers
compute from them (in numpy) is unchanged bit for bit (tests/test_ranksvm.py).

:func:`line_minimum` runs the whole bisection of the line search here: its slope's two products of the counts with
the scores' directions are BLAS's ``ddot`` (numba's ``np.dot``, from scipy's OpenBLAS), the routine numpy's ``@``
calls on them (from numpy's own OpenBLAS; the two gave the same products bit for bit in 20,000 random trials under
each x86-64 kernel this machine runs), so the slope, each step and the minimiser are the numbers the Python loop
computed (tests/test_ranksvm.py checks it on the machine at hand).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _insertion_sort(values: np.ndarray, order: np.ndarray) -> None:
    """Reorder ``order`` (a permutation) in place so that ``values[order]`` is non-decreasing: O(n + the number of
    pairs out of order), small when the order is nearly right already."""
    for k in range(1, len(order)):
        item = order[k]
        key = values[item]
        j = k - 1
        while j >= 0 and values[order[j]] > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = item


@njit(cache=True, nogil=True)
def _merge_counts(u: np.ndarray, order_u: np.ndarray, v: np.ndarray, order_v: np.ndarray,
                  c_pos: np.ndarray, c_neg: np.ndarray) -> None:
    """``c_pos[i] = #{j : v[j] > u[i]}`` and ``c_neg[j] = #{i : u[i] < v[j]}`` from both lists in sorted order
    (``order_u``, ``order_v``): numpy's ``len(v) - searchsorted(sort(v), u, "right")`` and
    ``searchsorted(sort(u), v, "left")``, in one merge."""
    n_u, n_v = len(order_u), len(order_v)
    j = 0  # the number of v <= the current u (u ascending)
    for k in range(n_u):
        x = u[order_u[k]]
        while j < n_v and v[order_v[j]] <= x:
            j += 1
        c_pos[order_u[k]] = n_v - j
    i = 0  # the number of u < the current v (v ascending)
    for k in range(n_v):
        x = v[order_v[k]]
        while i < n_u and u[order_u[i]] < x:
            i += 1
        c_neg[order_v[k]] = i


@njit(cache=True, nogil=True)
def violated_counts(u: np.ndarray, s_neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``c_pos[i] = #{j : s_neg[j] > u[i]}`` and ``c_neg[j] = #{i : u[i] < s_neg[j]}`` (``u``: the positives'
    scores minus the margin), as int64 arrays."""
    c_pos = np.empty(len(u), dtype=np.int64)
    c_neg = np.empty(len(s_neg), dtype=np.int64)
    _merge_counts(u, np.argsort(u), s_neg, np.argsort(s_neg), c_pos, c_neg)
    return c_pos, c_neg


@njit(cache=True, nogil=True)
def violated_counts_on_line(s_pos: np.ndarray, s_neg: np.ndarray, d_pos: np.ndarray, d_neg: np.ndarray, t: float,
                            order_pos: np.ndarray, order_neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`violated_counts` at the scores ``s + t * d`` (positives: ``s_pos + t * d_pos``, less the margin 1).
    ``order_pos`` / ``order_neg``: permutations of the positives / negatives, in the order of their scores at the
    previous call on this line (any permutation at the first), updated in place to the order at ``t``."""
    u = np.empty(len(s_pos))
    for i in range(len(s_pos)):
        u[i] = (s_pos[i] + t * d_pos[i]) - 1.0
    v = np.empty(len(s_neg))
    for j in range(len(s_neg)):
        v[j] = s_neg[j] + t * d_neg[j]
    _insertion_sort(u, order_pos)
    _insertion_sort(v, order_neg)
    c_pos = np.empty(len(u), dtype=np.int64)
    c_neg = np.empty(len(v), dtype=np.int64)
    _merge_counts(u, order_pos, v, order_neg, c_pos, c_neg)
    return c_pos, c_neg


@njit(cache=True, nogil=True)
def _slope_on_line(t: float, s_pos: np.ndarray, s_neg: np.ndarray, d_pos: np.ndarray, d_neg: np.ndarray,
                   order_pos: np.ndarray, order_neg: np.ndarray, u: np.ndarray, v: np.ndarray, c_pos: np.ndarray,
                   c_neg: np.ndarray, f_pos: np.ndarray, f_neg: np.ndarray, wd: float, dd: float, cp: float,
                   n_pairs: float) -> float:
    """The slope at ``t`` of the objective on the line (see :func:`line_minimum`), into the work arrays."""
    for i in range(len(s_pos)):
        u[i] = (s_pos[i] + t * d_pos[i]) - 1.0
    for j in range(len(s_neg)):
        v[j] = s_neg[j] + t * d_neg[j]
    _insertion_sort(u, order_pos)
    _insertion_sort(v, order_neg)
    _merge_counts(u, order_pos, v, order_neg, c_pos, c_neg)
    for i in range(len(c_pos)):
        f_pos[i] = c_pos[i]
    for j in range(len(c_neg)):
        f_neg[j] = c_neg[j]
    # numpy's `c_neg @ d_neg - c_pos @ d_pos`: the int64 counts cast to float64 (exact), then BLAS's ddot (np.dot
    # calls the same routine here), whose summation order a loop of ours would not reproduce
    return wd + t * dd + cp * (np.dot(f_neg, d_neg) - np.dot(f_pos, d_pos)) / n_pairs


@njit(cache=True, nogil=True)
def line_minimum(s_pos: np.ndarray, s_neg: np.ndarray, d_pos: np.ndarray, d_neg: np.ndarray, order_pos: np.ndarray,
                 order_neg: np.ndarray, wd: float, dd: float, cp: float, n_pairs: float) -> float:
    """argmin over t >= 0 of ½‖w + t δ‖² + cp × (mean pair hinge at the scores s + t d), by bisection of its
    derivative ``wd + t dd + cp (Σ_j c_neg[j] d_neg[j] − Σ_i c_pos[i] d_pos[i]) / n_pairs`` (``wd`` = w·δ, ``dd`` =
    δ·δ > 0; the counts of :func:`violated_counts_on_line` at t): doubling from t = 1 until it is no longer
    negative, then at most 60 halvings, until the bracket is within 1e-12 of its upper end. The same steps, the same
    floating-point operations in the same order, as the bisection in Python and numpy it replaced (kept as the
    reference in tests/test_ranksvm.py), without a Python call and two numpy products per evaluation of the slope
    (about 40 per line search). ``order_pos`` / ``order_neg`` as in :func:`violated_counts_on_line`."""
    n_p, n_n = len(s_pos), len(s_neg)
    u, v = np.empty(n_p), np.empty(n_n)
    c_pos, c_neg = np.empty(n_p, dtype=np.int64), np.empty(n_n, dtype=np.int64)
    f_pos, f_neg = np.empty(n_p), np.empty(n_n)

    def slope(t: float) -> float:  # compiled inline: the work arrays are shared by every evaluation
        return _slope_on_line(t, s_pos, s_neg, d_pos, d_neg, order_pos, order_neg, u, v, c_pos, c_neg, f_pos, f_neg,
                              wd, dd, cp, n_pairs)

    if slope(0.0) >= 0.0:
        return 0.0
    lo, hi = 0.0, 1.0
    while slope(hi) < 0.0 and hi < 1e30:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if slope(mid) < 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)
