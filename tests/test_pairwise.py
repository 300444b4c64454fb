"""Head-to-head statistics: paired t-tests over seeds, win/tie/loss on rounded means, Wilcoxon across datasets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forestlab.errors import ConfigError
from forestlab.results import ExperimentResults
from forestlab.stats import pair_table, paired_t_test, wilcoxon_pvalue


def _results(values: dict[tuple[str, str], list[float]], metric: str = "test_risk") -> ExperimentResults:
    """Runs of algorithms on datasets: {(dataset, algorithm): metric per repetition}."""
    rows = [{"dataset": d, "algorithm": a, "repetition": rep, metric: v}
            for (d, a), vals in values.items() for rep, v in enumerate(vals)]
    return ExperimentResults.from_frame(pd.DataFrame(rows))


def test_paired_t_matches_scipy_and_handles_constant_differences():
    a, b = np.array([0.10, 0.12, 0.11, 0.13]), np.array([0.12, 0.13, 0.12, 0.16])
    assert paired_t_test(a, b).p == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert paired_t_test(a, a).p == 1.0
    assert paired_t_test(a, a + 0.01).p < 1e-10  # the same shift on every split
    assert np.isnan(paired_t_test(a[:1], b[:1]).p)


def test_wilcoxon_uses_all_datasets_and_is_symmetric():
    d = np.array([0.01, 0.02, -0.005, 0.03, 0.0, 0.015])
    assert wilcoxon_pvalue(d) == pytest.approx(stats.wilcoxon(d, zero_method="zsplit").pvalue)
    assert wilcoxon_pvalue(d) == pytest.approx(wilcoxon_pvalue(-d))
    assert wilcoxon_pvalue(np.zeros(5)) == 1.0


def test_signflip_wilcoxon_is_scipys_pvalue_bit_for_bit():
    """With ties or zeros among <= 13 differences scipy runs a permutation test over the 2**n sign flips, one
    Python call per flip; forestlab enumerates them at once: the p-value must be scipy's, exactly."""
    from forestlab.stats import _signflip_pvalue

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(2, 10))
        d = (rng.integers(-4, 5, size=n) * 0.5 if rng.random() < 0.5 else np.round(rng.normal(size=n), 1))
        d = d.astype(float)
        if np.all(d == 0):
            continue
        p = _signflip_pvalue(d)
        if p is not None:
            assert p == float(stats.wilcoxon(d, zero_method="zsplit").pvalue), d
            checked += 1
    assert checked > 30
    d = np.array([0.01, -0.02, 0.0, 0.03, 0.01, 0.05, -0.01, 0.02, 0.0, 0.04, 0.02, -0.03, 0.01])  # 13, the most
    assert _signflip_pvalue(d) == float(stats.wilcoxon(d, zero_method="zsplit").pvalue)
    assert _signflip_pvalue(np.array([0.1, 0.2, -0.3])) is None  # no tie, no zero: scipy's exact distribution
    assert _signflip_pvalue(np.append(d, 0.06)) is None  # 14: scipy's normal approximation


RISKS = {
    ("d1", "sorf"): [0.10, 0.11, 0.12], ("d1", "rf"): [0.20, 0.21, 0.22],      # clear win (lower risk)
    ("d2", "sorf"): [0.30, 0.30, 0.30], ("d2", "rf"): [0.3001, 0.2999, 0.30],  # tie after rounding
    ("d3", "sorf"): [0.15, 0.25, 0.20], ("d3", "rf"): [0.10, 0.30, 0.19],      # loss, not significant
}


def test_pair_table_counts_and_pairs_by_split():
    table, summary = pair_table(_results(RISKS), "sorf", "rf")
    assert list(table["outcome"]) == ["W", "T", "L"]
    assert list(table["significant"]) == ["W", "", ""]
    assert list(table["higher"]) == ["b", "", ""]
    assert (summary.wins, summary.ties, summary.losses) == (1, 1, 1)
    assert (summary.sig_wins, summary.sig_losses) == (1, 0)
    assert summary.mean_a == pytest.approx(np.mean([0.11, 0.30, 0.20]))
    assert "1 W / 1 T / 1 L" in summary.line() and "lower is better" in summary.line()


def test_higher_is_better_metrics_turn_wins_around():
    """The same numbers read as AUC (higher is better): the win becomes a loss, and vice versa."""
    table, summary = pair_table(_results(RISKS, "test_auc"), "sorf", "rf", "test_auc")
    assert list(table["outcome"]) == ["L", "T", "W"]
    assert list(table["significant"]) == ["L", "", ""]
    assert (summary.wins, summary.losses, summary.sig_losses) == (1, 1, 1)
    assert "higher is better" in summary.line()


def test_unknown_direction_is_refused():
    with pytest.raises(ConfigError, match="higher is better"):
        pair_table(_results(RISKS, "c"), "sorf", "rf", "c")


def test_unpaired_runs_are_left_out():
    res = _results({("d1", "sorf"): [0.1, 0.2, 0.3], ("d1", "rf"): [0.2, 0.3]})
    table, _ = pair_table(res, "sorf", "rf")
    assert table.loc[0, "n"] == 2
    assert table.loc[0, "mean_a"] == pytest.approx(0.15)


def test_best_marks_follow_the_metric_direction(tmp_path):
    from forestlab.report.tables import render_tables

    spec = {"name": "t", "mark_best": "test_auc",
            "cells": [{"algorithm": "sorf", "metric": "test_auc"}, {"algorithm": "rf", "metric": "test_auc"}]}
    res = ExperimentResults.from_frame(_results(RISKS, "test_auc").runs, spec={"tables": [spec]})
    md = render_tables(res, tmp_path)[0].read_text()
    rows = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| d")}
    assert "▸0.210" in rows["d1"] and "▸0.110" not in rows["d1"]  # higher AUC is better
    assert "▸0.300" in rows["d2"]  # a tie after rounding: both marked
    assert rows["d2"].count("▸") == 2
    assert "higher is better" in md
