"""Two-sample tests of today, beyond depecker2010 (ours: not in the thesis): the classifier two-sample test, the
thesis's two-stage test with that classifier's score, and the aggregated MMD test MMDAgg.

Each is a learner of the task ``two_sample_test`` with the interface of :mod:`forestlab.learners._two_sample`:
parameters set in ``__init__``, ``test(X_a, X_b)`` returns a :class:`~forestlab.learners._base.TestResult`
(statistic, p-value), the same for the same ``random_state``, and ``diagnostics_`` holds what the runner stores
beside the p-value.

- :class:`C2STTest` (Lopez-Paz & Oquab, ICLR 2017, "Revisiting classifier two-sample tests"): split both samples,
  train a scikit-learn classifier (a random forest or histogram gradient boosting) to tell a from b on one part,
  and test its held-out accuracy against chance. The default null is exact at every sample size: given the
  classifier's predictions on the held-out points, the held-out labels are, under H0, a uniformly random
  relabelling (the held-out points are iid and independent of the classifier), so the number of a-points among
  those predicted "a" is hypergeometric and the p-value is the one-sided Fisher exact test of the 2 x 2 table
  (the permutation null of the held-out labels, without Monte Carlo error). The paper's Binomial(n_test, 1/2) null
  is available; it is exact only when the classifier's prediction is independent of the label *and* uniform, and
  can be anti-conservative with unequal held-out sizes (a classifier that learnt the larger sample's prior is
  right more than half the time under H0).
- :class:`ClassifierWilcoxonTest` (``c2st_wilcoxon``): the same split and the same classifier (with the same
  ``random_state`` both tests fit the very same classifier), but the held-out points are compared by the
  Wilcoxon–Mann–Whitney rank sum of the classifier's probability for "a" (:func:`~forestlab.learners._two_sample.
  rank_sum_test`, the thesis's second stage of S-WMW_TR). Beside ``treerank_wilcoxon`` (same second stage,
  TreeRank's score) it tells whether the thesis's score or its Wilcoxon step is the weak link; beside ``c2st``
  (same score, accuracy instead of ranks) it tells what thresholding the score at ½ costs.
- :class:`MMDAggTest` (Schrab, Kim, Albert, Laurent, Guedj & Gretton, JMLR 2023, "MMD aggregated two-sample
  test"): unbiased MMD² statistics for a collection of Gaussian and Laplace kernels of bandwidths spread
  geometrically over the range of the pooled distances, each turned into a permutation p-value p_λ, aggregated
  as T = min_λ p_λ / w_λ (w the kernels' weights); the aggregated test rejects when T is small *by the permutation
  law of T itself* (the paper's level correction u_α). See :class:`MMDAggTest` for how this p-value form relates to
  the paper's bisection.
"""

from __future__ import annotations

import numbers
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from scipy import stats as _st
from scipy.spatial.distance import cdist, pdist
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from forestlab.learners._base import IntNotBool, TestResult
from forestlab.learners._cache import fingerprint
from forestlab.learners._two_sample import _check_samples, _relabellings, rank_sum_test

__all__ = ["C2STTest", "CLASSIFIERS", "ClassifierWilcoxonTest", "MMDAggTest", "held_out_accuracy_test",
           "mmdagg_bandwidths", "mmdagg_weights"]

#: The classifiers a classifier two-sample test can learn, with the parameters we set unless ``classifier_params``
#: overrides them (``random_state`` always comes from the test's own). The forest is scikit-learn's (probability
#: = mean of the trees' leaf class fractions), grown single-threaded so that a test's cost is its own.
CLASSIFIERS: dict[str, tuple[type, dict[str, Any]]] = {
    "random_forest": (RandomForestClassifier, {"n_estimators": 200, "min_samples_leaf": 5, "n_jobs": 1}),
    "hist_gradient_boosting": (HistGradientBoostingClassifier, {"max_iter": 200, "learning_rate": 0.1,
                                                                "early_stopping": False}),
}


