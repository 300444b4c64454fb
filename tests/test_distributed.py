"""launcher=dask on a real dask.distributed cluster (a LocalCluster of 2 worker processes on loopback), through the
CLI: same results as loky, records written by the forestlab process only, a clear error for an unreachable
scheduler."""

from __future__ import annotations

import socket
import sqlite3

import numpy as np
import pytest

from forestlab.store import Store
from tests.conftest import run_cli

distributed = pytest.importorskip("distributed")

# quickstart's two offline datasets, RF only, 2 seeds, 10 trees: 4 runs
SMALL = ["experiment=quickstart", "experiment.algorithms=[rf]", "seeds=2", "algorithm.params.n_estimators=10"]


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes and a scheduler, on 127.0.0.1, no dashboard."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield cluster, client


def _metrics_and_pids(results):
    con = sqlite3.connect(results / "runs.sqlite")
    rows = con.execute("SELECT key, status, metrics, pid FROM runs").fetchall()
    con.close()
    return {k: (s, m) for k, s, m, _ in rows}, {pid for *_, pid in rows}


@pytest.mark.slow
def test_dask_run_on_a_scheduler_address_equals_the_loky_run(workdir, cluster):
    local, client = cluster
    address = local.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    loky_dir, dask_dir = workdir / "loky", workdir / "dask"

    loky = run_cli("run", *SMALL, "launcher.n_jobs=2", "--quiet", env={"FORESTLAB_RESULTS_DIR": str(loky_dir)})
    assert loky.returncode == 0, loky.stderr
    dask = run_cli("run", *SMALL, "launcher=dask", f"launcher.scheduler={address}", "--quiet",
                   env={"FORESTLAB_RESULTS_DIR": str(dask_dir)})
    assert dask.returncode == 0, dask.stderr
    assert "experiment quickstart: 4 done, 0 failed" in dask.stderr

    m_loky, _ = _metrics_and_pids(loky_dir)
    m_dask, writers = _metrics_and_pids(dask_dir)
    assert len(m_dask) == 4 and all(status == "done" for status, _ in m_dask.values())
    assert m_dask == m_loky  # same keys, same metrics (JSON text compared exactly)
    with Store(loky_dir, readonly=True) as s1, Store(dask_dir, readonly=True) as s2:
        for key in m_loky:
            a, b = s1.load_arrays(key), s2.load_arrays(key)
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)

    # the runs executed in the cluster's workers, and only the forestlab process wrote the store
    prefixes = local.scheduler.task_prefixes
    assert any("execute_group" in name for name in prefixes), sorted(prefixes)
    worker_pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(writers) == 1 and not writers & worker_pids


@pytest.mark.slow
def test_the_local_cluster_forestlab_starts_runs_its_workers_without_the_profiler(monkeypatch):
    """launcher=dask without a scheduler starts a LocalCluster whose workers do not sample their stacks every 10 ms and
    keep glibc's allocator defaults (no MALLOC_TRIM_THRESHOLD_ from dask's nanny; launchers.DASK_WORKER_CONFIG) but
    still one BLAS thread, and whose scheduler hands each worker one run at a time; the settings do not leak into this
    process's dask config or environment."""
    import os

    import dask

    from forestlab.launchers import dask_session

    monkeypatch.delenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", raising=False)  # a user's own setting wins
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION", raising=False)

    assert dask.config.get("distributed.worker.profile.enabled") is True  # dask's default, here
    with dask_session("dask", None) as client:
        enabled = client.run(lambda: __import__("dask").config.get("distributed.worker.profile.enabled"))
        env = client.run(lambda: {k: __import__("os").environ.get(k)
                                  for k in ("MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")})
        saturation = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION)
    assert saturation == 1.0  # one run at a time per worker (dask's default 1.1 gives each two)
    assert enabled and set(enabled.values()) == {False}, enabled
    assert env and all(e == {"MALLOC_TRIM_THRESHOLD_": None, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
                       for e in env.values()), env
    assert dask.config.get("distributed.worker.profile.enabled") is True
    assert dask.config.get("distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_") == 65536
    assert dask.config.get("distributed.scheduler.worker-saturation") == 1.1
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ


@pytest.mark.slow
def test_unreachable_scheduler_is_one_clear_error(workdir):
    with socket.socket() as sock:  # a port on which nothing listens once this is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = run_cli("run", *SMALL, "launcher=dask", f"launcher.scheduler=tcp://127.0.0.1:{port}",
                   env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("forestlab: error:")]
    assert len(errors) == 1 and f"cannot connect to the dask scheduler at launcher.scheduler=tcp://127.0.0.1:{port}" \
        in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
