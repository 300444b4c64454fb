"""wu2021, Wu, Masegosa, Lorenzen, Igel, Seldin, "Chebyshev-Cantelli PAC-Bayes-Bennett inequality for the weighted
majority vote" (NeurIPS 2021), random-forest experiment: the uniform vote of 100 trees against the weightings that
minimise the first-order (FO), tandem (TND), Chebyshev-Cantelli tandem (CCTND) and Chebyshev-Cantelli
PAC-Bayes-Bennett (CCPBB) bounds, read out of bag, as claims tested on our runs (experiment ``wu2021_rfc``).

The tests and thresholds are ours, fixed before the runs, and written out in experiments/wu2021/README.md; they are
the paper's sentences made quantitative. Everything is computed on the per-dataset means and standard deviations over
the repeats. The uniform vote is the algorithm ``rf`` (the same trees: every weighting shares rf's forest).
"""

from __future__ import annotations

import numpy as np

from forestlab.results import ExperimentResults, summarise
from forestlab.studies import ClaimFunction, ClaimResult, Study, claim_registrar, finite_values, register, verdict

UNIFORM = "rf"
FIRST_ORDER = "fo"
SECOND_ORDER = ("tnd", "cctnd", "ccpbb")
#: each weighting's own bound, as stored (forestlab.learners._pacbayes: the ``oob_bound_*`` certificates)
OWN_BOUND = {"fo": "oob_bound_fo", "tnd": "oob_bound_tnd", "cctnd": "oob_bound_cctnd", "ccpbb": "oob_bound_ccpbb"}
#: a gap to the uniform vote smaller than this is no gap, whatever the seed spread (a spread of 0, as on Mushroom)
FLOOR = 0.001

CLAIMS: dict[str, ClaimFunction] = {}
claim = claim_registrar(CLAIMS)


def risk_summaries(res: ExperimentResults, algorithms: tuple[str, ...],
                   metric: str = "test_risk") -> dict[str, dict[str, tuple[float, float, int]]]:
    """Per dataset where every one of ``algorithms`` has a finite value: algorithm -> (mean, std, n) of ``metric``."""
    values = {a: finite_values(res, a, metric) for a in algorithms}
    common = [d for d in res.datasets if all(d in values[a] for a in algorithms)]
    return {d: {a: summarise(values[a][d]) for a in algorithms} for d in common}


def _n_repetitions(res: ExperimentResults) -> int:
    return int(res.runs["repetition"].nunique()) if len(res.runs) and "repetition" in res.runs else 0


@claim("wu_first_order_degrades")
def wu_first_order_degrades(res: ExperimentResults) -> ClaimResult:
    text = ("Minimising the first-order bound degrades the majority vote: rho_lambda's test risk is clearly above the "
            "uniform vote's (Wu et al. 2021, §6 and the rfc table)")
    test = (f"FO mean test risk - uniform mean > max(2 std of the uniform vote over the repeats, {FLOOR}) on at least "
            "half the datasets")
    table = risk_summaries(res, (UNIFORM, FIRST_ORDER))
    if not table:
        return ClaimResult(text, test, None, "needs rf and fo runs on a common dataset")
    worse = []
    parts = []
    for d, s in table.items():
        gap, spread = s[FIRST_ORDER][0] - s[UNIFORM][0], s[UNIFORM][1]
        if gap > max(2 * spread, FLOOR):
            worse.append(d)
        parts.append(f"{d} {gap:+.4f} (uniform std {spread:.4f})")
    evidence = f"degraded on {len(worse)}/{len(table)}; FO - uniform: " + ", ".join(parts)
    # a spread needs two repeats; "at least half" can go either way on a single dataset
    return verdict(text, test, len(worse) >= len(table) / 2, evidence, datasets=(len(table), 1),
                   repeats=(_n_repetitions(res), 2))


@claim("wu_second_order_keep_uniform")
def wu_second_order_keep_uniform(res: ExperimentResults) -> ClaimResult:
    text = ("The second-order weightings (TND, CCTND, CCPBB) keep the uniform vote's test risk within its spread over "
            "the repeats, while certifying the vote with a non-trivial bound (Wu et al. 2021, §6)")
    test = (f"on every dataset and for each of TND, CCTND, CCPBB: |mean test risk - uniform mean| <= max(1 std of the "
            f"uniform vote, {FLOOR}), and the mean of its own bound (out of bag, delta = 0.05) < 1")
    table = risk_summaries(res, (UNIFORM, *SECOND_ORDER))
    if not table:
        return ClaimResult(text, test, None, "needs rf, tnd, cctnd and ccpbb runs on a common dataset")
    bounds = {a: finite_values(res, a, OWN_BOUND[a]) for a in SECOND_ORDER}
    outside, vacuous, parts = [], [], []
    for d, s in table.items():
        spread = max(s[UNIFORM][1], FLOOR)
        gaps = []
        for a in SECOND_ORDER:
            gap = s[a][0] - s[UNIFORM][0]
            bound = float(np.mean(bounds[a][d])) if d in bounds[a] else float("nan")
            if abs(gap) > spread:
                outside.append(f"{a} on {d}")
            if not bound < 1:
                vacuous.append(f"{a} on {d}")
            gaps.append(f"{a} {gap:+.4f} (bound {bound:.3f})")
        parts.append(f"{d} (uniform std {s[UNIFORM][1]:.4f}): " + ", ".join(gaps))
    evidence = (f"outside the spread: {', '.join(outside) or 'none'}; bound >= 1: {', '.join(vacuous) or 'none'}; "
                + "; ".join(parts))
    return verdict(text, test, not outside and not vacuous, evidence, datasets=(len(table), 1),
                   repeats=(_n_repetitions(res), 2))


@claim("wu_ccpbb_closest_to_uniform")
def wu_ccpbb_closest_to_uniform(res: ExperimentResults) -> ClaimResult:
    text = "Of the optimised weightings, CCPBB's test risk is the closest to the uniform vote's (Wu et al. 2021, §6)"
    test = ("mean over the datasets of |mean test risk - uniform mean|: CCPBB's is the smallest of FO, TND, CCTND "
            "and CCPBB (ties at 4 decimals count as smallest)")
    others = (FIRST_ORDER, *SECOND_ORDER)
    table = risk_summaries(res, (UNIFORM, *others))
    if not table:
        return ClaimResult(text, test, None, "needs rf, fo, tnd, cctnd and ccpbb runs on a common dataset")
    distance = {a: float(np.mean([abs(s[a][0] - s[UNIFORM][0]) for s in table.values()])) for a in others}
    holds = round(distance["ccpbb"], 4) <= min(round(v, 4) for v in distance.values())
    evidence = (f"mean |risk - uniform| over {len(table)} datasets: "
                + ", ".join(f"{a} {v:.4f}" for a, v in distance.items()))
    return verdict(text, test, holds, evidence, datasets=(len(table), 1))


STUDY = register(Study(
    key="wu2021",
    title="Chebyshev-Cantelli PAC-Bayes-Bennett inequality for the weighted majority vote (NeurIPS 2021): uniform "
          "vote vs FO, TND, CCTND and CCPBB weightings of a random forest, with their bounds",
    claims=CLAIMS,
))
