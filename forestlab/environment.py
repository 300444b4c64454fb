"""What produced a run: forestlab's version, the git commit of its checkout (and whether tracked files differed from
it), and the versions of the installed packages that decide its numbers.

Computed once per process (:func:`functools.cache`): ``forestlab run`` stores them with every run it makes
(:mod:`forestlab.store`, schema 4) and the report shows them per experiment (:mod:`forestlab.report.provenance`).
Standard library only, so that any layer may read it.
"""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from forestlab._version import __version__

PROJECT_DIR = Path(__file__).resolve().parent.parent

#: The distributions (PyPI names) whose versions decide a run's numbers: the arrays, the learners and their solvers,
#: the parsers of the data files. A run records those installed (an optional one absent is left out).
RUN_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "numba", "osqp", "xgboost", "lightgbm", "pyarrow",
                "liac-arff", "openml")
#: Other distributions that install the same package (pyproject installs XGBoost's CPU-only wheel on Linux).
SAME_PACKAGE = {"xgboost": ("xgboost-cpu",)}


def dist_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (or of one of :data:`SAME_PACKAGE`'s alternatives to it);
    None when none is installed."""
    for dist in (name, *SAME_PACKAGE.get(name, ())):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


@dataclass(frozen=True)
class GitState:
    """The checkout forestlab runs from: its commit ("unknown" outside a git checkout or without git) and whether
    tracked files differed from it (None when unknown)."""

    commit: str
    dirty: bool | None

    def text(self) -> str:
        if self.dirty is None:
            return self.commit
        return f"{self.commit} (+ uncommitted changes)" if self.dirty else self.commit


@cache
def git_state() -> GitState:
    """:class:`GitState` of forestlab's own checkout, asked of git once per process."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(PROJECT_DIR), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return GitState("unknown", None)
    return GitState(sha, dirty)


@cache
def run_packages() -> dict[str, str]:
    """Python's version and each installed :data:`RUN_PACKAGES` distribution's (absent ones left out)."""
    out = {"python": platform.python_version()}
    for name in RUN_PACKAGES:
        found = dist_version(name)
        if found is not None:
            out[name] = found
    return out


@cache
def run_provenance() -> dict[str, object]:
    """The provenance columns of a run record (:mod:`forestlab.store`): the same for every run of a process."""
    state = git_state()
    return {"forestlab_version": __version__, "git_commit": state.commit,
            "git_dirty": None if state.dirty is None else int(state.dirty), "packages": dict(run_packages())}
