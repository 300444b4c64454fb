"""The reproduction report: a static site (``<reports_dir>/report/index.html``) built from the store and the
experiments' configs.

The index has one line per registered study (and one for the experiments without a study, when any has runs): how
many of the published result cells our runs reproduce (within 2 standard errors), how many distinct claims hold, do
not hold or are inconclusive, the runs done and planned, and the compute they took. Each study's page has, per
experiment and table, the reproduced values (headers in words with the metric's direction, CSV and LaTeX files
beside them, each dataset's rows, features, classes and split sizes, and a page of each run's values behind each
row: :mod:`forestlab.report.site_tables`), the published ones beside them with the difference, its standardised size
and a mark of agreement per cell (each distinct footnote once), the head-to-head tests as a small table, and for a
table comparing several learners on several datasets the Friedman test with the average ranks, and a
critical-difference diagram from :data:`~forestlab.report.critical_difference.MIN_DATASETS_DIAGRAM` datasets on
(Demšar 2006); each figure beside the README's description of it; each claim with its statement, test, verdict and
evidence; the protocol choices and ambiguities from the study's README; and provenance: what produced the page and
the command that reruns each table. Experiments come in the study's order (Table 7.1, 7.2, ...), every table, figure
and claim has a visible permalink, and an experiment that never ran is one short box with its command.

The report only reads: runs, their values and arrays from the store, the figures ``forestlab figures`` drew, the
published tables and the READMEs. It never plans, loads a dataset or refits, and it names no study: whatever study
the registry and ``conf/experiment/`` hold is covered. The site fetches nothing: its stylesheet and its one script
(``sort.js``: click a column header to sort a table; progressive enhancement, the pages read the same without it)
ship with the package (``forestlab/report/assets/``) and every link is relative, so it opens from the file system or
behind any static web server. Nothing missing breaks it: an experiment without runs, a published value the source
does not print, a figure not drawn yet each get a placeholder saying what to run.
"""

from __future__ import annotations

import html
import logging
import os
import re
import shlex
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from forestlab._version import __version__
from forestlab.config import (
    cached_experiment,
    conf_dir,
    experiments_dir,
    inputs_signature,
    is_registered,
    list_options,
    resolve_path,
    shrunk_kind,
)
from forestlab.errors import ConfigError, ForestlabError, StoreError
from forestlab.experiment import Experiment
from forestlab.report import critical_difference as cdm
from forestlab.report import experiment_results, kept, output_dir, readme
from forestlab.report import provenance as prov
from forestlab.report import site_tables as st
from forestlab.report.figures import read_caption
from forestlab.report.model import (
    BEST,
    MARKS,
    METHODS,
    SIGNIFICANT,
    VERDICTS,
    Agreement,
    Comparison,
    Layout,
    Row,
    TableFacts,
    TableModel,
    comparison_frame,
    comparisons,
    fmt_number,
    fmt_p,
    optimistic_algorithms,
    read_layout,
    rows,
)
from forestlab.report.pvr import PvrPlot, study_pvr
from forestlab.results import ExperimentResults
from forestlab.spec import FigureSpec, Shrunk, TableSpec, figure_kinds
from forestlab.stats import pair_table
from forestlab.store import Store
from forestlab.studies import STUDIES, find_claim, judge_all_cached

__all__ = ["build_site", "site_dir"]

log = logging.getLogger("forestlab")

ASSETS = Path(__file__).with_name("assets")
OTHER = "other"  # the page of the experiments without a study
YOURS = "yours"  # the page of the experiments of your own (experiment.name=: a study's protocol on your data)
NOT_TESTED_VERDICT = VERDICTS[-1]
SPLIT = "JUDGED DIFFERENTLY"  # a claim the experiments sharing it judge differently (counted once, under this)


esc = st.esc
_slug = st.slug


# ---------------------------------------------------------------------------------------------------------------
# What the pages show, gathered from the store
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class FriedmanView:
    """One Friedman/Nemenyi comparison of a table: its result and diagram, or why there is none."""

    comparison: cdm.Comparison
    result: cdm.FriedmanResult | None = None
    image: str | None = None  # path relative to the site root
    reason: str = ""


@dataclass
class TableView(TableFacts):
    """One table of an experiment (:mod:`forestlab.report.model`): reproduced (as `forestlab tables` shows it),
    published beside it, the paired tests and the comparisons across datasets; each part that cannot be built says
    why instead."""

    layout: Layout
    reproduced: pd.DataFrame | None = None
    reproduced_error: str = ""
    comparisons: tuple[Comparison, ...] = ()
    comparison_error: str = ""
    pairs: list[tuple[Any, pd.DataFrame]] = field(default_factory=list)
    pairs_error: str = ""
    friedman: list[FriedmanView] = field(default_factory=list)
    left_out: str = ""  # the datasets it names that these runs' plan left out (debug=smoke), as a sentence
    headers: dict[str, str] = field(default_factory=dict)  # shown header -> in words, with the metric's direction
    note: str = ""  # what its cells and marks mean (:meth:`TableModel.note`)
    downloads: dict[str, str] = field(default_factory=dict)  # csv, tex, compare_csv, compare_tex: site paths
    runs_page: str | None = None  # the page of each run's values (site path)
    facts: pd.DataFrame | None = None  # rows, features, classes, split sizes of its datasets


@dataclass
class FigureView:
    """One figure: where its copy in the site is (None: not drawn yet) and the description of the original."""

    spec: FigureSpec
    image: str | None  # relative to the site root
    pdf: str | None
    drawn_at: float | None
    original_title: str  # HTML
    original_html: str
    caption: str = ""  # what its bands, error bars and marks are, as its drawing wrote it beside the PNG (plain text)


@dataclass
class ClaimView:
    """One claim as judged on the experiment's runs."""

    name: str
    verdict: str
    claim: str = ""
    test: str = ""
    evidence: str = ""


@dataclass
class ExperimentView:
    """Everything the report shows about one experiment, with the results it was read from."""

    exp: Experiment
    res: ExperimentResults
    overrides: list[str]
    runs: prov.RunsProvenance
    config_hash: str
    commands: prov.Commands
    tables: list[TableView] = field(default_factory=list)
    figures: list[FigureView] = field(default_factory=list)
    claims: list[ClaimView] = field(default_factory=list)
    claims_error: str = ""
    other_plans: list[str] = field(default_factory=list)  # the store's other configurations of it, described

    @property
    def name(self) -> str:
        return str(self.exp.name)

    @property
    def has_plan(self) -> bool:
        return bool(self.res.counts.get("planned"))

    @property
    def done(self) -> int:
        return int(self.res.counts.get("done", 0))

    @property
    def agreement(self) -> Agreement:
        out = Agreement()
        for t in self.tables:
            out.add(t.agreement)
        return out

    def verdicts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        for c in self.claims:
            out[c.verdict if c.verdict in out else "NOT TESTED"] += 1
        return out


@dataclass(frozen=True)
class ExperimentPart:
    """One experiment as the pages need it, rendered: what the index and its study's page count, its section of
    HTML and its entry in the page's contents (plain values: the results it was read from are let go). An
    experiment whose config cannot be resolved (a dataset or learner still being written, say) has only its name,
    study and ``error``: it is shown with its error, never a reason to stop the report; so is one whose section
    could not be built (``built`` False: something in its tables, figures or claims failed unforeseen)."""

    name: str
    study: str | None
    has_plan: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    runs: prov.RunsProvenance = field(default_factory=lambda: prov.RunsProvenance({}, None, None))
    config_hash: str = ""
    agreement: Agreement = field(default_factory=Agreement)
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    claims: dict[str, str] = field(default_factory=dict)  # claim name -> its verdict on these runs
    planned_full: int = 0  # the runs its configuration plans (computed from the resolved experiment, nothing stored)
    compute_seconds: float = 0.0  # the sum of its stored runs' recorded times (fit and evaluation)
    html: str = ""
    toc: str = ""
    error: str = ""
    built: bool = True  # False: it resolved, but building its section failed (``error`` says how)
    comparisons: tuple[Comparison, ...] = ()  # its tables' published cells: its study's published-vs-reproduced plot


