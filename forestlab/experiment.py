"""The one resolved, typed description of an experiment.

:func:`forestlab.config.resolve` turns a composed config into an :class:`Experiment`: the datasets and algorithms it
names, each with its config (the composed one, with the user's overrides, for the selected option; its group file
through Hydra for the others), the experiment-wide parameters and the ``limits`` applied, the protocol, seeds and
metrics, and what the reports need: its tables, figures, choices and claims as the typed, checked specs of
:mod:`forestlab.spec` (built last, so that a bad key in any of them is refused before any run). Validation
(:func:`forestlab.config.validate`), planning (:func:`forestlab.runner.plan`), the dry run and the reports all read
this one object, built once per command.

Each dataset runs ``seeds`` repetitions, or its own number when ``experiment.dataset_seeds`` names it (the level
checks of depecker2010's two-sample tests: 200 null samples beside 100 per alternative); repetition r is the same run
either way, so a dataset's extra seeds add runs and change none.

An experiment's *plan id* hashes everything in it that decides which runs it has (not the metrics, tables or
figures): ``forestlab run`` records the plan under that id in the store, and the reports read the runs of the plan
with the same id, so they never re-plan.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from forestlab.spec import (
    ChoiceSpec,
    FigureSpec,
    Launcher,
    Limits,
    Paths,
    Protocol,
    Reports,
    Selection,
    Shrunk,
    TableSpec,
)

# Dataset config keys that document but do not change the data.
COSMETIC_DATASET_KEYS = ("description", "studies", "notes", "splits", "citation")


def content_hash(value: Any, length: int = 32) -> str:
    """SHA-256 of the canonical JSON of ``value`` (hex, ``length`` characters)."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:length]


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset of the experiment: its name and its config (a plain dict)."""

    name: str
    cfg: dict[str, Any]
    seeds: int | None = None  # its own number of repetitions (experiment.dataset_seeds), else the experiment's

    @property
    def identity(self) -> dict[str, Any]:
        """What decides the data: the config without its documentation keys."""
        return {k: v for k, v in self.cfg.items() if k not in COSMETIC_DATASET_KEYS}


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm of the experiment: the learner's registry name, parameters (experiment-wide values and limits
    applied), hyperparameter grid, model selection and seed tag."""

    name: str
    estimator: str
    seed_tag: str
    params: dict[str, Any]
    grid: dict[str, list[Any]]
    selection: Selection
    cfg: dict[str, Any]

    @property
    def identity(self) -> dict[str, Any]:
        """What decides its runs (hashed into their keys; the selection as its normalised dict)."""
        return {"estimator": self.estimator, "params": self.params, "seed_tag": self.seed_tag,
                "grid": self.grid if self.selection.kind != "none" else {},
                "selection": self.selection.as_dict()}


@dataclass(frozen=True)
class Experiment:
    """An experiment, resolved: see the module docstring."""

    name: str
    study: str | None
    description: str
    datasets: tuple[DatasetSpec, ...]
    algorithms: tuple[AlgorithmSpec, ...]
    protocol: Protocol
    seed: int
    seeds: int
    metrics: tuple[str, ...]
    spec: dict[str, Any]  # the experiment section: tables, figures, claims, pairs, description ...
    paths: Paths
    launcher: Launcher
    limits: Limits = field(default_factory=Limits)
    smoke: bool = False  # a shrunk run (debug=smoke): part of the plan's identity
    shrunk: Shrunk | None = None  # when smoke: what this kind of shrunk run is called and how it is treated
    notes: tuple[str, ...] = ()  # what the limits changed in what the user asked (printed by forestlab run)
    cfg: Any = field(default=None, repr=False, compare=False)  # the composed config it was resolved from
    reports: Reports = field(default_factory=Reports)  # tables, figures, choices, claims: checked (forestlab.spec)
    # How the command line treats the experiment: settings of its config (experiment.*), never its name.
    #: Its dataset and algorithm are the command line's ``dataset=``/``algorithm=`` (the single run): its runs are
    #: named by those overrides.
    from_choices: bool = False
    #: ``forestlab run`` prints the test metrics of the runs it made.
    prints_runs: bool = False
    #: Whether runs of an earlier plan count as stale in ``forestlab status`` (not for an experiment whose runs are
    #: other choices of the command line).
    other_choices_stale: bool = True

    @property
    def tables(self) -> tuple[TableSpec, ...]:
        return self.reports.tables

    @property
    def figures(self) -> tuple[FigureSpec, ...]:
        return self.reports.figures

    @property
    def choices(self) -> tuple[ChoiceSpec, ...]:
        return self.reports.choices

    @property
    def claims(self) -> tuple[str, ...]:
        return self.reports.claims

    def seeds_of(self, dataset: DatasetSpec) -> int:
        """The repetitions of ``dataset``: its own (``experiment.dataset_seeds``) or the experiment's ``seeds``."""
        return self.seeds if dataset.seeds is None else dataset.seeds

    @property
    def dataset_seeds(self) -> dict[str, int]:
        """The datasets that have their own number of repetitions, and that number."""
        return {d.name: d.seeds for d in self.datasets if d.seeds is not None}

    def plan_identity(self) -> dict[str, Any]:
        """Everything that decides the experiment's runs (not its metrics, tables or figures)."""
        identity = {"experiment": self.name, "smoke": self.smoke,  # smoke plans never replace real ones
                    "datasets": [d.identity for d in self.datasets],
                    "algorithms": [{"name": a.name, **a.identity} for a in self.algorithms],
                    "protocol": self.protocol.as_dict(), "seed": self.seed, "seeds": self.seeds}
        if self.dataset_seeds:  # only when set: every other experiment keeps its plan id
            identity["dataset_seeds"] = self.dataset_seeds
        if self.protocol.kind == "kfold" and self.folds_run < self.protocol.folds:
            identity["folds_run"] = self.folds_run  # limits.max_folds: a plan of its own (only when it cuts)
        return identity

    @property
    def plan_id(self) -> str:
        return content_hash(self.plan_identity(), 24)

    @property
    def n_runs(self) -> int:
        """How many runs the plan has (computed, not planned)."""
        folds = self.folds_run if self.protocol.kind == "kfold" else 1
        return sum(self.seeds_of(d) for d in self.datasets) * len(self.algorithms) * folds

    @property
    def folds_run(self) -> int:
        """How many folds of each k-fold partition run: all ``n_folds``, or the first ``limits.max_folds``."""
        folds = self.protocol.folds
        cap = self.limits.max_folds
        return min(folds, int(cap)) if cap else folds

    def summary(self) -> dict[str, Any]:
        """What the store keeps beside a plan (for status and provenance)."""
        return {"experiment": self.name, "study": self.study, "datasets": [d.name for d in self.datasets],
                "algorithms": [a.name for a in self.algorithms], "protocol": self.protocol.name,
                "seed": self.seed, "seeds": self.seeds, "smoke": self.smoke, "limits": self.limits.as_dict(),
                "metrics": list(self.metrics), **({"dataset_seeds": self.dataset_seeds} if self.dataset_seeds else {})}


def protocol_for(experiment: Experiment, dataset: DatasetSpec) -> dict[str, Any]:
    """The protocol as the runs of ``dataset`` use it (study split sizes looked up in the dataset's config)."""
    from forestlab.protocols import resolve_sizes  # local: protocols loads scikit-learn, the config layer need not

    return resolve_sizes(experiment.protocol.as_dict(), dataset.cfg)
