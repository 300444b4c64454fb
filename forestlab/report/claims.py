"""Checks of the studies' headline claims on our runs.

Each claim is a function of an :class:`ExperimentResults` returning a :class:`ClaimResult`: the claim in words, the
quantitative test we apply (thresholds are ours and stated), whether it holds, and the evidence. Experiments name the
claims they can test in ``experiment.claims``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
