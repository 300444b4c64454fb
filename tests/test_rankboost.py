"""RankBoost.B (depecker2010 §2.14; Freund et al. 2003): the factorised pair weights against a brute force over every
(positive, negative) pair, the threshold candidates, the training-loss bound, determinism, the ranker contract and
input errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score

from forestlab.learners._rankboost import TIE_TOL, RankBoost, stump_candidates
from forestlab.learners.checks import check_ranker


def shifted_gaussians(n: int, q: int = 4, seed: int = 0, shift: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Labels ±1 (about half positive); positives shifted by ``shift`` on the first two variables."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    y[:2] = [1, -1]
    X = rng.normal(size=(n, q))
    X[:, :2] += shift * (y[:, None] == 1)
    return X, y


def brute_force_rankboost(X: np.ndarray, y: np.ndarray, rounds: int, step: str) -> dict[str, np.ndarray]:
    """RankBoost on the materialised (positive, negative) pair matrix D: every stump 1[x_j > θ] at every midpoint θ
    between consecutive distinct values, the one of largest |r| (ties within TIE_TOL: lowest j, then lowest θ),
    oriented so that r >= 0; D <- D exp(−α (h(x+) − h(x−))) / Z."""
    Xp, Xn = X[y == 1], X[y == -1]
    D = np.full((len(Xp), len(Xn)), 1.0 / (len(Xp) * len(Xn)))
    eps = 1.0 / D.size
    out: dict[str, list[float]] = {"feature": [], "threshold": [], "sign": [], "alpha": [], "Z": []}
    for _ in range(rounds):
        best = None
        for j in range(X.shape[1]):
            values = np.unique(X[:, j])
            for theta in (values[:-1] + values[1:]) / 2:
                diff = (Xp[:, j] > theta)[:, None].astype(float) - (Xn[:, j] > theta)[None, :]
                r = float((D * diff).sum())
                if best is None or abs(r) > best[0] + TIE_TOL:
                    best = (abs(r), j, theta, 1 if r >= 0 else -1)
        _, j, theta, sign = best
        hp = (Xp[:, j] > theta) if sign > 0 else (Xp[:, j] <= theta)
        hn = (Xn[:, j] > theta) if sign > 0 else (Xn[:, j] <= theta)
        diff = hp[:, None].astype(float) - hn[None, :]
        w_plus, w_minus = D[diff > 0].sum(), D[diff < 0].sum()
        r = w_plus - w_minus
        if step == "exact":
            alpha = 0.5 * np.log((w_plus + eps) / (w_minus + eps))
        else:
            alpha = 0.5 * np.log((1 + r + eps) / (1 - r + eps))
        D = D * np.exp(-alpha * diff)
        Z = D.sum()
        D /= Z
        for key, value in zip(out, (j, theta, sign, alpha, Z), strict=True):
            out[key].append(value)
    return {key: np.asarray(value) for key, value in out.items()}


@pytest.mark.parametrize("step", ["exact", "approx"])
def test_factorised_pair_weights_equal_the_brute_force_over_all_pairs(step):
    X, y = shifted_gaussians(30, q=3, seed=4, shift=0.8)
    X = np.round(X, 1)  # repeated values: the candidates are between *distinct* values
    ranker = RankBoost(n_estimators=10, step=step).fit(X, y)
    want = brute_force_rankboost(X, y, 10, step)
    np.testing.assert_array_equal(ranker.feature_, want["feature"])
    np.testing.assert_array_equal(ranker.threshold_, want["threshold"])
    np.testing.assert_array_equal(ranker.sign_, want["sign"])
    np.testing.assert_allclose(ranker.alpha_, want["alpha"], rtol=1e-10)
    np.testing.assert_allclose(ranker.Z_, want["Z"], rtol=1e-10)
    assert len(set(ranker.feature_)) > 1 and (ranker.sign_ < 0).any()  # several variables, both orientations


def test_a_variable_that_ranks_negatives_higher_gets_a_reversed_stump():
    X, y = shifted_gaussians(200, q=2, seed=1, shift=-2.0)  # positives *lower* on both variables
    ranker = RankBoost(n_estimators=3).fit(X, y)
    assert ranker.sign_[0] == -1 and (ranker.alpha_ >= 0).all()
    assert roc_auc_score(y, ranker.decision_function(X)) > 0.85


def test_candidates_are_midpoints_of_distinct_values():
    X_sorted = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 1.0], [4.0, 1.0]])
    valid, thresholds = stump_candidates(X_sorted)
    np.testing.assert_array_equal(valid, [[False, False], [True, False], [True, False]])
    np.testing.assert_array_equal(thresholds[:, 0][valid[:, 0]], [0.5, 2.5])
    # adjacent floats: the midpoint rounds onto the upper value, so the lower one is the threshold
    a = 1.0
    b = np.nextafter(a, 2.0)
    valid, thresholds = stump_candidates(np.array([[a], [b]]))
    assert valid[0, 0] and thresholds[0, 0] == a and b > thresholds[0, 0]


def test_training_auc_grows_over_the_rounds_and_respects_the_bound():
    X, y = shifted_gaussians(300, q=5, seed=2)
    ranker = RankBoost(n_estimators=40).fit(X, y)
    aucs = np.array([roc_auc_score(y, s) for s in ranker.staged_decision_function(X)])
    assert len(aucs) == 40 and aucs[-1] == pytest.approx(ranker.train_auc_)
    assert aucs[-1] > aucs[0] + 0.05
    assert np.all(np.diff(aucs) > -0.01)  # essentially non-decreasing
    # the training ranking loss (ties counted as errors) is at most Π Z_t (Freund et al. Theorem 1)
    pos = y == 1
    for t, s in enumerate(ranker.staged_decision_function(X)):
        rloss = np.mean(s[pos][:, None] <= s[~pos][None, :])
        assert rloss <= np.prod(ranker.Z_[:t + 1]) + 1e-12
    assert ranker.diagnostics_["rloss_bound"] == pytest.approx(np.prod(ranker.Z_))


def test_exact_steps_are_never_weaker_than_the_approximate_ones():
    """Z_t with the exact step is the minimum of Z over α for the chosen stump: below the approximate step's Z."""
    X, y = shifted_gaussians(200, seed=3)
    exact = RankBoost(n_estimators=1, step="exact").fit(X, y)
    approx = RankBoost(n_estimators=1, step="approx").fit(X, y)
    assert exact.feature_[0] == approx.feature_[0] and exact.Z_[0] <= approx.Z_[0]
    assert exact.alpha_[0] > approx.alpha_[0] > 0


