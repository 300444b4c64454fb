"""Operations: the documented crontab line run as cron would, overlapping runs, reruns that recompute exactly what
changed, the rotating log file, `forestlab status` over every experiment."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from forestlab.store import RunLock
from tests.conftest import REPO

runner = CliRunner()
OPERATIONS = REPO / "docs" / "operations.md"
README = REPO / "README.md"
TINY = ["dataset=ringnorm", "algorithm.params.n_estimators=3", "protocol.train_size=60", "protocol.test_size=60"]


def _summary(res) -> dict[str, int]:
    """The counts of `forestlab run --quiet`'s summary line."""
    match = re.search(r": (\d+) done, (\d+) failed, (\d+) already done, (\d+) not started", res.stderr)
    assert match, (res.stdout, res.stderr)
    return dict(zip(("done", "failed", "already", "skipped"), map(int, match.groups()), strict=True))


def _rows(results: Path) -> dict[str, tuple]:
    con = sqlite3.connect(results / "runs.sqlite")
    rows = con.execute("SELECT key, dataset, algorithm, status, finished_at FROM runs").fetchall()
    con.close()
    return {k: rest for k, *rest in rows}


@pytest.fixture
def conf_copy(tmp_path, monkeypatch) -> Path:
    """A private copy of conf/, used through FORESTLAB_CONF_DIR, that a test may edit."""
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    monkeypatch.setenv("FORESTLAB_CONF_DIR", str(conf))
    return conf


# ---------------------------------------------------------------------------------------------------------------
def _documented_cron_line(doc: Path = README) -> str:
    """The crontab line of a document: the first entry of the code block after the 'cron-line' marker."""
    text = doc.read_text()
    block = re.search(r"<!-- cron-line[^>]*-->\s*```[a-z]*\n(.*?)```", text, re.S)
    assert block, f"{doc.name} has no crontab block after <!-- cron-line -->"
    entries = [line for line in block.group(1).splitlines()
               if line.strip() and not line.lstrip().startswith("#") and not re.match(r"^\w+=", line)]
    assert len(entries) == 1, entries
    return entries[0]


def test_readme_and_operations_guide_document_the_same_crontab_line():
    assert _documented_cron_line(README) == _documented_cron_line(OPERATIONS)


