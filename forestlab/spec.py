"""The typed experiment spec: what the reports of an experiment draw, declared and checked once, before any run.

An experiment's tables, their cells, its figures (a kind and that kind's options) and its choices are frozen
dataclasses built by :func:`build_reports` when the experiment is resolved (:func:`forestlab.config.resolve`), so
``forestlab run --dry-run`` refuses a misspelt key, an unknown figure kind or a cell naming an algorithm the experiment
does not run, before the first run rather than after a night of them.

The checks are data, in the manner of scikit-learn's ``_parameter_constraints``: each class declares its fields
(``FIELDS``: key -> :class:`Field`, a constraint and a default), and one checker (:func:`check_mapping`) refuses an
unknown key (with a did-you-mean) and a value its constraint rejects, with a message the constraint writes. The
top-level sections of the config (``seed``, ``launcher``, ``paths``, ``limits``, ``experiment`` ...) are declared the
same way in :data:`SECTIONS` and checked by :func:`check_sections`.

Figure kinds are a registry (:func:`register_figure_kind`): a kind declares the options its drawing reads, so the
spec checks them without importing the drawing code. The spec declares the kinds several studies share; a study
declares its own in its module (with :func:`forestlab.plotting.figure_kind`, which also registers the drawing), loaded
through :func:`add_kind_loader` the first time a figure names a kind not registered yet.

The settings of the runs are typed the same way: :class:`Protocol` (with its :class:`Selection`), :class:`Limits`,
:class:`Launcher` and :class:`Paths`, each built once from its section, its ``as_dict()`` the section as written
(what plan ids, run keys and worker payloads hash and carry). Everything here is read by attribute.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from forestlab._values import is_int, is_number
from forestlab.errors import ConfigError

__all__ = ["ALGORITHM", "ALGORITHMS", "CELL_ROLES", "DATASETS", "SECTIONS", "Bool", "CellSpec", "ChoiceSpec",
           "Context", "Field",
           "FigureKind", "FigureSpec", "Int", "Known", "ListOf", "MappingOf", "Real", "Record", "Registered",
           "Reports", "Shrunk", "TableSpec", "Text", "add_kind_loader", "build_reports", "check_mapping",
           "check_section", "check_sections", "closest", "declared_keys", "figure_kinds", "make_cell", "make_choice",
           "make_figure", "make_table", "register_figure_kind", "section_keys"]

MAX_SEED = 2**63 - 1  # the store keeps the base seed as an SQLite INTEGER
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def closest(word: str, choices: Sequence[str]) -> str:
    """'; did you mean ...?' for the choices nearest ``word`` ('' when none is near): difflib's close matches, else
    the choices that share a prefix of at least three letters with it (``rocc`` -> ``roc_envelope``, ...)."""
    choices = [str(c) for c in choices]
    match = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not match:
        stem = word[: max(3, len(word) - 1)]
        match = [c for c in choices if len(stem) >= 3 and c.startswith(stem)][:3]
    if not match:
        return ""
    return "; did you mean " + " or ".join(f"'{m}'" for m in match) + "?"


# ---------------------------------------------------------------------------------------------------------------
# Constraints: each says whether a value passes (``error`` returns None) or what is wrong with it.
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Context:
    """What the names in a spec are checked against: the experiment's algorithms (with its choices), the datasets
    it lists (before ``limits.max_datasets``), and whether to check names at all (a spec built outside an
    experiment, e.g. in a test's hand-built results, has nothing to check them against)."""

    algorithms: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    check_names: bool = False
    # every algorithm and dataset config there is: a name of one that the experiment does not run (its list narrowed
    # on the command line, experiment.algorithms=[rf]) is not a typo; the reports say it has no runs
    known_algorithms: tuple[str, ...] = ()
    known_datasets: tuple[str, ...] = ()


class Constraint:
    """A rule for one value; ``str(constraint)`` completes 'must be ...'."""

    def error(self, value: Any, ctx: Context) -> str | None:
        """None when ``value`` passes, else the message fragment after '<key> ' (e.g. 'must be ..., got 3')."""
        return None if self.ok(value, ctx) else f"must be {self}, got {value!r}"

    def ok(self, value: Any, ctx: Context) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Anything(Constraint):
    def ok(self, value: Any, ctx: Context) -> bool:
        return True

    def __str__(self) -> str:
        return "anything"


@dataclass(frozen=True)
class Text(Constraint):
    def ok(self, value: Any, ctx: Context) -> bool:
        return isinstance(value, str)

    def __str__(self) -> str:
        return "a string"


@dataclass(frozen=True)
class Bool(Constraint):
    def ok(self, value: Any, ctx: Context) -> bool:
        return isinstance(value, bool)

    def __str__(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class Name(Constraint):
    """A name that becomes a file or folder name: letters, digits, ``_ . + -``; no ``/`` and no ``..``."""

    def ok(self, value: Any, ctx: Context) -> bool:
        return isinstance(value, str) and bool(_SAFE_NAME.match(value)) and ".." not in value

    def __str__(self) -> str:
        return "a plain name (letters, digits, _ . + -; no '/' or '..')"


@dataclass(frozen=True)
class Int(Constraint):
    """An integer (not a bool) in ``[low, high]``, ``excluded`` values refused; ``range_text`` words the range."""

    low: int | None = None
    high: int | None = None
    excluded: tuple[int, ...] = ()
    range_text: str | None = None

    def error(self, value: Any, ctx: Context) -> str | None:
        if not is_int(value):
            return f"must be an integer, got {value!r}"
        if self.range_text and (value in self.excluded or (self.low is not None and value < self.low)
                                or (self.high is not None and value > self.high)):
            return f"must be {self.range_text}, got {value}"
        if self.low is not None and value < self.low:
            return f"must be >= {self.low}, got {value}"
        if self.high is not None and value > self.high:
            return f"must be <= {self.high}, got {value}"
        return None

    def __str__(self) -> str:
        return self.range_text or "an integer"


@dataclass(frozen=True)
class Real(Constraint):
    """A number (not a bool) in the open interval ``(low, high)``."""

    low: float | None = None
    high: float | None = None

    def ok(self, value: Any, ctx: Context) -> bool:
        return (is_number(value) and not isinstance(value, bool) and (self.low is None or value > self.low)
                and (self.high is None or value < self.high))

    def __str__(self) -> str:
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"a number in ({lo}, {hi})"


@dataclass(frozen=True)
class Options(Constraint):
    values: tuple[Any, ...]

    def error(self, value: Any, ctx: Context) -> str | None:
        if value in self.values:
            return None
        hint = closest(value, [str(v) for v in self.values]) if isinstance(value, str) else ""
        return f"must be one of {', '.join(map(str, self.values))}, got {value!r}{hint}"

    def __str__(self) -> str:
        return f"one of {', '.join(map(str, self.values))}"


@dataclass(frozen=True)
class Known(Constraint):
    """A name of the experiment's algorithms or of the datasets it lists (checked when the context has them)."""

    what: str  # "algorithm" or "dataset"

    def error(self, value: Any, ctx: Context) -> str | None:
        if not isinstance(value, str):
            return f"must be {self}, got {value!r}"
        names = ctx.algorithms if self.what == "algorithm" else ctx.datasets
        known = ctx.known_algorithms if self.what == "algorithm" else ctx.known_datasets
        if not ctx.check_names or value in names or value in known:
            return None
        return f"{self.what} '{value}' is not one of the experiment's ({', '.join(names)}){closest(value, names)}"

    def __str__(self) -> str:
        return f"the name of one of the experiment's {self.what}s"


@dataclass(frozen=True)
class Registered(Constraint):
    """A name from a registry (metrics, measures), looked up when checked (the registry may load numpy)."""

    what: str
    names: Callable[[], Sequence[str]]

    def error(self, value: Any, ctx: Context) -> str | None:
        names = list(self.names())
        if isinstance(value, str) and value in names:
            return None
        hint = closest(value, names) if isinstance(value, str) else ""
        return f"unknown {self.what} {value!r}{hint}; valid {self.what}s: {', '.join(sorted(names))}"

    def __str__(self) -> str:
        return f"a {self.what} name"


def _at(where: str, problem: str) -> str:
    """``problem`` of an element: '[0] must be ...', or '[0]: algorithm 'x' is not ...'."""
    return f"{where} {problem}" if problem.startswith(("must", "[")) else f"{where}: {problem}"


@dataclass(frozen=True)
class ListOf(Constraint):
    """A list of values that each pass ``item`` (a single value is one when ``scalar``); ``length`` when fixed."""

    item: Constraint
    scalar: bool = False
    length: int | None = None
    min_length: int = 0

    def error(self, value: Any, ctx: Context) -> str | None:
        if self.scalar and not isinstance(value, (list, tuple)):
            value = [value]
        if not isinstance(value, (list, tuple)) or (self.length is not None and len(value) != self.length) \
                or len(value) < self.min_length:
            return f"must be {self}, got {value!r}"
        for i, v in enumerate(value):
            problem = self.item.error(v, ctx)
            if problem is not None:
                return problem if isinstance(self.item, (Known, Registered)) else _at(f"[{i}]", problem)
        return None

    def __str__(self) -> str:
        size = f"{self.length} " if self.length else ""
        return f"a list of {size}{self.item}" + (" (or one)" if self.scalar else "")


@dataclass(frozen=True)
class MappingOf(Constraint):
    """A mapping whose keys pass ``key`` and values pass ``value`` (a list of keys too, when ``list_ok``)."""

    key: Constraint = field(default_factory=Text)
    value: Constraint = field(default_factory=Anything)
    list_ok: bool = False

    def error(self, value: Any, ctx: Context) -> str | None:
        if self.list_ok and isinstance(value, (list, tuple)):
            value = dict.fromkeys(value)
        if not isinstance(value, Mapping):
            return f"must be {self}, got {value!r}"
        for k, v in value.items():
            problem = self.key.error(k, ctx) or self.value.error(v, ctx)
            if problem is not None:
                return problem if isinstance(self.key, (Known, Registered)) else _at(f"[{k!r}]", problem)
        return None

    def __str__(self) -> str:
        return f"a mapping of {self.key} to {self.value}" + (" (or a list of the former)" if self.list_ok else "")


@dataclass(frozen=True)
class Record(Constraint):
    """A mapping with declared keys (``fields``: key -> Field), e.g. a pair ``{a, b, label}`` of a figure."""

    fields: Mapping[str, Field]
    what: str = "entry"

    def error(self, value: Any, ctx: Context) -> str | None:
        if not isinstance(value, Mapping):
            return f"must be {self}, got {value!r}"
        try:
            check_mapping(value, self.fields, self.what, ctx)
        except ConfigError as exc:
            return str(exc)
        return None

    def __str__(self) -> str:
        return f"a mapping {{{', '.join(self.fields)}}}"


@dataclass(frozen=True)
class Field:
    """One declared key: its constraint, its default (used when the key is absent), whether it must be given."""

    constraint: Constraint = field(default_factory=Anything)
    default: Any = None
    required: bool = False
    nullable: bool = True  # None passes (YAML's null: the same as absent)


def check_mapping(data: Mapping[str, Any], fields: Mapping[str, Field], where: str, ctx: Context,
                  *, valid_where: str | None = None) -> None:
    """The one checker: refuse a key of ``data`` that ``fields`` does not declare (nothing would read it), a
    missing required key, and a value its constraint rejects. ``where`` names the place ('table 't1'', ...)."""
    for key in data:
        if str(key) not in fields:
            raise ConfigError(f"unknown key '{key}' in {where} (nothing reads it){closest(str(key), list(fields))}; "
                              f"valid keys of {valid_where or where}: {', '.join(fields)}")
    for key, spec in fields.items():
        value = data.get(key)
        if value is None:
            if spec.required:
                raise ConfigError(f"{where}: {key} is required ({spec.constraint})")
            if spec.nullable:
                continue
        problem = spec.constraint.error(value, ctx)
        if problem is not None:
            if isinstance(spec.constraint, (Known, Registered)) or (
                    isinstance(spec.constraint, (ListOf, MappingOf)) and not problem.startswith(("must", "["))):
                raise ConfigError(f"{where}: {problem}")
            raise ConfigError(f"{where}: {key}{'' if problem.startswith('[') else ' '}{problem}")


# ---------------------------------------------------------------------------------------------------------------
# The spec classes.
# ---------------------------------------------------------------------------------------------------------------
class _Declared:
    """Base of the spec classes (tables, cells, figures, choices): read by attribute; ``FIELDS`` declares the keys
    of the mapping each is built from."""

    FIELDS: ClassVar[dict[str, Field]]


ALGORITHM = Known("algorithm")
DATASETS = ListOf(Known("dataset"), scalar=True)
ALGORITHMS = ListOf(ALGORITHM, scalar=True)


def _measures() -> list[str]:
    from forestlab.metrics import MEASURES  # local: metrics loads numpy and scikit-learn

    return list(MEASURES)


#: What a table cell is (``role``): one of the study's reported results (``result``, the default: its published
#: number counts in the reproduction score), a ``hyperparameter`` the method chose (c, mu: shown beside its
#: published value, never scored), or a ``diagnostic`` (a tree depth, a property of the fit: shown, never scored).
CELL_ROLES = ("result", "hyperparameter", "diagnostic")


@dataclass(frozen=True)
class CellSpec(_Declared):
    """A table cell: one algorithm and what is shown of it: a stored ``metric`` (mean ± std over the runs), a
    ``curve`` read ``at`` a point, or a ``measure`` across the runs; with its label, the published value it is
    compared with, its digits, and an optional paired test against the algorithm ``vs``."""

    FIELDS: ClassVar[dict[str, Field]] = {
        "algorithm": Field(ALGORITHM, required=True),
        "metric": Field(Text()), "curve": Field(Text()), "at": Field(Int(1)),
        "measure": Field(Registered("measure", _measures)),
        "label": Field(Text()), "published_metric": Field(Text()), "published_as": Field(Text()),
        "digits": Field(Int(0, 12)), "vs": Field(ALGORITHM), "show_p": Field(Bool()),
        "role": Field(Options(CELL_ROLES), "result"),
    }
    algorithm: str
    metric: str | None = None
    curve: str | None = None
    at: int | None = None
    measure: str | None = None
    label: str | None = None
    published_metric: str | None = None
    published_as: str | None = None
    digits: int | None = None
    vs: str | None = None
    show_p: bool = False
    role: str = "result"  # what the cell is: a reported result (scored), a hyperparameter or a diagnostic (shown)

    @property
    def scored(self) -> bool:
        """Whether the cell is one of the study's reported results (its published number counts in the score)."""
        return self.role == "result"

    @property
    def value_name(self) -> str:
        """What the cell shows: its metric, its measure, or '<curve>@<at>'."""
        return self.metric or self.measure or f"{self.curve}@{self.at}"

    @property
    def column(self) -> str:
        """The CSV name of the cell: '<algorithm> <metric>', '<algorithm> <measure>' or '<algorithm> <curve>@<at>'."""
        return f"{self.algorithm} {self.value_name}"


@dataclass(frozen=True)
class TableSpec(_Declared):
    """A table of the experiment: its cells, the published table it is compared with, the paired tests of
    ``pairs`` on ``pair_metric``, the metrics whose best value of a row is marked, its digits."""

    FIELDS: ClassVar[dict[str, Field]] = {
        "name": Field(Name(), required=True), "title": Field(Text()),
        "cells": Field(ListOf(Anything()), required=True), "published": Field(Text()),
        "pairs": Field(ListOf(ListOf(ALGORITHM, length=2))), "pair_metric": Field(Text()),
        "mark_best": Field(ListOf(Text(), scalar=True)), "datasets": Field(DATASETS),
        "alpha": Field(Real(0, 1)), "note": Field(Text()), "digits": Field(Int(0, 12)),
        "scored": Field(Bool(), True),
    }
    name: str
    cells: tuple[CellSpec, ...]
    title: str
    published: str | None = None
    pairs: tuple[tuple[str, str], ...] = ()
    pair_metric: str = "test_risk"
    mark_best: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    alpha: float = 0.05
    note: str | None = None
    digits: int = 3
    scored: bool = True  # False: another reading of a published table (shown beside it, its cells never scored)


@dataclass(frozen=True)
class FigureKind:
    """A registered figure kind: the options its drawing reads (key -> Field, with their defaults)."""

    name: str
    options: Mapping[str, Field]
    doc: str = ""


_FIGURE_KINDS: dict[str, FigureKind] = {}
#: Keys every figure may have, whatever its kind.
FIGURE_FIELDS: dict[str, Field] = {
    "name": Field(Name(), required=True), "kind": Field(Text(), required=True), "title": Field(Text()),
    "original": Field(Text()), "datasets": Field(DATASETS),
}


def register_figure_kind(name: str, doc: str = "", **options: Field) -> FigureKind:
    """Declare a figure kind and the options its drawing reads (each a :class:`Field`); a study registers its own.
    Registering a name again replaces it (a module reloaded)."""
    clash = sorted(set(options) & set(FIGURE_FIELDS))
    if clash:
        raise ValueError(f"figure kind {name}: {', '.join(clash)} is a key of every figure")
    kind = FigureKind(name, dict(options), doc)
    _FIGURE_KINDS[name] = kind
    return kind


_KIND_LOADERS: list[Callable[[], object]] = []


def add_kind_loader(load: Callable[[], object]) -> None:
    """Install ``load``, called once the first time a figure names a kind not registered yet, to register more.

    This is how the studies plug in without the spec naming them: the top floor (:mod:`forestlab.cli`) installs a
    loader that imports :mod:`forestlab.studies`, whose modules declare their own figure kinds. A program that builds
    experiments itself imports :mod:`forestlab.studies` first (or installs the same loader)."""
    _KIND_LOADERS.append(load)


def _load_more_kinds() -> None:
    while _KIND_LOADERS:
        _KIND_LOADERS.pop(0)()


def figure_kinds(*, complete: bool = False) -> dict[str, FigureKind]:
    """The registered figure kinds, by name; ``complete``: first run the installed loaders (:func:`add_kind_loader`)
    that have not run yet, so the kinds the plug-ins declare are there."""
    if complete:
        _load_more_kinds()
    return dict(_FIGURE_KINDS)


@dataclass(frozen=True)
class FigureSpec(_Declared):
    """A figure of the experiment: its name, kind, title, the datasets it draws (default all) and its kind's
    options (``options``: every declared option, its default where the figure does not set it)."""

    name: str
    kind: str
    title: str
    original: str | None = None
    datasets: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def algorithms(self) -> list[str]:
        """The algorithms the figure names (``algorithms``, ``algorithm`` or its pairs), in order, once each."""
        names: list[str] = []
        value = self.options.get("algorithms")
        names += [str(a) for a in ([value] if isinstance(value, str) else value or [])]
        if self.options.get("algorithm"):
            names.append(str(self.options["algorithm"]))
        for pair in self.options.get("pairs") or []:
            names += [str(pair["a"]), str(pair["b"])]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class ChoiceSpec(_Declared):
    """``experiment.choices``: a new algorithm ``name`` whose runs on each dataset are those of the candidate of
    ``among`` whose guide (``by``, default the candidates) has the best mean ``metric``."""

    FIELDS: ClassVar[dict[str, Field]] = {
        "name": Field(Text(), required=True), "among": Field(ListOf(ALGORITHM, min_length=2), required=True),
        "by": Field(ListOf(ALGORITHM, min_length=2)), "metric": Field(Text(), required=True),
    }
    name: str
    among: tuple[str, ...]
    by: tuple[str, ...]
    metric: str


def _tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def _as_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping, got {value!r}")
    return value


def make_cell(data: Any, where: str, ctx: Context) -> CellSpec:
    """A :class:`CellSpec` from a mapping, checked (``where``: "table 't', cell 2")."""
    if isinstance(data, CellSpec):
        return data
    data = _as_mapping(data, where)
    check_mapping(data, CellSpec.FIELDS, where, ctx, valid_where="a table cell")
    shown = [k for k in ("metric", "curve", "measure") if data.get(k) is not None]
    if len(shown) != 1:
        raise ConfigError(f"{where} {dict(data)} needs a 'metric', a 'curve' with 'at', or a 'measure'"
                          + (f" (not {' and '.join(shown)})" if shown else ""))
    if (data.get("curve") is None) != (data.get("at") is None):
        raise ConfigError(f"{where}: 'curve' and 'at' go together (the curve read at point 'at')")
    return CellSpec(**{k: data[k] for k in CellSpec.FIELDS if data.get(k) is not None})


def make_table(data: Any, where: str, ctx: Context) -> TableSpec:
    """A :class:`TableSpec` from a mapping, its cells and keys checked (``where``: 'experiment.tables[0]')."""
    if isinstance(data, TableSpec):
        return data
    data = _as_mapping(data, where)
    name = data.get("name")
    problem = Name().error(name, ctx)
    if problem is not None:
        raise ConfigError(f"{where}.name {problem}")
    here = f"table '{name}'"
    check_mapping(data, TableSpec.FIELDS, here, ctx)
    cells = tuple(make_cell(c, f"{here}, cell {i + 1}", ctx) for i, c in enumerate(data["cells"]))
    return TableSpec(
        name=str(name), cells=cells, title=str(data.get("title") or name), published=data.get("published"),
        pairs=tuple((str(a), str(b)) for a, b in data.get("pairs") or ()),
        pair_metric=str(data.get("pair_metric") or "test_risk"), mark_best=_tuple(data.get("mark_best")),
        datasets=_tuple(data.get("datasets")), alpha=float(data.get("alpha") or 0.05), note=data.get("note"),
        digits=int(data["digits"]) if data.get("digits") is not None else 3,
        scored=bool(data["scored"]) if data.get("scored") is not None else True)


def make_figure(data: Any, where: str, ctx: Context) -> FigureSpec:
    """A :class:`FigureSpec` from a mapping: its kind registered, its keys those of every figure or its kind's."""
    if isinstance(data, FigureSpec):
        return data
    data = _as_mapping(data, where)
    name = data.get("name")
    problem = Name().error(name, ctx)
    if problem is not None:
        raise ConfigError(f"{where}.name {problem}")
    here = f"figure '{name}'"
    kind_name = data.get("kind")
    kinds = figure_kinds()
    if kind_name not in kinds:  # a plug-in's kind, or none: load the plug-ins, then look again
        kinds = figure_kinds(complete=True)
    if kind_name not in kinds:
        hint = closest(kind_name, list(kinds)) if isinstance(kind_name, str) else ""
        raise ConfigError(f"{here}: unknown kind {kind_name!r}{hint}; valid kinds: {', '.join(kinds)}")
    kind = kinds[kind_name]
    check_mapping(data, {**FIGURE_FIELDS, **kind.options}, here, ctx, valid_where=f"a {kind_name} figure")
    options = {k: data[k] if data.get(k) is not None else f.default for k, f in kind.options.items()}
    return FigureSpec(name=str(name), kind=str(kind_name), title=str(data.get("title") or name),
                      original=data.get("original"), datasets=_tuple(data.get("datasets")), options=options)


def make_choice(data: Any, where: str, ctx: Context, taken: Sequence[str]) -> ChoiceSpec:
    """A :class:`ChoiceSpec`: a new name, candidates and guides among the experiment's algorithms, paired."""
    if isinstance(data, ChoiceSpec):
        return data
    if not isinstance(data, Mapping):
        raise ConfigError(f"experiment.choices: each choice is a mapping {{name, among, by, metric}}, got {data!r}")
    unknown = sorted(set(data) - set(ChoiceSpec.FIELDS))
    if unknown:
        raise ConfigError(f"experiment.choices: '{unknown[0]}' is not a choice setting (valid: "
                          f"{', '.join(ChoiceSpec.FIELDS)}){closest(unknown[0], list(ChoiceSpec.FIELDS))}")
    name = data.get("name")
    if not isinstance(name, str) or not name or name in taken:
        raise ConfigError(f"experiment.choices: name {name!r} must be a new name (not an algorithm of the "
                          "experiment, nor another choice's)")
    among = data.get("among")
    by = data.get("by") or among
    for key, value in (("among", among), ("by", by)):
        if not isinstance(value, list) or len(value) < 2 or any(v not in ctx.algorithms for v in value):
            raise ConfigError(f"experiment.choices {name}: {key} must list at least two of the experiment's "
                              f"algorithms ({', '.join(ctx.algorithms)}), got {value!r}")
    if len(by) != len(among):
        raise ConfigError(f"experiment.choices {name}: by must pair one guide with each candidate of among "
                          f"({len(among)}), got {len(by)}")
    metric = data.get("metric")
    from forestlab.metrics import direction  # local: metrics loads numpy and scikit-learn

    if not isinstance(metric, str) or direction(metric) is None:
        raise ConfigError(f"experiment.choices {name}: metric {metric!r} is not a stored metric with a "
                          "direction (e.g. test_auc)")
    return ChoiceSpec(name=name, among=tuple(map(str, among)), by=tuple(map(str, by)), metric=metric)


@dataclass(frozen=True)
class Reports:
    """What an experiment's reports draw: its tables, figures, choices and claims, checked."""

    tables: tuple[TableSpec, ...] = ()
    figures: tuple[FigureSpec, ...] = ()
    choices: tuple[ChoiceSpec, ...] = ()
    claims: tuple[str, ...] = ()


def _list_of_mappings(value: Any, key: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (Mapping, _Declared)) for v in value):
        raise ConfigError(f"{key} must be a list of mappings (each with a name), got {value!r}")
    return list(value)


def build_reports(section: Mapping[str, Any], algorithms: Sequence[str], datasets: Sequence[str],
                  *, check_names: bool = True, known_algorithms: Sequence[str] = (),
                  known_datasets: Sequence[str] = ()) -> Reports:
    """The tables, figures, choices and claims of an experiment section (``experiment:`` of the composed config,
    a plain mapping), every key checked; ``algorithms`` and ``datasets`` are the experiment's (datasets as listed,
    before ``limits.max_datasets``); ``known_*`` every configured one (see :class:`Context`)."""
    ctx = Context(tuple(algorithms), tuple(datasets), check_names)
    choices: list[ChoiceSpec] = []
    choice_list = section.get("choices")
    if choice_list is not None and not isinstance(choice_list, (list, tuple)):
        raise ConfigError(f"experiment.choices must be a list of mappings {{name, among, by, metric}}, "
                          f"got {choice_list!r}")
    for data in choice_list or []:
        choices.append(make_choice(data, "experiment.choices", ctx, [*algorithms, *(c.name for c in choices)]))
    # a cell or figure may show a choice as an algorithm of its own
    shown = Context((*algorithms, *(c.name for c in choices)), tuple(datasets), check_names,
                    tuple(known_algorithms), tuple(known_datasets))
    tables = tuple(make_table(t, f"experiment.tables[{i}]", shown)
                   for i, t in enumerate(_list_of_mappings(section.get("tables"), "experiment.tables")))
    figures = tuple(make_figure(f, f"experiment.figures[{i}]", shown)
                    for i, f in enumerate(_list_of_mappings(section.get("figures"), "experiment.figures")))
    for what, specs in (("table", tables), ("figure", figures)):
        names = [s.name for s in specs]
        twice = [n for i, n in enumerate(names) if n in names[:i]]
        if twice:
            raise ConfigError(f"experiment {what}s name '{twice[0]}' twice: their files would overwrite each other")
    claims = section.get("claims")
    if claims is not None and not isinstance(claims, (list, tuple)):
        raise ConfigError(f"experiment.claims must be a list of claim names, got {claims!r}")
    return Reports(tables, figures, tuple(choices), tuple(str(c) for c in claims or ()))


# ---------------------------------------------------------------------------------------------------------------
# The figure kinds that serve several studies (their drawings: forestlab.report.figures). A kind only one study draws
# is declared and drawn in that study's module (forestlab.studies.<study>_figures), with forestlab.plotting.figure_kind.
# ---------------------------------------------------------------------------------------------------------------
register_figure_kind("error_curves", "stored curves of one algorithm (curve name -> label), one panel per dataset",
                     algorithm=Field(ALGORITHM), curves=Field(MappingOf(Text(), Text()), required=True))


# ---------------------------------------------------------------------------------------------------------------
# The sections of the composed config: the keys each may have (any other would be read by nobody) and the rules of
# the values the runner relies on. The keys of a dataset config are declared here once (``dataset``) and checked by
# one call, check_section("dataset", ...), which the experiment makes before any run and the loader makes for a
# config given to it directly (forestlab.datasets.load_dataset, `forestlab datasets verify`); an
# algorithm's parameters are the learner's own (its _parameter_constraints); the protocol's values by kind are
# declared with Protocol (PROTOCOL_RULES, below), which knows their combinations, and its selection's by Selection.
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Section(Constraint):
    """A section of the config: a mapping of keys to values."""

    def ok(self, value: Any, ctx: Context) -> bool:
        return isinstance(value, Mapping)

    def __str__(self) -> str:
        return "a mapping (KEY: VALUE entries)"


@dataclass(frozen=True)
class DaskAddress(Constraint):
    def ok(self, value: Any, ctx: Context) -> bool:
        return isinstance(value, str) and ":" in value

    def __str__(self) -> str:
        return "a dask scheduler address like tcp://HOST:8786 (or null)"


@dataclass(frozen=True)
class Shrunk:
    """A kind of shrunk run (``smoke: true``): what it is called and how it is treated, as its ``shrunk`` section
    declares it (conf/debug/smoke.yaml). The code reads these settings, never the word: another debug option with
    ``smoke: true`` and a ``shrunk`` section of its own is another kind."""

    label: str  # names its outputs: NAME-<label> folders, report-<label>, status's NAME[<label>]
    option: str  # the override that asks for such runs
    judged: bool  # whether claims are judged on them (False: each is NOT TESTED, the test's answer kept)
    dataset_seeds: bool  # whether experiment.dataset_seeds applies
    heading: str  # after the experiment's name atop a table or comparison
    banner: str  # atop every page of the site (`code` in backticks)
    figure_note: str  # under each figure
    comparison: str  # under a comparison's heading
    claims_note: str  # beside a comparison's claims heading
    unjudged: str  # a claim's evidence on them, when they are not judged
    stored_only: str  # why they are not shown, when only such runs are stored for an experiment

    FIELDS: ClassVar[dict[str, Field]]

    @classmethod
    def of(cls, section: Mapping[str, Any], where: str = "shrunk") -> Shrunk:
        """The kind a ``shrunk`` section declares (checked: every key, every value)."""
        check_mapping(section, cls.FIELDS, where, Context())
        return cls(**{k: f.default if section.get(k) is None else section[k] for k, f in cls.FIELDS.items()})


_TEXT = Field(Text(), required=True, nullable=False)
Shrunk.FIELDS = {"label": Field(Name(), required=True, nullable=False),
                 "option": Field(Text(), required=True, nullable=False),
                 "judged": Field(Bool(), True), "dataset_seeds": Field(Bool(), True),
                 **{k: _TEXT for k in ("heading", "banner", "figure_note", "comparison", "claims_note", "unjudged",
                                       "stored_only")}}

_LIMIT = Field(Int(1))
SECTIONS: dict[str, dict[str, Field]] = {
    "": {"dataset": Field(Section(), required=True, nullable=False),
         "algorithm": Field(Section(), required=True, nullable=False),
         "protocol": Field(Section(), required=True, nullable=False),
         "launcher": Field(Section(), required=True, nullable=False),
         "paths": Field(Section(), required=True, nullable=False),
         "experiment": Field(Section(), required=True, nullable=False),
         "seed": Field(Int(0, MAX_SEED), required=True, nullable=False),
         "seeds": Field(Int(1), required=True, nullable=False),
         "metrics": Field(), "smoke": Field(Bool()), "limits": Field(Section()),
         "shrunk": Field(Section())},  # what a kind of shrunk run (smoke: true) is called: Shrunk
    "dataset": {k: Field() for k in ("name", "task", "description", "studies", "shape", "source", "parse", "columns",
                                     "drop", "target", "categorical", "category_order", "missing", "splits", "notes",
                                     "citation")},
    "algorithm": {k: Field() for k in ("name", "estimator", "seed_tag", "params", "grid", "selection",
                                       "description")},
    "protocol": {k: Field() for k in ("name", "kind", "train_size", "test_size", "sizes_from", "stratify", "resplit",
                                      "selection", "n_folds")},
    "launcher": {"name": Field(Text()),
                 "backend": Field(Options(("loky", "threading", "sequential", "dask")), required=True,
                                  nullable=False),
                 "n_jobs": Field(Int(-1, excluded=(0,), range_text="-1 (all cores) or a positive integer"),
                                 required=True, nullable=False),
                 "scheduler": Field(DaskAddress())},
    "paths": {**{k: Field() for k in ("root_dir", "data_dir", "results_dir", "reports_dir", "mirror", "log_file")},
              "download": Field(Bool(), nullable=False), "log_max_bytes": Field(Int(0)),
              "log_backup_count": Field(Int(0))},
    "limits": {k: _LIMIT for k in ("max_datasets", "max_estimators", "max_runs", "max_trees",
                                   "max_generated_values", "max_folds")},
    "experiment": {"name": Field(Name(), required=True, nullable=False), "study": Field(Name()),
                   "description": Field(), "datasets": Field(), "dataset_seeds": Field(), "algorithms": Field(),
                   "params": Field(Section()), "choices": Field(), "tables": Field(), "figures": Field(),
                   "claims": Field(),
                   # how the command line treats the experiment (conf/experiment/single.yaml sets them)
                   "from_choices": Field(Bool(), False), "listed": Field(Bool(), True),
                   "prints_runs": Field(Bool(), False), "other_choices_stale": Field(Bool(), True)},
    "shrunk": Shrunk.FIELDS,
}


def section_keys() -> dict[str, tuple[str, ...]]:
    """The keys each section of the composed config may have ('' is the top level)."""
    return {section: tuple(fields) for section, fields in SECTIONS.items()}


def check_section(section: str, value: Mapping[str, Any], where: str | None = None) -> None:
    """Check one section of the composed config (a plain mapping) against its declaration: unknown keys (with a
    did-you-mean), missing ones, and values, each refused in one line that names ``section.key``."""
    fields = SECTIONS[section]
    where = where if where is not None else section
    ctx = Context()
    for key in value:
        if str(key) not in fields:
            name = f"unknown key '{key}' in {where}" if where else f"unknown config key '{key}'"
            raise ConfigError(f"{name} (nothing reads it){closest(str(key), list(fields))}; valid keys"
                              f"{f' of {where}' if where else ' at the top level'}: {', '.join(fields)}")
    for key, spec in fields.items():
        dotted = f"{section}.{key}" if section else key
        if key not in value:
            if spec.required:
                raise ConfigError(f"{dotted} is missing")
            continue
        item = value[key]
        if item is None and spec.nullable:
            continue
        problem = spec.constraint.error(item, ctx)
        if problem is not None:
            raise ConfigError(f"{dotted} {problem}")


def check_sections(cfg: Mapping[str, Any]) -> None:
    """The top level of the composed config and its sections launcher, paths, limits and experiment (the datasets,
    algorithms and protocol are checked as the experiment uses them)."""
    check_section("", cfg)
    for section in ("launcher", "paths", "limits", "experiment", "protocol", "shrunk"):
        if cfg.get(section) is not None:
            check_section(section, cfg[section])


def declared_keys(parent: str, kind: str | None = None) -> tuple[str, ...]:
    """The keys declared for the config node at the dotted path ``parent``: a section ('' is the top level), a
    table (``experiment.tables.0``), a cell (``experiment.tables.0.cells.1``) or a figure (``experiment.figures.0``,
    with its ``kind``'s options when known, else every kind's); () for any other node."""
    if parent in SECTIONS:
        return tuple(SECTIONS[parent])
    parts = parent.split(".")
    if len(parts) == 3 and parts[:2] == ["experiment", "tables"]:
        return tuple(TableSpec.FIELDS)
    if len(parts) == 5 and parts[:2] == ["experiment", "tables"] and parts[3] == "cells":
        return tuple(CellSpec.FIELDS)
    if len(parts) == 3 and parts[:2] == ["experiment", "figures"]:
        kinds = figure_kinds(complete=True)
        every = {k: f for fk in kinds.values() for k, f in fk.options.items()}
        options = kinds[kind].options if kind in kinds else every
        return (*FIGURE_FIELDS, *options)
    return ()


# ---------------------------------------------------------------------------------------------------------------
# The settings of a run: the protocol and its model selection, the limits, the launcher and the paths, each a frozen
# dataclass built once from its section of the composed config (by forestlab.config.resolve), its keys and values
# checked by the declarations above and below. ``as_dict()`` gives the section as it was written (same keys, same
# values): that dict is what plan ids, run keys, plan records and worker payloads hash and carry, so typing the
# settings changes none of them.
# ---------------------------------------------------------------------------------------------------------------
#: The valid values of ``protocol.kind``, in the order messages list them.
PROTOCOL_KINDS = ("holdout", "kfold", "resample")
#: The valid values of ``selection.kind``.
SELECTION_KINDS = ("none", "oob", "cv", "test")
DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class _Settings:
    """Base of the settings classes: ``given`` keeps which keys the section wrote, in order, for :meth:`as_dict`."""

    SECTION: ClassVar[str]
    given: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)

    def as_dict(self) -> dict[str, Any]:
        """The section as written: the keys it gave, with their values."""
        return {key: getattr(self, key) for key in self.given}

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> _Settings:
        """The settings of a section of the composed config (a plain mapping), checked against its declaration."""
        section = dict(section or {})
        check_section(cls.SECTION, section)
        return cls(**section, given=tuple(section))


