"""Plan, execute and store the runs of an experiment.

``plan(experiment)`` expands a resolved :class:`~forestlab.experiment.Experiment` (datasets x algorithms x seeds
[x folds]) into :class:`RunSpec` objects, each with a stable key: the SHA-256 of the canonical JSON of everything
that decides its fit (the dataset's parsing and preprocessing, the learner's class, version, parameters and model
selection, the resolved protocol, the seeds). Keys do not depend on the experiment's name nor on its metrics, so
experiments that share runs share their results, and a metric added later is computed from the stored outputs.

``run_experiment(experiment, ...)`` is the whole run, and the only one: it checks the limits, plans, takes the
store's run lock, records the plan (the one answer to "which runs belong to this experiment":
:meth:`forestlab.store.Store.plan_for`), runs it and returns a :class:`Summary` whose :attr:`Summary.outcome` says
how it ended; it reports progress as typed events (:data:`Event`). Its fan-out, ``execute(specs, store, ...)``,
skips what the store already holds, fans the rest out (:mod:`forestlab.launchers`) and writes each record as it
arrives. A failing run is stored with its error and the kind of its failure (:class:`forestlab.errors.FailureKind`,
decided by the exception's type where it is caught), and the others go on.

A generated dataset's known quantities (depecker2010's AUC*, ROC*, level sets) are asked of the dataset layer
(:func:`forestlab.datasets.generated_info`), which its generators registered them with.

Each run is evaluated according to its learner's task (:data:`forestlab.learners.TASKS`):

- ``classifier``: ``predict`` on the test and training parts (and ``decision_function`` on binary tasks);
- ``ranker``: ``decision_function`` only (the score; higher means more likely positive);
- ``two_sample_test``: ``test(X_a, X_b)`` on the run's sample (the training part, split by label), which gives a
  statistic and a p-value (and the test's ``diagnostics_``, stored as values: the held-out AUC of a learnt score).

What the metrics are computed from is stored with the run (:mod:`forestlab.evaluation`), and learner-specific
values (out-of-bag risk, tree depth, PAC-Bayes diagnostics, chosen hyperparameters, curves) come through the one
channel :func:`forestlab.learners.run_report`.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from forestlab._values import is_int
from forestlab.config import resolve_path, validate
from forestlab.datasets import generated_info, load_dataset
from forestlab.datasets._fetch import configured_mirror
from forestlab.datasets._load import processed_ready
from forestlab.environment import run_provenance
from forestlab.errors import ConfigError, DatasetError, FailureKind, ForestlabError, Terminated, one_line
from forestlab.evaluation import backfill, outputs_metrics
from forestlab.experiment import Experiment, content_hash, protocol_for
from forestlab.launchers import (
    BackendError,
    dask_session,
    death_detail,
    joblib_config,
    run_jobs,
    worker_count,
    worker_death_errors,
)
from forestlab.learners import check_params_for_data, get_entry, run_report, shared_tree_predictions
from forestlab.learners._cache import FitCache
from forestlab.protocols import check_sizes, draw_resample, make_split, training_size
from forestlab.seeds import derive_seed
from forestlab.selection import select_and_fit
from forestlab.spec import Selection
from forestlab.store import PackedArrays, RunLock, Store, pack_arrays

log = logging.getLogger("forestlab")

# Bump when the way runs are evaluated changes (what is measured, how splits are drawn): every key changes with it.
# 2: keys no longer hold the metrics; runs store the outputs their metrics are computed from.
EVALUATION_VERSION = 2


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
    return content_hash(identity, 32)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _hash(blob: str) -> str:
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def plan(experiment: Experiment | DictConfig) -> list[RunSpec]:
    """Expand the experiment into run specs, in a deterministic order (dataset, algorithm, repetition, fold).

    ``experiment`` is an :class:`~forestlab.experiment.Experiment`; a composed config is resolved first.
    """
    if not isinstance(experiment, Experiment):
        experiment = validate(experiment)

    specs: list[RunSpec] = []
    metrics = list(experiment.metrics)
    paths = experiment.paths.as_dict()  # the workers' copy: a plain dict, as the payload carries it
    for ds in experiment.datasets:
        proto = protocol_for(experiment, ds)
        folds: list[int | None] = list(range(experiment.folds_run)) if proto["kind"] == "kfold" else [None]
        ds_identity = ds.identity
        for alg in experiment.algorithms:
            entry = get_entry(alg.estimator)
            learner = {**alg.identity, "class": f"{entry.cls.__module__}.{entry.cls.__qualname__}",
                       "version": int(getattr(entry.cls, "version", 0)), "task": entry.task}
            # run_key(identity) without serialising the shared parts for every run: the canonical JSON of the
            # identity is these pieces around the repetition and fold (keys in sorted order; test_runner checks it)
            head = (f'{{"dataset":{_canonical(ds_identity)},"evaluation":{EVALUATION_VERSION},"fold":')
            middle = f',"learner":{_canonical(learner)},"protocol":{_canonical(proto)},"repetition":'
            tail = f',"seed":{_canonical(experiment.seed)}}}'
            for rep in range(experiment.seeds_of(ds)):
                for fold in folds:
                    identity = {"dataset": ds_identity, "learner": learner, "protocol": proto,
                                "seed": experiment.seed, "repetition": rep, "fold": fold,
                                "evaluation": EVALUATION_VERSION}
                    key = _hash(f"{head}{_canonical(fold)}{middle}{rep}{tail}")
                    payload = {"key": key, "dataset_cfg": ds.cfg, "dataset": ds.name, "algorithm": alg.name,
                               "learner": learner, "protocol": proto, "seed": experiment.seed, "repetition": rep,
                               "fold": fold, "metrics": metrics, "paths": paths}
                    specs.append(RunSpec(key=key, experiment=experiment.name, study=experiment.study,
                                         dataset=ds.name, algorithm=alg.name,
                                         protocol=str(experiment.protocol.name), seed=experiment.seed,
                                         repetition=rep, fold=fold, identity=identity, payload=payload))
    return specs


# ---------------------------------------------------------------------------------------------------------------
# The worker side: everything below runs in a joblib worker and must not touch the store.
# ---------------------------------------------------------------------------------------------------------------
def _load(payload: Mapping[str, Any]):
    paths = payload["paths"]
    return load_dataset(payload["dataset_cfg"], data_dir=paths["data_dir"], mirror=configured_mirror(paths),
                        download=bool(paths.get("download", True)))


@dataclass
class RunData:
    """The data of one run: training and test parts, and what the reports may want to know about the dataset."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    task: str  # the dataset's task: binary or multiclass
    info: dict[str, Any]


