"""A claim is only judged when it could have failed: for every registered claim, results built to make it fail give
DOES NOT HOLD, results built to make it hold give HOLDS, and results with too little data give NOT TESTED with the
reason; smoke runs are never judged.

Each case is a triple of result builders (holding, failing, too little) and a phrase the NOT TESTED reason must
contain. A new claim without a case here fails :func:`test_every_claim_has_a_case`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from forestlab.results import ExperimentResults
from forestlab.studies import (
    DOES_NOT_HOLD,
    HOLDS,
    NOT_TESTED,
    STUDIES,
    judge,
    too_little,
    verdict,
)
from forestlab.studies.depecker2010 import COMPETITORS, HEURISTICS, NULLS, SETTINGS, SIMULATED, TREERANKS
from tests.test_depecker2010 import _published_like, _results, _test_runs, _toy_results
from tests.test_modern_experiments import MODERN_CASES
from tests.test_studies import (
    CLEAR_REGIMES,
    MKL,
    accuracies,
    curve_results,
    estimates,
    metric_rows,
    plateau,
    published,  # noqa: F401  (a fixture: the pisetta2010 published table with the MKL column)
    regimes,
    results,
    shifted,
    three,
)
from tests.test_wu2021 import WU_CASES

Builder = Callable[[], ExperimentResults]
# the claims' own answers: the bootstrap over seeds that judge() adds is tested in tests/test_studies.py (a claim
# of "no significant difference" is, by design, INCONCLUSIVE on resamples of data right at its threshold)
N_RESAMPLES = 0


# -- builders -----------------------------------------------------------------------------------------------------
def oob(gaps: dict[str, float]) -> ExperimentResults:
    """RF runs whose mean OOB risk minus mean test risk is ``gaps[dataset]``."""
    return results(metric_rows({d: {"rf": {"test_risk": 0.1, "oob_risk": 0.1 + g}} for d, g in gaps.items()}))


def rf_curves(train: np.ndarray, test: np.ndarray, oob_curve: np.ndarray, datasets=("d1", "d2")) -> ExperimentResults:
    return curve_results({"rf": {"train_error": train, "test_error": test, "oob_error": oob_curve}},
                         datasets=datasets)


TEST300 = plateau(0.3, 0.1, 300)
RISING300 = np.r_[TEST300[:200], np.linspace(TEST300[199], TEST300[199] + 0.05, 100)]


def without(rows: list[dict], algorithm: str) -> list[dict]:
    return [r for r in rows if r["algorithm"] != algorithm]


def regimes_missing_mincq() -> ExperimentResults:
    """The three regimes, MinCq never run in the stumps regime."""
    res = regimes(**CLEAR_REGIMES)
    stumps = res.sibling("uci_binary_stumps")
    thinned = results(without(stumps.runs.to_dict("records"), "mincq"), name="uci_binary_stumps")
    mixed = res.sibling("uci_binary_mixed")
    return dataclasses.replace(res, sibling_loader={"uci_binary_stumps": thinned, "uci_binary_mixed": mixed}.get)


def per_c(accuracies_by_c: list[float]) -> ExperimentResults:
    return curve_results({"forest_svm": {"test_accuracy_by_C": accuracies_by_c}})


def heuristics(auc: dict[str, float], spread: dict[str, float] | None = None, n_runs: int = 6,
               noise: dict[str, float] | None = None) -> ExperimentResults:
    """depecker2010 Table 4.2's 8 heuristics (tests/test_depecker2010.py's builder)."""
    return _results(auc, spread or {a: 0.005 for a in HEURISTICS}, noise or {a: 0.05 for a in HEURISTICS},
                    n_runs=n_runs)


FLAT = {a: 0.60 for a in HEURISTICS} | {"bagg_cart": 0.62}


def only(res: ExperimentResults, algorithms: tuple[str, ...]) -> ExperimentResults:
    runs = res.runs[res.runs["algorithm"].isin(algorithms)].reset_index(drop=True)
    return dataclasses.replace(res, runs=runs, planned=runs[["key", "dataset", "algorithm", "repetition", "fold"]])


def unif2d(at2: float, deeper: float, depths: int = 11) -> ExperimentResults:
    """trk_axis AUC-by-depth curves on unif2d: ``at2`` at depth 2, ``deeper`` from depth 3 on."""
    curve = np.array([0.5, at2 - 0.05, at2] + [deeper] * (depths - 3))[:depths]
    rows, arrays = [], {}
    for r in range(4):
        key = f"unif2d-trk_axis-{r}"
        rows.append({"dataset": "unif2d", "algorithm": "trk_axis", "repetition": r, "key": key})
        arrays[key] = {"test_auc": curve + 1e-4 * r}
    return ExperimentResults.from_frame(pd.DataFrame(rows), arrays=arrays,
                                        datasets_info={"unif2d": {"auc_star": 0.735}})


def envelopes(noise: dict[str, float], auc: dict[str, float], n_runs: int = 6) -> ExperimentResults:
    """Runs of TRK/Bagg CART and SVM on gauss_croix2d: test scores noisier by ``noise`` (a wider ROC envelope)."""
    rng = np.random.default_rng(1)
    base = rng.normal(size=300)
    y = np.where(base + rng.normal(size=300) > 0, 1, -1)
    rows, arrays = [], {}
    for a in ("trk_cart", "bagg_cart", "trk_svm", "bagg_svm"):
        for r in range(n_runs):
            key = f"{a}-{r}"
            rows.append({"dataset": "gauss_croix2d", "algorithm": a, "repetition": r, "key": key,
                         "test_auc": auc.get(a, 0.9) + 0.001 * rng.normal()})
            arrays[key] = {"y_test": y, "test_scores": base + noise[a] * rng.normal(size=300)}
    return ExperimentResults.from_frame(pd.DataFrame(rows), arrays=arrays)


UCI = ("vote_complete", "australian", "german", "japanese", "autompg", "u6", "u7", "u8", "u9", "u10")
ALL13 = SIMULATED + UCI


def aucs(values: dict[str, float | dict[str, float]], datasets=ALL13, metrics=("test_auc",),
         n_runs: int = 5) -> ExperimentResults:
    """Runs of each algorithm with the given mean of every metric (one value, or one per dataset), small noise."""
    rows = []
    for r in range(n_runs):
        for d in datasets:
            for a, v in values.items():
                mean = v[d] if isinstance(v, dict) else v
                rows.append({"dataset": d, "algorithm": a, "repetition": 0, "fold": r,
                             **{m: mean + 0.002 * ((r % 3) - 1) for m in metrics}})
    return results(rows)


TRUNC = tuple(f"test_truncated_auc_{u}_fractional" for u in ("20", "10", "05"))


def competitors(rankboost_uci: float, rankrls_sim: float) -> dict[str, dict[str, float]]:
    """The three competitors' AUCs: RankBoost ``rankboost_uci`` on the UCI data, RankRLS ``rankrls_sim`` on the
    simulated data, every other 0.80."""
    return {"rankboost": {d: rankboost_uci if d in UCI else 0.80 for d in ALL13},
            "ranksvm_opt": dict.fromkeys(ALL13, 0.80),
            "rankrls_opt": {d: rankrls_sim if d in SIMULATED else 0.80 for d in ALL13}}


def powers(wilcoxon: float, settings: int = 8) -> ExperimentResults:
    """Rejection rates: MMD tests 0.5 at delta 0.2 and 0.2 at smaller shifts; S-WMW_TR ``wilcoxon`` at delta 0.2
    and 0.9 x that below (its power loss 10%, the MMD tests' 60%)."""
    rates: dict[str, dict[str, float]] = {a: {} for a in ("treerank_wilcoxon", "mmd_boot", "mmd_mom")}
    for (_, delta), d in list(SETTINGS.items())[:settings]:
        big = delta == "020"
        rates["mmd_boot"][d] = rates["mmd_mom"][d] = 0.5 if big else 0.2
        rates["treerank_wilcoxon"][d] = wilcoxon if big else 0.9 * wilcoxon
    return _test_runs(rates)


def levels(mmd_mom: float, n: int = 200) -> ExperimentResults:
    rates = {a: dict.fromkeys(NULLS, 0.05) for a in ("treerank_wilcoxon", "mmd_boot")}
    return _test_runs(rates | {"mmd_mom": dict.fromkeys(NULLS, mmd_mom)}, n)


def spambase(curves: dict[str, np.ndarray], oob_shift: float = 0.002) -> ExperimentResults:
    return curve_results({a: {"test_error": c, "oob_error": c + oob_shift} for a, c in curves.items()},
                         datasets=("spambase",))


GOOD_SPAM = {"bagging": plateau(0.2, 0.06), "rf_course": plateau(0.2, 0.055), "gboost": plateau(0.2, 0.05)}
RISING_SPAM = {a: np.r_[c[:60], np.linspace(c[59], c[59] + 0.03, 40)] for a, c in GOOD_SPAM.items()}


def importances(probes: list[float], real: list[float] | None = None) -> ExperimentResults:
    real = [0.3, 0.2, 0.15, 0.1, 0.08, 0.06, 0.05] if real is None else real
    stack = np.r_[real, probes]
    return curve_results({"rf_importance": {"importance_mdi": stack, "importance_oob_perm": stack}},
                         datasets_info={d: {"n_features": len(real)} for d in ("d1", "d2")})


# -- the cases: claim -> (holding, failing, too little, phrase of the NOT TESTED reason) ---------------------------
CASES: dict[str, tuple[Builder, Builder, Builder, str]] = {
    # zirakiza2013
    "oob_tracks_test": (lambda: oob({"d1": 0.005, "d2": -0.01, "d3": 0.03}),
                        lambda: oob({"d1": 0.005, "d2": 0.03, "d3": -0.04}),
                        lambda: oob({"d1": 0.035}), "too few datasets: 1"),
    "fig4_1_no_overfit": (lambda: rf_curves(plateau(0.2, 0.0, 300), TEST300, TEST300),
                          lambda: rf_curves(plateau(0.2, 0.0, 300), RISING300, TEST300),
                          lambda: rf_curves(plateau(0.2, 0.0, 10), TEST300[:10], TEST300[:10]),
                          "too few trees: 10"),
    "fig4_2_oob_tracks_test": (lambda: rf_curves(TEST300, TEST300, TEST300 + 0.005),
                               lambda: rf_curves(TEST300, TEST300, TEST300 - 0.05),
                               lambda: rf_curves(TEST300, TEST300, TEST300 + 0.005, datasets=("d1",)),
                               "too few datasets: 1"),
    "full_trees_rf_best": (lambda: results(three(0.10, 0.104, 0.12)), lambda: results(three(0.12, 0.10, 0.13)),
                           lambda: results(without(three(0.10, 0.104, 0.12), "mincq")),
                           "needs rf, sorf and mincq runs"),
    "stumps_sorf_beats_rf": (lambda: results(three(0.20, 0.17, 0.175)), lambda: results(three(0.20, 0.20, 0.19)),
                             lambda: results(without(three(0.20, 0.17, 0.175), "rf")),
                             "needs rf, sorf and mincq runs"),
    "mixed_sorf_mincq_beat_rf": (lambda: results(three(0.20, 0.17, 0.175)),
                                 lambda: results(three(0.15, 0.17, 0.175)),
                                 lambda: results(without(three(0.20, 0.17, 0.175), "sorf")),
                                 "needs rf, sorf and mincq runs"),
    "multiclass_close": (lambda: results(without(three(0.10, 0.102, 0.0), "mincq")),
                         lambda: results(without(three(0.10, 0.12, 0.0), "mincq")),
                         lambda: results(without(three(0.10, 0.102, 0.0), "sorf")), "needs rf and sorf runs"),
    "hyperparameters": (lambda: regimes(**CLEAR_REGIMES), lambda: regimes(**CLEAR_REGIMES, mu=1e-3),
                        lambda: results(three(0.1, 0.1, 0.1), name="uci_binary"),
                        "run uci_binary_stumps, uci_binary_mixed first"),
    "overall": (lambda: regimes(**CLEAR_REGIMES),
                lambda: regimes(full=(0.10, 0.104, 0.12), stumps=(0.2, 0.2, 0.18), mixed=(0.15, 0.13, 0.14)),
                regimes_missing_mincq, "needs rf, sorf and mincq runs in uci_binary_stumps"),
    # pisetta2010
    "pisetta_svm_significant_wins": (lambda: accuracies(MKL, shifted(MKL, 0.03)), lambda: accuracies(MKL, MKL),
                                     lambda: accuracies(dict(list(MKL.items())[:3]),
                                                        shifted(dict(list(MKL.items())[:3]), 0.03)),
                                     "too few datasets with paired splits: 3"),
    "pisetta_svm_no_significant_loss": (lambda: accuracies(MKL, shifted(MKL, 0.03)),
                                        lambda: accuracies(MKL, shifted(MKL, -0.03, only=("liver",))),
                                        lambda: accuracies(MKL, MKL, reps=1), "no paired runs"),
    "pisetta_svm_best_but_vote": (lambda: accuracies(MKL, shifted(MKL, -0.03, only=("liver",))),
                                  lambda: accuracies(MKL, shifted(MKL, -0.01, only=("liver", "pima"))),
                                  lambda: accuracies({"liver": 0.7}, {"liver": 0.69}),
                                  "too few datasets with paired splits: 1"),
    "pisetta_vote_close_to_mkl": (lambda: accuracies(MKL, MKL),
                                  lambda: accuracies(shifted(MKL, 0.05, only=("liver",)), MKL),
                                  lambda: accuracies(MKL, MKL, reps=1), "no runs on the MKL datasets"),
    "pisetta_svm_beats_mkl": (lambda: accuracies(MKL, shifted(MKL, 0.05, only=("sonar", "pima"))),
                              lambda: accuracies(MKL, MKL),
                              lambda: accuracies({"sonar": MKL["sonar"]}, {"sonar": MKL["sonar"] + 0.05}),
                              "too few MKL datasets with 2 or more splits: 1"),
    "pisetta_c_insensitive": (lambda: per_c([0.90, 0.905, 0.902, 0.90]), lambda: per_c([0.90, 0.95, 0.93, 0.92]),
                              lambda: per_c([0.90]), "too few values of C: 1"),
    # depecker2010
    "table4_2_bagging_stabilises": (_published_like, lambda: heuristics(FLAT, noise={a: 1.0 for a in HEURISTICS}),
                                    lambda: heuristics(FLAT, n_runs=1), "no instability measured"),
    "table4_2_forests_raise_auc": (_published_like, lambda: heuristics(FLAT),
                                   lambda: only(_published_like(), ("trk_cart", "bagg_cart")),
                                   "needs TRK_CART, Bagg_CART and RF1_CART runs"),
    "table4_2_rf1_best": (_published_like, lambda: heuristics(FLAT), lambda: only(_published_like(), ("rf1_cart",)),
                          "needs RF1_CART and at least one other heuristic"),
    "table4_2_one_variable_varies": (
        _published_like,
        lambda: heuristics(FLAT, spread={a: 0.02 for a in HEURISTICS} | {"rf4_cart": 0.002, "rf6_cart": 0.002}),
        lambda: heuristics(FLAT, n_runs=1), "needs 2+ runs"),
    "toys_axis_tree_near_optimal_on_unif2d": (lambda: unif2d(0.735, 0.736), lambda: unif2d(0.735, 0.76),
                                              lambda: unif2d(0.735, 0.736, depths=3),
                                              "too few cuts deeper than 2: 0"),
    "toys_svm_reaches_optimum_where_axis_saturates": (
        lambda: _toy_results(axis_croix=0.91, svm_croix=0.986, pruned_gap=0.002),
        lambda: _toy_results(axis_croix=0.98, svm_croix=0.95, pruned_gap=0.002),
        lambda: only(_toy_results(0.91, 0.986, 0.002), ("trk_axis", "trk_cart")), "needs trk_axis, trk_cart and"),
    "toys_pruning_near_best": (lambda: _toy_results(axis_croix=0.91, svm_croix=0.986, pruned_gap=0.002),
                               lambda: _toy_results(axis_croix=0.91, svm_croix=0.986, pruned_gap=0.05),
                               lambda: only(_toy_results(0.91, 0.986, 0.002), ("trk_cart", "trk_svm")),
                               "needs trk_cart and trk_cart_pruned"),
    "fig4_3_bagging_narrows_envelopes": (
        lambda: envelopes({"trk_cart": 2.0, "bagg_cart": 0.3, "trk_svm": 2.0, "bagg_svm": 0.3},
                          {"trk_cart": 0.90, "bagg_cart": 0.92}),
        lambda: envelopes(dict.fromkeys(("trk_cart", "bagg_cart", "trk_svm", "bagg_svm"), 1.0),
                          {"trk_cart": 0.90, "bagg_cart": 0.92}),
        lambda: envelopes(dict.fromkeys(("trk_cart", "bagg_cart", "trk_svm", "bagg_svm"), 1.0), {}, n_runs=1),
        "needs 2+ runs of the four algorithms"),
    "table_a1_svm_beats_cart_tree": (lambda: aucs({"trk_svm_cv": 0.85, "trk_cart": 0.80}),
                                     lambda: aucs({"trk_svm_cv": 0.80, "trk_cart": 0.85}),
                                     lambda: aucs({"trk_svm_cv": 0.85, "trk_cart": 0.80}, datasets=ALL13[:12]),
                                     "needs both on the 13 datasets (12 so far)"),
    "table_a1_resampling_helps_cart": (
        lambda: aucs({"trk_cart": 0.80} | dict.fromkeys(("bagg_cart", "rf1_cart", "rf3_cart", "rf5_cart"), 0.85)),
        lambda: aucs({"trk_cart": 0.80, "rf5_cart": 0.78} | dict.fromkeys(("bagg_cart", "rf1_cart", "rf3_cart"),
                                                                           0.85)),
        lambda: aucs({"trk_cart": 0.80} | dict.fromkeys(("bagg_cart", "rf1_cart", "rf3_cart", "rf5_cart"), 0.85),
                     datasets=ALL13[:12]),
        "needs bagg_cart and TRK_CART on the 13 datasets"),
    "table_a1_cart_forests_match_svm": (
        lambda: aucs({"bagg_svm_cv": 0.85, "rf1_cart": 0.80, "rf3_cart": 0.845, "rf5_cart": 0.82}),
        lambda: aucs({"bagg_svm_cv": 0.85, "rf1_cart": 0.80, "rf3_cart": 0.82, "rf5_cart": 0.82}),
        lambda: aucs({"bagg_svm_cv": 0.85, "rf1_cart": 0.80, "rf3_cart": 0.845, "rf5_cart": 0.82},
                     datasets=ALL13[:12]),
        "needs the forests and Bagg_SVM on the 10 UCI datasets (9)"),
    "table_a3_global_auc_comparable": (
        lambda: aucs(competitors(0.82, 0.82) | dict.fromkeys(TREERANKS, 0.815)),
        lambda: aucs(competitors(0.82, 0.82) | dict.fromkeys(TREERANKS, 0.78)),
        lambda: aucs(competitors(0.82, 0.82) | dict.fromkeys(TREERANKS, 0.815), datasets=ALL13[:12]),
        "needs the 5 columns on the 13 datasets (12 so far)"),
    "table_a3_best_competitor": (lambda: aucs(competitors(0.85, 0.85)), lambda: aucs(competitors(0.75, 0.85)),
                                 lambda: aucs(competitors(0.85, 0.85), datasets=ALL13[:12]),
                                 "needs the competitors on the 13 datasets (12 so far)"),
    "table_a4_treerank_better_at_the_top": (
        lambda: aucs(dict.fromkeys(COMPETITORS, 0.5) | dict.fromkeys(TREERANKS, 0.6), metrics=TRUNC),
        lambda: aucs(dict.fromkeys(COMPETITORS, 0.6) | dict.fromkeys(TREERANKS, 0.5), metrics=TRUNC),
        lambda: aucs(dict.fromkeys(COMPETITORS, 0.5) | dict.fromkeys(TREERANKS, 0.6), metrics=TRUNC,
                     datasets=SIMULATED + UCI[:9]),
        "needs rf3_cart and the competitors on the 10 UCI datasets"),
    "table6_1_wilcoxon_more_powerful": (lambda: powers(0.9), lambda: powers(0.4), lambda: powers(0.9, settings=7),
                                        "needs the three tests on the 8 settings (7 so far)"),
    "table6_1_tests_hold_their_level": (lambda: levels(0.05), lambda: levels(0.12), lambda: levels(0.05, n=10),
                                        "needs the three tests on the two null problems (0/6 so far)"),
    # courses
    "spambase_forests_plateau": (lambda: spambase(GOOD_SPAM), lambda: spambase(RISING_SPAM, 0.0),
                                 lambda: spambase({a: c[:10] for a, c in GOOD_SPAM.items()}),
                                 "too few trees in the longest curve: 10"),
    "spambase_esl_ordering": (lambda: spambase(GOOD_SPAM),
                              lambda: spambase({"bagging": GOOD_SPAM["gboost"], "rf_course": GOOD_SPAM["rf_course"],
                                                "gboost": GOOD_SPAM["bagging"]}),
                              lambda: spambase({a: c for a, c in GOOD_SPAM.items() if a != "gboost"}),
                              "no curves stored"),
    "estimates_resub_optimistic": (estimates, lambda: estimates(est_resub=0.09),
                                   lambda: results(metric_rows({"d1": {"rf_estimates": {"test_risk": 0.1,
                                                                                        "est_cv": 0.1}}})),
                                   "no resubstitution error stored"),
    "estimates_oob_tracks_test": (estimates, lambda: estimates(est_oob=0.15),
                                  lambda: results(metric_rows({"d1": {"rf_estimates": {"test_risk": 0.1,
                                                                                       "est_cv": 0.1}}})),
                                  "no dataset with both est_oob and test_risk"),
    "estimates_oob_close_to_cv": (estimates, lambda: estimates(est_cv=0.13),
                                  lambda: results(metric_rows({"d1": {"rf_estimates": {"test_risk": 0.1,
                                                                                       "est_oob": 0.1}}})),
                                  "no dataset with both est_oob and est_cv"),
    "estimates_632_optimistic": (estimates, lambda: estimates(est_632=0.095), lambda: estimates(est_resub=0.05),
                                 "no dataset with resubstitution error <= 0.01"),
    "estimates_oob_plateau": (lambda: curve_results({"rf_estimates": {"oob_error": plateau(0.2, 0.1, 200)}}),
                              lambda: curve_results({"rf_estimates": {"oob_error": np.linspace(0.2, 0.1, 200)}}),
                              lambda: curve_results({"rf_estimates": {"oob_error": plateau(0.2, 0.1, 10)}}),
                              "too few trees in the longest curve: 10"),
    "importance_probes_ranked_low": (lambda: importances([0.001] * 3), lambda: importances([0.5, 0.001, 0.001]),
                                     lambda: importances([]), "too few noise probes: 0"),
}

CASES.update(MODERN_CASES)  # the claims beyond the studies (ours, issue 23): builders beside their experiments
CASES.update(WU_CASES)  # wu2021's claims and zirakiza2013's on the PAC-Bayes successors (tests/test_wu2021.py)

NAMES = sorted(name for study in STUDIES.values() for name in study.claims)


def test_every_claim_has_a_case() -> None:
    assert sorted(CASES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_claim_holds_fails_and_is_not_tested(name: str, published) -> None:  # noqa: F811
    holding, failing, little, reason = CASES[name]
    ok = judge(name, holding(), n_resamples=N_RESAMPLES)
    assert ok.verdict == HOLDS, ok.result.evidence
    bad = judge(name, failing(), n_resamples=N_RESAMPLES)
    assert bad.verdict == DOES_NOT_HOLD, bad.result.evidence
    untested = judge(name, little(), n_resamples=N_RESAMPLES)
    assert untested.verdict == NOT_TESTED and untested.result.holds is None
    assert reason in untested.result.evidence, untested.result.evidence
    assert "\n" not in untested.result.evidence


@pytest.mark.parametrize("name", NAMES)
def test_smoke_runs_are_never_judged(name: str, published) -> None:  # noqa: F811
    """The results that make the claim hold, marked as smoke runs: NOT TESTED, the test's answer kept as a check."""
    res = dataclasses.replace(CASES[name][0](), smoke=True)
    j = judge(name, res, n_resamples=N_RESAMPLES)
    assert (j.verdict, j.agreement, j.result.holds) == (NOT_TESTED, None, None)
    assert j.result.evidence.startswith("smoke runs (debug=smoke") and f"the test gives {HOLDS}:" in j.result.evidence


def test_the_issue_example_one_dataset_off_by_0_035() -> None:
    """'OOB - test <= 0.02 on every dataset but at most one' cannot fail on one dataset: +0.035 there is no HOLDS."""
    j = judge("oob_tracks_test", oob({"d1": 0.035}))
    assert j.verdict == NOT_TESTED
    assert j.result.evidence == ("too few datasets: 1 (the test can go either way only with at least 2); on the data "
                                 "at hand: OOB - test: d1 +0.035")
    assert judge("oob_tracks_test", oob({"d1": 0.035, "d2": 0.0})).verdict == HOLDS  # now one may be off
    assert judge("oob_tracks_test", oob({"d1": 0.035, "d2": 0.03})).verdict == DOES_NOT_HOLD


@pytest.mark.parametrize(("name", "least"), [("fig4_1_no_overfit", 51), ("fig4_2_oob_tracks_test", 101)])
def test_curve_claims_need_enough_trees(name: str, least: int) -> None:
    """Fig. 4.1's rise over 50..T trees and Fig. 4.2's OOB(100) - OOB(T) exist only past 50 and 100 trees."""
    def at(n: int) -> str:
        return judge(name, rf_curves(plateau(0.2, 0.0, n), TEST300[:n], TEST300[:n] + 0.005)).verdict

    assert (at(least - 1), at(least)) == (NOT_TESTED, HOLDS)


def test_verdict_and_too_little() -> None:
    assert too_little(datasets=(2, 2), seeds=(5, 2)) is None
    assert too_little(datasets=(1, 2), values_of_C=(0, 2)) == (
        "too few datasets: 1 (the test can go either way only with at least 2); too few values of C: 0 (the test can "
        "go either way only with at least 2)")
    tested = verdict("c", "t", True, "e", datasets=(3, 2))
    assert (tested.holds, tested.evidence) == (True, "e")
    untested = verdict("c", "t", False, "e", datasets=(1, 2))
    assert untested.holds is None and untested.evidence.endswith("; on the data at hand: e")

