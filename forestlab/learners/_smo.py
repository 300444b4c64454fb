"""libsvm's C-SVC trainer (scikit-learn's build), its steps and arithmetic unchanged, on a kernel matrix held whole.

The SVM LeafRank gives libsvm each node's kernel matrix (:mod:`~forestlab.learners._svm_gram`). libsvm then still
pays for being general: its solver reads the matrix's columns through a cache of per-column arrays, one kernel call
per entry, and its working-set selection is a branchy scalar loop with a division per point, one pass per iteration.
On the linear LeafRank's nodes, where libsvm iterates most (1.9 million iterations for 808 nodes of 10 bagged
trees), libsvm was about four fifths of a forest's time. This module runs the same algorithm, compiled with numba,
on a single-precision copy of the matrix (libsvm's ``Qfloat``): the same working-set selection (WSS 3 of Fan, Chen
and Lin, 2005, with libsvm's ties: the last index wins), the same two-variable update and clipping, the same
shrinking every ``min(l, 1000)`` iterations, gradient reconstruction (both of libsvm's summation orders) and bias,
each floating-point operation as libsvm writes it. So the same model, bit for bit: the same support vectors in the
same order, the same dual coefficients and intercept (``tests/test_svm_leafrank.py`` compares it with libsvm's on
node problems of both kernels and on data made to tie).

What differs is only how the work is laid out: the selection computes every point's candidate value in a
branch-free pass that the compiler vectorises (the divisions several at a time), then the extreme value, then the
last index that holds it; the matrix's rows and columns are swapped in place where libsvm swaps its cached columns'
entries. On 2539 node problems of Table A.1's forests (bagged and RF1, both kernels) the models were libsvm's, bit
for bit, in about 0.6 to 0.8 of the time of libsvm given the same matrix (kernel matrix included); Table A.1's six
SVM-LeafRank configurations give the same scores (``tests/benchmarks/bench_svm_workload.py``). libsvm's two
summation orders of the gradient reconstruction are both kept, though no test found a problem where they differ.

Reference: scikit-learn's ``sklearn/svm/src/libsvm/svm.cpp`` (``Solver::Solve``, ``select_working_set``,
``do_shrinking``, ``be_shrunk``, ``reconstruct_gradient``, ``calculate_rho``, ``solve_c_svc``, ``svm_train``'s
grouping of the classes and its output of the support vectors).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_LOWER, _UPPER, _FREE = 0, 1, 2
_TAU = 1e-12
_INF = np.inf


@njit(cache=True, nogil=True, inline="always")
def _status(alpha: float, c: float) -> int:
    """libsvm's ``update_alpha_status``."""
    if alpha >= c:
        return _UPPER
    if alpha <= 0:
        return _LOWER
    return _FREE


@njit(cache=True, nogil=True)
def _swap(i: int, j: int, size: int, Q: np.ndarray, QD: np.ndarray, y: np.ndarray, G: np.ndarray,
          status: np.ndarray, alpha: np.ndarray, active_set: np.ndarray, G_bar: np.ndarray,
          C: np.ndarray) -> None:
    """libsvm's ``Solver::swap_index`` (and ``SVC_Q``'s, its cache's): the rows and columns of Q too."""
    if i == j:
        return
    for k in range(size):
        t = Q[i, k]
        Q[i, k] = Q[j, k]
        Q[j, k] = t
    for k in range(size):
        t = Q[k, i]
        Q[k, i] = Q[k, j]
        Q[k, j] = t
    QD[i], QD[j] = QD[j], QD[i]
    y[i], y[j] = y[j], y[i]
    G[i], G[j] = G[j], G[i]
    status[i], status[j] = status[j], status[i]
    alpha[i], alpha[j] = alpha[j], alpha[i]
    active_set[i], active_set[j] = active_set[j], active_set[i]
    G_bar[i], G_bar[j] = G_bar[j], G_bar[i]
    C[i], C[j] = C[j], C[i]


@njit(cache=True, nogil=True)
def _reconstruct_gradient(active_size: int, size: int, Q: np.ndarray, G: np.ndarray, G_bar: np.ndarray,
                          status: np.ndarray, alpha: np.ndarray) -> None:
    """libsvm's ``reconstruct_gradient`` (p = −1 for every point), both of its loop orders."""
    if active_size == size:
        return
    for j in range(active_size, size):
        G[j] = G_bar[j] + -1.0
    nr_free = 0
    for j in range(active_size):
        if status[j] == _FREE:
            nr_free += 1
    if nr_free * size > 2 * active_size * (size - active_size):
        for i in range(active_size, size):
            g = G[i]
            for j in range(active_size):
                if status[j] == _FREE:
                    g += alpha[j] * np.float64(Q[i, j])
            G[i] = g
    else:
        for i in range(active_size):
            if status[i] == _FREE:
                alpha_i = alpha[i]
                for j in range(active_size, size):
                    G[j] += alpha_i * np.float64(Q[i, j])


