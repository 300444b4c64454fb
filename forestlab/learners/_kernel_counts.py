"""Compiled (numba) Gram matrix of the forest kernel: how many trees put two points in the same leaf.

Imported lazily by ``_kernel`` (numba's import and the load of the cached machine code cost a few tenths of a
second that a process not reading a forest kernel should not pay). Compiled code is cached on disk
(``cache=True``).

:func:`shared_leaves` is the product Phi_a Phi_b^T of two 0/1 leaf-indicator matrices (one non-zero per tree in a
row), written straight into a dense matrix: for each point a and each of its leaves, one is added to the entry of
every point b in that leaf. The entries are small integer counts, exact in float64 in any order of summation, so
the matrix is the sparse product's (``(phi_a @ phi_b_t).toarray()``) bit for bit, without its two passes (the
count of non-zeros, then the product) into a sparse result that is then made dense.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def shared_leaves(a_indptr: np.ndarray, a_indices: np.ndarray, bt_indptr: np.ndarray, bt_indices: np.ndarray,
                  n_b: int) -> np.ndarray:
    """K[i, j] = the number of columns (leaves) that row i of A and row j of B share, from A in CSR
    (``a_indptr``, ``a_indices``) and B^T in CSR (``bt_indptr``, ``bt_indices``: the rows of B in each leaf), both
    0/1 with no repeated entry in a row. Compiled code does not check indices: the caller passes matrices of
    matching shapes."""
    n_a = len(a_indptr) - 1
    K = np.zeros((n_a, n_b))
    for i in range(n_a):
        row = K[i]
        for p in range(a_indptr[i], a_indptr[i + 1]):
            c = a_indices[p]
            for q in range(bt_indptr[c], bt_indptr[c + 1]):
                row[bt_indices[q]] += 1.0
    return K
