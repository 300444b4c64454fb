"""The run store: one SQLite database (WAL mode) with a row per run, and arrays beside it.

A run is identified by its key, a content hash of everything that decides its result. Records are written one by one
as runs finish, so a killed process loses only the runs in flight; the key is the primary key, so a rerun never
writes a duplicate. Arrays (curves, test scores) are ``.npz`` files named by key, written atomically *before* the row
that points to them, and always loaded with pickling refused.

Only the process that runs ``forestlab run`` writes; several such processes on one store are serialised by SQLite's
locking (and, for whole runs, by :class:`RunLock`).

A store that SQLite finds damaged (a truncated or overwritten file) is refused before anything is written to it, with
a message saying so; a write that fails (disk full, read-only folder) is reported as such, and everything committed
before it stays.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import socket
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forestlab.errors import StoreBusy, StoreError

# 2: plans, plan_runs and datasets tables; 3: runs.failure, the kind of a failed run's failure; 4: runs.git_commit,
# runs.git_dirty and runs.packages, what produced a run beside forestlab_version (forestlab.environment). An older
# store opened for writing is migrated in place (what it lacks is added, NULL for the runs it holds: unknown; nothing
# it holds changes); opened read only, it is read as it is (a version-1 store has no recorded plans, a version-2
# store no failure kinds, a version-3 store no commits nor package versions).
SCHEMA_VERSION = 4
DB_NAME = "runs.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    experiment TEXT,
    study TEXT,
    dataset TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    protocol TEXT NOT NULL,
    seed INTEGER NOT NULL,
    repetition INTEGER NOT NULL,
    fold INTEGER,
    spec TEXT NOT NULL,
    selected TEXT,
    metrics TEXT,
    timings TEXT,
    arrays TEXT,
    error TEXT,
    failure TEXT,
    forestlab_version TEXT,
    git_commit TEXT,
    git_dirty INTEGER,
    packages TEXT,
    learner_version INTEGER,
    host TEXT,
    pid INTEGER,
    finished_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_cell ON runs (dataset, algorithm, status);
CREATE TABLE IF NOT EXISTS plans (
    plan_id TEXT PRIMARY KEY,
    experiment TEXT NOT NULL,
    study TEXT,
    smoke INTEGER NOT NULL,
    summary TEXT NOT NULL,
    recorded_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS plan_runs (
    plan_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    key TEXT NOT NULL,
    dataset TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    fold INTEGER,
    PRIMARY KEY (plan_id, position)
);
CREATE TABLE IF NOT EXISTS datasets (name TEXT PRIMARY KEY, info TEXT NOT NULL);
"""

_JSON_COLUMNS = ("spec", "selected", "metrics", "timings", "arrays", "packages")
#: Columns added after version 1, with the version that added them: read as NULL from an older store opened read
#: only.
_ADDED_COLUMNS = {"failure": 3, "git_commit": 4, "git_dirty": 4, "packages": 4}
_RUN_COLUMNS = ("key", "status", "experiment", "study", "dataset", "algorithm", "protocol", "seed", "repetition",
                "fold", "spec", "selected", "metrics", "timings", "arrays", "error", "failure", "forestlab_version",
                "git_commit", "git_dirty", "packages", "learner_version", "host", "pid", "finished_at")
#: The columns of a recorded plan's runs.
PLAN_COLUMNS = ("key", "dataset", "algorithm", "repetition", "fold")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default, allow_nan=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} as JSON")


