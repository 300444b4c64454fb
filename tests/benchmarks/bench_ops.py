"""Operations benchmarks: the store's write throughput with two writer processes, and the dask backend's overhead
against loky on the same small experiment (a two-worker LocalCluster on loopback).

    bench_store_throughput(out)   records per second, 1 writer and 2 writer processes on one Store
    bench_dask_overhead(out)      wall time of one experiment with loky (n_jobs=2) and with dask (2 workers)
"""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import time

N_RECORDS = 2000  # per writer
# A small real experiment: 24 RF runs (2 datasets x 12 seeds, 20 trees).
DASK_OVERRIDES = ["experiment=quickstart", "experiment.algorithms=[rf]", "seeds=12", "algorithm.params.n_estimators=20"]


def _record(writer: int, i: int) -> dict:
    """A record the size of a real one (metrics, timings, spec of a few hundred bytes)."""
    return {"key": f"{writer:02d}{i:030d}", "status": "done", "experiment": "bench", "study": None,
            "dataset": "ringnorm", "algorithm": "rf", "protocol": "holdout", "seed": 0, "repetition": i, "fold": None,
            "spec": {"dataset": {"name": "ringnorm", "source": {"n_samples": 7400}}, "learner": {"n_estimators": 100},
                     "protocol": {"train_size": 0.5}, "repetition": i},
            "metrics": {f"{p}_{m}": 0.1234567 for p in ("test", "train") for m in ("risk", "accuracy", "auc")},
            "timings": {"load": 0.01, "fit": 0.5, "evaluate": 0.05, "total": 0.56}, "arrays": ["test_scores"],
            "error": None, "forestlab_version": "0.1.0", "learner_version": 1}


def _writer(results_dir: str, writer: int, n: int, start, done) -> None:
    from forestlab.store import Store

    with Store(results_dir) as store:
        start.wait()
        for i in range(n):
            store.put(_record(writer, i))
    done.put(writer)


def _throughput(n_writers: int) -> tuple[float, float]:
    """Records per second of ``n_writers`` processes each putting N_RECORDS records (one transaction each)."""
    from forestlab.store import Store

    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        Store(tmp).close()  # create the schema once
        start, done = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(tmp, w, N_RECORDS, start, done)) for w in range(n_writers)]
        for p in procs:
            p.start()
        time.sleep(2.0)  # let every writer import and open the store
        t0 = time.perf_counter()
        start.set()
        for _ in procs:
            done.get(timeout=600)
        wall = time.perf_counter() - t0
        for p in procs:
            p.join()
        with Store(tmp, readonly=True) as store:
            assert store.count() == n_writers * N_RECORDS
    return n_writers * N_RECORDS / wall, wall


def bench_store_throughput(out: dict) -> None:
    """Records per second into one Store (SQLite WAL, one transaction per record) from 1 and from 2 processes."""
    one, wall_one = _throughput(1)
    two, wall_two = _throughput(2)
    out["store_throughput"] = {
        "records_per_writer": N_RECORDS,
        "one_writer_records_per_s": round(one), "one_writer_s": round(wall_one, 2),
        "two_writers_records_per_s": round(two), "two_writers_s": round(wall_two, 2),
        "note": "a real run writes one record per finished run (about 0.1-10 s each): far below either rate",
    }


def _timed_run(overrides: list[str], backend: str, scheduler: str | None) -> tuple[float, int, dict]:
    from forestlab.config import compose
    from forestlab.runner import execute, plan
    from forestlab.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FORESTLAB_RESULTS_DIR"] = tmp
        specs = plan(compose(overrides))
        with Store(tmp) as store:
            t0 = time.perf_counter()
            n_jobs = -1 if backend == "dask" else 2
            summary = execute(specs, store, n_jobs=n_jobs, backend=backend, scheduler=scheduler)
            wall = time.perf_counter() - t0
            metrics = dict(zip(store.records()["key"], store.records()["metrics"], strict=True))
        assert summary.done == len(specs) and summary.failed == 0, summary
    return wall, len(specs), metrics


def bench_dask_overhead(out: dict) -> None:
    """The same experiment with loky (n_jobs=2) and on a LocalCluster of 2 single-threaded worker processes on
    loopback (the cluster already running, as a real one would be); results must be identical."""
    from distributed import LocalCluster

    _timed_run(DASK_OVERRIDES, "loky", None)  # warm the dataset cache and the loky workers
    loky, n, m_loky = _timed_run(DASK_OVERRIDES, "loky", None)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        _timed_run(DASK_OVERRIDES, "dask", address)  # warm the workers (imports, dataset cache)
        dask, _, m_dask = _timed_run(DASK_OVERRIDES, "dask", address)
    assert m_dask == m_loky
    out["dask_overhead"] = {
        "runs": n, "loky_n_jobs_2_s": round(loky, 2), "dask_2_workers_s": round(dask, 2),
        "dask_over_loky": round(dask / loky, 3), "overhead_per_run_ms": round((dask - loky) / n * 1000, 1),
        "identical_results": True,
    }


def run(out: dict) -> None:
    bench_store_throughput(out)
    bench_dask_overhead(out)


if __name__ == "__main__":
    import json

    results: dict = {}
    run(results)
    print(json.dumps(results, indent=2))
