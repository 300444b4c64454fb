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
