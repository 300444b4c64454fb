"""pisetta2010, "Construction de noyaux … à partir d'arbres aléatoires" (Table 1): the SVM on the kernel of a random
forest against the forest's vote and against the published MKL column, as claims tested on our runs.

Tests fixed before the runs; experiments/pisetta2010/README.md lists them. '*' = two-sided t-test at 5%: paired over
our splits for the SVM against the vote (:func:`forestlab.stats.pair_table`), one-sample against the published MKL
mean (MKL is a literature number without per-split values). The published table is
``experiments/pisetta2010/published/table1.csv``.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pandas as pd

from forestlab.errors import ConfigError
from forestlab.results import ExperimentResults
from forestlab.stats import one_sample_t_test, pair_table
from forestlab.studies import (
    ClaimFunction,
    ClaimResult,
    Study,
    claim_registrar,
    finite_values,
    mean_curve,
    register,
    verdict,
)

PISETTA_VOTE, PISETTA_SVM = "rf_pisetta", "forest_svm"
PISETTA_MKL_DATASETS = ("sonar", "liver", "parkinsons", "pima", "ionosphere")

CLAIMS: dict[str, ClaimFunction] = {}
claim = claim_registrar(CLAIMS)


_PUBLISHED: dict[tuple[str, int, int], dict[tuple[str, str, str], float]] = {}
_LAST_PAIRS: list[Any] = [None, None, None]  # weak reference to the results, their runs, their SVM-vote table


def _pisetta_published() -> dict[tuple[str, str, str], float]:
    """{(dataset, algorithm, metric): value} of the published Table 1 ({} if the file is missing); read once per
    version of the file (the claims are re-evaluated on hundreds of resamples)."""
    path = STUDY.published_dir / "table1.csv"
    try:
        stat = path.stat()
    except OSError:
        stat = None
    key = (str(path), stat.st_mtime_ns, stat.st_size) if stat is not None else None
    if key is not None and key in _PUBLISHED:
        return _PUBLISHED[key]
    try:
        table = STUDY.read_published("table1.csv")
    except ConfigError:
        return {}
    values = {(r.dataset, r.algorithm, r.metric): float(r.value) for r in table.itertuples()}
    if key is not None:
        _PUBLISHED.clear()
        _PUBLISHED[key] = values
    return values


def _svm_vs_vote(res: ExperimentResults) -> pd.DataFrame:
    """Per dataset with at least two paired splits: the SVM (a) against the vote (b) on test accuracy, paired t-test;
    ``higher`` says which side is significantly more accurate. Three claims read it: the table of the last results
    asked for is kept."""
    ref, runs, table = _LAST_PAIRS
    if ref is not None and ref() is res and runs is res.runs:
        return table
    table = pair_table(res, PISETTA_SVM, PISETTA_VOTE, "test_accuracy")[0]
    table = table[table["n"] >= 2]
    _LAST_PAIRS[:] = [weakref.ref(res), res.runs, table]
    return table


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
    # significant wins on 4 datasets need 4 datasets with paired splits
    return verdict(text, test, len(wins) >= 4, evidence, datasets_with_paired_splits=(len(table), 4))


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
    return verdict(text, test, losses.empty, evidence, datasets_with_paired_splits=(len(table), 1))


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
    # "every dataset but at most one" cannot fail on a single dataset
    return verdict(text, test, len(behind) <= 1, evidence, datasets_with_paired_splits=(len(table), 2))


def _vs_mkl(res: ExperimentResults, algorithm: str) -> list[tuple[str, float, float, Any]]:
    published = _pisetta_published()
    accuracies = finite_values(res, algorithm, "test_accuracy")
    out = []
    for d in PISETTA_MKL_DATASETS:
        mkl = published.get((d, "mkl", "test_accuracy"))
        if d not in res.datasets or mkl is None:
            continue
        vals = accuracies.get(d, np.empty(0))
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
    return verdict(text, test, not sig, evidence, MKL_datasets_with_2_or_more_splits=(len(rows), 1))


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
    # significantly above MKL on 2 datasets needs 2 of them
    return verdict(text, test, len(wins) >= 2, evidence, MKL_datasets_with_2_or_more_splits=(len(rows), 2))


@claim("pisetta_c_insensitive")
def pisetta_c_insensitive(res: ExperimentResults) -> ClaimResult:
    text = "The differences between the values of C were not very large (pisetta2010 §5)"
    test = ("the SVM refitted with each C in {1, 10, 100, 10000} on the same forest: max - min over C of the mean "
            "test accuracy <= 0.01 on every dataset")
    parts, spreads, n_c = [], [], []
    for d in res.datasets:
        means = mean_curve(res, PISETTA_SVM, "test_accuracy_by_C", d)
        if means.size == 0:
            continue
        spreads.append(float(np.nanmax(means) - np.nanmin(means)) if np.isfinite(means).any() else float("nan"))
        n_c.append(int(np.isfinite(means).sum()))
        parts.append(f"{d} {spreads[-1]:.3f}")
    if not spreads:
        return ClaimResult(text, test, None, "no per-C accuracies stored")
    # one value of C has no spread: the test needs two on every dataset
    return verdict(text, test, max(spreads) <= 0.01, "spread over C: " + ", ".join(parts),
                   values_of_C=(min(n_c), 2))


# -- beyond the study (ours, issue 23): the forest kernels of today (experiment pisetta2010_modern_kernels) ------------
#: The SVM on Breiman's kernel (the paper's count) and on today's kernels of the same trees.
KERNEL_SVMS = {"forest_svm": "Breiman", "forest_svm_kerf": "KeRF", "forest_svm_rfgap": "RF-GAP"}
NEW_KERNEL_SVMS = ("forest_svm_kerf", "forest_svm_rfgap")


def _mean_ranks(res: ExperimentResults, algorithms: tuple[str, ...]) -> tuple[dict[str, float], dict[str, float], int]:
    """Per algorithm, the mean test accuracy over the datasets where all ran and the mean rank (1 = most accurate,
    ties shared), and how many datasets that is."""
    means = {a: {d: float(v.mean()) for d, v in finite_values(res, a, "test_accuracy").items()} for a in algorithms}
    common = [d for d in res.datasets if all(d in m for m in means.values())]
    if not common:
        return {}, {}, 0
    table = pd.DataFrame({a: [means[a][d] for d in common] for a in algorithms}, index=common)
    ranks = table.round(3).rank(axis=1, ascending=False).mean()
    return {a: float(table[a].mean()) for a in algorithms}, {a: float(ranks[a]) for a in algorithms}, len(common)


@claim("modern_kernels_best_kernel")
def modern_kernels_best_kernel(res: ExperimentResults) -> ClaimResult:
    text = ("Beyond the study (ours): Breiman's kernel, the paper's, still serves the forest-kernel SVM best: neither "
            "KeRF (Scornet 2016) nor RF-GAP (Rhodes et al. 2023), read from the same trees, does better")
    test = ("paired two-sided t-test over the splits at 5%, each new kernel's SVM against the SVM on Breiman's "
            "kernel: on no more datasets significantly more accurate than significantly less accurate; the best kernel "
            "by mean rank over the datasets is reported")
    means, ranks, n = _mean_ranks(res, tuple(KERNEL_SVMS))
    if not n:
        return ClaimResult(text, test, None, "needs forest_svm, forest_svm_kerf and forest_svm_rfgap runs")
    ok, parts, paired = True, [], n
    for a in NEW_KERNEL_SVMS:
        table = pair_table(res, a, PISETTA_SVM, "test_accuracy")[0]
        table = table[table["n"] >= 2]
        paired = min(paired, len(table))
        wins, losses = int((table["higher"] == "a").sum()), int((table["higher"] == "b").sum())
        ok &= wins <= losses
        parts.append(f"{KERNEL_SVMS[a]} vs Breiman: significantly more accurate on {wins}, less on {losses} of "
                     f"{len(table)}")
    best = min(ranks, key=ranks.get)
    summary = ", ".join(f"{KERNEL_SVMS[a]} {means[a]:.4f} (mean rank {ranks[a]:.2f})" for a in KERNEL_SVMS)
    evidence = (f"best by mean rank: {KERNEL_SVMS[best]}; mean accuracy over {n} datasets: {summary}; "
                + "; ".join(parts))
    # "no more wins than losses" cannot fail without a dataset of paired splits
    return verdict(text, test, ok, evidence, datasets_with_paired_splits=(paired, 1))


@claim("modern_kernels_beat_the_vote")
def modern_kernels_beat_the_vote(res: ExperimentResults) -> ClaimResult:
    text = ("Beyond the study (ours): an SVM on one of today's forest kernels (KeRF or RF-GAP) beats the forest's own "
            "vote, as pisetta2010 found for Breiman's kernel")
    test = ("paired two-sided t-test over the splits at 5%: the SVM on KeRF or the one on RF-GAP is significantly more "
            "accurate than the vote on at least 4 of the 12 datasets (the paper's count for its kernel) and "
            "significantly less accurate on at most 1")
    parts, ok, paired = [], False, None
    for a in NEW_KERNEL_SVMS:
        table = pair_table(res, a, PISETTA_VOTE, "test_accuracy")[0]
        table = table[table["n"] >= 2]
        paired = len(table) if paired is None else min(paired, len(table))
        wins = table[table["higher"] == "a"]["dataset"].tolist()
        losses = table[table["higher"] == "b"]["dataset"].tolist()
        ok |= len(wins) >= 4 and len(losses) <= 1
        parts.append(f"{KERNEL_SVMS[a]}: significant wins on {len(wins)}/{len(table)} ({', '.join(wins) or 'none'}), "
                     f"losses on {len(losses)} ({', '.join(losses) or 'none'}); mean SVM - vote "
                     f"{table['diff'].mean() if len(table) else float('nan'):+.4f}")
    # 4 significant wins need 4 datasets with paired splits
    return verdict(text, test, ok, "; ".join(parts), datasets_with_paired_splits=(paired or 0, 4))


STUDY = register(Study(
    key="pisetta2010",
    title="Construction de noyaux à partir d'arbres aléatoires (paper): RF vote vs SVM on the forest kernel, "
          "Table 1",
    claims=CLAIMS,
))
