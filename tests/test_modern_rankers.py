"""Today's rankers (forestlab/learners/_modern_rankers.py: xgb_rank, lgbm_rank, hgb_rank, rf_rank; ours, not in
depecker2010): scores that beat chance, determinism, XGBoost's pairs over the whole training set, the scores each
library gives, early stopping, and tuning that sees the training part only. The ranker contract and scikit-learn's
common checks are in test_learners_common.py, with every other ranker's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score

from forestlab.config import compose, to_container
from forestlab.learners import (
    HistGradientBoostingRanker,
    LightGBMRanker,
    RandomForestRanker,
    XGBoostRanker,
    get_entry,
)
from forestlab.learners._modern_rankers import binary_auc, stratified_holdout
from forestlab.selection import select_and_fit

NAMES = {"xgb_rank": XGBoostRanker, "lgbm_rank": LightGBMRanker, "hgb_rank": HistGradientBoostingRanker,
         "rf_rank": RandomForestRanker}
#: Small and quick instances (fewer rounds and trees than the configs).
QUICK: dict[str, dict[str, Any]] = {
    "xgb_rank": {"max_iter": 60, "pairs_per_sample": 16},
    "lgbm_rank": {"max_iter": 60},
    "hgb_rank": {"max_iter": 60},
    "rf_rank": {"n_estimators": 50},
}


def _problem(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """An easy but noisy problem: 8 variables, 4 informative, 5% of labels flipped; labels in {-1, +1}."""
    X, y = make_classification(n_samples=n, n_features=8, n_informative=4, n_redundant=0, flip_y=0.05,
                               weights=[0.6], random_state=seed)
    return X, 2 * y - 1


@pytest.fixture(scope="module")
def split():
    X, y = _problem(700, 0)
    return X[:400], y[:400], X[400:], y[400:]


def _quick(name: str, **params: Any) -> Any:
    return NAMES[name](**{**QUICK[name], **params})


@pytest.mark.parametrize("name", sorted(NAMES))
def test_registered_as_rankers(name):
    entry = get_entry(name)
    assert entry.cls is NAMES[name] and entry.task == "ranker"


@pytest.mark.parametrize("name", sorted(NAMES))
def test_scores_beat_chance_clearly_and_the_same_seed_gives_the_same_scores(name, split):
    X, y, X_test, y_test = split
    ranker = _quick(name, random_state=0).fit(X, y)
    scores = ranker.decision_function(X_test)
    assert roc_auc_score(y_test, scores) > 0.85
    np.testing.assert_array_equal(_quick(name, random_state=0).fit(X, y).decision_function(X_test), scores)
    # the labels' order and values: {0, 1} and {-1, +1} codings rank alike (the greater label is positive)
    np.testing.assert_array_equal(_quick(name, random_state=0).fit(X, (y + 1) // 2).decision_function(X_test),
                                  scores)


@pytest.mark.parametrize("name", ["xgb_rank", "lgbm_rank", "hgb_rank", "rf_rank"])
def test_the_seed_is_honoured(name, split):
    X, y, X_test, _ = split
    a = _quick(name, random_state=0).fit(X, y).decision_function(X_test)
    b = _quick(name, random_state=1).fit(X, y).decision_function(X_test)
    assert not np.array_equal(a, b), "another random_state must change the held-out split or the randomisation"
    rs = np.random.RandomState(5)
    c = _quick(name, random_state=rs).fit(X, y).decision_function(X_test)
    d = _quick(name, random_state=np.random.RandomState(5)).fit(X, y).decision_function(X_test)
    np.testing.assert_array_equal(c, d)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_scores_do_not_depend_on_the_threads_allowed(name, split):
    """One library thread whatever the process allows: the runner's workers limit BLAS/OpenMP to one thread, a
    command-line session of one job does too, an interactive session does not."""
    from threadpoolctl import threadpool_limits

    X, y, X_test, _ = split
    free = _quick(name, random_state=0).fit(X, y).decision_function(X_test)
    with threadpool_limits(1):
        limited = _quick(name, random_state=0).fit(X, y).decision_function(X_test)
    np.testing.assert_array_equal(free, limited)


# ---------------------------------------------------------------------------------------------------------------
# XGBoost: the pairwise objective over the whole set
# ---------------------------------------------------------------------------------------------------------------
def _one_stump(**params: Any) -> XGBoostRanker:
    """One round of a depth-1 tree with a Newton step of 1 and no penalty: each leaf value is −G/H of its points."""
    return XGBoostRanker(max_depth=1, learning_rate=1.0, min_child_weight=0.0, reg_lambda=0.0, max_iter=1,
                         early_stopping=False, random_state=0, **params)


def test_xgboost_pairs_cover_the_whole_training_set():
    """200 points on a line, positives x >= 130 and x in {20, 50, 80, 110}: the first stump splits at 129.5. Under
    the RankNet loss on every (positive, negative) pair with equal weights, at the start (all scores equal, σ = 1/2)
    each pair adds gradient ∓1/2 and hessian 1/2 to both its points, so a leaf's value −G/H is
    (|L+| n− − |L−| n+) / (|L+| n− + |L−| n+): −70/78 on the left, 1 on the right. XGBoost's default pairs (those
    with one of the top 32 of the ranked list; the rows come positives first) give another left leaf."""
    x = np.arange(200, dtype=np.float64)
    y = np.where((x >= 130) | np.isin(x, [20, 50, 80, 110]), 1, -1)
    order = np.argsort(-y, kind="stable")
    x, y = x[order], y[order]
    n_pos, n_neg = int((y == 1).sum()), int((y == -1).sum())

    def leaf(p: int, q: int) -> float:
        return (p * n_neg - q * n_pos) / (p * n_neg + q * n_pos)

    want = leaf(70, 0) - leaf(4, n_neg)  # the score gap between the two leaves: 1 + 70/78
    probe = np.array([[10.0], [150.0]])
    ranker = _one_stump(pairs_per_sample=4000).fit(x[:, None], y)
    scores = ranker.decision_function(probe)
    assert scores[1] - scores[0] == pytest.approx(want, abs=0.01)
    config = ranker.xgb_params(0)
    assert config["objective"] == "rank:pairwise" and config["lambdarank_pair_method"] == "mean"

    # the same stump with XGBoost's default pair method misses the whole-set gradient (the check can fail)
    class TopK(XGBoostRanker):
        def xgb_params(self, seed):
            return {**super().xgb_params(seed), "lambdarank_pair_method": "topk",
                    "lambdarank_num_pair_per_sample": 32}

    top = TopK(**_one_stump().get_params()).fit(x[:, None], y).decision_function(probe)
    assert abs((top[1] - top[0]) - want) > 0.1


def test_xgboost_one_query_group_and_one_thread(split):
    X, y, _, _ = split
    ranker = _quick("xgb_rank", random_state=0).fit(X, y)
    import json

    config = json.loads(ranker.booster_.save_config())
    learner = config["learner"]
    assert learner["objective"]["name"] == "rank:pairwise"
    param = learner["objective"]["lambdarank_param"]
    assert param["lambdarank_pair_method"] == "mean" and int(param["lambdarank_num_pair_per_sample"]) == 16
    assert config["learner"]["generic_param"]["nthread"] == "1"


# ---------------------------------------------------------------------------------------------------------------
# The scores each library gives
# ---------------------------------------------------------------------------------------------------------------
def test_lightgbm_scores_by_its_raw_margin(split):
    X, y, X_test, _ = split
    ranker = _quick("lgbm_rank", random_state=0).fit(X, y)
    margin = ranker.decision_function(X_test)
    proba = ranker.booster_.predict(X_test, num_iteration=ranker.n_iter_)
    np.testing.assert_allclose(1.0 / (1.0 + np.exp(-margin)), proba, rtol=1e-10)
    assert ranker.lgb_params(0)["num_threads"] == 1 and ranker.lgb_params(0)["deterministic"]


def test_sklearn_rankers_score_as_their_classifiers(split):
    X, y, X_test, _ = split
    hgb = _quick("hgb_rank", random_state=0).fit(X, y)
    np.testing.assert_array_equal(hgb.decision_function(X_test), hgb.estimator_.decision_function(X_test))
    rf = _quick("rf_rank", random_state=0).fit(X, y)
    np.testing.assert_array_equal(rf.decision_function(X_test), rf.estimator_.predict_proba(X_test)[:, 1])
    assert rf.estimator_.n_jobs == 1 and 0.8 < rf.diagnostics_["oob_auc"] <= 1.0


# ---------------------------------------------------------------------------------------------------------------
# Early stopping
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["xgb_rank", "lgbm_rank", "hgb_rank"])
def test_early_stopping_keeps_fewer_rounds_and_can_be_switched_off(name, split):
    X, y, _, _ = split
    held_out = "validation_loss" if name == "hgb_rank" else "validation_auc"  # scikit-learn's: on the log-loss
    stopped = _quick(name, max_iter=400, learning_rate=0.5, n_iter_no_change=5, random_state=0).fit(X, y)
    assert stopped.n_iter_ < 400 and 0.0 < stopped.diagnostics_[held_out] < 1.0
    if held_out == "validation_auc":
        assert stopped.diagnostics_[held_out] > 0.8
    full = _quick(name, max_iter=25, early_stopping=False, random_state=0).fit(X, y)
    assert full.n_iter_ == 25 and np.isnan(full.diagnostics_[held_out])


@pytest.mark.parametrize("name", ["xgb_rank", "lgbm_rank", "hgb_rank"])
def test_early_stopping_needs_two_points_of_each_class(name, split):
    X, y, _, _ = split
    y = np.where(np.arange(len(y)) == 3, 1, -1)  # one positive
    with pytest.raises(ValueError, match=r"class \+1 has 1 point\(s\) \(at least 2 needed\); set early_stopping"):
        _quick(name, random_state=0).fit(X, y)
    _quick(name, early_stopping=False, max_iter=5, random_state=0).fit(X, y)  # fine without it


def test_stratified_holdout():
    codes = np.array([0] * 50 + [1] * 7)
    train, val = stratified_holdout(codes, 0.1, np.random.RandomState(0), "x")
    assert sorted(np.concatenate([train, val]).tolist()) == list(range(57))
    assert codes[val].sum() == 1 and (codes[val] == 0).sum() == 5
    again = stratified_holdout(codes, 0.1, np.random.RandomState(0), "x")
    assert all(np.array_equal(a, b) for a, b in zip((train, val), again, strict=True))
    with pytest.raises(ValueError, match="class -1 has 1 point"):
        stratified_holdout(np.array([0, 1, 1]), 0.1, np.random.RandomState(0), "x")


def test_binary_auc_is_roc_auc_with_ties():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 2, 200)
    scores = rng.integers(0, 5, 200).astype(float)  # many ties
    assert binary_auc(codes, scores) == pytest.approx(roc_auc_score(codes, scores), abs=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Tuning: the configs' grids by inner cross-validation on the training part only
# ---------------------------------------------------------------------------------------------------------------
def _config(name: str) -> dict[str, Any]:
    return to_container(compose(["experiment=single", f"algorithm={name}"]).algorithm)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_configs_tune_a_small_grid_honestly(name):
    """The boosters: rounds in the inner-CV grid, no early stopping; the forest: out-of-bag AUC."""
    alg = _config(name)
    assert alg["estimator"] == name and "ours: not in depecker2010" in alg["description"]
    if name == "rf_rank":
        assert alg["selection"] == "oob"
    else:
        assert alg["selection"] == {"kind": "cv", "metric": "auc", "folds": 5}
        assert alg["params"]["early_stopping"] is False and "max_iter" in alg["grid"]
    assert 2 <= len(alg["grid"]) <= 3 and all(len(v) == 2 for v in alg["grid"].values())
    NAMES[name](**alg["params"])._validate_params()


def test_forest_oob_error_is_one_minus_its_oob_auc(split):
    X, y, _, _ = split
    est = _quick("rf_rank", random_state=0).fit(X, y)
    oob = est.estimator_.oob_decision_function_[:, 1]
    assert est.oob_error_ == pytest.approx(1.0 - roc_auc_score(y, oob)) and 0.0 < est.oob_error_ < 0.3
    chosen, selected, arrays = select_and_fit(RandomForestRanker, QUICK["rf_rank"], _config("rf_rank")["grid"],
                                              "oob", X, y, random_state=0, cache=None, task="ranker")
    assert arrays["selection_oob_error"].min() == chosen.oob_error_ and set(selected) == {"max_features",
                                                                                         "min_samples_leaf"}


@pytest.mark.parametrize("name", ["xgb_rank", "lgbm_rank", "hgb_rank"])
def test_configured_boosters_are_stable_across_seeds_on_a_small_dataset(name):
    """A Hepatitis-sized problem (110 training points, 20 positive): with the config's fixed rounds the test AUC
    hardly moves with the seed (early stopping on a 10% hold-out, 2 positives, moved it by about 0.1)."""
    X, y = make_classification(n_samples=400, n_features=8, n_informative=4, n_redundant=0, flip_y=0.05,
                               weights=[0.82], random_state=5)
    y = 2 * y - 1
    X_train, y_train, X_test, y_test = X[:110], y[:110], X[110:], y[110:]
    params = {**_config(name)["params"], "max_iter": 100}
    aucs = [roc_auc_score(y_test, NAMES[name](**params, random_state=seed).fit(X_train, y_train)
                          .decision_function(X_test)) for seed in range(5)]
    assert np.std(aucs) < 0.01 and min(aucs) > 0.75, aucs


@pytest.mark.parametrize("name", sorted(NAMES))
def test_tuning_sees_the_training_part_only(name, split):
    """Every fit and every score of the search (inner folds, early-stopping hold-outs, the final refit) sees rows of
    the training part only; the test rows (marked by a huge first variable) never reach the learner."""
    X, y, X_test, y_test = split
    X, y = X[:200], y[:200]
    X_test = X_test.copy()
    X_test[:, 0] += 1e6
    seen: list[np.ndarray] = []
    base = NAMES[name]

    class Spy(base):  # type: ignore[misc, valid-type]
        def fit(self, X, y):
            seen.append(np.asarray(X))
            return super().fit(X, y)

        def decision_function(self, X):
            seen.append(np.asarray(X))
            return super().decision_function(X)

        def staged_scores(self, X, stages):
            seen.append(np.asarray(X))
            return super().staged_scores(X, stages)

    Spy.__name__ = base.__name__
    alg = _config(name)
    params = {**alg["params"], **QUICK[name], **({"n_estimators": 20} if name == "rf_rank" else {"max_iter": 20})}
    grid = {**alg["grid"], **({} if name == "rf_rank" else {"max_iter": [10, 20]})}
    est, chosen, arrays = select_and_fit(Spy, params, grid, alg["selection"], X, y, random_state=0,
                                         cache=None, X_test=X_test, y_test=y_test, task="ranker")
    n_points = int(np.prod([len(v) for v in alg["grid"].values()]))
    if name == "rf_rank":  # one forest per grid point on the training part, scored out of bag
        assert len(seen) == n_points and arrays["selection_oob_error"].shape == (n_points,)
    else:  # a fit and a score of its round counts per (other parameters, inner fold), then the refit
        assert len(seen) == n_points // 2 * 5 * 2 + 1 and arrays["selection_cv_score"].shape == (n_points,)
    assert all(np.abs(block[:, 0]).max() < 1e5 for block in seen), "a test row reached the search"
    assert set(chosen) == set(alg["grid"])
    assert all(getattr(est, k) == v for k, v in chosen.items())
    assert roc_auc_score(y_test, est.decision_function(X_test - np.r_[1e6, np.zeros(X.shape[1] - 1)])) > 0.8


def test_a_run_through_the_runner_stores_the_choice():
    """One fold of lgbm_rank on a small generated dataset, as `forestlab run` does it: the grid point chosen by
    inner cross-validation, its mean inner AUCs, the test scores and the rounds kept."""
    from forestlab.runner import execute_spec, plan

    specs = plan(compose(["dataset=ringnorm", "dataset.source.n_samples=300", "dataset.shape=[300,20]",
                          "algorithm=lgbm_rank", "algorithm.grid.max_iter=[20,40]", "protocol=kfold",
                          "protocol.n_folds=3", "seed=0"]))
    record = execute_spec(specs[0].payload)
    assert record["status"] == "done", record["error"]
    assert set(record["selected"]) == {"num_leaves", "learning_rate", "max_iter"}
    assert record["arrays"]["selection_cv_score"].shape == (8,)
    assert record["metrics"]["n_rounds"] == record["selected"]["max_iter"] and record["metrics"]["test_auc"] > 0.75


def test_clone_keeps_the_parameters():
    for name, cls in NAMES.items():
        est = _quick(name, random_state=3)
        assert clone(est).get_params() == est.get_params() and isinstance(clone(est), cls)
