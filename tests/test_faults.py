"""Faults injected for real, each followed by a rerun that must complete with no finished run lost or duplicated.

SIGINT (Ctrl-C on the process group), a worker process that dies (a learner calling ``os._exit`` in the loky
worker), a results folder that cannot be written, a full disk (``RLIMIT_FSIZE``), a damaged store file, a dataset
file altered after download. SIGKILL is in test_cli.py. Every CLI call is a real subprocess.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from forestlab.store import RunLock
from tests.conftest import REPO, count_done, run_cli

# Tiny runs: ringnorm is generated (no files), 5 trees on 100 + 100 points.
TINY = ["dataset=ringnorm", "algorithm.params.n_estimators=5", "protocol.train_size=100", "protocol.test_size=100"]


def _state(results: Path) -> dict:
    """What the store holds: row count, distinct keys, done count, and each done run's finish time."""
    con = sqlite3.connect(results / "runs.sqlite", timeout=30)
    try:
        rows = con.execute("SELECT COUNT(*), COUNT(DISTINCT key), SUM(status = 'done') FROM runs").fetchone()
        finished = dict(con.execute("SELECT key, finished_at FROM runs WHERE status = 'done'").fetchall())
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()
    return {"rows": rows[0], "keys": rows[1], "done": rows[2] or 0, "finished": finished, "integrity": integrity}


def _assert_complete(results: Path, planned: int, before: dict) -> None:
    """The rerun stored every planned run exactly once and kept the runs finished before the fault untouched."""
    after = _state(results)
    assert after["integrity"] == "ok"
    assert after["rows"] == after["keys"] == after["done"] == planned, after
    assert all(after["finished"][k] == t for k, t in before["finished"].items())  # kept, not recomputed


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("forestlab: error:")]