@dataclass
class StudyView:
    """One page of the site: a registered study (or the experiments without one) and its experiments."""

    key: str
    title: str
    readme: Path | None
    parts: list[ExperimentPart]
    pvr: PvrPlot | None = None  # its published-vs-reproduced plot, drawn by build_site (see pvr_html)

    @property
    def experiments(self) -> list[ExperimentPart]:
        """The experiments that resolved."""
        return [p for p in self.parts if not p.error]

    @property
    def broken(self) -> list[ExperimentPart]:
        return [p for p in self.parts if p.error]

    @property
    def page(self) -> str:
        return f"{_slug(self.key)}.html"

    @property
    def agreement(self) -> Agreement:
        out = Agreement()
        for e in self.experiments:
            out.add(e.agreement)
        return out

    def claim_verdicts(self) -> dict[str, tuple[str, ...]]:
        """Each distinct claim (by name) of the study's experiments -> the verdicts they reach on it (one verdict
        when they agree; NOT TESTED only when none of them tested it)."""
        seen: dict[str, list[str]] = {}
        for e in self.experiments:
            for name, verdict in e.claims.items():
                seen.setdefault(name, []).append(verdict if verdict in VERDICTS else NOT_TESTED_VERDICT)
        out = {}
        for name, verdicts in seen.items():
            tested = [v for v in VERDICTS if v in verdicts and v != NOT_TESTED_VERDICT]
            out[name] = tuple(tested) or (NOT_TESTED_VERDICT,)
        return out

    def verdicts(self) -> dict[str, int]:
        """Distinct claims by verdict: a claim several experiments judge is counted once (under its verdict when
        they agree, under :data:`SPLIT` when they do not)."""
        out = dict.fromkeys(VERDICTS, 0)
        out[SPLIT] = 0
        for verdicts in self.claim_verdicts().values():
            out[verdicts[0] if len(verdicts) == 1 else SPLIT] += 1
        return out

    def split_claims(self) -> list[str]:
        """The claims the experiments sharing them judge differently, as 'name (HOLDS in a, b; ...)'."""
        out = []
        for name, verdicts in self.claim_verdicts().items():
            if len(verdicts) > 1:
                where = "; ".join(f"{v} in {', '.join(e.name for e in self.experiments if e.claims.get(name) == v)}"
                                  for v in verdicts)
                out.append(f"{name} ({where})")
        return out

    def counts(self) -> dict[str, int]:
        out = {"planned": 0, "done": 0, "failed": 0, "pending": 0}
        for e in self.experiments:
            for k in out:
                out[k] += int(e.counts.get(k, 0))
        out["planned_full"] = sum(max(e.planned_full, int(e.counts.get("planned", 0))) for e in self.experiments)
        return out

    @property
    def compute_seconds(self) -> float:
        return sum(e.compute_seconds for e in self.experiments)

    @property
    def last_run(self) -> float | None:
        stamps = [e.runs.last for e in self.experiments if e.runs.last is not None]
        return max(stamps) if stamps else None


def _error_text(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ForestlabError) else f"{type(exc).__name__}: {exc}"


def _table_view(res: ExperimentResults, spec: TableSpec, site: Path, exp_dir: str,
                datasets: Sequence[str], configs: Mapping[str, Mapping[str, Any]] | None = None) -> TableView:
    layout = read_layout(spec, sorted(optimistic_algorithms(res)))
    view = TableView(layout, left_out=res.left_out_note(), headers=st.header_words(layout))
    table_rows: tuple[Row, ...] | None = None
    model: TableModel | None = None
    try:
        table_rows = rows(res, layout) if res.algorithms else None
    except Exception as exc:  # a report never crashes on one table: it says what went wrong in its place
        view.reproduced_error = _error_text(exc)
    if res.counts.get("done") and table_rows is not None:
        model = TableModel(layout, res.name, table_rows, (), view.left_out, res.shrunk)
        view.reproduced = model.display()
        view.note = model.note()
    if layout.published:
        try:
            if view.reproduced_error:
                raise ForestlabError(view.reproduced_error)
            view.comparisons = comparisons(res, layout, table_rows, datasets)
        except Exception as exc:
            view.comparison_error = _error_text(exc)
    if res.counts.get("done"):
        try:  # the files beside the table, each run's values, its datasets: extras, never a reason to fail it
            view.downloads = st.table_downloads(site, exp_dir, view.name, model, view.comparisons, view.headers)
            back = f"{_slug(res.study) if res.study in STUDIES else OTHER}.html#{_slug(res.name)}--{_slug(view.name)}"
            view.runs_page = st.runs_page(site, exp_dir, view.name, view.title, res, layout, view.headers, back)
            view.facts = st.dataset_facts(res, configs or {}, res.study, res.datasets)
        except Exception as exc:
            log.warning("report: the extras of table %s could not be built: %s", view.name, _error_text(exc))
        _pairs(view, res)
        _friedman(view, res, site, exp_dir)
    return view


def comparison_rows(res: ExperimentResults, spec: TableSpec | Mapping[str, Any],
                    datasets: Sequence[str] = ()) -> pd.DataFrame:
    """Published vs reproduced, one row per published number of the table (the plan's datasets, or, when nothing
    is planned, the published cells of ``datasets`` with no run), as a frame
    (:func:`forestlab.report.model.comparison_frame`)."""
    layout = read_layout(spec)
    return comparison_frame(comparisons(res, layout, rows(res, layout) if res.algorithms else None, datasets))


def _pairs(view: TableView, res: ExperimentResults) -> None:
    metric, alpha = view.layout.pair_metric, view.layout.alpha
    try:
        for a, b in view.layout.pairs:
            table, summary = pair_table(res, a, b, metric, digits=view.layout.digits, alpha=alpha)
            view.pairs.append((summary, table))
    except Exception as exc:
        view.pairs_error = _error_text(exc)


def _friedman(view: TableView, res: ExperimentResults, site: Path, exp_dir: str) -> None:
    alpha = view.layout.alpha
    for comp in cdm.comparisons(view.layout.spec):
        fv = FriedmanView(comp)
        view.friedman.append(fv)
        try:
            scores = cdm.score_matrix(res, comp)
            fv.result = cdm.friedman_nemenyi(scores, comp.metric, alpha=alpha)
            if fv.result is None:
                complete = int(scores.dropna(axis=0, how="any").shape[0])
                fv.reason = (f"{complete} dataset(s) with a value for all {len(comp.algorithms)} learners: the "
                             f"Friedman test needs at least {cdm.MIN_DATASETS}")
                continue
            if fv.result.n_datasets < cdm.MIN_DATASETS_DIAGRAM:  # see MIN_DATASETS_DIAGRAM for why
                fv.reason = (f"no critical-difference diagram: {fv.result.n_datasets} dataset(s), and Demšar (2006) "
                             "trusts the Friedman/Nemenyi approximation only from about "
                             f"{cdm.MIN_DATASETS_DIAGRAM} datasets: read the average ranks below as a description, "
                             "not a test")
                continue
            rel = f"cd/{exp_dir}/{_slug(view.name)}-{_slug(comp.metric)}.png"
            cdm.draw_cd_diagram(fv.result, site / rel)
            fv.image = rel
        except Exception as exc:
            fv.reason = _error_text(exc)


def _figure_view(exp: Experiment, res: ExperimentResults, spec: FigureSpec, site: Path, exp_dir: str,
                 study_readme: Path | None) -> FigureView:
    name = spec.name
    src = output_dir(exp, "figures")
    image = pdf = None
    drawn_at = None
    caption = ""
    png = src / f"{name}.png"
    if png.is_file():
        rel = f"figures/{exp_dir}/{_slug(name)}.png"
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, site / rel)
        image, drawn_at, caption = rel, png.stat().st_mtime, read_caption(png)
        if (src / f"{name}.pdf").is_file():
            pdf = f"figures/{exp_dir}/{_slug(name)}.pdf"
            shutil.copyfile(src / f"{name}.pdf", site / pdf)
    original = spec.original
    if isinstance(original, str) and original.strip():
        title, body = "The original, as the experiment's config describes it", readme.to_html(original)
    else:
        sec = readme.figure_section(study_readme, exp.name, name) if study_readme else None
        if sec is not None:
            title = f"From the study's README: {readme.inline_html(sec.title)}"
            body = readme.to_html(sec.markdown, shift=max(0, 4 - sec.level))
        elif res.study:
            title = "The original"
            body = (f"<p>Neither the figure's config nor <code>experiments/{esc(res.study)}/README.md</code> "
                    f"describes the original (no section of the README's account of the published work names "
                    f"<code>{esc(name)}</code> or <code>{esc(exp.name)}</code>). The experiment: "
                    f"{esc(exp.description or exp.name)}.</p>")
        else:
            title = "No original"
            body = (f"<p>This experiment belongs to no study, so no published figure stands beside it. The "
                    f"experiment: {esc(exp.description or exp.name)}.</p>")
    return FigureView(spec, image, pdf, drawn_at, title, body, caption)


