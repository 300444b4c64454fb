"""An experiment's results as the store holds them: which runs it planned, their values and their arrays.

Reports (tables, figures, comparisons, claims, status) read results only through :class:`ExperimentResults`. It is
built from the store (:func:`load_results`: the plan that ``forestlab run`` recorded for the experiment, the run
records and their ``.npz`` arrays) or, in tests, from a hand-built frame (:meth:`ExperimentResults.from_frame`). It
never plans runs, loads a dataset or composes another experiment's config: another experiment's results (a claim
that combines several tables) come from the same store through :meth:`ExperimentResults.sibling`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forestlab._values import is_number
from forestlab.errors import ConfigError
from forestlab.evaluation import backfill
from forestlab.experiment import Experiment
from forestlab.metrics import direction, get_measure
from forestlab.spec import (
    CellSpec,
    ChoiceSpec,
    Context,
    FigureSpec,
    Shrunk,
    TableSpec,
    make_cell,
    make_figure,
    make_table,
)
from forestlab.store import RecordedPlan, Store

__all__ = ["ExperimentResults", "cell_label", "load_results", "summarise"]

ID_COLUMNS = ["key", "dataset", "algorithm", "repetition", "fold"]


@dataclass(frozen=True)
class RunIndex:
    """Where things are in a frame of runs, built once with it (claims read it again on every bootstrap
    resample): row positions by (algorithm, dataset) and by (algorithm, None) for all datasets, by repetition, and
    each row's key and (repetition, fold) with a missing fold as -1."""

    rows: Mapping[tuple[Any, Any], np.ndarray]
    by_repetition: Mapping[int, np.ndarray]
    keys: tuple[str, ...]
    splits: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, runs: pd.DataFrame) -> RunIndex:
        groups: dict[tuple[Any, Any], list[int]] = {}
        algorithms = runs["algorithm"].to_numpy(dtype=object)
        datasets = runs["dataset"].to_numpy(dtype=object)
        for i, (a, d) in enumerate(zip(algorithms, datasets, strict=True)):
            groups.setdefault((a, d), []).append(i)
            groups.setdefault((a, None), []).append(i)
        by_rep = {int(k): np.asarray(v, dtype=np.intp)
                  for k, v in runs.groupby("repetition", sort=False).indices.items()} if len(runs) else {}
        folds = [-1 if f is None or f != f else int(f) for f in runs["fold"]]
        return cls(rows={k: np.asarray(v, dtype=np.intp) for k, v in groups.items()}, by_repetition=by_rep,
                   keys=tuple(runs["key"].tolist()),
                   splits=tuple(zip(runs["repetition"].astype(int).tolist(), folds, strict=True)))

    def taken(self, positions: np.ndarray, repetitions: np.ndarray) -> RunIndex:
        """The index of the frame of rows ``positions`` of this one (in that order) whose repetitions are renamed
        ``repetitions`` (each repetition's rows together, numbered in order: a bootstrap resample), derived from this
        index without reading the frame: what :meth:`of` builds from that frame."""
        rows: dict[tuple[Any, Any], np.ndarray] = {}
        if len(positions):
            for names, code in self._group_codes:
                # a stable sort of the new rows by group keeps each group's rows in frame order
                new = code[positions]
                order = np.argsort(new, kind="stable")
                bounds = np.searchsorted(new[order], np.arange(len(names) + 1))
                for g, k in enumerate(names):
                    if bounds[g + 1] > bounds[g]:
                        rows[k] = order[bounds[g]:bounds[g + 1]]
        reps = np.asarray(repetitions, dtype=np.int64)
        by_rep: dict[int, np.ndarray] = {}
        if len(reps):
            starts = np.flatnonzero(np.r_[True, reps[1:] != reps[:-1]])
            ends = np.r_[starts[1:], len(reps)]
            by_rep = {int(reps[a]): np.arange(a, b, dtype=np.intp) for a, b in zip(starts, ends, strict=True)}
        keys, folds = self._columns
        return RunIndex(rows=rows, by_repetition=by_rep, keys=tuple(keys[positions].tolist()),
                        splits=tuple(zip(reps.tolist(), folds[positions].tolist(), strict=True)))

    @functools.cached_property
    def _group_codes(self) -> tuple[tuple[list[tuple[Any, Any]], np.ndarray], ...]:
        """Each row's group number, among the (algorithm, dataset) groups and among the (algorithm, None) groups (a
        row is in one of each), with the groups' names: what :meth:`taken` sorts a resample's rows by."""
        out = []
        for whole in (False, True):
            names = [k for k in self.rows if (k[1] is None) is whole]
            code = np.full(len(self.keys), -1, dtype=np.intp)
            for g, k in enumerate(names):
                code[self.rows[k]] = g
            out.append((names, code))
        return tuple(out)

    @functools.cached_property
    def _columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows' keys (objects) and folds (-1 for none) as arrays, for :meth:`taken` to take from."""
        keys = np.empty(len(self.keys), dtype=object)
        keys[:] = self.keys
        return keys, np.array([f for _, f in self.splits], dtype=np.int64)


