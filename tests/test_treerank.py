"""TreeRank (depecker2010 §2.2–2.7): the ranking tree, its LeafRanks and their criteria."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from forestlab.learners._treerank import LEAFRANKS, TreeRank


def gauss_easy(n: int, q: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """GaussEasy20d-like data: p = 1/2, positives N(mu+, I), negatives N(mu-, 10**0.1 I), |mu+ - mu-| = 1."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    shift = np.full(q, 0.5 / np.sqrt(q))
    X = np.where(y[:, None] == 1, rng.normal(size=(n, q)) + shift,
                 rng.normal(size=(n, q)) * np.sqrt(10 ** 0.1) - shift)
    return X, y


@pytest.mark.parametrize("leafrank", LEAFRANKS)
def test_train_auc_is_the_auc_of_the_training_scores(leafrank):
    X, y = gauss_easy(400, q=4)
    ranker = TreeRank(leafrank=leafrank, max_depth=4, random_state=0).fit(X, y)
    assert ranker.train_auc_ == pytest.approx(roc_auc_score(y, ranker.decision_function(X)), abs=1e-12)
    assert ranker.n_leaves_ == len(ranker.leaves_) == int(ranker.tree_.is_leaf.sum())