def _claims(view: ExperimentView) -> None:
    names = view.res.claims()
    if not names:
        return
    if not view.done:
        view.claims = [ClaimView(n, "NOT TESTED", *_claim_statement(n, view.res),
                                 evidence="no run stored for this configuration yet") for n in names]
        return
    try:
        for j in judge_all_cached(names, view.res):
            r = j.result
            view.claims.append(ClaimView(j.name, j.verdict, r.claim, r.test, r.evidence))
    except Exception as exc:
        view.claims_error = _error_text(exc)
        view.claims = [ClaimView(n, "NOT TESTED", *_claim_statement(n, view.res),
                                 evidence="could not be judged (see above)") for n in names]


def _claim_statement(name: str, res: ExperimentResults) -> tuple[str, str]:
    """The statement of claim ``name`` and its test, in words, as its function says them on ``res`` without the
    runs it needs (every claim states itself before it looks at runs; its verdict is not used): ('', '') when the
    claim cannot say them without runs."""
    try:
        _, func = find_claim(name)
        out = func(replace(res, sibling_loader=None))
        return str(out.claim or ""), str(out.test or "")
    except Exception:  # a claim that needs its runs to speak: shown by its name
        return "", ""


def experiment_view(exp: Experiment, overrides: Sequence[str], site: Path,
                    shared: dict[str, dict[Any, Any]] | None = None) -> ExperimentView:
    """Everything the report shows about one experiment (its tables' CD diagrams and its figures are written
    under ``site``). ``shared`` holds what the experiments of one report read alike: stored arrays by run key (a
    run's key decides them, and experiments share runs: Figs 4.1 and 4.2 read the same 600) and the other
    experiments that claims combine (Tables 7.1-7.3 each read the two others)."""
    res = experiment_results(exp)
    if shared is not None:
        res = replace(res, _arrays=shared.setdefault("arrays", {}),
                      sibling_loader=_shared_siblings(res.sibling_loader, shared.setdefault("siblings", {}), exp))
    ov = list(overrides)
    view = ExperimentView(exp=exp, res=res, overrides=ov, runs=prov.runs_provenance(res, exp.plan_id),
                          config_hash=prov.config_hash(exp), commands=_commands(exp, ov))
    exp_dir = _slug(exp.name if exp.shrunk is None else f"{exp.name}-{exp.shrunk.label}")
    for spec in res.tables():
        try:
            table_res = res.restricted_to(spec)
        except ForestlabError as exc:  # a table naming a dataset the experiment does not have: said in its place
            view.tables.append(TableView(read_layout(spec), reproduced_error=str(exc)))
            continue
        shown = [d for d in read_layout(spec).datasets or [str(d.name) for d in exp.datasets]
                 if d not in table_res.left_out]
        view.tables.append(_table_view(table_res, spec, site, exp_dir, shown,
                                       {str(d.name): d.cfg for d in exp.datasets}))
    study_readme = _readme_path(exp.study) if exp.study in STUDIES else None
    for spec in res.figures():
        view.figures.append(_figure_view(exp, res, spec, site, exp_dir, study_readme))
    _claims(view)
    if not view.has_plan:
        view.other_plans = _other_plans(res, exp)
    return view


def _shared_siblings(loader: Callable[[str], ExperimentResults | None] | None, cache: dict[Any, Any],
                     exp: Experiment) -> Callable[[str], ExperimentResults | None] | None:
    """``loader`` (an experiment name -> its results, as ``exp``'s seeds, smoke flag and limits find them)
    answering from ``cache`` what another experiment of the report already loaded the same way."""
    import json

    if loader is None:
        return None
    how = (exp.seed, exp.seeds, exp.smoke, json.dumps(exp.limits.as_dict(), sort_keys=True, default=str))

    def load(name: str) -> ExperimentResults | None:
        key = (name, *how)
        if key not in cache:
            cache[key] = loader(name)
        return cache[key]

    return load


def _other_plans(res: ExperimentResults, exp: Experiment) -> list[str]:
    """The configurations of this experiment that the store has runs for (newest first), as the overrides that
    differ from the report's (seeds, smoke, limits): what to give the report to see them."""
    if res.results_dir is None:
        return []
    with Store(res.results_dir, readonly=True) as store:
        plans = store.plans(exp.name)
    out = []
    kind = shrunk_kind(exp)  # the override that asks for shrunk runs, or that these are
    for row in plans.itertuples():
        summary = row.summary
        diffs = []
        if summary.get("smoke") != exp.smoke and kind is not None:
            diffs.append(kind.option if summary.get("smoke") else f"without {kind.option}")
        if summary.get("seeds") != exp.seeds:
            diffs.append(f"seeds={summary.get('seeds')}")
        if summary.get("seed") != exp.seed:
            diffs.append(f"seed={summary.get('seed')}")
        for key, value in (summary.get("limits") or {}).items():
            if value != exp.limits.as_dict().get(key):
                diffs.append(f"limits.{key}={'null' if value is None else value}")
        what = " ".join(diffs) or "other dataset, learner or protocol settings"
        out.append(f"{what} (recorded {prov.fmt_time(row.recorded_at)})")
    return out[:5]


@dataclass(frozen=True)
class Keeping:
    """What a report's kept sections are keyed on besides their experiment (:mod:`forestlab.report.kept`), read
    once per report: the inputs' signature, the published tables' and READMEs' signature, and each store's state."""

    inputs: str
    experiments: list[tuple[str, int, int]]
    stores: dict[Path, list[Any]] = field(default_factory=dict)

    def store(self, results_dir: Path) -> list[Any]:
        if results_dir not in self.stores:
            self.stores[results_dir] = kept.store_state(results_dir)
        return self.stores[results_dir]


class _Warned(logging.Handler):
    """Counts the warnings logged while a section is built (a section that warned is not kept: its warning would
    not be said again when it is read back)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def experiment_part(name: str, overrides: Sequence[str], site: Path,
                    shared: dict[str, dict[Any, Any]] | None = None, inputs: str | None = None,
                    keeping: Keeping | None = None) -> ExperimentPart:
    """Read experiment ``name`` (resolved with ``overrides``) from the store and render it (``shared``: see
    :func:`experiment_view`). The experiment is the one ``forestlab tables`` reads: kept as JSON while nothing it
    depends on changes (:func:`forestlab.config.cached_experiment`; ``inputs``: its inputs' signature, computed once
    per report), composed otherwise. With ``keeping``, a section kept by an earlier report from the same store,
    code, config and files is read back (:mod:`forestlab.report.kept`), and one built here is kept."""
    try:
        exp = cached_experiment([f"experiment={name}", *overrides], inputs)
    except ForestlabError as exc:
        return ExperimentPart(name, _declared_study(name), error=str(exc))
    results_dir = resolve_path(exp.paths.results_dir)
    key = None
    if keeping is not None and (results_dir / "runs.sqlite").is_file():
        key = kept.section_key(name, overrides, inputs=keeping.inputs, store=keeping.store(results_dir),
                               experiments=keeping.experiments, figures=output_dir(exp, "figures"))
        found = kept.read(results_dir, name, overrides, key, ExperimentPart, site)
        if found is not None:
            return found
        before = kept.files_under(site)
    warned = _Warned()
    log.addHandler(warned)
    try:
        part = _built_part(exp, name, overrides, site, shared)
    finally:
        log.removeHandler(warned)
    if key is not None and part.built and not part.error and not warned.count:
        kept.keep(results_dir, name, overrides, key, part, ExperimentPart, site, kept.files_under(site) - before)
    return part


def _built_part(exp: Experiment, name: str, overrides: Sequence[str], site: Path,
                shared: dict[str, dict[Any, Any]] | None) -> ExperimentPart:
    """Experiment ``exp``'s section, built from the store (see :func:`experiment_part`)."""
    try:
        view = experiment_view(exp, overrides, site, shared)
        return ExperimentPart(name=view.name, study=exp.study, has_plan=view.has_plan,
                              counts=dict(view.res.counts), runs=view.runs, config_hash=view.config_hash,
                              agreement=view.agreement, verdicts=view.verdicts(),
                              claims={c.name: c.verdict for c in view.claims}, planned_full=exp.n_runs,
                              compute_seconds=view.runs.compute_seconds, html=_experiment_html(view),
                              toc=_toc_entry(view), comparisons=tuple(c for t in view.tables for c in t.comparisons))
    except Exception as exc:  # one experiment's problem is a note on its section, never the end of the report
        log.warning("report: the section of %s could not be built: %s", name, _error_text(exc))
        log.debug("report: %s failed", name, exc_info=True)
        return ExperimentPart(name, exp.study, error=_error_text(exc), built=False)