@dataclass(frozen=True)
class Limits(_Settings):
    """``limits``: caps applied to every run of the experiment (None: no cap); ``debug=smoke`` sets them."""

    SECTION: ClassVar[str] = "limits"
    max_datasets: int | None = None
    max_estimators: int | None = None
    max_runs: int | None = None
    max_trees: int | None = None
    max_generated_values: int | None = None
    max_folds: int | None = None


@dataclass(frozen=True)
class Launcher(_Settings):
    """``launcher``: how the runs are spread (joblib's backend, its workers, a dask scheduler's address)."""

    SECTION: ClassVar[str] = "launcher"
    backend: str = "loky"
    n_jobs: int = 1
    scheduler: str | None = None
    name: str | None = None

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> Launcher:
        launcher = super().from_config(section)
        if launcher.backend != "dask" and launcher.scheduler:
            raise ConfigError(f"launcher.scheduler={launcher.scheduler} is a dask scheduler, but the launcher is "
                              f"{launcher.backend}: add launcher=dask (or drop the address)")
        return launcher  # type: ignore[return-value]


@dataclass(frozen=True)
class Paths(_Settings):
    """``paths``: where the data, the results, the reports and the log live (the folders' own rules:
    :func:`forestlab.config.check_paths`, which looks at the file system)."""

    SECTION: ClassVar[str] = "paths"
    root_dir: str | None = None
    data_dir: str | None = None
    results_dir: str | None = None
    reports_dir: str | None = None
    mirror: str | None = None
    download: bool = True
    log_file: str | None = None
    log_max_bytes: int | None = 5_000_000
    log_backup_count: int | None = 5

    @property
    def reports_root(self) -> str:
        """Where tables/ and figures/ are written: ``reports_dir``, else ``results_dir``."""
        return str(self.reports_dir or self.results_dir)


