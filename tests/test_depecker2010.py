"""depecker2010's claims on hand-built results: each can hold, fail and be untestable."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from forestlab.results import ExperimentResults
from forestlab.studies import judge
from forestlab.studies.depecker2010 import HEURISTICS

DATASETS = ("gauss_easy20d", "gauss_med20d")


def _results(auc: dict[str, float], spread: dict[str, float], noise: dict[str, float], n_runs: int = 6,
             seed: int = 0) -> ExperimentResults:
    """Runs of the 8 heuristics: test AUCs around ``auc`` with std ``spread``; test scores whose rankings differ
    between runs by ``noise`` (so the instability grows with it)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=200)
    y = np.where(base + rng.normal(size=200) > 0, 1, -1)
    rows, arrays = [], {}
    for d in DATASETS:
        for a in HEURISTICS:
            for r in range(n_runs):
                key = f"{d}-{a}-{r}"
                rows.append({"dataset": d, "algorithm": a, "repetition": r, "key": key,
                             "test_auc": auc[a] + spread[a] * rng.normal()})
                arrays[key] = {"y_test": y, "test_scores": base + noise[a] * rng.normal(size=200)}
    return ExperimentResults.from_frame(pd.DataFrame(rows), arrays=arrays, study="depecker2010")


def _published_like() -> ExperimentResults:
    auc = {"trk_cart": 0.60, "bagg_cart": 0.69, "rf1_cart": 0.72, "rf2_cart": 0.69, "rf3_cart": 0.70,
           "rf4_cart": 0.66, "rf5_cart": 0.65, "rf6_cart": 0.61}
    spread = {a: 0.005 for a in HEURISTICS} | {"rf4_cart": 0.02, "rf6_cart": 0.02}
    noise = {a: 0.05 for a in HEURISTICS} | {"trk_cart": 2.0}
    return _results(auc, spread, noise)


def test_table4_2_claims_hold_on_published_like_results():
    res = _published_like()
    for name in ("table4_2_bagging_stabilises", "table4_2_forests_raise_auc", "table4_2_rf1_best",
                 "table4_2_one_variable_varies"):
        assert judge(name, res, n_resamples=20).verdict == "HOLDS", name


def test_table4_2_claims_fail_when_forests_do_not_help():
    flat = {a: 0.60 for a in HEURISTICS} | {"bagg_cart": 0.62}
    res = _results(flat, {a: 0.01 for a in HEURISTICS}, {a: 1.0 for a in HEURISTICS})
    for name in ("table4_2_bagging_stabilises", "table4_2_forests_raise_auc", "table4_2_rf1_best"):
        assert judge(name, res, n_resamples=20).verdict == "DOES NOT HOLD", name


def test_table4_2_claims_untested_without_runs():
    res = ExperimentResults.from_frame(pd.DataFrame(columns=["dataset", "algorithm", "repetition"]))
    for name in ("table4_2_bagging_stabilises", "table4_2_forests_raise_auc", "table4_2_rf1_best",
                 "table4_2_one_variable_varies"):
        assert judge(name, res).verdict == "NOT TESTED", name


def test_treerank_grows_master_trees_of_hundreds_of_nodes():
    """Regression: a master tree of more than ~129 nodes wrote past the end of an array in the compiled grower."""
    from forestlab.datasets._ranking_toys import unif2d
    from forestlab.learners import TreeRank

    X, y = unif2d(2000, random_state=11)
    tree = TreeRank(leafrank="axis", min_samples_split=2, random_state=0).fit(X, y)
    assert tree.n_leaves_ > 300
    assert len(tree.tree_.children_left) == 2 * tree.n_leaves_ - 1


def _toy_results(axis_croix: float, svm_croix: float, pruned_gap: float) -> ExperimentResults:
    """trk_axis / trk_cart / trk_svm AUC-by-depth curves and pruned trees on unif2d and gauss_croix2d."""
    rows, arrays = [], {}
    plateau = {"unif2d": {"trk_axis": 0.735, "trk_cart": 0.73, "trk_svm": 0.73},
               "gauss_croix2d": {"trk_axis": axis_croix, "trk_cart": (axis_croix + svm_croix) / 2,
                                 "trk_svm": svm_croix}}
    for d, algs in plateau.items():
        for r in range(4):
            for a, top in algs.items():
                key = f"{d}-{a}-{r}"
                rows.append({"dataset": d, "algorithm": a, "repetition": r, "key": key, "test_auc": top})
                arrays[key] = {"test_auc": np.array([0.5, top - 0.05] + [top] * 9)}
            for a in ("trk_cart_pruned", "trk_svm_pruned"):
                best = algs[a.removesuffix("_pruned")]
                rows.append({"dataset": d, "algorithm": a, "repetition": r, "key": f"{d}-{a}-{r}",
                             "test_auc": best - pruned_gap, "n_leaves": 12.0, "full_n_leaves": 40.0})
    info = {"unif2d": {"auc_star": 0.735}, "gauss_croix2d": {"auc_star": 0.993}}
    return ExperimentResults.from_frame(pd.DataFrame(rows), arrays=arrays, study="depecker2010", datasets_info=info)


