"""Two-sample homogeneity tests (depecker2010 Chapter 6): the TreeRank–Wilcoxon test and Gretton's MMD tests.

Each test is a learner of the task ``two_sample_test``: its parameters are set in ``__init__`` and
``test(X_a, X_b)`` returns a :class:`~forestlab.learners._base.TestResult` (statistic, p-value; a small p-value
says the two samples differ). The runner passes the positives of its sample as ``X_a`` and the negatives as
``X_b``; from Python any two 2-D arrays of finite numbers with the same number of columns and at least 2 rows each
can be compared. Every test is deterministic given its ``random_state``.

- :class:`TreeRankWilcoxonTest` (S-WMW_TR, the thesis's box "HEURISTIQUE DE TEST", §2.13): split each sample at
  random into a learning and a test part, learn a ranking score on the learning part with TreeRank (TRK_CART),
  and compare the two test parts by the Wilcoxon–Mann–Whitney rank-sum of their scores (one-sided: the alternative
  is that sample a scores higher). The p-value is exact (the permutation law of the midrank sum, ties included),
  Monte Carlo (random relabellings) or the normal approximation with tie correction.
- :class:`MMDTest` (Gretton et al. 2008, 2012; the thesis's MMD_boot and MMD_mom, §2.14): the maximum mean
  discrepancy in the RKHS of a Gaussian kernel whose width is set by the median heuristic, with either a
  permutation null (MMD_boot) or a Gamma approximation of the null fitted on its first two moments (the practical
  substitute for MMD_mom's Pearson curves).

The functions the tests are made of are exposed for direct use and checking: :func:`rank_sum_test`,
:func:`exact_rank_sum_distribution`, :func:`median_heuristic`, :func:`gaussian_kernel_matrix`,
:func:`mmd2_unbiased` and :func:`mmd2_null_moments`.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
from scipy import stats as _st
from scipy.spatial.distance import pdist
from scipy.special import gammaln
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from forestlab.learners._base import IntNotBool, TestResult
from forestlab.learners._data_rules import raise_data_problems
from forestlab.learners._pruning import PrunedTreeRank
from forestlab.learners._treerank import TREERANK_PARAMS, TreeRank, treerank_data_problems

__all__ = ["GAMMA_STATISTIC", "MEDIAN_MAX_POINTS", "MMDTest", "PERMUTATION_STATISTIC", "TRK_CART_PARAMS",
           "TreeRankWilcoxonTest", "exact_rank_sum_distribution", "gaussian_kernel_matrix", "median_heuristic",
           "mmd2_null_moments", "mmd2_unbiased", "rank_sum_test"]

#: The TRK_CART configuration of the project (conf/algorithm/_treerank.yaml + trk_cart.yaml: the R package
#: TreeRank 1.1's stopping rules and its weighted-misclassification LeafRank CART): the default ranker of
#: :class:`TreeRankWilcoxonTest`.
TRK_CART_PARAMS: dict[str, Any] = {
    "leafrank": "cart",
    "max_depth": 10,
    "min_samples_split": 50,
    "max_features": None,
    "leafrank_max_depth": 10,
    "leafrank_min_samples_split": 50,
    "leafrank_min_samples_leaf": 1,
    "leafrank_max_features": None,
    "leafrank_criterion": "misclassification",
}

#: What each test's ``TestResult.statistic`` is (its ``statistic_name``): the rank-sum test's W, and the MMD test's
#: statistic under each null (the unbiased MMD² under relabellings; the scaled biased MMD² the Gamma law is fitted to).
WILCOXON_STATISTIC = "W"
PERMUTATION_STATISTIC = "MMD2_u"
GAMMA_STATISTIC = "T = mn/(m+n) MMD2_b"

#: The median heuristic uses every pair of points of a pooled sample of at most this many points, and the pairs of
#: a random subset of this many points of a larger one.
MEDIAN_MAX_POINTS = 2000

#: ``method="auto"`` of the rank-sum test is exact when min(n1, m1) · (n1 + m1) is at most this (n1, m1 the test
#: sizes): every pair of sizes up to 50 + 50, and e.g. 10 + 490 or 5 + 995.
_AUTO_EXACT_MAX = 5000
#: ``method="exact"`` refuses larger problems (the dynamic programme costs about (min(n1, m1) (n1 + m1))² steps).
_EXACT_MAX = 20000
#: Permutations are processed in chunks of at most this many (pooled size x chunk) entries (bounds the memory).
_CHUNK_ENTRIES = 1 << 22


# ---------------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------------
def _check_sample(X: Any, name: str, min_samples: int) -> np.ndarray:
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D array of numbers of shape (n_samples, n_features); "
                         f"could not convert it to float: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features), got a {arr.ndim}-D array of "
                         f"shape {arr.shape} (reshape a single feature with X.reshape(-1, 1))")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} has no feature (shape {arr.shape})")
    if arr.shape[0] < min_samples:
        raise ValueError(f"{name} holds {arr.shape[0]} point(s); a two-sample test needs at least {min_samples} "
                         "points in each sample")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinite values; a two-sample test needs finite data")
    return arr


def _check_samples(X_a: Any, X_b: Any, min_samples: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The two samples as 2-D float arrays; ValueError (naming the culprit) unless both are 2-D, finite, with the
    same number of columns and at least ``min_samples`` rows each."""
    A = _check_sample(X_a, "X_a", min_samples)
    B = _check_sample(X_b, "X_b", min_samples)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"X_a and X_b must have the same number of columns (features), got {A.shape[1]} and "
                         f"{B.shape[1]}")
    return A, B


