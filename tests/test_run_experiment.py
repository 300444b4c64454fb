"""The run as the runner owns it: run_experiment (lock, plan record, limits, outcome), typed events, failure kinds
stored where the exception is caught, the store's migration to schema 3, and the one query of an experiment's runs
(Store.plan_for)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from forestlab import runner
from forestlab.config import compose, load_experiment
from forestlab.errors import ConfigError, DatasetError, FailureKind, SolverError, StoreBusy, StoreError, Terminated
from forestlab.runner import Outcome, plan, run_experiment
from forestlab.store import _SCHEMA, SCHEMA_VERSION, RunLock, Store

QUICK = ["experiment=quickstart", "seeds=1", "limits.max_datasets=1", "limits.max_estimators=5"]


def test_failure_kinds_are_decided_by_the_exception_type():
    assert FailureKind.of(SolverError("qp")) is FailureKind.SOLVER
    assert FailureKind.of(DatasetError("one class")) is FailureKind.DATA
    assert FailureKind.of(ConfigError("bad")) is FailureKind.CONFIG
    assert FailureKind.of(MemoryError()) is FailureKind.MEMORY
    assert FailureKind.of(ConnectionResetError()) is FailureKind.CONNECTION
    assert FailureKind.of(ZeroDivisionError()) is FailureKind.ERROR
    assert {k for k in FailureKind if k.transient} == {FailureKind.MEMORY, FailureKind.WORKER_DIED,
                                                        FailureKind.CONNECTION}
    assert issubclass(Terminated, KeyboardInterrupt) and issubclass(StoreBusy, StoreError)


def test_run_experiment_records_the_plan_emits_typed_events_and_says_how_it_ended(workdir, failing_env):
    exp = load_experiment(QUICK)
    events: list[runner.Event] = []
    summary = run_experiment(exp, on_event=events.append)
    assert summary.outcome is Outcome.COMPLETE and summary.done == exp.n_runs
    kinds = [type(e) for e in events]
    assert kinds[0] is runner.ExperimentStarted and kinds[-1] is runner.ExperimentEnded
    assert kinds.count(runner.RunDone) == exp.n_runs
    with Store(summary.results_dir, readonly=True) as store:
        recorded = store.plan_for(exp.name, plan_id=exp.plan_id)
        assert recorded is not None and recorded.keys == list(summary.keys)
        assert store.plan_for(exp.name, seeds=1, smoke=False).plan_id == exp.plan_id
        assert store.plan_for(exp.name, seeds=7) is None
    dry = run_experiment(exp, dry_run=True)
    assert dry.dry_run and (dry.planned, dry.already_done, dry.to_run) == (exp.n_runs, exp.n_runs, 0)

    bad = load_experiment(["dataset=ringnorm", "algorithm=failing", "seeds=1"])
    events.clear()
    summary = run_experiment(bad, on_event=events.append)
    assert summary.outcome is Outcome.FAILED_RUNS and summary.transient == 0
    failed = [e for e in events if isinstance(e, runner.RunFailed)]
    assert len(failed) == 1 and failed[0].kind is FailureKind.ERROR and "deliberate failure" in failed[0].error
    with Store(summary.results_dir, readonly=True) as store:
        assert store.records(list(summary.keys))["failure"].tolist() == ["error"]


def test_limits_belong_to_the_runner_and_a_busy_store_is_a_class(workdir):
    exp = load_experiment(["experiment=quickstart", "seeds=30000"])
    with pytest.raises(ConfigError, match="more than limits.max_runs"):
        run_experiment(exp, dry_run=True)
    small = load_experiment(QUICK)
    lock = RunLock(Path(small.paths.results_dir))
    lock.acquire(wait=False)
    try:
        with pytest.raises(StoreBusy, match="another forestlab run"):
            run_experiment(small, wait=False)
    finally:
        lock.release()


def _v2_store(folder: Path) -> Path:
    """A store as schema 2 wrote it: no failure column, a membership table, one failed run."""
    folder.mkdir(parents=True)
    schema = _SCHEMA.replace("    failure TEXT,\n", "") + (
        "CREATE TABLE IF NOT EXISTS membership (experiment TEXT NOT NULL, key TEXT NOT NULL, "
        "PRIMARY KEY (experiment, key));")
    con = sqlite3.connect(folder / "runs.sqlite")
    con.executescript(schema)
    con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    con.execute("INSERT INTO runs (key, status, experiment, dataset, algorithm, protocol, seed, repetition, spec, "
                "error, finished_at) VALUES ('k1', 'failed', 'e', 'd', 'a', 'p', 0, 0, '{}', 'boom', 1.0)")
    con.execute("INSERT INTO membership VALUES ('e', 'k1')")
    con.commit()
    con.close()
    return folder


def test_a_schema_2_store_is_read_as_it_is_and_migrated_when_written(tmp_path):
    folder = _v2_store(tmp_path / "old")
    with Store(folder, readonly=True) as store:
        records = store.records()
        assert records["failure"].isna().all() and records["error"].tolist() == ["boom"]
    con = sqlite3.connect(folder / "runs.sqlite")
    assert "failure" not in {r[1] for r in con.execute("PRAGMA table_info(runs)")}  # reading changed nothing
    con.close()
    with Store(folder) as store:
        store.put({"key": "k2", "status": "failed", "dataset": "d", "algorithm": "a", "protocol": "p", "seed": 0,
                   "repetition": 1, "spec": {}, "error": "MemoryError", "failure": "memory"})
        records = store.records().set_index("key")
        assert pd.isna(records.loc["k1", "failure"]) and records.loc["k1", "error"] == "boom"
        assert records.loc["k2", "failure"] == "memory"
    con = sqlite3.connect(folder / "runs.sqlite")
    assert con.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    con.close()


def test_a_newer_store_is_refused_untouched(tmp_path):
    folder = _v2_store(tmp_path / "new")
    con = sqlite3.connect(folder / "runs.sqlite")
    con.execute("UPDATE meta SET value = '99' WHERE name = 'schema_version'")
    con.commit()
    con.close()
    for readonly in (True, False):
        with pytest.raises(StoreError, match="has store schema 99"):
            Store(folder, readonly=readonly)
    con = sqlite3.connect(folder / "runs.sqlite")
    assert con.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0] == "99"
    con.close()


def test_the_runner_asks_the_dataset_layer_for_a_generated_problem_s_oracle_quantities():
    from forestlab.datasets import generated_info

    specs = plan(compose(["dataset=ringnorm", "algorithm=rf", "seeds=1"]))
    assert generated_info(specs[0].payload["dataset_cfg"]) == {}  # Breiman's ringnorm: nothing registered
    toy = plan(compose(["experiment=depecker2010_table_a1", "debug=smoke"]))[0].payload["dataset_cfg"]
    info = generated_info(toy)
    assert 0.5 < info["auc_star"] <= 1.0 and len(info["roc_star_tpr"]) == 201


def test_status_failed_shows_each_failed_run_s_kind(workdir, failing_env):
    from typer.testing import CliRunner

    from forestlab.cli import app

    cli = CliRunner()
    res = cli.invoke(app, ["run", "dataset=ringnorm", "algorithm=failing", "seeds=1"])
    assert res.exit_code == 1, res.output
    assert "1 runs failed; their errors: forestlab status single" in res.stderr
    shown = cli.invoke(app, ["status", "dataset=ringnorm", "algorithm=failing", "seeds=1", "--failed"])
    assert shown.exit_code == 0, shown.output
    assert "--- single: failing on ringnorm rep 0 (key " in shown.stdout and "; failure: error)" in shown.stdout
    assert "deliberate failure" in shown.stdout
