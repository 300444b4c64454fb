"""The processed-array cache under <data_dir>/processed: reused by other processes, never trusted over a changed
source file, and never unpickled."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from forestlab.datasets import _load, clear_cache, load_dataset
from forestlab.errors import DatasetError

CONF = Path(__file__).resolve().parents[1] / "conf" / "dataset"


def cfg_of(name: str) -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF / f"{name}.yaml"), resolve=True)


def _load_fresh(name: str, data_dir: Path, mirror: Path):
    clear_cache()  # as a new worker process would
    return load_dataset(cfg_of(name), data_dir=data_dir, mirror=mirror, download=False)


def test_processed_arrays_are_reused_and_equal(mirror, tmp_path, monkeypatch):
    first = _load_fresh("sonar", tmp_path, mirror)
    files = list((tmp_path / "processed").glob("sonar-*.npz"))
    assert len(files) == 1
    parses = []
    real = _load._load
    monkeypatch.setattr(_load, "_load", lambda *a, **k: parses.append(1) or real(*a, **k))
    second = _load_fresh("sonar", tmp_path, mirror)
    assert parses == []  # served from data/processed
    np.testing.assert_array_equal(first.X, second.X)
    np.testing.assert_array_equal(first.y, second.y)
    assert (first.feature_names, first.classes, first.task) == (second.feature_names, second.classes, second.task)
    assert not second.X.flags.writeable


def test_relative_and_absolute_data_dirs_share_the_processed_file(mirror, tmp_path, monkeypatch):
    # The parent process sees data_dir as configured (relative), the workers get it absolute: both must take the
    # other's processed file for up to date, or every process parses the sources again.
    monkeypatch.chdir(tmp_path)
    _load_fresh("sonar", Path("data"), mirror)
    assert _load.processed_ready(cfg_of("sonar"), data_dir=tmp_path / "data", mirror=mirror)
    parses = []
    real = _load._load
    monkeypatch.setattr(_load, "_load", lambda *a, **k: parses.append(1) or real(*a, **k))
    _load_fresh("sonar", tmp_path / "data", mirror)
    _load_fresh("sonar", Path("data"), mirror)
    assert parses == []
    assert len(list((tmp_path / "data" / "processed").glob("sonar-*.npz"))) == 1


def test_an_altered_source_file_is_verified_again_and_rejected(mirror, tmp_path):
    _load_fresh("sonar", tmp_path, mirror)
    source = tmp_path / "uci" / "sonar" / "sonar.all-data"
    data = source.read_bytes()
    source.write_bytes(data[:-100])  # truncated after the processed file was written
    with pytest.raises(DatasetError, match=hashlib.sha256(data[:-100]).hexdigest()):
        _load_fresh("sonar", tmp_path, mirror)


def test_a_changed_config_does_not_reuse_the_processed_file(mirror, tmp_path):
    _load_fresh("sonar", tmp_path, mirror)
    cfg = cfg_of("sonar")
    cfg["shape"] = [208, 61]
    clear_cache()
    with pytest.raises(DatasetError, match="shape"):
        load_dataset(cfg, data_dir=tmp_path, mirror=mirror, download=False)


def test_a_corrupt_or_pickled_processed_file_is_ignored(mirror, tmp_path):
    good = _load_fresh("sonar", tmp_path, mirror)
    (path,) = (tmp_path / "processed").glob("sonar-*.npz")
    path.write_bytes(b"not an npz")
    again = _load_fresh("sonar", tmp_path, mirror)
    np.testing.assert_array_equal(good.X, again.X)
    # an object array (which would need pickle) in place of X is refused, then rewritten from the sources
    with open(path, "wb") as fh:
        np.savez(fh, X=np.array([object()]), y=good.y, categorical=good.categorical, meta=np.array("{}"))
    stat = os.stat(path)
    again = _load_fresh("sonar", tmp_path, mirror)
    np.testing.assert_array_equal(good.X, again.X)
    assert os.stat(path).st_mtime_ns >= stat.st_mtime_ns