class Store:
    """The SQLite run store under ``results_dir``.

    Parameters
    ----------
    results_dir : path
        Folder holding ``runs.sqlite`` and ``arrays/``; created when missing (unless ``readonly``).
    readonly : bool
        Open for reading only (reports); a missing store is then an empty one.
    """

    def __init__(self, results_dir: str | os.PathLike[str], *, readonly: bool = False) -> None:
        self.results_dir = Path(results_dir)
        self.path = self.results_dir / DB_NAME
        self.arrays_dir = self.results_dir / "arrays"
        self.readonly = readonly
        self._legacy = False
        self._missing: set[str] = set()  # columns of _ADDED_COLUMNS an older store read as it is lacks
        self._conn: sqlite3.Connection | None = None
        if readonly and not self.path.exists():
            return
        if not readonly:
            try:
                self.arrays_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the results folder {self.results_dir}: {exc.strerror}") from None
        if readonly:
            self._conn = self._connect()
        else:
            # Writers open one at a time: two processes creating the file and switching it to WAL at once can
            # wait on each other's locks until the busy timeout (seen with two cron runs starting together).
            with _init_lock(self.results_dir):
                self._conn = self._connect()

    # -- opening ---------------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        existed = self.path.exists()
        if existed:
            _check_header(self.path)
        conn: sqlite3.Connection | None = None
        try:
            uri = f"file:{self.path}?mode=ro" if self.readonly else f"file:{self.path}"
            conn = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 60000")
            if not self.readonly:
                if existed:  # refuse a damaged file before the first write touches it
                    _quick_check(conn, self.path)
                    self._check_version(conn, _stored_version(conn), writing=True)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                _migrate(conn)
            self._check_version(conn, _stored_version(conn), writing=False)
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if self.readonly and _primary_code(exc) == _SQLITE_CANTOPEN and not os.access(self.results_dir, os.W_OK):
                return self._connect_immutable()
            raise _sqlite_error(exc, self.path, opening=True) from None
        except StoreError:
            if conn is not None:
                conn.close()
            raise
        return conn

    def _connect_immutable(self) -> sqlite3.Connection:
        """Read a store in a folder this process cannot write to. SQLite reads a WAL-mode database through a
        shared-memory file beside it, which it cannot create there; nobody can write the folder either, so the file
        is read as immutable."""
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True, isolation_level=None)
            self._check_version(conn, _stored_version(conn), writing=False)
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(exc, self.path, opening=True) from None
        except StoreError:
            conn.close()
            raise
        return conn

    def _check_version(self, conn: sqlite3.Connection, version: int | None, *, writing: bool) -> None:
        """Accept this forestlab's schema, and an older one (read as it is, or migrated when ``writing``); refuse a
        newer one before anything is written to it. Notes what an older store lacks (plans, failure kinds)."""
        if version is None and writing:
            return  # a database without forestlab's tables yet: they are created
        if version is None or version > SCHEMA_VERSION or version < 1:
            raise StoreError(f"{self.path} has store schema {version if version is not None else 'unknown'}, this "
                             f"forestlab expects {SCHEMA_VERSION}; use a new results folder (paths.results_dir=...)")
        self._legacy = version == 1  # a version-1 store read only: it has runs but no recorded plans
        self._missing = set(_ADDED_COLUMNS) - _columns(conn, "runs")

    def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            # Closing checkpoints the WAL into the database file; when that write fails (disk full) the WAL stays
            # and the next open replays it: nothing committed is lost, so a failure here is not an error.
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"no store at {self.path}")
        return self._conn

    def check_integrity(self) -> None:
        """Raise StoreError if SQLite finds the database damaged (``PRAGMA quick_check``)."""
        if self._conn is None:
            return
        _quick_check(self.conn, self.path)

    # -- writing ---------------------------------------------------------------------------------------------
    def save_arrays(self, key: str, arrays: Mapping[str, np.ndarray] | PackedArrays) -> list[str]:
        """Write ``arrays`` (or arrays already packed by :func:`pack_arrays`) to ``arrays/<key>.npz`` atomically;
        return the names written."""
        if not isinstance(arrays, PackedArrays):
            arrays = pack_arrays(arrays)
        if not arrays.names:
            return []
        target = self.arrays_dir / f"{key}.npz"
        try:
            fd, tmp = tempfile.mkstemp(dir=self.arrays_dir, prefix=f".{key}.", suffix=".tmp")
        except OSError as exc:
            raise StoreError(_os_message(exc, self.arrays_dir)) from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(arrays.npz)
            os.replace(tmp, target)
        except BaseException as exc:  # an interrupt too: never leave a half-written temporary file behind
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise StoreError(_os_message(exc, self.arrays_dir)) from None
            raise
        return list(arrays.names)

    def put(self, record: Mapping[str, Any], *, overwrite_done: bool = False) -> None:
        """Insert or update one run record.

        A ``done`` row is never replaced by a ``failed`` one, and is replaced by a new ``done`` row only when
        ``overwrite_done`` (``--force``).
        """
        row = dict(record)
        for col in _JSON_COLUMNS:
            if col in row and row[col] is not None and not isinstance(row[col], str):
                row[col] = _dumps(row[col])
        row.setdefault("finished_at", time.time())
        row.setdefault("host", socket.gethostname())
        row.setdefault("pid", os.getpid())
        cols = list(_RUN_COLUMNS)
        values = [row.get(c) for c in cols]
        update = ", ".join(f"{c} = excluded.{c}" for c in cols[1:])
        guard = "" if overwrite_done else "WHERE runs.status != 'done'"
        sql = (f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
               f"ON CONFLICT(key) DO UPDATE SET {update} {guard}")
        try:
            with self._transaction() as conn:
                conn.execute(sql, values)
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(exc, self.path) from None

    def record_plan(self, plan_id: str, summary: Mapping[str, Any], runs: Iterable[Mapping[str, Any]]) -> None:
        """Record (or replace) the plan ``plan_id``: its summary and its runs in order (dicts with key, dataset,
        algorithm, repetition, fold). Every reader finds an experiment's runs from here (:meth:`plan_for`)."""
        rows = [(plan_id, i, r["key"], r["dataset"], r["algorithm"], r["repetition"], r["fold"])
                for i, r in enumerate(runs)]
        try:
            with self._transaction() as conn:
                conn.execute("INSERT OR REPLACE INTO plans VALUES (?, ?, ?, ?, ?, ?)",
                             (plan_id, summary["experiment"], summary.get("study"), int(bool(summary.get("smoke"))),
                              _dumps(dict(summary)), time.time()))
                conn.execute("DELETE FROM plan_runs WHERE plan_id = ?", (plan_id,))
                conn.executemany("INSERT INTO plan_runs VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(exc, self.path) from None

    def put_dataset_info(self, name: str, info: Mapping[str, Any]) -> None:
        """What runs learnt about a dataset (number and names of features ...), for the reports."""
        try:
            with self._transaction() as conn:
                conn.execute("INSERT OR REPLACE INTO datasets VALUES (?, ?)", (name, _dumps(dict(info))))
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(exc, self.path) from None

    def update_metrics(self, key: str, metrics: Mapping[str, Any]) -> None:
        """Replace the metrics of a stored run (a metric computed later from its stored outputs)."""
        try:
            with self._transaction() as conn:
                conn.execute("UPDATE runs SET metrics = ? WHERE key = ?", (_dumps(dict(metrics)), key))
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(exc, self.path) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # SQLite may already have rolled back (e.g. after a failed write)
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def _select(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, tuple(params)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(exc, self.path) from None

    # -- reading ---------------------------------------------------------------------------------------------
    def statuses(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """Map key → status for the given keys (all keys when None)."""
        if self._conn is None:
            return {}
        if keys is None:
            return dict(self._select("SELECT key, status FROM runs"))
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, status FROM runs WHERE key IN ({','.join('?' * len(chunk))})"
            out.update(self._select(q, chunk))
        return out

    def members(self, experiment: str) -> set[str]:
        """Keys of the stored runs that ``experiment`` has planned at some time (current plan or older ones)."""
        if self._conn is None or self._legacy:
            return set()
        rows = self._select("SELECT DISTINCT pr.key FROM plans p JOIN plan_runs pr ON pr.plan_id = p.plan_id "
                            "JOIN runs r ON r.key = pr.key WHERE p.experiment = ?", (experiment,))
        return {k for (k,) in rows}

    def experiments(self) -> list[str]:
        """Names of the experiments that have a recorded plan with a stored run."""
        if self._conn is None or self._legacy:
            return []
        rows = self._select("SELECT DISTINCT p.experiment FROM plans p JOIN plan_runs pr ON pr.plan_id = p.plan_id "
                            "JOIN runs r ON r.key = pr.key")
        return sorted(e for (e,) in rows)

    def plans(self, experiment: str | None = None) -> pd.DataFrame:
        """Recorded plans, newest first: plan_id, experiment, study, smoke, recorded_at, summary (dict)."""
        cols = ["plan_id", "experiment", "study", "smoke", "recorded_at", "summary"]
        if self._conn is None or self._legacy:
            return pd.DataFrame(columns=cols)
        where, params = ("WHERE experiment = ?", (experiment,)) if experiment else ("", ())
        rows = self._select(f"SELECT plan_id, experiment, study, smoke, recorded_at, summary FROM plans {where} "
                            "ORDER BY recorded_at DESC", params)
        df = pd.DataFrame(rows, columns=cols)
        df["summary"] = [json.loads(v) for v in df["summary"]]
        df["smoke"] = df["smoke"].astype(bool)
        return df

    def plan_for(self, experiment: str, *, plan_id: str | None = None, **settings: Any) -> RecordedPlan | None:
        """Which runs belong to ``experiment``: the one answer every reader (tables, figures, compare, report,
        status) uses.

        The plan ``forestlab run`` recorded for ``experiment`` with id ``plan_id`` (the plan of a configuration:
        :attr:`forestlab.experiment.Experiment.plan_id`); without ``plan_id``, its newest recorded plan whose
        summary has the given ``settings`` (e.g. ``seeds=10, smoke=False``: another experiment a claim reads, whose
        configuration is not composed). None when no such plan is recorded.
        """
        plans = self.plans(experiment)
        for row in plans.itertuples():
            if plan_id is not None and row.plan_id != plan_id:
                continue
            if all(row.summary.get(k) == v for k, v in settings.items()):
                return self._recorded(row)
        return None

    def recorded_definition(self, experiment: str) -> list[str] | None:
        """The overrides that define ``experiment``, an experiment named by ``experiment.name=`` (not registered in
        ``conf/experiment/``), as its newest plan recorded them (:func:`forestlab.config.definition`); None when no
        plan of it recorded one."""
        for row in self.plans(experiment).itertuples():
            found = row.summary.get("definition")
            if isinstance(found, list):
                return [str(o) for o in found]
        return None

    def named_experiments(self) -> list[str]:
        """The experiments with a recorded definition (named by ``experiment.name=``, see
        :meth:`recorded_definition`) and a stored run, sorted."""
        return [name for name in self.experiments() if self.recorded_definition(name) is not None]

    def _recorded(self, row: Any) -> RecordedPlan:
        rows = self._select("SELECT key, dataset, algorithm, repetition, fold FROM plan_runs WHERE plan_id = ? "
                            "ORDER BY position", (row.plan_id,))
        runs = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
        runs["fold"] = [None if f is None or f != f else int(f) for f in runs["fold"]]
        return RecordedPlan(plan_id=str(row.plan_id), experiment=str(row.experiment),
                            study=None if row.study is None else str(row.study), smoke=bool(row.smoke),
                            summary=dict(row.summary), recorded_at=float(row.recorded_at), runs=runs)

    def datasets_info(self, names: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """What runs recorded about each dataset (see :meth:`put_dataset_info`)."""
        if self._conn is None or self._legacy:
            return {}
        rows = self._select("SELECT name, info FROM datasets")
        wanted = None if names is None else set(names)
        return {n: json.loads(i) for n, i in rows if wanted is None or n in wanted}

    def records(self, keys: Iterable[str] | None = None, columns: Iterable[str] | None = None) -> pd.DataFrame:
        """Run records as a DataFrame, JSON columns decoded to dicts (one row per key found). ``failure`` is the
        kind of a failed run's failure (:class:`~forestlab.errors.FailureKind` value; None for a done run, and for
        a run failed in a store older than schema 3). ``git_commit``, ``git_dirty`` (0/1) and ``packages`` (dict:
        distribution -> version) say what produced a run: None (``packages`` {}) for a run stored before schema 4,
        whose provenance is unknown. ``columns``: only these (and ``key``), in the store's order: a report reading
        thousands of runs decodes only the JSON it reads (the learner's spec is the largest)."""
        cols = list(_RUN_COLUMNS)
        if columns is not None:
            wanted = {"key", *columns}
            unknown = wanted - set(cols)
            if unknown:
                raise ValueError(f"no such run column: {', '.join(sorted(unknown))}")
            cols = [c for c in cols if c in wanted]
        if self._conn is None:
            return pd.DataFrame(columns=cols)
        selected = ", ".join(f"NULL AS {c}" if c in self._missing else c for c in cols)
        rows: list[tuple] = []
        if keys is None:
            rows = self._select(f"SELECT {selected} FROM runs")
        else:
            keys = list(keys)
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                q = f"SELECT {selected} FROM runs WHERE key IN ({','.join('?' * len(chunk))})"
                rows.extend(self._select(q, chunk))
        df = pd.DataFrame(rows, columns=cols)
        for col in _JSON_COLUMNS:
            if col in df.columns:
                df[col] = [json.loads(v) if isinstance(v, str) and v else ({} if col != "arrays" else [])
                           for v in df[col]]
        return df

    def load_arrays(self, key: str) -> dict[str, np.ndarray]:
        """The arrays of one run (empty dict if it stored none); never unpickles."""
        return self.read_arrays(self.arrays_dir, key)

    @staticmethod
    def read_arrays(arrays_dir: Path, key: str) -> dict[str, np.ndarray]:
        """The arrays of run ``key`` in ``arrays_dir``, without an open store (reports read files only)."""
        path = Path(arrays_dir) / f"{key}.npz"
        if not path.exists():
            return {}
        try:
            with np.load(path, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read {path} ({exc}); delete it and rerun to recompute the run") from None

    def count(self) -> int:
        if self._conn is None:
            return 0
        return int(self._select("SELECT COUNT(*) FROM runs")[0][0])


@dataclass(frozen=True)
class RecordedPlan:
    """A plan as ``forestlab run`` recorded it (:meth:`Store.plan_for`): which runs belong to an experiment."""

    plan_id: str
    experiment: str
    study: str | None
    smoke: bool
    summary: Mapping[str, Any]  # the settings it was recorded with (seed, seeds, smoke, limits, ...)
    recorded_at: float
    runs: pd.DataFrame = field(repr=False)  # PLAN_COLUMNS, in plan order

    @property
    def keys(self) -> list[str]:
        return self.runs["key"].tolist()


@dataclass(frozen=True)
class PackedArrays:
    """A run's arrays as the bytes of a compressed ``.npz`` file (``names`` sorted)."""

    names: tuple[str, ...]
    npz: bytes


def pack_arrays(arrays: Mapping[str, np.ndarray]) -> PackedArrays:
    """Compress ``arrays`` into the bytes of an ``.npz`` file; an object array is refused (ValueError), so that
    ``np.load`` with pickling refused reads every file. Workers pack their runs' arrays, so the process that owns
    the store only writes bytes."""
    if not arrays:
        return PackedArrays((), b"")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, **{k: np.asarray(v) for k, v in arrays.items()})
    return PackedArrays(tuple(sorted(arrays)), buffer.getvalue())


def _check_header(path: Path) -> None:
    """Refuse a file that is not an SQLite database before SQLite is asked to open (and maybe rewrite) it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if head and head != b"SQLite format 3\x00":
        raise StoreError(f"{path} is not an SQLite database (corrupt or foreign file); it was left untouched: "
                         "move it aside (or restore a backup) and rerun")


def _stored_version(conn: sqlite3.Connection) -> int | None:
    """The schema version a store records (None when it has no forestlab tables yet)."""
    if "meta" not in {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}:
        return None
    row = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    return None if row is None else int(row[0])


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a store opened for writing to :data:`SCHEMA_VERSION`: create what is missing (a new store, or the
    plans of a version-1 store), add the columns a version-2 or -3 store lacks (``failure``; ``git_commit``,
    ``git_dirty``, ``packages``): NULL for the runs it holds, whose failure kind or provenance was not recorded.
    Nothing a store holds is changed; an old store's ``membership`` table stays, unread."""
    conn.executescript(_SCHEMA)
    have = _columns(conn, "runs")
    for column, kind in (("failure", "TEXT"), ("git_commit", "TEXT"), ("git_dirty", "INTEGER"), ("packages", "TEXT")):
        if column not in have:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


@contextlib.contextmanager
def _init_lock(folder: Path):
    """An exclusive advisory lock on ``folder/.store-open.lock`` for the few milliseconds of opening the store."""
    try:
        fh = open(folder / ".store-open.lock", "a+")
    except OSError as exc:
        raise StoreError(_os_message(exc, folder)) from None
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _quick_check(conn: sqlite3.Connection, path: Path) -> None:
    """Raise StoreError if SQLite finds the database damaged (``PRAGMA quick_check``, a read-only scan)."""
    try:
        result = conn.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if _primary_code(exc) not in _DAMAGED:
            raise
        result = str(exc)
    if result != "ok":
        raise StoreError(f"{path} is damaged ({result.splitlines()[0]}); it was left untouched: move it aside "
                         "(or restore a backup) and rerun")


# SQLite primary result codes (https://www.sqlite.org/rescode.html)
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 3, 5, 6, 8
_SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 10, 11, 13, 14, 26
_DAMAGED = (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _sqlite_error(exc: sqlite3.Error, path: Path, *, opening: bool = False) -> StoreError:
    """One message per kind of SQLite failure, saying what the user can do about it."""
    code = _primary_code(exc)
    if code in _DAMAGED:
        return StoreError(f"{path} is damaged ({exc}); it was left untouched: move it aside (or restore a backup) "
                          "and rerun")
    if code in (_SQLITE_FULL, _SQLITE_IOERR):
        return StoreError(f"cannot write to {path} ({exc}): the disk is full or a file size limit was reached; "
                          "finished runs are kept: free some space and rerun")
    if code in (_SQLITE_READONLY, _SQLITE_PERM, _SQLITE_CANTOPEN):
        return StoreError(f"cannot {'open' if opening else 'write to'} {path} ({exc}); fix the permissions of "
                          f"{path.parent} or set paths.results_dir")
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StoreError(f"{path} stayed locked by another process for 60 s ({exc}); try again later")
    return StoreError(f"cannot use {path} ({exc})")


def _os_message(exc: OSError, where: Path) -> str:
    if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return (f"cannot write to {where} ({exc.strerror}): the disk is full or a file size limit was reached; "
                "finished runs are kept: free some space and rerun")
    if exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return f"cannot write to {where} ({exc.strerror}); fix its permissions or set paths.results_dir"
    return f"cannot write to {where}: {exc.strerror or exc}"


class RunLock:
    """An exclusive lock on a results folder for the length of one ``forestlab run``.

    Two runs started on one store (overlapping cron jobs) do not interleave: the second waits for the first
    (``wait=True``) or gives up at once with :class:`~forestlab.errors.StoreBusy` (``wait=False``).
    """

    def __init__(self, results_dir: str | os.PathLike[str]) -> None:
        self.path = Path(results_dir) / "run.lock"
        self._fh: Any = None

    def acquire(self, *, wait: bool, on_wait: Any = None) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a+")
        except OSError as exc:
            raise StoreError(_os_message(exc, self.path.parent)) from None
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder()
            if not wait:
                self._fh.close()
                self._fh = None
                raise StoreBusy(f"another forestlab run{holder} is using {self.path.parent}; "
                                 "not started (use --wait to queue behind it)") from None
            if on_wait is not None:
                on_wait(holder)
            fcntl.flock(self._fh, fcntl.LOCK_EX)
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(f"{os.getpid()} {socket.gethostname()}\n")
        self._fh.flush()

    def _holder(self) -> str:
        try:
            text = self.path.read_text().split()
            return f" (pid {text[0]} on {text[1]})" if len(text) >= 2 else ""
        except OSError:
            return ""

    def release(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None
