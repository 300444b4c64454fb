"""The studies forestlab reproduces, as plug-ins: one module per study holds everything specific to it.

A study module (``zirakiza2013``, ``pisetta2010``, ``courses``, ``depecker2010``, ``wu2021``) defines
``STUDY = register(Study(...))``: its key and title, its claims (functions of an
:class:`~forestlab.results.ExperimentResults` returning a :class:`ClaimResult`), which other experiments each claim
combines (read through ``res.sibling(name)``), and, when a published table is not a plain long-form CSV, how that
table is read. ``forestlab.report`` names no study: it finds a claim by its name with :func:`find_claim` and judges
it with :func:`judge`, or the claims of one experiment together with :func:`judge_all`.

A verdict has four values. The claim's own test, on the per-seed results, says whether it holds, or that it is NOT
TESTED: the runs it needs are missing, or the data at hand could only have given one answer (a rule "on every dataset
but at most one" cannot fail on one dataset; "significant on at least 4 datasets" cannot hold on 3). A claim states
the least data its test needs to go either way through :func:`verdict`. Shrunk runs whose kind is not judged
(``shrunk.judged: false``: ``debug=smoke``) are never judged: every claim on them is NOT TESTED, its test's answer on
them kept in the evidence (after the kind's ``unjudged`` words) as a check of the code.

A verdict that resamples of the seeds would overturn is INCONCLUSIVE: :func:`judge` re-evaluates the claim on
bootstrap resamples of the repetitions (the same draw for every dataset, algorithm and combined experiment) and
keeps HOLDS / DOES NOT HOLD only when at least ``min_agreement`` of them agree with it.

How the studies plug in. What only one study uses is registered by that study, and the shared code names none:
its claims and published-table readers (``register(Study(...))``), and its figure kinds, declared and drawn in
``<study>_figures.py`` with :func:`forestlab.plotting.figure_kind` (the options go to :mod:`forestlab.spec`, which
checks every figure at ``forestlab run --dry-run``; the drawing to :mod:`forestlab.plotting`'s registry, where
:func:`forestlab.report.figures.render_figures` looks it up). The spec must know a study's kinds before an experiment
is built, yet nothing below the studies may import them: the top floor does. :mod:`forestlab.cli` installs a loader
(:func:`forestlab.spec.add_kind_loader`) that imports this package the first time a figure names a kind the spec has
not registered, so commands whose experiments draw only shared kinds never pay for the studies' imports. A program
that builds experiments itself (tests, a notebook) imports ``forestlab.studies`` first. The layers stay one way:
spec < plotting < studies < report < cli, no study module imports the report.

How to add a study, touching only files under ``forestlab/studies/``, ``conf/`` and ``experiments/``:

1. ``forestlab/studies/<study>.py``: ``STUDY = register(Study(key, title, claims=..., readers=...))``;
2. if it draws figures no other study draws, ``forestlab/studies/<study>_figures.py`` with one
   ``@figure_kind(name, doc, **options)`` drawing per kind (helpers in :mod:`forestlab.plotting`);
3. add both modules to the import list at the end of this file;
4. ``conf/experiment/<study>_*.yaml`` (``experiment.study: <study>``, its tables, figures and claims) and any
   datasets or algorithms it needs under ``conf/dataset/`` and ``conf/algorithm/``;
5. ``experiments/<study>/``: its README and its published tables (``published/``).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from forestlab.config import experiments_dir, shrunk_kind
from forestlab.errors import ConfigError
from forestlab.experiment import content_hash
from forestlab.results import ExperimentResults

__all__ = ["HOLDS", "DOES_NOT_HOLD", "INCONCLUSIVE", "NOT_TESTED", "STUDIES", "ClaimFunction", "ClaimResult",
           "Judgement", "Study", "claim_registrar", "dataset_means", "find_claim", "finite_values", "get_study",
           "judge", "judge_all", "judge_all_cached", "mean_curve", "register", "too_little", "verdict"]

PUBLISHED_COLUMNS = ("dataset", "algorithm", "metric", "value")

HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTED = "HOLDS", "DOES NOT HOLD", "INCONCLUSIVE", "NOT TESTED"
N_RESAMPLES = 200  # bootstrap resamples of the seeds behind each verdict
MIN_AGREEMENT = 0.8  # share of them that must agree with the verdict on all the runs


@dataclass(frozen=True)
class ClaimResult:
    """What a claim function returns: the claim in words, the quantitative test applied (thresholds are ours and
    stated), whether it holds on the runs (None: not enough runs to test it), and the numbers behind the answer."""

    claim: str
    test: str
    holds: bool | None
    evidence: str


def too_little(**needs: tuple[int, int]) -> str | None:
    """Why a test could not have given either answer on the data at hand, or None when it could.

    Each keyword names what the test counts, with ``(have, least)``: how many there are and the least number with
    which the test can both hold and fail, e.g. ``datasets=(1, 2)`` for a rule "on every dataset but at most one".
    Underscores in the name are read as spaces (``paired_datasets``)."""
    short = [f"too few {what.replace('_', ' ')}: {have} (the test can go either way only with at least {least})"
             for what, (have, least) in needs.items() if have < least]
    return "; ".join(short) if short else None


def verdict(text: str, test: str, holds: bool, evidence: str, **needs: tuple[int, int]) -> ClaimResult:
    """The claim's answer ``holds``, given only when the data at hand could have given the other one.

    ``needs`` as for :func:`too_little`: when a count is below its least, the claim is NOT TESTED (``holds`` None)
    and the evidence gives the reason, then what the test saw."""
    why = too_little(**needs)
    if why is not None:
        return ClaimResult(text, test, None, f"{why}; on the data at hand: {evidence}")
    return ClaimResult(text, test, bool(holds), evidence)


ClaimFunction = Callable[[ExperimentResults], ClaimResult]
TableReader = Callable[[Path], pd.DataFrame]


@dataclass(frozen=True)
class Study:
    """One study: its claims, the experiments they combine, and how its published tables are read.

    Attributes
    ----------
    key, title : str
        The study key (``experiment.study`` in the configs, the folder under ``experiments/``) and its title.
    claims : dict
        Claim name -> function of an :class:`ExperimentResults` returning a :class:`ClaimResult`. Claim names are
        unique across all studies (an experiment lists its claims by name only).
    combines : dict
        Claim name -> the other experiments it reads through ``res.sibling(name)`` (claims that read only the
        experiment they are judged on are not listed).
    readers : dict
        Published file name -> function reading that file (its path) into a long-form frame, for the tables that
        are not already ``dataset,algorithm,metric,value`` CSV files.
    """

    key: str
    title: str
    claims: Mapping[str, ClaimFunction] = field(default_factory=dict)
    combines: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    readers: Mapping[str, TableReader] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.combines) - set(self.claims))
        if unknown:
            raise ConfigError(f"study {self.key}: 'combines' names claims it does not have: {', '.join(unknown)}")

    @property
    def published_dir(self) -> Path:
        """The folder of the study's published tables: ``experiments/<key>/published``."""
        return experiments_dir() / self.key / "published"

    def read_published(self, filename: str) -> pd.DataFrame:
        """A published table of this study in long form: columns dataset, algorithm, metric, value.

        Raises :class:`ConfigError` naming the file when it is missing or lacks one of these columns.
        """
        path = self.published_dir / filename
        if not path.is_file():
            raise ConfigError(f"published table {path} not found")
        reader = self.readers.get(filename)
        df = reader(path) if reader is not None else pd.read_csv(path)
        missing = set(PUBLISHED_COLUMNS) - set(df.columns)
        if missing:
            raise ConfigError(f"{path}: missing columns {sorted(missing)} (expected dataset,algorithm,metric,value)")
        return df


