import multiprocessing as mp
import os
import sqlite3

import numpy as np
import pytest

from forestlab.errors import StoreError
from forestlab.store import RunLock, Store


def _record(key, status="done", **metrics):
    return {"key": key, "status": status, "experiment": "e", "study": None, "dataset": "d", "algorithm": "rf",
            "protocol": "holdout", "seed": 0, "repetition": 0, "fold": None, "spec": {"k": key},
            "metrics": metrics or {"test_risk": 0.1}, "error": None if status == "done" else "Traceback..."}


def test_put_and_read_back(tmp_path):
    with Store(tmp_path) as store:
        store.put(_record("a", test_risk=0.25))
        store.put(_record("b", status="failed"))
        df = store.records()
        assert set(df["key"]) == {"a", "b"}
        assert df.set_index("key").loc["a", "metrics"] == {"test_risk": 0.25}
        assert store.statuses(["a", "b", "c"]) == {"a": "done", "b": "failed"}
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_done_is_never_replaced_by_failed_but_force_overwrites(tmp_path):
    with Store(tmp_path) as store:
        store.put(_record("a", test_risk=0.25))
        store.put(_record("a", status="failed"))
        assert store.statuses(["a"]) == {"a": "done"}
        store.put(_record("a", test_risk=0.5), overwrite_done=True)
        assert store.records(["a"]).loc[0, "metrics"] == {"test_risk": 0.5}
        store.put(_record("b", status="failed"))
        store.put(_record("b", test_risk=0.3))
        assert store.statuses(["b"]) == {"b": "done"}
        assert store.count() == 2


def test_arrays_roundtrip_without_pickle(tmp_path):
    with Store(tmp_path) as store:
        names = store.save_arrays("k", {"curve": np.arange(5.0), "y": np.array([-1, 1], dtype=np.int8)})
        assert names == ["curve", "y"]
        arr = store.load_arrays("k")
        np.testing.assert_array_equal(arr["curve"], np.arange(5.0))
        assert store.load_arrays("missing") == {}
        # an object array would need pickle: it is refused on load
        np.savez(store.arrays_dir / "evil.npz", x=np.array([{"a": 1}], dtype=object))
        with pytest.raises(StoreError, match="cannot read"):
            store.load_arrays("evil")
        # and it is never written: packing refuses it, and no file appears
        with pytest.raises(ValueError, match="pickle"):
            store.save_arrays("obj", {"x": np.array([{"a": 1}], dtype=object)})
        assert sorted(p.name for p in store.arrays_dir.iterdir()) == ["evil.npz", "k.npz"]


def test_corrupt_store_is_a_clear_error_and_left_untouched(tmp_path):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an SQLite database"):
        Store(tmp_path)
    assert path.read_bytes() == before


def test_truncated_store_is_detected(tmp_path):
    with Store(tmp_path) as store:
        for i in range(300):
            store.put(_record(f"k{i}", test_risk=float(i)))
    path = tmp_path / "runs.sqlite"
    # fold the WAL into the main file, then cut the file in half
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    before = path.read_bytes()
    with pytest.raises(StoreError):
        with Store(tmp_path) as store:
            store.check_integrity()
            store.records()
    assert path.read_bytes() == before


def _writer(results_dir, start, n):
    with Store(results_dir) as store:
        for i in range(start, start + n):
            store.put(_record(f"k{i % 150}", test_risk=float(i)))


def test_two_writer_processes_do_not_corrupt(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(tmp_path, s, 150)) for s in (0, 75)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Store(tmp_path) as store:
        store.check_integrity()
        assert store.count() == 150


def test_run_lock_excludes_a_second_run(tmp_path):
    first = RunLock(tmp_path)
    first.acquire(wait=False)
    try:
        with pytest.raises(StoreError, match="another forestlab run"):
            RunLock(tmp_path).acquire(wait=False)
    finally:
        first.release()
    again = RunLock(tmp_path)
    again.acquire(wait=False)
    again.release()
    assert str(os.getpid()) in (tmp_path / "run.lock").read_text()


# ---------------------------------------------------------------------------------------------------------------
# Schema 4: what produced each run (forestlab version, git commit and dirty flag, package versions)
# ---------------------------------------------------------------------------------------------------------------
def _v3_store(folder):
    """A store as schema 3 wrote it: no git_commit, git_dirty nor packages columns; one done run."""
    from forestlab.store import _SCHEMA

    folder.mkdir(parents=True)
    schema = _SCHEMA.replace("    git_commit TEXT,\n    git_dirty INTEGER,\n    packages TEXT,\n", "")
    assert schema != _SCHEMA
    con = sqlite3.connect(folder / "runs.sqlite")
    con.executescript(schema)
    con.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    con.execute("INSERT INTO runs (key, status, experiment, dataset, algorithm, protocol, seed, repetition, spec, "
                "forestlab_version, finished_at) VALUES ('old', 'done', 'e', 'd', 'a', 'p', 0, 0, '{}', '0.1.0', 1.0)")
    con.commit()
    con.close()
    return folder


def test_a_schema_3_store_reads_its_runs_provenance_as_unknown_and_is_migrated_when_written(tmp_path):
    from forestlab.environment import run_provenance
    from forestlab.store import SCHEMA_VERSION

    folder = _v3_store(tmp_path / "old")
    with Store(folder, readonly=True) as store:
        old = store.records().iloc[0]
        assert pd_isna(old["git_commit"]) and pd_isna(old["git_dirty"]) and old["packages"] == {}
        assert old["forestlab_version"] == "0.1.0"
    con = sqlite3.connect(folder / "runs.sqlite")
    assert "git_commit" not in {r[1] for r in con.execute("PRAGMA table_info(runs)")}  # reading changed nothing
    con.close()
    with Store(folder) as store:
        store.put({**_record("new"), **run_provenance()})
        records = store.records().set_index("key")
    assert pd_isna(records.loc["old", "git_commit"]) and records.loc["old", "packages"] == {}  # unknown, kept so
    new = records.loc["new"]
    assert new["packages"]["numpy"] == np.__version__ and "scikit-learn" in new["packages"]
    assert new["git_commit"] == run_provenance()["git_commit"] and new["git_dirty"] in (0, 1, None)
    con = sqlite3.connect(folder / "runs.sqlite")
    assert con.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert SCHEMA_VERSION == 4
    con.close()


def test_run_provenance_is_computed_once_per_process(monkeypatch):
    import subprocess

    from forestlab import environment

    environment.git_state.cache_clear()
    environment.run_provenance.cache_clear()
    calls = []
    real = subprocess.run

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting)
    first = environment.run_provenance()
    for _ in range(5):
        assert environment.run_provenance() is first
    assert len(calls) <= 2  # rev-parse and status, once
    assert first["forestlab_version"] and first["packages"]["python"]


def pd_isna(value):
    import pandas as pd

    return value is None or bool(pd.isna(value))