def _study_pvr(study: StudyView, site: Path, overrides: Sequence[str], keeping: Keeping,
               results_dir: Path) -> PvrPlot:
    """The study's published-vs-reproduced plot (:func:`forestlab.report.pvr.study_pvr`), read back when the same
    comparisons were drawn by the same code before (kept beside the sections, :mod:`forestlab.report.kept`)."""
    comps = tuple(c for p in study.experiments for c in p.comparisons)
    rel = f"pvr/{_slug(study.key)}.png"
    name = f"{study.key}+pvr"  # '+' is in no experiment's name: never an experiment's entry
    key = kept.value_key(keeping.inputs, (study.key, rel, comps), Comparison) \
        if (results_dir / "runs.sqlite").is_file() else None
    if key is not None:
        found = kept.read(results_dir, name, overrides, key, PvrPlot, site)
        if found is not None:
            return found
    plot = study_pvr(study.key, comps, site, rel)
    if key is not None:
        kept.keep(results_dir, name, overrides, key, plot, PvrPlot, site, [plot.image] if plot.image else [])
    return plot


def fmt_duration(seconds: float) -> str:
    """'3 h 12 min', '4 min 05 s', '12.3 s'."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _readme_path(study: str | None) -> Path | None:
    if not study:
        return None
    path = experiments_dir() / study / "README.md"
    return path if path.is_file() else None


# ---------------------------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------------------------
def _page(title: str, body: str, *, shrunk: Shrunk | None, footer: str) -> str:
    return st.page(title, body, shrunk=shrunk, footer=footer)


def _html_table(df: pd.DataFrame, *, cls: str = "data", first_is_header: bool = True,
                headers: Mapping[str, str] | None = None, links: Mapping[str, str] | None = None) -> str:
    """``df`` as a table in its own scroll box (its first column stays in view when it scrolls); ``headers``: the
    words shown for some columns; ``links``: a first-column value -> the page its cell links to."""
    headers = headers or {}
    links = links or {}
    head = "".join(f"<th>{esc(headers.get(str(c), c))}</th>" for c in df.columns)
    rows = []
    for values in df.itertuples(index=False):
        cells = []
        for i, v in enumerate(values):
            tag = "th" if i == 0 and first_is_header else "td"
            text = esc(v)
            if i == 0 and str(v) in links:
                text = f'<a href="{esc(links[str(v)])}" title="the value of each run">{text}</a>'
            cells.append(f"<{tag}>{text}</{tag}>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="scroll"><table class="{cls} sortable"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>")


def _permalink(anchor: str, what: str = "this") -> str:
    """A visible '¶' linking to ``#anchor`` (to copy the address of a table, figure or claim)."""
    return f' <a class="permalink" href="#{esc(anchor)}" title="link to {esc(what)}">¶</a>'


_TOP = ' <a class="to-top" href="#top" title="back to the top of the page">↑ top</a>'


def _downloads(paths: Mapping[str, str], csv: str, tex: str, extra: str = "") -> str:
    """'Download: CSV · LaTeX' links to the files written beside a table."""
    links = [f'<a href="{esc(paths[k])}" download>{label}</a>' for k, label in ((csv, "CSV"), (tex, "LaTeX"))
             if k in paths]
    if extra:
        links.append(extra)
    return f'<p class="downloads">Download: {" · ".join(links)}</p>' if links else ""


def _cmd(text: str) -> str:
    return f'<pre class="cmd"><code>{esc(text)}</code></pre>'


def _verdict_badge(verdict: str) -> str:
    return f'<span class="verdict v-{_slug(verdict.lower())}">{esc(verdict)}</span>'


def _verdict_counts(counts: dict[str, int], split: Sequence[str] = ()) -> str:
    """'3 holds · 1 does not hold · 2 inconclusive' (distinct claims); the claims judged differently by the
    experiments sharing them are counted apart, named in the tooltip."""
    parts = [f'<span class="vc v-{_slug(k.lower()) if counts[k] else "zero"}" title="{esc(k)}">{counts[k]} '
             f"{esc(k.lower())}</span>" for k in VERDICTS if counts[k] or k != "NOT TESTED"]
    if counts.get(SPLIT):
        parts.append(f'<span class="vc v-split" title="{esc("; ".join(split))}">{counts[SPLIT]} judged '
                     "differently by the experiments sharing it</span>")
    return " · ".join(parts)


def _runs_text(counts: dict[str, int]) -> str:
    text = f"{counts.get('done', 0)} done, {counts.get('failed', 0)} failed"
    if counts.get("pending"):
        text += f", {counts['pending']} pending"
    if counts.get("planned_full"):
        text += f"; {counts['planned_full']} planned at the configured sizes"
    return text


def _comparison_html(view: TableView, res: ExperimentResults) -> str:
    comps = view.comparisons
    if not comps:
        return "<p class=\"placeholder\">No published cell of this table concerns the datasets of this plan.</p>"
    columns = {c.published: c for c in view.layout.columns if c.published is not None}  # the last of twins
    names = [c.name for c in columns.values()]
    labels = {k: (c.name if names.count(c.name) == 1 else f"{k[0]} {c.name}") for k, c in columns.items()}
    groups = [k for k in columns if any((c.algorithm, c.metric) == k for c in comps)]
    datasets = list(dict.fromkeys(c.dataset for c in comps))
    by_key = {(c.dataset, c.algorithm, c.metric): c for c in comps}
    roles = {g: next((c.role for c in comps if (c.algorithm, c.metric) == g and not c.scored), None) for g in groups}

    def unscored(g: tuple[str, str]) -> str:  # a column compared but not counted in the score, said in its header
        role = roles[g]
        if role is None:
            return ""
        what = "another reading" if role == "result" else role
        return f' <span class="unscored" title="compared, not counted in the reproduction score">({esc(what)}, ' \
               "not scored)</span>"

    head1 = "<th rowspan=\"2\">dataset</th>" + "".join(
        f'<th colspan="3" class="group">{esc(st.words(labels[g]))} {st.arrow(g[1])}{unscored(g)}</th>'
        for g in groups)
    head2 = "".join('<th>published</th><th>reproduced</th><th title="reproduced − published; z: in standard '
                    'deviations">Δ (z)</th>' for _ in groups)
    body = []
    notes: dict[str, list[str]] = {}  # distinct note text -> the cells it is about (numbered in this order)
    for d in datasets:
        cells = [f"<th>{esc(d)}</th>"]
        for g in groups:
            r = by_key.get((d, *g))
            if r is None:
                cells.append('<td class="na" colspan="3">not in the published table</td>')
                continue
            pub = esc(r.published_text)
            if r.note:
                notes.setdefault(r.note, []).append(f"{d} {labels[g]}")
                number = list(notes).index(r.note) + 1
                pub += f'<sup class="fn" title="{esc(r.note)}">{number}</sup>'
            z = "" if r.z != r.z else f' <span class="z">({r.z:+.1f})</span>'
            title = f"{r.meaning}{'' if r.z != r.z else f'; Δ = {r.z:+.1f} std'}; {r.n} run(s)"
            cells.append(f'<td class="pub">{pub}</td><td class="ours">{esc(r.value_text)}</td>'
                         f'<td class="mark m-{r.mark}" title="{esc(title)}">{esc(r.diff_text)}{z} '
                         f'<span class="sym" aria-label="{esc(r.meaning)}">{r.symbol}</span></td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    out = (f'<div class="scroll"><table class="data compare sortable"><thead><tr>{head1}</tr><tr>{head2}</tr>'
           f'</thead><tbody>{"".join(body)}</tbody></table></div>')
    if notes:
        out += '<ol class="notes">' + "".join(
            f"<li>{esc(text)} <span class=\"muted\">({esc(', '.join(where))})</span></li>"
            for text, where in notes.items()) + "</ol>"
    a = view.agreement
    out += (f'<p class="summary">{esc(a.text())}. Δ = reproduced − published (positive: our value is higher), '
            "z = Δ in standard deviations (blank where there is no spread to judge against); reproduced = mean ± "
            f"std over {'the seeds' if res.seeds > 1 else 'the runs'}.</p>")
    return out


