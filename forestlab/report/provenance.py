"""What produced a report: forestlab's version and commit, the packages and the machine, and per experiment the hash
of its composed config, its plan, the dates, hosts and versions of its stored runs, and the commands that rerun it.

Everything here reads the environment, the git checkout (when there is one: otherwise the commit is "unknown") and
the store's run records; nothing is recomputed.
"""

from __future__ import annotations

import os
import platform
import shlex
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from forestlab.environment import RUN_PACKAGES, dist_version, git_state
from forestlab.experiment import Experiment, content_hash
from forestlab.results import ExperimentResults
from forestlab.store import Store

# The distributions whose versions decide or draw the numbers (PyPI names): those a run records
# (forestlab.environment.RUN_PACKAGES), then those of the reports.
PACKAGES = (*RUN_PACKAGES, "joblib", "matplotlib", "hydra-core", "omegaconf", "scikit-posthocs", "statsmodels",
            "markdown-it-py")
# Composed-config sections that say where files go, how many workers run and how shrunk runs are named and judged
# (debug=smoke's `shrunk` section; its `smoke: true`, seeds and limits are hashed): they change no number.
NOT_HASHED = ("paths", "launcher", "shrunk")


def package_versions() -> dict[str, str]:
    """Python's and each of :data:`PACKAGES`' versions ("not installed" when absent)."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        out[name] = dist_version(name) or "not installed"
    return out


def git_commit() -> str:
    """The checkout's commit (``<sha> (+ uncommitted changes)`` when tracked files differ from it), or "unknown"
    outside a git checkout or without git (:func:`forestlab.environment.git_state`, asked once per process)."""
    return git_state().text()


def machine() -> str:
    """This machine, as the report's reader needs it: host, OS, CPU count."""
    return f"{socket.gethostname()}: {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs"


def config_hash(experiment: Experiment) -> str:
    """SHA-256 (24 hex) of the experiment's composed config, without :data:`NOT_HASHED` (where files go, how many
    workers): equal hashes, equal configs."""
    from omegaconf import OmegaConf

    cfg = experiment.cfg
    if cfg is None:
        return "unknown"
    plain = OmegaConf.to_container(cfg, resolve=True)
    return content_hash({k: v for k, v in plain.items() if k not in NOT_HASHED}, 24)


def fmt_time(timestamp: float | None) -> str:
    """A store timestamp as local 'YYYY-MM-DD HH:MM' ('—' for none)."""
    if timestamp is None or timestamp != timestamp:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


#: How the report names what a run stored before forestlab recorded it (store schema 4).
UNKNOWN = "unknown"


@dataclass(frozen=True)
class RunsProvenance:
    """What the store says about an experiment's planned runs: their counts and dates, and what produced them."""

    counts: dict[str, int]  # planned, done, failed, pending
    first: float | None  # earliest finished_at of its stored runs
    last: float | None
    hosts: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # forestlab versions that ran them
    plan_recorded: float | None = None
    #: The commits that ran them, each with "(+ uncommitted changes)" when the checkout was dirty, and how many runs
    #: ran on each; runs stored before commits were recorded count under :data:`UNKNOWN`.
    commits: tuple[tuple[str, int], ...] = ()
    #: The sets of package versions that ran them ("python 3.11.7, numpy 2.4.6, ..."), and how many runs each
    #: (:data:`UNKNOWN` as above).
    packages: tuple[tuple[str, int], ...] = ()
    #: The compute its done runs took: the sum of the total time each recorded (loading, fitting, evaluating).
    compute_seconds: float = 0.0

    def dates(self) -> str:
        if self.first is None:
            return "no run stored"
        first, last = fmt_time(self.first), fmt_time(self.last)
        return first if first == last else f"{first} to {last}"

    def commits_text(self) -> str:
        """'abc123… (12 runs); unknown (3 runs stored before forestlab recorded commits)'."""
        return "; ".join(_counted(c, n, "commits") for c, n in self.commits) or "—"

    def packages_text(self) -> str:
        """'python 3.11.7, numpy 2.4.6, ... (12 runs); unknown (3 runs stored before ...)'."""
        return "; ".join(_counted(p, n, "them") for p, n in self.packages) or "—"


