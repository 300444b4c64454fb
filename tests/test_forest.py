"""BreimanForestClassifier: max_features rules, the hard vote and its ties, OOB bookkeeping, error curves,
determinism; the vote helpers; the learner registry."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from forestlab.errors import ConfigError
from forestlab.learners import (
    REGISTRY,
    BreimanForestClassifier,
    get_learner,
    resolve_max_features,
    tree_predictions,
    vote_scores,
    weighted_vote,
)


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=240, n_features=16, n_informative=5, flip_y=0.1, random_state=0)
    y = 2 * y - 1  # {-1, +1}
    return X[:160], y[:160], X[160:], y[160:]


@pytest.fixture(scope="module")
def rf_binary(binary_data):
    X, y, _, _ = binary_data
    return BreimanForestClassifier(n_estimators=40, random_state=0).fit(X, y)


def _brute_vote(preds: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Majority vote written out sample by sample, ties to the first class in ``classes``."""
    out = []
    for column in preds.T:
        counts = [int(np.sum(column == c)) for c in classes]
        out.append(classes[counts.index(max(counts))])
    return np.array(out)


# -------------------------------------------------------------------------------------------------- max_features
@pytest.mark.parametrize(
    ("rule", "table"),
    [
        ("breiman_log2",
         {1: 1, 2: 2, 3: 2, 6: 3, 9: 4, 10: 4, 13: 4, 14: 4, 16: 5, 22: 5, 30: 5, 34: 6, 60: 6, 784: 10}),
        ("round_sqrt", {22: 5, 8: 3, 57: 8, 16: 4, 36: 6, 1: 1, 2: 1, 3: 2}),
        ("sqrt", {1: 1, 3: 1, 16: 4, 57: 7, 784: 28}),
        ("log2", {1: 1, 2: 1, 3: 1, 16: 4, 57: 5, 784: 9}),
        (None, {1: 1, 57: 57}),
        ("all", {1: 1, 57: 57}),
        (3, {3: 3, 57: 3}),
        (np.int64(5), {5: 5, 57: 5}),
        (0.5, {1: 1, 3: 1, 10: 5, 57: 28}),
        (1.0, {7: 7}),
        (0.01, {10: 1}),
    ],
)
def test_resolve_max_features_table(rule, table):
    for d, expected in table.items():
        assert resolve_max_features(rule, d) == expected, (rule, d)


@pytest.mark.parametrize(("count", "d"), [(3, 1), (3, 2), (np.int64(5), 4), (1000, 60)])
def test_a_count_above_the_features_is_refused_not_clipped(count, d):
    """The issue's max_features=1000 on a 60-feature dataset ran as 60 without a word."""
    with pytest.raises(ValueError, match=f"max_features={int(count)} exceeds the {d} features of the data"):
        resolve_max_features(count, d)
    X, y = np.random.default_rng(0).normal(size=(40, d)), np.arange(40) % 2
    with pytest.raises(ValueError, match=f"max_features={int(count)} exceeds the {d} features of the data"):
        BreimanForestClassifier(n_estimators=2, max_features=count).fit(X, y)


@pytest.mark.parametrize("bad", [0, -2, 0.0, -0.5, 1.5, 2.0, "foo", "Sqrt", True, [3], {"a": 1}])
def test_resolve_max_features_rejects_invalid_values(bad):
    with pytest.raises(ValueError, match="max_features"):
        resolve_max_features(bad, 10)


def test_fit_rejects_invalid_max_features(binary_data):
    X, y, _, _ = binary_data
    with pytest.raises(ValueError, match="max_features"):
        BreimanForestClassifier(n_estimators=2, max_features="log3").fit(X, y)


def test_resolved_max_features_reaches_sklearn(rf_binary):
    assert rf_binary.max_features_ == 5  # 16 features: floor(log2 16 + 1)
    assert rf_binary.forest_.max_features == 5
    assert all(t.max_features_ == 5 for t in rf_binary.estimators_)


# ------------------------------------------------------------------------------------------------------ the vote
def test_tree_predictions_match_each_trees_predict(rf_binary, binary_data):
    _, _, X_test, _ = binary_data
    preds = rf_binary.tree_predictions(X_test)
    assert preds.shape == (40, len(X_test))
    for t, tree in enumerate(rf_binary.estimators_):
        # trees fitted inside a forest predict class indices (as floats) into the forest's classes_
        np.testing.assert_array_equal(preds[t], rf_binary.classes_[tree.predict(X_test).astype(int)])
    np.testing.assert_array_equal(tree_predictions(rf_binary, X_test), preds)


