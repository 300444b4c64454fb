"""The SVM LeafRank's kernel matrix, computed fast and still exactly what libsvm would use (numba).

libsvm (scikit-learn's build) evaluates its kernel one entry at a time, a BLAS ``ddot`` call per pair of points,
``exp(−γ (‖x‖² + ‖z‖² − 2 x·z))`` for the RBF kernel, and stores each entry of its matrix ``Q`` in single precision
(``Qfloat`` is ``float``: ``Q_ij = (float)(y_i y_j K_ij)``); only the diagonal ``K_ii`` is kept in double. On a
LeafRank's node problems those per-pair calls are about half of libsvm's time with the RBF kernel (a tenth with the
linear one). This module computes the whole matrix at once, from one matrix product (BLAS ``gemm``) and numpy's
vectorised ``exp``, and guarantees that every entry rounds to the same ``float`` as libsvm's own: so libsvm's solver
(``kernel="precomputed"``, or its compiled port :mod:`forestlab.learners._smo`, which the LeafRank uses) sees the same
``Q`` and ``QD``, takes the same steps and returns the same model, bit for bit.

How: the product's entries and the per-pair ``ddot``'s differ only by rounding, at most ``2 γ_d ‖x‖ ‖z‖`` apart
(``γ_d = d u / (1 − d u)``, ``u = 2⁻⁵³``, the classic bound of a ``d``-term dot product in any order, Cauchy–Schwarz
for ``Σ |x_k z_k|``). Carried through the RBF formula (whose other terms, ``‖x‖²``, are libsvm's own ``ddot``
values), and with generous room for both ``exp`` implementations' errors (a few units in the last place), this gives
an interval around each computed entry that contains libsvm's value. Where both ends of the interval round to the
same ``float``, so does libsvm's entry (rounding is monotone); where they do not (one entry in a hundred thousand
to one in a million on Table A.1's nodes), the entry is computed libsvm's way: the same ``ddot`` (numba's ``np.dot``
calls the BLAS that scikit-learn's libsvm calls, SciPy's) and the same libm ``exp``. The diagonal is always computed
libsvm's way.

``tests/test_svm_leafrank.py`` checks the entries against libsvm's way on data made to stress the bound (rows of
very different norms, near-duplicates, near-orthogonal pairs), the bound itself against the product's actual
distance, and the models against ``SVC``'s, bit for bit, with the exact path forced on every entry too. On 3787 node
problems of Table A.1's forests (both kernels; OpenBLAS's native, Haswell and Prescott kernels) the models were
libsvm's own, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_U = 2.0 ** -53  # the unit roundoff of float64
#: Widening of every bound (tests force the exact path on almost every entry with a huge one).
SLACK = 2.0


@njit(cache=True, nogil=True)
def _squared_norms(X: np.ndarray) -> np.ndarray:
    """libsvm's ``x_square``: each row's ``ddot`` with itself."""
    sq = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        sq[i] = np.dot(X[i], X[i])
    return sq


@njit(cache=True, nogil=True)
def _rbf_argument(G: np.ndarray, sq: np.ndarray, gamma: float) -> None:
    """``G ← −γ ((‖x_i‖² + ‖x_j‖²) − 2 G)``, in place: libsvm's expression, with G's entries for its ``ddot``."""
    n = G.shape[0]
    for i in range(n):
        for j in range(n):
            G[i, j] = -gamma * ((sq[i] + sq[j]) - 2.0 * G[i, j])


@njit(cache=True, nogil=True)
def _bound(rbf: bool, k: float, gamma: float, sq_i: float, sq_j: float, norms: float, c_dot: float,
           slack: float) -> float:
    """Half-width of an interval around ``k`` that holds libsvm's entry (see the module's docstring)."""
    if rbf:
        # |Δ(s − 2g)| ≤ 2 Δg + rounding of both sides' subtraction; |Δa| ≤ γ |Δ(s − 2g)| + rounding of the product,
        # with |g| ≤ ‖x‖‖z‖ and s = ‖x‖² + ‖z‖²; |Δ exp| ≤ k |Δa| (1 + tiny) + both exps' errors (≤ 20 ulp allowed)
        d_arg = gamma * ((2.0 * c_dot + 16.0 * _U) * norms + 8.0 * _U * (sq_i + sq_j))
        return slack * k * (1.01 * d_arg + 20.0 * _U) + 1e-300
    return slack * 1.01 * c_dot * norms + 1e-300


@njit(cache=True, nogil=True)
def _dot_terms(sq: np.ndarray, d: int) -> tuple[float, np.ndarray]:
    """The dot product's bound ``2 γ_d`` (a little widened) and upper bounds of the rows' Euclidean norms: a product
    of d terms and its ``ddot`` are at most ``c_dot · norms[i] · norms[j]`` apart."""
    c_dot = 2.0 * (d * _U / (1.0 - d * _U)) * 1.000001
    return c_dot, np.sqrt(sq) * (1.0 + 4.0 * _U * (d + 2))


@njit(cache=True, nogil=True)
def _settle(X: np.ndarray, K: np.ndarray, sq: np.ndarray, gamma: float, rbf: bool, slack: float) -> int:
    """Check every entry of ``K`` against its interval, compute the undecided ones libsvm's way, and set the
    diagonal libsvm's way; returns how many entries were computed libsvm's way (the diagonal not counted)."""
    n, d = X.shape
    c_dot, norms = _dot_terms(sq, d)
    exact = 0
    for i in range(n):
        undecided = 0
        for j in range(n):  # branch-free: compiled to vector code
            k = K[i, j]
            b = _bound(rbf, k, gamma, sq[i], sq[j], norms[i] * norms[j], c_dot, slack)
            undecided += np.float32(k - b) != np.float32(k + b)
        if undecided:
            for j in range(n):
                k = K[i, j]
                b = _bound(rbf, k, gamma, sq[i], sq[j], norms[i] * norms[j], c_dot, slack)
                if np.float32(k - b) != np.float32(k + b):
                    exact += 1
                    dot = np.dot(X[i], X[j])
                    K[i, j] = math.exp(-gamma * (sq[i] + sq[j] - 2.0 * dot)) if rbf else dot
        K[i, i] = math.exp(-gamma * (sq[i] + sq[i] - 2.0 * sq[i])) if rbf else sq[i]
    return exact


def libsvm_gram(X: np.ndarray, kernel: str, gamma: float, slack: float | None = None) -> tuple[np.ndarray, int]:
    """The kernel matrix of the rows of ``X`` (``"rbf"`` or ``"linear"``) whose entries libsvm rounds to the same
    ``float`` as its own kernel's, and whose diagonal is libsvm's; with the number of entries computed libsvm's
    way. ``slack`` widens the bounds (default :data:`SLACK`)."""
    if kernel not in ("rbf", "linear"):  # the bounds are the RBF's and the linear kernel's only
        raise ValueError(f"libsvm_gram: kernel {kernel!r} (rbf or linear only)")
    X = np.ascontiguousarray(X, dtype=np.float64)
    K = X @ X.T
    sq = _squared_norms(X)
    rbf = kernel == "rbf"
    if rbf:
        _rbf_argument(K, sq, float(gamma))
        np.exp(K, out=K)
    exact = _settle(X, K, sq, float(gamma), rbf, float(SLACK if slack is None else slack))
    return K, exact