def _relabellings(rng: np.random.RandomState, n_permutations: int, N: int, m: int) -> Iterator[tuple[int, np.ndarray]]:
    """Random relabellings of a pooled sample of N points into m + (N − m), in chunks: yields (start, chosen) with
    ``chosen`` an (chunk, m) array whose row b holds the indices labelled "a" by relabelling start + b (the m
    smallest of N uniform keys: every m-subset equally likely). At most about 4 × 10⁶ keys are drawn at once."""
    chunk = max(1, min(n_permutations, _CHUNK_ENTRIES // N))
    for start in range(0, n_permutations, chunk):
        keys = rng.random_sample((min(chunk, n_permutations - start), N))
        yield start, np.argpartition(keys, m - 1, axis=1)[:, :m]


# ---------------------------------------------------------------------------------------------------------------
# The Wilcoxon rank-sum test
# ---------------------------------------------------------------------------------------------------------------
def _doubled_sum_pmf(doubled: np.ndarray, k: int) -> np.ndarray:
    """pmf over s = 0, 1, ... of the sum of ``k`` of the integers ``doubled`` drawn without replacement (all
    subsets equally likely), by dynamic programming over the groups of equal values.

    The table P[j, s] holds the share of the j-subsets of the values processed so far whose sum is s. Adding a group
    of t equal values v to c processed ones, a j-subset takes i of the group with the hypergeometric probability
    h(i; j) = C(t, i) C(c, j − i) / C(c + t, j): P'[j, s] = Σ_i h(i; j) P[j − i, s − i v]. Every entry stays in
    [0, 1] whatever the sizes (no overflowing counts)."""
    doubled = np.asarray(doubled, dtype=np.int64)
    values, counts = np.unique(doubled, return_counts=True)
    cumulative = np.concatenate([[0], np.cumsum(np.sort(doubled))])  # sums of the smallest values
    total_max = int(cumulative[-1] - cumulative[len(doubled) - k])     # the sum of the k largest
    log_fact = gammaln(np.arange(len(doubled) + 1, dtype=np.float64) + 1)

    def log_comb(n: int, r: np.ndarray) -> np.ndarray:  # log C(n, r), −inf outside 0 <= r <= n
        out = np.full(r.shape, -np.inf)
        ok = (r >= 0) & (r <= n)
        out[ok] = log_fact[n] - log_fact[r[ok]] - log_fact[n - r[ok]]
        return out

    P = np.zeros((k + 1, total_max + 1))
    new = np.zeros_like(P)
    P[0, 0] = 1.0
    seen = 0     # values processed so far (the groups go in increasing order: they are the smallest ones)
    reach = 0    # the largest sum of at most k of them
    for v, t in zip(values.tolist(), counts.tolist(), strict=True):
        j_max = min(k, seen + t)
        j = np.arange(j_max + 1)
        log_norm = log_comb(seen + t, j)
        new_reach = int(cumulative[seen + t] - cumulative[max(0, seen + t - k)])
        new[:j_max + 1, :new_reach + 1] = 0.0
        for i in range(min(t, j_max) + 1):
            weight = np.exp(log_comb(t, np.array([i]))[0] + log_comb(seen, j[i:] - i) - log_norm[i:])
            shift = i * v
            width = min(reach + 1, total_max + 1 - shift)
            if width > 0:
                new[i:j_max + 1, shift:shift + width] += weight[:, None] * P[:j_max + 1 - i, :width]
        P, new = new, P
        seen += t
        reach = new_reach
    return P[k]


def exact_rank_sum_distribution(ranks: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact permutation law of a rank sum with ties: the sum of ``n`` of the given midranks drawn without
    replacement, all C(N, n) subsets equally likely (the null law of Wilcoxon's W given the tie pattern; Cheung &
    Klotz 1997 tabulate it).

    Parameters
    ----------
    ranks : array-like of shape (N,)
        Midranks (multiples of ½: what ``scipy.stats.rankdata`` gives with ties averaged); any values that are
        multiples of ½ are accepted.
    n : int
        Size of the sample whose rank sum is taken, 0 <= n <= N.

    Returns
    -------
    values : ndarray of float64
        The possible sums, increasing.
    probabilities : ndarray of float64
        Their probabilities (summing to 1).

    Raises
    ------
    ValueError
        If ``n`` is out of range or a rank is not a multiple of ½.

    Examples
    --------
    >>> values, probs = exact_rank_sum_distribution([1, 2.5, 2.5, 4], 2)
    >>> values.tolist(), (probs * 6).round(6).tolist()
    ([3.5, 5.0, 6.5], [2.0, 2.0, 2.0])
    """
    ranks = np.asarray(ranks, dtype=np.float64).ravel()
    N = len(ranks)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or not 0 <= n <= N:
        raise ValueError(f"n must be an integer in [0, {N}], got {n!r}")
    doubled = np.rint(2 * ranks)
    if not np.allclose(doubled, 2 * ranks, rtol=0, atol=1e-9) or (doubled < 0).any():
        raise ValueError("ranks must be non-negative multiples of 1/2 (midranks)")
    doubled = doubled.astype(np.int64)
    # the smaller of the two sums (the complement's sum is total − this one) is cheaper to tabulate
    k = min(n, N - n)
    pmf = _doubled_sum_pmf(doubled, k)
    support = np.flatnonzero(pmf > 0)
    probs = pmf[support]
    if k != n:
        support = int(doubled.sum()) - support
        support, probs = support[::-1], probs[::-1]
    return support / 2.0, probs / probs.sum()


def _tie_counts(values: np.ndarray) -> np.ndarray:
    return np.unique(values, return_counts=True)[1]


def rank_sum_test(scores_a: Any, scores_b: Any, *, method: str = "auto", n_permutations: int = 1000,
                  continuity: bool = True, random_state: Any = None) -> tuple[TestResult, str, np.ndarray | None]:
    """One-sided Wilcoxon–Mann–Whitney rank-sum test that sample a scores higher than sample b.

    W is the sum of the midranks of the ``n1`` scores of a among all ``N = n1 + m1`` scores (ties share their
    average rank); large W rejects. Under the null every split of the N midranks into n1 + m1 is equally likely.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n1,), (m1,)
        The two samples' scores (finite; n1, m1 >= 1).
    method : {"auto", "exact", "permutation", "asymptotic"}, default="auto"
        How the p-value P(W* >= W) is computed:

        - ``"exact"``: the exact permutation law of the midrank sum given the ties
          (:func:`exact_rank_sum_distribution`); refused when min(n1, m1) · N > 20000 (over a second or two);
        - ``"permutation"``: Monte Carlo, ``n_permutations`` random relabellings, p = (1 + #{W* >= W}) / (1 + B);
        - ``"asymptotic"``: the normal approximation of U = W − n1 (n1 + 1) / 2 with mean n1 m1 / 2 and the
          tie-corrected variance n1 m1 / 12 · (N + 1 − Σ (t³ − t) / (N (N − 1))) (t the sizes of the tie groups),
          with the continuity correction U − ½ when ``continuity`` (scipy's ``mannwhitneyu(alternative="greater",
          method="asymptotic")``); p = 1 when every score is tied (variance 0);
        - ``"auto"``: ``"exact"`` when min(n1, m1) · N <= 5000 (e.g. both sizes up to 50, or 10 + 490), else
          ``"asymptotic"``.
    n_permutations : int, default=1000
        B of ``"permutation"``.
    continuity : bool, default=True
        Continuity correction of ``"asymptotic"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the relabellings of ``"permutation"``.

    Returns
    -------
    result : TestResult
        W and the p-value.
    method : str
        The method used (``"auto"`` resolved).
    null_statistics : ndarray or None
        The B values W* of ``"permutation"``; None otherwise.

    Examples
    --------
    >>> result, used, _ = rank_sum_test([3.0, 4.0, 4.0, 5.0], [1.0, 2.0, 4.0])
    >>> result.statistic, round(result.p_value, 4), used
    (20.0, 0.1143, 'exact')
    """
    a = np.asarray(scores_a, dtype=np.float64).ravel()
    b = np.asarray(scores_b, dtype=np.float64).ravel()
    n1, m1 = len(a), len(b)
    if n1 < 1 or m1 < 1:
        raise ValueError(f"the rank-sum test needs at least one score in each sample, got {n1} and {m1}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("the scores must be finite")
    if method not in ("auto", "exact", "permutation", "asymptotic"):
        raise ValueError(f"method must be 'auto', 'exact', 'permutation' or 'asymptotic', got {method!r}")
    if method == "permutation" and (isinstance(n_permutations, (bool, np.bool_))
                                    or not isinstance(n_permutations, numbers.Integral) or n_permutations < 1):
        raise ValueError(f"n_permutations must be an integer >= 1, got {n_permutations!r}")
    N = n1 + m1
    pooled = np.concatenate([a, b])
    doubled = np.rint(2 * _st.rankdata(pooled, method="average")).astype(np.int64)  # 2 × midranks: integers
    W2 = int(doubled[:n1].sum())
    W = W2 / 2.0
    cost = min(n1, m1) * N
    if method == "auto":
        method = "exact" if cost <= _AUTO_EXACT_MAX else "asymptotic"
    null = None
    if method == "exact":
        if cost > _EXACT_MAX:
            raise ValueError(f"the exact null of the rank sum is too costly for test sizes {n1} and {m1} "
                             f"(min size x total = {cost} > {_EXACT_MAX}); use method='asymptotic' or "
                             "'permutation'")
        k = min(n1, m1)
        pmf = _doubled_sum_pmf(doubled, k)
        if k == n1:
            p = pmf[W2:].sum() / pmf.sum()
        else:  # b's doubled sum is total − W2: W* >= W  <=>  W_b* <= total − W2
            p = pmf[:int(doubled.sum()) - W2 + 1].sum() / pmf.sum()
    elif method == "permutation":
        rng = check_random_state(random_state)
        null_doubled = np.empty(n_permutations, dtype=np.int64)
        for start, chosen in _relabellings(rng, n_permutations, N, n1):
            null_doubled[start:start + len(chosen)] = doubled[chosen].sum(axis=1)
        p = (1.0 + np.count_nonzero(null_doubled >= W2)) / (1.0 + n_permutations)
        null = null_doubled / 2.0
    else:
        U = W - n1 * (n1 + 1) / 2.0
        ties = _tie_counts(doubled).astype(np.float64)
        var = n1 * m1 / 12.0 * ((N + 1) - (ties ** 3 - ties).sum() / (N * (N - 1))) if N > 1 else 0.0
        if var <= 0:
            p = 1.0
        else:
            z = (U - n1 * m1 / 2.0 - (0.5 if continuity else 0.0)) / np.sqrt(var)
            p = float(_st.norm.sf(z))
    return (TestResult(statistic=float(W), p_value=float(min(max(p, 0.0), 1.0)), statistic_name=WILCOXON_STATISTIC),
            method, null)


class TreeRankParams(Interval):
    """A constraint (scikit-learn's format) for ``ranker_params``: a mapping of TreeRank's parameters, but
    ``random_state``, to values TreeRank accepts, so that a misspelt key or a bad value is refused when the config
    is checked, before any run (a subclass of Interval only to pass scikit-learn's validation, as
    :class:`~forestlab.learners._base.PositiveGrid`)."""

    def __init__(self) -> None:
        super().__init__(numbers.Real, None, None, closed="neither")

    def is_satisfied_by(self, val: Any) -> bool:
        from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

        if not isinstance(val, Mapping) or not set(val) <= set(TREERANK_PARAMS):
            return False
        try:
            validate_parameter_constraints({k: TreeRank._parameter_constraints[k] for k in val}, dict(val),
                                           caller_name="TreeRank")
        except InvalidParameterError:
            return False
        return True

    def __str__(self) -> str:
        return (f"a mapping of TreeRank's parameters ({', '.join(TREERANK_PARAMS)}) to values TreeRank accepts "
                "(random_state comes from the test's own)")


class TreeRankWilcoxonTest(BaseEstimator):
    """The TreeRank–Wilcoxon two-sample test (S-WMW_TR; depecker2010 §2.13, box "HEURISTIQUE DE TEST").

    1. Each sample is split at random (stratified): ``train_fraction · n`` of its n points (rounded half up, at least
       1 and at most n − 1) form the learning part, the others the test part.
    2. A TreeRank ranker (``ranker_params``; by default TRK_CART, :data:`TRK_CART_PARAMS`) is fitted on the learning
       part with X_a labelled +1 and X_b labelled −1.
    3. On the test part (n1 points of a, m1 of b), W = the sum of the midranks of a's scores among the n1 + m1 test
       scores (ties, frequent with a tree's piecewise-constant score, share their average rank). Large W rejects:
       the alternative is that a scores higher, i.e. that the learnt score tells the samples apart. The p-value is
       computed by :func:`rank_sum_test` as ``method`` says.

    Since the score is learnt on data independent of the test part, the test has level at most ν (``"exact"``,
    ``"permutation"``) or asymptotically ν (``"asymptotic"``) whatever the ranker (Thm 18).

    Parameters
    ----------
    train_fraction : float, default=0.5
        Share of each sample used to learn the score, in (0, 1). The thesis's experiment (E9) trains on a random
        half; the R package TwoSample uses 0.6.
    scorer : {"treerank", "pruned_treerank", "mean_difference"}, default="treerank"
        The score learnt in step 2: TreeRank (the thesis's S-WMW_TR); the same tree pruned by 10-fold
        cross-validation of its penalised AUC (:class:`~forestlab.learners.PrunedTreeRank`, the thesis's chapter 3
        model selection: a reading of the unreported tree size, §6 item 20); or, as a reference beyond the thesis, the
        linear score x · (mean of a − mean of b) on the learning part (the plug-in estimate of the optimal score
        when both laws are Gaussian with the same isotropic covariance, as in Table 6.1: it shows how much power the
        two-stage test has with a nearly optimal score). ``ranker_params`` is for TreeRank only.
    ranker_params : dict or None, default=None
        TreeRank parameters overriding those of :data:`TRK_CART_PARAMS` (any of TreeRank's parameters but
        ``random_state``, which is drawn from this test's ``random_state``). None: TRK_CART as configured in the
        project (master depth <= 10, nodes of < 50 points not split, LeafRank CART of depth <= 10 with weighted
        misclassification impurity).
    method : {"auto", "exact", "permutation", "asymptotic"}, default="auto"
        The p-value (see :func:`rank_sum_test`): the exact null law of W given the ties, a Monte Carlo permutation
        null, or the normal approximation with tie correction. ``"auto"`` is exact when min(n1, m1) · (n1 + m1)
        <= 5000 (e.g. test parts of up to 50 points each), the normal approximation otherwise (with the thesis's
        1000 test points its error is far below the Monte Carlo error of a power estimate).
    n_permutations : int, default=1000
        Relabellings of ``method="permutation"``.
    continuity : bool, default=True
        Continuity correction (U − ½) of the normal approximation.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the ranker and the relabellings.

    Attributes
    ----------
    ranker_ : TreeRank or ndarray
        The ranker fitted on the learning part (after ``test``); the direction of the linear score for
        ``scorer="mean_difference"``.
    auc_ : float
        The test AUC of the learnt score, U / (n1 m1) with U = W − n1 (n1 + 1) / 2 (ties count ½).
    method_ : str
        The p-value's method actually used (``"auto"`` resolved).
    n_test_ : tuple of int
        (n1, m1): the sizes of the two test parts.
    null_statistics_ : ndarray or None
        The values W* of the relabellings (``"permutation"`` only).
    diagnostics_ : dict of str to float
        ``held_out_auc`` (= ``auc_``) and the test parts' sizes ``n_test_a``, ``n_test_b``: what the runner stores
        beside the p-value; and ``ranker_cv_folds`` when the pruned tree's penalty was cross-validated on fewer
        folds than its ``cv_folds`` (a learning part with a class smaller than them; see PrunedTreeRank).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X_a, X_b = rng.normal(1.0, 1.0, (200, 3)), rng.normal(0.0, 1.0, (200, 3))
    >>> test = TreeRankWilcoxonTest(random_state=0)
    >>> result = test.test(X_a, X_b)
    >>> result.p_value < 1e-6, test.method_, test.auc_ > 0.7
    (True, 'asymptotic', True)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "train_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "scorer": [StrOptions({"treerank", "pruned_treerank", "mean_difference"})],
        "ranker_params": [TreeRankParams(), None],
        "method": [StrOptions({"auto", "exact", "permutation", "asymptotic"})],
        "n_permutations": [IntNotBool(1, None, closed="left")],
        "continuity": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        train_fraction: float = 0.5,
        scorer: str = "treerank",
        ranker_params: dict[str, Any] | None = None,
        method: str = "auto",
        n_permutations: int = 1000,
        continuity: bool = True,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.train_fraction = train_fraction
        self.scorer = scorer
        self.ranker_params = ranker_params
        self.method = method
        self.n_permutations = n_permutations
        self.continuity = continuity
        self.random_state = random_state

    def _ranker_params(self) -> dict[str, Any]:
        return {**TRK_CART_PARAMS, **dict(self.ranker_params or {})}  # keys and values checked by TreeRankParams

    @staticmethod
    def _data_problems(params: Mapping[str, Any], n_samples: int, n_features: int, n_classes: int) -> list[str]:
        """The ranker's RF1/RF2 counts (``ranker_params``) that the samples' features cannot give."""
        if params.get("scorer") not in ("treerank", "pruned_treerank"):
            return []
        ranker = {**TRK_CART_PARAMS, **dict(params.get("ranker_params") or {})}
        return treerank_data_problems(ranker, n_features, prefix="ranker_params.")

    def _split(self, n: int, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
        n_learn = int(min(max(np.floor(self.train_fraction * n + 0.5), 1), n - 1))
        order = rng.permutation(n)
        return order[:n_learn], order[n_learn:]

    def test(self, X_a: Any, X_b: Any) -> TestResult:
        """Learn a score on part of the samples and compare the rest by the Wilcoxon rank sum of their scores.

        Parameters
        ----------
        X_a : array-like of shape (n, n_features)
            Sample a (the positives in the runner): the alternative is that it scores higher.
        X_b : array-like of shape (m, n_features)
            Sample b (the negatives).

        Returns
        -------
        TestResult
            ``statistic`` = W, the midrank sum of a's test points; ``p_value`` = P(W* >= W) under the null.

        Raises
        ------
        ValueError
            If a sample is not a 2-D finite array of at least 2 points, the column counts differ, or
            ``ranker_params`` is invalid.
        """
        self._validate_params()
        A, B = _check_samples(X_a, X_b)
        raise_data_problems(self, len(A) + len(B), A.shape[1], 2)
        params = self._ranker_params()
        rng = check_random_state(self.random_state)
        learn_a, test_a = self._split(len(A), rng)
        learn_b, test_b = self._split(len(B), rng)
        X_learn = np.vstack([A[learn_a], B[learn_b]])
        y_learn = np.concatenate([np.ones(len(learn_a)), -np.ones(len(learn_b))])
        ranker_seed = int(rng.randint(np.iinfo(np.int32).max))
        X_test = np.vstack([A[test_a], B[test_b]])
        if self.scorer in ("treerank", "pruned_treerank"):
            if self.scorer == "treerank":
                ranker = TreeRank(**params, random_state=ranker_seed)
            else:
                ranker = PrunedTreeRank(**params, random_state=ranker_seed)
            ranker.fit(X_learn, y_learn)
            scores = ranker.decision_function(X_test)
        else:  # the linear score along the difference of the learning part's means
            if self.ranker_params:
                raise ValueError("ranker_params sets TreeRank's parameters: it has no use with "
                                 "scorer='mean_difference'")
            ranker = A[learn_a].mean(axis=0) - B[learn_b].mean(axis=0)
            scores = X_test @ ranker
        n1, m1 = len(test_a), len(test_b)
        result, used, null = rank_sum_test(scores[:n1], scores[n1:], method=self.method,
                                           n_permutations=self.n_permutations, continuity=self.continuity,
                                           random_state=rng)
        self.ranker_ = ranker
        self.auc_ = float((result.statistic - n1 * (n1 + 1) / 2.0) / (n1 * m1))
        self.method_ = used
        self.n_test_ = (n1, m1)
        self.null_statistics_ = null
        self.diagnostics_ = {"held_out_auc": self.auc_, "n_test_a": float(n1), "n_test_b": float(m1)}
        folds = getattr(ranker, "cv_folds_", None)
        if folds is not None and folds != ranker.cv_folds:  # a pruned tree on a small learning part says so too
            self.diagnostics_["ranker_cv_folds"] = float(folds)
        return result


# ---------------------------------------------------------------------------------------------------------------
# MMD
# ---------------------------------------------------------------------------------------------------------------
def median_heuristic(Z: Any, random_state: Any = None) -> float:
    """The median heuristic bandwidth: the median of the Euclidean distances ‖z_i − z_j‖, i < j, of the pooled
    sample ``Z``.

    All pairs are used when Z has at most :data:`MEDIAN_MAX_POINTS` (2000) rows; above, those of a random subset of
    2000 rows (drawn with ``random_state``; the median of its ~2 × 10⁶ distances is within a fraction of a percent
    of the full one). Zero distances (duplicate points) are left out, as in Gretton's code; 1.0 if every distance
    is zero.

    Parameters
    ----------
    Z : array-like of shape (N, n_features)
        The pooled sample.
    random_state : int, RandomState instance or None, default=None
        Seeds the subset (only drawn above 2000 rows).

    Returns
    -------
    float
        σ > 0.

    Examples
    --------
    >>> median_heuristic(np.array([[0.0], [1.0], [3.0]]))
    2.0
    """
    Z = np.asarray(Z, dtype=np.float64)
    if len(Z) > MEDIAN_MAX_POINTS:
        rows = check_random_state(random_state).choice(len(Z), MEDIAN_MAX_POINTS, replace=False)
        Z = Z[np.sort(rows)]
    dist = pdist(Z)
    dist = dist[dist > 0]
    return float(np.median(dist)) if len(dist) else 1.0


def gaussian_kernel_matrix(Z: Any, bandwidth: float) -> np.ndarray:
    """The Gaussian kernel matrix k(z_i, z_j) = exp(−‖z_i − z_j‖² / (2 σ²)) of the rows of ``Z`` (σ =
    ``bandwidth``); squared distances from the Gram matrix, clipped at 0, diagonal exactly 1.

    >>> gaussian_kernel_matrix(np.array([[0.0], [1.0]]), 1.0).round(4)
    array([[1.    , 0.6065],
           [0.6065, 1.    ]])
    """
    Z = np.asarray(Z, dtype=np.float64)
    sq = np.einsum("ij,ij->i", Z, Z)
    K = Z @ Z.T
    K *= -2.0
    K += sq[:, None]
    K += sq[None, :]
    np.maximum(K, 0.0, out=K)
    np.fill_diagonal(K, 0.0)
    K *= -1.0 / (2.0 * float(bandwidth) ** 2)
    np.exp(K, out=K)
    return K


def _mmd2_u_columns(K: np.ndarray, row_sums: np.ndarray, total: float, labels: np.ndarray, m: int,
                    n: int) -> np.ndarray:
    """Unbiased MMD² of each labelling of the pooled sample: ``labels`` is an (N, B) 0/1 matrix, 1 = sample a
    (m ones per column).

    With a the indicator of a column and KA = K a: S_aa = a·KA, S_ab = r·a − S_aa (r the row sums of K), S_bb =
    1ᵀK1 − S_aa − 2 S_ab; the diagonal terms are taken out of S_aa and S_bb."""
    diag = np.diag(K)
    KA = K @ labels
    s_aa = np.einsum("ij,ij->j", labels, KA)
    s_ab = row_sums @ labels - s_aa
    s_bb = total - s_aa - 2.0 * s_ab
    d_a = diag @ labels
    d_b = diag.sum() - d_a
    return (s_aa - d_a) / (m * (m - 1.0)) + (s_bb - d_b) / (n * (n - 1.0)) - 2.0 * s_ab / (m * float(n))


def mmd2_unbiased(K: Any, m: int) -> float:
    """The unbiased MMD² of the pooled kernel matrix ``K`` whose first ``m`` rows are sample a and the others
    sample b (sizes m, n >= 2):

    MMD²_u = Σ_{i≠j ∈ a} k / (m (m − 1)) + Σ_{i≠j ∈ b} k / (n (n − 1)) − 2 Σ_{i ∈ a, j ∈ b} k / (m n).

    >>> K = gaussian_kernel_matrix(np.array([[0.0], [0.1], [2.0], [2.2]]), 1.0)
    >>> round(mmd2_unbiased(K, 2), 4)
    1.7257
    """
    K = np.asarray(K, dtype=np.float64)
    N = len(K)
    n = N - m
    if m < 2 or n < 2:
        raise ValueError(f"the unbiased MMD² needs at least 2 points in each sample, got {m} and {n}")
    labels = np.zeros((N, 1))
    labels[:m] = 1.0
    return float(_mmd2_u_columns(K, K.sum(axis=1), float(K.sum()), labels, m, n)[0])


def mmd2_null_moments(K: Any, m: int) -> tuple[float, float]:
    """Mean and variance of the asymptotic null law of T = (m n / (m + n)) · MMD²_b, from the pooled kernel matrix.

    Under H0 (both samples from P, m / (m + n) → ρ ∈ (0, 1)), T → Σ_l λ_l z_l² with z_l iid N(0, 1) and λ_l the
    eigenvalues of the kernel centred in feature space, k̃(x, y) = k(x, y) − E k(x, Z) − E k(Z, y) + E k(Z, Z')
    (Gretton et al. 2012, Thm 12, biased version): its mean is Σ λ_l = E k̃(Z, Z) = E k(Z, Z) − E k(Z, Z') and its
    variance 2 Σ λ_l² = 2 E k̃(Z, Z')² (Z, Z' independent). They are estimated on the pooled sample (N = m + n):

    - mean = mean of the diagonal of K − mean of its off-diagonal entries (unbiased; it is also exactly the mean of
      T over all relabellings of the pooled sample);
    - variance = 2 · mean over i ≠ j of K̃_ij², K̃ = H K H the centred kernel matrix (H = I − 11ᵀ/N); on Gaussian
      and exponential samples of N = 300 (m = 120) it was within 0.5 % of the variance of T over 10⁵ relabellings.

    For equal sizes m = n these are Gretton's ``mmdTestGamma`` moments up to O(1/m): his null mean of MMD²_b,
    2/m · (1 − mean_i k(x_i, y_i)), is 2/m · (E k(Z, Z) − E k(Z, Z')) for a Gaussian kernel (k(z, z) = 1), i.e. our
    mean / (m/2); his variance 2 / (m (m − 1))² · Σ_{i≠j} h_ij², h_ij = k(x_i, x_j) + k(y_i, y_j) − k(x_i, y_j) −
    k(x_j, y_i), has E h² = 4 E k̃(Z, Z')² under H0, so it is 8 E k̃² / (m (m − 1)) against our 2 E k̃² / (m/2)² =
    8 E k̃² / m².

    Parameters
    ----------
    K : array-like of shape (N, N)
        The pooled kernel matrix.
    m : int
        Size of sample a (the first m rows; only the sizes matter here).

    Returns
    -------
    mean, variance : float
    """
    K = np.asarray(K, dtype=np.float64)
    N = len(K)
    if not 1 <= m < N or N < 3:
        raise ValueError(f"m must be in [1, N) with N >= 3, got m = {m}, N = {N}")
    diag = np.diag(K)
    total = float(K.sum())
    mean = float(diag.mean() - (total - diag.sum()) / (N * (N - 1.0)))
    row_means = K.mean(axis=1)
    grand = total / N ** 2
    Kc = K - row_means[:, None]
    Kc -= row_means[None, :]
    Kc += grand
    off2 = float(np.einsum("ij,ij->", Kc, Kc) - np.sum(np.diag(Kc) ** 2))
    variance = 2.0 * off2 / (N * (N - 1.0))
    return mean, variance


class MMDTest(BaseEstimator):
    """Kernel two-sample test by the maximum mean discrepancy (Gretton et al. 2008, 2012), Gaussian kernel.

    The kernel is k(x, y) = exp(−‖x − y‖² / (2 σ²)) with σ = ``bandwidth``, by default the median heuristic
    (:func:`median_heuristic`: median of the pairwise Euclidean distances of the pooled sample; Gretton's code uses
    σ² = ½ median ‖x − y‖², a σ smaller by √2). With X_a of m points and X_b of n (m, n >= 2, sizes may differ):

    - ``null_distribution="permutation"`` (the thesis's MMD_boot; Gretton's "bootstrap" permutes the pooled sample):
      the statistic is the unbiased MMD²_u (:func:`mmd2_unbiased`); its null law is estimated by ``n_permutations``
      random relabellings of the pooled sample into m + n points, p = (1 + #{MMD²_u* >= MMD²_u}) / (1 + B). The
      pooled kernel matrix is computed once and all relabellings are evaluated by matrix products K S (S the N × B
      matrix of their indicators, in chunks), so a test at N = 2000, B = 500 takes a fraction of a second.
    - ``null_distribution="gamma"`` (the substitute for the thesis's MMD_mom, which fitted Pearson curves): the
      statistic is T = (m n / (m + n)) · MMD²_b (biased MMD²); the null is the Gamma law whose mean and variance are
      those of T's asymptotic null law, estimated on the pooled sample (:func:`mmd2_null_moments`); p = the Gamma
      survival function at T (1 if the estimated moments are not positive, e.g. all points equal). For m = n this
      is Gretton's ``mmdTestGamma`` up to O(1/m) in the moments.

    Both need the N × N kernel matrix in memory (32 MB at N = 2000).

    **The two nulls test different statistics**, and the result says which (``TestResult.statistic_name``:
    ``"MMD2_u"`` or ``"T = mn/(m+n) MMD2_b"``): on the same data T is about m n / (m + n) times MMD²_u (5.16 against
    0.0318 for 300 + 300 points), so compare statistics of one mode only. Each p-value is computed from its own
    statistic (the stored runs of mmd_boot and mmd_mom carry them under these definitions). The one estimate of the
    discrepancy that both modes share is ``mmd2_u_`` (and ``mmd2_b_``), set by every call.

    Parameters
    ----------
    null_distribution : {"permutation", "gamma"}, default="permutation"
        The null law (above).
    n_permutations : int, default=500
        B of ``null_distribution="permutation"`` (unused by ``"gamma"``).
    bandwidth : "median" or float, default="median"
        σ of the Gaussian kernel, or the median heuristic.
    random_state : int, RandomState instance or None, default=None
        Seeds the relabellings and, above 2000 pooled points, the median heuristic's subset.

    Attributes
    ----------
    bandwidth_ : float
        σ used (after ``test``).
    diagnostics_ : dict of str to float
        ``bandwidth`` (= ``bandwidth_``): what the runner stores beside the p-value.
    null_statistics_ : ndarray or None
        The B values MMD²_u* of the relabellings (``"permutation"``); None for ``"gamma"``.
    null_mean_, null_var_ : float or None
        The Gamma null's mean and variance (``"gamma"``); None for ``"permutation"``.
    mmd2_u_, mmd2_b_ : float
        The unbiased and the biased MMD² of the two samples, whatever the null (the same values in both modes).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X_a, X_b = rng.normal(0.5, 1.0, (100, 2)), rng.normal(0.0, 1.0, (80, 2))
    >>> [MMDTest(null_distribution=d, random_state=0).test(X_a, X_b).p_value < 0.01 for d in ("permutation", "gamma")]
    [True, True]
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "null_distribution": [StrOptions({"permutation", "gamma"})],
        "n_permutations": [IntNotBool(1, None, closed="left")],
        "bandwidth": [StrOptions({"median"}), Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        null_distribution: str = "permutation",
        n_permutations: int = 500,
        bandwidth: str | float = "median",
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.null_distribution = null_distribution
        self.n_permutations = n_permutations
        self.bandwidth = bandwidth
        self.random_state = random_state

    def test(self, X_a: Any, X_b: Any) -> TestResult:
        """Compare the two samples by their MMD.

        Parameters
        ----------
        X_a : array-like of shape (m, n_features)
            Sample a.
        X_b : array-like of shape (n, n_features)
            Sample b.

        Returns
        -------
        TestResult
            ``"permutation"``: statistic MMD²_u (``statistic_name="MMD2_u"``) and its permutation p-value;
            ``"gamma"``: statistic T = (m n / (m + n)) MMD²_b (``statistic_name="T = mn/(m+n) MMD2_b"``) and its
            Gamma p-value. ``mmd2_u_`` is MMD²_u in both modes.

        Raises
        ------
        ValueError
            If a sample is not a 2-D finite array of at least 2 points, or the column counts differ.
        """
        self._validate_params()
        A, B = _check_samples(X_a, X_b)
        m, n = len(A), len(B)
        N = m + n
        Z = np.vstack([A, B])
        rng = check_random_state(self.random_state)
        sigma = median_heuristic(Z, rng) if isinstance(self.bandwidth, str) else float(self.bandwidth)
        K = gaussian_kernel_matrix(Z, sigma)
        self.bandwidth_ = sigma
        self.diagnostics_ = {"bandwidth": float(sigma)}
        self.null_statistics_ = None
        self.null_mean_ = self.null_var_ = None
        row_sums = K.sum(axis=1)
        total = float(row_sums.sum())
        observed = np.zeros((N, 1))
        observed[:m] = 1.0
        mmd2_u = float(_mmd2_u_columns(K, row_sums, total, observed, m, n)[0])
        w = np.concatenate([np.full(m, 1.0 / m), np.full(n, -1.0 / n)])
        mmd2_b = float(w @ K @ w)
        self.mmd2_u_, self.mmd2_b_ = mmd2_u, mmd2_b
        if self.null_distribution == "gamma":
            stat = m * n / N * mmd2_b
            mean, var = mmd2_null_moments(K, m)
            self.null_mean_, self.null_var_ = mean, var
            if mean <= 0 or var <= 0:
                p = 1.0
            else:
                p = float(_st.gamma.sf(stat, mean ** 2 / var, scale=var / mean))
            return TestResult(statistic=float(stat), p_value=p, statistic_name=GAMMA_STATISTIC)
        stat = mmd2_u
        B_ = self.n_permutations
        null = np.empty(B_)
        for start, chosen in _relabellings(rng, B_, N, m):
            labels = np.zeros((len(chosen), N))
            np.put_along_axis(labels, chosen, 1.0, axis=1)
            null[start:start + len(chosen)] = _mmd2_u_columns(K, row_sums, total, np.ascontiguousarray(labels.T), m,
                                                              n)
        self.null_statistics_ = null
        p = (1.0 + np.count_nonzero(null >= stat)) / (1.0 + B_)
        return TestResult(statistic=stat, p_value=float(p), statistic_name=PERMUTATION_STATISTIC)
