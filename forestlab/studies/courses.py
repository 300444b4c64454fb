"""courses: two course texts (RCP209 « Forêts aléatoires », CNAM; M. Fromont, « Apprentissage statistique ») on
bagging, random forests, the out-of-bag error, risk estimators and variable importance, as claims tested on our runs.

Neither source has a results table (no ``published/`` folder): the experiments ``courses_spambase``,
``courses_error_estimates`` and ``courses_importance`` make the courses' statements measurable, and the tests below
(listed in experiments/courses/README.md, fixed before the runs) check them.
"""

from __future__ import annotations

import numpy as np

from forestlab.results import ExperimentResults, summarise
from forestlab.studies import (
    ClaimFunction,
    ClaimResult,
    Study,
    claim_registrar,
    finite_values,
    mean_curve,
    register,
    too_little,
)

#: The fewest trees a curve needs for the plateau tests (their value at 10 trees, and a second half of 10 or more)
MIN_TREES = 20

CLAIMS: dict[str, ClaimFunction] = {}
claim = claim_registrar(CLAIMS)


# -- Spambase: bagging vs random forest vs gradient boosting (courses_spambase) ----------------------------------
@claim("spambase_forests_plateau")
def spambase_forests_plateau(res: ExperimentResults) -> ClaimResult:
    text = ("The test error of bagging and of random forests decreases and then stabilises as trees are added; more "
            "trees do not overfit, and B can be chosen where the OOB error stops decreasing (RCP209; Fromont)")
    test = ("for bagging and the random forest, mean test error at the last tree <= its minimum over the second "
            "half of the trees + 0.005 and < its value at 10 trees; OOB error at the last tree within 0.005 of "
            "its value at half the trees")
    parts, ok, seen, longest = [], True, False, 0
    for d in res.datasets:
        for alg in ("bagging", "rf_course"):
            t = mean_curve(res, alg, "test_error", d)
            o = mean_curve(res, alg, "oob_error", d)
            longest = max(longest, min(t.size, o.size))
            if t.size < MIN_TREES or o.size != t.size:  # too short, or no OOB curve beside it: not tested here
                continue
            seen = True
            half = t.size // 2
            rise = float(t[-1] - np.nanmin(t[half:]))
            drop = float(t[9] - t[-1])
            drift = float(o[half - 1] - o[-1])
            ok &= bool(rise <= 0.005 and drop > 0 and abs(drift) <= 0.005)
            parts.append(f"{d}/{alg}: test {t[9]:.4f}@10 -> {t[-1]:.4f}@{t.size} (rise over 2nd half {rise:+.4f}), "
                         f"OOB@{half} - OOB@{t.size} {drift:+.4f}")
    if not seen:
        return ClaimResult(text, test, None, "no curves stored" if not longest else
                           too_little(trees_in_the_longest_curve=(longest, MIN_TREES)))
    return ClaimResult(text, test, ok, "; ".join(parts))


@claim("spambase_esl_ordering")
def spambase_esl_ordering(res: ExperimentResults) -> ClaimResult:
    text = ("On Spambase, gradient boosting <= random forest < bagging in test error (ESL Fig. 15.1's ordering; the "
            "course page shows the figure but states no ordering)")
    test = "mean test error at the last tree: gboost <= rf_course < bagging"
    parts, ok, seen = [], True, False
    for d in res.datasets:
        last = {a: mean_curve(res, a, "test_error", d) for a in ("bagging", "rf_course", "gboost")}
        if any(v.size == 0 for v in last.values()):
            continue
        seen = True
        e = {a: float(v[-1]) for a, v in last.items()}
        ok &= e["gboost"] <= e["rf_course"] < e["bagging"]
        parts.append(f"{d}: " + ", ".join(f"{a} {v:.4f}" for a, v in e.items()))
    if not seen:
        return ClaimResult(text, test, None, "no curves stored")
    return ClaimResult(text, test, ok, "; ".join(parts))


# -- error estimates of a random forest (courses_error_estimates) --------------------------------------------------
_ESTIMATES = ("est_resub", "est_holdout", "est_cv", "est_oob", "est_loo_boot", "est_632", "est_632plus")


def _estimate_means(res: ExperimentResults, algorithm: str = "rf_estimates") -> dict[str, dict[str, float]]:
    values = {m: finite_values(res, algorithm, m) for m in ("test_risk", *_ESTIMATES)}
    out: dict[str, dict[str, float]] = {}
    for d in res.datasets:
        means = {m: summarise(v[d])[0] for m, v in values.items() if d in v}
        if "test_risk" in means and len(means) > 1:
            out[d] = means
    return out


def _gap_claim(res: ExperimentResults, text: str, test: str, a: str, b: str, tolerance: float,
               label: str) -> ClaimResult:
    """Whether |mean ``a`` - mean ``b``| <= ``tolerance`` on every dataset that has both (the evidence lists the
    differences after ``label``)."""
    means = {d: m for d, m in _estimate_means(res).items() if a in m and b in m}
    if not means:
        return ClaimResult(text, test, None, "no runs" if res.runs.empty else f"no dataset with both {a} and {b}")
    diffs = {d: m[a] - m[b] for d, m in means.items()}
    return ClaimResult(text, test, all(abs(v) <= tolerance for v in diffs.values()),
                       f"{label}: " + ", ".join(f"{d} {v:+.3f}" for d, v in diffs.items()))