class ClassifierParams(Interval):
    """A constraint (scikit-learn's format) for ``classifier_params``: a mapping of parameters, but
    ``random_state``, that one of :data:`CLASSIFIERS` accepts, with values it accepts, so that a misspelt key is
    refused when the config is checked (a subclass of Interval only to pass scikit-learn's validation)."""

    def __init__(self) -> None:
        super().__init__(numbers.Real, None, None, closed="neither")

    def is_satisfied_by(self, val: Any) -> bool:
        if not isinstance(val, Mapping) or "random_state" in val:
            return False
        return any(_classifier_params_error(cls, val) is None for cls, _ in CLASSIFIERS.values())

    def __str__(self) -> str:
        return ("a mapping of the parameters (but random_state) of one of the classifiers "
                f"({', '.join(f'{k}: {c.__name__}' for k, (c, _) in CLASSIFIERS.items())}) to values it accepts")


def _classifier_params_error(cls: type, params: Mapping[str, Any]) -> str | None:
    """Why ``cls`` refuses ``params`` (None if it accepts them)."""
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

    unknown = sorted(set(params) - set(cls._parameter_constraints))
    if unknown:
        return f"{cls.__name__} has no parameter(s) {', '.join(map(repr, unknown))}"
    try:
        validate_parameter_constraints({k: cls._parameter_constraints[k] for k in params}, dict(params),
                                       caller_name=cls.__name__)
    except InvalidParameterError as exc:
        return str(exc)
    return None


