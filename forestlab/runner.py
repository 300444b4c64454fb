"""Plan, execute and store the runs of an experiment.

``plan(cfg)`` expands the experiment (datasets x algorithms x seeds [x folds]) into :class:`RunSpec` objects, each
with a stable key: the SHA-256 of the canonical JSON of everything that decides its result (the dataset's parsing and
preprocessing, the learner's class, version and parameters, the resolved protocol, the seeds, the metrics). Keys do
not depend on the experiment's name, so experiments that share runs share their results.

``execute(specs, store, ...)`` skips what the store already holds, fans the rest out with joblib and writes each
record as it arrives. A failing run is stored with its traceback and the others go on.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from omegaconf import DictConfig

from forestlab import __version__
from forestlab.config import load_group_option, to_container
from forestlab.errors import ConfigError, ForestlabError
from forestlab.learners._cache import FitCache, fit_with_cache
from forestlab.protocols import derive_seed, make_split, n_folds, resolve_sizes
from forestlab.store import Store

log = logging.getLogger("forestlab")

# Bump when the way runs are evaluated changes (what is measured, how splits are drawn): every key changes with it.
EVALUATION_VERSION = 1
# Dataset config keys that document but do not change the data.
_COSMETIC_DATASET_KEYS = ("description", "studies", "notes", "splits", "citation")


@dataclass(frozen=True)
class RunSpec:
    """One run: a dataset, a learner, a split. ``payload`` is everything the worker needs (picklable, plain)."""

    key: str
    experiment: str
    study: str | None
    dataset: str
    algorithm: str
    protocol: str
    seed: int
    repetition: int
    fold: int | None
    identity: dict[str, Any]
    payload: dict[str, Any] = field(repr=False)


def run_key(identity: Mapping[str, Any]) -> str:
    """The content hash of a run's identity (32 hex characters)."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def _dataset_identity(ds_cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ds_cfg.items() if k not in _COSMETIC_DATASET_KEYS}


def _node(cfg: DictConfig, group: str, name: str) -> dict[str, Any]:
    """The config of a dataset or algorithm named in the experiment: the composed group entry (with the user's
    overrides) when it is the one selected, else the group file."""
    selected = cfg.get(group)
    if selected is not None and selected.get("name") == name:
        return to_container(selected)
    return to_container(load_group_option(group, name))


def plan(cfg: DictConfig) -> list[RunSpec]:
    """Expand the composed config into run specs, in a deterministic order."""
    from forestlab.learners import get_learner

    exp = cfg.experiment
    limits = cfg.get("limits") or {}
    datasets = list(exp.datasets)
    if limits.get("max_datasets"):
        datasets = datasets[: int(limits.max_datasets)]
    algorithms = list(exp.algorithms)
    protocol = to_container(cfg.protocol)
    metrics = list(cfg.metrics)
    paths = to_container(cfg.paths)
    shared_params = dict(to_container(exp.get("params")) or {})
    specs: list[RunSpec] = []
    for ds_name in datasets:
        ds_cfg = _node(cfg, "dataset", ds_name)
        proto = resolve_sizes(protocol, ds_cfg)
        for alg_name in algorithms:
            alg_cfg = _node(cfg, "algorithm", alg_name)
            estimator = get_learner(alg_cfg.get("estimator", alg_name))
            params = dict(alg_cfg.get("params") or {})
            # experiment-wide parameter values (a tree regime, say) apply to every algorithm that has the parameter
            params.update({k: v for k, v in shared_params.items() if k in params})
            if limits.get("max_estimators") and "n_estimators" in params:
                params["n_estimators"] = min(int(params["n_estimators"]), int(limits.max_estimators))
            grid = {k: list(v) for k, v in (alg_cfg.get("grid") or {}).items()}
            if proto.get("selection") == "oob" and any(len(v) == 0 for v in grid.values()):
                raise ConfigError(f"algorithm '{alg_name}': a grid with no values ({grid})")
            learner = {
                "estimator": alg_cfg.get("estimator", alg_name),
                "class": f"{estimator.__module__}.{estimator.__qualname__}",
                "version": int(getattr(estimator, "version", 0)),
                "params": params,
                "grid": grid if proto.get("selection") == "oob" else {},
                "seed_tag": alg_cfg.get("seed_tag", alg_name),
            }
            for rep in range(int(cfg.seeds)):
                folds: Iterable[int | None] = range(n_folds(proto)) if proto["kind"] == "kfold" else [None]
                for fold in folds:
                    identity = {
                        "dataset": _dataset_identity(ds_cfg),
                        "learner": learner,
                        "protocol": {k: v for k, v in proto.items()},
                        "seed": int(cfg.seed),
                        "repetition": rep,
                        "fold": fold,
                        "metrics": metrics,
                        "evaluation": EVALUATION_VERSION,
                    }
                    key = run_key(identity)
                    payload = {
                        "key": key,
                        "dataset_cfg": ds_cfg,
                        "dataset": ds_name,
                        "algorithm": alg_name,
                        "learner": learner,
                        "protocol": proto,
                        "seed": int(cfg.seed),
                        "repetition": rep,
                        "fold": fold,
                        "metrics": metrics,
                        "paths": paths,
                    }
                    specs.append(RunSpec(key=key, experiment=str(exp.name), study=exp.get("study"),
                                         dataset=ds_name, algorithm=alg_name, protocol=str(protocol["name"]),
                                         seed=int(cfg.seed), repetition=rep, fold=fold, identity=identity,
                                         payload=payload))
    return specs


