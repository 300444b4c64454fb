"""Starting loky workers ahead of the jobs (forestlab.launchers.start_workers): the pool the jobs then use is the one
started, its workers have imported the learners before their first job, and one started for nothing is ended."""

from __future__ import annotations

import os
import sys
import time

import pytest

from forestlab import launchers
from forestlab.launchers import WORKER_MODULES, joblib_config, run_jobs, start_workers, stop_workers


@pytest.fixture(autouse=True)
def _no_pool_left():
    yield
    stop_workers()


def _who(payloads: list[dict]) -> list[dict]:
    """A job: which process ran it, and whether the worker modules were imported before it."""
    return [{"pid": os.getpid(), "preloaded": all(m in sys.modules for m in WORKER_MODULES), **p} for p in payloads]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a killed child not yet reaped is a zombie: gone all the same
        return fh.read().split(")")[-1].split()[0] != "Z"


def test_started_workers_are_the_pool_the_jobs_use():
    assert start_workers(2)
    executor, n = launchers._started
    assert n == 2
    pids = set(executor._processes)  # running before any job was submitted
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    records: list[dict] = []
    run_jobs(([{"i": i}] for i in range(8)), _who, joblib_config("loky", 2), records.extend)
    assert sorted(r["i"] for r in records) == list(range(8))
    assert {r["pid"] for r in records} <= pids  # no second pool
    assert all(r["preloaded"] for r in records)  # the workers imported the learners before their first job
    stop_workers()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)


def test_a_pool_of_another_size_replaces_the_started_one():
    assert start_workers(2)
    executor, _ = launchers._started
    first = set(executor._processes)
    records: list[dict] = []
    run_jobs(([{"i": i}] for i in range(3)), _who, joblib_config("loky", 3), records.extend)
    assert sorted(r["i"] for r in records) == [0, 1, 2]
    assert launchers._started is None  # the early pool was ended, not resized under the jobs
    assert not {r["pid"] for r in records} & first


def test_one_worker_is_not_started_early():
    assert not start_workers(1)
    assert launchers._started is None


def test_a_run_starts_its_workers_early_only_when_runs_are_left(workdir):
    from forestlab.cli import _start_workers_early
    from forestlab.config import load_experiment
    from forestlab.runner import run_experiment

    small = ["experiment=quickstart", "seeds=2", "limits.max_estimators=10"]  # 12 runs
    exp = load_experiment([*small, "launcher.n_jobs=2"])
    _start_workers_early([exp], force=False)  # nothing stored: 12 runs left for 2 workers
    assert launchers._started is not None
    assert run_experiment(exp).done == 12
    stop_workers()
    _start_workers_early([exp], force=False)  # a rerun with nothing left starts none
    assert launchers._started is None
    _start_workers_early([exp], force=True)  # --force: every run again
    assert launchers._started is not None
    stop_workers()
    _start_workers_early([load_experiment([*small, "launcher.n_jobs=1"])], force=True)
    assert launchers._started is None


def test_starting_the_workers_again_keeps_the_started_pool():
    assert start_workers(2)
    executor, _ = launchers._started
    pids = set(executor._processes)
    assert start_workers(2)  # forestlab run asks again once it has validated the experiment
    assert launchers._started[0] is executor and set(executor._processes) == pids


def test_a_first_run_starts_its_workers_before_validating(workdir, monkeypatch):
    """An experiment never composed with these overrides (nothing kept) starts its loky workers from the composed
    config, before the validation imports scikit-learn; not where the experiment is kept, was run in this store
    already, runs in one process, has too few runs for two workers, or does not compose."""
    from forestlab.cli import _start_workers_before_validating
    from forestlab.config import cached_experiment, run_outline
    from forestlab.runner import run_experiment

    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(workdir / "cache"))  # nothing kept
    small = ["experiment=quickstart", "seeds=2", "limits.max_estimators=10", "launcher.n_jobs=2"]  # 12 runs
    outline = run_outline(small)
    assert (outline.name, outline.backend, outline.n_jobs, outline.min_runs) == ("quickstart", "loky", 2, 12)
    assert outline.results_dir == (workdir / "results").resolve()
    _start_workers_before_validating(small)
    assert launchers._started is not None and launchers._started[1] == 2
    stop_workers()
    for overrides in ([*small[:-1], "launcher.n_jobs=1"],  # in process
                      [*small, "seeds=1", "experiment.datasets=[wdbc_sklearn]"],  # 3 runs for 2 workers
                      [*small, "launcher=dask"],  # its workers are already running
                      [*small, "launcher.n_jobz=2"]):  # does not compose: the validation says why
        _start_workers_before_validating(overrides)
        assert launchers._started is None, overrides
    assert run_outline([*small, "launcher.n_jobz=2"]) is None
    exp = cached_experiment(small)  # kept now: read back, the plan decides (_start_workers_early)
    _start_workers_before_validating(small)
    assert launchers._started is None
    assert run_experiment(exp).done == 12
    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(workdir / "cache2"))  # not kept, but run in this store
    _start_workers_before_validating(small)
    assert launchers._started is None