@pytest.mark.slow
def test_documented_crontab_line_works_as_written(tmp_path, shared_data_dir, mirror):
    line = _documented_cron_line()
    fields = line.split(None, 5)
    assert len(fields) == 6, line
    for field in fields[:5]:
        assert re.fullmatch(r"[\d*/,-]+", field), f"not a cron time field: {field}"
    command = fields[5]
    assert "%" not in command  # cron would turn it into a newline
    # cron's environment: HOME, a bare PATH, /bin/sh, the crontab's folder; the clone lives at $HOME/forestlab
    home = tmp_path / "home"
    home.mkdir()
    (home / "forestlab").symlink_to(REPO)
    conf = tmp_path / "conf"  # the real experiment, shrunk through conf/local (as a machine's own settings would)
    shutil.copytree(REPO / "conf", conf)
    (conf / "local" / "default.yaml").write_text("# @package _global_\nseeds: 1\n"
                                                 "limits: {max_datasets: 2, max_estimators: 5}\n")
    results = tmp_path / "results"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "LOGNAME": "forestlab", "LANG": "C",
           # for the test only: its own config copy, results folder, the session's data cache and the mirror
           "FORESTLAB_CONF_DIR": str(conf), "FORESTLAB_RESULTS_DIR": str(results),
           "FORESTLAB_DATA_DIR": str(shared_data_dir), "FORESTLAB_DATA_MIRROR": str(mirror)}

    def cron() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["/bin/sh", "-c", command], cwd=home, env=env, capture_output=True, text=True,
                              timeout=600)

    first = cron()
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""  # --quiet: cron mails only stderr's summary line (and failures)
    experiment = re.search(r"experiment=(\w+)", command).group(1)
    n = int(re.search(rf"experiment {experiment}: (\d+) done, 0 failed, 0 already done", first.stderr).group(1))
    assert n >= 2  # 2 datasets x the experiment's algorithms x 1 seed
    log = (results / "logs" / "forestlab.log").read_text()
    assert f"experiment {experiment}: {n} done" in log and f"[1/{n}] done" in log  # the file has the details

    again = cron()  # the next night: nothing new to compute
    assert again.returncode == 0, again.stderr
    assert f"experiment {experiment}: 0 done, 0 failed, {n} already done" in again.stderr

    lock = RunLock(results)  # last night's run is still going: this one exits 75 with one line
    lock.acquire(wait=False)
    try:
        busy = cron()
    finally:
        lock.release()
    assert busy.returncode == 75, busy.stderr
    assert busy.stderr.startswith("forestlab: error: another forestlab run (pid ")
    assert len(busy.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_overlapping_run_waits_for_the_first_by_default(workdir):
    results = workdir / "results"
    lock = RunLock(results)
    lock.acquire(wait=False)
    proc = subprocess.Popen([sys.executable, "-m", "forestlab", "run", *TINY, "--quiet"], cwd=REPO,
                            env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        log = results / "logs" / "forestlab.log"
        while time.time() < deadline and not (log.exists() and "waiting for it to finish" in log.read_text()):
            time.sleep(0.1)
        assert proc.poll() is None, "the second run did not wait"
        assert not (results / "runs.sqlite").exists()  # it has not touched the store
    finally:
        lock.release()
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert re.search(r"another forestlab run \(pid \d+ on .+\) is using .+; waiting for it to finish", stderr)
    assert "1 done, 0 failed" in stderr


# ---------------------------------------------------------------------------------------------------------------
def test_changed_dataset_config_reruns_exactly_its_runs(workdir, conf_copy):
    args = ["run", "experiment=quickstart", "experiment.algorithms=[rf]", "seeds=2", "algorithm.params.n_estimators=5",
            "--quiet"]
    assert _summary(runner.invoke(app, args)) == {"done": 4, "failed": 0, "already": 0, "skipped": 0}
    results = workdir / "results"
    before = _rows(results)
    ringnorm = conf_copy / "dataset" / "ringnorm.yaml"
    text = ringnorm.read_text()

    assert 'description: "' in text
    ringnorm.write_text(text.replace('description: "', 'description: "(edited) '))  # cosmetic: nothing reruns
    assert _summary(runner.invoke(app, args)) == {"done": 0, "failed": 0, "already": 4, "skipped": 0}

    assert "random_state: 0}" in text
    ringnorm.write_text(text.replace("random_state: 0}", "random_state: 1}"))  # other data: its runs rerun
    assert _summary(runner.invoke(app, args)) == {"done": 2, "failed": 0, "already": 2, "skipped": 0}
    after = _rows(results)
    new = {k: v for k, v in after.items() if k not in before}
    assert len(new) == 2 and {v[0] for v in new.values()} == {"ringnorm"}
    assert all(after[k] == v for k, v in before.items())  # every earlier record untouched
    status = runner.invoke(app, ["status", "quickstart", *args[2:-1]])
    row = next(line for line in status.stdout.splitlines() if line.startswith("quickstart")).split()
    assert row[1:] == ["4", "4", "0", "0", "2"]  # the 2 ringnorm runs of the old data are stale


def test_bumped_learner_version_reruns_exactly_that_learners_runs(workdir, conf_copy, monkeypatch):
    from forestlab.learners import REGISTRY, BreimanForestClassifier, LearnerEntry

    class VersionedForest(BreimanForestClassifier):
        version = 1

    monkeypatch.setitem(REGISTRY, "rf_versioned", LearnerEntry("rf_versioned", VersionedForest, "classifier"))
    (conf_copy / "algorithm" / "rf_versioned.yaml").write_text(
        "name: rf_versioned\nestimator: rf_versioned\nseed_tag: forest\nparams: {n_estimators: 5}\ngrid: {}\n")
    # launcher.n_jobs=1 runs in this process, where the learner is registered
    args = ["run", "experiment=quickstart", "experiment.algorithms=[rf,rf_versioned]", "seeds=2",
            "algorithm.params.n_estimators=5", "launcher.n_jobs=1", "--quiet"]
    assert _summary(runner.invoke(app, args))["done"] == 8
    results = workdir / "results"
    before = _rows(results)
    assert _summary(runner.invoke(app, args))["already"] == 8

    monkeypatch.setattr(VersionedForest, "version", 2)
    assert _summary(runner.invoke(app, args)) == {"done": 4, "failed": 0, "already": 4, "skipped": 0}
    after = _rows(results)
    new = {k: v for k, v in after.items() if k not in before}
    assert len(new) == 4 and {v[1] for v in new.values()} == {"rf_versioned"}
    assert all(after[k] == v for k, v in before.items())


# ---------------------------------------------------------------------------------------------------------------
def test_run_logs_to_a_rotating_file(workdir, tmp_path):
    results = workdir / "results"
    args = ["run", *TINY, "paths.log_max_bytes=800", "paths.log_backup_count=2", "--quiet"]
    for seeds in range(1, 7):
        res = runner.invoke(app, [*args, f"seeds={seeds}"])
        assert res.exit_code == 0, res.stderr
    logs = results / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["forestlab.log", "forestlab.log.1", "forestlab.log.2"]
    assert all(p.stat().st_size <= 800 for p in logs.iterdir())
    current = (logs / "forestlab.log").read_text()
    assert "experiment single: 1 done, 0 failed, 5 already done" in current  # the last run's summary
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[\d+\] INFO forestlab run dataset=ringnorm", current, re.M)

    own = tmp_path / "elsewhere" / "cron.log"
    res = runner.invoke(app, ["run", *TINY, "seeds=7", "--quiet", "--log-file", str(own)])
    assert res.exit_code == 0 and f"log: {own}" in res.stderr
    assert "[1/1] done rf on ringnorm rep 6" in own.read_text()  # per-run lines even with --quiet
    assert "rep 6" not in (logs / "forestlab.log").read_text()

    res = runner.invoke(app, ["run", *TINY, "seeds=8", "--quiet", "--log-file", ""])  # no log file
    assert res.exit_code == 0 and "log:" not in res.stderr
    assert "rep 7" not in (logs / "forestlab.log").read_text() and "rep 7" not in own.read_text()


def test_failures_reach_the_log_file(workdir, failing_env):
    res = runner.invoke(app, ["run", *TINY, "algorithm=failing", "--quiet"])
    assert res.exit_code == 1
    log = (workdir / "results" / "logs" / "forestlab.log").read_text()
    assert re.search(r"ERROR run \w{12} \(failing on ringnorm rep 0\) failed: .*deliberate failure", log)
    assert "ERROR 1 runs failed" in log


# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.slow  # plans every experiment twice (25 s on a slow 2-core machine)
def test_status_without_an_experiment_covers_every_experiment_and_single_runs(workdir):
    n = _summary(runner.invoke(app, ["run", "experiment=quickstart", "debug=smoke", "--quiet"]))["done"]
    assert n >= 2
    assert runner.invoke(app, ["run", *TINY, "--quiet"]).exit_code == 0
    res = runner.invoke(app, ["status", "debug=smoke"])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["experiment", "planned", "done", "failed", "pending", "stale"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    registered = runner.invoke(app, ["list", "experiments"]).stdout.split("\n")
    names = [line.split()[0] for line in registered if line.strip()]
    # the smoke runs have their own line, after the experiment's line; the other experiments' smoke plans have
    # not run (their planned count is that of their smoke configuration); single runs come last
    assert list(rows) == [*(f"{x}[smoke]" for x in names), "single"]
    assert rows["quickstart[smoke]"] == [str(n), str(n), "0", "0", "-"]
    assert rows["single"] == ["1", "1", "0", "0", "-"]  # single runs of other choices are not stale
    assert all(rows[f"{x}[smoke]"][1:3] == ["0", "0"] for x in names if x != "quickstart")
    full = {line.split()[0]: line.split()[1:] for line in runner.invoke(app, ["status"]).stdout.splitlines()[1:]}
    assert full["quickstart"][1] == "0" and full["quickstart[smoke]"][:2] == [str(n), str(n)]
    assert full["quickstart"][4] == "0"  # smoke runs are never stale runs of the real experiment