@njit(cache=True, nogil=True)
def _max(values: np.ndarray, n: int, sign: float) -> float:
    """The largest of ``sign * values[:n]``, as four interleaved running maxima so that the comparisons do not wait
    on one another (no NaN among the values; a zero's sign does not matter: the callers take the value from the
    index that holds it)."""
    m0 = m1 = m2 = m3 = -_INF
    k = 0
    while k + 4 <= n:
        v0 = sign * values[k]
        v1 = sign * values[k + 1]
        v2 = sign * values[k + 2]
        v3 = sign * values[k + 3]
        m0 = v0 if v0 > m0 else m0
        m1 = v1 if v1 > m1 else m1
        m2 = v2 if v2 > m2 else m2
        m3 = v3 if v3 > m3 else m3
        k += 4
    while k < n:
        v0 = sign * values[k]
        m0 = v0 if v0 > m0 else m0
        k += 1
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


@njit(cache=True, nogil=True)
def _last_index(values: np.ndarray, n: int, value: float) -> int:
    """The last k < n with ``values[k] == value`` (one exists)."""
    k = n - 1
    while values[k] != value:
        k -= 1
    return k


@njit(cache=True, nogil=True)
def _select(active_size: int, Q: np.ndarray, QD: np.ndarray, y: np.ndarray, G: np.ndarray, status: np.ndarray,
            eps: float, work: np.ndarray, low: np.ndarray) -> tuple[int, int]:
    """libsvm's ``select_working_set``: (i, j), or (−1, −1) where it returns 1 (optimal).

    libsvm's two loops keep a running maximum (minimum) and its last index (``>=``, ``<=``). Here each is a
    branch-free pass that writes every point's candidate value (−inf, +inf where libsvm would not consider the
    point; the compiler vectorises it, the second one's divisions several at a time), then the extreme value of
    that array, then the last index that holds it: the same index and value as libsvm's."""
    n = active_size
    for t in range(n):
        yt = y[t]
        g = yt * G[t]  # G[t] for y_t = +1, −G[t] for y_t = −1: libsvm's two branches, exactly
        st = status[t]
        # I_up: y = +1 below its upper bound, or y = −1 above its lower one; I_low the converse
        work[t] = -g if st != (_UPPER if yt > 0 else _LOWER) else -_INF
        low[t] = g if st != (_LOWER if yt > 0 else _UPPER) else -_INF
    gmax = _max(work, n, 1.0)
    if gmax == -_INF:  # no i: libsvm's grad_diff = −inf + G[j] is never > 0, so it returns "optimal"
        return -1, -1
    i = _last_index(work, n, gmax)
    gmax = work[i]
    gmax2 = _max(low, n, 1.0)
    qd_i = QD[i]
    two_yi = 2.0 * y[i]
    q_i = Q[i]
    # the candidates j (in I_low, with grad_diff > 0): −(grad_diff²) / quad_coef; +inf for the others
    for j in range(n):
        yj = y[j]
        grad_diff = gmax + low[j]  # Gmax + G[j] (y_j = +1), Gmax − G[j] (y_j = −1); −inf outside I_low
        # QD_i + QD_j ∓ 2 y_i Q_ij: the sign folded into the (exact) product
        quad_coef = (qd_i + QD[j]) - yj * (two_yi * np.float64(q_i[j]))
        q = quad_coef if quad_coef > 0 else _TAU
        obj = -(grad_diff * grad_diff) / q
        work[j] = obj if grad_diff > 0 else _INF
    obj_min = -_max(work, n, -1.0)
    if gmax + gmax2 < eps or obj_min == _INF:
        return -1, -1
    return i, _last_index(work, n, obj_min)


@njit(cache=True, nogil=True)
def _be_shrunk(t: int, y: np.ndarray, G: np.ndarray, status: np.ndarray, gmax1: float, gmax2: float) -> bool:
    if status[t] == _UPPER:
        if y[t] > 0:
            return -G[t] > gmax1
        return -G[t] > gmax2
    if status[t] == _LOWER:
        if y[t] > 0:
            return G[t] > gmax2
        return G[t] > gmax1
    return False


@njit(cache=True, nogil=True, inline="always")
def _clip_sum(a: float, b: float, total: float, c: float) -> tuple[float, float]:
    """One of libsvm's two clippings of a same-label pair (α_a + α_b = total kept): a to its bound c, or b to 0;
    libsvm applies it to (i, j, C_i), then to (j, i, C_j)."""
    if total > c:
        if a > c:
            a = c
            b = total - c
    else:
        if b < 0:
            b = 0.0
            a = total
    return a, b


