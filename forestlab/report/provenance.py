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
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, version

from forestlab.config import PROJECT_DIR
from forestlab.experiment import Experiment, content_hash
from forestlab.results import ExperimentResults
from forestlab.store import Store

# The distributions whose versions decide or draw the numbers (PyPI names).
PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "joblib", "osqp", "matplotlib", "hydra-core", "omegaconf",
            "scikit-posthocs", "statsmodels", "markdown-it-py")
# Composed-config sections that say where files go, how many workers run and how shrunk runs are named and judged
# (debug=smoke's `shrunk` section; its `smoke: true`, seeds and limits are hashed): they change no number.
NOT_HASHED = ("paths", "launcher", "shrunk")


def package_versions() -> dict[str, str]:
    """Python's and each of :data:`PACKAGES`' versions ("not installed" when absent)."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


@cache
def git_commit() -> str:
    """The checkout's commit (``<sha> (+ uncommitted changes)`` when tracked files differ from it), or "unknown"
    outside a git checkout or without git."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(PROJECT_DIR), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha} (+ uncommitted changes)" if dirty else sha


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


@dataclass(frozen=True)
class RunsProvenance:
    """What the store says about an experiment's planned runs."""

    counts: dict[str, int]  # planned, done, failed, pending
    first: float | None  # earliest finished_at of its stored runs
    last: float | None
    hosts: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # forestlab versions that ran them
    plan_recorded: float | None = None

    def dates(self) -> str:
        if self.first is None:
            return "no run stored"
        first, last = fmt_time(self.first), fmt_time(self.last)
        return first if first == last else f"{first} to {last}"


def runs_provenance(res: ExperimentResults, plan_id: str) -> RunsProvenance:
    """Counts, dates, hosts and versions of the stored runs of ``res``, the results of plan ``plan_id``."""
    keys = res.planned["key"].tolist()
    counts = dict(res.counts) or {"planned": 0, "done": 0, "failed": 0, "pending": 0}
    if not keys or res.results_dir is None:
        return RunsProvenance(counts, None, None)
    with Store(res.results_dir, readonly=True) as store:
        records = store.records(keys)
        plan = store.plan_for(res.name, plan_id=plan_id)
    if records.empty:
        return RunsProvenance(counts, None, None)
    finished = records["finished_at"].astype(float)
    return RunsProvenance(
        counts=counts, first=float(finished.min()), last=float(finished.max()),
        hosts=tuple(sorted({str(h) for h in records["host"] if h})),
        versions=tuple(sorted({str(v) for v in records["forestlab_version"] if v})),
        plan_recorded=plan.recorded_at if plan is not None else None)


@dataclass(frozen=True)
class Commands:
    """The commands that rerun an experiment and rebuild its tables, figures and comparison."""

    run: str
    tables: str
    figures: str
    compare: str
    report: str = field(default="")


def commands(name: str, overrides: Sequence[str]) -> Commands:
    """The exact commands for experiment ``name`` run with the report's ``overrides``."""
    ov = list(overrides)
    return Commands(run=shlex.join(["forestlab", "run", f"experiment={name}", *ov]),
                    tables=shlex.join(["forestlab", "tables", name, *ov]),
                    figures=shlex.join(["forestlab", "figures", name, *ov]),
                    compare=shlex.join(["forestlab", "compare", name, *ov]),
                    report=shlex.join(["forestlab", "report", *ov]))