@claim("estimates_resub_optimistic")
def estimates_resub_optimistic(res: ExperimentResults) -> ClaimResult:
    text = ("The empirical (resubstitution) risk underestimates the test risk; hold-out, K-fold CV, OOB, the "
            "leave-one-out bootstrap and .632+ are more honest (Fromont, risk estimation)")
    test = ("on every dataset: mean resubstitution error <= mean test error - 0.02, and each of hold-out, CV, OOB, "
            "LOO bootstrap and .632+ is closer to the mean test error than resubstitution")
    means = {d: m for d, m in _estimate_means(res).items() if "est_resub" in m}
    if not means:
        return ClaimResult(text, test, None, "no runs" if res.runs.empty else "no resubstitution error stored")
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
    return _gap_claim(res, text, test, "est_oob", "test_risk", 0.02, "OOB - test")


@claim("estimates_oob_close_to_cv")
def estimates_oob_close_to_cv(res: ExperimentResults) -> ClaimResult:
    text = ("With many trees the OOB error is almost identical to cross-validation (RCP209, after HTF09 ch. 15, "
            "which says N-fold CV; we compare with 10-fold CV)")
    test = "|mean OOB error - mean 10-fold CV error| <= 0.01 on every dataset"
    return _gap_claim(res, text, test, "est_oob", "est_cv", 0.01, "OOB - CV")


@claim("estimates_632_optimistic")
def estimates_632_optimistic(res: ExperimentResults) -> ClaimResult:
    text = ("When the empirical risk is about 0 the .632 correction is too strong (it underestimates) and .632+ "
            "should be used (Fromont)")
    test = ("on every dataset whose mean resubstitution error is <= 0.01: mean .632 < mean test error - 0.01, and "
            ".632+ is closer to the test error than .632")
    means = _estimate_means(res)
    rows = {d: m for d, m in means.items()
            if m.get("est_resub", 1.0) <= 0.01 and "est_632" in m and "est_632plus" in m}
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
    parts, ok, seen, longest = [], True, False, 0
    for d in res.datasets:
        o = mean_curve(res, "rf_estimates", "oob_error", d)
        longest = max(longest, o.size)
        if o.size < MIN_TREES:
            continue
        seen = True
        half = o.size // 2
        ok &= bool(abs(o[half - 1] - o[-1]) <= 0.01 and o[-1] < o[9])
        parts.append(f"{d}: {o[9]:.3f}@10, {o[half - 1]:.3f}@{half}, {o[-1]:.3f}@{o.size}")
    if not seen:
        return ClaimResult(text, test, None, "no curves stored" if not longest else
                           too_little(trees_in_the_longest_curve=(longest, MIN_TREES)))
    return ClaimResult(text, test, ok, "; ".join(parts))


# -- variable importance with noise probes (courses_importance) ----------------------------------------------------
@claim("importance_probes_ranked_low")
def importance_probes_ranked_low(res: ExperimentResults) -> ClaimResult:
    text = ("Gini importance (MDI) and the OOB permutation importance rank the informative variables high (RCP209; "
            "Fromont): tested with pure-noise probe features, which must not rank high")
    test = ("on every dataset and for both measures, no noise probe among the 5 features of highest mean importance "
            "over the splits")
    parts, ok, seen = [], True, False
    for d in res.datasets:
        means = {name: mean_curve(res, "rf_importance", name, d) for name in ("importance_mdi", "importance_oob_perm")}
        if all(mean.size == 0 for mean in means.values()):
            continue
        n_real = res.n_features(d)
        if n_real is None:
            # the probes are the columns after the dataset's own features: without their number, no test
            parts.append(f"{d}: not tested (its number of features was not recorded with the runs)")
            continue
        for name, mean in means.items():
            if mean.size == 0:
                continue
            # a probe can enter the top 5 only if there is one, and stay out of it only if 5 real features can
            # fill it: else this dataset could give only one answer
            why = too_little(noise_probes=(mean.size - n_real, 1), real_features=(n_real, 5))
            if why is not None:
                parts.append(f"{d}/{name.removeprefix('importance_')}: not tested ({why})")
                continue
            seen = True
            ranks = np.empty(mean.size, dtype=int)
            ranks[np.argsort(-mean, kind="stable")] = np.arange(1, mean.size + 1)
            best = int(ranks[n_real:].min())
            ok &= best > 5
            parts.append(f"{d}/{name.removeprefix('importance_')}: best probe rank {best} of {mean.size}")
    if not seen:
        return ClaimResult(text, test, None, "; ".join(parts) or "no importances stored")
    return ClaimResult(text, test, ok, "; ".join(parts))


STUDY = register(Study(
    key="courses",
    title="Two course texts on bagging and random forests (RCP209, CNAM; Fromont): OOB vs cross-validation vs test "
          "error, bagging vs random forest vs boosting on Spambase, variable importance",
    claims=CLAIMS,
))