def _run_data(payload: Mapping[str, Any], splits: dict[tuple, Any] | None = None) -> RunData:
    """Load the dataset and cut the run's split (or draw fresh samples, for the ``resample`` protocol). ``splits``
    keeps the splits made (their indices) for the other runs of a job, which share them: a split is a function of
    the protocol, the seeds and the labels only, and each run still gets its own copies of the rows."""
    proto = payload["protocol"]
    if proto["kind"] == "resample":
        drawn = draw_resample(proto, payload["dataset_cfg"], base_seed=payload["seed"], dataset=payload["dataset"],
                              repetition=payload["repetition"])
        d = drawn.X_train.shape[1]
        info = {"n_features": d, "feature_names": [f"x{i + 1}" for i in range(d)],
                **generated_info(payload["dataset_cfg"])}
        return RunData(drawn.X_train, drawn.y_train, drawn.X_test, drawn.y_test, "binary", info)
    ds = _load(payload)
    where = (payload["dataset"], _canonical(proto), payload["seed"], payload["repetition"], payload["fold"],
             len(ds.y))
    split = None if splits is None else splits.get(where)
    if split is None:
        split = make_split(proto, ds.y, base_seed=payload["seed"], dataset=payload["dataset"],
                           repetition=payload["repetition"], fold=payload["fold"])
        if splits is not None:
            splits[where] = split
    info = {"n_samples": int(ds.X.shape[0]), "n_features": int(ds.X.shape[1]),
            "feature_names": [str(n) for n in ds.feature_names], **generated_info(payload["dataset_cfg"])}
    return RunData(ds.X[split.train], ds.y[split.train], ds.X[split.test], ds.y[split.test], ds.task, info)


def _evaluate(entry: Any, payload: Mapping[str, Any], data: RunData, random_state: int,
              cache: FitCache | None) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, float]]:
    """Fit (with model selection) and evaluate one run as its task asks: (selected, arrays, values)."""
    learner = payload["learner"]
    arrays: dict[str, np.ndarray] = {}
    classes = np.unique(data.y_train)
    if len(classes) < 2:  # nothing to learn (or, for a test, one sample empty): a failed run with its reason
        raise DatasetError(f"the training part of this split ({len(data.y_train)} points) holds only class "
                           f"{classes.tolist()}: nothing to learn from; use a larger training part or a stratified "
                           "protocol (protocol.stratify=true)")
    if entry.task == "two_sample_test":
        est = entry.cls(**learner["params"], random_state=random_state)
        positive = data.y_train == 1
        result = est.test(data.X_train[positive], data.X_train[~positive])
        arrays["statistic"] = np.asarray(float(result.statistic))
        arrays["p_value"] = np.asarray(float(result.p_value))
        diagnostics = {k: float(v) for k, v in (getattr(est, "diagnostics_", None) or {}).items()}
        return {}, arrays, {**diagnostics, "statistic": float(result.statistic), "p_value": float(result.p_value)}
    est, selected, sel_arrays = select_and_fit(
        entry.cls, learner["params"], learner.get("grid") or {}, learner.get("selection") or {"kind": "none"},
        data.X_train, data.y_train, random_state=random_state, cache=cache, X_test=data.X_test, y_test=data.y_test,
        task=entry.task)
    arrays.update(sel_arrays)
    scores = entry.task == "ranker" or (data.task == "binary" and hasattr(est, "decision_function"))
    if scores:
        arrays["test_scores"] = np.asarray(est.decision_function(data.X_test), dtype=np.float64)
        arrays["train_scores"] = np.asarray(est.decision_function(data.X_train), dtype=np.float64)
    if entry.task == "classifier":
        arrays["test_pred"] = np.asarray(est.predict(data.X_test))
        arrays["train_pred"] = np.asarray(est.predict(data.X_train))
    arrays["y_test"] = np.asarray(data.y_test)
    arrays["y_train"] = np.asarray(data.y_train)
    report = run_report(est, data.X_test, data.y_test)
    selected = {**selected, **report["selected"]}
    arrays.update({k: np.asarray(v) for k, v in report["arrays"].items()})
    return selected, arrays, dict(report["values"])