# -- registry --------------------------------------------------------------------------------------------------------
STUDIES: dict[str, Study] = {}
_CLAIM_OWNER: dict[str, str] = {}  # claim name -> study key


def claim_registrar(claims: dict[str, ClaimFunction]) -> Callable[[str], Callable[[ClaimFunction], ClaimFunction]]:
    """A ``@claim(name)`` decorator that files claim functions into ``claims`` (a name used twice is an error)."""

    def claim(name: str) -> Callable[[ClaimFunction], ClaimFunction]:
        def add(func: ClaimFunction) -> ClaimFunction:
            if name in claims:
                raise ConfigError(f"claim '{name}' is defined twice ({claims[name].__module__})")
            claims[name] = func
            return func

        return add

    return claim


def register(study: Study) -> Study:
    """Add a study to :data:`STUDIES`; its key and each of its claim names must be new."""
    if study.key in STUDIES:
        raise ConfigError(f"study '{study.key}' is registered twice")
    clash = sorted(f"{name} (also in {_CLAIM_OWNER[name]})" for name in study.claims if name in _CLAIM_OWNER)
    if clash:
        raise ConfigError(f"study {study.key}: claim names already used: {', '.join(clash)}")
    STUDIES[study.key] = study
    _CLAIM_OWNER.update(dict.fromkeys(study.claims, study.key))
    return study


