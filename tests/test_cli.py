"""The CLI end to end, through the real entry point (subprocesses) where exit codes and signals matter."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from tests.conftest import REPO, count_done, run_cli

runner = CliRunner()
SMALL = ["seeds=2", "limits.max_estimators=10"]  # quickstart: 2 datasets x 3 learners x 2 seeds = 12 runs


def test_quickstart_run_tables_figures_compare_status(workdir):
    res = runner.invoke(app, ["run", *SMALL, "--quiet"])
    assert res.exit_code == 0, res.output
    results = workdir / "results"
    assert (results / "runs.sqlite").exists()
    res = runner.invoke(app, ["tables", "quickstart", *SMALL])
    assert res.exit_code == 0, res.output
    md = (results / "tables" / "quickstart" / "test_risk.md").read_text()
    assert "wdbc_sklearn" in md and "±" in md and "6/6" in md  # 3 learners x 2 seeds
    for ext in ("csv", "tex"):
        assert (results / "tables" / "quickstart" / f"test_risk.{ext}").stat().st_size > 0
    res = runner.invoke(app, ["figures", "quickstart", *SMALL])
    assert res.exit_code == 0, res.output
    assert (results / "figures" / "quickstart" / "error_curves.png").stat().st_size > 1000
    assert (results / "figures" / "quickstart" / "error_curves.pdf").exists()
    res = runner.invoke(app, ["compare", "quickstart", *SMALL])
    assert res.exit_code == 0 and "oob_tracks_test" in res.output
    res = runner.invoke(app, ["status", "quickstart", *SMALL])
    assert res.exit_code == 0 and "quickstart" in res.output
    row = [line for line in res.output.splitlines() if line.startswith("quickstart")][0].split()
    assert row[1:] == ["12", "12", "0", "0", "0"]
    # a changed value of one learner: status reads plans from the store and never re-plans, so a configuration
    # that has not run yet shows all its runs pending and the stored ones as stale ...
    changed = ["quickstart", "seeds=2", "limits.max_estimators=10", "algorithm.params.criterion=entropy"]
    res = runner.invoke(app, ["status", *changed])
    row = [line for line in res.output.splitlines() if line.startswith("quickstart")][0].split()
    assert row[1:] == ["12", "0", "0", "12", "12"]
    # ... and once it ran, only the changed learner's runs were new: the other 8 were shared, the 4 old ones stale
    res = runner.invoke(app, ["run", "experiment=quickstart", *changed[1:], "--quiet"])
    assert res.exit_code == 0 and "4 done, 0 failed, 8 already done" in res.output
    res = runner.invoke(app, ["status", *changed])
    row = [line for line in res.output.splitlines() if line.startswith("quickstart")][0].split()
    assert row[1:] == ["12", "12", "0", "0", "4"]


def test_list_and_config_commands():
    res = runner.invoke(app, ["list", "experiments"])
    assert res.exit_code == 0 and "quickstart" in res.output and "uci_binary" in res.output
    for kind in ("datasets", "algorithms", "protocols"):
        assert runner.invoke(app, ["list", kind]).exit_code == 0
    res = runner.invoke(app, ["config", "experiment=uci_binary", "seeds=4"])
    assert res.exit_code == 0 and "seeds: 4" in res.output and "uci_binary" in res.output


@pytest.mark.parametrize("args, message", [
    (["run", "experiment=nope"], "unknown experiment 'nope'"),
    (["run", "nokey=3"], "unknown config key 'nokey'"),
    (["run", "seeds=-1"], "seeds must be >= 1"),
    (["run", "seeds=="], "malformed override"),
    (["list", "things"], "cannot list 'things'"),
    (["tables", "nope"], "unknown experiment 'nope'"),
])
@pytest.mark.slow
def test_bad_input_exit_2_with_one_line(workdir, args, message):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_failed_runs_exit_1_after_storing_the_others(workdir, failing_env):
    # the test-only learner fails inside every fit: every run fails, is stored, and the exit status is 1
    proc = run_cli("run", "dataset=ringnorm", "seeds=2", "algorithm=failing", "--quiet", env=failing_env)
    assert proc.returncode == 1, proc.stderr
    assert "2 runs failed" in proc.stderr
    con = sqlite3.connect(workdir / "results" / "runs.sqlite")
    assert con.execute("SELECT COUNT(*) FROM runs WHERE status='failed'").fetchone()[0] == 2


@pytest.mark.slow
def test_missing_dataset_file_is_a_clear_error(workdir, tmp_path):
    env = {"FORESTLAB_DATA_MIRROR": str(tmp_path / "empty"), "FORESTLAB_DATA_DIR": str(tmp_path / "nodata")}
    (tmp_path / "empty").mkdir()
    proc = run_cli("run", "dataset=sonar", "+paths.download=false", env=env)
    if proc.returncode == 2 and "paths.download" in proc.stderr:  # key already exists: plain override
        proc = run_cli("run", "dataset=sonar", "paths.download=false", env=env)
    assert proc.returncode == 2, proc.stderr
    assert "sonar.all-data" in proc.stderr and "FORESTLAB_DATA_MIRROR" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_sigkill_mid_experiment_then_rerun_loses_nothing(workdir):
    args = [sys.executable, "-m", "forestlab", "run", "experiment=quickstart", "seeds=8",
            "limits.max_estimators=40", "launcher.n_jobs=2", "--quiet"]  # 48 runs in 16 jobs of 3
    proc = subprocess.Popen(args, cwd=REPO, env=os.environ.copy(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = workdir / "results" / "runs.sqlite"
    deadline = time.time() + 300
    while count_done(db) < 4 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    con = sqlite3.connect(db)
    before = dict(con.execute("SELECT key, finished_at FROM runs WHERE status='done'").fetchall())
    con.close()
    assert 4 <= len(before) < 48, "the run was killed too late to test anything"
    rerun = run_cli(*args[3:])
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(before)} already done" in rerun.stderr
    con = sqlite3.connect(db)
    after = dict(con.execute("SELECT key, finished_at FROM runs WHERE status='done'").fetchall())
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 48
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert all(after[k] == t for k, t in before.items())  # finished runs kept and not recomputed


@pytest.mark.slow
def test_second_run_on_a_busy_store_exits_75_with_no_wait(workdir):
    from forestlab.store import RunLock

    lock = RunLock(workdir / "results")
    lock.acquire(wait=False)
    try:
        proc = run_cli("run", *SMALL, "--no-wait")
    finally:
        lock.release()
    assert proc.returncode == 75 and "another forestlab run" in proc.stderr