# ---------------------------------------------------------------------------------------------------------------
# The worker side: everything below runs in a joblib worker and must not touch the store.
# ---------------------------------------------------------------------------------------------------------------
def _load(payload: Mapping[str, Any]):
    from forestlab.datasets import load_dataset

    paths = payload["paths"]
    return load_dataset(payload["dataset_cfg"], data_dir=paths["data_dir"], mirror=paths.get("mirror"),
                        download=bool(paths.get("download", True)))


def _fit(payload: Mapping[str, Any], X: np.ndarray, y: np.ndarray, random_state: int, cache: FitCache | None):
    """Fit the learner (through the job's cache); with a grid and OOB selection, fit every grid point and keep the
    lowest OOB error."""
    from sklearn.model_selection import ParameterGrid

    from forestlab.learners import get_learner

    learner = payload["learner"]
    cls = get_learner(learner["estimator"])
    grid = learner.get("grid") or {}
    if not grid:
        return fit_with_cache(cls(**learner["params"], random_state=random_state), X, y, cache), {}, {}
    best, best_err, best_params, errors = None, np.inf, {}, []
    for point in ParameterGrid(grid):
        est = fit_with_cache(cls(**{**learner["params"], **point}, random_state=random_state), X, y, cache)
        err = getattr(est, "oob_error_", None)
        if err is None:
            raise ConfigError(f"{learner['estimator']} has no out-of-bag error: protocol selection=oob needs "
                              "a bootstrap learner")
        errors.append(float(err))
        if err < best_err:  # strict: the first grid point wins ties
            best, best_err, best_params = est, err, dict(point)
    return best, best_params, {"selection_oob_error": np.asarray(errors)}


def execute_group(payloads: Sequence[Mapping[str, Any]], cache: FitCache | None = None) -> list[dict[str, Any]]:
    """Run the specs of one job (one split, one ``seed_tag``) with one shared :class:`FitCache`, the trees'
    predictions computed once for all of them."""
    from forestlab.learners import shared_tree_predictions

    cache = FitCache() if cache is None else cache
    with shared_tree_predictions():
        return [execute_spec(p, cache) for p in payloads]