def test_predict_is_the_hard_majority_vote(rf_binary, binary_data):
    _, _, X_test, _ = binary_data
    preds = rf_binary.tree_predictions(X_test)
    np.testing.assert_array_equal(rf_binary.predict(X_test), _brute_vote(preds, rf_binary.classes_))
    proba = rf_binary.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], np.mean(preds == 1, axis=0))
    margin = rf_binary.decision_function(X_test)
    np.testing.assert_allclose(margin, preds.mean(axis=0))  # (1/T) sum_t h_t(x) with h_t in {-1, +1}
    assert np.all(np.abs(margin) <= 1)


def _tied_forest(y_labels):
    """A 2-tree stump forest with at least one test point where the two trees disagree (a 1-1 tie)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, y_labels[1], y_labels[0])
    grid = np.stack(np.meshgrid(np.linspace(-3, 3, 25), np.linspace(-3, 3, 25)), axis=-1).reshape(-1, 2)
    for seed in range(50):
        rf = BreimanForestClassifier(n_estimators=2, max_depth=1, max_features=1, random_state=seed).fit(X, y)
        preds = rf.tree_predictions(grid)
        tie = preds[0] != preds[1]
        if tie.any():
            return rf, grid, tie
    raise AssertionError("no seed gives two disagreeing stumps")


def test_binary_tie_gives_minus_one():
    """sgn(0) = -1: an even vote predicts -1 and has margin 0."""
    rf, grid, tie = _tied_forest(np.array([-1, 1]))
    np.testing.assert_array_equal(rf.predict(grid[tie]), -1)
    np.testing.assert_array_equal(rf.decision_function(grid[tie]), 0.0)
    np.testing.assert_array_equal(rf.predict_proba(grid[tie]), 0.5)
    agree = ~tie
    np.testing.assert_array_equal(rf.predict(grid[agree]), rf.tree_predictions(grid[agree])[0])


@pytest.mark.parametrize("labels", [np.array([3, 7]), np.array(["no", "yes"])])
def test_binary_tie_goes_to_the_first_class(labels):
    rf, grid, tie = _tied_forest(labels)
    np.testing.assert_array_equal(rf.classes_, labels)
    assert np.all(rf.predict(grid[tie]) == labels[0])


def test_multiclass_tie_goes_to_the_lowest_class(multi_data):
    X, y, X_test, _ = multi_data
    rf = BreimanForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    preds = rf.tree_predictions(np.vstack([X, X_test]))
    brute = _brute_vote(preds, rf.classes_)
    counts = np.stack([(preds == c).sum(axis=0) for c in rf.classes_], axis=1)
    ties = (counts == counts.max(axis=1, keepdims=True)).sum(axis=1) > 1
    assert ties.any(), "the fixture should produce multiclass ties"
    np.testing.assert_array_equal(rf.predict(np.vstack([X, X_test])), brute)
    # hand-made: votes 2, 1, 2, 1 -> classes 1 and 2 tie -> class 1
    assert weighted_vote(np.array([[2], [1], [2], [1]]), np.ones(4), np.arange(3))[0] == 1
    proba = rf.predict_proba(X_test)
    assert proba.shape == (len(X_test), 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(rf.decision_function(X_test), proba)


def test_weighted_vote_ties_and_weights():
    preds = np.array([[-1, 1, 1], [1, 1, -1]])
    np.testing.assert_array_equal(weighted_vote(preds, [0.5, 0.5], [-1, 1]), [-1, 1, -1])
    np.testing.assert_array_equal(weighted_vote(preds, [0.2, 0.8], [-1, 1]), [1, 1, -1])
    # uniform float weights that do not sum exactly: 5 votes of 0.1 against 5 of 0.1 is still a tie
    preds = np.array([[1], [1], [1], [1], [1], [-1], [-1], [-1], [-1], [-1]])
    weights = np.array([0.1, 0.2, 0.3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.3]) / 1.6
    assert weighted_vote(preds, weights, [-1, 1])[0] == -1
    # per-sample weights (T, n), e.g. an OOB mask
    preds = np.array([[1, 1], [-1, -1], [-1, 1]])
    w = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(vote_scores(preds, w, [-1, 1]), [[1, 1], [1, 0]])
    np.testing.assert_array_equal(weighted_vote(preds, w, [-1, 1]), [-1, -1])
    with pytest.raises(ValueError, match="outside classes"):
        weighted_vote(np.array([[0]]), [1.0], [-1, 1])


def test_uniform_weighted_vote_gives_back_predict(rf_binary, multi_data, binary_data):
    _, _, X_test, _ = binary_data
    preds = rf_binary.tree_predictions(X_test)
    np.testing.assert_array_equal(weighted_vote(preds, np.full(40, 1 / 40), rf_binary.classes_),
                                  rf_binary.predict(X_test))
    X, y, X_test, _ = multi_data
    rf = BreimanForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    preds = rf.tree_predictions(X_test)
    np.testing.assert_array_equal(weighted_vote(preds, np.full(10, 0.1), rf.classes_), rf.predict(X_test))


def test_tree_predictions_of_a_plain_sklearn_forest(binary_data):
    X, y, X_test, _ = binary_data
    sk = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    preds = tree_predictions(sk, X_test)
    assert preds.shape == (5, len(X_test))
    for t, tree in enumerate(sk.estimators_):
        np.testing.assert_array_equal(preds[t], sk.classes_[tree.predict(X_test).astype(int)])
    with pytest.raises(ValueError, match="features"):
        tree_predictions(sk, X_test[:, :3])


# -------------------------------------------------------------------------------------------------------- OOB
def test_oob_mask_is_the_complement_of_the_in_bag_samples(rf_binary, binary_data):
    X, _, _, _ = binary_data
    mask = rf_binary.oob_mask_
    assert mask.shape == (40, len(X)) and mask.dtype == bool
    for t, in_bag in enumerate(rf_binary.forest_.estimators_samples_):
        expected = np.ones(len(X), dtype=bool)
        expected[in_bag] = False
        np.testing.assert_array_equal(mask[t], expected)
    np.testing.assert_array_equal(rf_binary.oob_n_trees_, mask.sum(axis=0))


@pytest.mark.parametrize("n_estimators", [3, 40])
def test_oob_error_matches_a_brute_force_recomputation(binary_data, n_estimators):
    X, y, _, _ = binary_data
    rf = BreimanForestClassifier(n_estimators=n_estimators, random_state=3).fit(X, y)
    preds = rf.tree_predictions(X)
    np.testing.assert_array_equal(preds, rf.train_tree_predictions_)
    errors, margins = [], []
    for i in range(len(X)):
        oob_votes = [preds[t, i] for t in range(n_estimators) if rf.oob_mask_[t, i]]
        if not oob_votes:
            errors.append(True)  # no OOB tree: counted as an error
            margins.append(np.nan)
            continue
        total = sum(oob_votes)  # labels are -1/+1
        errors.append((1 if total > 0 else -1) != y[i])
        margins.append(total / len(oob_votes))
    if n_estimators == 3:
        assert np.isnan(margins).any(), "with 3 trees some points should have no OOB tree"
    assert rf.oob_error_ == pytest.approx(np.mean(errors))
    np.testing.assert_allclose(rf.oob_decision_, margins)
    covered = rf.oob_n_trees_ > 0
    np.testing.assert_array_equal(rf.oob_prediction_[covered], np.where(np.array(margins)[covered] > 0, 1, -1))
    # the OOB vote is a weighted vote with the OOB mask as weights
    np.testing.assert_array_equal(weighted_vote(preds, rf.oob_mask_.astype(float), rf.classes_)[covered],
                                  rf.oob_prediction_[covered])


def test_no_oob_attributes_without_bootstrap(binary_data):
    X, y, X_test, y_test = binary_data
    rf = BreimanForestClassifier(n_estimators=3, max_features=None, bootstrap=False, random_state=0).fit(X, y)
    assert not hasattr(rf, "oob_error_") and not hasattr(rf, "oob_mask_")
    curves = rf.error_curves(X_test, y_test)
    assert set(curves) == {"n_trees", "train_error", "test_error"}


# ----------------------------------------------------------------------------------------------- error curves
def test_error_curves_end_at_the_full_forest_errors(rf_binary, binary_data):
    X, y, X_test, y_test = binary_data
    curves = rf_binary.error_curves(X_test, y_test)
    np.testing.assert_array_equal(curves["n_trees"], np.arange(1, 41))
    for key in ("train_error", "test_error", "oob_error", "oob_coverage"):
        assert curves[key].shape == (40,)
    assert curves["train_error"][-1] == np.mean(rf_binary.predict(X) != y)
    assert curves["test_error"][-1] == np.mean(rf_binary.predict(X_test) != y_test)
    assert curves["oob_coverage"][-1] == 1.0
    assert curves["oob_error"][-1] == pytest.approx(rf_binary.oob_error_)


def test_error_curves_first_point_is_the_first_tree(rf_binary, binary_data):
    X, y, X_test, y_test = binary_data
    curves = rf_binary.error_curves(X_test, y_test)
    first = rf_binary.estimators_[0]
    train_pred = rf_binary.classes_[first.predict(X).astype(int)]
    assert curves["train_error"][0] == pytest.approx(np.mean(train_pred != y))
    assert curves["test_error"][0] == pytest.approx(
        np.mean(rf_binary.classes_[first.predict(X_test).astype(int)] != y_test))
    oob = rf_binary.oob_mask_[0]
    assert curves["oob_coverage"][0] == pytest.approx(oob.mean())
    assert curves["oob_error"][0] == pytest.approx(np.mean(train_pred[oob] != y[oob]))


def test_error_curves_every_point_multiclass(multi_data):
    """Every k against a brute-force vote of the first k trees; OOB excludes points with no OOB tree yet."""
    X, y, X_test, y_test = multi_data
    rf = BreimanForestClassifier(n_estimators=12, random_state=5).fit(X, y)
    curves = rf.error_curves(X_test, y_test)
    train_preds, test_preds = rf.train_tree_predictions_, rf.tree_predictions(X_test)
    for k in range(1, 13):
        assert curves["train_error"][k - 1] == pytest.approx(np.mean(_brute_vote(train_preds[:k], rf.classes_) != y))
        assert curves["test_error"][k - 1] == pytest.approx(
            np.mean(_brute_vote(test_preds[:k], rf.classes_) != y_test))
        mask = rf.oob_mask_[:k]
        covered = mask.any(axis=0)
        oob_vote = weighted_vote(train_preds[:k], mask.astype(float), rf.classes_)
        assert curves["oob_coverage"][k - 1] == pytest.approx(covered.mean())
        assert curves["oob_error"][k - 1] == pytest.approx(np.mean(oob_vote[covered] != y[covered]))
    cov, err = curves["oob_coverage"][-1], curves["oob_error"][-1]
    assert rf.oob_error_ == pytest.approx(cov * err + 1 - cov)


def test_error_curves_input_checks(rf_binary, binary_data):
    _, _, X_test, y_test = binary_data
    with pytest.raises(ValueError, match="both"):
        rf_binary.error_curves(X_test)
    with pytest.raises(ValueError, match="samples"):
        rf_binary.error_curves(X_test, y_test[:-1])
    # a test label the forest never saw is always an error
    assert rf_binary.error_curves(X_test[:5], np.full(5, 9))["test_error"][-1] == 1.0


# ------------------------------------------------------------------------------------------ depth diagnostics
def test_tree_depths(binary_data):
    X, y, _, _ = binary_data
    stumps = BreimanForestClassifier(n_estimators=5, max_depth=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(stumps.tree_depths_, 1)
    assert stumps.max_tree_depth_ == 1
    full = BreimanForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(full.tree_depths_, [t.tree_.max_depth for t in full.estimators_])
    assert full.max_tree_depth_ == max(t.get_depth() for t in full.estimators_) > 1
    assert not hasattr(BreimanForestClassifier(), "max_tree_depth_")


# ------------------------------------------------------------------------------------------------ determinism
def _outputs(rf, X_test, y_test):
    return {
        "predict": rf.predict(X_test), "proba": rf.predict_proba(X_test), "margin": rf.decision_function(X_test),
        "trees": rf.tree_predictions(X_test), "oob_mask": rf.oob_mask_, "oob_error": np.array(rf.oob_error_),
        **rf.error_curves(X_test, y_test),
    }


def test_n_jobs_does_not_change_results(binary_data):
    """sklearn's test_parallel_train idea: one seed per tree is drawn up front."""
    X, y, X_test, y_test = binary_data
    ref = _outputs(BreimanForestClassifier(n_estimators=20, random_state=7, n_jobs=1).fit(X, y), X_test, y_test)
    got = _outputs(BreimanForestClassifier(n_estimators=20, random_state=7, n_jobs=2).fit(X, y), X_test, y_test)
    assert ref.keys() == got.keys()
    for key in ref:
        np.testing.assert_array_equal(ref[key], got[key], err_msg=key)


