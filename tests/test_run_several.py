"""`forestlab run experiment=a,b,c`: several experiments' runs in one pool of workers (what `make tables` runs)."""

from __future__ import annotations

import sqlite3

import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from forestlab.config import load_experiment
from forestlab.errors import ConfigError
from forestlab.runner import run_experiment, run_experiments

runner = CliRunner()
SMALL = ["seeds=2", "limits.max_estimators=10"]  # quickstart: 2 datasets x 3 learners x 2 seeds = 12 runs


def _stored(workdir) -> list[tuple[str, str, str]]:
    con = sqlite3.connect(workdir / "results" / "runs.sqlite")
    try:
        return con.execute("SELECT key, experiment, metrics FROM runs WHERE status = 'done' ORDER BY key").fetchall()
    finally:
        con.close()


def test_one_pool_runs_a_shared_run_once_and_counts_it_for_each(workdir):
    """Two experiments planning the same runs (as depecker2010_table_a3 plans Table A.1's): each run once, in one
    loky pool, credited to both summaries and stored under the first one's name, with the numbers a run of the
    experiment alone gives."""
    first = load_experiment(["experiment=quickstart", *SMALL, "launcher.n_jobs=2"])
    copy = load_experiment(["experiment=quickstart", "experiment.name=qs_copy", *SMALL, "launcher.n_jobs=2"])
    events = []
    summaries = run_experiments([first, copy], on_event=events.append)
    assert [(s.planned, s.done, s.already_done, s.failed) for s in summaries] == [(12, 12, 0, 0), (12, 12, 0, 0)]
    assert summaries[0].keys == summaries[1].keys
    started = [e for e in events if type(e).__name__ == "ExperimentStarted"]
    assert [(e.experiment, e.to_run) for e in started] == [("quickstart", 12), ("qs_copy", 0)]
    assert sum(type(e).__name__ == "RunDone" for e in events) == 12
    pooled = _stored(workdir)
    assert len(pooled) == 12 and {exp for _, exp, _ in pooled} == {"quickstart"}
    # the same runs alone, one process, into another store: the same numbers
    alone = load_experiment(["experiment=quickstart", *SMALL, "launcher.n_jobs=1",
                             f"paths.results_dir={workdir / 'alone'}"])
    run_experiment(alone)
    con = sqlite3.connect(workdir / "alone" / "runs.sqlite")
    solo = con.execute("SELECT key, experiment, metrics FROM runs ORDER BY key").fetchall()
    con.close()
    assert [(k, m) for k, _, m in solo] == [(k, m) for k, _, m in pooled]
    # a rerun has nothing left to do for either
    again = run_experiments([first, copy])
    assert [(s.done, s.already_done) for s in again] == [(0, 12), (0, 12)]


def test_one_pool_refuses_experiments_it_cannot_share(workdir, tmp_path):
    a = load_experiment(["experiment=quickstart", *SMALL])
    other_store = load_experiment(["experiment=quickstart", *SMALL, f"paths.results_dir={tmp_path / 'elsewhere'}"])
    with pytest.raises(ConfigError, match="different stores"):
        run_experiments([a, other_store])
    other_launcher = load_experiment(["experiment=quickstart", "experiment.name=b", *SMALL, "launcher.n_jobs=2"])
    with pytest.raises(ConfigError, match="different launchers"):
        run_experiments([a, other_launcher])
    assert not (workdir / "results" / "runs.sqlite").exists()  # refused before anything was written


def test_cli_list_of_experiments(workdir):
    res = runner.invoke(app, ["run", "experiment=quickstart", "experiment.name=mine", *SMALL, "--quiet"])
    assert res.exit_code == 0, res.output
    # a registered experiment and one named by experiment.name= (its recorded definition), each once
    res = runner.invoke(app, ["run", "experiment=quickstart,mine,quickstart", *SMALL, "--quiet"])
    assert res.exit_code == 0, res.output
    assert "experiment quickstart: 0 done, 0 failed, 12 already done, 0 not started" in res.output
    assert "experiment mine: 0 done, 0 failed, 12 already done, 0 not started" in res.output
    assert "2 experiments in one pool" in res.output
    res = runner.invoke(app, ["run", "experiment=quickstart,mine", *SMALL, "--dry-run"])
    assert res.exit_code == 0 and res.output.count("12 done, 0 to run") == 2, res.output
    # the reading commands take the same list (what `make tables` / `make figures` call, once for every experiment)
    res = runner.invoke(app, ["tables", "quickstart,mine", *SMALL])
    assert res.exit_code == 0 and "tables/quickstart/test_risk.md" in res.output, res.output
    assert "tables/mine/test_risk.md" in res.output
    res = runner.invoke(app, ["status", "quickstart,mine", *SMALL])
    assert res.exit_code == 0 and [line.split()[:3] for line in res.output.splitlines()[1:]] == [
        ["quickstart", "12", "12"], ["mine", "12", "12"]], res.output
    res = runner.invoke(app, ["tables", "quickstart,,mine", *SMALL])
    assert res.exit_code == 2 and "an empty experiment name" in res.output
    for bad, message in [("experiment=quickstart,,mine", "an empty experiment name"),
                         ("experiment=quickstart,nope", "unknown experiment 'nope'")]:
        res = runner.invoke(app, ["run", bad, *SMALL])
        assert res.exit_code == 2 and message in res.output, res.output