def execute_group_packed(payloads: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`execute_group` as a parallel job: each record's arrays come back packed (compressed ``.npz`` bytes),
    so the compression happens in the workers and the process that owns the store only writes bytes."""
    from forestlab.store import PackedArrays, pack_arrays

    def packed(rec: dict[str, Any]) -> dict[str, Any]:
        try:
            return {**rec, "arrays": pack_arrays(rec["arrays"])}
        except ValueError as exc:  # an object array: it could only be stored pickled
            return {**rec, "status": "failed", "arrays": PackedArrays((), b""),
                    "error": f"ValueError: the run's arrays cannot be stored without pickling ({exc})"}

    return [packed(rec) for rec in execute_group(payloads)]


def execute_spec(payload: Mapping[str, Any], cache: FitCache | None = None) -> dict[str, Any]:
    """Run one spec and return its record (``status`` done or failed); never raises."""
    from forestlab.metrics import compute_metrics

    t_start = time.perf_counter()
    record: dict[str, Any] = {"key": payload["key"], "status": "failed", "metrics": {}, "selected": {},
                              "timings": {}, "arrays": {}, "error": None}
    timings = record["timings"]
    try:
        t0 = time.perf_counter()
        ds = _load(payload)
        split = make_split(payload["protocol"], ds.y, base_seed=payload["seed"], dataset=payload["dataset"],
                           repetition=payload["repetition"], fold=payload["fold"])
        X_train, y_train = ds.X[split.train], ds.y[split.train]
        X_test, y_test = ds.X[split.test], ds.y[split.test]
        timings["load"] = time.perf_counter() - t0
        random_state = derive_seed("learner", payload["seed"], payload["dataset"], payload["repetition"],
                                   payload["fold"], payload["learner"]["seed_tag"])
        t0 = time.perf_counter()
        est, selected, sel_arrays = _fit(payload, X_train, y_train, random_state, cache)
        timings["fit"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        names = payload["metrics"]
        binary = ds.task == "binary"
        test_scores = est.decision_function(X_test) if binary and hasattr(est, "decision_function") else None
        train_scores = est.decision_function(X_train) if binary and hasattr(est, "decision_function") else None
        metrics: dict[str, float] = {}
        metrics.update(compute_metrics(names, y_test, est.predict(X_test), test_scores, prefix="test_"))
        metrics.update(compute_metrics(names, y_train, est.predict(X_train), train_scores, prefix="train_"))
        if getattr(est, "oob_error_", None) is not None:
            metrics["oob_risk"] = float(est.oob_error_)
        if getattr(est, "max_tree_depth_", None) is not None:
            metrics["max_depth"] = float(est.max_tree_depth_)
        diagnostics = getattr(est, "diagnostics_", None)
        if isinstance(diagnostics, Mapping):
            metrics.update({k: float(v) for k, v in diagnostics.items()})
        selected.update(getattr(est, "selected_params_", None) or {})
        arrays: dict[str, np.ndarray] = dict(sel_arrays)
        if test_scores is not None:
            arrays["test_scores"] = np.asarray(test_scores, dtype=np.float64)
            arrays["y_test"] = np.asarray(y_test, dtype=np.int8)
        if hasattr(est, "error_curves"):
            curves = est.error_curves(X_test, y_test)
            arrays.update({k: np.asarray(v) for k, v in curves.items()})
        timings["evaluate"] = time.perf_counter() - t0
        metrics["n_train"], metrics["n_test"] = float(len(split.train)), float(len(split.test))
        record.update(status="done", metrics=metrics, selected=selected, arrays=arrays)
    except ForestlabError as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - stored with its traceback, the other runs go on
        record["error"] = traceback.format_exc(limit=20)
    timings["total"] = time.perf_counter() - t_start
    return record


# ---------------------------------------------------------------------------------------------------------------
# The parent side.
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Summary:
    planned: int = 0
    already_done: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    interrupted: bool = False
    elapsed: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.skipped == 0 and not self.interrupted


def preflight(specs: Sequence[RunSpec]) -> dict[str, str]:
    """Check that each planned dataset can be had; return {dataset: error message} for those that cannot.

    A dataset whose verified processed arrays are on disk and up to date is only checked (its metadata read): the
    runs load it themselves, in this process or in the workers. Any other is loaded once here, which verifies and
    parses its files and writes its processed arrays for the runs.
    """
    from forestlab.datasets import load_dataset
    from forestlab.datasets._load import processed_ready

    problems: dict[str, str] = {}
    seen: set[str] = set()
    for spec in specs:
        if spec.dataset in seen:
            continue
        seen.add(spec.dataset)
        paths = spec.payload["paths"]
        if processed_ready(spec.payload["dataset_cfg"], data_dir=paths["data_dir"], mirror=paths.get("mirror")):
            continue
        try:
            load_dataset(spec.payload["dataset_cfg"], data_dir=paths["data_dir"], mirror=paths.get("mirror"),
                         download=bool(paths.get("download", True)))
        except ForestlabError as exc:
            problems[spec.dataset] = str(exc)
    return problems


def _record_row(spec: RunSpec, rec: Mapping[str, Any], arrays: list[str]) -> dict[str, Any]:
    return {
        "key": spec.key, "status": rec["status"], "experiment": spec.experiment, "study": spec.study,
        "dataset": spec.dataset, "algorithm": spec.algorithm, "protocol": spec.protocol, "seed": spec.seed,
        "repetition": spec.repetition, "fold": spec.fold, "spec": spec.identity, "selected": rec["selected"],
        "metrics": rec["metrics"], "timings": rec["timings"], "arrays": arrays, "error": rec["error"],
        "forestlab_version": __version__, "learner_version": spec.identity["learner"]["version"],
    }


def execute(specs: Sequence[RunSpec], store: Store, *, n_jobs: int = 1, backend: str = "loky",
            force: bool = False, on_event: Callable[[str, Any], None] | None = None,
            scheduler: str | None = None) -> Summary:
    """Run what the store does not hold yet and store each record as it arrives.

    Parameters
    ----------
    specs : sequence of RunSpec
        The plan.
    store : Store
        Where records go; written by this process only.
    n_jobs, backend : joblib settings (``backend="dask"`` uses the dask cluster at ``scheduler``).
    force : bool
        Recompute runs that are already done.
    on_event : callable
        ``on_event(kind, value)`` for progress: ("start", Summary), ("done" | "failed", (spec, record)),
        ("skip", (dataset, message)), ("end", Summary).

    Notes
    -----
    A worker process that dies (a crash in native code, ``os._exit``, the out-of-memory killer) breaks the whole
    joblib pool: the jobs that had not returned are then run again one at a time, and a job that kills its worker
    again is stored as failed (with a message saying so) while the others complete. An interrupt (Ctrl-C) stops
    the fan-out and returns with ``interrupted`` set; every record received before it is stored.
    """
    emit = on_event or (lambda kind, value: None)
    summary = Summary(planned=len(specs))
    t0 = time.perf_counter()
    statuses = store.statuses(s.key for s in specs)
    todo = [s for s in specs if force or statuses.get(s.key) != "done"]
    summary.already_done = len(specs) - len(todo)
    problems = preflight(todo) if todo else {}
    for dataset, message in problems.items():
        n = sum(1 for s in todo if s.dataset == dataset)
        summary.skipped += n
        summary.errors.append(message)
        emit("skip", (dataset, message, n))
    todo = [s for s in todo if s.dataset not in problems]
    by_key = {s.key: s for s in todo}
    emit("start", (summary, len(todo)))
    stored: set[str] = set()

    def store_records(records: Iterable[Mapping[str, Any]]) -> None:
        for rec in records:
            spec = by_key[rec["key"]]
            names = store.save_arrays(spec.key, rec["arrays"]) if rec["status"] == "done" else []
            store.put(_record_row(spec, rec, names), overwrite_done=force)
            stored.add(spec.key)
            if rec["status"] == "done":
                summary.done += 1
            else:
                summary.failed += 1
            emit(rec["status"], (spec, rec))

    if todo:
        config = _joblib_config(backend, n_jobs)
        client = _dask_client(scheduler) if backend == "dask" else None
        deaths = _worker_death_errors()
        groups = group_specs(todo)
        try:
            try:
                _run_jobs(groups, config, store_records)
            except deaths as exc:
                left = [g for g in groups if any(s.key not in stored for s in g)]
                log.warning("a worker process died (%s); running the %d unfinished jobs one at a time",
                            _death_detail(exc), len(left))
                for group in left:
                    try:
                        _run_jobs([group], config, store_records)
                    except deaths as exc_again:
                        store_records([_died_record(s, exc_again) for s in group if s.key not in stored])
        except KeyboardInterrupt:
            summary.interrupted = True
        except _BackendError as exc:
            raise ForestlabError(f"the {backend} backend failed{f' (scheduler {scheduler})' if scheduler else ''}: "
                                 f"{_one_line(exc.__cause__)}; the {summary.done + summary.failed} runs that "
                                 "finished are stored: rerun to resume") from None
        finally:
            if client is not None:
                cluster = None if scheduler else getattr(client, "cluster", None)  # a LocalCluster we started
                client.close()
                if cluster is not None:
                    cluster.close()
    summary.elapsed = time.perf_counter() - t0
    emit("end", summary)
    return summary


def _joblib_config(backend: str, n_jobs: int) -> dict[str, Any]:
    """joblib's ``parallel_config`` for a launcher. Loky workers ignore SIGINT: Ctrl-C reaches the whole process
    group, and only this process should act on it (it stops the fan-out, which terminates the workers); a worker
    interrupted mid-task would print its own traceback."""
    import signal

    if backend == "loky" and n_jobs == 1:
        return {"backend": "sequential", "n_jobs": 1}
    if backend == "loky":
        return {"backend": "loky", "n_jobs": n_jobs, "initializer": signal.signal,
                "initargs": (signal.SIGINT, signal.SIG_IGN)}
    return {"backend": backend, "n_jobs": n_jobs}


class _BackendError(Exception):
    """A job could not be run or its result not received for a reason outside the run (a lost dask cluster)."""


def _run_jobs(groups: Sequence[Sequence[RunSpec]], config: Mapping[str, Any],
              sink: Callable[[list[dict[str, Any]]], None]) -> None:
    """Fan ``groups`` out with joblib and hand each job's records to ``sink`` as they arrive.

    Runs executed in this process get one BLAS/OpenMP thread, as loky gives its workers: the numbers then do not
    depend on ``n_jobs`` (a thread count can change a floating-point sum's order), and the small matrix products
    of a run gain nothing from more threads (they spin, measured slower).

    ``config`` comes from :func:`_joblib_config`.
    """
    from joblib import Parallel, delayed, parallel_config
    from threadpoolctl import threadpool_limits

    limits = threadpool_limits(1) if config["backend"] == "sequential" else contextlib.nullcontext()
    with limits, parallel_config(**config):
        jobs = iter(Parallel(return_as="generator_unordered")(
            delayed(execute_group_packed)([_worker_payload(s) for s in group]) for group in groups))
        while True:
            try:
                records = next(jobs)
            except StopIteration:
                return
            except (KeyboardInterrupt, *_worker_death_errors()):
                raise
            except Exception as exc:
                if config["backend"] != "dask":  # execute_group never raises: anything else is a bug, shown whole
                    raise
                raise _BackendError() from exc
            sink(records)


def _worker_payload(spec: RunSpec) -> dict[str, Any]:
    """The spec's payload with absolute data paths, so a worker started in another folder (a cluster node) finds
    the same files."""
    paths = dict(spec.payload["paths"])
    for name in ("root_dir", "data_dir", "results_dir", "mirror"):
        if isinstance(paths.get(name), str) and paths[name]:
            paths[name] = os.path.abspath(os.path.expanduser(paths[name]))
    return {**spec.payload, "paths": paths}


def _worker_death_errors() -> tuple[type[BaseException], ...]:
    """Exceptions by which joblib reports a worker process that died: loky's TerminatedWorkerError (a
    BrokenExecutor) and dask's KilledWorker."""
    from concurrent.futures import BrokenExecutor

    types: list[type[BaseException]] = [BrokenExecutor]
    try:
        from distributed import KilledWorker
    except ImportError:  # pragma: no cover - dask is an extra
        pass
    else:
        types.append(KilledWorker)
    return tuple(types)


def _death_detail(exc: BaseException) -> str:
    import re

    match = re.search(r"exit codes of the workers are (\{[^}]*\})", str(exc))
    return f"exit code {match.group(1)}" if match else _one_line(exc)


def _one_line(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _died_record(spec: RunSpec, exc: BaseException) -> dict[str, Any]:
    """The record of a run whose job killed its worker process even when run alone."""
    return {"key": spec.key, "status": "failed", "metrics": {}, "selected": {}, "timings": {}, "arrays": {},
            "error": f"WorkerDied: the worker process running this job died ({_death_detail(exc)}), also when run "
                     "alone: the learner crashed (a segmentation fault, os._exit, an abort in native code) or the "
                     "system killed it (often for lack of memory); the other runs went on; rerun to retry"}


def group_specs(specs: Sequence[RunSpec]) -> list[list[RunSpec]]:
    """Jobs: the specs that share a dataset, a split and a ``seed_tag`` run together, so the learners that grow
    the same trees (RF, SORF, MinCq) fit them once. Order follows the plan."""
    groups: dict[str, list[RunSpec]] = {}
    for spec in specs:
        ident = spec.identity
        key = run_key({"dataset": ident["dataset"], "protocol": ident["protocol"], "seed": ident["seed"],
                       "repetition": ident["repetition"], "fold": ident["fold"],
                       "seed_tag": ident["learner"]["seed_tag"]})
        groups.setdefault(key, []).append(spec)
    return list(groups.values())


def _dask_client(scheduler: str | None):
    """A dask client on the scheduler at ``scheduler`` (e.g. ``tcp://host:8786``), or on a new LocalCluster of
    this machine's cores when None; an unreachable or malformed address is a ConfigError."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - depends on the installation
        raise ConfigError("launcher=dask needs dask.distributed: pip install 'forestlab[dask]'") from None
    if scheduler:
        # Probe the address first: a Client that fails to connect lingers and times out again at exit, noisily.
        try:
            _probe_scheduler(str(scheduler))
            return Client(scheduler)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise ConfigError(f"cannot connect to the dask scheduler at launcher.scheduler={scheduler} "
                              f"({_one_line(exc)}); start it (dask scheduler) or fix the address") from None
    return Client(LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True))


def _probe_scheduler(address: str) -> None:
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


def chunked(iterable: Iterable[Any], size: int) -> Iterable[list[Any]]:
    it = iter(iterable)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def is_terminal() -> bool:
    return sys.stderr.isatty()
