"""One model of every table: its rows built once from (results, table spec), rendered many ways.

The Markdown, CSV and LaTeX tables (:mod:`forestlab.report.tables`), the ``forestlab compare`` text
(:mod:`forestlab.report.compare`) and the site (:mod:`forestlab.report.site`) are thin renderers of what is built
here. So one table cell reads the same everywhere: one number formatter (:func:`fmt_number`, :func:`fmt_value`,
:func:`fmt_p`), one digits rule (:func:`cell_digits`), one agreement rule (:func:`agreement`) with one vocabulary
(:data:`MARKS`), one best-of-row rule.

A table spec (``experiment.tables[i]``) is read in one place, :func:`read_layout`; everything else reads the
:class:`Layout` and its :class:`Column` objects.

A table spec lists ``cells``: ``{algorithm, metric}`` (a stored metric, mean ± std over the runs), ``{algorithm,
curve, at}`` (a stored curve read at a number of trees), or ``{algorithm, measure}`` (a statistic over the set of
runs, :data:`forestlab.metrics.MEASURES`, e.g. ``instability``: one value per dataset). Optional per cell:

- ``label``: the column header shown in the Markdown and LaTeX tables (the CSV keeps ``"<algorithm> <metric>"``);
- ``digits``: its precision (default: the table's ``digits``, 3; a tree depth ``max_depth*`` 1);
- ``vs: <algorithm>``: a paired two-sided t-test of this cell's metric against the same metric of that algorithm,
  runs paired by (repetition, fold) (:mod:`forestlab.stats`); a significant difference at the table's
  ``alpha`` (default 0.05) appends ``*`` to the cell. The CSV gets the columns ``"<label> vs <algorithm> diff"``
  and ``"... p"``; ``show_p: true`` also shows the p-value as a column;
- ``published_as`` / ``published_metric``: the algorithm / metric the cell stands for in the published table when
  the names differ;
- ``role``: ``result`` (default: one of the study's reported results, a primary cell, counted in the reproduction
  score), ``hyperparameter`` (c, mu: shown beside its published value, never scored) or ``diagnostic`` (a tree
  depth: shown, never scored).

A table spec may also say ``scored: false``: another reading of a published table (its cells shown beside the
published values, never counted in the score, which counts each published number once).

Agreement (:func:`standardised`, :func:`agreement`) uses both sides' uncertainty where the published table states
it: its ``std`` and ``n`` columns (a mean ± std over n runs: two-sample z; a rate over n runs: two proportions; a
single split: our spread).

A table spec may name the ``datasets`` it shows, its ``published`` file, ``mark_best: <metric>`` (or a list: in
each row, the best of the cells of that metric, as shown, is marked '▸'), a ``note``, ``pairs`` and
``pair_metric`` (head-to-head tests).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from forestlab.errors import ConfigError
from forestlab.results import ExperimentResults, as_cell, measure_value, summarise
from forestlab.spec import CellSpec, Context, FigureSpec, Shrunk, TableSpec, make_table
from forestlab.stats import higher_is_better, paired_t_test, paired_values
from forestlab.studies import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, NOT_TESTED, get_study

__all__ = ["AGREE", "BINOMIAL", "DISAGREE", "GAP", "MARKS", "MEASURE", "METHODS", "NO_RUN", "SINGLE", "SINGLE_SPLIT",
           "TWO_SAMPLE", "VERDICTS", "Agreement", "Cell", "Column", "Comparison", "Layout", "Row", "TableFacts",
           "TableModel", "agreement", "build_model", "standardised",
           "cell_digits", "comparisons", "fmt_number", "fmt_p", "fmt_value", "published_key", "read_layout",
           "read_published", "rows", "shrunk_note", "shrunk_sizes", "shrunk_spec", "shrunk_title"]

#: The verdicts of a claim, in the order the reports count them (:func:`forestlab.studies.judge`).
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTED)

# -- agreement of one published number with our runs: one rule, one vocabulary -----------------------------------
AGREE, DISAGREE, SINGLE, MEASURE, NO_RUN, GAP = "agree", "disagree", "single", "measure", "no-run", "gap"
#: mark -> (symbol, meaning), the one vocabulary of agreement of every report
MARKS: dict[str, tuple[str, str]] = {
    AGREE: ("✓", "the difference is within 2 of its standard errors (|z| ≤ 2: both sides' uncertainty)"),
    DISAGREE: ("✗", "the difference is more than 2 of its standard errors (|z| > 2)"),
    SINGLE: ("·", "a single run: no spread to judge against"),
    MEASURE: ("○", "one statistic over all the runs (such as an instability): no spread to judge against"),
    NO_RUN: ("—", "no run stored for this cell"),
    GAP: ("?", "the source prints no value here"),
}
#: how many standard errors of the difference (|z|) a published number may lie from our mean and still agree
AGREEMENT_STDS = 2.0
BEST = "▸"
SIGNIFICANT = "*"

#: How a published number is judged against our runs (:func:`standardised`), by what the published table says of it
#: (its ``std`` and ``n`` columns, :meth:`forestlab.studies.Study.read_published`):
TWO_SAMPLE = "two-sample"  # a mean ± std over n runs: diff / sqrt(s1²/n1 + s2²/n2) (Welch's statistic)
BINOMIAL = "binomial"  # a rate over n runs (n, no std): two-proportion z, pooled rate, both sides' n
SINGLE_SPLIT = "single split vs our spread"  # one split's number (no n): diff / our std across splits
METHODS = {TWO_SAMPLE: "published mean ± std over n runs against ours: difference / sqrt(s1²/n1 + s2²/n2)",
           BINOMIAL: "published rate over n runs against ours: two-proportion z with the pooled rate",
           SINGLE_SPLIT: "one published split against our spread across splits: difference / our std"}


def standardised(published: float, value: float, spread: float, n: int, *, published_spread: float = float("nan"),
                 published_n: int = 0) -> tuple[str, float]:
    """How a published number is judged against our ``n`` runs (mean ``value``, std ``spread``), and ``z``: the
    difference (ours - published) in standard errors of the difference.

    - a mean ± std over ``published_n`` runs (``published_spread`` given): two-sample,
      ``z = diff / sqrt(published_spread²/published_n + spread²/n)``;
    - a rate over ``published_n`` runs (no ``published_spread``): two proportions, pooled rate
      ``p = (published·published_n + value·n) / (published_n + n)``, ``z = diff / sqrt(p(1-p)(1/published_n + 1/n))``;
    - one split (no ``published_n``): ``z = diff / spread``, our spread across splits standing for the published
      split's (its number falls within 2 std of our mean about 95% of the time when the protocols agree).

    A zero standard error gives z = 0 for no difference, infinite otherwise. NaN z: not judged (no runs, fewer
    than two, no published value).
    """
    pub_n = int(published_n or 0)
    method = SINGLE_SPLIT if pub_n < 1 else TWO_SAMPLE if not _nan(published_spread) else BINOMIAL
    if _nan(published) or not n or n < 2 or _nan(value) or _nan(spread):
        return method, float("nan")
    diff = value - published
    if method == TWO_SAMPLE:
        se = math.sqrt(published_spread ** 2 / pub_n + spread ** 2 / n)
    elif method == BINOMIAL:
        pooled = (published * pub_n + value * n) / (pub_n + n)
        se = math.sqrt(max(pooled * (1 - pooled), 0.0) * (1 / pub_n + 1 / n))
    else:
        se = spread
    if se > 0:
        return method, diff / se
    return method, 0.0 if diff == 0 else math.copysign(math.inf, diff)


def agreement(published: float, value: float, spread: float, n: int, *, measure: bool = False,
              published_spread: float = float("nan"), published_n: int = 0) -> str:
    """The mark of one published number beside our ``n`` runs (mean ``value``, std ``spread``): agree when the
    standardised difference (:func:`standardised`, both sides' uncertainty where the published number has one) is
    at most 2 in size. Without two runs (or for one statistic over the runs, a measure) there is no spread to
    judge against, and a number the source does not print has nothing to judge.
    """
    if _nan(published):
        return GAP
    if not n or _nan(value):
        return NO_RUN
    if measure:
        return MEASURE
    if n < 2 or _nan(spread):
        return SINGLE
    _, z = standardised(published, value, spread, n, published_spread=published_spread, published_n=published_n)
    return AGREE if abs(z) <= AGREEMENT_STDS else DISAGREE


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float | np.floating) and math.isnan(x))


# -- the one number formatter -------------------------------------------------------------------------------------
def fmt_number(x: Any, digits: int = 3, *, signed: bool = False) -> str:
    """``x`` with ``digits`` decimals ('+' in front when ``signed``); '—' for a missing value."""
    if _nan(x):
        return "—"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def fmt_value(value: float, spread: float, n: int, digits: int = 3) -> str:
    """'0.123 ± 0.010' (just the value for one run or a statistic over the runs, '—' for none)."""
    if not n or _nan(value):
        return "—"
    if n == 1 or _nan(spread):
        return fmt_number(value, digits)
    return f"{fmt_number(value, digits)} ± {fmt_number(spread, digits)}"


def fmt_p(p: float | None) -> str:
    """A p-value: three decimals, two significant digits below 0.001; '—' when there is none."""
    if _nan(p):
        return "—"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def shrunk_note(shrunk: Shrunk | None) -> str:
    """The words a table or comparison of shrunk runs carries after the experiment's name (their kind's
    ``heading``: debug=smoke's)."""
    return f" ({shrunk.heading})" if shrunk is not None else ""


#: The limits that shrink a run (the other limits only refuse a plan too big), in words: limit -> its phrase.
SHRINKING_LIMITS = {"max_datasets": "at most {} datasets", "max_estimators": "at most {} trees per ensemble",
                    "max_folds": "{} folds of each k-fold partition"}


def shrunk_sizes(limits: Mapping[str, Any], seeds: int) -> str:
    """The sizes shrunk runs had, in words, from their ``limits`` and ``seeds``: '1 seed, at most 2 datasets, at
    most 10 trees per ensemble, 2 folds of each k-fold partition'."""
    words = [f"{seeds} seed{'s' if seeds != 1 else ''}"]
    words += [phrase.format(limits[key]) for key, phrase in SHRINKING_LIMITS.items() if limits.get(key) is not None]
    return ", ".join(words)


def shrunk_title(title: str, shrunk: Shrunk | None, sizes: str) -> str:
    """A table's or figure's title for shrunk runs: the configured title (which names the full experiment's sizes,
    "300 trees", "30 training sets") followed by the sizes these runs had, so no heading claims what was not run."""
    if shrunk is None:
        return title
    return f"{title} [{shrunk.label.upper()} RUNS: {sizes}; any size named before is the full experiment's]"


def shrunk_spec(spec: Mapping[str, Any], shrunk: Shrunk | None, limits: Mapping[str, Any],
                seeds: int) -> dict[str, Any]:
    """An experiment section (``res.spec``) whose table and figure titles say the shrunk sizes (:func:`shrunk_title`;
    the spec itself when the runs are not shrunk). Titles decide no run: plans and keys are unchanged."""
    if shrunk is None:
        return dict(spec)
    sizes = shrunk_sizes(limits, seeds)
    out = dict(spec)
    for key in ("tables", "figures"):
        items = []
        for item in spec.get(key) or []:
            if isinstance(item, Mapping):
                item = {**item, "title": shrunk_title(str(item.get("title") or item.get("name")), shrunk, sizes)}
            elif isinstance(item, (TableSpec, FigureSpec)):  # built with the experiment
                item = dataclasses.replace(item, title=shrunk_title(str(item.title or item.name), shrunk, sizes))
            items.append(item)
        if key in spec:
            out[key] = items
    return out


# -- the spec, read once ------------------------------------------------------------------------------------------
def cell_digits(table_digits: int, cell: CellSpec | Mapping[str, Any]) -> int:
    """A cell's precision: its own ``digits``, else one for a tree depth (``max_depth*``), else the table's."""
    cell = as_cell(cell)
    if cell.digits is not None:
        return int(cell.digits)
    return 1 if (cell.metric or "").startswith("max_depth") else table_digits


def published_key(cell: CellSpec | Mapping[str, Any]) -> tuple[str, str] | None:
    """The (algorithm, metric) a cell stands for in the published table: its own names, or its ``published_as`` /
    ``published_metric``; None for a curve cell (never compared)."""
    cell = as_cell(cell)
    what = cell.metric or cell.measure
    if what is None:
        return None
    return cell.published_as or cell.algorithm, cell.published_metric or what


@dataclass(frozen=True)
class Column:
    """One cell of a table spec: what it reads and how it is shown."""

    spec: CellSpec = field(compare=False)  # the cell as the experiment declared it (for the results' readers)
    index: int  # its place among the table's cells
    algorithm: str
    kind: str  # "metric", "measure" or "curve"
    quantity: str  # the metric, the measure, or the curve's name
    key: str  # the CSV name, "<algorithm> <metric>" (:func:`forestlab.results.cell_label`)
    name: str  # the cell's ``label``, else ``key``
    header: str  # the Markdown/LaTeX/site header: ``name``, "(optimistic ...)" when so, told apart from a twin
    digits: int
    optimistic: bool
    vs: str | None
    show_p: bool
    published: tuple[str, str] | None  # (algorithm, metric) in the published table
    role: str = "result"  # the cell's ``role``: result, hyperparameter or diagnostic
    scored: bool = True  # a reported result of a table that is scored: its published number counts in the score

    @property
    def metric(self) -> str | None:
        return self.quantity if self.kind == "metric" else None


@dataclass(frozen=True)
class Layout:
    """A table spec, read: its name, title, columns and options."""

    spec: TableSpec  # as the experiment declared it
    name: str
    title: str
    columns: tuple[Column, ...]
    digits: int
    alpha: float
    mark_best: tuple[str, ...]
    note: str
    published: str  # the published file ('' when none)
    pairs: tuple[tuple[str, str], ...]
    pair_metric: str
    datasets: tuple[str, ...]  # the datasets it shows (() : all of the experiment's)
    scored: bool = True  # False: another reading of a published table, never counted in the score


def read_layout(spec: TableSpec | Mapping[str, Any], optimistic: Sequence[str] = ()) -> Layout:
    """The one reader of a table spec. ``optimistic``: the algorithms that chose their hyperparameters on the test
    set (their headers say so). A hand-built mapping is read as a :class:`TableSpec` first."""
    spec = make_table(spec, "table", Context())
    columns: list[Column] = []
    headers: set[str] = set()
    for index, cell in enumerate(spec.cells):
        kind = "metric" if cell.metric is not None else "measure" if cell.measure is not None else "curve"
        key = cell.column
        name = cell.label or key
        opt = cell.algorithm in set(optimistic)
        header = name + (" (optimistic: chosen on the test set)" if opt else "")
        if header in headers:  # two cells with one label: keep both columns, told apart by what they hold
            header = f"{header} [{key}]"
        headers.add(header)
        columns.append(Column(
            spec=cell, index=index, algorithm=cell.algorithm, kind=kind,
            quantity=str(cell.metric or cell.measure or cell.curve), key=key, name=name,
            header=header, digits=cell_digits(spec.digits, cell), optimistic=opt,
            vs=cell.vs if cell.vs and kind == "metric" else None, show_p=bool(cell.show_p),
            published=published_key(cell), role=cell.role, scored=cell.scored and spec.scored))
    return Layout(spec=spec, name=spec.name, title=spec.title or spec.name, columns=tuple(columns),
                  digits=spec.digits, alpha=spec.alpha, mark_best=spec.mark_best, note=spec.note or "",
                  published=spec.published or "", pairs=spec.pairs, pair_metric=spec.pair_metric,
                  datasets=spec.datasets, scored=spec.scored)


def optimistic_algorithms(res: ExperimentResults) -> set[str]:
    """Algorithms whose hyperparameters were chosen on the test set (the studies' optimistic selection)."""
    return {str(a) for a in res.spec.get("optimistic_algorithms") or []}


# -- the rows -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One number of a row: our value over the runs, how it compares with its ``vs`` algorithm, and its marks."""

    column: Column
    value: float
    spread: float  # sample std over the runs (NaN for a statistic over the runs)
    n: int  # the runs it draws on
    vs_diff: float = float("nan")
    vs_p: float = float("nan")
    significant: bool = False
    best: bool = False

    @property
    def digits(self) -> int:
        return self.column.digits

    @property
    def value_text(self) -> str:
        """'0.123 ± 0.010' at the column's digits, without marks."""
        return fmt_value(self.value, self.spread, self.n, self.digits)

    @property
    def text(self) -> str:
        """The cell as the tables show it: '▸' when best of its row, '*' when significantly unlike its ``vs``."""
        return (BEST if self.best else "") + self.value_text + (SIGNIFICANT if self.significant else "")

    @property
    def shown(self) -> float:
        """The value rounded as it is shown (what the best-of-row mark compares)."""
        return float("nan") if not self.n or _nan(self.value) else round(self.value, self.digits)


@dataclass(frozen=True)
class Row:
    """One dataset of a table."""

    dataset: str
    done: int
    planned: int
    cells: tuple[Cell, ...]

    @property
    def runs(self) -> str:
        return f"{self.done}/{self.planned}"


def _cell(res: ExperimentResults, column: Column, dataset: str, alpha: float) -> Cell:
    if column.kind == "measure":
        return Cell(column, measure_value(res, column.spec, dataset), float("nan"),
                    len(res.run_keys(column.algorithm, dataset)))
    value, spread, n = summarise(res.cell_values(column.spec, dataset))
    if column.vs is None:
        return Cell(column, value, spread, n)
    a, b = paired_values(res, column.algorithm, column.vs, column.quantity, dataset)
    test = paired_t_test(a, b)
    return Cell(column, value, spread, n, vs_diff=test.mean_diff, vs_p=test.p,
                significant=bool(test.p == test.p and test.p < alpha))


def rows(res: ExperimentResults, layout: Layout) -> tuple[Row, ...]:
    """One row per planned dataset of ``res`` (a view restricted to the table's datasets): each cell's value, spread
    and count, its paired test and its best-of-row mark.

    Raises
    ------
    ConfigError
        If a cell names an algorithm the experiment does not run or a value none of its runs stored.
    """
    for i, column in enumerate(layout.columns):
        res.check_stored(column.algorithm, column.metric, f"table '{layout.name}', cell {i + 1}")
    out = []
    for dataset in res.datasets:
        planned = res.planned[res.planned["dataset"] == dataset]
        done = res.runs[res.runs["dataset"] == dataset]
        cells = tuple(_cell(res, column, dataset, layout.alpha) for column in layout.columns)
        # by key: a study's after-the-fact choice (experiment.choices) repeats runs under another name
        out.append(Row(dataset, int(done["key"].nunique()), int(planned["key"].nunique()),
                       _mark_best(layout, cells)))
    return tuple(out)


def _mark_best(layout: Layout, cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """``mark_best: <metric>``: in a row, the best value among the cells of that metric, rounded as shown, in the
    metric's direction (lower risk, higher AUC); ties are all marked; a metric of fewer than two cells marks none."""
    best = [False] * len(cells)
    for metric in layout.mark_best:
        up = higher_is_better(metric)
        idx = [i for i, c in enumerate(cells) if c.column.metric == metric]
        shown = [cells[i].shown for i in idx if not math.isnan(cells[i].shown)]
        if len(idx) < 2 or not shown:
            continue
        top = max(shown) if up else min(shown)
        for i in idx:
            if cells[i].shown == top:
                best[i] = True
    return tuple(Cell(c.column, c.value, c.spread, c.n, c.vs_diff, c.vs_p, c.significant, b)
                 for c, b in zip(cells, best, strict=True))


# -- published beside reproduced ---------------------------------------------------------------------------------
def read_published(study: str | None, filename: str) -> pd.DataFrame:
    """A published table of ``study`` in long form: columns dataset, algorithm, metric, value (std, note)."""
    if not study:
        raise ConfigError(f"a table names the published file '{filename}' but its experiment has no study")
    return get_study(study).read_published(filename)


@dataclass(frozen=True)
class Comparison:
    """One published number beside our runs of the same dataset, algorithm and metric (the published names)."""

    dataset: str
    algorithm: str
    metric: str
    column: Column
    published: float  # NaN: the source prints no value here
    published_spread: float  # the study's own std, when it prints one
    note: str
    value: float
    spread: float
    n: int
    published_n: int = 0  # the runs the published number is over (0: one split, or not said)

    @property
    def digits(self) -> int:
        return self.column.digits

    @property
    def diff(self) -> float:
        """Reproduced - published (NaN when either is missing)."""
        return self.value - self.published if self.n else float("nan")

    @property
    def scored(self) -> bool:
        """Whether this is a primary cell: one of the study's reported results (not a hyperparameter or a
        diagnostic, not another reading of the table), counted in the reproduction score."""
        return self.column.scored

    @property
    def role(self) -> str:
        return self.column.role

    @property
    def method(self) -> str:
        """How it is judged (:func:`standardised`): "two-sample", "binomial" or "single split vs our spread"; ''
        for a number that is not judged (a statistic over the runs, a gap)."""
        if self.column.kind == "measure" or _nan(self.published):
            return ""
        return standardised(self.published, self.value, self.spread, self.n,
                            published_spread=self.published_spread, published_n=self.published_n)[0]

    @property
    def z(self) -> float:
        """The standardised difference: ``diff`` in standard errors of the difference, by :attr:`method` (what
        :func:`agreement` reads; NaN when not judged)."""
        if self.mark not in (AGREE, DISAGREE):
            return float("nan")
        return standardised(self.published, self.value, self.spread, self.n,
                            published_spread=self.published_spread, published_n=self.published_n)[1]

    @property
    def z_text(self) -> str:
        """'+2.45' ('—' when not judged)."""
        return fmt_number(self.z, 2, signed=True)

    @property
    def mark(self) -> str:
        return agreement(self.published, self.value, self.spread, self.n, measure=self.column.kind == "measure",
                         published_spread=self.published_spread, published_n=self.published_n)

    @property
    def symbol(self) -> str:
        return MARKS[self.mark][0]

    @property
    def meaning(self) -> str:
        return MARKS[self.mark][1]

    @property
    def published_text(self) -> str:
        """'0.700', with the study's own spread when it prints one ('0.700 ± 0.010'); 'not printed' for a gap."""
        if self.mark == GAP:
            return "not printed"
        text = fmt_number(self.published, self.digits) + (
            "" if _nan(self.published_spread) else f" ± {fmt_number(self.published_spread, self.digits)}")
        return text + (f" (n = {self.published_n})" if self.published_n else "")

    @property
    def value_text(self) -> str:
        return fmt_value(self.value, self.spread, self.n, self.digits)

    @property
    def diff_text(self) -> str:
        return fmt_number(self.diff, self.digits, signed=True)

    @property
    def mark_text(self) -> str:
        """'✓ agree': the symbol and the word of the mark."""
        return f"{self.symbol} {self.mark}"


def _number(x: Any) -> float:
    v = pd.to_numeric(pd.Series([x]), errors="coerce").iloc[0]
    return float("nan") if pd.isna(v) else float(v)


def comparisons(res: ExperimentResults, layout: Layout, table_rows: Sequence[Row] | None = None,
                datasets: Sequence[str] = ()) -> tuple[Comparison, ...]:
    """One entry per published number of the table's file that the table reproduces (same dataset, algorithm and
    metric, published names), in the file's order: with our values from ``table_rows`` (the table's rows, built
    once), on the datasets of the rows; without rows (nothing planned yet), the published cells of ``datasets``
    with no run. Two cells standing for one published number: the last one is compared."""
    if not layout.published:
        return ()
    published = read_published(res.study, layout.published)
    columns = {c.published: c for c in layout.columns if c.published is not None}
    by_dataset = {r.dataset: r for r in table_rows or ()}
    shown = set(by_dataset) if table_rows is not None else {str(d) for d in datasets}
    out = []
    for p in published.to_dict("records"):
        key = (str(p["algorithm"]), str(p["metric"]))
        dataset = str(p["dataset"])
        if key not in columns or dataset not in shown:
            continue
        column = columns[key]
        row = by_dataset.get(dataset)
        cell = row.cells[column.index] if row is not None else None
        note = p.get("note")
        pub_n = _number(p["n"]) if "n" in p else float("nan")
        out.append(Comparison(
            dataset=dataset, algorithm=key[0], metric=key[1], column=column, published=_number(p["value"]),
            published_spread=_number(p["std"]) if "std" in p else float("nan"),
            note="" if note is None or pd.isna(note) else str(note),
            value=cell.value if cell else float("nan"), spread=cell.spread if cell else float("nan"),
            n=cell.n if cell else 0, published_n=0 if _nan(pub_n) else int(pub_n)))
    return tuple(out)


@dataclass
class Agreement:
    """Counts of the primary published numbers (:attr:`Comparison.scored`) by mark, and of the others (the
    hyperparameters, diagnostics and other readings shown beside them, never scored) by mark too."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MARKS, 0))
    unscored: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MARKS, 0))

    @classmethod
    def of(cls, comps: Sequence[Comparison]) -> Agreement:
        out = cls()
        for c in comps:
            (out.counts if c.scored else out.unscored)[c.mark] += 1
        return out

    def add(self, other: Agreement) -> None:
        for k, v in other.counts.items():
            self.counts[k] += v
        for k, v in other.unscored.items():
            self.unscored[k] += v

    @property
    def share(self) -> float:
        """The share of the judged primary cells that agree (NaN when none is judged)."""
        return self.counts[AGREE] / self.judged if self.judged else float("nan")

    @property
    def unscored_total(self) -> int:
        return sum(self.unscored.values())

    def unscored_text(self) -> str:
        """'54 hyperparameter/diagnostic cells shown unscored (20 of 40 agree)' ('' when none)."""
        total = self.unscored_total
        if not total:
            return ""
        judged = self.unscored[AGREE] + self.unscored[DISAGREE]
        return (f"{total} hyperparameter, diagnostic or other-reading cells shown, unscored"
                + (f" ({self.unscored[AGREE]} of {judged} agree)" if judged else ""))

    @property
    def judged(self) -> int:
        return self.counts[AGREE] + self.counts[DISAGREE]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, *, unscored: bool = True) -> str:
        """'5 of 6 primary cells agree, 83% (1 not printed); 4 hyperparameter, ... cells shown, unscored'."""
        if not self.total and not self.unscored_total:
            return "no published table"
        rest = [f"{self.counts[k]} {label}" for k, label in
                ((SINGLE, "single-run"), (MEASURE, "statistics over runs"), (NO_RUN, "not run"),
                 (GAP, "not printed")) if self.counts[k]]
        head = (f"{self.counts[AGREE]} of {self.judged} primary cells agree, {100 * self.share:.0f}%"
                if self.judged else "no primary cell judged yet")
        text = head + (f" ({', '.join(rest)})" if rest else "")
        more = self.unscored_text() if unscored else ""
        return text + (f"; {more}" if more else "")


# -- the model of one table ------------------------------------------------------------------------------------------
class TableFacts:
    """What every view of a table says of itself, from its ``layout`` and ``comparisons`` (the model here, the site's
    view of it)."""

    layout: Layout
    comparisons: tuple[Comparison, ...]

    @property
    def name(self) -> str:
        return self.layout.name

    @property
    def title(self) -> str:
        return self.layout.title

    @property
    def agreement(self) -> Agreement:
        return Agreement.of(self.comparisons)


@dataclass(frozen=True)
class TableModel(TableFacts):
    """One table, built once: its layout, rows, published numbers beside them, and what its notes say."""

    layout: Layout
    experiment: str
    rows: tuple[Row, ...]
    comparisons: tuple[Comparison, ...]
    left_out: str  # a sentence naming the datasets its plan left out ('' when none)
    shrunk: Shrunk | None  # the kind of shrunk run its runs are (debug=smoke), None for real runs


    def note(self) -> str:
        """What the cells and marks of the table mean (the sentence under its title)."""
        layout = self.layout
        note = "cells are mean ± std over seeds or folds"
        if any(c.kind == "measure" for c in layout.columns):
            note += "; a measure (e.g. instability) is one statistic over all the runs of its cell"
        if any(c.vs for c in layout.columns):
            note += (f"; {SIGNIFICANT} = significant difference (paired two-sided t-test over the splits, "
                     f"alpha = {layout.alpha:g}) from the algorithm named in the cell's `vs`")
        for metric in layout.mark_best:
            note += (f"; {BEST} = best {metric} of the row "
                     f"({'higher' if higher_is_better(metric) else 'lower'} is better)")
        if any(c.optimistic for c in layout.columns):
            note += ("; OPTIMISTIC cells chose their hyperparameters on the test set, as the study did: they "
                     "overstate what the method would do on new data")
        if layout.note:
            note += f". {layout.note}"
        if self.left_out:
            note += f". {self.left_out}"
        return note

    def frame(self) -> pd.DataFrame:
        """The numbers, one row per dataset: per cell its mean, std and n (and its ``vs`` test): the CSV."""
        columns = ["dataset", "runs"]
        for c in self.layout.columns:
            columns += [f"{c.key} mean", f"{c.key} std", f"{c.key} n"]
            if c.vs:
                columns += [f"{c.key} vs {c.vs} diff", f"{c.key} vs {c.vs} p"]
        records = []
        for r in self.rows:
            rec: dict[str, Any] = {"dataset": r.dataset, "runs": r.runs}
            for cell in r.cells:
                c = cell.column
                rec[f"{c.key} mean"], rec[f"{c.key} std"], rec[f"{c.key} n"] = cell.value, cell.spread, cell.n
                if c.vs:
                    rec[f"{c.key} vs {c.vs} diff"], rec[f"{c.key} vs {c.vs} p"] = cell.vs_diff, cell.vs_p
            records.append(rec)
        return pd.DataFrame(records, columns=list(dict.fromkeys(columns)))  # the columns even without a row

    def display(self) -> pd.DataFrame:
        """The table as shown (Markdown, LaTeX, the site): one text per cell, its marks, the runs done."""
        out: dict[str, list[str]] = {"dataset": [r.dataset for r in self.rows]}
        for i, c in enumerate(self.layout.columns):
            out[c.header] = [r.cells[i].text for r in self.rows]
            if c.vs and c.show_p:
                out[f"p ({c.header} vs {c.vs})"] = [fmt_p(r.cells[i].vs_p) for r in self.rows]
        out["runs"] = [r.runs for r in self.rows]
        return pd.DataFrame(out)

    def comparison_frame(self) -> pd.DataFrame:
        """Published vs reproduced, one row per published number: the numbers, its mark and its note (a CSV)."""
        return comparison_frame(self.comparisons)


COMPARISON_COLUMNS = ["dataset", "algorithm", "metric", "published", "published_std", "published_n", "reproduced",
                      "std", "n", "diff", "z", "method", "mark", "scored", "note"]


def comparison_frame(comps: Sequence[Comparison]) -> pd.DataFrame:
    """The numbers of :class:`Comparison` entries as a frame (the ``*_compare.csv``)."""
    return pd.DataFrame([{"dataset": c.dataset, "algorithm": c.algorithm, "metric": c.metric,
                          "published": c.published, "published_std": c.published_spread,
                          "published_n": c.published_n or None, "reproduced": c.value, "std": c.spread, "n": c.n,
                          "diff": c.diff, "z": c.z, "method": c.method, "mark": c.mark, "scored": c.scored,
                          "note": c.note}
                         for c in comps], columns=COMPARISON_COLUMNS)


def build_model(res: ExperimentResults, spec: TableSpec | Mapping[str, Any], datasets: Sequence[str] = (), *,
                with_published: bool = True) -> TableModel:
    """The model of one table of ``res`` (a view restricted to the table, :meth:`ExperimentResults.restricted_to`):
    its rows, and, ``with_published``, the published numbers beside them when it names a published file
    (``datasets``: the published cells to list when nothing is planned yet)."""
    layout = read_layout(spec, sorted(optimistic_algorithms(res)))
    table_rows = rows(res, layout) if res.algorithms else None  # None: nothing planned yet
    comps = comparisons(res, layout, table_rows, datasets) if with_published else ()
    return TableModel(layout=layout, experiment=res.name, rows=table_rows or (), comparisons=comps,
                      left_out=res.left_out_note(), shrunk=res.shrunk)