@dataclass(frozen=True)
class ExperimentResults:
    """The planned runs of one experiment and the values of those that are done (immutable: a view, a resample or
    a choice is a new object).

    Attributes
    ----------
    name, study : str, str or None
        The experiment and its study key.
    spec : dict
        The experiment's section of the config (tables, figures, claims, description, ...).
    planned : DataFrame
        One row per planned run: key, dataset, algorithm, repetition, fold (plan order).
    runs : DataFrame
        One row per *done* planned run: the same columns, then one column per stored value (metrics, learner
        values, chosen hyperparameters), NaN where a run did not measure it. Its :class:`RunIndex` (``index``) is
        built with the object: never edit the frame in place, make a new object (``dataclasses.replace``).
    datasets_info : dict
        Per dataset, what the runs recorded about its data (``n_features``, ``feature_names``, ...).
    smoke : bool
        Whether these are shrunk runs (``debug=smoke``: not the experiment's real results).
    shrunk : Shrunk or None
        Their kind when they are shrunk runs (the experiment's ``shrunk`` settings): what the reports call them and
        whether their claims are judged.
    left_out : tuple of str
        In a view for one table or figure (:meth:`restricted_to`), the datasets it names that the experiment lists
        but these runs' plan left out (``limits.max_datasets``, which ``debug=smoke`` sets): shown as a note.
    datasets, algorithms : list of str
        The planned datasets and algorithms, in plan order (from ``planned`` unless given: a view of some datasets
        keeps the experiment's algorithms).
    chosen : dict
        For each choice made after the fact (:meth:`with_choices`), the candidate chosen on each dataset.
    repetitions : tuple of int or None
        In a bootstrap resample (:meth:`resample_repetitions`), the repetition each new repetition is drawn from;
        other experiments read through :meth:`sibling` are resampled the same way.
    """

    name: str
    study: str | None
    spec: dict[str, Any]
    planned: pd.DataFrame
    runs: pd.DataFrame
    results_dir: Path | None = None
    datasets_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    smoke: bool = False
    shrunk: Shrunk | None = None
    seed: int = 0
    seeds: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # done / failed / pending among the planned runs
    left_out: tuple[str, ...] = ()
    datasets: list[str] = None  # type: ignore[assignment] # from planned when not given (__post_init__)
    algorithms: list[str] = None  # type: ignore[assignment]
    chosen: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    repetitions: tuple[int, ...] | None = None
    #: An experiment named by ``experiment.name=`` (not in ``conf/experiment/``: a study's protocol on the user's
    #: data): a claim that combines the study's other experiments is about the study's datasets, not judged on it.
    named: bool = False
    arrays_loader: Callable[[str], dict[str, np.ndarray]] | None = field(default=None, repr=False)
    sibling_loader: Callable[[str], ExperimentResults | None] | None = field(default=None, repr=False)
    #: Arrays read by run key, shared by every view of these results (a run's key decides its arrays).
    _arrays: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)
    #: Built when first read (:attr:`index`); a resample derives its own from this one's.
    _index: RunIndex | None = field(default=None, init=False, repr=False, compare=False)
    #: Numeric columns of ``runs`` read so far, and other experiments read so far (this object's own).
    _numeric: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)
    _siblings: dict[str, ExperimentResults | None] = field(default_factory=dict, init=False, repr=False,
                                                           compare=False)

    def __post_init__(self) -> None:
        if self.datasets is None:
            object.__setattr__(self, "datasets", list(dict.fromkeys(self.planned["dataset"])))
        if self.algorithms is None:
            object.__setattr__(self, "algorithms", list(dict.fromkeys(self.planned["algorithm"])))

    @property
    def index(self) -> RunIndex:
        """Where things are in ``runs`` (:class:`RunIndex`), built once, when first read."""
        if self._index is None:
            object.__setattr__(self, "_index", RunIndex.of(self.runs))
        return self._index  # type: ignore[return-value]

    # -- construction ----------------------------------------------------------------------------------------
    @classmethod
    def from_frame(cls, runs: pd.DataFrame, *, name: str = "test", study: str | None = None,
                   arrays: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                   siblings: Mapping[str, ExperimentResults] | None = None,
                   spec: Mapping[str, Any] | None = None, **kwargs: Any) -> ExperimentResults:
        """Results from a hand-built frame (tests, notebooks): ``runs`` has the columns dataset, algorithm,
        repetition and one per value (``key`` and ``fold`` are filled in when missing); ``arrays`` maps a run key
        to its arrays; ``siblings`` maps an experiment name to its results."""
        runs = runs.copy().reset_index(drop=True)
        if "fold" not in runs:
            runs["fold"] = None
        if "key" not in runs:
            runs["key"] = [f"run{i}" for i in range(len(runs))]
        other = [c for c in runs.columns if c not in ID_COLUMNS]
        runs = runs[ID_COLUMNS + other]
        stored = {k: dict(v) for k, v in (arrays or {}).items()}
        sibs = dict(siblings or {})
        return cls(name=name, study=study, spec=dict(spec or {}), planned=runs[ID_COLUMNS].copy(), runs=runs,
                   arrays_loader=lambda key: stored.get(key, {}), sibling_loader=sibs.get, **kwargs)

    # -- what was planned --------------------------------------------------------------------------------------
    def tables(self) -> tuple[TableSpec, ...]:
        """The experiment's tables (built and checked with the experiment; a hand-built spec's, checked here)."""
        ctx = self._spec_context()
        return tuple(make_table(t, f"experiment.tables[{i}]", ctx) for i, t in enumerate(self.spec.get("tables") or []))

    def figures(self) -> tuple[FigureSpec, ...]:
        ctx = self._spec_context()
        return tuple(make_figure(f, f"experiment.figures[{i}]", ctx)
                     for i, f in enumerate(self.spec.get("figures") or []))

    def _spec_context(self) -> Context:
        """What a hand-built spec's names are checked against: the planned algorithms and datasets (none while no
        plan is recorded); an experiment's specs were checked when it was built."""
        listed = self.spec.get("datasets") or self.datasets
        return Context(tuple(self.algorithms), tuple([listed] if isinstance(listed, str) else listed),
                       check_names=bool(self.algorithms))

    def to_frame(self) -> pd.DataFrame:
        """The experiment's done runs as a DataFrame, one row per run: ``experiment``, ``study``, ``dataset``,
        ``algorithm``, ``repetition``, ``fold`` (None outside k-fold), ``seed`` (the base seed: a run's seeds derive
        from it, the dataset and the repetition), ``key``; then every metric and chosen hyperparameter under its
        name, as the tables read them (``test_risk``, ``c``, ...); the learner's parameters as ``param.NAME``;
        ``seconds`` (fit and evaluation); and what produced the run: ``forestlab_version``, ``git_commit``,
        ``git_dirty`` (None for a run stored before forestlab recorded them). In plan order."""
        base = self.runs.reset_index(drop=True)
        ids = ["key", "dataset", "algorithm", "repetition", "fold"]
        values = [c for c in base.columns if c not in ids]
        out = pd.DataFrame({"experiment": self.name, "study": self.study, **{c: base[c] for c in ids[1:]}},
                           index=base.index)
        out["fold"] = [None if f is None or f != f else int(f) for f in base["fold"]]
        extra: dict[str, list[Any]] = {"seed": [], "seconds": [], "forestlab_version": [], "git_commit": [],
                                       "git_dirty": []}
        params: list[dict[str, Any]] = []
        records = pd.DataFrame()
        if self.results_dir is not None and len(base):
            with Store(self.results_dir, readonly=True) as store:
                records = store.records(base["key"].tolist()).set_index("key")
        for key in base["key"]:
            rec = records.loc[key] if key in records.index else None
            spec = rec["spec"] if rec is not None else {}
            extra["seed"].append(spec.get("seed", self.seed) if isinstance(spec, dict) else self.seed)
            timings = rec["timings"] if rec is not None else {}
            extra["seconds"].append(float(timings.get("total", float("nan"))) if timings else float("nan"))
            for col in ("forestlab_version", "git_commit", "git_dirty"):
                value = rec[col] if rec is not None else None
                extra[col].append(None if value is None or value != value else value)
            learner = (spec.get("learner") or {}) if isinstance(spec, dict) else {}
            params.append({f"param.{k}": v for k, v in (learner.get("params") or {}).items()})
        out["seed"] = extra["seed"]
        out["key"] = base["key"]
        for col in values:
            out[col] = base[col]
        param_frame = pd.DataFrame(params, index=base.index)
        out = pd.concat([out, param_frame], axis=1)
        out["seconds"] = extra["seconds"]
        for col in ("forestlab_version", "git_commit", "git_dirty"):
            out[col] = extra[col]
        return out

    def claims(self) -> list[str]:
        return [str(c) for c in self.spec.get("claims") or []]

    # -- values ------------------------------------------------------------------------------------------------
    def arrays(self, key: str) -> dict[str, np.ndarray]:
        """The stored arrays of one run (empty when it stored none)."""
        if key not in self._arrays:
            self._arrays[key] = dict(self.arrays_loader(key)) if self.arrays_loader is not None else {}
        return self._arrays[key]

    def values(self, algorithm: str, metric: str, dataset: str | None = None) -> pd.DataFrame:
        """Per-run values of a metric: columns dataset, repetition, fold, key, value (NaN where not measured)."""
        rows = self._row_positions(algorithm, dataset)
        df = self.runs.take(rows)
        return pd.DataFrame({"dataset": df["dataset"], "repetition": df["repetition"], "fold": df["fold"],
                             "key": df["key"], "value": self._numeric_column(metric)[rows]}, index=df.index)

    def value_array(self, algorithm: str, metric: str, dataset: str | None = None) -> np.ndarray:
        """The ``value`` column of :meth:`values` as a float array (run order), without building a frame."""
        return self._numeric_column(metric)[self._row_positions(algorithm, dataset)]

    def split_values(self, algorithm: str, metric: str, dataset: str) -> tuple[list[tuple[int, int]], np.ndarray]:
        """The (repetition, fold) of each run of one algorithm on one dataset (a missing fold as -1) and its value
        of ``metric`` (NaN where not measured), in run order: :meth:`values` as plain arrays, for the paired tests
        that claims repeat on hundreds of resamples."""
        rows = self._row_positions(algorithm, dataset)
        return [self.index.splits[i] for i in rows], self._numeric_column(metric)[rows]

    def _row_positions(self, algorithm: str, dataset: str | None) -> np.ndarray:
        """Positions in ``runs`` of one algorithm's runs (on one dataset, or all), in run order."""
        return self.index.rows.get((algorithm, dataset), np.empty(0, dtype=np.intp))

    def _numeric_column(self, metric: str) -> np.ndarray:
        """The column ``metric`` of ``runs`` as floats (NaN where not measured or not a number), read once."""
        if metric not in self._numeric:
            col = self.runs[metric] if metric in self.runs.columns else pd.Series(np.nan, index=self.runs.index)
            self._numeric[metric] = pd.to_numeric(col, errors="coerce").astype(float).to_numpy()
        return self._numeric[metric]

    def run_keys(self, algorithm: str, dataset: str) -> list[str]:
        """Keys of the done runs of one algorithm on one dataset, in plan order."""
        return [self.index.keys[i] for i in self._row_positions(algorithm, dataset)]

    def run_arrays(self, algorithm: str, dataset: str) -> list[dict[str, np.ndarray]]:
        """The stored arrays of every done run of one algorithm on one dataset (for measures across runs)."""
        return [self.arrays(k) for k in self.run_keys(algorithm, dataset)]

    def curve(self, algorithm: str, name: str, dataset: str) -> np.ndarray:
        """Stacked curves of one dataset, shape (n_runs, n_points) (empty if none stored)."""
        curves = [a[name] for a in self.run_arrays(algorithm, dataset) if name in a]
        if not curves:
            return np.empty((0, 0))
        n = min(len(c) for c in curves)
        return np.vstack([np.asarray(c[:n], dtype=float) for c in curves])

    def cell_values(self, cell: CellSpec | Mapping[str, Any], dataset: str) -> np.ndarray:
        """Per-run values of one table cell: a stored metric, or a curve read at a point (``curve`` + ``at``); a
        cell of a measure across runs has none (:func:`measure_value`)."""
        cell = as_cell(cell)
        if cell.metric is not None:
            return self.value_array(cell.algorithm, cell.metric, dataset)  # no frame: hundreds of cells a table
        if cell.curve is not None and cell.at is not None:
            curves = self.curve(cell.algorithm, cell.curve, dataset)
            if curves.size == 0 or curves.shape[1] < cell.at:
                return np.empty(0)
            return curves[:, cell.at - 1]
        return np.empty(0)

    def measure(self, algorithm: str, measure: str, dataset: str) -> float:
        """A statistic over the set of runs of one algorithm on one dataset (NaN with fewer than two runs)."""
        runs = self.run_arrays(algorithm, dataset)
        if len(runs) < 2:
            return float("nan")
        return float(get_measure(measure).func(runs))

    def check_stored(self, algorithm: str, name: str | None, where: str) -> None:
        """Refuse a report value that none of the done runs of ``algorithm`` stored (a typo would otherwise show
        as a column of '—'), or an algorithm the experiment does not run (its list narrowed on the command line:
        the spec refused any name that is no algorithm at all)."""
        if algorithm not in self.algorithms:
            raise ConfigError(f"{where}: algorithm '{algorithm}' is not one of the experiment's "
                              f"({', '.join(self.algorithms)})")
        done = self.runs[self.runs["algorithm"] == algorithm]
        if name is not None and len(done) and (name not in done.columns or done[name].isna().all()):
            stored = sorted(c for c in done.columns[done.notna().any()] if c not in ID_COLUMNS)
            raise ConfigError(f"{where}: no run of {algorithm} stored '{name}'; stored values: {', '.join(stored)}")

    def feature_names(self, dataset: str) -> list[str]:
        """The dataset's feature names as its runs recorded them ([] if unknown)."""
        return [str(n) for n in (self.datasets_info.get(dataset) or {}).get("feature_names") or []]

    def n_features(self, dataset: str) -> int | None:
        value = (self.datasets_info.get(dataset) or {}).get("n_features")
        return None if value is None else int(value)

    # -- other experiments, resampling -------------------------------------------------------------------------
    def sibling(self, experiment: str) -> ExperimentResults | None:
        """Another experiment's results from the same store, with the same seeds and smoke flag (None when it
        has no done run); resampled like this one when this one is a resample. Read once per object."""
        if experiment == self.name:
            return self
        if self.sibling_loader is None:
            return None
        if experiment not in self._siblings:
            other = self.sibling_loader(experiment)
            if other is not None and not other.runs.empty and self.repetitions is not None:
                other = other._with_repetitions(self.repetitions)
            self._siblings[experiment] = None if other is None or other.runs.empty else other
        return self._siblings[experiment]

    def resample_repetitions(self, rng: np.random.Generator) -> ExperimentResults:
        """A bootstrap resample of the repetitions (seeds), the same draw for every dataset and algorithm (runs stay
        paired); used to tell a claim's verdict from the seed noise."""
        reps = sorted(set(self.runs["repetition"]))  # the repetitions that have done runs
        if not reps:
            return self
        draw = [reps[i] for i in rng.integers(0, len(reps), size=len(reps))]
        return self._with_repetitions(draw)

    def _with_repetitions(self, draw: Sequence[int]) -> ExperimentResults:
        rows = self.index.by_repetition
        taken = [rows.get(rep, np.empty(0, dtype=np.intp)) for rep in draw]
        positions = np.concatenate(taken) if taken else np.empty(0, dtype=np.intp)
        runs = self.runs.take(positions) if taken else self.runs.iloc[0:0]
        runs = runs.reset_index(drop=True)
        runs["repetition"] = np.repeat(np.arange(len(taken)), [len(t) for t in taken])
        out = replace(self, runs=runs, repetitions=tuple(int(r) for r in draw))
        # claims read a resample's index hundreds of times a report: derived from this one, not read from the frame
        object.__setattr__(out, "_index", self.index.taken(positions, runs["repetition"].to_numpy()))
        return out

    def with_choices(self, choices: Sequence[ChoiceSpec | Mapping[str, Any]]) -> ExperimentResults:
        """These results with one more algorithm per choice: on each dataset, the runs of the candidate whose guide
        has the best mean ``metric`` (a study's choice after the fact, on the test folds: optimistic).

        A choice is ``{name, among: [algorithms], by: [algorithms] (default: among), metric}``: on each dataset,
        ``k = argmax_k mean(metric of by[k])`` (direction of the metric honoured, the first on ties) and ``name``'s
        runs are those of ``among[k]``, e.g. depecker2010 keeps for Bagg_SVM the kernel that TRK_SVM did better
        with. The chosen candidate of each dataset is recorded in ``chosen[name]``.
        """
        if not choices:
            return self
        runs, planned, chosen = [self.runs], [self.planned], dict(self.chosen)
        for choice in choices:
            if not isinstance(choice, ChoiceSpec):  # a hand-built one (tests, notebooks)
                choice = ChoiceSpec(name=str(choice["name"]), among=tuple(map(str, choice["among"])),
                                    by=tuple(map(str, choice.get("by") or choice["among"])),
                                    metric=str(choice["metric"]))
            name, among, by, metric = choice.name, list(choice.among), list(choice.by), choice.metric
            higher = direction(metric) is not False
            picks: dict[str, str] = {}
            for dataset in self.datasets:
                means = []
                for guide in by:
                    v = self.values(guide, metric, dataset)["value"].to_numpy(dtype=float)
                    v = v[np.isfinite(v)]
                    means.append(v.mean() if v.size else np.nan)
                if not np.isfinite(means).any():
                    continue
                scores = np.where(np.isfinite(means), means, -np.inf if higher else np.inf)
                k = int(np.argmax(scores) if higher else np.argmin(scores))
                picks[dataset] = among[k]
            chosen[name] = picks
            for source, frame in (("runs", self.runs), ("planned", self.planned)):
                rows = [frame[(frame["algorithm"] == alg) & (frame["dataset"] == d)] for d, alg in picks.items()]
                rows = [r.assign(algorithm=name) for r in rows if len(r)]
                if rows:
                    (runs if source == "runs" else planned).append(pd.concat(rows))
        return replace(self, runs=pd.concat(runs, ignore_index=True), planned=pd.concat(planned, ignore_index=True),
                       datasets=None, algorithms=None, chosen=chosen)

    def restricted_to(self, spec: TableSpec | FigureSpec | Mapping[str, Any]) -> ExperimentResults:
        """The results a table or figure spec draws on: restricted to its ``datasets`` when it names some (a table
        of the level checks beside the table of the powers, say), else all of them (and all of them while no plan
        is recorded).

        A dataset the spec names that the experiment lists but the plan left out (``limits.max_datasets``, as
        ``debug=smoke`` sets it) is not an error: the view holds the others and names it in ``left_out``, for the
        table or figure to say so. A name the experiment does not list at all is an error (:meth:`only_datasets`).
        """
        names = spec.get("datasets") if isinstance(spec, Mapping) else spec.datasets
        if not names or not self.datasets:  # no plan recorded yet: nothing to restrict
            return self
        names = [str(d) for d in ([names] if isinstance(names, str) else names)]
        listed = self.spec.get("datasets") or ()
        listed = {str(d) for d in ([listed] if isinstance(listed, str) else listed)}
        left_out = tuple(d for d in names if d not in self.datasets and d in listed)
        return replace(self.only_datasets([d for d in names if d not in left_out]), left_out=left_out)

    def left_out_note(self) -> str:
        """One sentence naming the datasets of :attr:`left_out` ('' when none)."""
        if not self.left_out:
            return ""
        sets = f", which {self.shrunk.option} sets," if self.shrunk is not None else ""
        return (f"Not shown: {', '.join(self.left_out)}, which these runs' plan left out (limits.max_datasets{sets} "
                "keeps only the experiment's first datasets)")

    def only_datasets(self, datasets: Sequence[str]) -> ExperimentResults:
        """A view of these results restricted to some of the planned datasets (a figure about a few of them).

        Raises
        ------
        ConfigError
            If a name is not one of the experiment's datasets.
        """
        unknown = [d for d in datasets if d not in self.datasets]
        if unknown:
            raise ConfigError(f"dataset(s) {', '.join(map(str, unknown))} not in experiment {self.name} "
                              f"({', '.join(self.datasets)})")
        keep = set(datasets)
        # the experiment's algorithms all the same (a view of no dataset still checks its cells against them)
        return replace(self, planned=self.planned[self.planned["dataset"].isin(keep)],
                       runs=self.runs[self.runs["dataset"].isin(keep)].reset_index(drop=True), datasets=None,
                       algorithms=list(self.algorithms))


