"""The fast cross-validation of PrunedTreeRank (held-out AUCs read from the fold tree's leaf counts) gives the numbers
main's code gave when it scored every pruning level with roc_auc_score: pinned outputs, computed before the change."""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from forestlab.learners._pruning import PrunedTreeRank, _held_out_auc
from forestlab.learners._two_sample import TreeRankWilcoxonTest


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


def _problem(seed: int, n: int, q: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, q))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X[y == 1, 0] += shift
    return X, y


# (seed, n, q, shift, leafrank, cv_folds), best_index_, cv_folds_, digest of cv_fold_scores_, digest of the scores:
# computed with main's code (f0c8f7a) before the change
PRUNED = [
    ((0, 300, 3, 0.8, "cart", 10), 6, 10, "d6912e8f0fed6ed1", "571ee55c96a0179d"),
    ((1, 400, 5, 0.3, "cart", 5), 6, 5, "891bade0b43a3a22", "e7721fb87a3c10a7"),
    ((2, 250, 2, 1.0, "axis", 10), 6, 10, "a405d35130bde440", "5157c1d891c6c234"),
    ((3, 120, 4, 0.0, "cart", 10), 2, 10, "e192d9754fdbb6f4", "ec38ca809caaf4ff"),
    ((4, 60, 2, 0.5, "axis", 10), 4, 10, "5bfd5915aa57c31f", "3913dc326e0ebcf4"),
]
# (seed, n per sample, q, shift), W and p-value (float.hex) of the pruned S-WMW_TR test, with main's code
WILCOXON = [
    ((0, 400, 3, 0.3), "0x1.481e000000000p+15", "0x1.95425094d4adbp-5"),
    ((1, 600, 10, 0.2), "0x1.5b27000000000p+16", "0x1.747a6991da364p-1"),
    ((2, 300, 5, 0.0), "0x1.5d84000000000p+14", "0x1.3868859496949p-1"),
    ((3, 500, 2, 0.5), "0x1.06ae800000000p+16", "0x1.ca97d9d68ce1ap-10"),
]


@pytest.mark.parametrize(("problem", "best", "folds", "fold_scores", "scores"), PRUNED)
def test_pruned_treerank_numbers_are_unchanged(problem, best, folds, fold_scores, scores):
    seed, n, q, shift, leafrank, cv_folds = problem
    X, y = _problem(seed, n, q, shift)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = PrunedTreeRank(leafrank=leafrank, max_depth=6, min_samples_split=20, cv_folds=cv_folds,
                               random_state=seed).fit(X, y)
    assert (model.best_index_, model.cv_folds_) == (best, folds)
    assert _digest(model.cv_fold_scores_) == fold_scores  # every held-out AUC, bit for bit
    assert _digest(model.decision_function(X)) == scores


@pytest.mark.parametrize(("problem", "statistic", "p_value"), WILCOXON)
def test_pruned_wilcoxon_test_numbers_are_unchanged(problem, statistic, p_value):
    seed, n, q, shift = problem
    rng = np.random.default_rng(seed)
    X_a = rng.normal(size=(n, q)) + np.r_[shift, np.zeros(q - 1)]
    X_b = rng.normal(size=(n, q))
    result = TreeRankWilcoxonTest(scorer="pruned_treerank", random_state=seed).test(X_a, X_b)
    assert float(result.statistic).hex() == statistic and float(result.p_value).hex() == p_value


@pytest.mark.parametrize("seed", range(200))
def test_held_out_auc_is_roc_auc_score_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n_cells = int(rng.integers(1, 40))
    n = int(rng.integers(2, 300))
    cell = rng.integers(0, n_cells, size=n)  # some cells empty, many ties
    y = np.where(rng.random(n) < rng.uniform(0.05, 0.95), 1, -1)
    y[:2] = [1, -1]  # both classes
    n_pos = np.bincount(cell[y == 1], minlength=n_cells)
    n_neg = np.bincount(cell[y == -1], minlength=n_cells)
    scores = (n_cells - cell) / n_cells  # cell 0 best
    assert _held_out_auc(n_pos, n_neg) == roc_auc_score(y, scores)