def test_a_separating_stump_gets_a_finite_step():
    X = np.arange(10.0)[:, None]
    y = np.where(X[:, 0] > 4, 1, -1)
    ranker = RankBoost(n_estimators=3).fit(X, y)
    eps = 1.0 / 25
    np.testing.assert_allclose(ranker.alpha_, 0.5 * np.log((1 + eps) / eps))
    np.testing.assert_array_equal(ranker.threshold_, [4.5, 4.5, 4.5])
    assert ranker.train_auc_ == 1.0


def test_constant_variables_give_no_stump_and_constant_scores():
    X = np.ones((20, 3))
    y = np.tile([1, -1], 10)
    ranker = RankBoost(n_estimators=5).fit(X, y)
    assert len(ranker.alpha_) == 0 and ranker.train_auc_ == 0.5
    np.testing.assert_array_equal(ranker.decision_function(X), np.zeros(20))


def test_deterministic_and_independent_of_random_state():
    X, y = shifted_gaussians(150, seed=5)
    X_test, _ = shifted_gaussians(50, seed=6)
    scores = [RankBoost(n_estimators=20, random_state=seed).fit(X, y).decision_function(X_test) for seed in (0, 0, 7)]
    assert np.array_equal(scores[0], scores[1]) and np.array_equal(scores[0], scores[2])


def test_any_two_labels_the_greater_positive():
    X, y = shifted_gaussians(100, seed=7)
    base = RankBoost(n_estimators=10).fit(X, y)
    other = RankBoost(n_estimators=10).fit(X, np.where(y == 1, 2, 1))
    np.testing.assert_array_equal(other.classes_, [1, 2])
    np.testing.assert_array_equal(base.decision_function(X), other.decision_function(X))


@pytest.mark.parametrize("step", ["exact", "approx"])
def test_ranker_contract(step):
    check_ranker(RankBoost(n_estimators=20, step=step, random_state=0))


def test_input_errors():
    X, y = shifted_gaussians(40, seed=8)
    with pytest.raises(NotFittedError):
        RankBoost().decision_function(X)
    with pytest.raises(ValueError, match="only one class"):
        RankBoost().fit(X, np.ones(40))
    with pytest.raises(ValueError, match="2 classes"):
        RankBoost().fit(X, np.arange(40) % 3)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RankBoost().fit(X_nan, y)
    ranker = RankBoost(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        ranker.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="n_estimators"):
        RankBoost(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="step"):
        RankBoost(step="line").fit(X, y)
