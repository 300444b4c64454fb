"""The two quadratic programs that reweigh a forest's trees: SORF (zirakiza2013 ch. 6) and MinCq (Roy et al. 2011).

Both are solved with OSQP (1.x API) along a hyperparameter grid: the matrix of each program does not depend on the
hyperparameter, so one OSQP workspace is set up (one KKT factorisation) and only a vector (SORF: the linear term;
MinCq: the bounds) is updated between grid points, each solve warm-starting from the previous solution.

Every solve returns a :class:`QPResult`. A solve whose status is not ``solved`` or whose residuals exceed
:data:`ACCEPT_TOL` is returned with ``solved=False`` and no weights: callers must skip it, never use it.

Conventions
-----------
- Predictions are given as an (n_voters, n_samples) matrix of class indices (SORF) or of signs +-1 (MinCq), on the
  training set S with in-bag points included (the thesis's reading, zirakiza2013 digest §6.1).
- Voters with identical training predictions are interchangeable in both programs. :func:`group_voters` merges them
  into one variable whose value is the group's total weight; :func:`expand_group_weights` splits it equally, which
  is the minimum-norm optimum among the equivalent ones and is what the ridge below would select. This removes the
  usual source of semi-definiteness exactly (e.g. 100 stumps on Adult have only a handful of distinct prediction
  patterns; all-perfect trees collapse to one group) and shrinks the programs.
- Scaling: both matrices are divided by the number of samples m, so they have a unit diagonal; a ridge
  ``RIDGE * diag(1 / multiplicity)`` is added only when the scaled matrix is numerically singular (a Cholesky pivot
  <= ``RIDGE``, e.g. fewer distinct patterns than voters, or m < n), which makes the optimum unique.

SORF (least-squares form)
-------------------------
With phi(y) the one-hot code of y and phi_Q(x) = sum_i Q_i phi(h_i(x)), the thesis minimises over the simplex

    sum_k || phi(y_k) - c phi_Q(x_k) ||^2  =  m - 2 c a^T Q + c^2 Q^T S Q,

where S_ij = sum_k 1{h_i(x_k) = h_j(x_k)} (agreement counts: S = O O^T for the (n, m*l) one-hot prediction matrix O)
and a_i = sum_k 1{h_i(x_k) = y_k} (correct counts). This holds for any number of classes and is the thesis's
sum_ij Q_i Q_j L_ij (eq. 6.7) written with Q^T 1 = 1. Divided by m c^2 the program is

    minimise  Q^T (S/m) Q - (2/c) (a/m)^T Q   s.t.  sum_i Q_i = 1, Q >= 0,

so only the linear term depends on c.

MinCq (Program 1, solved in an exactly equivalent scaled form)
--------------------------------------------------------------
With h_i(x_k) in {-1, +1}, M = H H^T / m and margins m_i = (1/m) sum_k y_k h_i(x_k), Program 1 is

    minimise  q^T M q - a^T q,  a = M 1 / n,  s.t.  m^T q = mu/2 + mean(m)/2,  0 <= q_i <= 1/n;  w = 2q - 1/n.

Substituting q = (w + 1/n)/2 gives q^T M q - a^T q = w^T M w / 4 - 1^T M 1 / (4 n^2) and the constraints
m^T w = mu, |w_i| <= 1/n. The mu-dependent part of the q objective is then of order mu^2/4 (2.5e-9 at mu = 1e-4),
below any solver tolerance, so with v = w / mu we solve

    minimise  v^T M v   s.t.  m^T v = 1,  |v_i| <= 1/(n mu),

(the matrix and the equality do not depend on mu; only the box does) and return w = mu v. Where the box is
inactive, v = M^+ m / (m^T M^+ m) for every mu, so the whole grid shares one solution. A mu above the largest
achievable training margin sum_i |m_i| / n is not realisable: it is reported (status ``"mu not realisable"``) and
not solved.

Degenerate MinCq: the minimum-norm optimum
------------------------------------------
When M is singular (trees perfect or identical on S, as on Mushroom, leave voter patterns that are linearly
dependent even after grouping: h_a + h_b = h_c + h_d), the optimum is not unique. Every z in the null space N of M
has m^T z = 0 (m = H y / m lies in the range of M), so the optima form the face {v* + z : z in N} within the box,
and any point of it can come out of OSQP, with arbitrary (often large, since the box is 1/(n mu)) null-space
components that cancel in the training vote but not in the out-of-bag vote. forestlab returns one defined point:
**the minimum-norm optimum**, the optimum with the smallest sum_i w_i^2 over the trees (with groups:
sum_g W_g^2 / k_g, which an equal split within groups attains). It is computed exactly, not by a ridge:

1. N is spanned by the eigenvectors of M with eigenvalue <= ``NULL_TOL`` x max(1, largest eigenvalue) (exact
   zeros up to rounding for the {-1, +1} Gram matrices here; a direction of curvature lambda <= that tolerance
   changes v^T M v by at most lambda ||dv||^2);
2. box inactive: the minimum-norm optimum of the box-free problem is v0 = M^+ m / (m^T M^+ m) with its N-component
   removed in the metric K^-1 (K = diag(group sizes)): v = v0 - Z (Z^T K^-1 Z)^-1 Z^T K^-1 v0. When it satisfies the
   box it is the answer (it is optimal for the smaller boxed problem, and of least norm among all box-free optima);
   the whole grid then shares it, so the out-of-bag curve is flat and the first mu is selected. No OSQP call;
3. box active: OSQP solves the program (any optimum v* of the face), then a second, strictly convex QP in the
   null-space coordinates b (dimension dim N): minimise (v* + Z b)^T K^-1 (v* + Z b) subject to the box. Moving
   along N leaves m^T v and v^T M v unchanged, so the result is the minimum-norm optimum (to OSQP's tolerance).

Only problems whose scaled matrix is numerically singular (the ones that get ``RIDGE``) take this route; the others
are solved exactly as before. ``QPResult.extra`` then holds ``null_dim`` (dim N) and ``min_norm`` (1.0, or 0.0 if
the second QP failed and OSQP's optimum was kept).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import osqp
import scipy.sparse as sp

__all__ = [
    "ACCEPT_TOL",
    "OSQP_SETTINGS",
    "NULL_TOL",
    "RIDGE",
    "ZERO_WEIGHT",
    "QPResult",
    "expand_group_weights",
    "group_voters",
    "mincq_matrices",
    "mincq_max_margin",
    "solve_mincq_path",
    "solve_sorf_path",
    "sorf_matrices",
    "sorf_objective",
]

#: OSQP settings for every solve (module-level so tests and benchmarks can adjust them).
OSQP_SETTINGS: dict[str, Any] = {
    "eps_abs": 1e-7,
    "eps_rel": 1e-7,
    "max_iter": 20_000,
    "check_termination": 5,  # warm-started solves often converge in a few iterations (default: check every 25)
    "polishing": True,
    "verbose": False,
}
#: A solve is accepted only if OSQP reports ``solved`` and both residuals (primal: the largest constraint violation
#: of the returned point, recomputed here; dual: OSQP's) are at most this.
ACCEPT_TOL: float = 1e-5
#: Ridge added to the unit-diagonal matrix when it is numerically singular.
RIDGE: float = 1e-9
#: MinCq: eigenvalues of the unit-diagonal matrix M at most NULL_TOL x max(1, its largest eigenvalue) span the null
#: space along which the minimum-norm optimum is taken (singular problems only).
NULL_TOL: float = 1e-10
#: SORF weights at most this are set to exactly 0 (below the solver's accuracy), so "a tree with zero weight" is
#: well defined for the out-of-bag rule.
ZERO_WEIGHT: float = 1e-7


@dataclass(frozen=True)
class QPResult:
    """The outcome of one solve at one grid value.

    Attributes
    ----------
    value : float
        The grid value (SORF's c or MinCq's mu).
    weights : ndarray or None
        SORF: Q on the simplex; MinCq: w = 2q - 1/n. One entry per variable (per voter group when grouped).
        None when the solve was not accepted.
    status : str
        OSQP's status string (``"solved"``, ``"maximum iterations reached"``, ...), or ``"mu not realisable"``.
    solved : bool
        Whether the solution was accepted (status solved and residuals within :data:`ACCEPT_TOL`).
    prim_res, dual_res : float
        Primal residual (largest constraint violation of the returned point) and OSQP's dual residual.
    iterations : int
        ADMM iterations.
    objective : float
        SORF: the mean least-squares loss (1/m) sum_k ||phi(y_k) - c phi_Q(x_k)||^2; MinCq: the empirical second
        moment of the margin w^T M w, the quantity MinCq minimises. NaN when not accepted.
    ridge : float
        The ridge added to the scaled matrix (0.0 when it was positive definite).
    extra : dict of str to float
        Program-specific facts (MinCq: ``max_margin``, the largest realisable mu).
    """

    value: float
    weights: np.ndarray | None
    status: str
    solved: bool
    prim_res: float = float("nan")
    dual_res: float = float("nan")
    iterations: int = 0
    objective: float = float("nan")
    ridge: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The scalar fields, for ``solver_`` records."""
        return {"value": self.value, "status": self.status, "solved": self.solved, "prim_res": self.prim_res,
                "dual_res": self.dual_res, "iterations": self.iterations, "objective": self.objective,
                "ridge": self.ridge, **self.extra}