def test_toys_claims():
    names = ("toys_axis_tree_near_optimal_on_unif2d", "toys_svm_reaches_optimum_where_axis_saturates",
             "toys_pruning_near_best")
    good = _toy_results(axis_croix=0.91, svm_croix=0.986, pruned_gap=0.002)
    assert [judge(n, good, n_resamples=10).verdict for n in names] == ["HOLDS"] * 3
    bad = _toy_results(axis_croix=0.98, svm_croix=0.95, pruned_gap=0.05)
    assert [judge(n, bad, n_resamples=10).verdict for n in names][1:] == ["DOES NOT HOLD"] * 2
    empty = ExperimentResults.from_frame(pd.DataFrame(columns=["dataset", "algorithm", "repetition"]))
    assert {judge(n, empty).verdict for n in names + ("fig4_3_bagging_narrows_envelopes",)} == {"NOT TESTED"}


def test_verdicts_are_kept_beside_the_store_and_judged_again_when_anything_changes(tmp_path, monkeypatch):
    import forestlab.studies as studies
    from forestlab.store import Store

    with Store(tmp_path):  # an empty store: runs.sqlite
        pass
    calls = []
    real = studies.judge_all
    monkeypatch.setattr(studies, "judge_all", lambda *a, **k: calls.append(1) or real(*a, **k))
    names = ["table4_2_forests_raise_auc", "table4_2_rf1_best"]
    res = dataclasses.replace(_published_like(), results_dir=tmp_path)
    first = studies.judge_all_cached(names, res, n_resamples=10)
    again = studies.judge_all_cached(names, res, n_resamples=10)
    assert len(calls) == 1 and again == first and len(list((tmp_path / "cache" / "verdicts").glob("*.json"))) == 1
    import sqlite3

    with sqlite3.connect(tmp_path / "runs.sqlite") as con:  # the store changes, not what these claims read
        con.execute("INSERT INTO meta (name, value) VALUES ('other experiment', 'ran')")
    assert studies.judge_all_cached(names, res, n_resamples=10) == first and len(calls) == 1
    changed = dataclasses.replace(res, runs=res.runs.assign(test_auc=res.runs["test_auc"] - 0.2))
    assert studies.judge_all_cached(names, changed, n_resamples=10) != first and len(calls) == 2


# -- Tables A.3, A.4 and 6.1: the competitors and the two-sample tests ------------------------------------------------
def _published(name: str) -> pd.DataFrame:
    from forestlab.studies import get_study

    return get_study("depecker2010").read_published(name)


_AS = {"rf1_svm": "rf1_svm_opt", "ranksvm": "ranksvm_opt", "rankrls": "rankrls_opt"}


def _from_published(tables: tuple[str, ...], shift: dict[str, float] | None = None, n_runs: int = 10,
                    metric_suffix: str = "_fractional") -> ExperimentResults:
    """Runs spread around the published means (per dataset and column), ``shift`` added to some columns."""
    rng = np.random.default_rng(0)
    rows = []
    for table in tables:
        for rec in _published(table).itertuples():
            if not np.isfinite(rec.value):
                continue
            algorithm = _AS.get(rec.algorithm, rec.algorithm)
            metric = rec.metric + (metric_suffix if rec.metric.startswith("test_truncated") else "")
            for r in range(n_runs):
                rows.append({"dataset": rec.dataset, "algorithm": algorithm, "repetition": 0, "fold": r,
                             "key": f"{rec.dataset}-{algorithm}-{r}", "metric": metric,
                             "value": rec.value + (shift or {}).get(algorithm, 0.0) + 0.002 * rng.normal()})
    frame = pd.DataFrame(rows).pivot_table(index=["dataset", "algorithm", "repetition", "fold", "key"],
                                           columns="metric", values="value").reset_index()
    return ExperimentResults.from_frame(frame, study="depecker2010")


