"""The front page says what reproduced, honestly (issue 21, parts 1 and 5): agreement with both sides' uncertainty,
a score of the primary cells only, each claim counted once, runs planned at the configured sizes, and titles of
smoke runs that say the sizes they had. Quick: no run, no store."""

from __future__ import annotations

import math

import pytest

from forestlab.config import load_experiment
from forestlab.report.model import (
    AGREE,
    BINOMIAL,
    DISAGREE,
    SINGLE_SPLIT,
    TWO_SAMPLE,
    Agreement,
    Comparison,
    read_layout,
    read_published,
    shrunk_spec,
    standardised,
)
from forestlab.report.site import SPLIT, ExperimentPart, StudyView, _index_page, _study_summary
from forestlab.studies import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, NOT_TESTED

TABLE = {"name": "t", "title": "t", "published": "t.csv", "cells": [
    {"algorithm": "rf", "metric": "max_depth", "role": "diagnostic"},
    {"algorithm": "rf", "metric": "test_risk"},
    {"algorithm": "sorf", "metric": "c", "role": "hyperparameter"},
    {"algorithm": "sorf", "metric": "test_risk"}]}


def _comparison(column: int, published: float, value: float, spread: float, n: int, *,
                published_spread: float = math.nan, published_n: int = 0, table: dict | None = None) -> Comparison:
    col = read_layout(table or TABLE).columns[column]
    return Comparison("d", col.algorithm, col.quantity, col, published, published_spread, "", value, spread, n,
                      published_n=published_n)


def test_the_issues_example_is_a_two_sample_disagreement():
    # TRK_CART on GaussEasy20d: published 0.620 ± 0.010 over 30 runs, ours 0.630 ± 0.020 over 30
    c = _comparison(1, 0.620, 0.630, 0.020, 30, published_spread=0.010, published_n=30)
    expected = 0.010 / math.sqrt(0.010 ** 2 / 30 + 0.020 ** 2 / 30)  # 2.449...
    assert c.method == TWO_SAMPLE == "two-sample"
    assert c.z == pytest.approx(expected) and c.z == pytest.approx(2.449, abs=1e-3)
    assert c.mark == DISAGREE and c.symbol == "✗"  # within 2 of OUR std (0.01 < 0.04): it was ✓ before
    assert c.published_text == "0.620 ± 0.010 (n = 30)" and c.z_text == "+2.45"
    # the published file says so: its std and its n
    row = read_published("depecker2010", "table4_2.csv").query(
        "dataset == 'gauss_easy20d' and algorithm == 'trk_cart' and metric == 'test_auc'").iloc[0]
    assert (row["value"], row["std"], row["n"]) == (0.620, 0.010, 30)


def test_a_published_rate_is_two_proportions():
    # published 0.90 over 100 samples; ours 0.80 over 100: pooled 0.85, se = sqrt(0.85 * 0.15 * 2 / 100)
    c = _comparison(1, 0.90, 0.80, 0.40, 100, published_n=100)
    assert c.method == BINOMIAL
    assert c.z == pytest.approx(-0.10 / math.sqrt(0.85 * 0.15 * 0.02)) and c.z == pytest.approx(-1.980, abs=1e-3)
    assert c.mark == AGREE
    c = _comparison(1, 0.90, 0.78, 0.41, 100, published_n=100)  # pooled 0.84: z = -2.315
    assert c.z == pytest.approx(-0.12 / math.sqrt(0.84 * 0.16 * 0.02)) and c.mark == DISAGREE
    # every rate of Table 6.1 is over its B = 100 samples
    published = read_published("depecker2010", "table6_1.csv")
    assert set(published["n"]) == {100}


def test_a_published_single_split_is_judged_against_our_spread():
    c = _comparison(1, 0.70, 0.75, 0.02, 10)
    assert (c.method, c.z, c.mark) == (SINGLE_SPLIT, pytest.approx(2.5), DISAGREE)
    assert _comparison(1, 0.70, 0.73, 0.02, 10).mark == AGREE
    assert standardised(0.5, 0.5, 0.0, 10) == (SINGLE_SPLIT, 0.0)  # no spread, no difference
    assert math.isinf(standardised(0.5, 0.6, 0.0, 10, published_spread=0.0, published_n=5)[1])


def test_only_primary_cells_are_scored():
    comps = [_comparison(0, 36.0, 12.0, 1.0, 10),  # a tree depth: far off, a diagnostic
             _comparison(1, 0.10, 0.11, 0.02, 10),  # a test risk: agrees
             _comparison(2, 1.5, 1.4, 0.2, 10),  # c: a hyperparameter
             _comparison(3, 0.10, 0.30, 0.02, 10)]  # a test risk: disagrees
    assert [c.scored for c in comps] == [False, True, False, True]
    agreement = Agreement.of(comps)
    assert (agreement.counts[AGREE], agreement.counts[DISAGREE], agreement.unscored_total) == (1, 1, 2)
    assert agreement.text(unscored=False) == "1 of 2 primary cells agree, 50%"
    assert "2 hyperparameter, diagnostic or other-reading cells shown, unscored (1 of 2 agree)" in agreement.text()
    # another reading of a published table is not scored, whatever its cells
    other = {**TABLE, "scored": False}
    assert not _comparison(1, 0.10, 0.11, 0.02, 10, table=other).scored