def _selection_metric_error(metric: str) -> str | None:
    from forestlab.metrics import METRICS  # local: metrics loads numpy and scikit-learn

    if metric in METRICS and METRICS[metric].kind in ("label", "score"):
        return None
    valid = sorted(n for n, m in METRICS.items() if m.kind in ("label", "score"))
    return f"'{metric}' cannot select a model; valid metrics: {', '.join(valid)}"


@dataclass(frozen=True)
class Selection:
    """How a learner's grid is searched (:mod:`forestlab.selection`): ``kind`` none, oob, cv (``folds`` inner
    folds, scored by ``metric``, optionally on a cheaper ``proxy``) or test (optimistic: the test set chooses).

    Built by :meth:`from_config` from ``protocol.selection`` or ``algorithm.selection`` as written: None means
    none, a string is the kind alone (none or oob), a mapping has the keys of :attr:`FIELDS`."""

    FIELDS: ClassVar[dict[str, Field]] = {
        "kind": Field(Options(SELECTION_KINDS)), "metric": Field(Text()), "folds": Field(Int(2)),
        "proxy": Field(MappingOf(Text(), Anything())),
    }
    kind: str = "none"
    metric: str | None = None
    folds: int | None = None
    proxy: Mapping[str, Any] | None = None

    @property
    def optimistic(self) -> bool:
        """The test set took part in the choice (kind test): tables label such cells."""
        return self.kind == "test"

    def as_dict(self) -> dict[str, Any]:
        """``{kind, metric, folds}`` (and ``proxy`` when given): the normalised form the run keys hash."""
        out: dict[str, Any] = {"kind": self.kind, "metric": self.metric, "folds": self.folds}
        if self.proxy is not None:  # only when given: every other selection's dict (and its runs' keys) unchanged
            out["proxy"] = dict(self.proxy)
        return out

    @classmethod
    def from_config(cls, selection: Mapping[str, Any] | str | Selection | None) -> Selection:
        """The selection of a config value; a one-line ConfigError naming ``protocol.selection`` when invalid:
        ``metric`` is required for cv and test and must be a label or score metric; for oob it is risk (the
        out-of-bag error is a risk); ``folds`` (cv only, default 5) an integer >= 2; ``proxy`` (cv only) a
        non-empty mapping of parameter overrides."""
        if isinstance(selection, Selection):
            return selection
        if selection is None:
            selection = {"kind": "none"}
        elif isinstance(selection, str):
            selection = {"kind": selection}
        elif not isinstance(selection, Mapping):
            raise ConfigError(f"protocol.selection must be a kind ({', '.join(SELECTION_KINDS)}) or a mapping "
                              f"{{kind, metric, folds}}, got {selection!r}")
        unknown = sorted(str(k) for k in selection if k not in cls.FIELDS)
        if unknown:
            raise ConfigError(f"protocol.selection.{unknown[0]} is not a selection setting (valid: "
                              f"{', '.join(cls.FIELDS)}){closest(unknown[0], list(cls.FIELDS))}")
        kind = selection.get("kind", "none")
        kind = "none" if kind is None else kind
        problem = cls.FIELDS["kind"].constraint.error(kind, Context())
        if problem is not None:
            raise ConfigError(f"protocol.selection kind {problem}")
        if kind == "none":
            return cls()
        if selection.get("proxy") is not None and kind != "cv":
            raise ConfigError(f"protocol.selection.proxy is for kind cv (inner folds scored with a cheaper "
                              f"stand-in), not kind {kind}")
        metric = selection.get("metric")
        if kind == "oob":
            if metric not in (None, "risk"):
                raise ConfigError(f"protocol.selection kind oob compares out-of-bag errors (metric risk), not "
                                  f"{metric!r}; use kind cv to select on another metric")
            return cls("oob", "risk")
        if metric is None:
            raise ConfigError(f"protocol.selection kind {kind} needs a metric, e.g. "
                              f"selection: {{kind: {kind}, metric: auc}}")
        problem = _selection_metric_error(metric) if isinstance(metric, str) else f"{metric!r} is not a metric name"
        if problem is not None:
            raise ConfigError(f"protocol.selection.metric: {problem}")
        if kind == "test":
            return cls("test", metric)
        folds = selection.get("folds")
        folds = DEFAULT_FOLDS if folds is None else folds
        if isinstance(folds, bool) or not hasattr(folds, "__index__") or folds < 2:
            raise ConfigError(f"protocol.selection.folds must be an integer >= 2, got {folds!r}")
        proxy = selection.get("proxy")
        if proxy is not None:
            if not isinstance(proxy, Mapping) or not proxy or not all(isinstance(k, str) for k in proxy):
                raise ConfigError(f"protocol.selection.proxy must be a non-empty mapping of parameter overrides, "
                                  f"got {proxy!r}")
            proxy = {str(k): proxy[k] for k in sorted(proxy)}
        return cls("cv", metric, int(folds), proxy)