class _ClassifierSplitTest(BaseEstimator):
    """Split each sample, learn a classifier of a against b on the learning parts, score the held-out parts."""

    def _classifier(self, seed: int) -> Any:
        cls, defaults = CLASSIFIERS[self.classifier]
        params = dict(self.classifier_params or {})
        if "random_state" in params:
            raise ValueError("classifier_params may not set random_state: it is drawn from the test's random_state")
        error = _classifier_params_error(cls, params)
        if error is not None:
            raise ValueError(f"classifier_params does not suit classifier={self.classifier!r}: {error}")
        return cls(**{**defaults, **params, "random_state": seed})

    def _split(self, n: int, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
        # as TreeRankWilcoxonTest: train_fraction * n rounded half up, at least 1 and at most n - 1
        n_learn = int(min(max(np.floor(self.train_fraction * n + 0.5), 1), n - 1))
        order = rng.permutation(n)
        return order[:n_learn], order[n_learn:]

    def _held_out_scores(self, X_a: Any, X_b: Any) -> tuple[np.ndarray, np.ndarray, np.random.RandomState]:
        """The classifier's probability of "a" on the held-out points of a and of b, and the generator (for what
        the test draws next). The draws (split of a, split of b, classifier seed) are those of
        TreeRankWilcoxonTest, so both classifier tests with one random_state fit the same classifier: with an
        integer ``random_state`` the fit is looked up in :data:`_SHARED_FITS` first (see there)."""
        self._validate_params()
        A, B = _check_samples(X_a, X_b)
        key = None
        if isinstance(self.random_state, numbers.Integral):
            key = (self.classifier, repr(sorted((self.classifier_params or {}).items())), float(self.train_fraction),
                   int(self.random_state), fingerprint(A), fingerprint(B))
            shared = _SHARED_FITS.get(key)
            if shared is not None:
                _SHARED_FITS.move_to_end(key)
                clf, proba, n1, n2, state = shared
                rng = np.random.RandomState()
                rng.set_state(state)
                return self._keep(clf, proba, n1, n2) + (rng,)
        rng = check_random_state(self.random_state)
        learn_a, test_a = self._split(len(A), rng)
        learn_b, test_b = self._split(len(B), rng)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        clf = self._classifier(seed)
        X_learn = np.vstack([A[learn_a], B[learn_b]])
        y_learn = np.concatenate([np.ones(len(learn_a), dtype=int), np.zeros(len(learn_b), dtype=int)])
        clf.fit(X_learn, y_learn)
        proba = clf.predict_proba(np.vstack([A[test_a], B[test_b]]))[:, list(clf.classes_).index(1)]
        if key is not None:
            _SHARED_FITS[key] = (clf, proba, len(test_a), len(test_b), rng.get_state())
            while len(_SHARED_FITS) > _SHARED_FITS_SIZE:
                _SHARED_FITS.popitem(last=False)
        return self._keep(clf, proba, len(test_a), len(test_b)) + (rng,)

    def _keep(self, clf: Any, proba: np.ndarray, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
        self.classifier_ = clf
        self.n_test_ = (n1, n2)
        self.auc_ = float(roc_auc_score(np.r_[np.ones(n1), np.zeros(n2)], proba))
        self.held_out_scores_ = (proba[:n1], proba[n1:])
        return proba[:n1], proba[n1:]


#: The classifier fits of the classifier tests, shared between C2STTest and ClassifierWilcoxonTest: (classifier,
#: its parameters, train_fraction, the integer random_state, content hashes of both samples) -> (fitted classifier,
#: held-out probabilities, held-out sizes, the generator's state after the split and the classifier's seed). Both
#: tests draw the same split and seed from one random_state, so the second finds the first's fit instead of growing
#: the same forest again: c2st and c2st_wilcoxon share a seed_tag in conf/algorithm/, hence one random_state per
#: sample, and the runner runs the specs of a seed_tag on one sample in one job, one after the other (as RF, SORF and
#: MinCq share a forest through forestlab/learners/_cache.py; the runner hands no fit cache to two-sample tests, so
#: this one lives here). A hit gives exactly what a fresh fit gives (same draws, same seed); only the last few fits
#: are kept. Treat a shared classifier as read-only.
_SHARED_FITS: OrderedDict[tuple[Any, ...], tuple[Any, np.ndarray, int, int, Any]] = OrderedDict()
_SHARED_FITS_SIZE = 2


def held_out_accuracy_test(pred_a: Any, pred_b: Any, null_distribution: str = "exact") -> TestResult:
    """The held-out accuracy of a classifier's predictions and its p-value against chance.

    Parameters
    ----------
    pred_a, pred_b : array-like of bool, shapes (n1,), (m1,)
        True where the classifier predicts "a", on the held-out points of a and of b.
    null_distribution : {"exact", "binomial"}
        ``"exact"``: X = the a-points predicted "a" is hypergeometric given k = the points predicted "a" (every
        relabelling of the held-out points equally likely), p = P(X* >= X); ``"binomial"``: the number of correct
        predictions is Binomial(n1 + m1, ½).

    Returns
    -------
    TestResult
        The accuracy (2 X + m1 − k) / (n1 + m1) and its p-value.

    Examples
    --------
    >>> result = held_out_accuracy_test([True, True, False], [False, False, True])
    >>> round(result.statistic, 4), round(result.p_value, 4)  # P(X* >= 2) = (3 * 3 + 1) / C(6, 3)
    (0.6667, 0.5)
    """
    pred_a = np.asarray(pred_a, dtype=bool).ravel()
    pred_b = np.asarray(pred_b, dtype=bool).ravel()
    n1, m1 = len(pred_a), len(pred_b)
    N1 = n1 + m1
    x = int(pred_a.sum())                      # a-points predicted a
    k = x + int(pred_b.sum())                  # points predicted a
    correct = 2 * x + m1 - k
    if null_distribution == "exact":
        p = float(_st.hypergeom.sf(x - 1, N1, n1, k))
    elif null_distribution == "binomial":
        p = float(_st.binom.sf(correct - 1, N1, 0.5))
    else:
        raise ValueError(f"null_distribution must be 'exact' or 'binomial', got {null_distribution!r}")
    return TestResult(statistic=correct / N1, p_value=float(min(max(p, 0.0), 1.0)))


_SPLIT_CONSTRAINTS: dict[str, list[Any]] = {
    "classifier": [StrOptions(set(CLASSIFIERS))],
    "classifier_params": [ClassifierParams(), None],
    "train_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
}


class C2STTest(_ClassifierSplitTest):
    """Classifier two-sample test (C2ST; Lopez-Paz & Oquab 2017), a test of today beyond depecker2010.

    1. Each sample is split at random: ``train_fraction · n`` points (rounded half up, at least 1, at most n − 1)
       learn, the others (n1 of a, m1 of b) are held out.
    2. The classifier (``classifier``, ``classifier_params``) learns a (label 1) against b (label 0).
    3. It predicts "a" on a held-out point when its probability of a exceeds ½. The statistic is the held-out
       accuracy; large accuracy rejects.

    The p-value (``null_distribution``):

    - ``"exact"`` (default): with k held-out points predicted "a", of which X are from a, under H0 X is
      hypergeometric (N1 = n1 + m1 points, n1 of them a, k drawn): p = P(X* >= X), the one-sided Fisher exact
      test, equal to the p-value of the permutation null of the held-out labels with every relabelling counted.
      Accuracy = (2 X + m1 − k) / N1 is increasing in X, so this is the law of the accuracy. Exact level for any
      sizes and any classifier.
    - ``"binomial"``: the paper's null, n_correct ~ Binomial(N1, ½). Valid (conservative) when n1 = m1; with
      unequal held-out sizes a classifier that predicts the larger sample more often is right more than half the
      time under H0, so this null can be anti-conservative there.

    Parameters
    ----------
    classifier : {"random_forest", "hist_gradient_boosting"}, default="random_forest"
        scikit-learn's RandomForestClassifier (200 trees, leaves of at least 5 points) or
        HistGradientBoostingClassifier (200 iterations, no early stopping); see :data:`CLASSIFIERS`.
    classifier_params : dict or None, default=None
        Parameters of the classifier overriding those of :data:`CLASSIFIERS` (not ``random_state``).
    train_fraction : float, default=0.5
        Share of each sample the classifier learns from, in (0, 1).
    null_distribution : {"exact", "binomial"}, default="exact"
        The null law of the held-out accuracy (above).
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the classifier.

    Attributes
    ----------
    classifier_ : fitted classifier
    held_out_scores_ : tuple of ndarray
        The classifier's probability of "a" on the held-out points of a and of b.
    accuracy_ : float
        The held-out accuracy (the statistic).
    auc_ : float
        The held-out AUC of the classifier's probability of a (what c2st_wilcoxon's rank sum measures).
    n_test_ : tuple of int
        (n1, m1), the held-out sizes.
    diagnostics_ : dict of str to float
        ``held_out_accuracy``, ``held_out_auc``, ``n_test_a``, ``n_test_b``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X_a, X_b = rng.normal(1.0, 1.0, (200, 3)), rng.normal(0.0, 1.0, (200, 3))
    >>> test = C2STTest(random_state=0)
    >>> result = test.test(X_a, X_b)
    >>> bool(result.p_value < 1e-6), bool(result.statistic > 0.7)
    (True, True)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {**_SPLIT_CONSTRAINTS,
                                                               "null_distribution": [StrOptions({"exact", "binomial"})]}

    def __init__(
        self,
        *,
        classifier: str = "random_forest",
        classifier_params: dict[str, Any] | None = None,
        train_fraction: float = 0.5,
        null_distribution: str = "exact",
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.classifier = classifier
        self.classifier_params = classifier_params
        self.train_fraction = train_fraction
        self.null_distribution = null_distribution
        self.random_state = random_state

    def test(self, X_a: Any, X_b: Any) -> TestResult:
        """Learn to tell a from b on part of the samples, test the held-out accuracy against chance.

        Parameters
        ----------
        X_a : array-like of shape (n, n_features)
            Sample a (the positives in the runner).
        X_b : array-like of shape (m, n_features)
            Sample b.

        Returns
        -------
        TestResult
            ``statistic`` = held-out accuracy; ``p_value`` from ``null_distribution``.

        Raises
        ------
        ValueError
            If a sample is not a 2-D finite array of at least 2 points, the column counts differ, or
            ``classifier_params`` does not suit the classifier.
        """
        score_a, score_b, _ = self._held_out_scores(X_a, X_b)
        result = held_out_accuracy_test(score_a > 0.5, score_b > 0.5, self.null_distribution)
        self.accuracy_ = result.statistic
        self.diagnostics_ = {"held_out_accuracy": self.accuracy_, "held_out_auc": self.auc_,
                             "n_test_a": float(len(score_a)), "n_test_b": float(len(score_b))}
        return result


class ClassifierWilcoxonTest(_ClassifierSplitTest):
    """The thesis's two-stage test with a classifier's score in place of TreeRank's (``c2st_wilcoxon``; ours: not
    in depecker2010).

    Steps 1–2 are :class:`C2STTest`'s (same draws: with one ``random_state`` both fit the same classifier on the
    same split). Step 3 is S-WMW_TR's (:class:`~forestlab.learners.TreeRankWilcoxonTest`): W = the sum of the
    midranks of a's held-out probabilities of "a" among all N1 held-out probabilities, large W rejects, the p-value
    from :func:`~forestlab.learners._two_sample.rank_sum_test` (exact law of the midrank sum given the ties, Monte
    Carlo relabellings or the normal approximation with tie correction). The level is ν whatever the classifier,
    since the score was learnt on data independent of the held-out points (Thm 18 of the thesis).

    Parameters
    ----------
    classifier, classifier_params, train_fraction :
        As :class:`C2STTest`.
    method : {"auto", "exact", "permutation", "asymptotic"}, default="auto"
        The rank-sum p-value (see :func:`~forestlab.learners._two_sample.rank_sum_test`).
    n_permutations : int, default=1000
        Relabellings of ``method="permutation"``.
    continuity : bool, default=True
        Continuity correction of the normal approximation.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the classifier and the relabellings.

    Attributes
    ----------
    classifier_, held_out_scores_, auc_, n_test_ :
        As :class:`C2STTest` (``auc_`` = U / (n1 m1), ties counting ½).
    method_ : str
        The p-value's method actually used.
    diagnostics_ : dict of str to float
        ``held_out_auc``, ``n_test_a``, ``n_test_b``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X_a, X_b = rng.normal(1.0, 1.0, (200, 3)), rng.normal(0.0, 1.0, (200, 3))
    >>> test = ClassifierWilcoxonTest(random_state=0)
    >>> bool(test.test(X_a, X_b).p_value < 1e-6), test.method_
    (True, 'asymptotic')
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_SPLIT_CONSTRAINTS,
        "method": [StrOptions({"auto", "exact", "permutation", "asymptotic"})],
        "n_permutations": [IntNotBool(1, None, closed="left")],
        "continuity": ["boolean"],
    }

    def __init__(
        self,
        *,
        classifier: str = "random_forest",
        classifier_params: dict[str, Any] | None = None,
        train_fraction: float = 0.5,
        method: str = "auto",
        n_permutations: int = 1000,
        continuity: bool = True,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.classifier = classifier
        self.classifier_params = classifier_params
        self.train_fraction = train_fraction
        self.method = method
        self.n_permutations = n_permutations
        self.continuity = continuity
        self.random_state = random_state

    def test(self, X_a: Any, X_b: Any) -> TestResult:
        """Learn a classifier's score on part of the samples, compare the rest by the rank sum of their scores.

        Parameters
        ----------
        X_a : array-like of shape (n, n_features)
            Sample a: the alternative is that it scores higher.
        X_b : array-like of shape (m, n_features)
            Sample b.

        Returns
        -------
        TestResult
            ``statistic`` = W, the midrank sum of a's held-out points; ``p_value`` = P(W* >= W) under H0.

        Raises
        ------
        ValueError
            As :meth:`C2STTest.test`.
        """
        score_a, score_b, rng = self._held_out_scores(X_a, X_b)
        result, used, _ = rank_sum_test(score_a, score_b, method=self.method, n_permutations=self.n_permutations,
                                        continuity=self.continuity, random_state=rng)
        n1, m1 = len(score_a), len(score_b)
        self.method_ = used
        self.diagnostics_ = {"held_out_auc": self.auc_, "n_test_a": float(n1), "n_test_b": float(m1)}
        return result


# ---------------------------------------------------------------------------------------------------------------
# MMDAgg
# ---------------------------------------------------------------------------------------------------------------
#: At most this many pooled points (a random subset above) give the distances the bandwidths are read from.
BANDWIDTH_MAX_POINTS = 1000
_KERNEL_NORMS = {"gaussian": "euclidean", "laplace": "cityblock"}
KERNEL_COLLECTIONS = {"gaussian": ("gaussian",), "laplace": ("laplace",), "laplace_gaussian": ("laplace", "gaussian")}


def mmdagg_bandwidths(distances: Any, number_bandwidths: int) -> np.ndarray:
    """MMDAgg's bandwidth collection from the pairwise distances of the data (Schrab et al. 2023, §5 and their
    reference code's rule): λ_min = half the smallest distance (half the 5 % quantile, at least 0.05, when the
    smallest is below 0.1: duplicates and near-duplicates), λ_max = twice the largest distance (at least 0.6),
    and ``number_bandwidths`` values in geometric progression from λ_min to λ_max.

    >>> mmdagg_bandwidths([1.0, 2.0, 4.0], 3).tolist()
    [0.5, 2.0, 8.0]
    """
    d = np.asarray(distances, dtype=np.float64).ravel()
    if d.min() < 0.1:
        lam_min = max(float(np.sort(d)[int(np.floor(len(d) * 0.05))]), 0.1) / 2.0
    else:
        lam_min = float(d.min()) / 2.0
    lam_max = max(float(d.max()), 0.3) * 2.0
    return lam_min * (lam_max / lam_min) ** (np.arange(number_bandwidths) / (number_bandwidths - 1.0))


def mmdagg_weights(number_bandwidths: int, weights_type: str) -> np.ndarray:
    """The weights of the bandwidths of one kernel (Schrab et al. 2023, §5.1), summing to 1, in increasing order of
    bandwidth: ``"uniform"`` 1/L; ``"decreasing"`` ∝ 1/i (favours small bandwidths); ``"increasing"`` ∝ 1/(L + 1 − i);
    ``"centred"`` ∝ 1/(|(L + 1)/2 − i| + 1) for odd L, 1/(|(L + 1)/2 − i| + ½) for even L.

    >>> mmdagg_weights(4, "decreasing").round(3).tolist()
    [0.48, 0.24, 0.16, 0.12]
    """
    i = np.arange(1, number_bandwidths + 1, dtype=np.float64)
    L = float(number_bandwidths)
    if weights_type == "uniform":
        raw = np.ones_like(i)
    elif weights_type == "decreasing":
        raw = 1.0 / i
    elif weights_type == "increasing":
        raw = 1.0 / (L + 1.0 - i)
    elif weights_type == "centred":
        raw = 1.0 / (np.abs((L + 1.0) / 2.0 - i) + (1.0 if number_bandwidths % 2 else 0.5))
    else:
        raise ValueError(f"weights_type must be 'uniform', 'decreasing', 'increasing' or 'centred', got "
                         f"{weights_type!r}")
    return raw / raw.sum()


#: Pooled points are cut into about this many row blocks for :func:`_mmd2_u_kernels` (the work is N² B (1 + 1 / b)
#: flops per kernel for b blocks instead of 2 N² B; smaller blocks make the products less efficient).
_MMD_BLOCKS = 8


def _mmd2_u_kernels(Z: np.ndarray, m: int, labels: np.ndarray, metric: str, squared: bool,
                    bandwidths: np.ndarray) -> np.ndarray:
    """The unbiased MMD² of every labelling (columns of the 0/1 matrix ``labels``, m ones each) for the kernels
    exp(−D / λ) (``squared``: exp(−D² / λ²)) of the pooled points ``Z``, one row per bandwidth.

    The same quantities as :func:`~forestlab.learners._two_sample._mmd2_u_columns` on the full kernel matrix, with
    half its work: the kernel is symmetric, so aᵀ K a = Σ_i a_iᵀ K_ii a_i + 2 Σ_{i>j} a_iᵀ K_ij a_j over row blocks
    i, j of the pooled points, and only the blocks on and below the diagonal are computed (distances once per
    family, the exponential and the product once per bandwidth). The diagonal of both kernels is 1. Only the order
    of the floating-point sums differs from the full product (differences of order 1e-16 relative; the
    permutation p-values were identical on every sample compared, tests/test_modern_tests.py)."""
    N = len(Z)
    n = N - m
    b = max(1, min(_MMD_BLOCKS, N // 64))
    edges = np.linspace(0, N, b + 1).astype(int)
    blocks = [slice(int(edges[i]), int(edges[i + 1])) for i in range(b)]
    distances = {}
    for i in range(b):
        for j in range(i + 1):
            D = cdist(Z[blocks[i]], Z[blocks[j]], metric)
            if squared:
                D **= 2
            distances[i, j] = D
    n_cols = labels.shape[1]
    d_a = labels.sum(axis=0)          # the diagonal's share of a's sum (k(x, x) = 1)
    d_b = N - d_a
    out = np.empty((len(bandwidths), n_cols))
    buffer = np.empty((int(np.diff(edges).max()), int(np.diff(edges).max())))
    for k, lam in enumerate(bandwidths):
        scale = -1.0 / (lam ** 2 if squared else lam)
        s_aa = np.zeros(n_cols)
        row_sums = np.zeros(N)
        for (i, j), D in distances.items():
            K = buffer[:D.shape[0], :D.shape[1]]
            np.multiply(D, scale, out=K)
            np.exp(K, out=K)
            row_sums[blocks[i]] += K.sum(axis=1)
            q = np.einsum("ij,ij->j", labels[blocks[i]], K @ labels[blocks[j]])
            if i != j:
                row_sums[blocks[j]] += K.sum(axis=0)
                q *= 2.0
            s_aa += q
        s_ab = row_sums @ labels - s_aa
        s_bb = float(row_sums.sum()) - s_aa - 2.0 * s_ab
        out[k] = (s_aa - d_a) / (m * (m - 1.0)) + (s_bb - d_b) / (n * (n - 1.0)) - 2.0 * s_ab / (m * float(n))
    return out


class MMDAggTest(BaseEstimator):
    """MMDAgg (Schrab et al., JMLR 2023): MMD tests over a collection of kernels, aggregated with a permutation
    level correction (ours: not in depecker2010).

    The collection: for each kernel family of ``kernel`` (Laplace exp(−‖x − y‖₁ / λ), Gaussian
    exp(−‖x − y‖₂² / λ²)), ``number_bandwidths`` bandwidths from :func:`mmdagg_bandwidths` applied to the ℓ1 / ℓ2
    distances among the pooled points (all pairs of a random subset of 1000 when there are more). The paper's code
    reads them from the distances between the first 500 points of each sample; the pooled points are used here so
    that the collection does not depend on which points are labelled a, keeping the permutation test exact. Each
    kernel λ has weight w_λ = ``mmdagg_weights`` / (number of families).

    For every kernel the statistic is the unbiased MMD²_u (:func:`~forestlab.learners._two_sample.mmd2_unbiased`,
    the paper's permutation statistic). The same B = ``n_permutations`` random relabellings of the pooled sample
    serve every kernel. With column 0 the observed labelling and columns 1..B the relabellings, each column c gets,
    for each kernel, the p-value p_λ(c) = #{c' : MMD²_λ(c') >= MMD²_λ(c)} / (B + 1), and the aggregate
    T(c) = min_λ p_λ(c) / w_λ. The p-value of the aggregated test is #{c : T(c) <= T(0)} / (B + 1).

    Relation to the paper's Algorithm 1: it rejects at level α when some λ has p_λ <= u_α w_λ, with u_α the largest
    u such that the permutation probability of min_λ p_λ / w_λ <= u α is at most α (found by bisection on a second
    set of B2 permutations, the quantiles being read from a first set of B1). That is T(0) <= u_α α, with u_α α
    the α-quantile of T's permutation law: the same decision as p <= α here, up to the discreteness of the
    quantiles. Using one set of relabellings that includes the observed one makes T(0), T(1), ..., T(B)
    exchangeable under H0, so the test has level at most α exactly (finite B, any sizes); the paper's separate
    sets and bisection do not change the rule, only its Monte Carlo error. The paper uses a wild bootstrap when
    both sizes are equal and permutations otherwise; permutations are used here at every size.

    Cost: per family the distances of the blocks on and below the diagonal (:func:`_mmd2_u_kernels`), per kernel
    their exponential and the products K_ij S_j for the relabellings' indicators S (N x (B + 1)): about
    N² (B + 1) (1 + 1/8) flops per kernel, half of the full product K S (on Table 6.1's samples, 2000 points, the
    products are three quarters of the test's time).

    Parameters
    ----------
    kernel : {"laplace_gaussian", "gaussian", "laplace"}, default="laplace_gaussian"
        The kernel families (the paper's default: both).
    number_bandwidths : int, default=10
        Bandwidths per family (the paper: 10), at least 2.
    weights_type : {"uniform", "decreasing", "increasing", "centred"}, default="uniform"
        Weights of the bandwidths (:func:`mmdagg_weights`; the paper's default: uniform).
    n_permutations : int, default=500
        B, the random relabellings (the paper uses B1 = B2 = 2000; 500 matches MMD_boot's).
    random_state : int, RandomState instance or None, default=None
        Seeds the relabellings and the bandwidths' subset (above 1000 pooled points).

    Attributes
    ----------
    bandwidths_ : dict of str to ndarray
        The bandwidths of each family.
    statistics_ : ndarray of shape (n_kernels,)
        The observed MMD²_u of each kernel (families in the order of ``kernel``, bandwidths increasing).
    single_p_values_ : ndarray of shape (n_kernels,)
        p_λ(0) of each kernel (families in the order of ``kernel``, bandwidths increasing).
    weights_ : ndarray of shape (n_kernels,)
    null_statistics_ : ndarray of shape (n_permutations,)
        T(1), ..., T(B).
    diagnostics_ : dict of str to float
        ``min_single_p`` (the smallest p_λ(0)), ``best_bandwidth`` (its λ), ``best_is_laplace`` (1.0 or 0.0),
        ``n_kernels``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X_a, X_b = rng.normal(0.5, 1.0, (100, 2)), rng.normal(0.0, 1.0, (80, 2))
    >>> bool(MMDAggTest(n_permutations=200, random_state=0).test(X_a, X_b).p_value < 0.01)
    True
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "kernel": [StrOptions(set(KERNEL_COLLECTIONS))],
        "number_bandwidths": [IntNotBool(2, None, closed="left")],
        "weights_type": [StrOptions({"uniform", "decreasing", "increasing", "centred"})],
        "n_permutations": [IntNotBool(1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        kernel: str = "laplace_gaussian",
        number_bandwidths: int = 10,
        weights_type: str = "uniform",
        n_permutations: int = 500,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.kernel = kernel
        self.number_bandwidths = number_bandwidths
        self.weights_type = weights_type
        self.n_permutations = n_permutations
        self.random_state = random_state

    def test(self, X_a: Any, X_b: Any) -> TestResult:
        """Aggregate the MMD tests of the kernel collection.

        Parameters
        ----------
        X_a : array-like of shape (m, n_features)
            Sample a.
        X_b : array-like of shape (n, n_features)
            Sample b.

        Returns
        -------
        TestResult
            ``statistic`` = T(0) = min_λ p_λ / w_λ (small rejects); ``p_value`` = its permutation p-value.

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
        families = KERNEL_COLLECTIONS[self.kernel]
        L = int(self.number_bandwidths)
        subset = (np.sort(rng.choice(N, BANDWIDTH_MAX_POINTS, replace=False)) if N > BANDWIDTH_MAX_POINTS
                  else np.arange(N))
        # the relabellings: column 0 the observed labelling, then B random ones (indicator of sample a)
        n_perm = int(self.n_permutations)
        labels = np.zeros((N, n_perm + 1))
        labels[:m, 0] = 1.0
        for start, chosen in _relabellings(rng, n_perm, N, m):
            rows = np.zeros((len(chosen), N))
            np.put_along_axis(rows, chosen, 1.0, axis=1)
            labels[:, 1 + start:1 + start + len(chosen)] = rows.T
        stats = np.empty((len(families) * L, n_perm + 1))
        self.bandwidths_ = {}
        for f, family in enumerate(families):
            metric = _KERNEL_NORMS[family]
            lams = mmdagg_bandwidths(pdist(Z[subset], metric), L)
            self.bandwidths_[family] = lams
            stats[f * L:(f + 1) * L] = _mmd2_u_kernels(Z, m, labels, metric, family == "gaussian", lams)
        weights = np.tile(mmdagg_weights(L, self.weights_type), len(families)) / len(families)
        # p_λ(c) = #{c' : stat(c') >= stat(c)} / (B + 1), for every column c at once
        ordered = np.sort(stats, axis=1)
        p = np.empty_like(stats)
        for k in range(len(stats)):
            p[k] = (n_perm + 1 - np.searchsorted(ordered[k], stats[k], side="left")) / (n_perm + 1.0)
        T = (p / weights[:, None]).min(axis=0)
        p_value = float(np.count_nonzero(T <= T[0]) / (n_perm + 1.0))
        best = int(np.argmin(p[:, 0] / weights))
        self.statistics_ = stats[:, 0].copy()
        self.single_p_values_ = p[:, 0].copy()
        self.weights_ = weights
        self.null_statistics_ = T[1:].copy()
        self.diagnostics_ = {"min_single_p": float(p[:, 0].min()),
                             "best_bandwidth": float(np.concatenate([self.bandwidths_[f] for f in families])[best]),
                             "best_is_laplace": float(families[best // L] == "laplace"),
                             "n_kernels": float(len(stats))}
        return TestResult(statistic=float(T[0]), p_value=p_value)