def _counted(value: str, n: int, what: str) -> str:
    if value == UNKNOWN:
        return f"{UNKNOWN} ({n} run{'s' if n != 1 else ''} stored before forestlab recorded {what})"
    return f"{value} ({n} run{'s' if n != 1 else ''})"


def _commit_of(commit: object, dirty: object) -> str:
    if not isinstance(commit, str) or not commit:
        return UNKNOWN
    return f"{commit} (+ uncommitted changes)" if dirty == 1 else commit


def runs_provenance(res: ExperimentResults, plan_id: str) -> RunsProvenance:
    """Counts, dates, hosts, versions, commits and package versions of the stored runs of ``res``, the results of
    plan ``plan_id``."""
    keys = res.planned["key"].tolist()
    counts = dict(res.counts) or {"planned": 0, "done": 0, "failed": 0, "pending": 0}
    if not keys or res.results_dir is None:
        return RunsProvenance(counts, None, None)
    with Store(res.results_dir, readonly=True) as store:
        records = store.records(keys, columns=("status", "finished_at", "git_commit", "git_dirty", "packages",
                                               "timings", "host", "forestlab_version"))
        plan = store.plan_for(res.name, plan_id=plan_id)
    if records.empty:
        return RunsProvenance(counts, None, None)
    finished = records["finished_at"].astype(float)
    commits: dict[str, int] = {}
    for commit, dirty in zip(records["git_commit"], records["git_dirty"], strict=True):
        text = _commit_of(commit, dirty)
        commits[text] = commits.get(text, 0) + 1
    packages: dict[str, int] = {}
    for stored in records["packages"]:
        text = (", ".join(f"{k} {v}" for k, v in sorted(stored.items(), key=lambda kv: (kv[0] != "python", kv[0])))
                if stored else UNKNOWN)  # python first
        packages[text] = packages.get(text, 0) + 1
    done = records["status"] == "done"
    seconds = sum(float((t or {}).get("total", 0.0) or 0.0) for t in records.loc[done, "timings"])
    return RunsProvenance(
        counts=counts, first=float(finished.min()), last=float(finished.max()), compute_seconds=seconds,
        hosts=tuple(sorted({str(h) for h in records["host"] if h})),
        versions=tuple(sorted({str(v) for v in records["forestlab_version"] if v})),
        plan_recorded=plan.recorded_at if plan is not None else None,
        commits=tuple(sorted(commits.items(), key=lambda kv: (kv[0] == UNKNOWN, -kv[1], kv[0]))),
        packages=tuple(sorted(packages.items(), key=lambda kv: (kv[0] == UNKNOWN, -kv[1], kv[0]))))


@dataclass(frozen=True)
class Commands:
    """The commands that rerun an experiment and rebuild its tables, figures and comparison."""

    run: str
    tables: str
    figures: str
    compare: str
    report: str = field(default="")


def commands(name: str, overrides: Sequence[str], *, n_jobs: int | None = None, mirror: str | None = None,
             definition: Sequence[str] | None = None) -> Commands:
    """The exact commands for experiment ``name`` run with the report's ``overrides``: the data mirror the run
    reads (``FORESTLAB_DATA_MIRROR=...``, when one is set), the workers (``launcher.n_jobs``) unless the overrides
    set them, and, for an experiment named by ``experiment.name=`` (``definition``: the overrides that compose it),
    its whole definition, so that the run command needs no store to find it."""
    ov = list(overrides)
    prefix = [f"FORESTLAB_DATA_MIRROR={mirror}"] if mirror else []
    given = {o.split("=", 1)[0].lstrip("+~") for o in ov if "=" in o}
    workers = [f"launcher.n_jobs={n_jobs}"] if n_jobs is not None and "launcher.n_jobs" not in given else []
    run = [*definition] if definition else [f"experiment={name}"]
    run = [o for o in run if o.split("=", 1)[0].lstrip("+~") not in given]
    # only the run reads data files: the other commands read the store
    return Commands(run=shlex.join([*prefix, "forestlab", "run", *run, *ov, *workers]),
                    tables=shlex.join(["forestlab", "tables", name, *ov]),
                    figures=shlex.join(["forestlab", "figures", name, *ov]),
                    compare=shlex.join(["forestlab", "compare", name, *ov]),
                    report=shlex.join(["forestlab", "report", *ov]))