@dataclass(frozen=True)
class Size(Constraint):
    """A holdout size: an integer count >= 1 or a fraction in (0, 1)."""

    def error(self, value: Any, ctx: Context) -> str | None:
        if value is None:
            return f"must be set ({self})"
        if is_int(value):
            return None if value >= 1 else f"must be >= 1, got {value}"
        if isinstance(value, float):
            return None if 0.0 < value < 1.0 else f"as a fraction must be in (0, 1), got {value}"
        return f"must be an integer or a fraction, got {value!r}"

    def __str__(self) -> str:
        return "an integer number of points or a fraction in (0, 1)"


@dataclass(frozen=True)
class Count(Constraint):
    """An integer >= ``low``, as protocol kind ``kind`` needs it."""

    low: int
    kind: str

    def error(self, value: Any, ctx: Context) -> str | None:
        if not is_int(value):
            return f"must be an integer >= {self.low} for kind {self.kind}, got {value!r}"
        return None if value >= self.low else f"must be >= {self.low} for kind {self.kind}, got {value}"

    def __str__(self) -> str:
        return f"an integer >= {self.low}"


@dataclass(frozen=True)
class Refused(Constraint):
    """A value that must not be set (or true): ``why`` says what to do instead."""

    why: str

    def error(self, value: Any, ctx: Context) -> str | None:
        return None if not value else self.why


