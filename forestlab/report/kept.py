"""The report's experiment sections kept beside the store (``<results>/cache/report/``), so that `forestlab report`
on a store that did not change reads each section back instead of building it again (its tables, tests, claims,
diagrams and pages of each run's values cost seconds an experiment).

A section is kept with the files it wrote into the site and a key of everything it was built from
(:func:`section_key`): the experiment and the report's overrides, forestlab's code, the config tree, the FORESTLAB_*
environment and the installed packages (:func:`forestlab.config.inputs_signature`), the published tables and READMEs
(``experiments/``), the figures ``forestlab figures`` drew for it, the time zone its dates are written in, and the
store's state (:func:`store_state`: any run, plan or dataset written, any array added or removed). A kept section is
used only when its key is the same; otherwise it is built and kept again, in place of the old one (one entry per
experiment and overrides: the folder does not grow with the store). Read back as JSON into the report's own
dataclasses (:mod:`forestlab._jsonable`: nothing read back runs code). A results folder that cannot be written keeps
nothing: its report is built every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from forestlab._jsonable import Unencodable, dataclass_closure, decode, encode
from forestlab.store import Store

__all__ = ["KEPT", "files_under", "keep", "read", "section_key", "store_state", "tree_signature", "value_key"]

KEPT = "cache/report"  # under the results folder, beside the claims' verdicts (cache/verdicts)
_FORMAT = 1  # bumped when what an entry holds changes


def tree_signature(folder: Path) -> list[tuple[str, int, int]]:
    """Every file under ``folder`` as (path, mtime in ns, size), sorted ([] when it does not exist)."""
    if not folder.is_dir():
        return []
    return sorted((str(p), st.st_mtime_ns, st.st_size) for p in folder.rglob("*") if p.is_file()
                  for st in (p.stat(),))


def store_state(results_dir: Path) -> list[Any]:
    """What changes whenever anything is written to the store: its runs' count and latest finish, its plans' count
    and latest record, its datasets' count, the database file and its write-ahead log (size and mtime: an update
    that leaves the counts as they were), and the arrays folder (a file added or removed)."""
    state: list[Any] = []
    with Store(results_dir, readonly=True) as store:
        if store._conn is not None:
            for sql in ("SELECT COUNT(*), MAX(finished_at) FROM runs", "SELECT COUNT(*), MAX(recorded_at) FROM plans",
                        "SELECT COUNT(*) FROM datasets"):
                with contextlib.suppress(Exception):  # an older store without the table
                    state.append(list(store._select(sql)[0]))
    for name in ("runs.sqlite", "runs.sqlite-wal", "arrays"):
        try:
            st = (results_dir / name).stat()
            state.append([name, st.st_size, st.st_mtime_ns])
        except OSError:
            state.append([name, None, None])
    return state


def section_key(name: str, overrides: Sequence[str], *, inputs: str, store: list[Any], experiments: Any,
                figures: Path) -> str:
    """The key of an experiment's section (see the module's docstring): ``inputs`` the inputs' signature, ``store``
    the store's state, ``experiments`` the published tables' and READMEs' signature, ``figures`` its figures'
    folder."""
    parts = {"format": _FORMAT, "name": name, "overrides": list(overrides), "inputs": inputs, "store": store,
             "experiments": experiments, "figures": tree_signature(figures),
             "tz": [os.environ.get("TZ"), list(time.tzname), time.timezone, time.altzone]}
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def value_key(inputs: str, value: Any, cls: type) -> str | None:
    """The key of something drawn from ``value`` alone (a ``cls`` or a sequence of them: a study's comparisons for
    its published-vs-reproduced plot) by forestlab's code and the installed packages (``inputs``); None when the
    encoding cannot hold ``value`` exactly (then nothing is kept)."""
    try:
        data = json.dumps([_FORMAT, inputs, encode(value, dataclass_closure(cls))])
    except (Unencodable, ValueError, TypeError):
        return None
    return hashlib.sha256(data.encode()).hexdigest()


def _entry(results_dir: Path, name: str, overrides: Sequence[str]) -> Path:
    which = hashlib.sha256(json.dumps([name, list(overrides)]).encode()).hexdigest()[:16]
    return results_dir / KEPT / f"{name}-{which}"


def files_under(root: Path) -> set[str]:
    """The files under ``root``, as paths relative to it."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def read(results_dir: Path, name: str, overrides: Sequence[str], key: str, cls: type, site: Path) -> Any | None:
    """The section of ``name`` kept under ``key`` (a ``cls``), its files copied into ``site``; None when none is
    kept under that key (or the entry is damaged)."""
    entry = _entry(results_dir, name, overrides)
    try:
        kept = json.loads((entry / "section.json").read_text(encoding="utf-8"))
        if kept.get("key") != key:
            return None
        section = decode(kept["section"], dataclass_closure(cls))
        if type(section) is not cls:
            return None
        files = [str(f) for f in kept["files"]]
        for rel in files:
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                return None
        for rel in files:
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(entry / "files" / rel, site / rel)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return section


def keep(results_dir: Path, name: str, overrides: Sequence[str], key: str, section: Any, cls: type, site: Path,
         files: Iterable[str]) -> None:
    """Keep ``section`` (a ``cls``) under ``key`` with ``files`` (paths relative to ``site``, which it wrote), in
    place of what was kept for ``name`` and ``overrides``; nothing when the results folder cannot be written or the
    section holds something the encoding cannot keep exactly."""
    try:
        data = json.dumps({"key": key, "section": encode(section, dataclass_closure(cls)), "files": sorted(files)})
    except (Unencodable, ValueError, TypeError):
        return
    entry = _entry(results_dir, name, overrides)
    tmp = entry.with_name(f".{entry.name}.tmp-{os.getpid()}")
    old = entry.with_name(f".{entry.name}.old-{os.getpid()}")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "files").mkdir(parents=True)
        for rel in sorted(files):
            (tmp / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(site / rel, tmp / "files" / rel)
        (tmp / "section.json").write_text(data, encoding="utf-8")  # last: an entry without it is never read
        if entry.exists():
            entry.rename(old)
        tmp.rename(entry)
    except OSError:
        pass  # a read-only results folder (or a report beside this one): nothing kept
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