@njit(cache=True, nogil=True)
def _update_g_bar(G_bar: np.ndarray, q_t: np.ndarray, c: float, was_upper: bool, size: int) -> None:
    """libsvm's update of G_bar (the gradient with the free variables at 0) when point t leaves (``was_upper``)
    or reaches its upper bound c: ∓ c Q_t."""
    if was_upper:
        for k in range(size):
            G_bar[k] -= c * np.float64(q_t[k])
    else:
        for k in range(size):
            G_bar[k] += c * np.float64(q_t[k])


@njit(cache=True, nogil=True)
def solve(Q: np.ndarray, QD: np.ndarray, y: np.ndarray, C: np.ndarray, eps: float, shrinking: bool,
          max_iter: int) -> tuple[np.ndarray, float, int]:
    """libsvm's ``Solver::Solve`` for C-SVC (p = −1, α = 0 to start): min ½ αᵀQα − Σα, yᵀα = 0, 0 ≤ α_i ≤ C_i.

    ``Q`` (float32, Q_ij = y_i y_j K_ij, libsvm's ``Qfloat``) and ``QD`` (K_ii in double), ``y`` (±1.0) and ``C``
    are in libsvm's order and are permuted in place (shrinking; ``size`` is libsvm's ``l``). Returns α (unsigned)
    in the given order, ρ and the number of iterations (−1 where ``max_iter`` stopped it)."""
    size = len(y)
    alpha = np.zeros(size)
    status = np.empty(size, dtype=np.int8)
    for t in range(size):
        status[t] = _status(alpha[t], C[t])
    active_set = np.arange(size)
    active_size = size
    G = np.full(size, -1.0)
    G_bar = np.zeros(size)
    for t in range(size):  # libsvm's initial gradient (α = 0: only where C_t <= 0 makes the point "upper")
        if status[t] != _LOWER:
            alpha_t = alpha[t]
            for k in range(size):
                G[k] += alpha_t * np.float64(Q[t, k])
            if status[t] == _UPPER:
                for k in range(size):
                    G_bar[k] += C[t] * np.float64(Q[t, k])
    work = np.empty(size)
    low = np.empty(size)
    unshrink = False
    n_iter = 0
    counter = min(size, 1000) + 1
    timed_out = False
    while True:
        if max_iter != -1 and n_iter >= max_iter:
            timed_out = True
            break
        counter -= 1
        if counter == 0:
            counter = min(size, 1000)
            if shrinking:
                # libsvm's do_shrinking
                gmax1 = -_INF
                gmax2 = -_INF
                for t in range(active_size):
                    if y[t] > 0:
                        if status[t] != _UPPER and -G[t] >= gmax1:
                            gmax1 = -G[t]
                        if status[t] != _LOWER and G[t] >= gmax2:
                            gmax2 = G[t]
                    else:
                        if status[t] != _UPPER and -G[t] >= gmax2:
                            gmax2 = -G[t]
                        if status[t] != _LOWER and G[t] >= gmax1:
                            gmax1 = G[t]
                if not unshrink and gmax1 + gmax2 <= eps * 10:
                    unshrink = True
                    _reconstruct_gradient(active_size, size, Q, G, G_bar, status, alpha)
                    active_size = size
                t = 0
                while t < active_size:
                    if _be_shrunk(t, y, G, status, gmax1, gmax2):
                        active_size -= 1
                        while active_size > t:
                            if not _be_shrunk(active_size, y, G, status, gmax1, gmax2):
                                _swap(t, active_size, size, Q, QD, y, G, status, alpha, active_set, G_bar, C)
                                break
                            active_size -= 1
                    t += 1
        i, j = _select(active_size, Q, QD, y, G, status, eps, work, low)
        if i == -1:
            _reconstruct_gradient(active_size, size, Q, G, G_bar, status, alpha)
            active_size = size
            i, j = _select(active_size, Q, QD, y, G, status, eps, work, low)
            if i == -1:
                break
            counter = 1
        n_iter += 1
        C_i = C[i]
        C_j = C[j]
        old_alpha_i = alpha[i]
        old_alpha_j = alpha[j]
        Q_ij = np.float64(Q[i, j])
        if y[i] != y[j]:
            quad_coef = QD[i] + QD[j] + 2.0 * Q_ij
            if quad_coef <= 0:
                quad_coef = _TAU
            delta = (-G[i] - G[j]) / quad_coef
            diff = alpha[i] - alpha[j]
            alpha[i] += delta
            alpha[j] += delta
            if diff > 0:
                if alpha[j] < 0:
                    alpha[j] = 0.0
                    alpha[i] = diff
            else:
                if alpha[i] < 0:
                    alpha[i] = 0.0
                    alpha[j] = -diff
            if diff > C_i - C_j:
                if alpha[i] > C_i:
                    alpha[i] = C_i
                    alpha[j] = C_i - diff
            else:
                if alpha[j] > C_j:
                    alpha[j] = C_j
                    alpha[i] = C_j + diff
        else:
            quad_coef = QD[i] + QD[j] - 2.0 * Q_ij
            if quad_coef <= 0:
                quad_coef = _TAU
            delta = (G[i] - G[j]) / quad_coef
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            alpha[i], alpha[j] = _clip_sum(alpha[i], alpha[j], total, C_i)
            alpha[j], alpha[i] = _clip_sum(alpha[j], alpha[i], total, C_j)
        delta_i = alpha[i] - old_alpha_i
        delta_j = alpha[j] - old_alpha_j
        for k in range(active_size):
            G[k] += np.float64(Q[i, k]) * delta_i + np.float64(Q[j, k]) * delta_j
        ui = status[i] == _UPPER
        uj = status[j] == _UPPER
        status[i] = _status(alpha[i], C_i)
        status[j] = _status(alpha[j], C_j)
        if ui != (status[i] == _UPPER):
            _update_g_bar(G_bar, Q[i], C_i, ui, size)
        if uj != (status[j] == _UPPER):
            _update_g_bar(G_bar, Q[j], C_j, uj, size)
    # libsvm's calculate_rho
    nr_free = 0
    ub = _INF
    lb = -_INF
    sum_free = 0.0
    for t in range(active_size):
        yG = y[t] * G[t]
        if status[t] == _UPPER:
            if y[t] < 0:
                ub = ub if ub < yG else yG  # libsvm's min and max templates, ties (and zeros' signs) included
            else:
                lb = lb if lb > yG else yG
        elif status[t] == _LOWER:
            if y[t] > 0:
                ub = ub if ub < yG else yG
            else:
                lb = lb if lb > yG else yG
        else:
            nr_free += 1
            sum_free += yG
    rho = sum_free / nr_free if nr_free > 0 else (ub + lb) / 2
    out = np.empty(size)
    for t in range(size):
        out[active_set[t]] = alpha[t]
    return out, rho, -1 if timed_out else n_iter


