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