def test_table_a3_a4_claims_hold_on_the_published_tables_and_fail_on_worse_treerank():
    names = ("table_a3_global_auc_comparable", "table_a3_best_competitor", "table_a4_treerank_better_at_the_top")
    res = _from_published(("table_a3.csv", "table_a4.csv"))
    assert [judge(n, res, n_resamples=10).verdict for n in names] == ["HOLDS"] * 3
    worse = _from_published(("table_a3.csv", "table_a4.csv"), shift={"rf3_cart": -0.08, "rf1_svm_opt": -0.08})
    assert judge(names[0], worse, n_resamples=10).verdict == "DOES NOT HOLD"
    assert judge(names[2], worse, n_resamples=10).verdict == "DOES NOT HOLD"
    boost_weak = _from_published(("table_a3.csv",), shift={"rankboost": -0.05})
    assert judge(names[1], boost_weak, n_resamples=10).verdict == "DOES NOT HOLD"
    empty = ExperimentResults.from_frame(pd.DataFrame(columns=["dataset", "algorithm", "repetition"]))
    assert {judge(n, empty).verdict for n in names} == {"NOT TESTED"}


def _test_runs(power: dict[str, dict[str, float]], n: int = 100) -> ExperimentResults:
    """Rejections (0/1) of each test on each dataset at the given rates, exactly round(rate n) of n."""
    rows = []
    for algorithm, rates in power.items():
        for dataset, rate in rates.items():
            k = int(round(rate * n))
            for r in range(n):
                rows.append({"dataset": dataset, "algorithm": algorithm, "repetition": r,
                             "key": f"{dataset}-{algorithm}-{r}", "reject": float(r < k)})
    return ExperimentResults.from_frame(pd.DataFrame(rows), study="depecker2010")


def test_table6_1_claims():
    from forestlab.studies.depecker2010 import NULLS, SETTINGS

    published = _published("table6_1.csv")
    power = {a: {} for a in ("mmd_boot", "mmd_mom", "treerank_wilcoxon")}
    for rec in published.itertuples():  # the OCR gaps read as the MMD_boot value of the row
        value = rec.value if np.isfinite(rec.value) else float(
            published[(published.dataset == rec.dataset) & (published.algorithm == "mmd_boot")].value.fillna(0.83)
            .iloc[0])
        power[rec.algorithm][rec.dataset] = value
    assert set(power["treerank_wilcoxon"]) == set(SETTINGS.values())
    assert judge("table6_1_wilcoxon_more_powerful", _test_runs(power), n_resamples=10).verdict == "HOLDS"
    weak = {a: dict(v) for a, v in power.items()} | {"treerank_wilcoxon": {d: 0.1 for d in SETTINGS.values()}}
    assert judge("table6_1_wilcoxon_more_powerful", _test_runs(weak), n_resamples=10).verdict == "DOES NOT HOLD"
    level = {a: {d: 0.05 for d in NULLS} for a in power}
    assert judge("table6_1_tests_hold_their_level", _test_runs(level, 200), n_resamples=10).verdict == "HOLDS"
    liberal = {a: dict(v) for a, v in level.items()} | {"mmd_mom": {d: 0.12 for d in NULLS}}
    assert judge("table6_1_tests_hold_their_level", _test_runs(liberal, 200), n_resamples=10).verdict \
        == "DOES NOT HOLD"
    assert judge("table6_1_tests_hold_their_level", _test_runs(power)).verdict == "NOT TESTED"


def test_power_curves_figure_and_a_table_of_some_datasets():
    import matplotlib

    matplotlib.use("Agg")
    from forestlab.studies.depecker2010_figures import metric_by_x

    rates = {"gauss_shift_q10_d000": 0.05, "gauss_shift_q10_d010": 0.3, "gauss_shift_q10_d020": 0.9}
    res = _test_runs({"mmd_boot": rates, "treerank_wilcoxon": {d: r / 2 for d, r in rates.items()}})
    from forestlab.spec import Context, make_figure

    spec = {"name": "power_curves", "kind": "metric_by_x", "metric": "reject", "rate": True, "hline": 0.05,
            "x_label": "delta",
            "panels": [{"title": "q = 10", "x": {"gauss_shift_q10_d000": 0.0, "gauss_shift_q10_d010": 0.1,
                                                  "gauss_shift_q10_d020": 0.2}}]}
    fig = metric_by_x(res, make_figure(spec, "power_curves", Context()))
    (ax,) = fig.axes
    curves = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_allclose(curves["mmd_boot"].get_ydata(), [0.05, 0.3, 0.9])
    np.testing.assert_allclose(curves["treerank_wilcoxon"].get_xdata(), [0.0, 0.1, 0.2])
    assert len(ax.collections) == 2  # one Wilson band per test
    some = res.restricted_to({"datasets": ["gauss_shift_q10_d000"]})
    assert some.datasets == ["gauss_shift_q10_d000"] and res.restricted_to({}) is res
