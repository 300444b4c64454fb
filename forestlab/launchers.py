"""How runs are fanned out in parallel: one place for the loky / dask plumbing.

:func:`run_jobs` hands each job (a list of payloads) to a job function in joblib workers and the records it returns
to a sink, as they arrive. The runner (:mod:`forestlab.runner`) decides what a job is and where its records go;
this module decides how many workers start (:func:`worker_count`), with what joblib settings
(:func:`joblib_config`), how a loky worker starts (:func:`init_worker`; :func:`start_workers` starts them early, while
this process still plans), how a dask cluster is reached or started (:func:`dask_client`, :func:`local_cluster`),
and which exceptions mean that a worker process died (:func:`worker_death_errors`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from forestlab.errors import ConfigError, one_line

__all__ = ["BackendError", "dask_session", "death_detail", "joblib_config", "local_cluster", "run_jobs",
           "start_workers", "stop_workers", "worker_count", "worker_death_errors"]

#: What a loky worker imports as it starts, before its first job (scikit-learn and the learners: about 1.5 s): a
#: worker started early (:func:`start_workers`) spends that while this process composes and plans.
WORKER_MODULES = ("forestlab.runner",)

#: The loky executor that :func:`start_workers` started and its number of workers, until :func:`stop_workers`.
_started: tuple[Any, int] | None = None

#: A job: the payloads of one group of runs in, their records out (runs in a worker; never raises).
Job = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


class BackendError(Exception):
    """A job could not be run or its result not received for a reason outside the run (a lost dask cluster); the
    original exception is the ``__cause__``."""


def worker_count(n_jobs: int, n_groups: int, backend: str = "loky") -> int:
    """How many workers to start for ``n_groups`` jobs: ``n_jobs`` (-1: every core of this machine), never more
    than there are jobs (a pool of 64 workers for a 2-job plan costs a minute of start-up for nothing). A dask
    cluster's workers are already running: its ``n_jobs`` is passed through."""
    if backend == "dask":
        return n_jobs
    wanted = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
    return max(1, min(wanted, n_groups))


def joblib_config(backend: str, n_jobs: int) -> dict[str, Any]:
    """joblib's ``parallel_config`` for a launcher. Loky workers ignore SIGINT: Ctrl-C reaches the whole process
    group, and only this process should act on it (it stops the fan-out, which terminates the workers); a worker
    interrupted mid-task would print its own traceback."""
    if backend == "loky" and n_jobs == 1:
        return {"backend": "sequential", "n_jobs": 1}
    if backend == "loky":
        # one BLAS/OpenMP thread per worker, whatever the machine: loky's default is cores // n_jobs (8 threads
        # for each of 2 workers on 16 cores), and a thread count can change a floating-point sum's order, so the
        # numbers would depend on n_jobs and the machine (a dask worker's nanny sets the same limit of 1)
        return {"backend": "loky", "n_jobs": n_jobs, "inner_max_num_threads": 1, "initializer": init_worker,
                "initargs": (os.getpid(), WORKER_MODULES)}
    return {"backend": backend, "n_jobs": n_jobs}


