"""The experiments beyond the studies (issue 23 part 4): their reused columns are the reproductions' runs (the same
run keys, so nothing is refitted), every table says it is beyond the study, and the builders with which
tests/test_claims_can_fail.py makes each of their claims hold, fail and go untested (MODERN_CASES)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

import forestlab.studies  # noqa: F401  (registers the studies' claims and figure kinds)
from forestlab.config import load_experiment
from forestlab.results import ExperimentResults
from forestlab.runner import plan
from forestlab.studies.depecker2010 import MODERN_RANKERS, MODERN_TESTS, NULLS, SETTINGS, SIMULATED, TREERANKS_HONEST
from tests.test_depecker2010 import _test_runs
from tests.test_studies import metric_rows, results

#: each experiment beyond the study, the reproduction whose runs it reuses, and the algorithms it shares with it
REUSED = {
    "depecker2010_modern_rankers": ("depecker2010_table_a3",
                                    {"rf3_cart", "rf1_svm_cv", "rankboost", "ranksvm_cv", "rankrls_cv"}),
    "depecker2010_modern_rankers_gauss": ("depecker2010_table4_2", {"trk_cart", "rf1_cart"}),
    "depecker2010_modern_tests": ("depecker2010_table6_1", {"treerank_wilcoxon", "mmd_boot"}),
    "pisetta2010_modern_kernels": ("pisetta2010_table1", {"rf_pisetta", "forest_svm", "forest_svm_prox"}),
}


@pytest.mark.parametrize("name", sorted(REUSED))
def test_reused_columns_are_the_reproductions_runs(name: str) -> None:
    """Planning both gives the reused algorithms the same run keys: the store runs them once."""
    other, shared = REUSED[name]
    mine, theirs = plan(load_experiment([f"experiment={name}"])), plan(load_experiment([f"experiment={other}"]))
    assert {s.algorithm for s in mine} & {s.algorithm for s in theirs} == shared
    reused = {s.key for s in mine if s.algorithm in shared}
    assert reused and reused <= {s.key for s in theirs}
    new = [s for s in mine if s.algorithm not in shared]
    assert new and not {s.key for s in new} & {s.key for s in theirs}


@pytest.mark.parametrize("name", sorted(REUSED))
def test_marked_beyond_the_study(name: str) -> None:
    exp = load_experiment([f"experiment={name}"])
    assert exp.description.startswith("beyond the study")
    assert all("beyond the study (ours)" in t.title.lower() for t in exp.reports.tables), name
    assert all("beyond the study (ours)" in f.title.lower() for f in exp.reports.figures), name


# -- builders for tests/test_claims_can_fail.py ---------------------------------------------------------------------
UCI = ("vote_complete", "australian", "german", "japanese", "autompg", "ionosphere", "wdbc", "wbc", "heart_statlog",
       "hepatitis")
ALL13 = SIMULATED + UCI
TRUNC = tuple(f"test_truncated_auc_{u}_fractional" for u in ("20", "10", "05"))


def rankers(values: dict[str, float], datasets=ALL13, metrics=("test_auc",), n_splits: int = 10,
            by: str = "fold", info: dict | None = None, spread: float = 0.01) -> ExperimentResults:
    """Runs of each algorithm with exactly the given mean on every dataset, and noise of std ``spread`` that differs by
    algorithm (so paired differences have a spread); one split per fold (k-fold) or per repetition (resample)."""
    rows = []
    for i, (a, mean) in enumerate(values.items()):
        for d in datasets:
            noise = np.random.default_rng(i).normal(0, spread, n_splits)
            noise -= noise.mean()
            for r in range(n_splits):
                rows.append({"dataset": d, "algorithm": a, "repetition": r if by == "repetition" else 0,
                             "fold": r if by == "fold" else 0, **{m: mean + noise[r] for m in metrics}})
    return ExperimentResults.from_frame(pd.DataFrame(rows), datasets_info=info or {})


def both(trk: float, modern: float, **kwargs) -> ExperimentResults:
    return rankers(dict.fromkeys(TREERANKS_HONEST, trk) | dict.fromkeys(MODERN_RANKERS, modern), **kwargs)


STARS = {"gauss_easy20d": {"auc_star": 0.806}, "gauss_med20d": {"auc_star": 0.742},
         "gauss_hard20d": {"auc_star": 0.632}}


def gauss(rf1: float, modern: float, datasets=SIMULATED) -> ExperimentResults:
    return rankers({"rf1_cart": rf1} | dict.fromkeys(MODERN_RANKERS, modern), datasets=datasets, n_splits=30,
                   by="repetition", info=STARS)


def levels(c2st: float, n: int = 200) -> ExperimentResults:
    return _test_runs({a: dict.fromkeys(NULLS, c2st if a == "c2st" else 0.05) for a in MODERN_TESTS}, n)


def powers(wilcoxon: float, rival: float, settings: int = 8) -> ExperimentResults:
    chosen = list(SETTINGS.values())[:settings]
    return _test_runs({"treerank_wilcoxon": dict.fromkeys(chosen, wilcoxon), "c2st": dict.fromkeys(chosen, rival),
                       "mmd_agg": dict.fromkeys(chosen, rival - 0.1)})


PISETTA12 = {"sonar": 0.82, "liver": 0.72, "parkinsons": 0.92, "pima": 0.76, "ionosphere": 0.93, "german": 0.76,
             "wdbc": 0.96, "australian": 0.87, "heart_statlog": 0.82, "spambase": 0.95, "vote": 0.96, "chess": 0.98}


def kernels(breiman: float, kerf: float, rfgap: float, datasets=tuple(PISETTA12), reps: int = 5) -> ExperimentResults:
    """Accuracies of the vote (PISETTA12) and of the three SVMs, each shifted from it by the given amount."""
    means = {d: {"rf_pisetta": {"test_accuracy": PISETTA12[d]},
                 "forest_svm": {"test_accuracy": PISETTA12[d] + breiman},
                 "forest_svm_kerf": {"test_accuracy": PISETTA12[d] + kerf},
                 "forest_svm_rfgap": {"test_accuracy": PISETTA12[d] + rfgap}} for d in datasets}
    return results(metric_rows(means, reps=reps))


Builder = Callable[[], ExperimentResults]
MODERN_CASES: dict[str, tuple[Builder, Builder, Builder, str]] = {
    "modern_rankers_treerank_within_noise": (
        lambda: both(0.80, 0.80), lambda: both(0.75, 0.80), lambda: both(0.80, 0.80, datasets=ALL13[:12]),
        "needs the 2 TreeRank forests and the 4 modern rankers on the 13 datasets (12 so far)"),
    "modern_rankers_treerank_better_at_the_top": (
        lambda: both(0.6, 0.5, metrics=TRUNC), lambda: both(0.5, 0.6, metrics=TRUNC),
        lambda: both(0.6, 0.5, metrics=TRUNC, datasets=ALL13[:12]), "(27/30 cells so far)"),
    "modern_rankers_gauss_treerank_within_noise": (
        lambda: gauss(0.72, 0.72), lambda: gauss(0.68, 0.72), lambda: gauss(0.72, 0.72, datasets=SIMULATED[:2]),
        "on the 3 Gaussian problems (2 so far)"),
    "modern_tests_hold_their_level": (lambda: levels(0.05), lambda: levels(0.12), lambda: levels(0.05, n=10),
                                      "needs the three tests on the two null problems (0/6 so far)"),
    "modern_tests_wilcoxon_competitive": (lambda: powers(0.5, 0.5), lambda: powers(0.1, 0.6),
                                          lambda: powers(0.5, 0.5, settings=7), "on the 8 settings (7 so far)"),
    "modern_kernels_best_kernel": (lambda: kernels(0.02, 0.0, 0.01), lambda: kernels(0.0, 0.03, 0.0),
                                   lambda: kernels(0.02, 0.0, 0.01, reps=1),
                                   "too few datasets with paired splits: 0"),
    "modern_kernels_beat_the_vote": (lambda: kernels(0.02, 0.03, 0.0), lambda: kernels(0.02, 0.0, 0.0),
                                     lambda: kernels(0.02, 0.03, 0.0, datasets=tuple(PISETTA12)[:3]),
                                     "too few datasets with paired splits: 3"),
}


def test_at_the_top_tells_level_cells_from_cells_behind() -> None:
    """A tie (both rankers at the same mean, e.g. at the ceiling) is not a win, and the evidence says it is a tie,
    not a loss."""
    from forestlab.studies import find_claim

    claim = find_claim("modern_rankers_treerank_better_at_the_top")[1]
    level = claim(both(0.5, 0.5, metrics=TRUNC))
    assert level.holds is False
    assert "in 0/30 cells; of the other 30, level with it at 3 digits in 30" in level.evidence
    assert "below it in 0 (none)" in level.evidence
    behind = claim(both(0.5, 0.6, metrics=TRUNC))
    assert "level with it at 3 digits in 0 (none), below it in 30" in behind.evidence


def test_within_noise_reads_the_fold_spread() -> None:
    """A gap of 0.002 is inside the noise of folds that spread by 0.01, and outside it when they agree exactly."""
    from forestlab.studies import find_claim

    claim = find_claim("modern_rankers_treerank_within_noise")[1]
    assert claim(both(0.798, 0.80)).holds is True
    flat = rankers(dict.fromkeys(TREERANKS_HONEST, 0.798) | dict.fromkeys(MODERN_RANKERS, 0.80), spread=0.0)
    assert claim(flat).holds is False


def test_wilcoxon_competitive_leaves_out_settings_where_no_test_has_power() -> None:
    """At chance level (every test rejecting 5%) S-WMW_TR is 'within noise' of the rivals, which says nothing: such
    settings are left out, and with none where a rival has power the claim is NOT TESTED, never HOLDS."""
    from forestlab.studies import find_claim

    claim = find_claim("modern_tests_wilcoxon_competitive")[1]
    assert claim(powers(0.05, 0.10)).holds is None  # rivals at 0.10 and 0.00 of 100: inside the band, no power
    out = claim(powers(0.05, 0.6))
    assert out.holds is False and "competitive in 0/8 settings where a rival has power" in out.evidence