def test_same_seed_same_forest_different_seed_different_forest(binary_data):
    X, y, X_test, y_test = binary_data
    a = _outputs(BreimanForestClassifier(n_estimators=10, random_state=1).fit(X, y), X_test, y_test)
    b = _outputs(BreimanForestClassifier(n_estimators=10, random_state=1).fit(X, y), X_test, y_test)
    c = _outputs(BreimanForestClassifier(n_estimators=10, random_state=2).fit(X, y), X_test, y_test)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    assert not np.array_equal(a["trees"], c["trees"])
    assert not np.array_equal(a["oob_mask"], c["oob_mask"])


def test_refit_without_bootstrap_drops_oob_attributes(binary_data):
    X, y, _, _ = binary_data
    rf = BreimanForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    assert hasattr(rf, "oob_error_")
    rf.set_params(bootstrap=False).fit(X, y)
    assert not hasattr(rf, "oob_error_")


# ---------------------------------------------------------------------------------------------------- registry
def test_registry_and_get_learner():
    assert REGISTRY["rf"].cls is BreimanForestClassifier and REGISTRY["rf"].task == "classifier"
    assert get_learner("rf") is BreimanForestClassifier
    assert isinstance(BreimanForestClassifier.version, int)
    with pytest.raises(ConfigError, match=r"unknown learner 'nope'.*valid learners:.*\brf\b"):
        get_learner("nope")