def test_zirakiza2013_scores_test_risks_not_depths_nor_hyperparameters():
    exp = load_experiment(["experiment=uci_binary"])
    layout = read_layout(exp.tables[0])
    assert {c.quantity for c in layout.columns if c.scored} == {"test_risk"}
    assert {c.quantity: c.role for c in layout.columns if not c.scored} == {
        "max_depth": "diagnostic", "c": "hyperparameter", "mu": "hyperparameter"}


def _part(name: str, claims: dict[str, str], planned: int = 10) -> ExperimentPart:
    verdicts = dict.fromkeys((HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTED), 0)
    for v in claims.values():
        verdicts[v] += 1
    return ExperimentPart(name, "zirakiza2013", has_plan=True, counts={"planned": planned, "done": planned},
                          verdicts=verdicts, claims=claims, planned_full=planned * 3, compute_seconds=61.0)


def test_claims_shared_by_experiments_are_counted_once():
    # zirakiza2013's Tables 7.1-7.3 each judge `hyperparameters` and `overall` (their claims combine the three)
    parts = [_part("uci_binary", {"full_trees_rf_best": HOLDS, "hyperparameters": HOLDS, "overall": DOES_NOT_HOLD}),
             _part("uci_binary_stumps", {"stumps_sorf_beats_rf": INCONCLUSIVE, "hyperparameters": HOLDS,
                                         "overall": DOES_NOT_HOLD}),
             _part("uci_binary_mixed", {"mixed": INCONCLUSIVE, "hyperparameters": HOLDS, "overall": DOES_NOT_HOLD,
                                        "oob_tracks_test": NOT_TESTED}),
             _part("zirakiza2013_fig4_1", {"oob_tracks_test": HOLDS})]
    study = StudyView("zirakiza2013", "z", None, parts)
    counts = study.verdicts()
    assert (counts[HOLDS], counts[DOES_NOT_HOLD], counts[INCONCLUSIVE], counts[NOT_TESTED], counts[SPLIT]) == \
        (3, 1, 2, 0, 0)  # not 5 / 3 / 2 (`hyperparameters` and `overall` three times); a NOT TESTED beside a HOLDS
    index = _index_page([study], "", None, "")
    assert ">3 holds<" in index and ">1 does not hold<" in index and ">2 inconclusive<" in index
    summary = _study_summary(study)
    assert ">3 holds<" in summary and "120 planned at the configured sizes" in summary
    assert "40 done" in summary and "compute time 4 min 04 s" in summary
    # experiments sharing a claim but judging it differently: said, counted once
    parts[1] = _part("uci_binary_stumps", {"hyperparameters": INCONCLUSIVE, "overall": DOES_NOT_HOLD})
    study = StudyView("zirakiza2013", "z", None, parts)
    counts = study.verdicts()
    assert (counts[HOLDS], counts[SPLIT]) == (2, 1)
    assert study.split_claims() == ["hyperparameters (HOLDS in uci_binary, uci_binary_mixed; INCONCLUSIVE in "
                                    "uci_binary_stumps)"]
    assert "1 judged differently by the experiments sharing it" in _index_page([study], "", None, "")


def test_runs_planned_are_computed_without_a_store():
    # depecker2010's experiments plan about 15,000 runs at their configured sizes, whatever is stored
    names = ["depecker2010_table4_2", "depecker2010_table6_1", "depecker2010_table_a1"]
    planned = {n: load_experiment([f"experiment={n}"]).n_runs for n in names}
    assert planned == {"depecker2010_table4_2": 720, "depecker2010_table6_1": 8000, "depecker2010_table_a1": 1820}


def test_smoke_titles_say_the_sizes_they_had():
    exp = load_experiment(["experiment=pisetta2010_table1", "debug=smoke"])
    spec = {"tables": [{"name": "t", "title": "RF, 300 trees, 20 splits"}], "figures": [{"name": "f"}]}
    out = shrunk_spec(spec, exp.shrunk, exp.limits.as_dict(), exp.seeds)
    sizes = "1 seed, at most 2 datasets, at most 10 trees per ensemble, 2 folds of each k-fold partition"
    assert out["tables"][0]["title"] == (f"RF, 300 trees, 20 splits [SMOKE RUNS: {sizes}; any size named before is "
                                         "the full experiment's]")
    assert out["figures"][0]["title"].startswith("f [SMOKE RUNS: 1 seed")
    assert spec["tables"][0]["title"] == "RF, 300 trees, 20 splits"  # the experiment's own spec is untouched
    built = shrunk_spec({"tables": list(exp.tables)}, exp.shrunk, exp.limits.as_dict(), exp.seeds)  # TableSpecs
    assert built["tables"][0].title == f"{exp.tables[0].title} [SMOKE RUNS: {sizes}; any size named before is the " \
        "full experiment's]"
    real = load_experiment(["experiment=pisetta2010_table1"])
    assert shrunk_spec(spec, real.shrunk, real.limits.as_dict(), real.seeds) == spec