def _legend() -> str:
    items = "".join(f'<li><span class="mark m-{k}"><span class="sym">{s}</span></span> {esc(m)}</li>'
                    for k, (s, m) in MARKS.items())
    more = [(BEST, "best value of its row, in the metric's direction"),
            (SIGNIFICANT, "significantly different from the learner the column is compared with (paired t-test "
                          "over the splits; the table's note names it)"),
            (st.UP, "higher is better"), (st.DOWN, "lower is better"),
            ("optimistic", "hyperparameters chosen on the test set, as the study did: they overstate what the "
                           "method would do on new data"),
            ("Δ", "reproduced − published: positive when our value is higher (better for ↑, worse for ↓)"),
            ("(z)", "Δ in standard deviations, beside Δ"),
            ("¶", "a link to this table, figure or claim")]
    items += "".join(f'<li><span class="sym-key">{esc(s)}</span> {esc(m)}</li>' for s, m in more)
    return f'<ul class="legend">{items}</ul>'


def _pairs_html(view: TableView) -> str:
    if view.pairs_error:
        return f'<p class="error">Head-to-head tests not available: {esc(view.pairs_error)}</p>'
    if not view.pairs:
        return ""
    parts = ["<h4>Head to head on the same splits (per-dataset paired t-tests, Wilcoxon across datasets)</h4>"]
    for summary, table in view.pairs:
        parts.append(f'<p class="pair-line">{esc(summary.line())}</p>')
        if len(table):
            a, b = summary.a, summary.b
            frame = pd.DataFrame({
                "dataset": table["dataset"],
                f"{a} mean": [fmt_number(v, view.layout.digits) for v in table["mean_a"]],
                f"{b} mean": [fmt_number(v, view.layout.digits) for v in table["mean_b"]],
                f"{a} − {b}": [fmt_number(v, view.layout.digits + 1, signed=True) for v in table["diff"]],
                "p (paired t)": [fmt_p(v) for v in table["p"]],
                f"outcome for {a}": [{"W": "win", "T": "tie", "L": "loss"}.get(o, o) + ("*" if s else "")
                                     for o, s in zip(table["outcome"], table["significant"], strict=True)]})
            parts.append(_html_table(frame, cls="data small pairs"))
            arrow = st.arrow(summary.metric)
            parts.append(f'<p class="muted pair-key">{esc(summary.metric)} {arrow}: win / tie / loss for {esc(a)} on '
                         f"the means as shown, in the metric's direction; * = paired t-test p &lt; "
                         f"{summary.alpha:g}.</p>")
    return "".join(parts)


def _friedman_html(view: TableView) -> str:
    if not view.friedman:
        if view.pairs and len({x for summary, _ in view.pairs for x in (summary.a, summary.b)}) == 2:
            return ('<p class="muted">Two learners: across datasets Demšar (2006) recommends the Wilcoxon '
                    "signed-rank test, given on the head-to-head line above (Friedman and Nemenyi are for three or "
                    "more).</p>")
        return ""
    parts = []
    for fv in view.friedman:
        comp = fv.comparison
        head = (f"<h4>Across datasets: Friedman test and Nemenyi post hoc on {esc(comp.metric)} "
                f"({', '.join(esc(a) for a in comp.algorithms)})</h4>")
        r = fv.result
        if r is None:
            parts.append(head + f'<p class="placeholder">Not computed: {esc(fv.reason)}.</p>')
            continue
        better = "higher" if r.higher_is_better else "lower"
        verdict = ("the average ranks differ (Iman-Davenport F rejects equal ranks)" if r.significant else
                   "no evidence that the average ranks differ")
        lines = [f"N = {r.n_datasets} datasets, k = {r.n_algorithms} learners ({esc(comp.metric)}, {better} is "
                 f"better; each learner's mean over the seeds, ranked within each dataset, 1 = best).",
                 f"Friedman χ² = {r.chi2:.2f}, p = {fmt_p(r.p)}; Iman-Davenport F = {r.iman_davenport_f:.2f}, "
                 f"p = {fmt_p(r.iman_davenport_p)}: {verdict} at α = {r.alpha:g}."]
        if fv.image:
            lines.append(f"Critical difference (Nemenyi, α = {r.alpha:g}): CD = {r.cd:.2f}.")
            pairs = r.different_pairs()
            lines.append("Pairs the Nemenyi test tells apart: " + (", ".join(f"{a} better than {b}"
                                                                         for a, b in pairs) if pairs else "none")
                         + ".")
        if r.dropped:
            lines.append(f"Left out (a learner has no value there): {', '.join(r.dropped)}.")
        if r.caution():
            lines.append(f"Caution: {r.caution()}.")
        if not fv.image and fv.reason:
            lines.append(f'<span class="no-cd">{esc(fv.reason[:1].upper() + fv.reason[1:])}.</span>')
        ranks = pd.DataFrame({"learner": list(r.ranks.index), "average rank (1 = best)":
                              [f"{v:.2f}" for v in r.ranks]})
        img = (f'<figure class="cd"><img src="{esc(fv.image)}" alt="critical-difference diagram of '
               f'{esc(comp.metric)} in {esc(view.name)}"><figcaption>Critical-difference diagram: learners joined '
               "by a thick line are not told apart by the Nemenyi test.</figcaption></figure>") if fv.image else ""
        parts.append(head + '<div class="cd-block"><div>' + "".join(f"<p>{line}</p>" for line in lines)
                     + _html_table(ranks, cls="data small") + "</div>" + img + "</div>")
    return "".join(parts)


def _table_html(ev: ExperimentView, view: TableView) -> str:
    anchor = f"{_slug(ev.name)}--{_slug(view.name)}"
    cmds = f"{ev.commands.run} && {ev.commands.tables}"
    if view.layout.published or view.layout.pairs:
        cmds += f" && {ev.commands.compare}"
    out = [f'<section class="table" id="{esc(anchor)}"><h3>{esc(view.title)}{_permalink(anchor, "this table")}'
           f"{_TOP}</h3>"]
    if view.left_out:
        out.append(f'<p class="warn">{esc(view.left_out)}.</p>')
    if view.reproduced is not None:
        if view.note:
            out.append(f'<p class="table-note">{esc(view.note[:1].upper() + view.note[1:])}.</p>')
        runs = (f'<a href="{esc(view.runs_page)}">the value of each run</a>' if view.runs_page else "")
        out.append(_downloads(view.downloads, "csv", "tex", runs))
        links = ({d: f"{view.runs_page}#{_slug(d)}" for d in view.reproduced["dataset"]} if view.runs_page
                 else None)
        out.append(_html_table(view.reproduced, headers=view.headers, links=links))
        if view.facts is not None and len(view.facts):
            out.append('<details class="facts"><summary>Its datasets: rows, features, classes, split sizes'
                       "</summary>" + _html_table(view.facts, cls="data small")
                       + '<p class="muted">Rows and features as the runs recorded them when they loaded the data '
                       "(else the dataset's config); train and test sizes as each run recorded them (a range when "
                       "they differ between runs), else the study's split sizes in the dataset's config; classes "
                       "from the dataset's task.</p></details>")
    elif view.reproduced_error:
        out.append(f'<p class="error">This table cannot be built from the stored runs: '
                   f"{esc(view.reproduced_error)}</p>")
    else:
        out.append('<p class="placeholder">None of the runs of this configuration is done yet.</p>')
    out.append(f'<details class="rerun"><summary>Rerun this table</summary>{_cmd(cmds)}</details>')
    if view.layout.published:
        out.append(f"<h4>Published vs reproduced (<code>{esc(view.layout.published)}</code>)</h4>")
        if view.comparison_error:
            out.append(f'<p class="error">The published table cannot be read: {esc(view.comparison_error)}</p>')
        else:
            out.append(_downloads(view.downloads, "compare_csv", "compare_tex"))
            out.append(_comparison_html(view, ev.res))
    out.append(_pairs_html(view))
    out.append(_friedman_html(view))
    out.append("</section>")
    return "".join(out)