def as_cell(cell: CellSpec | Mapping[str, Any]) -> CellSpec:
    """A cell as its :class:`CellSpec` (a hand-built mapping is checked, its names not: nothing to check them
    against)."""
    return make_cell(cell, "table cell", Context())


def cell_label(cell: CellSpec | Mapping[str, Any]) -> str:
    """The CSV name of a table cell: '<algorithm> <metric>', '<algorithm> <curve>@<at>' or '<algorithm>
    <measure>' (:attr:`CellSpec.column`)."""
    return as_cell(cell).column


def summarise(values: np.ndarray) -> tuple[float, float, int]:
    """Mean, sample standard deviation (0 for one value) and count of the finite values."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan"), 0
    std = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return float(v.mean()), std, int(v.size)


def _value_frame(records: pd.DataFrame) -> pd.DataFrame:
    """One column per stored value: the chosen hyperparameters (numbers only), then the metrics (which win a
    name clash)."""
    rows = []
    for sel, met in zip(records["selected"], records["metrics"], strict=True):
        numbers = {k: float(v) for k, v in (sel or {}).items()
                   if is_number(v)}
        rows.append({**numbers, **(met or {})})
    return pd.DataFrame(rows, index=records.index)


def _report_spec(experiment: Experiment, named: bool = False) -> dict[str, Any]:
    """The experiment's section, plus which algorithms chose their hyperparameters on the test set (tables label
    them optimistic)."""
    spec = dict(experiment.spec)
    choices = experiment.choices
    tables = list(experiment.tables)
    if experiment.study and named:
        # an experiment of your own: a published table is compared only where it has one of the study's datasets
        # (a dataset whose config lists the study under `studies:`); on your data alone there is nothing to set
        # beside it
        theirs = [d.name for d in experiment.datasets if experiment.study in (d.cfg.get("studies") or [])]
        tables = [t if t.published is None or theirs else replace(t, published=None) for t in tables]
    # the checked specs, built once with the experiment
    spec.update(tables=tables, figures=list(experiment.figures), choices=list(choices))
    spec["optimistic_algorithms"] = [a.name for a in experiment.algorithms
                                     if a.selection.optimistic] + \
        [c.name for c in choices]  # chosen after the fact on the test folds
    return spec


def load_results(experiment: Experiment, results_dir: str | Path, *,
                 metrics: Sequence[str] = (), named: bool = False) -> ExperimentResults:
    """The results of ``experiment`` from the store in ``results_dir``, read only.

    The runs are those of the plan ``forestlab run`` recorded for this configuration of the experiment
    (:meth:`forestlab.store.Store.plan_for` with its plan id); metrics named in ``metrics`` that a done run has
    not stored yet are computed from its stored outputs, in memory (``forestlab run`` stores them). Another
    experiment a claim reads (:meth:`ExperimentResults.sibling`) is its newest plan recorded with the same seeds,
    smoke flag and limits. ``named``: an experiment of your own (``experiment.name=``, not registered), see
    :attr:`ExperimentResults.named`.
    """
    results_dir = Path(results_dir)
    seed, seeds, smoke, limits = experiment.seed, experiment.seeds, experiment.smoke, experiment.limits.as_dict()

    def sibling(name: str) -> ExperimentResults | None:
        with Store(results_dir, readonly=True) as store:
            plan = store.plan_for(name, seed=seed, seeds=seeds, smoke=smoke, limits=limits)
            if plan is None:
                return None
            # no config is composed for it: it has no spec (nor tables, figures, choices) of its own
            return _read(store, plan, name=name, study=experiment.study, spec={"optimistic_algorithms": []},
                         smoke=smoke, shrunk=experiment.shrunk, seed=seed, seeds=seeds, metrics=metrics,
                         sibling_loader=sibling)

    with Store(results_dir, readonly=True) as store:
        plan = store.plan_for(experiment.name, plan_id=experiment.plan_id)
        res = _read(store, plan, name=experiment.name, study=experiment.study, spec=_report_spec(experiment, named),
                    smoke=smoke, shrunk=experiment.shrunk, seed=seed, seeds=seeds, metrics=metrics,
                    sibling_loader=sibling)
    return replace(res, named=True, _arrays=res._arrays).with_choices(experiment.choices) if named else \
        res.with_choices(experiment.choices)


def _read(store: Store, plan: RecordedPlan | None, *, name: str, study: str | None, spec: dict[str, Any],
          smoke: bool, shrunk: Shrunk | None, seed: int, seeds: int, metrics: Sequence[str],
          sibling_loader: Callable[[str], ExperimentResults | None]) -> ExperimentResults:
    """The results of one recorded plan (None: nothing recorded, an empty plan) from an open store."""
    planned = plan.runs if plan is not None else pd.DataFrame(columns=ID_COLUMNS)
    records = store.records(planned["key"].tolist(), columns=("status", "selected", "metrics", "arrays"))
    info = store.datasets_info(planned["dataset"].unique().tolist())
    statuses = dict(zip(records["key"], records["status"], strict=True))
    counts = {"planned": len(planned), "done": sum(v == "done" for v in statuses.values()),
              "failed": sum(v == "failed" for v in statuses.values())}
    counts["pending"] = counts["planned"] - counts["done"] - counts["failed"]
    done = records[records["status"] == "done"].reset_index(drop=True)
    arrays_dir = store.arrays_dir

    def load(key: str) -> dict[str, np.ndarray]:
        return Store.read_arrays(arrays_dir, key)

    if metrics and len(done):
        for i, row in done.iterrows():
            new = backfill(metrics, row["metrics"], row["arrays"], lambda key=row["key"]: load(key))
            if new:
                done.at[i, "metrics"] = {**(row["metrics"] or {}), **new}
    # the plan's rows (plan order, its labels) of the done runs, with their values joined by key
    values = _value_frame(done).set_index(done["key"]) if len(done) else pd.DataFrame()
    labelled = planned[planned["key"].isin(set(done["key"]))][ID_COLUMNS]
    runs = labelled.join(values, on="key") if len(done) else pd.DataFrame(columns=ID_COLUMNS)
    return ExperimentResults(
        name=name, study=study, spec=spec, planned=planned[ID_COLUMNS], runs=runs.reset_index(drop=True),
        results_dir=store.results_dir, datasets_info=info, smoke=smoke, shrunk=shrunk,
        seed=seed, seeds=seeds, counts=counts,
        arrays_loader=load, sibling_loader=sibling_loader)


def measure_value(res: ExperimentResults, cell: CellSpec | Mapping[str, Any], dataset: str) -> float:
    """A statistic over the set of runs of one cell of a measure (NaN with fewer than two runs)."""
    cell = as_cell(cell)
    return res.measure(cell.algorithm, str(cell.measure), dataset)
