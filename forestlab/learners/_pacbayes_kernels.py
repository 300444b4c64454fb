"""Compiled (numba) kernel of the CCPBB certificate (:mod:`~forestlab.learners._pacbayes_successors`).

Imported lazily (numba's import and the load of the cached machine code cost a few tenths of a second that a
process not computing the certificate should not pay). Compiled code is cached on disk (``cache=True``).

:func:`mu_tandem_matrices` makes the mu-tandem loss matrix and its variance in one pass over the pairs of voters,
with numpy's operations on each entry in numpy's order (the scalars of mu computed by the caller, as the numpy
expressions compute them), so the two matrices are the numpy expressions' bit for bit, without their dozen
temporary matrices. The CCPBB bound evaluates them at every mu of its grid for every vote it certifies.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def mu_tandem_matrices(T: np.ndarray, A: np.ndarray, n_joint: np.ndarray, mu: float, mu2: float, c_t: float,
                       c_s: float, c_0: float) -> tuple[np.ndarray, np.ndarray]:
    """With S = A + A^T: first = T - mu S + mu2 and, second = c_t T + c_s S + c_0,
    var = n / (n - 1) max(second - first^2, 0) where n = ``n_joint`` > 1, else 0 (mu2 = mu mu, c_t = (1 - 2 mu)^2,
    c_s = mu mu (1 - 2 mu), c_0 = mu^4, as the caller's Python computes them)."""
    m = T.shape[0]
    first = np.empty((m, m))
    var = np.empty((m, m))
    for i in range(m):
        for j in range(m):
            s = A[i, j] + A[j, i]
            f = T[i, j] - mu * s + mu2
            second = c_t * T[i, j] + c_s * s + c_0
            first[i, j] = f
            nj = float(n_joint[i, j])
            if nj > 1.0:
                d = second - f * f
                if not (d >= 0.0 or d != d):  # np.maximum(d, 0.0): d itself when d >= 0 (-0.0 too) or NaN
                    d = 0.0
                var[i, j] = nj / max(nj - 1.0, 1.0) * d
            else:
                var[i, j] = 0.0
    return first, var