def get_study(key: str) -> Study:
    """The registered study ``key`` (ConfigError listing the valid keys otherwise)."""
    try:
        return STUDIES[key]
    except KeyError:
        raise ConfigError(f"unknown study '{key}'; valid studies: {', '.join(sorted(STUDIES))}") from None


def find_claim(name: str) -> tuple[Study, ClaimFunction]:
    """The study that defines claim ``name``, and the claim's function (looked up across all studies, since an
    experiment without a study may list a study's claim)."""
    owner = _CLAIM_OWNER.get(name)
    if owner is None:
        raise ConfigError(f"unknown claim '{name}'; known claims: {', '.join(sorted(_CLAIM_OWNER))}")
    study = STUDIES[owner]
    return study, study.claims[name]


# -- verdicts ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Judgement:
    """A claim's verdict on an experiment's results.

    ``result`` is what the claim returned on all the runs, its evidence followed by one sentence on the bootstrap
    over seeds; ``agreement`` is the share of bootstrap resamples whose answer equals the full-data one (None when
    there was nothing to resample: not tested, or a single repetition).
    """

    name: str
    result: ClaimResult
    verdict: str  # HOLDS, DOES NOT HOLD, INCONCLUSIVE or NOT TESTED
    agreement: float | None


def _n_repetitions(res: ExperimentResults) -> int:
    return int(res.runs["repetition"].nunique()) if len(res.runs) else 0


def _with_cached_siblings(res: ExperimentResults) -> ExperimentResults:
    """``res`` whose other experiments are read from the store once, not once per resample (each resample still
    resamples them)."""
    if res.sibling_loader is None:
        return res
    return replace(res, sibling_loader=functools.cache(res.sibling_loader), _arrays=res._arrays)


def _combines_study_data(name: str, res: ExperimentResults) -> bool:
    """Whether claim ``name`` reads the study's other experiments (``Study.combines``) and ``res`` is an experiment
    named by ``experiment.name=`` (the user's data): such a claim is about the study's datasets."""
    return res.named and bool(find_claim(name)[0].combines.get(name))


def _not_on_named(name: str, func: ClaimFunction, res: ExperimentResults) -> ClaimResult:
    """NOT TESTED on a named experiment, saying why (its statement and test as the claim writes them)."""
    study = find_claim(name)[0]
    result = func(replace(res, sibling_loader=None, _arrays=res._arrays))  # reads no other experiment
    return replace(result, holds=None, evidence=(
        f"combines the study's own experiments ({', '.join(study.combines[name])}) on the study's datasets; "
        f"{res.name} is an experiment of your own (experiment.name=), so this claim is not judged on it"))


def judge(name: str, res: ExperimentResults, *, n_resamples: int = N_RESAMPLES, seed: int = 0,
          min_agreement: float = MIN_AGREEMENT) -> Judgement:
    """Test claim ``name`` on ``res`` and tell a verdict that the seeds support from one inside their noise.

    The claim is evaluated on all the runs: holds None is NOT TESTED. Otherwise it is re-evaluated on
    ``n_resamples`` bootstrap resamples of the repetitions (resample ``i`` drawn with
    ``np.random.default_rng(seed + i)`` by ``res.resample_repetitions``, so the verdict is reproducible); when the
    share of resamples giving the same answer (a resample where it cannot be tested counts as disagreeing) is below
    ``min_agreement`` the verdict is INCONCLUSIVE, else HOLDS or DOES NOT HOLD. With a single repetition there is
    nothing to resample and the verdict is the claim's own. On shrunk runs of a kind that is not judged
    (``debug=smoke``) every claim is NOT TESTED (its test's answer on them is kept in the evidence).
    """
    return judge_all([name], res, n_resamples=n_resamples, seed=seed, min_agreement=min_agreement)[0]