def _figure_html(ev: ExperimentView, fv: FigureView) -> str:
    name = fv.spec.name
    title = fv.spec.title or name
    if fv.image:
        stale = (ev.runs.last is not None and fv.drawn_at is not None and fv.drawn_at < ev.runs.last)
        note = (f' <span class="warn">drawn before the last run: redraw with <code>{esc(ev.commands.figures)}'
                "</code></span>" if stale else "")
        pdf = f' · <a href="{esc(fv.pdf)}">PDF</a>' if fv.pdf else ""
        caption = f'<span class="fig-caption">{esc(fv.caption)}</span> ' if fv.caption else ""
        figure = (f'<figure><a href="{esc(fv.image)}"><img src="{esc(fv.image)}" alt="{esc(title)}"></a>'
                  f"<figcaption>{caption}<span class=\"muted\">(drawn {esc(prov.fmt_time(fv.drawn_at))}{pdf})"
                  f"</span>{note}</figcaption></figure>")
    else:  # one short box: the command that draws it
        return (f'<section class="figure" id="{esc(_slug(ev.name))}--fig-{esc(_slug(name))}"><h3>{esc(title)}</h3>'
                f'<div class="placeholder figure-missing"><p>Not drawn yet: <code>{esc(ev.commands.figures)}</code>'
                "</p></div></section>")
    return (f'<section class="figure" id="{esc(_slug(ev.name))}--fig-{esc(_slug(name))}"><h3>{esc(title)}</h3>'
            f'<div class="side-by-side"><div class="fig">{figure}</div><div class="original"><h4>'
            f"{fv.original_title}</h4>{fv.original_html}</div></div></section>")


def pvr_html(study: StudyView) -> str:
    """The study's published-vs-reproduced plot with its caption (or the sentence saying why there is none), as a
    section for the top of its page."""
    plot = study.pvr
    if plot is None:
        return ""
    head = '<section class="pvr" id="published-vs-reproduced"><h2>Published against reproduced</h2>'
    if plot.image is None:
        return f'{head}<p class="placeholder">{esc(plot.note)}</p></section>'
    return (f'{head}<figure><a href="{esc(plot.image)}"><img src="{esc(plot.image)}" alt="published against '
            f'reproduced, {plot.cells} cells of {esc(study.key)}"></a><figcaption>{esc(plot.caption)}</figcaption>'
            "</figure></section>")


def _claims_html(ev: ExperimentView) -> str:
    if not ev.claims:
        return ""
    anchor = f"{_slug(ev.name)}--claims"
    out = [f'<h3 id="{esc(anchor)}">Claims{_permalink(anchor, "these claims")}{_TOP}</h3>']
    if ev.claims_error:
        out.append(f'<p class="error">The claims could not be judged: {esc(ev.claims_error)}</p>')
    out.append('<ul class="claims">')
    for c in ev.claims:
        body = f'<p class="claim-text">{esc(c.claim)}</p>' if c.claim else ""
        body += f'<p><span class="label">Test:</span> {esc(c.test)}</p>' if c.test else ""
        body += f'<p><span class="label">Evidence:</span> {esc(c.evidence)}</p>' if c.evidence else ""
        cid = f"claim-{_slug(ev.name)}-{_slug(c.name)}"
        out.append(f'<li id="{esc(cid)}">{_verdict_badge(c.verdict)} '
                   f"<code>{esc(c.name)}</code>{_permalink(cid, 'this claim')}{body}</li>")
    out.append("</ul>")
    return "".join(out)


def _commands(exp: Experiment, overrides: Sequence[str]) -> prov.Commands:
    """The commands that rerun ``exp`` as the report read it: with the data mirror its runs read, its workers and,
    for an experiment of your own (``experiment.name=``), the definition recorded with its plan."""
    definition = None
    if not is_registered(exp.name):
        with Store(resolve_path(exp.paths.results_dir), readonly=True) as store:
            definition = store.recorded_definition(exp.name)
    mirror = str(resolve_path(exp.paths.mirror)) if exp.paths.mirror else None  # absolute: rerun from anywhere
    return prov.commands(exp.name, overrides, n_jobs=exp.launcher.n_jobs, mirror=mirror, definition=definition)


def _experiment_provenance(ev: ExperimentView) -> str:
    r = ev.runs
    counts = ev.res.counts or {}
    rows = [("experiment", ev.name), ("study", ev.exp.study or "none"),
            ("plan id (hash of what decides the runs)", ev.exp.plan_id),
            ("config hash (composed config, without paths and launcher)", ev.config_hash),
            ("overrides", " ".join(ev.overrides) or "none"),
            ("runs planned / done / failed / pending",
             f"{counts.get('planned', 0)} / {counts.get('done', 0)} / {counts.get('failed', 0)} / "
             f"{counts.get('pending', 0)}"),
            ("runs finished", r.dates()),
            ("plan recorded", prov.fmt_time(r.plan_recorded)),
            ("hosts that ran them", ", ".join(r.hosts) or "—"),
            ("forestlab versions that ran them", ", ".join(r.versions) or "—"),
            ("forestlab commits that ran them", r.commits_text()),
            ("package versions that ran them", r.packages_text())]
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    cmds = "\n".join([ev.commands.run, ev.commands.tables, ev.commands.figures, ev.commands.compare])
    return (f'<details class="provenance"><summary>Provenance of {esc(ev.name)}</summary>'
            f'<table class="kv">{table}</table><p>Rerun everything of this experiment:</p>{_cmd(cmds)}</details>')


def _experiment_html(ev: ExperimentView) -> str:
    counts = ev.res.counts or {}
    anchor = _slug(ev.name)
    head = (f'<h2>Experiment <code>{esc(ev.name)}</code>{_permalink(anchor, "this experiment")}{_TOP}</h2>'
            f'<p class="description">{esc(ev.exp.description or "")}</p>')
    if not ev.has_plan:  # never ran: one short box, its command and what it would fill, not empty tables
        return f'<section class="experiment not-run" id="{esc(anchor)}">{head}{_not_run_box(ev)}</section>'
    status = (f"{_runs_text(counts)} of {counts.get('planned', 0)} planned runs; last finished "
              f"{prov.fmt_time(ev.runs.last)}")
    out = [f'<section class="experiment" id="{esc(anchor)}">', head, f'<p class="status">{esc(status)}.</p>']
    if counts.get("failed"):
        out.append(f'<p class="warn">{counts["failed"]} run(s) failed; their errors: '
                   f"<code>{esc(shlex.join(['forestlab', 'status', ev.name, *ev.overrides, '--failed']))}"
                   "</code></p>")
    for tv in ev.tables:
        out.append(_table_html(ev, tv))
    for fv in ev.figures:
        out.append(_figure_html(ev, fv))
    out.append(_claims_html(ev))
    out.append(_experiment_provenance(ev))
    out.append("</section>")
    return "".join(out)


def _not_run_box(ev: ExperimentView) -> str:
    """The section of an experiment with no run stored for this configuration: what it would fill (its tables and
    figures by title, its claims by statement) and the command that runs it, in one box."""
    fills = [t.title for t in ev.tables] + [f.spec.title or f.spec.name for f in ev.figures]
    what = ("<p>It fills " + "; ".join(esc(t) for t in fills) + ".</p>") if fills else ""
    claims = ""
    if ev.claims:
        items = []
        for c in ev.claims:
            cid = f"claim-{_slug(ev.name)}-{_slug(c.name)}"
            items.append(f'<li id="{esc(cid)}">{_verdict_badge(c.verdict)} <code>{esc(c.name)}</code>'
                         f"{_permalink(cid, 'this claim')}" + (f": {esc(c.claim)}" if c.claim else "") + "</li>")
        claims = f'<p>Claims it tests (not tested until it runs):</p><ul class="claims-brief">{"".join(items)}</ul>'
    other = ("" if not ev.other_plans else
             "<p>The store has runs of it under other configurations; give the report the overrides they "
             "were run with to see them: " + "; ".join(f"<code>{esc(p)}</code>" for p in ev.other_plans) + ".</p>")
    return (f'<div class="placeholder not-run-box"><p><strong>Not run yet</strong>: no run stored for this '
            f"configuration. Run it with:</p>{_cmd(ev.commands.run)}{what}{claims}{other}</div>")


def _broken_html(b: ExperimentPart, overrides: Sequence[str] = ()) -> str:
    head = f'<section class="experiment" id="{esc(_slug(b.name))}"><h2>Experiment <code>{esc(b.name)}</code></h2>'
    if not b.built:
        cmds = "\n".join(shlex.join(["forestlab", cmd, b.name, *overrides]) for cmd in ("tables", "compare"))
        return (f'{head}<p class="error">Its section could not be built, so it is left out of this report (the other '
                f"experiments are not affected): {esc(b.error)}</p><p class=\"muted\">See the failure with:</p>"
                f"{_cmd(cmds)}</section>")
    return (f'{head}<p class="error">Its config cannot be resolved, so it is left out of this report: '
            f"{esc(b.error)}</p><p class=\"muted\">See it with <code>forestlab config experiment={esc(b.name)}</code>."
            "</p></section>")