# ---------------------------------------------------------------------------------------------------------------
# Voter groups
# ---------------------------------------------------------------------------------------------------------------
def group_voters(rows: np.ndarray, *, fold_sign: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                        np.ndarray]:
    """Merge voters whose training predictions are identical (optionally up to a sign).

    Parameters
    ----------
    rows : ndarray of shape (n_voters, n_samples)
        Predictions (class indices, or signs +-1 when ``fold_sign``).
    fold_sign : bool, default=False
        Also merge h and -h (MinCq, whose vote only sees sum_i w_i h_i). Each row is first multiplied by the sign of
        its first entry.

    Returns
    -------
    representatives : ndarray of shape (n_groups,)
        Index of the first member of each group (its row, sign-canonicalised, is the group's predictions); groups
        are numbered in order of first occurrence.
    inverse : ndarray of shape (n_voters,)
        Group of each voter.
    counts : ndarray of shape (n_groups,)
        Number of voters in each group.
    signs : ndarray of shape (n_voters,)
        +1, or -1 for a voter merged as the complement of its group's canonical row (all +1 without ``fold_sign``).
    """
    rows = np.asarray(rows)
    n = rows.shape[0]
    signs = np.ones(n, dtype=np.int8)
    canon = np.ascontiguousarray(rows)
    if fold_sign and rows.shape[1]:
        signs = np.where(rows[:, 0] < 0, -1, 1).astype(np.int8)
        canon = np.ascontiguousarray(rows * signs[:, None].astype(rows.dtype))
    # Rows hashed by their bytes: O(n m), where np.unique(axis=0) sorts structured rows (much slower).
    first: dict[bytes, int] = {}
    inverse = np.empty(n, dtype=np.intp)
    for i in range(n):
        inverse[i] = first.setdefault(canon[i].tobytes(), len(first))
    counts = np.bincount(inverse, minlength=len(first))
    representatives = np.unique(inverse, return_index=True)[1]  # groups are numbered by first occurrence
    return representatives, inverse, counts, signs