def judge_all(names: Sequence[str], res: ExperimentResults, *, n_resamples: int = N_RESAMPLES, seed: int = 0,
              min_agreement: float = MIN_AGREEMENT) -> list[Judgement]:
    """:func:`judge` for several claims of one experiment, drawing each resample once for all of them (the same
    draws, hence the same verdicts, as one :func:`judge` call per claim)."""
    funcs = [find_claim(name)[1] for name in names]
    results = [func(res) if not _combines_study_data(name, res) else _not_on_named(name, func, res)
               for name, func in zip(names, funcs, strict=True)]
    kind = res.shrunk if res.shrunk is not None else shrunk_kind() if res.smoke else None
    if kind is not None and not kind.judged:  # they check the code: the claim's test runs, its answer is no verdict
        return [Judgement(name, replace(r, holds=None, evidence=f"{kind.unjudged}; on them the test gives "
                                        f"{'no answer' if r.holds is None else HOLDS if r.holds else DOES_NOT_HOLD}"
                                        f": {r.evidence}"), NOT_TESTED, None)
                for name, r in zip(names, results, strict=True)]
    tested = [k for k, r in enumerate(results) if r.holds is not None]
    n_reps = _n_repetitions(res)
    agree = [0] * len(funcs)
    resampled = bool(tested) and n_reps >= 2 and n_resamples >= 1
    if resampled:
        base = _with_cached_siblings(res)
        for i in range(n_resamples):
            # each other experiment resampled once per draw, whichever claims read it (sibling reads it once)
            sample = base.resample_repetitions(np.random.default_rng(seed + i))
            for k in tested:
                again = funcs[k](sample).holds
                agree[k] += again is not None and bool(again) == bool(results[k].holds)
    out = []
    for k, (name, result) in enumerate(zip(names, results, strict=True)):
        if result.holds is None:
            out.append(Judgement(name, result, NOT_TESTED, None))
            continue
        result = replace(result, holds=bool(result.holds))
        verdict = HOLDS if result.holds else DOES_NOT_HOLD
        if not resampled:
            why = ("a single repetition" if n_reps == 1 else "no repetition of its own" if n_reps == 0
                   else "no resample asked for")
            note = f"verdict not checked against the seed noise ({why}: nothing to resample)"
            out.append(Judgement(name, replace(result, evidence=f"{result.evidence}; {note}"), verdict, None))
            continue
        agreement = agree[k] / n_resamples
        below = agreement < min_agreement
        note = (f"bootstrap over the {n_reps} seeds: {agree[k]}/{n_resamples} resamples agree "
                f"({100 * agreement:.0f}%, {'below' if below else 'at least'} the {100 * min_agreement:.0f}% "
                "required)")
        out.append(Judgement(name, replace(result, evidence=f"{result.evidence}; {note}"),
                             INCONCLUSIVE if below else verdict, agreement))
    return out


# -- verdicts kept beside the store ------------------------------------------------------------------------------------
VERDICT_CACHE = "cache/verdicts"  # under the results folder


def _verdict_key(names: Sequence[str], res: ExperimentResults, n_resamples: int, seed: int,
                 min_agreement: float) -> str | None:
    """What a set of verdicts depends on: the claims and the judging settings, the code that judges, this
    experiment's runs and values, and those of the other experiments its claims read (``Study.combines``, through
    ``res.sibling``). None without a store.

    Not the rest of the store: under ``make tables`` each experiment's comparison is judged before the next
    experiments run, and a key on the whole store's state made every verdict stale by the time ``forestlab report``
    read it (the report judged every claim again, most of its time on a fresh reproduction)."""
    if res.results_dir is None or not (Path(res.results_dir) / "runs.sqlite").is_file():
        return None

    def runs_hash(one: ExperimentResults) -> str:
        values = pd.util.hash_pandas_object(one.runs.astype(str), index=False).to_numpy()
        return hashlib.sha256(values.tobytes()).hexdigest()

    combined = sorted({other for name in names for other in find_claim(name)[0].combines.get(name, ())
                       if other != res.name})
    siblings = {}
    for other in combined:
        sibling = res.sibling(other)
        siblings[other] = None if sibling is None else runs_hash(sibling)
    code = hashlib.sha256()
    for module in sorted(Path(__file__).parent.glob("*.py")) + [Path(__file__).parents[1] / "results.py",
                                                                Path(__file__).parents[1] / "metrics.py"]:
        code.update(module.read_bytes())
    return content_hash({"names": list(names), "experiment": res.name, "smoke": res.smoke, "seeds": res.seeds,
                         "n_resamples": n_resamples, "seed": seed, "min_agreement": min_agreement,
                         "code": code.hexdigest(), "values": runs_hash(res), "siblings": siblings}, 32)


