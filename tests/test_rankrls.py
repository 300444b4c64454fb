"""RankRLS (depecker2010 §2.14; Pahikkala et al. 2007): the closed form against a direct solve of the pairwise
objective built from every pair difference (both kernels, both readings of the pairs), the pair Laplacian's square
roots, the decomposition shared across λ through a FitCache, the shrinkage at large λ, the ranker contract and input
errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score

from forestlab.learners._cache import FitCache
from forestlab.learners._rankrls import RankRLS, laplacian_power, resolve_gamma
from tests.test_learners_common import check_ranker


def shifted_gaussians(n: int, q: int = 3, seed: int = 0, shift: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Labels ±1 (about 40% positive), positives shifted by ``shift`` on the first variable; variables of unequal
    scales and means (so that standardising matters)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1, -1)
    y[:2] = [1, -1]
    X = rng.normal(size=(n, q))
    X[:, 0] += shift * (y == 1)
    return X * np.arange(1, q + 1) + np.arange(q), y


def pair_matrix(y: np.ndarray, pairs: str) -> np.ndarray:
    """One row e_i − e_j per pair i < j (all pairs, or those of different labels)."""
    rows = [np.eye(len(y))[i] - np.eye(len(y))[j] for i, j in itertools.combinations(range(len(y)), 2)
            if pairs == "all" or y[i] != y[j]]
    return np.asarray(rows)


def direct_scores(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, lam: float, kernel: str, pairs: str,
                  gamma: float) -> np.ndarray:
    """Minimise Σ_pairs ((y_i − y_j) − (f_i − f_j))² + λ aᵀKa, f = K a, as one least-squares problem in a,
    ‖[P K; √λ K^{1/2}] a − [P y; 0]‖², with the explicit pair matrix P; return f on ``X_test``."""
    if kernel == "linear":
        K, K_test = X @ X.T, X_test @ X.T
    else:
        K = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
        K_test = np.exp(-gamma * ((X_test[:, None] - X[None]) ** 2).sum(-1))
    P = pair_matrix(y, pairs)
    evals, evecs = np.linalg.eigh(K)
    K_half = (evecs * np.sqrt(np.clip(evals, 0, None))) @ evecs.T
    A = np.vstack([P @ K, np.sqrt(lam) * K_half])
    b = np.concatenate([P @ y, np.zeros(len(y))])
    a = np.linalg.lstsq(A, b, rcond=None)[0]
    return K_test @ a


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("pairs", ["all", "bipartite"])
@pytest.mark.parametrize("lam", [0.05, 1.0, 30.0])
def test_closed_form_equals_a_direct_solve_over_every_pair(kernel, pairs, lam):
    X, y = shifted_gaussians(25, seed=1)
    X_test, _ = shifted_gaussians(12, seed=2)
    ranker = RankRLS(alpha=lam, kernel=kernel, pairs=pairs, gamma=0.3, scale=False).fit(X, y)
    want = direct_scores(X, y.astype(float), X_test, lam, kernel, pairs, gamma=0.3)
    got = ranker.decision_function(X_test)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-8 * np.abs(want).max())
    assert np.abs(want).max() > 0.05  # a real test, not two vectors of zeros


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_standardising_is_fitting_on_the_standardised_variables(kernel):
    X, y = shifted_gaussians(40, seed=3)
    X_test, _ = shifted_gaussians(15, seed=4)
    mean, std = X.mean(axis=0), X.std(axis=0)
    scaled = RankRLS(kernel=kernel).fit(X, y)
    raw = RankRLS(kernel=kernel, scale=False).fit((X - mean) / std, y)
    # the same scores up to a constant (the linear coef_ drops the standardisation's offset)
    got = scaled.decision_function(X_test) - scaled.decision_function(X[:1])
    want = raw.decision_function((X_test - mean) / std) - raw.decision_function((X[:1] - mean) / std)
    np.testing.assert_allclose(got, want, atol=1e-10)
    if kernel == "rbf":
        assert scaled.gamma_ == pytest.approx(1 / 3)  # "scale" on standardised variables: 1 / d


def explicit_laplacian(y: np.ndarray, pairs: str) -> np.ndarray:
    P = pair_matrix(y, pairs)
    return P.T @ P


@pytest.mark.parametrize("pairs", ["all", "bipartite"])
def test_laplacian_square_roots(pairs):
    y = np.array([1, -1, -1, 1, -1, -1, 1])
    pos = y == 1
    L = explicit_laplacian(y, pairs)
    eye = np.eye(len(y))
    half = laplacian_power(eye, pos, pairs, 0.5)
    inv_half = laplacian_power(eye, pos, pairs, -0.5)
    np.testing.assert_allclose(half, half.T, atol=1e-12)
    np.testing.assert_allclose(half @ half, L, atol=1e-12)
    np.testing.assert_allclose(inv_half @ half, eye - 1 / len(y), atol=1e-12)  # the projector on 1^⊥
    v = np.arange(7.0)
    np.testing.assert_allclose(laplacian_power(v, pos, pairs, 0.5), half @ v, atol=1e-12)


@pytest.mark.parametrize("kernel, pairs", [("rbf", "all"), ("rbf", "bipartite"), ("linear", "all")])
def test_train_auc_is_the_auc_of_the_training_scores(kernel, pairs):
    X, y = shifted_gaussians(60, seed=5, shift=0.7)
    ranker = RankRLS(alpha=0.5, kernel=kernel, pairs=pairs).fit(X, y)
    assert ranker.train_auc_ == pytest.approx(roc_auc_score(y, ranker.decision_function(X)), abs=1e-12)
    if kernel == "rbf":
        assert abs(ranker.dual_coef_.sum()) < 1e-10  # a lies in the range of L: orthogonal to 1


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_a_cached_decomposition_gives_the_same_scores_bit_for_bit(kernel):
    X, y = shifted_gaussians(80, seed=6)
    X_test, _ = shifted_gaussians(30, seed=7)
    cache = FitCache()
    grid = 2.0 ** np.arange(-10, 11, 5)
    cached = [RankRLS(alpha=lam, kernel=kernel).fit(X, y, fit_cache=cache).decision_function(X_test) for lam in grid]
    assert (cache.misses, cache.hits) == (1, len(grid) - 1)
    for lam, scores in zip(grid, cached, strict=True):
        assert np.array_equal(scores, RankRLS(alpha=lam, kernel=kernel).fit(X, y).decision_function(X_test))
    # another kernel, pairs reading, width or training set is another decomposition
    RankRLS(kernel=kernel, pairs="bipartite").fit(X, y, fit_cache=cache)
    RankRLS(kernel=kernel).fit(X[1:], y[1:], fit_cache=cache)
    assert cache.misses == 3


def test_large_lambda_shrinks_the_scores_but_keeps_a_sane_ranking():
    X, y = shifted_gaussians(120, seed=8, shift=2.0)
    X_test, y_test = shifted_gaussians(200, seed=9, shift=2.0)
    sizes, aucs = [], []
    for lam in 10.0 ** np.arange(0, 9, 2):
        scores = RankRLS(alpha=lam).fit(X, y).decision_function(X_test)
        sizes.append(np.ptp(scores))
        aucs.append(roc_auc_score(y_test, scores))
    assert np.all(np.diff(sizes) < 0) and sizes[-1] < 1e-4 * sizes[0]
    assert min(aucs) > 0.8  # λ → ∞: f ∝ K L y, a kernel mean-difference score


def test_resolve_gamma():
    X = np.array([[0.0, 2.0], [2.0, 0.0]])
    assert resolve_gamma("scale", X) == 0.5 and resolve_gamma(0.25, X) == 0.25
    assert resolve_gamma("scale", np.ones((3, 2))) == 1.0


def test_any_two_labels_the_greater_positive():
    X, y = shifted_gaussians(50, seed=10)
    base = RankRLS().fit(X, y).decision_function(X)
    other = RankRLS().fit(X, np.where(y == 1, "b", "a")).decision_function(X)
    np.testing.assert_array_equal(base, other)


@pytest.mark.parametrize("params", [{}, {"pairs": "bipartite"}, {"kernel": "linear"},
                                    {"kernel": "linear", "pairs": "bipartite", "scale": False}],
                         ids=lambda p: "-".join(map(str, p.values())) or "default")
def test_ranker_contract(params):
    check_ranker(RankRLS(**params, random_state=0))


def test_input_errors():
    X, y = shifted_gaussians(30, seed=11)
    with pytest.raises(NotFittedError):
        RankRLS().decision_function(X)
    with pytest.raises(ValueError, match="only one class"):
        RankRLS().fit(X, np.ones(30))
    with pytest.raises(ValueError, match="2 classes"):
        RankRLS().fit(X, np.arange(30) % 3)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RankRLS().fit(X_nan, y)
    ranker = RankRLS().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        ranker.decision_function(X[:, :2])
    for bad in ({"alpha": 0.0}, {"kernel": "poly"}, {"gamma": "auto"}, {"pairs": "within"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            RankRLS(**bad).fit(X, y)
