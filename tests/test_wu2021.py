"""wu2021 (Wu et al. 2021's random-forest experiment) and the extension columns of zirakiza2013 Tables 7.1-7.4: the
experiment resolves with the paper's protocol, its published tables match its table cells, adding the PAC-Bayes
successors to the zirakiza2013 experiments leaves the keys of the thesis's runs as they were, and the claims' cases
(used by tests/test_claims_can_fail.py: each claim can hold, fail, or be untestable)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest

import forestlab.studies  # noqa: F401  (registers the studies before experiments are built)
from forestlab.config import load_experiment
from forestlab.results import ExperimentResults
from forestlab.runner import plan
from forestlab.studies import HOLDS, get_study, judge
from tests.test_studies import metric_rows, results

Builder = Callable[[], ExperimentResults]
SUCCESSORS = ("fo", "tnd", "cctnd", "ccpbb", "cbound_joint")
DATASETS = ("d1", "d2", "d3")


def risks(means: dict[str, float], bounds: dict[str, float] | None = None, reps: int = 5,
          datasets=DATASETS) -> ExperimentResults:
    """Runs of each algorithm with test risk ``means[a]`` (+ 0.01 per dataset) and own bound ``bounds[a]``."""
    bounds = bounds or {}
    per = {d: {a: {"test_risk": m + 0.01 * i, **({f"oob_bound_{a}": bounds[a]} if a in bounds else {})}
               for a, m in means.items()} for i, d in enumerate(datasets)}
    return results(metric_rows(per, reps=reps))


WU = {"rf": 0.10, "fo": 0.15, "tnd": 0.101, "cctnd": 0.1015, "ccpbb": 0.1005}
WU_BOUNDS = {"fo": 0.4, "tnd": 0.5, "cctnd": 0.5, "ccpbb": 0.6}
STUMPS = {"rf": 0.20, "sorf": 0.17, "mincq": 0.175} | dict.fromkeys(("tnd", "cctnd", "ccpbb", "cbound_joint"), 0.17)


def _without(means: dict[str, float], algorithm: str) -> dict[str, float]:
    return {a: m for a, m in means.items() if a != algorithm}


#: claim -> (holding, failing, too little, phrase of the NOT TESTED reason)
WU_CASES: dict[str, tuple[Builder, Builder, Builder, str]] = {
    "wu_first_order_degrades": (lambda: risks(WU), lambda: risks(WU | {"fo": 0.101}),
                                lambda: risks(WU, reps=1), "too few repeats: 1"),
    "wu_second_order_keep_uniform": (lambda: risks(WU, WU_BOUNDS), lambda: risks(WU | {"tnd": 0.12}, WU_BOUNDS),
                                     lambda: risks(WU, WU_BOUNDS, reps=1), "too few repeats: 1"),
    "wu_ccpbb_closest_to_uniform": (lambda: risks(WU), lambda: risks(WU | {"ccpbb": 0.104}),
                                    lambda: risks(_without(WU, "ccpbb")),
                                    "needs rf, fo, tnd, cctnd and ccpbb runs"),
    "stumps_certified_beat_rf": (lambda: risks(STUMPS), lambda: risks(STUMPS | {"cctnd": 0.20}),
                                 lambda: risks(_without(STUMPS, "cbound_joint")),
                                 "needs rf, tnd, cctnd, ccpbb and cbound_joint runs"),
    "sorf_tracks_tnd": (lambda: risks({"sorf": 0.10, "tnd": 0.105}), lambda: risks({"sorf": 0.10, "tnd": 0.13}),
                        lambda: risks({"sorf": 0.10}), "needs sorf and tnd runs"),
}


def test_the_second_order_claim_needs_a_non_trivial_bound() -> None:
    """Within the spread but with a vacuous certificate (>= 1): the second-order claim does not hold."""
    assert judge("wu_second_order_keep_uniform", risks(WU, WU_BOUNDS), n_resamples=0).verdict == HOLDS
    vacuous = judge("wu_second_order_keep_uniform", risks(WU, WU_BOUNDS | {"ccpbb": 1.0}), n_resamples=0)
    assert vacuous.result.holds is False and "bound >= 1: ccpbb on d1" in vacuous.result.evidence


def test_wu2021_rfc_has_the_protocol_of_the_paper() -> None:
    exp = load_experiment(["experiment=wu2021_rfc"])
    assert exp.study == "wu2021" and exp.seeds == 10
    assert [d.name for d in exp.datasets] == ["adult_data", "mushroom", "letters", "satimage", "mnist"]
    assert [a.name for a in exp.algorithms] == ["rf", "fo", "tnd", "cctnd", "ccpbb", "cbound_joint"]
    proto = exp.protocol.as_dict()
    assert (proto["kind"], proto["train_size"], proto["stratify"]) == ("holdout", 0.8, True)
    for alg in exp.algorithms:
        assert alg.seed_tag == "forest"  # one forest per split, weighed six ways
        assert {k: alg.params[k] for k in ("regime", "n_estimators", "max_features", "criterion")} == {
            "regime": "full", "n_estimators": 100, "max_features": "sqrt", "criterion": "gini"}
    assert {d.name: tuple(d.cfg["shape"]) for d in exp.datasets} == {
        "adult_data": (32561, 14), "mushroom": (8124, 22), "letters": (20000, 16), "satimage": (6435, 36),
        "mnist": (70000, 784)}


@pytest.mark.parametrize("experiment", ["wu2021_rfc", "uci_binary"])
def test_every_published_cell_is_a_cell_of_its_table(experiment: str) -> None:
    """Each published number names a dataset of the experiment and an (algorithm, metric) one of its table's cells
    shows, so ``forestlab compare`` puts every one beside our runs."""
    exp = load_experiment([f"experiment={experiment}"])
    datasets = {d.name for d in exp.datasets}
    tables = [t for t in exp.tables if t.published]
    assert tables
    for table in tables:
        published = get_study(exp.study).read_published(table.published)
        shown = {(c.algorithm, c.metric) for c in table.cells}
        assert set(published["dataset"]) <= datasets, table.name
        assert set(zip(published["algorithm"], published["metric"], strict=True)) <= shown, table.name
        assert pd.to_numeric(published["value"]).notna().all()


def test_wu_published_tables_as_in_the_digest() -> None:
    study = get_study("wu2021")
    risk = study.read_published("risk.csv").set_index(["dataset", "algorithm"])
    bounds = study.read_published("bounds.csv").set_index(["dataset", "algorithm"])
    assert len(risk) == 25 and len(bounds) == 20
    assert (risk.loc[("mnist", "fo"), "value"], risk.loc[("mnist", "fo"), "std"]) == (0.16, 0.0352)
    assert (bounds.loc[("adult_data", "ccpbb"), "value"], bounds.loc[("satimage", "fo"), "std"]) == (0.5976, 0.0075)


@pytest.mark.parametrize(("experiment", "thesis"), [("uci_binary_stumps", ("rf", "sorf", "mincq")),  # and its base
                                                    ("uci_multiclass", ("rf", "sorf"))])
def test_the_successors_leave_the_thesis_runs_as_they_were(experiment: str, thesis: tuple[str, ...]) -> None:
    """The five successors added to a zirakiza2013 experiment add runs and change none of the thesis's: the runs of
    rf, sorf (and mincq) have the keys they have without them, and every weighting shares their forest."""
    full = load_experiment([f"experiment={experiment}"])
    assert [a.name for a in full.algorithms] == [*thesis, *SUCCESSORS]
    assert {a.seed_tag for a in full.algorithms} == {"forest"}
    alone = load_experiment([f"experiment={experiment}", f"experiment.algorithms=[{','.join(thesis)}]"])
    keys = {s.key for s in plan(full) if s.algorithm in thesis}
    assert keys == {s.key for s in plan(alone)}
    names = {t.name for t in full.tables}
    number = {"uci_binary_stumps": "7_2", "uci_multiclass": "7_4"}[experiment]
    assert {f"table{number}_successors", f"table{number}_certificates"} <= names
    for table in full.tables:  # a table with a successor's column says it is beyond the thesis
        if any(c.algorithm in SUCCESSORS for c in table.cells):
            assert "beyond the thesis" in table.title, table.name


def test_viallard_numbers_as_in_the_digest() -> None:
    """Viallard's binary-tree table (digest's second table): the uniform vote's risk, TND's and C-bound joint's risk
    and bound on the six datasets uci_binary shares with it; a TND bound above 1 is kept as printed."""
    table = get_study("zirakiza2013").read_published("viallard_binary_tree.csv")
    assert sorted(set(table["dataset"])) == ["credit_a", "haberman", "heart", "tictactoe", "usvotes", "wdbc"]
    cell = table.set_index(["dataset", "algorithm", "metric"])["value"]
    assert (cell[("credit_a", "rf", "test_risk")], cell[("wdbc", "cbound_joint", "oob_bound_cbound_joint")],
            cell[("haberman", "tnd", "oob_bound_tnd")]) == (0.142, 0.48, 1.59)
    assert len(table) == 6 + 2 * 12