#: The rules of each protocol kind's keys (beyond :data:`SECTIONS` ``protocol``): a key a kind does not list is not
#: checked for it (the config's other kinds' keys may be there, composed from a base).
PROTOCOL_RULES: dict[str, dict[str, Field]] = {
    "holdout": {"train_size": Field(Size(), required=True, nullable=False), "test_size": Field(Size())},
    "kfold": {"n_folds": Field(Count(2, "kfold"), required=True, nullable=False)},
    "resample": {
        "train_size": Field(Count(2, "resample"), required=True, nullable=False),
        "test_size": Field(Count(0, "resample"), required=True, nullable=False),
        "stratify": Field(Refused("must be false for kind resample: the generator draws each point's class with "
                                  "its own prior")),
        "sizes_from": Field(Refused("is for kind holdout; kind resample takes train_size and test_size as numbers "
                                    "of points")),
    },
}


@dataclass(frozen=True)
class Protocol(_Settings):
    """``protocol``: how each run's training and test data are made (see :mod:`forestlab.protocols`):

    - ``holdout``: ``train_size`` an integer >= 1 or a fraction in (0, 1) (may be null when ``sizes_from`` names a
      study), ``test_size`` the same or null (every point not in the training part);
    - ``kfold``: ``n_folds`` an integer >= 2;
    - ``resample``: ``train_size`` an integer >= 2 and ``test_size`` an integer >= 0 (0: no test set), numbers of
      points drawn from the generator; ``stratify`` false (a generator draws the classes with its own prior);
    - ``stratify``, ``resplit``: true or false; ``selection``: a :class:`Selection` (a test-set selection needs a
      test set). ``selection_written`` keeps the value as written, which the plan id and run keys hash."""

    SECTION: ClassVar[str] = "protocol"
    FIELDS: ClassVar[dict[str, Field]] = {
        "name": Field(Text()), "kind": Field(Options(PROTOCOL_KINDS), required=True, nullable=False),
        "stratify": Field(Bool()), "resplit": Field(Bool()), "sizes_from": Field(Text()),
        "train_size": Field(), "test_size": Field(), "n_folds": Field(), "selection": Field(),
    }
    kind: str = "holdout"
    name: str | None = None
    train_size: int | float | None = None
    test_size: int | float | None = None
    sizes_from: str | None = None
    stratify: bool | None = None
    resplit: bool | None = None
    n_folds: int | None = None
    selection: Selection = field(default_factory=Selection)
    selection_written: Any = None

    @property
    def folds(self) -> int:
        """How many runs one repetition produces: the folds of k-fold, else 1."""
        return int(self.n_folds or 1) if self.kind == "kfold" else 1

    def as_dict(self) -> dict[str, Any]:
        return {key: self.selection_written if key == "selection" else getattr(self, key) for key in self.given}

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> Protocol:
        """A checked protocol; a one-line ConfigError naming ``protocol.<key>`` on the first problem."""
        if not isinstance(section, Mapping):
            raise ConfigError(f"a protocol must be a mapping with a `kind`, got {section!r}")
        section = dict(section)
        check_section("protocol", section)
        ctx = Context()
        kind = section.get("kind")
        problem = cls.FIELDS["kind"].constraint.error(kind, ctx)
        if problem is not None:
            raise ConfigError(f"protocol.kind {problem}")
        own = dict(PROTOCOL_RULES[kind])
        if kind == "holdout" and section.get("sizes_from"):  # the sizes come from the dataset's splits
            own["train_size"] = Field(Size())
        for rules in (cls.FIELDS, own):
            for key, rule in rules.items():
                value = section.get(key)
                if value is None and rule.nullable:
                    continue
                problem = rule.constraint.error(value, ctx)
                if problem is not None:
                    raise ConfigError(f"protocol.{key} {problem}")
        selection = Selection.from_config(section.get("selection"))
        if selection.kind == "test" and kind == "resample" and section.get("test_size") == 0:
            raise ConfigError("protocol.selection kind test needs a test set, but protocol.test_size is 0")
        fields = {k: v for k, v in section.items() if k != "selection"}
        return cls(**fields, selection=selection, selection_written=section.get("selection"), given=tuple(section))
