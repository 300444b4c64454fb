"""Provenance a reader can rely on: what produced each experiment's runs (forestlab version, commit and dirty flag,
package versions), read from the store with runs stored before these were recorded shown as unknown; the rerun
commands, complete; your experiments (``experiment.name=``) on a page of their own. Small hand-made stores: fast."""

from __future__ import annotations

import pandas as pd
import pytest

from forestlab.environment import run_provenance
from forestlab.report import provenance as prov
from forestlab.report.site import YOURS, ExperimentPart, _study_label, gather
from forestlab.results import ExperimentResults
from forestlab.store import Store

OLD = {"key": "old", "status": "done", "experiment": "e", "dataset": "d", "algorithm": "rf", "protocol": "p",
       "seed": 0, "repetition": 0, "spec": {}, "metrics": {"test_risk": 0.2}, "forestlab_version": "0.0.9"}


def _results(tmp_path, keys):
    runs = pd.DataFrame({"key": keys, "dataset": "d", "algorithm": "rf", "repetition": range(len(keys)),
                         "test_risk": 0.2})
    return ExperimentResults.from_frame(runs, name="e", results_dir=tmp_path,
                                        counts={"planned": len(keys), "done": len(keys)})


def test_each_experiment_s_runs_say_what_produced_them_and_older_runs_say_unknown(tmp_path):
    with Store(tmp_path) as store:
        store.put(OLD)  # as a store before schema 4 holds it: no commit, no packages
        for i in range(2):
            store.put({**OLD, "key": f"new{i}", "repetition": i + 1, **run_provenance()})
    runs = prov.runs_provenance(_results(tmp_path, ["old", "new0", "new1"]), "plan")
    here = run_provenance()
    commit = here["git_commit"] + (" (+ uncommitted changes)" if here["git_dirty"] else "")
    assert runs.commits == ((commit, 2), (prov.UNKNOWN, 1))
    assert runs.commits_text() == f"{commit} (2 runs); unknown (1 run stored before forestlab recorded commits)"
    (packages, n), (unknown, m) = runs.packages
    assert packages.startswith(f"python {here['packages']['python']}, ") and n == 2
    assert f"numpy {here['packages']['numpy']}" in packages and f"scikit-learn {here['packages']['scikit-learn']}" \
        in packages
    assert (unknown, m) == (prov.UNKNOWN, 1)
    assert "unknown (1 run stored before forestlab recorded them)" in runs.packages_text()
    assert runs.versions == tuple(sorted({"0.0.9", here["forestlab_version"]}))


def test_rerun_commands_are_complete():
    cmds = prov.commands("uci_binary", ["seeds=3"], n_jobs=2, mirror="/data/mirror")
    assert cmds.run == ("FORESTLAB_DATA_MIRROR=/data/mirror forestlab run experiment=uci_binary seeds=3 "
                        "launcher.n_jobs=2")
    assert cmds.tables == "forestlab tables uci_binary seeds=3"  # reads the store only
    # workers the overrides set are not set twice; no mirror, no prefix
    assert prov.commands("q", ["launcher.n_jobs=4"], n_jobs=4).run == "forestlab run experiment=q launcher.n_jobs=4"
    # an experiment of your own: its whole definition, so that the run needs no store to find it; an override of
    # the report's wins over the recorded one
    mine = prov.commands("mine", ["seeds=5"], n_jobs=1, definition=[
        "experiment=uci_binary", "experiment.datasets=[mydata]", "experiment.name=mine", "seeds=3"])
    assert mine.run == ("forestlab run experiment=uci_binary 'experiment.datasets=[mydata]' experiment.name=mine "
                        "seeds=5 launcher.n_jobs=1")
    assert mine.tables == "forestlab tables mine seeds=5"


def test_your_experiments_are_gathered_apart_from_the_study_they_run(monkeypatch):
    from forestlab.studies import STUDIES

    parts = [ExperimentPart("uci_binary", "zirakiza2013", has_plan=True, counts={"done": 540}),
             ExperimentPart("mine", "zirakiza2013", has_plan=True, counts={"done": 9}),
             ExperimentPart("quickstart", None, has_plan=True, counts={"done": 18})]
    studies = gather(parts)
    by_key = {s.key: s for s in studies}
    assert [p.name for p in by_key["zirakiza2013"].parts] == ["uci_binary"]  # the study's counts: its own runs
    assert [p.name for p in by_key[YOURS].parts] == ["mine"]
    assert [s.key for s in studies] == [*sorted(STUDIES), "other", YOURS]
    assert _study_label(by_key[YOURS]) == "your experiments" and by_key[YOURS].page == "yours.html"
    assert YOURS not in {s.key for s in gather(parts[:1] + parts[2:])}  # no page when there is none


def test_a_package_installed_under_another_distribution_name_is_found():
    """XGBoost comes as the xgboost-cpu wheel on Linux (pyproject): its version is recorded, not "not installed"."""
    import importlib.util

    from forestlab.environment import dist_version, run_packages

    if importlib.util.find_spec("xgboost") is None:
        pytest.skip("xgboost is not installed")
    import xgboost

    assert dist_version("xgboost") == xgboost.__version__
    assert run_packages()["xgboost"] == xgboost.__version__
    assert dist_version("no-such-distribution-here") is None