def expand_group_weights(group_weights: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
                         signs: np.ndarray | None = None) -> np.ndarray:
    """Split each group's total weight equally over its members (with their sign): w_i = s_i W_g / k_g."""
    w = group_weights[inverse] / counts[inverse]
    return w if signs is None else w * signs


# ---------------------------------------------------------------------------------------------------------------
# SORF
# ---------------------------------------------------------------------------------------------------------------
def sorf_matrices(pred_idx: np.ndarray, y_idx: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Agreement counts S and correct counts a of the SORF least-squares form.

    Parameters
    ----------
    pred_idx : ndarray of shape (n_voters, n_samples), integer
        Class index each voter predicts for each training sample.
    y_idx : ndarray of shape (n_samples,)
        Class index of each training label.
    n_classes : int
        Number of classes l.

    Returns
    -------
    S : ndarray of shape (n_voters, n_voters), float64
        S_ij = number of samples on which voters i and j predict the same class (S = O O^T, O the one-hot
        prediction matrix of shape (n_voters, n_samples * l)); integer-valued.
    a : ndarray of shape (n_voters,), float64
        a_i = number of samples voter i gets right.
    """
    pred_idx = np.asarray(pred_idx)
    n, m = pred_idx.shape
    a = (pred_idx == np.asarray(y_idx)[None, :]).sum(axis=1).astype(np.float64)
    if n_classes <= 2:
        # One-hot of two classes: O O^T = (m + H H^T) / 2 with H = 2 * pred - 1 in {-1, +1}; exact in float64.
        H = 2.0 * pred_idx - 1.0
        S = (m + H @ H.T) / 2.0
    else:
        cols = pred_idx.astype(np.int64) * m + np.arange(m)[None, :]
        onehot = sp.csr_matrix((np.ones(n * m), cols.ravel(), np.arange(0, n * m + 1, m)),
                               shape=(n, n_classes * m))
        S = (onehot @ onehot.T).toarray()
    return S, a


def sorf_objective(Q: np.ndarray, S: np.ndarray, a: np.ndarray, n_samples: int, c: float) -> float:
    """Mean least-squares loss (1/m) sum_k ||phi(y_k) - c phi_Q(x_k)||^2 from the matrices (Q on the simplex)."""
    Q = np.asarray(Q, dtype=np.float64)
    return float((n_samples - 2.0 * c * (a @ Q) + c * c * (Q @ S @ Q)) / n_samples)


# ---------------------------------------------------------------------------------------------------------------
# MinCq
# ---------------------------------------------------------------------------------------------------------------
def mincq_matrices(signs: np.ndarray, y_sign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M = H H^T / m and the voters' margins m_i = (1/m) sum_k y_k h_i(x_k), for voters and labels in {-1, +1}."""
    H = np.asarray(signs, dtype=np.float64)
    m = H.shape[1]
    return H @ H.T / m, H @ np.asarray(y_sign, dtype=np.float64) / m


def mincq_max_margin(margins: np.ndarray, multiplicity: np.ndarray | None = None, n_voters: int | None = None
                     ) -> float:
    """The largest realisable training margin max {m^T w : |w_i| <= 1/n} = sum_i |m_i| / n (with group sizes)."""
    k = np.ones(len(margins)) if multiplicity is None else np.asarray(multiplicity, dtype=np.float64)
    n = float(k.sum() if n_voters is None else n_voters)
    return float(np.abs(margins) @ k / n)


# ---------------------------------------------------------------------------------------------------------------
# The OSQP path
# ---------------------------------------------------------------------------------------------------------------
def _ridge_for(P_scaled: np.ndarray) -> float:
    """RIDGE if the (unit-diagonal) matrix is numerically singular, else 0.

    Singular means that its Cholesky factorisation fails or has a pivot below RIDGE (exact arithmetic gives a zero
    pivot for a singular positive semi-definite matrix; rounding leaves one of order 1e-16).
    """
    if not P_scaled.size:
        return 0.0
    try:
        pivots = np.diagonal(np.linalg.cholesky(P_scaled)) ** 2
    except np.linalg.LinAlgError:
        return RIDGE
    return RIDGE if float(pivots.min()) <= RIDGE else 0.0


def _row_over_identity(row: np.ndarray) -> sp.csc_matrix:
    """The (n + 1, n) CSC matrix [row; I]: one equality row over the n bound rows."""
    n = row.size
    data = np.empty(2 * n)
    data[0::2] = row
    data[1::2] = 1.0
    indices = np.empty(2 * n, dtype=np.int64)
    indices[0::2] = 0
    indices[1::2] = np.arange(1, n + 1)
    return sp.csc_matrix((data, indices, np.arange(0, 2 * n + 1, 2)), shape=(n + 1, n))


def _triu_csc(P: np.ndarray) -> sp.csc_matrix:
    return sp.csc_matrix(np.triu(P))


def _settings(settings: dict[str, Any] | None) -> dict[str, Any]:
    return {**OSQP_SETTINGS, **(settings or {})}


class _Path:
    """One OSQP workspace solved at successive data vectors (warm) or a fresh workspace per point (cold)."""

    def __init__(self, P: np.ndarray, A: sp.csc_matrix, settings: dict[str, Any], warm_start: bool) -> None:
        self.P = _triu_csc(P)
        self.A = A
        self.settings = _settings(settings)
        self.warm_start = warm_start
        self.solver: osqp.OSQP | None = None

    def solve(self, q: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> Any:
        if self.solver is None or not self.warm_start:
            self.solver = osqp.OSQP()
            self.solver.setup(self.P, q, self.A, lower, upper, **self.settings)
        else:
            self.solver.update(q=q, l=lower, u=upper)
        return self.solver.solve(raise_error=False)


def _status_ok(res: Any) -> bool:
    return res.info.status_val == osqp.SolverStatus.OSQP_SOLVED and res.x is not None and bool(
        np.all(np.isfinite(res.x)))


def solve_sorf_path(S: np.ndarray, a: np.ndarray, n_samples: int, c_grid: Sequence[float], *,
                    multiplicity: np.ndarray | None = None, warm_start: bool = True,
                    settings: dict[str, Any] | None = None) -> list[QPResult]:
    """Solve SORF's simplex-constrained least squares for each c in ``c_grid``.

    Parameters
    ----------
    S, a : ndarray
        Agreement and correct counts from :func:`sorf_matrices` (of the voters or of voter groups).
    n_samples : int
        Number of training samples m.
    c_grid : sequence of float
        Values of c (> 0), solved in this order.
    multiplicity : ndarray of shape (n_voters,), optional
        Group sizes when S, a describe groups of identical voters: the variables are then the groups' total weights
        and the ridge (if any) is RIDGE * diag(1/k), i.e. RIDGE * ||Q||^2 after an equal split.
    warm_start : bool, default=True
        Reuse one OSQP workspace along the grid (warm start); False sets up a fresh one per point (cold).
    settings : dict, optional
        Overrides of :data:`OSQP_SETTINGS`.

    Returns
    -------
    list of QPResult
        One per grid value, in order; ``weights`` is Q on the simplex (entries at most :data:`ZERO_WEIGHT`, including
        negative round-off, set to 0, then renormalised to sum 1).
    """
    S_s = np.asarray(S, dtype=np.float64) / n_samples
    a_s = np.asarray(a, dtype=np.float64) / n_samples
    n = S_s.shape[0]
    k = np.ones(n) if multiplicity is None else np.asarray(multiplicity, dtype=np.float64)
    ridge = _ridge_for(S_s)
    P = 2.0 * (S_s + np.diag(ridge / k))
    A = _row_over_identity(np.ones(n))
    lower = np.concatenate([[1.0], np.zeros(n)])
    upper = np.concatenate([[1.0], np.full(n, np.inf)])
    path = _Path(P, A, settings, warm_start)
    out = []
    for c in c_grid:
        c = float(c)
        res = path.solve(-(2.0 / c) * a_s, lower, upper)
        x = np.asarray(res.x, dtype=np.float64) if res.x is not None else np.full(n, np.nan)
        prim = float(max(abs(x.sum() - 1.0), max(0.0, -float(x.min(initial=0.0))))) if np.all(np.isfinite(x)) \
            else float("inf")
        dual = float(res.info.dual_res)
        ok = _status_ok(res) and prim <= ACCEPT_TOL and dual <= ACCEPT_TOL
        weights, objective = None, float("nan")
        if ok:
            weights = np.where(x > ZERO_WEIGHT, x, 0.0)
            weights /= weights.sum()
            objective = sorf_objective(weights, S, a, n_samples, c)
        out.append(QPResult(value=c, weights=weights, status=str(res.info.status), solved=ok, prim_res=prim,
                            dual_res=dual, iterations=int(res.info.iter), objective=objective, ridge=ridge))
    return out


@dataclass(frozen=True)
class _MinCqFace:
    """What a singular MinCq problem needs for its minimum-norm optimum (see the module docstring)."""

    null: np.ndarray  # (n, d) orthonormal basis Z of the null space of M
    k: np.ndarray  # (n,) group sizes: the norm is sum_g v_g^2 / k_g
    v_min_norm: np.ndarray | None  # minimum-norm optimum of the box-free problem (None if m is not in range(M))

    def project(self, v: np.ndarray) -> np.ndarray:
        """The point of v + span(Z) of least norm sum_g v_g^2 / k_g (no box)."""
        Zk = self.null / self.k[:, None]
        beta = np.linalg.solve(self.null.T @ Zk, Zk.T @ v)
        return v - self.null @ beta


def _mincq_face(M: np.ndarray, margins: np.ndarray, k: np.ndarray) -> _MinCqFace | None:
    """The null space of M and the box-free minimum-norm optimum, or None when M has no null space."""
    lam, vecs = np.linalg.eigh(M)
    null = lam <= NULL_TOL * max(1.0, float(lam[-1]))
    if not null.any():
        return None
    face = _MinCqFace(null=vecs[:, null], k=k, v_min_norm=None)
    rng_vecs, rng_lam = vecs[:, ~null], lam[~null]
    p = rng_vecs @ ((rng_vecs.T @ margins) / rng_lam)  # M^+ m
    denom = float(margins @ p)
    if not denom > 0:
        return face
    return _MinCqFace(null=face.null, k=k, v_min_norm=face.project(p / denom))


@contextlib.contextmanager
def _quiet_stdout():
    """Silence the process's standard output (file descriptor 1) for the block: output printed by C code, which
    Python's sys.stdout does not see, would otherwise land in the middle of forestlab's own output."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output to silence
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _min_norm_on_face(face: _MinCqFace, v_star: np.ndarray, bound: np.ndarray,
                      settings: dict[str, Any] | None) -> np.ndarray | None:
    """The least-norm point of (v_star + span(Z)) within the box |v| <= bound (a strictly convex QP in the null-space
    coordinates), or None if OSQP does not solve it."""
    Z = face.null
    Zk = Z / face.k[:, None]
    P = 2.0 * (Z.T @ Zk)
    q = 2.0 * (Zk.T @ v_star)
    solver = osqp.OSQP()
    solver.setup(_triu_csc(P), q, sp.csc_matrix(Z), -bound - v_star, bound - v_star, **_settings(settings))
    with _quiet_stdout():  # OSQP's C code prints a polishing note whatever `verbose` says
        res = solver.solve(raise_error=False)
    if not _status_ok(res) or float(res.info.dual_res) > ACCEPT_TOL:
        return None
    v = v_star + Z @ np.asarray(res.x, dtype=np.float64)
    if float(np.max(np.abs(v) - bound, initial=0.0)) > ACCEPT_TOL:
        return None
    return v


def solve_mincq_path(M: np.ndarray, margins: np.ndarray, mu_grid: Sequence[float], *,
                     multiplicity: np.ndarray | None = None, n_voters: int | None = None, warm_start: bool = True,
                     settings: dict[str, Any] | None = None) -> list[QPResult]:
    """Solve MinCq (Program 1, in the scaled form of the module docstring) for each mu in ``mu_grid``.

    Parameters
    ----------
    M, margins : ndarray
        From :func:`mincq_matrices` (of the voters, or of sign-folded voter groups).
    mu_grid : sequence of float
        Target margins (> 0), solved in this order.
    multiplicity : ndarray, optional
        Group sizes k_g (the group's box is |W_g| <= k_g / n).
    n_voters : int, optional
        The number n of voters behind the groups (default: sum of ``multiplicity``).
    warm_start : bool, default=True
        One OSQP workspace along the grid (warm) or a fresh one per point (cold).
    settings : dict, optional
        Overrides of :data:`OSQP_SETTINGS`.

    Returns
    -------
    list of QPResult
        One per grid value, in order; ``weights`` is w = 2q - 1/n (|w_i| <= 1/n, m^T w = mu), per group when grouped.
        ``extra["max_margin"]`` is the largest realisable mu. When M is singular the optimum is not unique and the
        minimum-norm one is returned (module docstring; ``extra`` adds ``null_dim`` and ``min_norm``).
    """
    M = np.asarray(M, dtype=np.float64)
    margins = np.asarray(margins, dtype=np.float64)
    n = M.shape[0]
    k = np.ones(n) if multiplicity is None else np.asarray(multiplicity, dtype=np.float64)
    n_total = float(k.sum() if n_voters is None else n_voters)
    max_margin = mincq_max_margin(margins, k, int(n_total))
    ridge = _ridge_for(M)
    face = _mincq_face(M, margins, k) if ridge > 0 else None
    P = 2.0 * (M + np.diag(ridge / k))
    A = _row_over_identity(margins)
    path = _Path(P, A, settings, warm_start)
    out = []
    for mu in mu_grid:
        mu = float(mu)
        extra = {"max_margin": max_margin}
        if face is not None:
            extra.update(null_dim=float(face.null.shape[1]), min_norm=1.0)
        if not mu <= max_margin:
            out.append(QPResult(value=mu, weights=None, status="mu not realisable", solved=False, ridge=ridge,
                                extra=extra))
            continue
        bound = k / (n_total * mu)
        if face is not None and face.v_min_norm is not None and np.all(np.abs(face.v_min_norm) <= bound * (1 + 1e-12)):
            v = np.clip(face.v_min_norm, -bound, bound)  # the exact minimum-norm optimum: no solver involved
            prim = float(abs(margins @ v - 1.0))
            out.append(QPResult(value=mu, weights=mu * v, status="solved", solved=prim <= ACCEPT_TOL, prim_res=prim,
                                dual_res=0.0, objective=float(mu * mu * (v @ M @ v)), ridge=ridge, extra=extra))
            continue
        res = path.solve(np.zeros(n), np.concatenate([[1.0], -bound]), np.concatenate([[1.0], bound]))
        v = np.asarray(res.x, dtype=np.float64) if res.x is not None else np.full(n, np.nan)
        if np.all(np.isfinite(v)):
            prim = float(max(abs(margins @ v - 1.0), float(np.max(np.abs(v) - bound, initial=0.0)), 0.0))
        else:
            prim = float("inf")
        dual = float(res.info.dual_res)
        ok = _status_ok(res) and prim <= ACCEPT_TOL and dual <= ACCEPT_TOL
        weights, objective = None, float("nan")
        if ok:
            v = np.clip(v, -bound, bound)
            if face is not None:  # the minimum-norm point of the optimal face v* + N within the box
                v_min = _min_norm_on_face(face, v, bound, settings)
                if v_min is None:
                    extra["min_norm"] = 0.0
                else:
                    v = np.clip(v_min, -bound, bound)
            weights = mu * v
            objective = float(weights @ M @ weights)
        out.append(QPResult(value=mu, weights=weights, status=str(res.info.status), solved=ok, prim_res=prim,
                            dual_res=dual, iterations=int(res.info.iter), objective=objective, ridge=ridge,
                            extra=extra))
    return out
