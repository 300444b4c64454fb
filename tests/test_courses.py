"""Course learners (gradient boosting curves, error estimates, importances), the report helpers they feed (paired
t-test, figure kinds, stars) and the three course experiments end to end.

scikit-learn's common estimator checks for these learners run in tests/test_learners_common.py (every registered
learner)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier
from typer.testing import CliRunner

from forestlab.learners import (
    BreimanForestClassifier,
    ErrorEstimatesForest,
    GradientBoostingCurves,
    ImportanceForest,
    get_learner,
)
from forestlab.learners._courses import _row_noise, oob_permutation_importance
from forestlab.stats import one_sample_t_test, paired_t_test
from tests.conftest import run_cli

COURSE_EXPERIMENTS = ("courses_spambase", "courses_error_estimates", "courses_importance")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=240, n_features=6, n_informative=3, n_redundant=0, shuffle=False,
                               flip_y=0.05, random_state=0)
    return X, 2 * y - 1


# ---------------------------------------------------------------------------------------------------------------
def test_bagging_is_a_forest_trying_every_feature(data):
    X, y = data
    bag = BreimanForestClassifier(n_estimators=3, max_features="all", random_state=0).fit(X, y)
    assert bag.max_features_ == X.shape[1] and all(t.max_features_ == X.shape[1] for t in bag.estimators_)
    assert bag.forest_.bootstrap


def test_gradient_boosting_curves_match_staged_predict(data):
    X, y = data
    gb = GradientBoostingCurves(n_estimators=30, random_state=0).fit(X[:160], y[:160])
    ref = GradientBoostingClassifier(n_estimators=30, max_leaf_nodes=5, max_depth=None, random_state=0)
    ref.fit(X[:160], y[:160])
    curves = gb.error_curves(X[160:], y[160:])
    assert curves["n_trees"].tolist() == list(range(1, 31))
    expected = [np.mean(p != y[160:]) for p in ref.staged_predict(X[160:])]
    np.testing.assert_allclose(curves["test_error"], expected)
    assert curves["test_error"][-1] == pytest.approx(np.mean(gb.predict(X[160:]) != y[160:]))
    assert curves["train_error"][-1] == pytest.approx(np.mean(gb.predict(X[:160]) != y[:160]))


def test_error_estimates(data):
    X, y = data
    est = ErrorEstimatesForest(n_estimators=20, cv_folds=4, n_bootstrap=4, random_state=0).fit(X, y)
    d = est.diagnostics_
    assert set(d) == {"est_resub", "est_holdout", "est_cv", "est_oob", "est_loo_boot", "est_632", "est_632plus",
                      "no_info_error"}
    assert all(0.0 <= v <= 1.0 for v in d.values())
    assert d["est_oob"] == est.forest_.oob_error_ == est.oob_error_
    assert d["est_632"] == pytest.approx(0.368 * d["est_resub"] + 0.632 * d["est_loo_boot"])
    assert d["est_resub"] <= d["est_cv"]  # the apparent error is optimistic
    assert d["no_info_error"] == pytest.approx(0.5, abs=0.05)  # balanced classes, balanced predictions
    curves = est.error_curves(X[:50], y[:50])
    assert {"oob_error", "test_error", "train_error"} <= set(curves)


def test_632plus_reduces_to_632_without_overfitting():
    """Efron & Tibshirani (1997): with R* <= resubstitution error (no overfitting) r = 0, w = 0.632."""
    X, y = make_classification(n_samples=120, n_features=4, random_state=2)
    est = ErrorEstimatesForest(n_estimators=5, max_depth=1, cv_folds=3, n_bootstrap=3, random_state=0).fit(X, y)
    d = est.diagnostics_
    if d["est_loo_boot"] <= d["est_resub"]:
        assert d["est_632plus"] == pytest.approx(d["est_632"])
    else:
        assert d["est_632plus"] >= d["est_632"] - 1e-12


def test_error_estimates_use_the_shared_forest(data):
    from forestlab.learners._cache import FitCache

    X, y = data
    cache = FitCache()
    rf = cache.fit(BreimanForestClassifier(n_estimators=20, max_features="sqrt", random_state=4), X, y)
    est = ErrorEstimatesForest(n_estimators=20, cv_folds=3, n_bootstrap=2, random_state=4).fit(X, y, fit_cache=cache)
    assert est.forest_ is rf


def test_oob_permutation_importance_by_hand():
    """Breiman's per-tree OOB permutation importance against a direct implementation of the course's formula."""
    X, y = make_classification(n_samples=120, n_features=4, n_informative=2, n_redundant=0, random_state=5)
    rf = BreimanForestClassifier(n_estimators=6, max_features="all", random_state=0).fit(X, y)
    got = oob_permutation_importance(rf, X, y, random_state=9)
    # by hand, with the same permutation stream (trees in order, features the tree uses in increasing order)
    rng = np.random.default_rng(9)
    X32 = X.astype(np.float32)
    total = np.zeros(4)
    for t, tree in enumerate(rf.estimators_):
        oob = np.flatnonzero(rf.oob_mask_[t])
        base = np.mean(rf.classes_[tree.predict(X32[oob]).astype(int)] != y[oob])
        for j in np.unique(tree.tree_.feature[tree.tree_.feature >= 0]):
            Xp = X32[oob].copy()
            Xp[:, j] = Xp[rng.permutation(len(oob)), j]
            total[j] += np.mean(rf.classes_[tree.predict(Xp).astype(int)] != y[oob]) - base
    np.testing.assert_allclose(got, total / len(rf.estimators_))


def test_importance_ranks_informative_features_above_noise(data):
    X, y = data  # shuffle=False: features 0..2 informative, 3..5 noise
    est = ImportanceForest(n_estimators=60, n_noise_features=3, random_state=0).fit(X, y)
    curves = est.error_curves(X[:40], y[:40])
    for name in ("importance_mdi", "importance_oob_perm"):
        imp = curves[name]
        assert imp.shape == (9,)
        assert imp[:3].min() > imp[3:].max()
    assert curves["importance_mdi"].sum() == pytest.approx(1.0)
    assert est.diagnostics_["best_noise_rank_oob_perm"] > 3


def test_noise_probes_depend_on_the_row_only():
    X = np.arange(12.0).reshape(4, 3)
    a = _row_noise(X, 2, seed=1)
    np.testing.assert_array_equal(_row_noise(X[[2, 0]], 2, seed=1), a[[2, 0]])
    assert not np.array_equal(_row_noise(X, 2, seed=2), a)


def test_registry_names():
    assert get_learner("gboost") is GradientBoostingCurves
    assert get_learner("rf_estimates") is ErrorEstimatesForest
    assert get_learner("rf_importance") is ImportanceForest


# ---------------------------------------------------------------------------------------------------------------
# report helpers
# ---------------------------------------------------------------------------------------------------------------
def test_paired_t_test_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.9, 0.02, 20), rng.normal(0.89, 0.02, 20)
    ours, ref = paired_t_test(a, b), stats.ttest_rel(a, b)
    assert ours.t == pytest.approx(ref.statistic) and ours.p == pytest.approx(ref.pvalue) and ours.n == 20
    one, ref1 = one_sample_t_test(a, 0.95), stats.ttest_1samp(a, 0.95)
    assert one.p == pytest.approx(ref1.pvalue) and one.significant()
    assert paired_t_test(a, a).p == 1.0 and not paired_t_test(a, a).significant()
    assert paired_t_test(a + 0.01, a).p == 0.0
    assert np.isnan(paired_t_test(a[:1], b[:1]).p)


@pytest.mark.parametrize("experiment", COURSE_EXPERIMENTS)
def test_course_configs_compose_and_plan(experiment):
    from forestlab.config import compose
    from forestlab.runner import plan

    cfg = compose([f"experiment={experiment}"])
    specs = plan(cfg)
    assert specs and all(s.study == "courses" for s in specs)
    assert {f["kind"] for f in cfg.experiment.figures} <= {"curves_by_algorithm", "importance", "metric_boxes",
                                                            "error_curves"}


@pytest.mark.slow
@pytest.mark.parametrize("experiment", COURSE_EXPERIMENTS)
def test_course_experiment_smoke_end_to_end(experiment, workdir, mirror):
    """``forestlab run`` through the CLI (a subprocess), then tables, figures and compare in-process."""
    from forestlab.cli import app

    proc = run_cli("run", f"experiment={experiment}", "debug=smoke", "seeds=2", "--quiet")
    assert proc.returncode == 0, proc.stderr
    for cmd in ("tables", "figures", "compare"):
        res = CliRunner().invoke(app, [cmd, experiment, "debug=smoke", "seeds=2"])
        assert res.exit_code == 0, res.output
    assert "-- claims" in res.output and "test:" in res.output  # verdicts printed
    # smoke runs never write over the experiment's own tables and figures
    assert list((workdir / "results" / "figures" / f"{experiment}-smoke").glob("*.png"))
    assert list((workdir / "results" / "tables" / f"{experiment}-smoke").glob("*.md"))
    assert not (workdir / "results" / "tables" / experiment).exists()