def _experiments_text(study: StudyView) -> str:
    ran = sum(1 for e in study.experiments if e.has_plan)
    text = f"{ran} of {len(study.experiments) + len(study.broken)}"
    unresolved = sum(b.built for b in study.broken)
    failed = len(study.broken) - unresolved
    notes = ([f"{unresolved} cannot be resolved"] if unresolved else []) + \
        ([f"{failed} could not be built"] if failed else [])
    return text + (f" ({', '.join(notes)})" if notes else "")


def _study_summary(study: StudyView) -> str:
    counts = study.counts()
    split = study.split_claims()
    agreement = study.agreement
    unscored = agreement.unscored_text()
    return (f'<ul class="study-summary"><li>Experiments with stored runs: {esc(_experiments_text(study))}</li>'
            f"<li>Published results (primary cells): {esc(agreement.text(unscored=False))}</li>"
            + (f"<li>Not scored: {esc(unscored)}</li>" if unscored else "")
            + f"<li>Claims (distinct): {_verdict_counts(study.verdicts(), split)}"
            + (f"; judged differently: {esc('; '.join(split))}" if split else "") + "</li>"
            f"<li>Runs: {esc(_runs_text(counts))}; compute time {esc(fmt_duration(study.compute_seconds))}; "
            f"last run {esc(prov.fmt_time(study.last_run))}</li></ul>")


def _toc_entry(ev: ExperimentView) -> str:
    if not ev.has_plan:
        titles = " | ".join([t.title for t in ev.tables] + [f.spec.title or f.spec.name for f in ev.figures])
        return (f'<li data-order="{esc(titles)}"><a href="#{esc(_slug(ev.name))}"><code>{esc(ev.name)}</code></a>'
                ' <span class="muted">(not run yet)</span></li>')
    items = "".join(f'<li><a href="#{esc(_slug(ev.name))}--{esc(_slug(t.name))}">{esc(t.title)}</a></li>'
                    for t in ev.tables)
    items += "".join(f'<li><a href="#{esc(_slug(ev.name))}--fig-{esc(_slug(f.spec.name))}">'
                     f'{esc(f.spec.title or f.spec.name)}</a></li>' for f in ev.figures)
    return (f'<li><a href="#{esc(_slug(ev.name))}"><code>{esc(ev.name)}</code></a>'
            + (f"<ul>{items}</ul>" if items else "") + "</li>")


def _study_order(parts: Sequence[ExperimentPart]) -> list[ExperimentPart]:
    """The study's experiments in the study's own order: by the first 'Table 7.1' / 'Fig. 4.2' that the titles of
    their tables and figures name, in their declared order (their contents entry holds the titles), then by name;
    not alphabetically by experiment name, which put Table 7.3 before 7.2."""
    def key(p: ExperimentPart) -> tuple[Any, ...]:
        order = re.search(r'data-order="([^"]*)"', p.toc)  # a section not run lists its titles there
        text = html.unescape(order.group(1) if order else re.sub(r"<[^>]+>", " | ", p.toc))
        titles = [t for t in text.split(" | ") if t.strip()]
        numbered = [st.natural_key(t) for t in titles if st.natural_key(t)[0] == 0]
        ours = bool(titles) and all(re.search(r"beyond the (study|thesis)|\(ours\)", t, re.I) for t in titles)
        # its first numbered title; an experiment beyond the study after the reproduction it extends
        return (numbered[0] if numbered else st.natural_key(p.name), ours, p.name)

    return sorted(parts, key=key)


def _study_page(study: StudyView, footer: str, shrunk: Shrunk | None, overrides: Sequence[str] = ()) -> str:
    experiments = _study_order(study.experiments)
    toc = [f'<li><a href="#{esc(_slug(b.name))}"><code>{esc(b.name)}</code></a> '
           f"({'cannot be resolved' if b.built else 'could not be built'})</li>" for b in study.broken]
    toc += [ev.toc for ev in experiments]
    choices = readme.choices(study.readme) if study.readme else []
    if study.readme:
        toc.append('<li><a href="#protocol-choices">Protocol choices and ambiguities</a></li>')
    heading = (f'<h1 id="top">{esc(study.title)}</h1>' if study.key in (OTHER, YOURS) else
               f'<h1 id="top"><code>{esc(study.key)}</code>: {esc(study.title)}</h1>')
    body = [heading, _study_summary(study), pvr_html(study)]
    if not study.experiments and not study.broken:
        body.append('<div class="placeholder"><p>No experiment of this study is registered yet: an experiment '
                    f"config in <code>conf/experiment/</code> with <code>study: {esc(study.key)}</code> appears "
                    "here as soon as it exists.</p></div>")
    if toc:
        body.append(f'<nav class="toc"><h2>Contents</h2><ul>{"".join(toc)}</ul></nav>')
    if any(e.has_plan for e in study.experiments):  # the marks explained where a table shows them
        body.append(f'<details class="legend-box" open><summary>How to read the tables and marks</summary>{_legend()}'
                    "<p>Reproduced = mean ± std over our seeds (or folds). A published cell agrees (✓) when the "
                    "difference is within 2 standard errors (|z| ≤ 2, about 95% of the time when the protocols "
                    "agree); z is computed from what the study prints:</p><ul class=\"legend\">"
                    + "".join(f"<li><strong>{esc(m)}</strong>: {esc(t)}</li>" for m, t in METHODS.items())
                    + "</ul><p>Only the cells the study reports as results are scored; hyperparameters and "
                    "diagnostics (tree depths, a chosen C or μ) are compared but not counted. Click a column "
                    "header to sort a table (numbers by value, ± parts and marks ignored); a dataset's name in a "
                    "reproduced table opens the value of each of its runs; "
                    "CSV and LaTeX files of each table sit beside it.</p></details>")
    for b in study.broken:
        body.append(_broken_html(b, overrides))
    for ev in experiments:
        body.append(ev.html)
    if study.readme:
        body.append('<section id="protocol-choices"><h2>Protocol choices and ambiguities'
                    f'{_permalink("protocol-choices", "this section")}{_TOP}</h2>'
                    f'<p class="muted">From <code>experiments/{esc(study.key)}/README.md</code>.</p>')
        if choices:
            for sec in choices:
                body.append(f"<h3>{readme.inline_html(sec.title)}</h3>"
                            f"{readme.to_html(sec.markdown, shift=max(0, 3 - sec.level))}")
        else:
            body.append('<p class="placeholder">The README has no section on protocol choices or ambiguities.</p>')
        body.append("</section>")
    elif study.key not in (OTHER, YOURS):
        body.append(f'<section id="protocol-choices"><h2>Protocol choices and ambiguities</h2><p class="placeholder">'
                    f"No <code>experiments/{esc(study.key)}/README.md</code> yet.</p></section>")
    body.append('<p class="to-top-end"><a href="#top">↑ back to the top</a></p>'
                '<script src="assets/sort.js"></script>')  # progressive: the page reads the same without it
    return _page(f"{study.key}: {study.title}", "".join(body), shrunk=shrunk, footer=footer)


def _index_page(studies: list[StudyView], footer: str, shrunk: Shrunk | None, seconds_hint: str) -> str:
    rows = []
    for s in studies:
        counts = s.counts()
        agreement = s.agreement
        unscored = agreement.unscored_text()
        rows.append(
            f'<tr><th><a href="{esc(s.page)}">{esc(_study_label(s))}</a></th>'
            f"<td>{esc(s.title)}</td><td>{esc(_experiments_text(s))}</td>"
            f"<td>{esc(_shrunk_prefix(shrunk) + agreement.text(unscored=False))}"
            + (f'<br><span class="muted">{esc(unscored)}</span>' if unscored else "") + "</td>"
            f"<td>{_verdict_counts(s.verdicts(), s.split_claims())}</td>"
            f"<td>{esc(_runs_text(counts))}</td><td>{esc(fmt_duration(s.compute_seconds))}</td>"
            f"<td>{esc(prov.fmt_time(s.last_run))}</td></tr>")
    table = ('<div class="scroll"><table class="data index"><thead><tr><th>study</th><th>source</th>'
             "<th>experiments run</th><th>published results reproduced (primary cells)</th>"
             "<th>claims (distinct)</th><th>runs</th><th>compute time</th>"
             f"<th>last run</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")
    intro = ("<p>Where forestlab stands on each study it reproduces: for every published table, our numbers beside "
             "the published ones, cell by cell; for every claim, its test and verdict; every figure beside the "
             "description of the original; the protocol choices we made where the study is ambiguous. "
             "Each page says what produced it and prints the command that reruns each table.</p>"
             "<p>A published result (a primary cell: the study's reported metric, not a hyperparameter or a "
             "diagnostic such as a tree depth, which are shown on the study pages unscored) is <em>reproduced</em> "
             "when its difference from our mean is within 2 standard errors of the difference (|z| ≤ 2): a "
             "published mean ± std over n runs against ours as two samples, a published rejection rate over n "
             "runs as two proportions, a published single split against the spread of our splits. Each claim is "
             "counted once, however many experiments judge it. A claim HOLDS or DOES NOT HOLD when at least 80% "
             "of 200 bootstrap resamples of the seeds agree, INCONCLUSIVE otherwise, NOT TESTED when the runs it "
             "needs are missing or too few for its "
             f"test to go either way{_unjudged_runs(shrunk)}.</p>")
    body = f"<h1>Reproduction report</h1>{intro}{table}<p class=\"muted\">{seconds_hint}</p>"
    return _page("forestlab reproduction report", body, shrunk=shrunk, footer=footer)