def _started_run(overrides: list[str], db: Path, n_done: int) -> subprocess.Popen:
    """`forestlab run OVERRIDES` in a new session, returned once ``n_done`` runs are stored (or it ended)."""
    # SIGINT as in an interactive foreground process: a test suite started in the background (`cmd &` in a script)
    # has SIGINT ignored, and that would be inherited, so Ctrl-C could not be simulated
    proc = subprocess.Popen([sys.executable, "-m", "forestlab", "run", *overrides], cwd=REPO, env=os.environ.copy(),
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while count_done(db) < n_done and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    return proc


# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_sigint_stops_cleanly_stores_what_finished_and_says_how_to_resume(workdir):
    overrides = ["dataset=ringnorm", "seeds=60", "algorithm.params.n_estimators=60", "protocol.train_size=1000",
                 "protocol.test_size=1000", "launcher.n_jobs=2"]
    results = workdir / "results"
    db = results / "runs.sqlite"
    proc = _started_run(overrides, db, 3)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
    t0 = time.time()
    _, stderr = proc.communicate(timeout=60)
    assert time.time() - t0 < 30, "the interrupt took too long to stop the run"
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    errors = _error_lines(stderr)
    assert len(errors) == 1 and "interrupted" in errors[0], stderr
    assert "run the same command again" in errors[0] and "forestlab run dataset=ringnorm seeds=60" in errors[0]
    before = _state(results)
    n_stored = int(re.search(r"the (\d+) runs that finished are stored", errors[0]).group(1))
    assert before["integrity"] == "ok"
    assert 3 <= before["done"] == n_stored < 60
    lock = RunLock(results)  # the lock was released: a new run would not wait
    lock.acquire(wait=False)
    lock.release()

    rerun = run_cli("run", *overrides, "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    assert f"{before['done']} already done" in rerun.stderr
    _assert_complete(results, 60, before)


def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _alive(pids: list[int]) -> list[int]:
    import psutil

    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.slow
def test_sigterm_ends_a_run_like_ctrl_c_and_stops_the_workers(workdir):
    """SIGTERM (what timeout, cron daemons and cluster schedulers send) to the forestlab process alone: exit 143,
    one line, finished runs kept, no worker process left, and a rerun completes the rest."""
    overrides = ["dataset=ringnorm", "seeds=60", "algorithm.params.n_estimators=60", "protocol.train_size=1000",
                 "protocol.test_size=1000", "launcher.n_jobs=2"]
    results = workdir / "results"
    db = results / "runs.sqlite"
    proc = _started_run(overrides, db, 3)
    assert proc.poll() is None, "the run ended before it could be terminated"
    workers = _descendants(proc.pid)
    proc.send_signal(signal.SIGTERM)  # the process alone, not its group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    errors = _error_lines(stderr)
    assert len(errors) == 1 and errors[0].startswith("forestlab: error: terminated (SIGTERM): the "), stderr
    deadline = time.time() + 15
    while _alive(workers) and time.time() < deadline:
        time.sleep(0.2)
    assert not _alive(workers), "worker processes outlived the terminated run"
    before = _state(results)
    assert before["integrity"] == "ok" and 3 <= before["done"] < 60
    rerun = run_cli("run", *overrides, "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    _assert_complete(results, 60, before)


@pytest.mark.slow
def test_workers_exit_when_the_run_is_killed_outright(workdir):
    """SIGKILL of the forestlab process alone (the out-of-memory killer's way): it cannot stop its workers, which
    notice their parent is gone and exit within seconds instead of idling on."""
    overrides = ["dataset=ringnorm", "seeds=40", "algorithm.params.n_estimators=30", "protocol.train_size=1000",
                 "protocol.test_size=1000", "launcher.n_jobs=2"]
    db = workdir / "results" / "runs.sqlite"
    proc = _started_run(overrides, db, 2)
    workers = _descendants(proc.pid)
    assert proc.poll() is None and workers
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.time() + 20
    while _alive(workers) and time.time() < deadline:
        time.sleep(0.2)
    left = _alive(workers)
    for pid in left:  # do not leave them behind if the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} worker processes idled on after their run was killed"


# ---------------------------------------------------------------------------------------------------------------
CRASH_LEARNER = '''
"""A test-only learner that kills its own process (os._exit) when FORESTLAB_TEST_CRASH=1."""
import os

from forestlab.learners import BreimanForestClassifier, register


class CrashingForest(BreimanForestClassifier):
    def fit(self, X, y):
        if os.environ.get("FORESTLAB_TEST_CRASH") == "1":
            os._exit(3)
        return super().fit(X, y)


register("crash", CrashingForest, task="classifier")
'''

CRASHY_EXPERIMENT = '''
# @package _global_
defaults:
  - override /protocol: holdout
  - override /algorithm: rf
experiment:
  name: crashy
  study: null
  description: RF beside a learner that kills its worker process
  datasets: [ringnorm]
  algorithms: [rf, crash]
  tables: []
  figures: []
  claims: []
seeds: 2
'''


@pytest.fixture
def crash_env(tmp_path):
    """A copy of conf/ with a `crash` algorithm and a `crashy` experiment, and a sitecustomize that registers the
    crashing learner in every Python process started with this environment: forestlab and its loky workers."""
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    (conf / "algorithm" / "crash.yaml").write_text(
        "name: crash\nestimator: crash\nseed_tag: crash\nparams: {n_estimators: 5}\ngrid: {}\n")
    (conf / "experiment" / "crashy.yaml").write_text(CRASHY_EXPERIMENT)
    site = tmp_path / "site"
    site.mkdir()
    (site / "crash_learner.py").write_text(CRASH_LEARNER)
    (site / "sitecustomize.py").write_text("import crash_learner  # noqa: F401\n")
    return {"FORESTLAB_CONF_DIR": str(conf),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


@pytest.mark.slow
def test_worker_process_death_fails_only_its_job_and_a_rerun_completes(workdir, crash_env):
    args = ["run", "experiment=crashy", *TINY[1:], "launcher.n_jobs=2"]
    proc = run_cli(*args, env={**crash_env, "FORESTLAB_TEST_CRASH": "1"})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "a worker process died (exit code {EXIT(3)" in proc.stderr
    results = workdir / "results"
    con = sqlite3.connect(results / "runs.sqlite")
    rows = con.execute("SELECT algorithm, status, error FROM runs ORDER BY algorithm").fetchall()
    con.close()
    assert [(a, s) for a, s, _ in rows] == [("crash", "failed")] * 2 + [("rf", "done")] * 2
    for _, _, error in rows[:2]:
        assert error.startswith("WorkerDied: the worker process running this job died (exit code {EXIT(3)})")
    assert len([line for line in _error_lines(proc.stderr) if "WorkerDied" in line]) == 2

    before = _state(results)
    # the learner no longer crashes; n_jobs=1 runs in the forestlab process (same keys, no worker pool to start)
    rerun = run_cli(*args[:-1], "launcher.n_jobs=1", "--quiet", env=crash_env)
    assert rerun.returncode == 0, rerun.stderr
    assert "2 already done" in rerun.stderr and "experiment crashy: 2 done, 0 failed" in rerun.stderr
    _assert_complete(results, 4, before)


# ---------------------------------------------------------------------------------------------------------------
def _readonly_command(folder: Path, args: list[str]) -> list[str] | None:
    """A command running ``python -m forestlab ARGS`` with ``folder`` read-only for it: chmod for a normal user;
    for root (whom chmod does not stop) a read-only bind mount in a private mount namespace. None if neither works."""
    cmd = [sys.executable, "-m", "forestlab", *args]
    if os.geteuid() != 0:
        return cmd
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if not unshare or not mount:
        return None
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c",
                            f'{mount} --bind "$0" "$0" && {mount} -o remount,bind,ro "$0" && ! touch "$0/probe"',
                            str(folder)], capture_output=True, text=True)
    if probe.returncode != 0:
        return None
    script = f'{mount} --bind "$0" "$0" && {mount} -o remount,bind,ro "$0" && exec "$@"'
    return [unshare, "--mount", "--propagation", "private", "sh", "-c", script, str(folder), *cmd]


@pytest.mark.slow
def test_unwritable_results_folder_is_a_clear_error_and_loses_nothing(workdir):
    results = workdir / "results"
    first = run_cli("run", *TINY, "seeds=2", "--quiet")
    assert first.returncode == 0, first.stderr
    before = _state(results)
    db_bytes = (results / "runs.sqlite").read_bytes()
    cmd = _readonly_command(results, ["run", *TINY, "seeds=3", "--quiet"])
    if cmd is None:
        pytest.skip("running as root and no read-only bind mount available (unshare --mount): chmod cannot make a "
                    "folder unwritable for root")
    modes = {p: p.stat().st_mode for p in [results, *results.rglob("*")]}
    if os.geteuid() != 0:
        for p in modes:
            p.chmod(p.stat().st_mode & ~0o222)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=os.environ.copy(), timeout=300)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = _error_lines(proc.stderr)
    assert len(errors) == 1 and "cannot write to" in errors[0], proc.stderr
    assert re.search(r"Read-only file system|Permission denied", errors[0])
    assert (results / "runs.sqlite").read_bytes() == db_bytes

    rerun = run_cli("run", *TINY, "seeds=3", "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    assert "2 already done" in rerun.stderr
    _assert_complete(results, 3, before)


@pytest.mark.slow
def test_reports_read_a_results_folder_they_cannot_write_to(workdir, tmp_path):
    """tables, figures, compare and status read the store of a read-only results folder; their files go to
    paths.reports_dir, and without it tables says so in one line."""
    results = workdir / "results"
    first = run_cli("run", *TINY, "seeds=2", "--quiet")
    assert first.returncode == 0, first.stderr
    elsewhere = tmp_path / "reports"
    outputs = {}
    for args in (["status", *TINY, "seeds=2"], ["tables", *TINY, "seeds=2", f"paths.reports_dir={elsewhere}"],
                 ["figures", *TINY, "seeds=2", f"paths.reports_dir={elsewhere}"],
                 ["compare", *TINY, "seeds=2"], ["tables", *TINY, "seeds=2"]):
        cmd = _readonly_command(results, args)
        if cmd is None:
            pytest.skip("running as root and no read-only bind mount available (unshare --mount)")
        if os.geteuid() != 0:
            for p in [results, *results.rglob("*")]:
                p.chmod(p.stat().st_mode & ~0o222)
        try:
            outputs[args[0] + str(len(args))] = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO,
                                                               env=os.environ.copy(), timeout=300)
        finally:
            for p in [results, *results.rglob("*")]:
                p.chmod(p.stat().st_mode | 0o200)
    status, tables, figures, compare, refused = outputs.values()
    assert status.returncode == 0 and " 2 " in status.stdout, status.stderr
    assert tables.returncode == 0 and list((elsewhere / "tables").rglob("*.md")), tables.stderr
    assert figures.returncode == 0, figures.stderr
    assert compare.returncode == 0, compare.stderr
    assert refused.returncode == 2 and "paths.reports_dir" in refused.stderr, refused.stderr
    assert len(_error_lines(refused.stderr)) == 1 and "Traceback" not in refused.stderr


# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_disk_full_stops_with_a_clear_error_and_a_rerun_completes(workdir):
    """RLIMIT_FSIZE makes every write past the limit fail with EFBIG, as a full disk fails with ENOSPC: the
    store's write-ahead log cannot grow after a few runs."""
    limit = 160_000

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    args = ["run", *TINY, "seeds=60", "--quiet"]
    proc = subprocess.run([sys.executable, "-m", "forestlab", *args], capture_output=True, text=True, cwd=REPO,
                          env=os.environ.copy(), preexec_fn=limit_file_size, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = _error_lines(proc.stderr)
    assert len(errors) == 1, proc.stderr
    assert "the disk is full or a file size limit was reached; finished runs are kept" in errors[0]
    results = workdir / "results"
    before = _state(results)
    assert before["integrity"] == "ok"
    assert 1 <= before["done"] < 60 and before["rows"] == before["keys"] == before["done"]
    assert not list((results / "arrays").glob(".*.tmp"))  # no half-written array file left behind

    rerun = run_cli(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{before['done']} already done" in rerun.stderr
    _assert_complete(results, 60, before)


# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_damaged_store_is_refused_untouched_and_a_fresh_store_completes(workdir, damage):
    results = workdir / "results"
    db = results / "runs.sqlite"
    if damage == "garbage":
        results.mkdir()
        db.write_bytes(b"not a database, whatever it was " * 300)
        message = "is not an SQLite database"
    else:
        first = run_cli("run", *TINY, "seeds=20", "--quiet")
        assert first.returncode == 0, first.stderr
        data = db.read_bytes()
        assert not db.with_name("runs.sqlite-wal").exists()  # a clean close folded the WAL into the file
        db.write_bytes(data[: len(data) // 2])
        message = "is damaged"
    damaged = db.read_bytes()
    for command in (["run", *TINY, "seeds=3"], ["status", "quickstart"]):
        proc = run_cli(*command)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        errors = _error_lines(proc.stderr)
        assert len(errors) == 1 and message in errors[0] and "left untouched" in errors[0], proc.stderr
        assert db.read_bytes() == damaged  # never overwritten

    db.rename(results / "runs.sqlite.damaged")  # what the message says to do
    rerun = run_cli("run", *TINY, "seeds=3", "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    _assert_complete(results, 3, {"finished": {}})
    assert (results / "runs.sqlite.damaged").read_bytes() == damaged


# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("alteration", ["truncated", "one byte changed"])
def test_dataset_file_altered_after_download_is_rejected_by_checksum(workdir, mirror, tmp_path, alteration):
    data_dir = tmp_path / "private-data"  # not the session's shared cache: this test damages it
    env = {"FORESTLAB_DATA_DIR": str(data_dir)}
    args = ["run", "dataset=sonar", "algorithm.params.n_estimators=5", "protocol.train_size=100"]
    first = run_cli(*args, "seeds=2", "--quiet", env=env)
    assert first.returncode == 0, first.stderr
    results = workdir / "results"
    before = _state(results)
    cached = data_dir / "uci" / "sonar" / "sonar.all-data"
    data = cached.read_bytes()
    if alteration == "truncated":
        cached.write_bytes(data[: len(data) // 2])
    else:
        cached.write_bytes(data[:100] + (b"9" if data[100:101] != b"9" else b"8") + data[101:])

    proc = run_cli(*args, "seeds=3", "--quiet", env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = _error_lines(proc.stderr)
    assert len(errors) == 1 and str(cached) in errors[0] and "corrupt" in errors[0], proc.stderr
    assert "1 runs of 'sonar' not started" in errors[0]
    assert _state(results)["rows"] == 2  # nothing computed from the altered file

    cached.unlink()  # as the message says: delete it, and it is fetched (from the mirror) and verified again
    rerun = run_cli(*args, "seeds=3", "--quiet", env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert "2 already done" in rerun.stderr
    assert cached.read_bytes() == data
    _assert_complete(results, 3, before)


# ---------------------------------------------------------------------------------------------------------------
def test_processed_dataset_npz_holding_objects_is_never_unpickled(mirror, tmp_path):
    """The parsed-dataset cache (data/processed/*.npz) is read with pickling refused: a file replaced by one
    holding a Python object (which could run code when unpickled) is ignored and the source parsed again."""
    from forestlab.config import load_group_option, to_container
    from forestlab.datasets import clear_cache, load_dataset

    data_dir = tmp_path / "data"
    ds_cfg = to_container(load_group_option("dataset", "sonar"))
    clean = load_dataset(ds_cfg, data_dir=data_dir, mirror=mirror, download=False)
    files = list((data_dir / "processed").glob("*.npz"))
    assert len(files) == 1
    marker = tmp_path / "unpickled"
    np.savez(files[0], X=np.array([_Marker(marker)], dtype=object), y=np.zeros(1), categorical=np.zeros(1),
             meta=np.array([_Marker(marker)], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):  # the file does hold a pickle: the test is not vacuous
        np.load(files[0], allow_pickle=False)["X"]
    clear_cache()
    again = load_dataset(ds_cfg, data_dir=data_dir, mirror=mirror, download=False)
    np.testing.assert_array_equal(again.X, clean.X)
    assert not marker.exists()


class _Marker:
    """Unpickling it creates a file: the proof that something was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_no_module_unpickles_what_it_reads():
    """Every np.load in the package refuses pickles, and nothing calls pickle/joblib/dill load on a file."""
    offenders = []
    for path in (REPO / "forestlab").rglob("*.py"):
        text = path.read_text()
        for match in re.finditer(r"np\.load\(([^)]*)\)", text):
            if "allow_pickle=False" not in match.group(1):
                offenders.append(f"{path.relative_to(REPO)}: {match.group(0)}")
        for pattern in (r"pickle\.loads?\(", r"joblib\.load\(", r"dill\.", r"allow_pickle=True", r"pd\.read_pickle"):
            offenders += [f"{path.relative_to(REPO)}: {pattern}" for _ in re.finditer(pattern, text)]
    assert not offenders, textwrap.indent("\n".join(offenders), "  ")