# -- grow_forest: the trees RandomForestClassifier.fit grows, without its per-tree overhead ----------------------------
def _fit_attributes(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("__")}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("settings", [
    {},  # binary, sqrt features, bootstrap
    {"max_features": 5, "min_samples_leaf": 3, "max_depth": 4},
    {"max_features": 20, "criterion": "entropy"},  # bagging: every feature
    {"bootstrap": False, "max_features": 2},
    {"min_samples_leaf": 0.05, "random_state": np.random.RandomState(3)},
    {"n_classes": 3, "labels": np.array(["a", "b", "c"])},
])
def test_grow_forest_grows_fits_trees_bit_for_bit(settings):
    from forestlab.learners._forest import grow_forest

    settings = dict(settings)
    n_classes = settings.pop("n_classes", 2)
    labels = settings.pop("labels", np.array([-1, 1]))
    X, y_idx = make_classification(n_samples=160, n_features=20, n_informative=6, n_classes=n_classes,
                                   random_state=7)
    X = X.astype(np.float32)
    X[::7, 3] = X[1, 3]  # ties in a feature
    y = labels[y_idx]
    kwargs = {"n_estimators": 12, "max_features": 4, "random_state": 11} | settings
    state = kwargs["random_state"]
    ref = RandomForestClassifier(**(kwargs | {"random_state": state if isinstance(state, int)
                                               else np.random.RandomState(3)})).fit(X, y)
    lean = RandomForestClassifier(**kwargs)
    classes, codes = np.unique(y, return_inverse=True)
    drawn = grow_forest(lean, X, classes, codes)
    assert _fit_attributes(lean).keys() == _fit_attributes(ref).keys()
    for key in ("n_features_in_", "n_outputs_", "classes_", "n_classes_"):
        assert _same(getattr(lean, key), getattr(ref, key)), key
    assert (lean._n_samples, lean._n_samples_bootstrap, lean._sample_weight) == \
           (ref._n_samples, ref._n_samples_bootstrap, ref._sample_weight)
    assert len(lean.estimators_) == len(ref.estimators_)
    for a, b in zip(lean.estimators_, ref.estimators_, strict=True):
        assert a.get_params() == b.get_params()
        assert vars(a).keys() == vars(b).keys()
        for key, value in _fit_attributes(b).items():
            if key != "tree_":
                assert _same(getattr(a, key), value), key
        sa, sb = a.tree_.__getstate__(), b.tree_.__getstate__()
        assert sa.keys() == sb.keys()
        for key in sb:
            assert np.array_equal(sa[key], sb[key]), key
    if lean.bootstrap:
        for a, b, c in zip(lean.estimators_samples_, ref.estimators_samples_, drawn, strict=True):
            assert np.array_equal(a, b) and np.array_equal(c, b)
    else:
        assert drawn is None
    assert np.array_equal(lean.predict(X), ref.predict(X))
    assert np.array_equal(lean.feature_importances_, ref.feature_importances_)


def test_grow_forest_leaves_other_settings_to_fit(binary_data):
    from forestlab.learners._forest import grow_forest

    X, y = binary_data[0].astype(np.float32), binary_data[1]
    classes, codes = np.unique(y, return_inverse=True)
    for settings in ({"max_samples": 0.5}, {"max_leaf_nodes": 6}, {"class_weight": "balanced"},
                     {"max_features": "sqrt"}, {"ccp_alpha": 0.01}):
        ref = RandomForestClassifier(n_estimators=5, random_state=0, **settings).fit(X, y)
        lean = RandomForestClassifier(n_estimators=5, random_state=0, **settings)
        assert grow_forest(lean, X, classes, codes) is None
        for a, b in zip(lean.estimators_, ref.estimators_, strict=True):
            assert np.array_equal(a.tree_.threshold, b.tree_.threshold), settings
