"""Checks of the studies' headline claims on our runs.

Each claim is a function of an :class:`ExperimentResults` returning a :class:`ClaimResult`: the claim in words, the
quantitative test we apply (thresholds are ours and stated), whether it holds, and the evidence. Experiments name the
claims they can test in ``experiment.claims``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from forestlab.report._collect import ExperimentResults, summarise


@dataclass(frozen=True)
class ClaimResult:
    claim: str
    test: str
    holds: bool | None  # None: not enough runs to tell
    evidence: str


CLAIMS: dict[str, Callable[[ExperimentResults], ClaimResult]] = {}


def claim(name: str):
    def register(func: Callable[[ExperimentResults], ClaimResult]):
        CLAIMS[name] = func
        return func

    return register


def _diffs(res: ExperimentResults, a: str, b: str, algorithm: str = "rf") -> dict[str, float]:
    out = {}
    for dataset in res.datasets:
        ma, _, na = summarise(res.values(algorithm, a, dataset)["value"].to_numpy())
        mb, _, nb = summarise(res.values(algorithm, b, dataset)["value"].to_numpy())
        if na and nb:
            out[dataset] = ma - mb
    return out


@claim("oob_tracks_test")
def oob_tracks_test(res: ExperimentResults) -> ClaimResult:
    diffs = _diffs(res, "oob_risk", "test_risk")
    test = "|mean OOB risk - mean test risk| <= 0.02 on every dataset but at most one"
    if not diffs:
        return ClaimResult("The out-of-bag risk estimates the test risk (zirakiza2013 §4.4)", test, None,
                           "no runs")
    far = {d: v for d, v in diffs.items() if abs(v) > 0.02}
    evidence = ", ".join(f"{d} {v:+.3f}" for d, v in diffs.items())
    return ClaimResult("The out-of-bag risk estimates the test risk (zirakiza2013 §4.4)", test,
                       len(far) <= 1, f"OOB - test: {evidence}")


def _curve_means(res: ExperimentResults, name: str) -> dict[str, np.ndarray]:
    out = {}
    for dataset in res.datasets:
        curves = res.curve("rf", name, dataset)
        if curves.size:
            with np.errstate(all="ignore"):
                out[dataset] = np.nanmean(curves, axis=0)
    return out


@claim("fig4_1_no_overfit")
def fig4_1_no_overfit(res: ExperimentResults) -> ClaimResult:
    text = ("RF's training risk reaches 0 while its test risk stabilises and does not rise as trees are added "
            "(zirakiza2013 Fig. 4.1)")
    test = ("mean training risk of the full forest <= 0.005, and mean test risk at the last tree <= its minimum "
            "over 50..T trees + 0.005, on every dataset")
    train, test_curves = _curve_means(res, "train_error"), _curve_means(res, "test_error")
    if not train or not test_curves:
        return ClaimResult(text, test, None, "no curves stored")
    parts, ok = [], True
    for d in test_curves:
        t_end = float(train[d][-1]) if d in train else float("nan")
        rise = float(test_curves[d][-1] - np.nanmin(test_curves[d][49:])) if len(test_curves[d]) > 50 else 0.0
        ok &= bool(t_end <= 0.005 and rise <= 0.005)
        parts.append(f"{d}: train {t_end:.4f}, test rise {rise:+.4f}")
    return ClaimResult(text, test, ok, "; ".join(parts))


@claim("fig4_2_oob_tracks_test")
def fig4_2_oob_tracks_test(res: ExperimentResults) -> ClaimResult:
    text = ("The OOB risk tracks the test risk as trees are added (a small gap on Tic-tac-toe), and it is stable "
            "from about 100 trees (zirakiza2013 Fig. 4.2, §7.3)")
    test = ("|OOB - test| at the last tree <= 0.02 on every dataset but at most one, and "
            "|OOB(100) - OOB(T)| <= 0.01 on every dataset")
    oob, tst = _curve_means(res, "oob_error"), _curve_means(res, "test_error")
    if not oob or not tst:
        return ClaimResult(text, test, None, "no curves stored")
    parts, far, unstable = [], 0, 0
    for d in oob:
        gap = float(oob[d][-1] - tst[d][-1])
        drift = float(oob[d][min(99, len(oob[d]) - 1)] - oob[d][-1])
        far += abs(gap) > 0.02
        unstable += abs(drift) > 0.01
        parts.append(f"{d}: OOB-test {gap:+.3f}, OOB(100)-OOB(T) {drift:+.3f}")
    return ClaimResult(text, test, far <= 1 and unstable == 0, "; ".join(parts))


# ---------------------------------------------------------------------------------------------------------------
# pisetta2010 (Table 1): the forest-kernel SVM against the forest's vote and the published MKL column.
# Tests fixed before the runs; experiments/pisetta2010/README.md lists them. '*' = two-sided t-test at 5%.
# ---------------------------------------------------------------------------------------------------------------
PISETTA_VOTE, PISETTA_SVM = "rf_pisetta", "forest_svm"
PISETTA_MKL_DATASETS = ("sonar", "liver", "parkinsons", "pima", "ionosphere")


def _pisetta_published() -> dict[tuple[str, str, str], float]:
    """{(dataset, algorithm, metric): value} of experiments/pisetta2010/published/table1.csv ({} if missing)."""
    from forestlab.errors import ConfigError
    from forestlab.report.compare import load_published

    try:
        table = load_published("pisetta2010", "table1.csv")
    except ConfigError:
        return {}
    return {(r.dataset, r.algorithm, r.metric): float(r.value) for r in table.itertuples()}


def _svm_vs_vote(res: ExperimentResults):
    from forestlab.report.stats import compare_algorithms

    table = compare_algorithms(res, PISETTA_SVM, PISETTA_VOTE, "test_accuracy")
    return table[table["n"] >= 2]


@claim("pisetta_svm_significant_wins")
def pisetta_svm_significant_wins(res: ExperimentResults) -> ClaimResult:
    text = ("The SVM with the forest kernel is significantly more accurate than the forest's vote on 4 of the 12 "
            "datasets (Sonar, Pima, Australian, Spambase) (pisetta2010 §5, Table 1)")
    test = ("paired two-sided t-test over our splits, alpha = 0.05: the SVM is significantly more accurate on at "
            "least 4 datasets (which ones is reported, not required to match)")
    table = _svm_vs_vote(res)
    if table.empty:
        return ClaimResult(text, test, None, "no paired runs")
    wins = table[table["higher"] == "a"]["dataset"].tolist()
    published = _pisetta_published()
    starred = [d for d in res.datasets if published.get((d, PISETTA_SVM, "star")) == 1.0]
    evidence = (f"significant wins on {len(wins)}/{len(table)}: {', '.join(wins) or 'none'}; paper's starred: "
                f"{', '.join(starred)}; in both: {', '.join(d for d in wins if d in starred) or 'none'}; "
                "SVM - vote (p): " + ", ".join(f"{r.dataset} {r.diff:+.3f} ({r.p:.2g})" for r in table.itertuples()))
    return ClaimResult(text, test, len(wins) >= 4, evidence)


@claim("pisetta_svm_no_significant_loss")
def pisetta_svm_no_significant_loss(res: ExperimentResults) -> ClaimResult:
    text = "The forest-kernel SVM is never significantly less accurate than the vote (pisetta2010 §5)"
    test = "paired two-sided t-test, alpha = 0.05: no dataset where the vote is significantly more accurate"
    table = _svm_vs_vote(res)
    if table.empty:
        return ClaimResult(text, test, None, "no paired runs")
    losses = table[table["higher"] == "b"]
    evidence = ("significant losses: " + (", ".join(f"{r.dataset} {r.diff:+.3f} (p {r.p:.2g})"
                                                     for r in losses.itertuples()) or "none")
                + f" (of {len(table)} datasets)")
    return ClaimResult(text, test, losses.empty, evidence)


@claim("pisetta_svm_best_but_vote")
def pisetta_svm_best_but_vote(res: ExperimentResults) -> ClaimResult:
    text = ("Where the difference is not significant the SVM is still the more accurate, except on Vote where the "
            "forest is (non-significantly) better (pisetta2010 §5; against the vote only, MKL is not rerun)")
    test = "SVM mean accuracy >= vote mean accuracy, both rounded to 3 decimals, on every dataset but at most one"
    table = _svm_vs_vote(res)
    if table.empty:
        return ClaimResult(text, test, None, "no paired runs")
    behind = [r.dataset for r in table.itertuples() if round(r.mean_a, 3) < round(r.mean_b, 3)]
    evidence = f"SVM behind the vote on {len(behind)}/{len(table)}: {', '.join(behind) or 'none'}"
    return ClaimResult(text, test, len(behind) <= 1, evidence)


def _vs_mkl(res: ExperimentResults, algorithm: str) -> list[tuple[str, float, float, Any]]:
    from forestlab.report.stats import one_sample_t_test

    published = _pisetta_published()
    out = []
    for d in PISETTA_MKL_DATASETS:
        mkl = published.get((d, "mkl", "test_accuracy"))
        if d not in res.datasets or mkl is None:
            continue
        vals = res.values(algorithm, "test_accuracy", d)["value"].to_numpy(float)
        test = one_sample_t_test(vals, mkl)
        if test.n >= 2:
            out.append((d, mkl, float(np.nanmean(vals)), test))
    return out


@claim("pisetta_vote_close_to_mkl")
def pisetta_vote_close_to_mkl(res: ExperimentResults) -> ClaimResult:
    text = ("The forest's vote is as accurate as MKL: no significant difference on the 5 datasets with an MKL "
            "result (pisetta2010 §5; MKL numbers from Varma & Babu 2009)")
    test = ("one-sample two-sided t-test of our 20 vote accuracies against the published MKL mean (the only test "
            "possible without MKL's per-split results), alpha = 0.05: not significant on any of the 5 datasets")
    rows = _vs_mkl(res, PISETTA_VOTE)
    if not rows:
        return ClaimResult(text, test, None, "no runs on the MKL datasets")
    sig = [d for d, _, _, t in rows if t.significant()]
    evidence = "; ".join(f"{d}: vote {m:.3f} vs MKL {mkl:.3f} (p {t.p:.2g})" for d, mkl, m, t in rows)
    return ClaimResult(text, test, not sig, evidence)


@claim("pisetta_svm_beats_mkl")
def pisetta_svm_beats_mkl(res: ExperimentResults) -> ClaimResult:
    text = ("The forest-kernel SVM is significantly more accurate than MKL on 2 of the 5 datasets with an MKL "
            "result (Sonar, Pima) (pisetta2010 §5)")
    test = ("one-sample two-sided t-test of our 20 SVM accuracies against the published MKL mean, alpha = 0.05: "
            "significantly higher on at least 2 of the 5 datasets")
    rows = _vs_mkl(res, PISETTA_SVM)
    if not rows:
        return ClaimResult(text, test, None, "no runs on the MKL datasets")
    wins = [d for d, mkl, m, t in rows if t.significant() and m > mkl]
    evidence = (f"significantly above MKL on {len(wins)}: {', '.join(wins) or 'none'}; "
                + "; ".join(f"{d}: SVM {m:.3f} vs MKL {mkl:.3f} (p {t.p:.2g})" for d, mkl, m, t in rows))
    return ClaimResult(text, test, len(wins) >= 2, evidence)


@claim("pisetta_c_insensitive")
def pisetta_c_insensitive(res: ExperimentResults) -> ClaimResult:
    text = "The differences between the values of C were not very large (pisetta2010 §5)"
    test = ("the SVM refitted with each C in {1, 10, 100, 10000} on the same forest: max - min over C of the mean "
            "test accuracy <= 0.01 on every dataset")
    parts, spreads = [], []
    for d in res.datasets:
        acc = res.curve(PISETTA_SVM, "test_accuracy_by_C", d)
        if acc.size == 0:
            continue
        means = np.nanmean(acc, axis=0)
        spreads.append(float(means.max() - means.min()))
        parts.append(f"{d} {spreads[-1]:.3f}")
    if not spreads:
        return ClaimResult(text, test, None, "no per-C accuracies stored")
    return ClaimResult(text, test, max(spreads) <= 0.01, "spread over C: " + ", ".join(parts))


# ---------------------------------------------------------------------------------------------------------------
# courses (RCP209 "Forêts aléatoires"; Fromont, "Apprentissage statistique"): bagging, forests, OOB, importance.
# ---------------------------------------------------------------------------------------------------------------
def _mean_curve(res: ExperimentResults, algorithm: str, name: str, dataset: str) -> np.ndarray:
    curves = res.curve(algorithm, name, dataset)
    if curves.size == 0:
        return np.empty(0)
    with np.errstate(all="ignore"):
        return np.nanmean(curves, axis=0)


@claim("spambase_forests_plateau")
def spambase_forests_plateau(res: ExperimentResults) -> ClaimResult:
    text = ("The test error of bagging and of random forests decreases and then stabilises as trees are added; more "
            "trees do not overfit, and B can be chosen where the OOB error stops decreasing (RCP209; Fromont)")
    test = ("for bagging and the random forest, mean test error at the last tree <= its minimum over the second "
            "half of the trees + 0.005 and < its value at 10 trees; OOB error at the last tree within 0.005 of "
            "its value at half the trees")
    parts, ok, seen = [], True, False
    for d in res.datasets:
        for alg in ("bagging", "rf_course"):
            t = _mean_curve(res, alg, "test_error", d)
            o = _mean_curve(res, alg, "oob_error", d)
            if t.size < 20:
                continue
            seen = True
            half = t.size // 2
            rise = float(t[-1] - np.nanmin(t[half:]))
            drop = float(t[9] - t[-1])
            drift = float(o[half - 1] - o[-1]) if o.size == t.size else float("nan")
            ok &= bool(rise <= 0.005 and drop > 0 and abs(drift) <= 0.005)
            parts.append(f"{d}/{alg}: test {t[9]:.4f}@10 -> {t[-1]:.4f}@{t.size} (rise over 2nd half {rise:+.4f}), "
                         f"OOB@{half} - OOB@{t.size} {drift:+.4f}")
    if not seen:
        return ClaimResult(text, test, None, "no curves stored")
    return ClaimResult(text, test, ok, "; ".join(parts))


@claim("spambase_esl_ordering")
def spambase_esl_ordering(res: ExperimentResults) -> ClaimResult:
    text = ("On Spambase, gradient boosting <= random forest < bagging in test error (ESL Fig. 15.1's ordering; the "
            "course page shows the figure but states no ordering)")
    test = "mean test error at the last tree: gboost <= rf_course < bagging"
    parts, ok, seen = [], True, False
    for d in res.datasets:
        last = {a: _mean_curve(res, a, "test_error", d) for a in ("bagging", "rf_course", "gboost")}
        if any(v.size == 0 for v in last.values()):
            continue
        seen = True
        e = {a: float(v[-1]) for a, v in last.items()}
        ok &= e["gboost"] <= e["rf_course"] < e["bagging"]
        parts.append(f"{d}: " + ", ".join(f"{a} {v:.4f}" for a, v in e.items()))
    if not seen:
        return ClaimResult(text, test, None, "no curves stored")
    return ClaimResult(text, test, ok, "; ".join(parts))


_ESTIMATES = ("est_resub", "est_holdout", "est_cv", "est_oob", "est_loo_boot", "est_632", "est_632plus")


def _estimate_means(res: ExperimentResults, algorithm: str = "rf_estimates") -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for d in res.datasets:
        means = {}
        for m in ("test_risk", *_ESTIMATES):
            mean, _, n = summarise(res.values(algorithm, m, d)["value"].to_numpy())
            if n:
                means[m] = mean
        if "test_risk" in means and len(means) > 1:
            out[d] = means
    return out


@claim("estimates_resub_optimistic")
def estimates_resub_optimistic(res: ExperimentResults) -> ClaimResult:
    text = ("The empirical (resubstitution) risk underestimates the test risk; hold-out, K-fold CV, OOB, the "
            "leave-one-out bootstrap and .632+ are more honest (Fromont, risk estimation)")
    test = ("on every dataset: mean resubstitution error <= mean test error - 0.02, and each of hold-out, CV, OOB, "
            "LOO bootstrap and .632+ is closer to the mean test error than resubstitution")
    means = _estimate_means(res)
    if not means:
        return ClaimResult(text, test, None, "no runs")
    ok, parts = True, []
    for d, m in means.items():
        gap = abs(m["est_resub"] - m["test_risk"])
        closer = all(abs(m[k] - m["test_risk"]) < gap for k in
                     ("est_holdout", "est_cv", "est_oob", "est_loo_boot", "est_632plus") if k in m)
        ok &= bool(m["est_resub"] <= m["test_risk"] - 0.02 and closer)
        parts.append(f"{d}: test {m['test_risk']:.3f}, resub {m['est_resub']:.3f}")
    return ClaimResult(text, test, ok, "; ".join(parts))


@claim("estimates_oob_tracks_test")
def estimates_oob_tracks_test(res: ExperimentResults) -> ClaimResult:
    text = "The out-of-bag error estimates the test error (RCP209; Fromont)"
    test = "|mean OOB error - mean test error| <= 0.02 on every dataset"
    means = _estimate_means(res)
    if not means:
        return ClaimResult(text, test, None, "no runs")
    diffs = {d: m["est_oob"] - m["test_risk"] for d, m in means.items()}
    return ClaimResult(text, test, all(abs(v) <= 0.02 for v in diffs.values()),
                       "OOB - test: " + ", ".join(f"{d} {v:+.3f}" for d, v in diffs.items()))


@claim("estimates_oob_close_to_cv")
def estimates_oob_close_to_cv(res: ExperimentResults) -> ClaimResult:
    text = ("With many trees the OOB error is almost identical to cross-validation (RCP209, after HTF09 ch. 15, "
            "which says N-fold CV; we compare with 10-fold CV)")
    test = "|mean OOB error - mean 10-fold CV error| <= 0.01 on every dataset"
    means = _estimate_means(res)
    if not means:
        return ClaimResult(text, test, None, "no runs")
    diffs = {d: m["est_oob"] - m["est_cv"] for d, m in means.items()}
    return ClaimResult(text, test, all(abs(v) <= 0.01 for v in diffs.values()),
                       "OOB - CV: " + ", ".join(f"{d} {v:+.3f}" for d, v in diffs.items()))


@claim("estimates_632_optimistic")
def estimates_632_optimistic(res: ExperimentResults) -> ClaimResult:
    text = ("When the empirical risk is about 0 the .632 correction is too strong (it underestimates) and .632+ "
            "should be used (Fromont)")
    test = ("on every dataset whose mean resubstitution error is <= 0.01: mean .632 < mean test error - 0.01, and "
            ".632+ is closer to the test error than .632")
    means = _estimate_means(res)
    rows = {d: m for d, m in means.items() if m.get("est_resub", 1.0) <= 0.01}
    if not rows:
        return ClaimResult(text, test, None, "no dataset with resubstitution error <= 0.01")
    ok, parts = True, []
    for d, m in rows.items():
        e632, e632p, t = m["est_632"], m["est_632plus"], m["test_risk"]
        ok &= bool(e632 < t - 0.01 and abs(e632p - t) < abs(e632 - t))
        parts.append(f"{d}: test {t:.3f}, .632 {e632:.3f}, .632+ {e632p:.3f}")
    return ClaimResult(text, test, ok, "; ".join(parts))


@claim("estimates_oob_plateau")
def estimates_oob_plateau(res: ExperimentResults) -> ClaimResult:
    text = "The OOB error decreases and then stabilises as trees are added, so B can be chosen with it (RCP209)"
    test = "mean OOB error at the last tree within 0.01 of its value at half the trees, and below its value at 10"
    parts, ok, seen = [], True, False
    for d in res.datasets:
        o = _mean_curve(res, "rf_estimates", "oob_error", d)
        if o.size < 20:
            continue
        seen = True
        half = o.size // 2
        ok &= bool(abs(o[half - 1] - o[-1]) <= 0.01 and o[-1] < o[9])
        parts.append(f"{d}: {o[9]:.3f}@10, {o[half - 1]:.3f}@{half}, {o[-1]:.3f}@{o.size}")
    if not seen:
        return ClaimResult(text, test, None, "no curves stored")
    return ClaimResult(text, test, ok, "; ".join(parts))


@claim("importance_probes_ranked_low")
def importance_probes_ranked_low(res: ExperimentResults) -> ClaimResult:
    text = ("Gini importance (MDI) and the OOB permutation importance rank the informative variables high (RCP209; "
            "Fromont): tested with pure-noise probe features, which must not rank high")
    test = ("on every dataset and for both measures, no noise probe among the 5 features of highest mean importance "
            "over the splits")
    from forestlab.config import load_group_option

    parts, ok, seen = [], True, False
    for d in res.datasets:
        n_real = int(load_group_option("dataset", d).shape[1])
        for name in ("importance_mdi", "importance_oob_perm"):
            stack = res.curve("rf_importance", name, d)
            if stack.size == 0:
                continue
            seen = True
            mean = np.nanmean(stack, axis=0)
            ranks = np.empty(mean.size, dtype=int)
            ranks[np.argsort(-mean, kind="stable")] = np.arange(1, mean.size + 1)
            best = int(ranks[n_real:].min()) if mean.size > n_real else mean.size + 1
            ok &= best > 5
            parts.append(f"{d}/{name.removeprefix('importance_')}: best probe rank {best} of {mean.size}")
    if not seen:
        return ClaimResult(text, test, None, "no importances stored")
    return ClaimResult(text, test, ok, "; ".join(parts))