@njit(cache=True, nogil=True)
def _q_matrix(K: np.ndarray, n_first: int) -> tuple[np.ndarray, np.ndarray]:
    """libsvm's ``Q_ij = (float)(y_i y_j K_ij)`` (the points grouped: y = +1 for the first ``n_first``, −1 after)
    and ``QD_i = K_ii`` (double)."""
    n = K.shape[0]
    Q = np.empty((n, n), dtype=np.float32)
    QD = np.empty(n)
    for a in range(n):
        for b in range(n):
            q = np.float32(K[a, b])  # (float)(−x) = −(float)x: the sign after the rounding is the same
            Q[a, b] = q if (a < n_first) == (b < n_first) else -q
        QD[a] = K[a, a]
    return Q, QD


def fit_c_svc(K: np.ndarray, n_first: int, w: np.ndarray, C: float, class_weight: tuple[float, float], eps: float,
              shrinking: bool, max_iter: int) -> tuple[np.ndarray, np.ndarray, float, int]:
    """libsvm's ``svm_train`` for a binary C-SVC on a precomputed kernel matrix, as scikit-learn's
    ``_libsvm.fit(..., svm_type=0, kernel="precomputed")`` runs it, on points already grouped the way
    ``svm_group_classes`` groups them: the ``n_first`` points of class 0 first (the solver's +1, libsvm's labels
    sorted), then those of class 1 (−1), each class in its original order. ``K`` is their kernel matrix in that
    order, ``w`` their (positive) weights, ``class_weight`` the classes' (0, 1) weights: C_i = w_i (C · weight).

    Returns the positions (in the grouped order) of the support vectors, their dual coefficients (libsvm's
    ``sv_coef``: α_i y_i), the intercept as scikit-learn writes it (−ρ; 0 for ρ = 0) and libsvm's fit status (1:
    ``max_iter`` reached)."""
    n = len(w)
    y = np.ones(n)
    y[n_first:] = -1.0
    c = np.empty(n)
    c[:n_first] = w[:n_first] * (C * class_weight[0])
    c[n_first:] = w[n_first:] * (C * class_weight[1])
    Q, QD = _q_matrix(K, n_first)
    alpha, rho, n_iter = solve(Q, QD, y.copy(), c, eps, shrinking, max_iter)
    alpha *= y
    support = np.flatnonzero(alpha != 0)  # libsvm's fabs(alpha) > 0
    return support, alpha[support], (-rho if rho != 0 else 0.0), int(n_iter == -1)