def test_the_outline_hands_its_composition_to_the_validation(monkeypatch):
    """run_outline composes once for the command: load_experiment takes that config instead of composing again, and
    gives the experiment it gives alone; another composition composes afresh."""
    from forestlab import config

    overrides = ["experiment=quickstart", "seeds=2", "launcher.n_jobs=2"]
    alone = config.load_experiment(overrides)
    calls = []
    real = config._compose_raw
    monkeypatch.setattr(config, "_compose_raw", lambda o: calls.append(list(o)) or real(o))
    assert config.run_outline(overrides) is not None
    assert config.load_experiment(overrides).plan_id == alone.plan_id
    assert len(calls) == 1
    config.load_experiment(overrides)  # nothing handed off any more
    assert len(calls) == 2
    config.run_outline(overrides)
    config.load_experiment([*overrides, "seeds=3"])  # other overrides: composed, and the hand-off dropped
    config.load_experiment(overrides)
    assert len(calls) == 5
    typo = [*overrides, "launcher.n_jobz=2"]  # does not compose: the error is handed off too
    with pytest.raises(config.ConfigError) as alone_error:
        config.load_experiment(typo)
    alone_calls = len(calls) - 5  # composing it, and what finding the valid keys composes
    assert config.run_outline(typo) is None
    with pytest.raises(config.ConfigError) as handed_error:
        config.load_experiment(typo)
    assert str(handed_error.value) == str(alone_error.value)
    assert len(calls) == 5 + 2 * alone_calls  # not 3 *


def test_workers_started_before_a_refusal_are_stopped(workdir, monkeypatch):
    """Overrides that compose but do not validate: the workers started from the composed config are stopped, and
    the refusal is the usual one line and exit status 2."""
    from typer.testing import CliRunner

    from forestlab.cli import app

    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(workdir / "cache"))  # nothing kept
    started = []
    real = launchers.start_workers

    def spy(n_jobs: int) -> bool:
        started.append(real(n_jobs))
        return started[-1]

    monkeypatch.setattr(launchers, "start_workers", spy)
    res = CliRunner().invoke(app, ["run", "experiment=quickstart", "launcher.n_jobs=2", "protocol.train_size=1.5"])
    assert res.exit_code == 2, res.output
    assert "protocol.train_size as a fraction must be in (0, 1), got 1.5" in res.output
    assert started == [True]  # started before the validation refused
    assert launchers._started is None  # and stopped


def test_the_dask_workers_settings_yield_to_the_users_own(monkeypatch, tmp_path):
    """The LocalCluster forestlab starts turns its workers' profiler off, does not give them dask's
    MALLOC_TRIM_THRESHOLD_ and hands each one run at a time, unless the user's dask configuration (its environment
    variable, its YAML files) sets them."""
    pytest.importorskip("distributed")
    import dask

    from forestlab.launchers import DASK_WORKER_CONFIG, dask_worker_settings

    trim = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"
    saturation = "distributed.scheduler.worker-saturation"
    monkeypatch.delenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", raising=False)
    monkeypatch.delenv("DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION", raising=False)
    assert dask_worker_settings() == DASK_WORKER_CONFIG == {"distributed.worker.profile.enabled": False, trim: None,
                                                            saturation: 1.0}
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "True")
    assert dask_worker_settings() == {trim: None, saturation: 1.0}
    monkeypatch.setenv("DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION", "1.1")
    assert dask_worker_settings() == {trim: None}
    (tmp_path / "mine.yaml").write_text("distributed:\n  nanny:\n    pre-spawn-environ:\n"
                                        "      MALLOC_TRIM_THRESHOLD_: 65536\n")
    dask.config.paths.append(str(tmp_path))  # the list dask.config.collect reads its YAML files from
    try:
        assert dask_worker_settings() == {}
    finally:
        dask.config.paths.remove(str(tmp_path))


def test_a_run_without_dask_does_not_import_distributed(workdir):
    """A run in process or through loky never imports dask.distributed (1.2 s of every command's start, for the
    one exception type a dask worker's death raises); launcher=dask gets that type."""
    import subprocess

    code = ("import sys; from forestlab.cli import app\n"
            "try:\n    app(['run', 'experiment=quickstart', 'seeds=1', 'limits.max_estimators=5', '--quiet'])\n"
            "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print('distributed' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "False", res.stdout
    pytest.importorskip("distributed")
    from distributed import KilledWorker

    assert KilledWorker in launchers.worker_death_errors("dask")