def execute_group(payloads: Sequence[Mapping[str, Any]], cache: FitCache | None = None) -> list[dict[str, Any]]:
    """Run the specs of one job (one split, one ``seed_tag``) with one shared :class:`FitCache`, the trees'
    predictions computed once for all of them, and the split cut once."""
    cache = FitCache() if cache is None else cache
    splits: dict[tuple, Any] = {}
    with shared_tree_predictions():
        return [execute_spec(p, cache, splits) for p in payloads]


def execute_group_packed(payloads: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`execute_group` as a parallel job: each record's arrays come back packed (compressed ``.npz`` bytes),
    so the compression happens in the workers and the process that owns the store only writes bytes."""
    def packed(rec: dict[str, Any]) -> dict[str, Any]:
        try:
            return {**rec, "arrays": pack_arrays(rec["arrays"])}
        except ValueError as exc:  # an object array: it could only be stored pickled
            return {**rec, "status": "failed", "arrays": PackedArrays((), b""), "failure": FailureKind.ERROR.value,
                    "error": f"ValueError: the run's arrays cannot be stored without pickling ({exc})"}

    return [packed(rec) for rec in execute_group(payloads)]


def execute_spec(payload: Mapping[str, Any], cache: FitCache | None = None,
                 splits: dict[tuple, Any] | None = None) -> dict[str, Any]:
    """Run one spec and return its record (``status`` done or failed); never raises. A failed run's record holds
    its error and its ``failure`` kind (:class:`~forestlab.errors.FailureKind`, decided by the exception's type).
    ``cache`` and ``splits`` are shared by the runs of one job (see :func:`execute_group`)."""
    t_start = time.perf_counter()
    record: dict[str, Any] = {"key": payload["key"], "status": "failed", "metrics": {}, "selected": {},
                              "timings": {}, "arrays": {}, "error": None, "failure": None, "dataset_info": None}
    timings = record["timings"]
    try:
        entry = get_entry(payload["learner"]["estimator"])
        t0 = time.perf_counter()
        data = _run_data(payload, splits)
        timings["load"] = time.perf_counter() - t0
        random_state = derive_seed("learner", payload["seed"], payload["dataset"], payload["repetition"],
                                   payload["fold"], payload["learner"]["seed_tag"])
        t0 = time.perf_counter()
        selected, arrays, values = _evaluate(entry, payload, data, random_state, cache)
        timings["fit_evaluate"] = time.perf_counter() - t0
        metrics = outputs_metrics(payload["metrics"], arrays)
        metrics.update(values)
        metrics["n_train"], metrics["n_test"] = float(len(data.y_train)), float(len(data.y_test))
        record.update(status="done", metrics=metrics, selected=selected, arrays=arrays, dataset_info=data.info)
    except ForestlabError as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["failure"] = FailureKind.of(exc).value
    except Exception as exc:  # noqa: BLE001 - stored with its traceback, the other runs go on
        record["error"] = traceback.format_exc(limit=20)
        record["failure"] = FailureKind.of(exc).value
    timings["total"] = time.perf_counter() - t_start
    return record


# ---------------------------------------------------------------------------------------------------------------
# The parent side.
# ---------------------------------------------------------------------------------------------------------------
class Outcome(enum.Enum):
    """How a run of an experiment ended: the command line maps each to its exit status."""

    COMPLETE = "complete"  # every run asked for is done (or, for a dry run, was counted)
    FAILED_RUNS = "failed_runs"  # some runs failed; every other run is stored
    NOT_STARTED = "not_started"  # some datasets were refused before their runs started (preflight)
    INTERRUPTED = "interrupted"  # Ctrl-C: what finished is stored
    TERMINATED = "terminated"  # SIGTERM: what finished is stored


@dataclass
class Summary:
    """What a run of an experiment did (filled in as it goes; complete when :func:`execute` returns)."""

    planned: int = 0
    already_done: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    backfilled: int = 0
    transient: int = 0  # failed runs whose cause a rerun may not meet again (a killed worker, lack of memory)
    interrupted: bool = False
    terminated: bool = False  # the interrupt was SIGTERM
    elapsed: float = 0.0
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False  # counted only: nothing ran, nothing was written
    results_dir: Path | None = None  # the store's folder (set by run_experiment)
    keys: tuple[str, ...] = ()  # the plan's run keys, in plan order (set by run_experiment)
    records: pd.DataFrame | None = None  # with run_experiment(keep_records=True): the plan's stored records

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.skipped == 0 and not self.interrupted

    @property
    def to_run(self) -> int:
        """The planned runs not done yet (a dry run's count)."""
        return self.planned - self.already_done

    @property
    def outcome(self) -> Outcome:
        if self.interrupted:
            return Outcome.TERMINATED if self.terminated else Outcome.INTERRUPTED
        if self.skipped:
            return Outcome.NOT_STARTED
        if self.failed:
            return Outcome.FAILED_RUNS
        return Outcome.COMPLETE


# -- events: what a run reports as it goes (the command line renders them) -------------------------------------
@dataclass(frozen=True)
class Note:
    """Something the run chose that the user should know (fewer workers than asked, ...)."""

    message: str


@dataclass(frozen=True)
class WaitingForStore:
    """Another ``forestlab run`` holds the store's run lock: this one waits for it (``wait=True``)."""

    holder: str  # " (pid N on HOST)", or "" when unknown
    results_dir: Path


@dataclass(frozen=True)
class DatasetSkipped:
    """A dataset refused before its runs started (it cannot be had, or cannot take what the plan asks of it)."""

    dataset: str
    message: str
    n_runs: int


@dataclass(frozen=True)
class ExperimentStarted:
    """The fan-out starts: ``summary`` holds the counts so far, ``to_run`` runs will be started."""

    summary: Summary
    to_run: int
    experiment: str = ""  # the plan's experiment (its first run's)


@dataclass(frozen=True)
class RunDone:
    """A run finished and is stored."""

    spec: RunSpec
    seconds: float


@dataclass(frozen=True)
class RunFailed:
    """A run failed and is stored with its error and the kind of its failure."""

    spec: RunSpec
    seconds: float
    kind: FailureKind
    error: str


@dataclass(frozen=True)
class ExperimentEnded:
    """Every run that was started has ended (or the run was interrupted)."""

    summary: Summary


Event = Note | WaitingForStore | DatasetSkipped | ExperimentStarted | RunDone | RunFailed | ExperimentEnded


def check_limits(exp: Experiment) -> None:
    """Refuse a plan beyond the configured sanity bounds (``limits.max_runs``, ``max_trees``,
    ``max_generated_values``): a typo like seeds=10000 or n_estimators=100000 would otherwise fill the disk or the
    memory for hours. The size is computed, not planned, so the refusal comes in milliseconds whatever the size.

    Raises
    ------
    ConfigError
        Naming the bound, the size asked for, and how to pass it anyway.
    """
    max_runs, max_trees = exp.limits.max_runs, exp.limits.max_trees
    if max_runs is not None and exp.n_runs > int(max_runs):
        raise ConfigError(f"experiment {exp.name} plans {exp.n_runs} runs, more than limits.max_runs={max_runs}: "
                          f"pass --yes to plan and run it anyway, or raise the bound with "
                          f"limits.max_runs={exp.n_runs}")
    for alg in exp.algorithms:
        counts = [alg.params.get("n_estimators"), *(alg.grid.get("n_estimators") or [])]
        trees = max((t for t in counts if is_int(t)), default=None)
        if max_trees is not None and trees is not None and trees > int(max_trees):
            raise ConfigError(f"algorithm '{alg.name}' grows {trees} trees per forest, more than "
                              f"limits.max_trees={max_trees}: pass --yes to run it anyway, or raise the bound with "
                              f"limits.max_trees={trees}")
    max_values = exp.limits.max_generated_values
    for ds in exp.datasets:
        source = ds.cfg.get("source") or {}
        if source.get("kind") != "synthetic" or max_values is None:
            continue
        rows, cols = source.get("n_samples"), source.get("n_features")
        if isinstance(rows, int) and isinstance(cols, int) and rows * cols > int(max_values):
            raise ConfigError(f"dataset '{ds.name}' would generate {rows} x {cols} = {rows * cols} values "
                              f"({rows * cols * 8 / 2**30:.1f} GiB), more than limits.max_generated_values="
                              f"{max_values}: pass --yes to generate it anyway, or raise the bound with "
                              f"limits.max_generated_values={rows * cols}")


def run_experiment(exp: Experiment, *, force: bool = False, wait: bool = True, yes: bool = False,
                   dry_run: bool = False, keep_records: bool = False,
                   on_event: Callable[[Event], None] | None = None,
                   n_jobs: int | None = None, backend: str | None = None,
                   scheduler: str | None = None, definition: Sequence[str] | None = None) -> Summary:
    """Run an experiment: check its limits, plan it, record the plan, run what the store does not hold yet and
    store each run as it ends.

    Parameters
    ----------
    exp : Experiment
        The resolved experiment.
    force : bool
        Recompute runs that are already done.
    wait : bool
        When another ``forestlab run`` holds the store: wait for it (a :class:`WaitingForStore` event says so), or
        raise :class:`~forestlab.errors.StoreBusy` at once.
    yes : bool
        Run a plan beyond the limits (:func:`check_limits`).
    dry_run : bool
        Count only: plan, read which runs are done, and return (no lock, nothing written).
    keep_records : bool
        Return the plan's stored records in :attr:`Summary.records`, read before the store is closed (a reader
        opening the store afterwards would leave its write-ahead log beside it).
    on_event : callable
        Called with each :data:`Event` as the run goes.
    n_jobs, backend, scheduler
        The launcher's settings (default: the experiment's ``launcher``).
    definition : sequence of str
        For an experiment named by ``experiment.name=`` (not in ``conf/experiment/``): the overrides that compose
        it (:func:`forestlab.config.definition`), recorded with its plan so that the reading commands find it by
        its name.

    Returns
    -------
    Summary
        The counts, and :attr:`Summary.outcome`, how the run ended.
    """
    if not dry_run:
        return run_experiments([exp], force=force, wait=wait, yes=yes, keep_records=keep_records,
                               on_event=on_event, n_jobs=n_jobs, backend=backend, scheduler=scheduler,
                               definitions=[definition])[0]
    _note_oversubscribed(on_event, exp.launcher, n_jobs, backend)
    if not yes:
        check_limits(exp)
    specs = plan(exp)
    results_dir = resolve_path(exp.paths.results_dir)
    keys = tuple(s.key for s in specs)
    with Store(results_dir, readonly=True) as store:
        statuses = store.statuses(keys)
    done = sum(1 for k in keys if statuses.get(k) == "done")
    return Summary(planned=len(specs), already_done=done, dry_run=True, results_dir=results_dir, keys=keys)


def run_experiments(exps: Sequence[Experiment], *, force: bool = False, wait: bool = True, yes: bool = False,
                    keep_records: bool = False, on_event: Callable[[Event], None] | None = None,
                    n_jobs: int | None = None, backend: str | None = None, scheduler: str | None = None,
                    definitions: Sequence[Sequence[str] | None] | None = None) -> list[Summary]:
    """Run several experiments as :func:`run_experiment` runs one, with one lock, one store and **one** pool of
    workers for all their runs (:func:`execute_many`): the workers start once, and the last runs of an experiment
    share the pool with the first of the next instead of leaving a core idle. ``forestlab run experiment=a,b,c``.

    The experiments must share their store (``paths.results_dir``) and their launcher (``launcher.*``); each is
    checked against its limits (unless ``yes``), planned and its plan recorded before any run starts. Returns one
    :class:`Summary` per experiment, in order. The other parameters are :func:`run_experiment`'s (``definitions``:
    its ``definition`` of each experiment); :func:`run_experiment` is this function on one experiment.
    """
    if not exps:
        return []
    first = exps[0]
    results_dir = resolve_path(first.paths.results_dir)
    for exp in exps[1:]:
        if resolve_path(exp.paths.results_dir) != results_dir:
            raise ConfigError(f"experiments {first.name} and {exp.name} keep their runs in different stores "
                              f"({results_dir} and {resolve_path(exp.paths.results_dir)}): run them apart")
        if exp.launcher.as_dict() != first.launcher.as_dict():
            raise ConfigError(f"experiments {first.name} and {exp.name} ask for different launchers "
                              f"({first.launcher.as_dict()} and {exp.launcher.as_dict()}): run them apart, or "
                              "give the launcher on the command line (launcher.n_jobs=...)")
    emit = on_event or (lambda event: None)
    n_jobs, backend = _note_oversubscribed(emit, first.launcher, n_jobs, backend)
    scheduler = first.launcher.scheduler if scheduler is None else scheduler
    if not yes:
        for exp in exps:
            check_limits(exp)
    plans = [plan(exp) for exp in exps]
    definitions = list(definitions) if definitions is not None else [None] * len(exps)
    lock = RunLock(results_dir)
    lock.acquire(wait=wait, on_wait=lambda holder: emit(WaitingForStore(holder, results_dir)))
    try:
        with Store(results_dir) as store:
            for exp, specs, named in zip(exps, plans, definitions, strict=True):
                recorded = exp.summary() if named is None else {**exp.summary(), "definition": list(named)}
                store.record_plan(exp.plan_id, recorded, (_plan_row(s) for s in specs))
            summaries = execute_many(plans, store, n_jobs=n_jobs, backend=backend, force=force, on_event=emit,
                                     scheduler=scheduler)
            if keep_records:
                for summary, specs in zip(summaries, plans, strict=True):
                    summary.records = store.records([s.key for s in specs])
    finally:
        lock.release()
    for summary, specs in zip(summaries, plans, strict=True):
        summary.results_dir, summary.keys = results_dir, tuple(s.key for s in specs)
    return summaries


def _note_oversubscribed(on_event: Callable[[Event], None] | None, launcher: Any, n_jobs: int | None,
                         backend: str | None) -> tuple[int, str]:
    """The workers and backend of a run (given, else the launcher's), after a :class:`Note` when loky would start
    more workers than the machine has cores."""
    n_jobs = int(launcher.n_jobs) if n_jobs is None else int(n_jobs)
    backend = str(launcher.backend) if backend is None else backend
    cores = os.cpu_count() or 1
    if backend != "dask" and n_jobs > cores and on_event is not None:
        on_event(Note(f"launcher.n_jobs={n_jobs} asks for more workers than the {cores} cores of this machine: "
                      f"they share the cores (and memory); launcher.n_jobs={cores} or -1 uses each core once"))
    return n_jobs, backend


def _plan_row(spec: RunSpec) -> dict[str, Any]:
    """What the store keeps of a planned run."""
    return {"key": spec.key, "dataset": spec.dataset, "algorithm": spec.algorithm, "repetition": spec.repetition,
            "fold": spec.fold}


@dataclass(frozen=True)
class Refusal:
    """Why a dataset's runs are not started (:func:`preflight`). ``whole``: what the plan asks of the dataset
    cannot apply to it (a configuration it cannot take), so its runs already stored, by a version that clipped the
    value instead, are not served as done either; otherwise the dataset could not be had (a missing or corrupt
    file), and only its runs still to do are held back."""

    message: str
    whole: bool


def preflight(specs: Sequence[RunSpec], todo: set[str] | None = None) -> dict[str, Refusal]:
    """Check that each planned dataset can be had, and that what the plan asks of it can apply to its actual size;
    return {dataset: :class:`Refusal`} for those that cannot (their runs are not started: one line each, never N
    stored failed runs).

    A dataset whose verified processed arrays are on disk and up to date is only checked (its metadata read), against
    the size its config documents: the runs load it themselves, in this process or in the workers. Any other is loaded
    once here, which verifies and parses its files and writes its processed arrays for the runs, and is checked
    against its real size: the protocol's split sizes and folds (:func:`forestlab.protocols.check_sizes`) and every
    learner's parameters (:func:`forestlab.learners.check_params_for_data`: ``max_features=1000`` on 60 features).
    ``todo`` holds the keys still to run (default: all): a dataset whose runs are all done is not required to be
    available, but what is asked of it is still checked when its size can be had.
    """
    problems: dict[str, Refusal] = {}
    by_dataset: dict[str, list[RunSpec]] = {}
    for spec in specs:
        by_dataset.setdefault(spec.dataset, []).append(spec)
    for dataset, group in by_dataset.items():
        first = group[0]
        payload = first.payload
        if payload["protocol"]["kind"] == "resample":  # resample: drawn per run, checked by the generator's config
            continue
        paths = payload["paths"]
        ds_cfg = payload["dataset_cfg"]
        facts: tuple[int, int, list[int] | None] | None = None
        needed = todo is None or any(s.key in todo for s in group)
        shape = ds_cfg.get("shape")
        if isinstance(shape, list) and len(shape) == 2 and all(isinstance(v, int) for v in shape) and (
                not needed or processed_ready(ds_cfg, data_dir=paths["data_dir"], mirror=configured_mirror(paths))):
            facts = (shape[0], shape[1], None)  # the size its config documents (checked when it was parsed)
        if facts is None:
            try:
                ds = load_dataset(ds_cfg, data_dir=paths["data_dir"], mirror=configured_mirror(paths),
                                  download=bool(paths.get("download", True)) and needed)
            except ForestlabError as exc:
                if needed:
                    problems[dataset] = Refusal(str(exc), whole=False)
                continue
            facts = (ds.n_samples, ds.n_features, [int(v) for v in ds.class_counts().values()])
        problem = _data_problem(dataset, ds_cfg, group, *facts)
        if problem:
            problems[dataset] = Refusal(problem, whole=True)
    return problems


def _data_problem(dataset: str, ds_cfg: Mapping[str, Any], specs: Sequence[RunSpec], n: int, d: int,
                  class_counts: list[int] | None) -> str | None:
    """What the plan asks of ``dataset`` that cannot apply to data of ``n`` rows and ``d`` features, or None."""
    protocol = specs[0].payload["protocol"]
    try:
        check_sizes(protocol, ds_cfg, dataset, n=n, class_counts=class_counts)
    except ForestlabError as exc:
        return str(exc)
    n_fit = training_size(protocol, ds_cfg, n)
    n_classes = len(class_counts) if class_counts is not None else 2
    seen: set[str] = set()
    for spec in specs:
        if spec.algorithm in seen:
            continue
        seen.add(spec.algorithm)
        learner = spec.payload["learner"]
        selection = Selection.from_config(learner.get("selection"))  # the payload carries its as_dict()
        if selection.kind == "cv" and class_counts is not None:
            # the smallest class's points in a training part, at most (stratified splits keep the proportions)
            most = -(-min(class_counts) * n_fit // n)
            if most < int(selection.folds or 0):
                return (f"dataset '{dataset}': algorithm '{spec.algorithm}' selects its hyperparameters by "
                        f"{selection.folds}-fold inner cross-validation, but a class has at most {most} points in a "
                        f"training part ({min(class_counts)} of {n} rows): fewer than the folds")
        grid = dict(learner.get("grid") or {})  # the points the selection fits, its proxy values included
        grid.update({k: [v] for k, v in (selection.proxy or {}).items()})
        found = check_params_for_data(learner["estimator"], learner.get("params") or {}, n_samples=n_fit,
                                      n_features=d, n_classes=n_classes, grid=grid or None)
        if found:
            return (f"dataset '{dataset}' ({n} rows, {n_fit} in a training part, {d} features) cannot take "
                    f"algorithm '{spec.algorithm}': {'; '.join(found)}; change the parameter (nothing is clipped)")
    return None

def _record_row(spec: RunSpec, rec: Mapping[str, Any], arrays: list[str]) -> dict[str, Any]:
    return {
        "key": spec.key, "status": rec["status"], "experiment": spec.experiment, "study": spec.study,
        "dataset": spec.dataset, "algorithm": spec.algorithm, "protocol": spec.protocol, "seed": spec.seed,
        "repetition": spec.repetition, "fold": spec.fold, "spec": spec.identity, "selected": rec["selected"],
        "metrics": rec["metrics"], "timings": rec["timings"], "arrays": arrays, "error": rec["error"],
        "failure": rec.get("failure"), **run_provenance(),  # forestlab's version, commit, packages: once a process
        "learner_version": spec.identity["learner"]["version"],
    }


def execute(specs: Sequence[RunSpec], store: Store, *, n_jobs: int = 1, backend: str = "loky",
            force: bool = False, on_event: Callable[[Event], None] | None = None,
            scheduler: str | None = None) -> Summary:
    """Run what the store does not hold yet and store each record as it arrives.

    :func:`run_experiment` is the whole run (limits, lock, plan record); this is its fan-out, on an open store.

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
        Called with each :data:`Event`: :class:`DatasetSkipped`, :class:`ExperimentStarted`, then
        :class:`RunDone` / :class:`RunFailed` per run, :class:`ExperimentEnded`.

    Notes
    -----
    A worker process that dies (a crash in native code, ``os._exit``, the out-of-memory killer) breaks the whole
    joblib pool: the jobs that had not returned are then run again one at a time, and a job that kills its worker
    again is stored as failed (kind ``worker_died``) while the others complete. An interrupt (Ctrl-C, or SIGTERM
    raised as :class:`~forestlab.errors.Terminated`) stops the fan-out and returns with ``interrupted`` set; every
    record received before it is stored.
    """
    return execute_many([specs], store, n_jobs=n_jobs, backend=backend, force=force, on_event=on_event,
                        scheduler=scheduler)[0]


def execute_many(plans: Sequence[Sequence[RunSpec]], store: Store, *, n_jobs: int = 1, backend: str = "loky",
                 force: bool = False, on_event: Callable[[Event], None] | None = None,
                 scheduler: str | None = None) -> list[Summary]:
    """:func:`execute` for several plans at once: each is checked as :func:`execute` checks it (what is done, which
    datasets it cannot have), then the runs left of all of them go to **one** pool, in plan order (runs of two plans
    that share a dataset, split and seed tag go in one job, as :func:`group_specs` groups one plan's), and each plan
    gets its own :class:`Summary`. A run two plans share (the same key: depecker2010_table_a3 plans Table A.1's
    runs) runs once and counts for both; its record names the first plan's experiment.

    Events: for each plan its :class:`DatasetSkipped` and :class:`ExperimentStarted` (``to_run``: the runs it adds
    to the pool), then :class:`RunDone` / :class:`RunFailed` once per run, then an :class:`ExperimentEnded` per
    plan.
    """
    emit = on_event or (lambda event: None)
    t0 = time.perf_counter()
    summaries: list[Summary] = []
    owners: dict[str, list[Summary]] = {}  # key -> the summaries of the plans that run it
    by_key: dict[str, RunSpec] = {}  # the runs to start, each once, in plan order
    for specs in plans:
        summary = Summary(planned=len(specs))
        summaries.append(summary)
        statuses = store.statuses(s.key for s in specs)
        todo = [s for s in specs if force or statuses.get(s.key) != "done"]
        by_todo = {s.key for s in todo}
        summary.already_done = len(specs) - len(todo)
        problems = preflight(specs, by_todo) if specs else {}
        for dataset, refusal in problems.items():
            # a configuration the data cannot take is refused whole: its runs stored by a version that clipped the
            # value instead (max_features=1000 run as 60) are not served as done either; a dataset that cannot be
            # had holds back its runs still to do, and its stored runs (made from the verified file) stay done
            held = [s for s in specs if s.dataset == dataset and (refusal.whole or s.key in by_todo)]
            summary.already_done -= sum(1 for s in held if s.key not in by_todo)
            summary.skipped += len(held)
            summary.errors.append(refusal.message)
            emit(DatasetSkipped(dataset, refusal.message, len(held)))
        added = 0
        for spec in todo:
            if spec.dataset in problems:
                continue
            if spec.key not in by_key:
                by_key[spec.key] = spec
                added += 1
            owners.setdefault(spec.key, []).append(summary)
        emit(ExperimentStarted(summary, added, specs[0].experiment if specs else ""))
    todo = list(by_key.values())
    stored: set[str] = set()
    described: set[str] = set()

    def store_records(records: Iterable[Mapping[str, Any]]) -> None:
        for rec in records:
            spec = by_key[rec["key"]]
            names = store.save_arrays(spec.key, rec["arrays"]) if rec["status"] == "done" else []
            store.put(_record_row(spec, rec, names), overwrite_done=force)
            if rec.get("dataset_info") and spec.dataset not in described:
                store.put_dataset_info(spec.dataset, rec["dataset_info"])
                described.add(spec.dataset)
            stored.add(spec.key)
            seconds = float(rec["timings"].get("total", 0.0))
            if rec["status"] == "done":
                for summary in owners[spec.key]:
                    summary.done += 1
                emit(RunDone(spec, seconds))
            else:
                kind = FailureKind(rec["failure"])
                for summary in owners[spec.key]:
                    summary.failed += 1
                    summary.transient += kind.transient
                emit(RunFailed(spec, seconds, kind, rec["error"] or ""))

    if todo:
        groups = group_specs(todo)
        workers = worker_count(n_jobs, len(groups), backend)
        if backend != "dask" and n_jobs != -1 and workers < n_jobs:
            emit(Note(f"{len(groups)} jobs to run: starting {workers} workers, not launcher.n_jobs={n_jobs}"))
        config = joblib_config(backend, workers)
        deaths = worker_death_errors(backend)
        def payloads(group: Sequence[RunSpec]) -> list[dict[str, Any]]:
            return [_worker_payload(s) for s in group]

        try:
            with dask_session(backend, scheduler):
                try:  # the payloads are made as joblib asks for them
                    run_jobs((payloads(g) for g in groups), execute_group_packed, config, store_records)
                except deaths as exc:
                    left = [i for i, g in enumerate(groups) if any(s.key not in stored for s in g)]
                    log.warning("a worker process died (%s); running the %d unfinished jobs one at a time",
                                death_detail(exc), len(left))
                    for i in left:
                        try:
                            run_jobs([payloads(groups[i])], execute_group_packed, config, store_records)
                        except deaths as exc_again:
                            store_records([_died_record(s, exc_again) for s in groups[i] if s.key not in stored])
        except KeyboardInterrupt as exc:
            for summary in summaries:
                summary.interrupted = True
                summary.terminated = isinstance(exc, Terminated)
        except BackendError as exc:
            where = f" (scheduler {scheduler})" if scheduler else ""
            finished = len(stored)
            raise ForestlabError(f"the {backend} backend failed{where}: {one_line(exc.__cause__, with_type=True)}; "
                                 f"the {finished} runs that finished are stored: rerun to resume") from None
    elapsed = time.perf_counter() - t0
    for specs, summary in zip(plans, summaries, strict=True):
        # a run made just now from this plan's own spec has its metrics; one made from another plan's spec (a run
        # two plans share) may lack some of this plan's
        summary.backfilled = backfill_metrics([s for s in specs if not (s.key in stored and by_key[s.key] is s)],
                                              store)
        summary.elapsed = elapsed
        emit(ExperimentEnded(summary))
    return summaries


def backfill_metrics(specs: Sequence[RunSpec], store: Store) -> int:
    """Compute, from their stored outputs, the metrics the plan asks for that done runs have not stored yet (a
    metric added to an experiment after its runs finished); return how many runs gained a metric. Nothing is
    refitted."""
    if not specs:
        return 0
    by_key = {s.key: s for s in specs}
    records = store.records(list(by_key))
    updated = 0
    for row in records[records["status"] == "done"].itertuples():
        new = backfill(by_key[row.key].payload["metrics"], row.metrics, row.arrays,
                       lambda key=row.key: store.load_arrays(key))
        if new:
            store.update_metrics(row.key, {**(row.metrics or {}), **new})
            updated += 1
    return updated


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

def _worker_payload(spec: RunSpec) -> dict[str, Any]:
    """The spec's payload with absolute data paths, so a worker started in another folder (a cluster node) finds
    the same files."""
    paths = dict(spec.payload["paths"])
    for name in ("root_dir", "data_dir", "results_dir", "mirror"):
        if isinstance(paths.get(name), str) and paths[name]:
            paths[name] = os.path.abspath(os.path.expanduser(paths[name]))
    return {**spec.payload, "paths": paths}


def _died_record(spec: RunSpec, exc: BaseException) -> dict[str, Any]:
    """The record of a run whose job killed its worker process even when run alone."""
    return {"key": spec.key, "status": "failed", "metrics": {}, "selected": {}, "timings": {}, "arrays": {},
            "failure": FailureKind.WORKER_DIED.value,
            "error": f"WorkerDied: the worker process running this job died ({death_detail(exc)}), also when run "
                     "alone: the learner crashed (a segmentation fault, os._exit, an abort in native code) or the "
                     "system killed it (often for lack of memory); the other runs went on; rerun to retry"}


def is_terminal() -> bool:
    return sys.stderr.isatty()