def judge_all_cached(names: Sequence[str], res: ExperimentResults, *, n_resamples: int = N_RESAMPLES,
                     seed: int = 0, min_agreement: float = MIN_AGREEMENT) -> list[Judgement]:
    """:func:`judge_all`, its verdicts kept in ``<results>/cache/verdicts/`` so that ``forestlab compare`` (run by
    ``make tables``) and ``forestlab report`` judge a claim once. A kept verdict is used only when nothing it
    depends on has changed (:func:`_verdict_key`: the claims, this experiment's runs and values and those of the
    experiments its claims combine, and the judging code); a store that cannot be written to is judged every
    time."""
    import json

    key = _verdict_key(names, res, n_resamples, seed, min_agreement)
    path = Path(res.results_dir) / VERDICT_CACHE / f"{key}.json" if key else None
    if path is not None and path.is_file():
        try:
            return [Judgement(d["name"], ClaimResult(**d["result"]), d["verdict"], d["agreement"])
                    for d in json.loads(path.read_text())]
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache entry: judge again
    out = judge_all(names, res, n_resamples=n_resamples, seed=seed, min_agreement=min_agreement)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps([{"name": j.name, "verdict": j.verdict, "agreement": j.agreement,
                                        "result": {"claim": j.result.claim, "test": j.result.test,
                                                   "holds": j.result.holds, "evidence": j.result.evidence}}
                                       for j in out]))
            tmp.replace(path)
        except OSError:
            pass  # a read-only results folder: nothing kept
    return out


# -- helpers for the study modules -------------------------------------------------------------------------------------
def finite_values(res: ExperimentResults, algorithm: str, metric: str) -> dict[str, np.ndarray]:
    """Per dataset (plan order; datasets without a finite value left out), the finite values of one algorithm's
    metric in run order: what ``res.values(algorithm, metric, dataset)`` holds, for every dataset in one pass over
    the runs (claims are re-evaluated on hundreds of resamples)."""
    if metric not in res.runs.columns or res.runs.empty:
        return {}
    out = {}
    for dataset in res.datasets:
        v = res.value_array(algorithm, metric, dataset)
        v = v[np.isfinite(v)]
        if v.size:
            out[dataset] = v
    return out


def dataset_means(res: ExperimentResults, algorithm: str, metric: str) -> dict[str, float]:
    """Per dataset (plan order; datasets without a finite value left out), the mean of one algorithm's metric over
    its runs."""
    return {d: float(v.mean()) for d, v in finite_values(res, algorithm, metric).items()}


def mean_curve(res: ExperimentResults, algorithm: str, name: str, dataset: str) -> np.ndarray:
    """The mean over one dataset's runs of an algorithm's stored array ``name`` (a curve by number of trees,
    accuracies by C, importances by feature), NaNs left out point by point; empty when none is stored."""
    curves = res.curve(algorithm, name, dataset)
    if curves.size == 0:
        return np.empty(0)
    with np.errstate(all="ignore"):
        return np.nanmean(curves, axis=0)


# Each study module registers its STUDY on import, each <study>_figures module the figure kinds only that study draws
# (their declarations and drawings). Imported last: they build on the names above.
from forestlab.studies import (  # noqa: E402,F401
    courses,
    courses_figures,
    depecker2010,
    depecker2010_figures,
    pisetta2010,
    pisetta2010_figures,
    wu2021,
    zirakiza2013,
)