def _shrunk_prefix(shrunk: Shrunk | None) -> str:
    """'on smoke runs, not the results: ' before a count of agreeing cells of shrunk runs ('' for real runs)."""
    return f"on {shrunk.label} runs, not the results: " if shrunk is not None else ""


def _unjudged_runs(shrunk: Shrunk | None) -> str:
    """', and on <label> runs' when the report's kind of shrunk run (else the one a debug option declares) is not
    judged."""
    kind = shrunk if shrunk is not None else shrunk_kind()
    return f", and on {esc(kind.label)} runs" if kind is not None and not kind.judged else ""


_code_spans = st.code_spans


def _footer(generated: float, overrides: Sequence[str], views: Iterable[ExperimentPart]) -> str:
    views = list(views)
    counts = {"done": 0, "failed": 0, "pending": 0}
    first = [v.runs.first for v in views if v.runs.first is not None]
    last = [v.runs.last for v in views if v.runs.last is not None]
    for v in views:
        for k in counts:
            counts[k] += int(v.counts.get(k, 0))
    packages = ", ".join(f"{k} {v}" for k, v in prov.package_versions().items())
    # what built this report; what produced each experiment's runs (commits, packages, config hash) is in its own
    # provenance section on its study's page
    rows = [("report built by", f"forestlab {__version__}, commit {prov.git_commit()}"),
            ("report built", f"{prov.fmt_time(generated)} on {prov.machine()}"),
            ("command", shlex.join(["forestlab", "report", *overrides])),
            ("runs", f"{_runs_text(counts)}; finished "
                     + (f"{prov.fmt_time(min(first))} to {prov.fmt_time(max(last))}" if first else "—")
                     + "; what produced each experiment's runs: its provenance section"),
            ("packages of the build", packages)]
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return f'<details class="provenance page-provenance" open><summary>Provenance</summary>' \
           f'<table class="kv">{table}</table></details>'


# ---------------------------------------------------------------------------------------------------------------
# Building the site
# ---------------------------------------------------------------------------------------------------------------
def site_dir(experiment: Experiment) -> Path:
    """``<reports_dir>/report`` (``report-<label>`` for shrunk runs: ``report-smoke``), ``reports_dir`` defaulting
    to the results folder."""
    root = resolve_path(experiment.paths.reports_root)
    return root / ("report" if experiment.shrunk is None else f"report-{experiment.shrunk.label}")


def _check_overrides(overrides: Sequence[str], inputs: str | None = None) -> Any:
    """The default experiment resolved with ``overrides`` (where the report goes, whether these are smoke runs,
    how many workers): a bad override is the user's error, said before anything is read."""
    chosen = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") in ("experiment", "dataset", "algorithm")]
    if chosen:
        raise ConfigError(f"the report covers every experiment: '{chosen[0]}' cannot be given to it (give "
                          "overrides that apply to every experiment, such as seeds=3)")
    return cached_experiment(list(overrides), inputs)


def _declared_study(name: str) -> str | None:
    """The ``experiment.study`` an experiment's own YAML file declares (None when it does not, or is unreadable)."""
    import yaml

    try:
        data = yaml.safe_load((conf_dir() / "experiment" / f"{name}.yaml").read_text(encoding="utf-8"))
        study = ((data or {}).get("experiment") or {}).get("study")
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    return str(study) if study else None


def gather(parts: Sequence[ExperimentPart]) -> list[StudyView]:
    """One :class:`StudyView` per registered study (by key), then one for the experiments without a study that
    have a recorded plan (or a config that cannot be resolved), then one for your experiments (named by
    ``experiment.name=``, see :func:`named_experiments`): those are never counted in a study's page or line, even
    when they run its protocol."""
    yours = [p for p in parts if not is_registered(p.name)]
    theirs = [p for p in parts if is_registered(p.name)]
    studies = [StudyView(key, STUDIES[key].title, _readme_path(key), [p for p in theirs if p.study == key])
               for key in sorted(STUDIES)]
    others = [p for p in theirs if p.study not in STUDIES and (p.has_plan or p.error)]
    if others:
        studies.append(StudyView(OTHER, "Experiments without a study", None, others))
    if yours:
        studies.append(StudyView(YOURS, "Your experiments: the studies' protocols on your own data (beyond the "
                                 "studies)", None, yours))
    return studies


def named_experiments(base: Experiment) -> list[str]:
    """Your experiments in the store the report reads: those named by ``experiment.name=`` with a recorded
    definition and a stored run (``forestlab run experiment=uci_binary experiment.datasets=[mydata]
    experiment.name=mine``); each is read with the report's overrides, as the studies' experiments are."""
    with Store(resolve_path(base.paths.results_dir), readonly=True) as store:
        return [n for n in store.named_experiments() if not is_registered(n)]


def _study_label(study: StudyView) -> str:
    """A study's name in the index's first column (its key; words for the pages that are not a study's)."""
    return {OTHER: "other experiments", YOURS: "your experiments"}.get(study.key, study.key)


def build_site(overrides: Sequence[str] = (), *, out: Path | None = None) -> Path:
    """Build the report for every registered study from the store; returns the path of its ``index.html``.

    The site is written to a fresh folder beside ``out`` (default :func:`site_dir`) and moved into place when
    complete, so a reader never sees half a report and files of an older report never linger.
    """
    t0 = time.perf_counter()
    overrides = [str(o) for o in overrides]
    figure_kinds(complete=True)  # the plug-ins' drawings and claims: a kept experiment is not validated again
    inputs = inputs_signature()  # what every kept experiment depends on besides its overrides: read once
    base = _check_overrides(overrides, inputs)
    names = list_options("experiments")
    if not names:
        raise ConfigError("no experiment is registered (conf/experiment/ is empty)")
    names += named_experiments(base)  # your experiments (experiment.name=), on a page of their own
    target = out or site_dir(base)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "assets").mkdir(parents=True)
    except OSError as exc:
        raise StoreError(f"cannot write the report to {target} ({exc.strerror or exc}): set paths.reports_dir=DIR "
                         "to write it elsewhere") from None
    try:
        for asset in ASSETS.iterdir():
            if asset.is_file():
                shutil.copyfile(asset, tmp / "assets" / asset.name)
        # one experiment after the other: worker processes were slower (each pays the imports and the config
        # tree again) on the 2-core machines this runs on
        shared: dict[str, dict[Any, Any]] = {}
        keeping = Keeping(inputs, kept.tree_signature(experiments_dir()))
        parts = [experiment_part(name, overrides, tmp, shared, inputs, keeping) for name in names]
        studies = gather(parts)
        for study in studies:  # drawn before the pages: pvr_html(study) shows it
            study.pvr = _study_pvr(study, tmp, overrides, keeping, resolve_path(base.paths.results_dir))
        footer = _footer(time.time(), overrides, [p for p in parts if not p.error])
        for study in studies:
            (tmp / study.page).write_text(_study_page(study, footer, base.shrunk, overrides), encoding="utf-8")
        hint = (f"Built by <code>{esc(shlex.join(['forestlab', 'report', *overrides]))}</code> in "
                f"{time.perf_counter() - t0:.1f} s from the store; no run was recomputed.")
        (tmp / "index.html").write_text(_index_page(studies, footer, base.shrunk, hint), encoding="utf-8")
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        if target.exists():
            target.rename(old)
        tmp.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreError(f"cannot write the report to {target} ({exc.strerror or exc}): set paths.reports_dir=DIR "
                         "to write it elsewhere") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.debug("report built in %.2f s", time.perf_counter() - t0)
    return target / "index.html"