def init_worker(parent_pid: int, modules: tuple[str, ...] = (), interval: float = 1.0) -> None:
    """A loky worker's start: ignore SIGINT (see :func:`joblib_config`), watch the process that started it, and
    import ``modules`` (:data:`WORKER_MODULES`). A forestlab run killed with no chance to clean up (SIGKILL of that
    process alone, the out-of-memory killer) cannot stop its workers, which would idle on; each notices within
    ``interval`` seconds that its parent is gone (it is then adopted by another process) and exits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent_pid:
                os._exit(3)

    threading.Thread(target=watch, name="forestlab-parent-watch", daemon=True).start()
    for name in modules:
        importlib.import_module(name)


def start_workers(n_jobs: int) -> bool:
    """Start now the loky workers that ``run_jobs(..., joblib_config("loky", n_jobs))`` will use: they import
    :data:`WORKER_MODULES` while this process goes on (composing, importing scikit-learn, planning), instead of
    after it; the pool joblib then asks for is this one (the same settings make loky reuse it). Returns whether
    workers were started (not for fewer than 2, nor where joblib's executor cannot be started ahead).

    Nothing runs in the workers before the first job: loky measures a worker's memory after its first call to
    tell a leak from a run's growth, and a warm-up call would make that reference the bare imports.
    :func:`stop_workers` ends them."""
    global _started
    n = worker_count(n_jobs, n_jobs)
    if n < 2:
        return False
    if _started is not None and _started[1] == n:
        return True  # started already (forestlab run starts them as early as it can tell they will work)
    from joblib import Parallel, parallel_config

    stop_workers()
    with parallel_config(**joblib_config("loky", n)), Parallel() as parallel:
        executor = getattr(parallel._backend, "_workers", None)
        # loky starts its processes at the first submit; this is the step that submit takes (a private method:
        # where a joblib version lacks it, the workers start with the first job, as without this function)
        ensure_running = getattr(executor, "_ensure_executor_running", None)
        if ensure_running is None:
            return False
        ensure_running()
    _started = (executor, n)
    return True


def stop_workers() -> None:
    """Kill the workers that :func:`start_workers` started (idle: called when no job is left for them, or when the
    jobs want another number of workers), rather than let the interpreter's exit wait for them to finish their
    imports and shut down one by one."""
    global _started
    if _started is not None:
        executor, _ = _started
        _started = None
        executor.shutdown(wait=False, kill_workers=True)


def run_jobs(jobs: Iterable[list[dict[str, Any]]], job: Job, config: Mapping[str, Any],
             sink: Callable[[list[dict[str, Any]]], None]) -> None:
    """Fan ``jobs`` out with joblib (``job(payloads)`` each) and hand each job's records to ``sink`` as they
    arrive, in the order they finish.

    Runs executed in this process get one BLAS/OpenMP thread, as loky gives its workers: the numbers then do not
    depend on ``n_jobs`` (a thread count can change a floating-point sum's order), and the small matrix products
    of a run gain nothing from more threads (they spin, measured slower).

    ``config`` comes from :func:`joblib_config`. A worker that died raises one of :func:`worker_death_errors`; a
    dask failure outside the job raises :class:`BackendError`.
    """
    from joblib import Parallel, delayed, parallel_config
    from threadpoolctl import threadpool_limits

    if _started is not None and (config["backend"] != "loky" or _started[1] != config["n_jobs"]):
        stop_workers()  # workers started early for another pool: joblib would resize theirs, waiting on them
    limits = threadpool_limits(1) if config["backend"] == "sequential" else contextlib.nullcontext()
    with limits, parallel_config(**config):
        results = iter(Parallel(return_as="generator_unordered")(delayed(job)(payloads) for payloads in jobs))
        while True:
            try:
                records = next(results)
            except StopIteration:
                return
            except (KeyboardInterrupt, *worker_death_errors(config["backend"])):
                raise
            except Exception as exc:
                if config["backend"] != "dask":  # a job never raises: anything else is a bug, shown whole
                    raise
                raise BackendError() from exc
            sink(records)


def worker_death_errors(backend: str = "dask") -> tuple[type[BaseException], ...]:
    """Exceptions by which joblib reports a worker process that died: loky's TerminatedWorkerError (a
    BrokenExecutor) and, for ``backend="dask"``, dask's KilledWorker (distributed is imported only then, or when
    something imported it already: 1.2 s that a loky or in-process run has no use for)."""
    from concurrent.futures import BrokenExecutor

    types: list[type[BaseException]] = [BrokenExecutor]
    if backend != "dask" and "distributed" not in sys.modules:
        return tuple(types)
    try:
        from distributed import KilledWorker
    except ImportError:  # pragma: no cover - dask is an extra
        pass
    else:
        types.append(KilledWorker)
    return tuple(types)


def death_detail(exc: BaseException) -> str:
    """How a worker died, in a few words (loky's exit codes when it gives them)."""
    match = re.search(r"exit codes of the workers are (\{[^}]*\})", str(exc))
    return f"exit code {match.group(1)}" if match else one_line(exc, with_type=True)


@contextlib.contextmanager
def dask_session(backend: str, scheduler: str | None) -> Iterator[Any]:
    """A dask client for ``backend="dask"`` for the length of the block (closed after it, with the LocalCluster
    it started when no ``scheduler`` was given); None for any other backend."""
    client = dask_client(scheduler) if backend == "dask" else None
    try:
        yield client
    finally:
        if client is not None:
            cluster = None if scheduler else getattr(client, "cluster", None)  # a LocalCluster we started
            client.close()
            if cluster is not None:
                cluster.close()


def dask_client(scheduler: str | None) -> Any:
    """A dask client on the scheduler at ``scheduler`` (e.g. ``tcp://host:8786``), or on a new LocalCluster of
    this machine's cores when None; an unreachable or malformed address is a ConfigError."""
    try:
        from dask.distributed import Client
    except ImportError:  # pragma: no cover - depends on the installation
        raise ConfigError("launcher=dask needs dask.distributed: pip install 'forestlab[dask]'") from None
    if scheduler:
        # Probe the address first: a Client that fails to connect lingers and times out again at exit, noisily.
        try:
            probe_scheduler(str(scheduler))
            return Client(scheduler)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise ConfigError(f"cannot connect to the dask scheduler at launcher.scheduler={scheduler} "
                              f"({one_line(exc, with_type=True)}); start it (dask scheduler) or fix the "
                              "address") from None
    return Client(local_cluster(os.cpu_count() or 1))


#: The dask settings of the workers of a LocalCluster that forestlab starts: no statistical profiler (a thread in
#: each worker that samples every thread's stack every 10 ms, for the dashboard's profile page, which forestlab
#: never reads). On 16 cores, 16 workers ran Table A.1's SVM forests 1.40x faster with it off (the runs' own
#: seconds 1.54x one worker's with it, 1.07x without; bench/scaleout_16cores_run6_diag.md); a cluster of one's
#: own: ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask worker ...`` (docs/operations.md).
#: Nor with dask's MALLOC_TRIM_THRESHOLD_=65536 in their environment (its nanny sets it so that long-lived workers
#: hand freed memory back to the system): setting it turns off glibc's sliding mmap threshold, so every large
#: temporary array (the RBF SVM LeafRank's kernel blocks) is mapped fresh and faulted in page by page. Inside a dask
#: worker, German's SVM forests spent 1.5 s of 11 s in the kernel with it, 0.05 s without; 2 workers on 2 cores ran
#: Table A.1's 10 German runs in 1.18-1.25x their serial seconds with it, 0.89-1.08x without (loky's 0.90-0.99x):
#: 42.4 s against 34.4 s of wall (medians of 3 alternating rounds).
#: The workers then keep glibc's defaults, as loky's do (a variable set in forestlab's own environment still wins).
#: And its scheduler hands each single-threaded worker one run at a time (worker-saturation 1.0, dask's default 1.1
#: rounds up to two): with two, a worker holds a run queued behind the one it is running while others go idle, at
#: the end of a fan-out of runs of unequal length. On 16 cores, 16 workers on Table A.1's 100 SVM forests were busy
#: 0.86-0.89 of the wall with 1.1 (the last runs 1.5-2.0 s alone), 0.96-0.97 with 1.0 (0.3 s; loky's 0.95-0.98);
#: bench/scaleout_16cores_diag2.md.
DASK_WORKER_CONFIG = {"distributed.worker.profile.enabled": False,
                      "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                      "distributed.scheduler.worker-saturation": 1.0}


def local_cluster(n_workers: int, **kwargs: Any) -> Any:
    """A dask LocalCluster of ``n_workers`` single-threaded worker processes, as ``launcher=dask`` starts one without
    ``launcher.scheduler``: its workers' statistical profiler is off, glibc's allocator keeps its own defaults and its
    scheduler gives each worker one run at a time (:data:`DASK_WORKER_CONFIG`), unless the user's own dask configuration
    says otherwise (:func:`dask_worker_settings`). ``kwargs`` go to LocalCluster (``host``, ``dashboard_address``)."""
    import dask
    from dask.distributed import LocalCluster

    # the scheduler reads its settings as it starts, and the nannies pass this process's dask config to their workers
    with dask.config.set(dask_worker_settings()):
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, **kwargs)


def dask_worker_settings() -> dict[str, Any]:
    """:data:`DASK_WORKER_CONFIG`, less what the user's own dask configuration sets (its YAML files and
    ``DASK_*`` environment variables, dask's defaults aside): ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=True``
    keeps the profiler of the cluster forestlab starts."""
    import dask

    user = dask.config.collect()
    return {k: v for k, v in DASK_WORKER_CONFIG.items() if dask.config.get(k, default=None, config=user) is None}


def probe_scheduler(address: str) -> None:
    """Open and close a TCP connection to a ``tcp://`` or ``tls://`` scheduler address (ValueError if malformed,
    OSError if nothing listens), within dask's connect timeout."""
    import socket

    import dask
    from dask.utils import parse_timedelta
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(address)
    if scheme in ("tcp", "tls"):
        host, port = parse_host_port(location)
        timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="s")
        socket.create_connection((host, port), timeout=timeout).close()
