"""The fast AUC (forestlab.metrics.auc without roc_auc_score's validation) and RankRLS's kernel shared across λ give
the numbers main's code gave: roc_auc_score bit for bit, and inner-CV selections pinned before the change."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from forestlab.learners._cache import FitCache
from forestlab.learners._rankrls import RankRLS
from forestlab.learners._ranksvm import RankSVM
from forestlab.metrics import auc
from forestlab.selection import select_and_fit
from tests.conftest import pinned_blas


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


def _problem(seed: int, n: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, q))
    y = np.where(X[:, 0] + X[:, 1] ** 2 + rng.normal(size=n) > 1, 1, -1)
    return X, y


@pytest.mark.parametrize("seed", range(300))
def test_auc_is_roc_auc_score_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    kind = seed % 4
    if kind == 0:  # continuous scores
        scores = rng.normal(size=n)
    elif kind == 1:  # few levels: many ties
        scores = rng.integers(0, int(rng.integers(1, 8)), size=n).astype(float)
    elif kind == 2:  # signed zeros and tied extremes
        scores = rng.choice([-0.0, 0.0, 1e-300, -1.0, 1.0, 3.5], size=n)
    else:  # rounded scores near 1
        scores = np.round(1 - rng.exponential(1e-3, size=n), 4)
    y = np.where(rng.random(n) < rng.uniform(0.02, 0.98), 1, -1)
    y[:2] = [1, -1]
    rng.shuffle(y)
    assert auc(y, scores) == roc_auc_score(y, scores)


def test_auc_of_one_class_or_constant_scores():
    assert np.isnan(auc([1, 1, 1], [0.1, 0.2, 0.3]))
    assert auc([1, -1, 1, -1], [2.0, 2.0, 2.0, 2.0]) == roc_auc_score([1, -1, 1, -1], [2.0] * 4) == 0.5


# (learner, seed, n, q), chosen point, digest of selection_cv_score, digest of the test scores, test AUC and train
# AUC (float.hex): computed with main's code (f0c8f7a) before the change. The test scores' digests under OpenBLAS's
# Haswell kernels (tests/conftest.py REFERENCE_BLAS; the scores are a kernel matrix times the dual coefficients, whose
# last bits depend on the kernels): the digests pinned at f0c8f7a, on the machines of that day, were
# 3976417cb6561879, fe859c9bc5a9a8ca, 4b530917e88189ff, 33423c25d3df5b8e and 1cfaaadc24579e3b; every other value is
# the same under both
CV = [
    (("rankrls", 0, 150, 4), {"alpha": 256.0, "kernel": "rbf"}, "656c56b3c915f727", "be958acb4a1ae92b",
     "0x1.b5a96edd15668p-1", "0x1.d0f0acc5dbe14p-1"),
    (("rankrls", 1, 220, 8), {"alpha": 512.0, "kernel": "rbf"}, "c32a88151de8565b", "64e567b9fb4194b4",
     "0x1.a200000000000p-1", "0x1.e28c075cfe28bp-1"),
    (("rankrls", 2, 90, 3), {"alpha": 256.0, "kernel": "rbf"}, "df04d737f1588fab", "36e0bc6ab6982780",
     "0x1.ed55555555556p-1", "0x1.dcfdcfdcfdcfep-1"),
    (("ranksvm", 0, 150, 4), {"kernel": "rbf"}, "71634e0d92cef648", "dd050437f808e5f5", "0x1.875238f5dcec3p-1",
     "0x1.fa9fda46d3586p-1"),
    (("ranksvm", 1, 200, 6), {"kernel": "rbf"}, "185d0190c73da50a", "fca9e2c202b8bb08", "0x1.8d1f3202f8929p-1",
     "0x1.0000000000000p+0"),
]


@pinned_blas
@pytest.mark.parametrize(("problem", "chosen", "cv_scores", "test_scores", "test_auc", "train_auc"), CV)
def test_inner_cv_selection_numbers_are_unchanged(problem, chosen, cv_scores, test_scores, test_auc, train_auc):
    which, seed, n, q = problem
    X, y = _problem(seed, n, q)
    X_test, y_test = _problem(seed + 100, 80, q)
    if which == "rankrls":
        cls, params = RankRLS, {"gamma": "scale", "alpha": 1.0, "kernel": "rbf"}
        grid = {"kernel": ["rbf", "linear"], "alpha": [2.0 ** k for k in range(-10, 11)]}
    else:
        cls, params = RankSVM, {"C": 1.0, "gamma": "scale", "kernel": "rbf"}
        grid = {"kernel": ["rbf", "linear"]}
    est, selected, arrays = select_and_fit(cls, params, grid, {"kind": "cv", "metric": "auc", "folds": 5}, X, y,
                                           random_state=seed, cache=FitCache(), task="ranker")
    scores = est.decision_function(X_test)
    assert selected == chosen
    assert _digest(arrays["selection_cv_score"]) == cv_scores
    assert _digest(scores) == test_scores
    assert float(auc(y_test, scores)).hex() == test_auc
    assert float(est.diagnostics_["train_auc"]).hex() == train_auc


def test_rankrls_shared_kernel_gives_a_fresh_fits_scores():
    X, y = _problem(7, 160, 5)
    X_new, _ = _problem(8, 50, 5)
    cache = FitCache()
    shared = [RankRLS(alpha=lam).fit(X, y, fit_cache=cache) for lam in (0.01, 1.0, 100.0)]
    for model, lam in zip(shared, (0.01, 1.0, 100.0), strict=True):
        first = model.decision_function(X_new)  # the second and third models reuse the first's kernel
        assert np.array_equal(first, RankRLS(alpha=lam).fit(X, y).decision_function(X_new))
        assert np.array_equal(model.decision_function(X_new[:20]), first[:20])  # another X: its own kernel
    assert cache.misses == 1 and cache.hits == 2
